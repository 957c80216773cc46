//! The tables of `aba compare`'s text: each series' point means, the reference's above the
//! new campaign's, in boot order, and each comparison's two changes, their ratio and the
//! reproduction verdict.
//!
//! Every line is at most [`WIDTH`] columns: a means table with more points than fit is
//! wrapped into several blocks of columns (as `report.txt` does), and a series label too long
//! for its heading gets a line of its own.

use crate::{
    point_name::point_name,
    recipe::model::Role,
    report::{
        layout::{Align, Table, WIDTH, column_blocks},
        mail_tables::better_text,
        number::{fixed, mean_decimals, signed_pct},
        unit_scale::{Scale, scale_for_table},
    },
    reproduction::model::{Reproduction, SeriesReproduction},
};

/// The row names of the two sides.
const SIDES: [&str; 2] = ["reference", "new"];

/// The display unit of series `s`: as `report.txt`'s (`display_scale`), chosen once per
/// unit by the smallest point mean of every series in it, here on both sides, so a metric
/// reads in one unit in the report and the reproduction (92008 ns/roundtrip as 92.008
/// µs/roundtrip in both).
fn display(reproduction: &Reproduction, s: &SeriesReproduction) -> Option<Scale> {
    let unit = s.unit.as_deref()?;
    Some(scale_for_table(
        unit,
        reproduction
            .series
            .iter()
            .filter(|other| other.unit.as_deref() == Some(unit))
            .flat_map(|other| other.reference.points.iter().chain(&other.new.points))
            .map(|p| p.mean),
    ))
}

/// `mprotect (ns/page, lower is better, control)`: what a series heading says, in the
/// series' display unit.
fn heading(s: &SeriesReproduction, scale: Option<&Scale>) -> String {
    let mut what: Vec<String> = Vec::new();
    what.extend(scale.map(|scale| scale.unit.clone()));
    what.extend(s.better.map(|b| better_text(b).to_owned()));
    if s.role == Some(Role::Control) {
        what.push("control".to_owned());
    } else if s.aux {
        what.push("auxiliary".to_owned());
    }
    if what.is_empty() {
        s.label.clone()
    } else {
        format!("{} ({})", s.label, what.join(", "))
    }
}

/// The point means of every series, the reference's row above the new campaign's.
#[must_use]
pub fn means(reproduction: &Reproduction) -> String {
    let mut out = String::from("Point means in boot order, the reference above this campaign:\n");
    for s in &reproduction.series {
        out.push('\n');
        out.push_str(&means_of(s, display(reproduction, s).as_ref()));
    }
    out
}

/// One series' point means in boot order. Each side's row is headed by its own point names
/// when they differ (a column holds the n-th boot of each side, whatever its kernel), so a
/// reference's `fastpath#1` is never shown under the new campaign's `parent#2`.
fn means_of(s: &SeriesReproduction, scale: Option<&Scale>) -> String {
    let (r, n) = (&s.reference.points, &s.new.points);
    let count = r.len().max(n.len());
    let shown = |mean: f64| scale.map_or(mean, |scale| scale.apply(mean));
    let decimals = mean_decimals(r.iter().chain(n).map(|p| shown(p.mean)));
    let names = |points: &[crate::stats::BootPoint]| -> Vec<String> {
        (0..count)
            .map(|i| {
                points
                    .get(i)
                    .map(|p| point_name(&p.label, &p.kernel))
                    .unwrap_or_default()
            })
            .collect()
    };
    let (reference_names, new_names) = (names(r), names(n));
    let cells = |points: &[crate::stats::BootPoint]| -> Vec<String> {
        (0..count)
            .map(|i| {
                points
                    .get(i)
                    .map_or_else(|| "-".to_owned(), |p| fixed(shown(p.mean), decimals))
            })
            .collect()
    };
    // (side, its names or `None` under a shared header, its means)
    let shared = reference_names == new_names;
    let rows = [
        (SIDES[0], (!shared).then_some(&reference_names), cells(r)),
        (SIDES[1], (!shared).then_some(&new_names), cells(n)),
    ];
    let widths: Vec<usize> = (0..count)
        .map(|i| {
            rows.iter()
                .map(|(_, _, row)| row[i].chars().count())
                .chain([
                    reference_names[i].chars().count(),
                    new_names[i].chars().count(),
                ])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let first = 2 + SIDES.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = String::new();
    let title = heading(s, scale);
    out.push_str(&format!("  {title}\n"));
    for (from, to) in column_blocks(first, &widths) {
        let mut aligns = vec![Align::Left];
        aligns.extend(std::iter::repeat_n(Align::Right, to - from));
        let mut table = Table::new(&aligns);
        if shared {
            table.row(std::iter::once(String::new()).chain(new_names[from..to].iter().cloned()));
        }
        for (side, own, row) in &rows {
            if let Some(own) = own {
                table.row(std::iter::once(String::new()).chain(own[from..to].iter().cloned()));
            }
            table.row(std::iter::once((*side).to_owned()).chain(row[from..to].iter().cloned()));
        }
        out.push_str(&table.render(2));
    }
    out
}

/// Each comparison: the reference's change, the new one, their ratio and the verdict.
#[must_use]
pub fn changes(reproduction: &Reproduction) -> String {
    let mut table = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ]);
    for (i, s) in reproduction
        .series
        .iter()
        .filter(|s| !s.candidates.is_empty())
        .enumerate()
    {
        if i > 0 {
            table.span("");
        }
        let title = heading(s, display(reproduction, s).as_ref());
        if title.chars().count() + 2 > WIDTH {
            table.span(s.label.clone());
            table.span(format!("  {}", title.trim_start_matches(&s.label).trim()));
        } else {
            table.span(title);
        }
        table.row(["  kernel", "reference", "new", "ratio", "verdict"]);
        for c in &s.candidates {
            let kernel = if c.new.candidate == c.reference.candidate {
                c.new.shown()
            } else {
                format!("{} ({})", c.new.candidate, c.reference.candidate)
            };
            table.row([
                format!("  {kernel}"),
                signed_pct(c.reference.comparison.change_pct),
                signed_pct(c.new.comparison.change_pct),
                c.verdict
                    .ratio
                    .map_or_else(|| "-".to_owned(), |r| fixed(r, 2)),
                c.verdict.label.to_string(),
            ]);
        }
    }
    if table.is_empty() {
        return String::new();
    }
    format!(
        "Changes against each campaign's baseline:\n\n{}",
        table.render(2)
    )
}

#[cfg(test)]
mod tests {
    use super::{changes, means};
    use crate::{
        report::{layout::WIDTH, testdata::fixture},
        reproduction::{campaign::from_analysis, compare},
    };

    #[test]
    fn nine_points_wrap_into_blocks_in_boot_order_and_every_candidate_has_a_row() {
        let analysis = fixture("mprotect-mechanism");
        let evidence = from_analysis(&analysis, "mechanism", &[], Vec::new());
        let r = compare(&evidence, &evidence).expect("the same series");
        let text = means(&r);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        let headers: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("reference") && !l.contains("new") && l.contains('#'))
            .flat_map(str::split_whitespace)
            .filter(|w| !w.contains('/') && !w.starts_with('('))
            .collect();
        assert_eq!(
            headers,
            [
                "parent#1",
                "child#1",
                "fastpath#1",
                "folioonly#1",
                "nofolio",
                "folioonly#2",
                "fastpath#2",
                "child#2",
                "parent#2"
            ],
            "{text}"
        );
        // Two rows per block, the reference above.
        let sides: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| *w == "reference" || *w == "new")
            .collect();
        assert!(sides.len() >= 4 && sides.chunks(2).all(|c| c == ["reference", "new"]));
        let table = changes(&r);
        for candidate in ["child", "fastpath", "folioonly", "nofolio"] {
            assert!(
                table.lines().any(|l| l.trim_start().starts_with(candidate)
                    && l.trim_end().ends_with("REPRODUCED")),
                "{candidate}: {table}"
            );
        }
    }

    /// Issue 29 item 5: where the two sides' boots differ, each row is headed by its own
    /// points' names, so no column shows the reference's boot under another's name.
    #[test]
    fn each_side_is_headed_by_its_own_point_names_when_they_differ() {
        use crate::report::reproduction_prose::tests::evidence;
        let reference = evidence(
            "[\"a\", \"b\", \"a\", \"b\", \"a\"]",
            &[
                ("a-a", 100.0),
                ("b-a", 120.0),
                ("a-b", 100.0),
                ("b-b", 120.0),
                ("a-c", 100.0),
            ],
        );
        let new = evidence(
            "[\"a\", \"b\", \"b\", \"a\"]",
            &[
                ("a-a", 100.0),
                ("b-a", 120.0),
                ("b-b", 120.0),
                ("a-b", 100.0),
            ],
        );
        let r = compare(&new, &reference).expect("w in both");
        let text = means(&r);
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        let above = |side: &str| -> Vec<&str> {
            let i = lines
                .iter()
                .position(|l| l.first() == Some(&side))
                .expect("a row");
            lines[i - 1].clone()
        };
        assert_eq!(
            above("reference"),
            ["a#1", "b#1", "a#2", "b#2", "a#3"],
            "{text}"
        );
        assert_eq!(above("new"), ["a#1", "b#1", "b#2", "a#2"], "{text}");
    }
}
