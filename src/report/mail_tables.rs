//! The tables of `report.txt`, pre-formatted as text blocks for the template: kernels, point
//! means side by side in boot order (as in the mails of `seeds/000` and `seeds/001`), the
//! change of each candidate, and recovery decompositions.
//!
//! Every line is at most [`WIDTH`] columns: a means table with more points than fit is
//! wrapped into several blocks of columns, and a series label too long for its column gets a
//! line of its own.

use crate::{
    analysis::{Analysis, CandidateResult, RecoveryStepKind, Series, SeriesPoint, SeriesResult},
    kernel::binding::BoundKernel,
    point_name::point_name,
    recipe::model::Role,
    report::{
        layout::{Align, Table, WIDTH, column_blocks},
        number::{fixed, mean_decimals, nu, pct, signed_pct},
        unit_scale::{display_scale, with_unit},
    },
    stats::{Better, VerdictLabel, kernel_mean},
};

/// Series labels longer than this get their own line above their row of values.
const LABEL_MAX: usize = 30;

/// The header of the column of series labels (`workload`, `workload[case]`,
/// `workload/metric`): the mails name it (`parameter`), so a reader knows what the rows are.
pub const LABEL_HEADER: &str = "workload";

/// `A/B/A`: the boot sequence with one letter per kernel, in order of first appearance.
#[must_use]
pub fn design(analysis: &Analysis) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    let mut letters = Vec::new();
    for p in &analysis.points {
        let i = match kernels.iter().position(|k| *k == p.kernel) {
            Some(i) => i,
            None => {
                kernels.push(&p.kernel);
                kernels.len() - 1
            }
        };
        letters.push(u8::try_from(i).ok().filter(|i| *i < 26).map_or_else(
            || format!("K{}", i + 1),
            |i| char::from(b'A' + i).to_string(),
        ));
    }
    letters.join("/")
}

/// How the baseline's reference value is called: its midpoint (2 boots), its mean over m
/// boots, or just the kernel (1 boot). The label is always preceded by "kernel", so that
/// labels such as `a` or `this` read as names in prose (`the midpoint of kernel a`, not
/// `the a midpoint`).
#[must_use]
pub fn baseline_reference(analysis: &Analysis) -> String {
    kernel_reference(analysis, &analysis.campaign.baseline)
}

/// What a change against `baseline` is measured from, as [`baseline_reference`] says it for
/// the campaign's baseline: a declared comparison (`[[analysis.comparison]]`) has another.
#[must_use]
pub fn kernel_reference(analysis: &Analysis, baseline: &str) -> String {
    let boots = analysis
        .kernels
        .iter()
        .find(|k| k.label == baseline)
        .map_or(0, |k| k.booted.len());
    match boots {
        2 => format!("the midpoint of kernel {baseline}"),
        0 | 1 => format!("kernel {baseline}"),
        m => format!("the mean of kernel {baseline} over {m} boots"),
    }
}

/// The kernels: label, release (the proven one for `running`), and boots done; "points" when
/// every point ran in one boot (the `local` target), whose points are no boots (`aba check`
/// counts 0 boots for them).
#[must_use]
pub fn kernels(analysis: &Analysis) -> String {
    let mut table = Table::new(&[Align::Left, Align::Left, Align::Right]);
    let count = if analysis.audit.shared_boot.is_some() {
        "points"
    } else {
        "boots"
    };
    table.row(["kernel", "release", count]);
    for k in &analysis.kernels {
        let proven: Vec<&str> = analysis
            .points
            .iter()
            .filter(|p| p.kernel == k.label)
            .filter_map(|p| p.release.as_deref())
            .collect();
        let release = match proven.first() {
            Some(seen) if k.release == "running" && proven.iter().all(|r| r == seen) => {
                format!("{seen} (running)")
            }
            _ => k.release.clone(),
        };
        let boots = if k.booted.len() == k.planned {
            k.planned.to_string()
        } else {
            format!("{} of {}", k.booted.len(), k.planned)
        };
        table.row([k.label.clone(), release, boots]);
        if let Some(note) = k.bound.as_ref().and_then(BoundKernel::note) {
            table.span(format!("  {note}"));
        }
        let own: Vec<&String> = k
            .cmdline
            .iter()
            .filter(|p| !analysis.campaign.boot_cmdline.contains(p))
            .collect();
        if !own.is_empty() {
            let own: Vec<&str> = own.iter().map(|s| s.as_str()).collect();
            table.span(format!("  cmdline: {}", own.join(" ")));
        }
    }
    table.render(2)
}

/// The done points in boot order: identifier and name (`a-a`, `a#1`).
fn done_points(analysis: &Analysis) -> Vec<(&str, String)> {
    analysis
        .points
        .iter()
        .filter(|p| p.done_attempt.is_some())
        .map(|p| (p.label.as_str(), point_name(&p.label, &p.kernel)))
        .collect()
}

/// Point means side by side in boot order, one block per unit, wrapped into several blocks of
/// columns when the points do not fit in one. A time unit is scaled for the whole block by
/// its smallest mean ([`display_scale`], as the plot is): 92008.092 ns/roundtrip reads as 92.008
/// µs/roundtrip, while the mails' 8547.294 and 264.575 ns/read stay in ns.
#[must_use]
pub fn means(analysis: &Analysis) -> String {
    let done = done_points(analysis);
    let mut units: Vec<&str> = Vec::new();
    for s in &analysis.series {
        if !s.points.is_empty() && !units.contains(&s.unit.as_str()) {
            units.push(&s.unit);
        }
    }
    let mut out = String::new();
    for unit in units {
        let group: Vec<&Series> = analysis
            .series
            .iter()
            .filter(|s| s.unit == unit && !s.points.is_empty())
            .collect();
        let scale = display_scale(analysis, unit);
        if !out.is_empty() {
            out.push('\n');
        }
        if unit.is_empty() {
            out.push_str("Mean results were:\n\n");
        } else {
            out.push_str(&format!("Mean results in {} were:\n\n", scale.unit));
        }
        let decimals = mean_decimals(
            group
                .iter()
                .flat_map(|s| s.points.iter().map(|p| scale.apply(p.all.mean))),
        );
        out.push_str(&point_table(&group, &done, |p| {
            fixed(scale.apply(p.all.mean), decimals)
        }));
    }
    out
}

/// The within-boot CV of every series at every done point, in boot order, so a reader sees
/// which boot was noisy (the summary gives only the maximum).
#[must_use]
pub fn cvs(analysis: &Analysis) -> String {
    let done = done_points(analysis);
    let group: Vec<&Series> = analysis
        .series
        .iter()
        .filter(|s| !s.points.is_empty())
        .collect();
    if group.is_empty() {
        return String::new();
    }
    let table = point_table(&group, &done, |p| {
        p.all.cv_pct.map_or_else(|| "-".to_owned(), pct)
    });
    format!("Within-boot CV per point:\n\n{table}")
}

/// A row per series under a header of point names, one cell per done point (`-` where the
/// series has no value); `done` holds each done point's identifier and name.
fn point_table(
    group: &[&Series],
    done: &[(&str, String)],
    cell: impl Fn(&SeriesPoint) -> String,
) -> String {
    let cells: Vec<Vec<String>> = group
        .iter()
        .map(|s| {
            done.iter()
                .map(|(label, _)| {
                    s.points
                        .iter()
                        .find(|p| p.label == *label)
                        .map_or_else(|| "-".to_owned(), &cell)
                })
                .collect()
        })
        .collect();
    let label_width = group
        .iter()
        .map(|s| s.label.chars().count())
        .filter(|w| *w <= LABEL_MAX)
        .chain([LABEL_HEADER.chars().count()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = done
        .iter()
        .enumerate()
        .map(|(i, (_, name))| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .chain([name.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (b, (from, to)) in column_blocks(2 + label_width, &widths)
        .into_iter()
        .enumerate()
    {
        if b > 0 {
            out.push('\n');
        }
        let mut aligns = vec![Align::Left];
        aligns.extend(std::iter::repeat_n(Align::Right, to - from));
        let mut table = Table::new(&aligns);
        table.row(
            std::iter::once(LABEL_HEADER.to_owned())
                .chain(done[from..to].iter().map(|(_, name)| name.clone())),
        );
        for (s, row) in group.iter().zip(&cells) {
            let label = if s.label.chars().count() > LABEL_MAX {
                table.span(s.label.clone());
                String::new()
            } else {
                s.label.clone()
            };
            table.row(std::iter::once(label).chain(row[from..to].iter().cloned()));
        }
        out.push_str(&table.render(2));
    }
    out
}

/// `lower is better` / `higher is better`.
#[must_use]
pub fn better_text(better: Better) -> &'static str {
    match better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    }
}

/// `SIGNAL, slower`, `SIGNAL (ν = 1), slower`: the direction only for a verdict that claims
/// one (SIGNAL, BELOW_GATE), ν only when such a claim rests on one or two boot pairs.
fn verdict_cell(c: &CandidateResult) -> String {
    let claim = matches!(
        c.verdict.label,
        VerdictLabel::Signal | VerdictLabel::BelowGate
    );
    let mut cell = c.label.clone();
    if let Some(dof) = c.verdict.confidence.dof().filter(|d| claim && *d <= 2.0) {
        cell = format!("{cell} (ν = {})", nu(dof));
    }
    match c.direction.as_deref().filter(|_| claim) {
        Some(d) => format!("{cell}, {d}"),
        None => cell,
    }
}

/// Each candidate's change against the baseline, with the drop-first change and the verdict,
/// grouped by series.
#[must_use]
pub fn changes(analysis: &Analysis) -> String {
    let compared: Vec<(&Series, &SeriesResult)> = analysis
        .series
        .iter()
        .filter_map(|s| Some((s, s.all.as_ref()?)))
        .filter(|(_, all)| !all.comparisons.is_empty())
        .collect();
    if compared.is_empty() {
        return String::new();
    }
    let mut table = Table::new(&[Align::Left, Align::Right, Align::Right, Align::Left]);
    for (i, (s, all)) in compared.into_iter().enumerate() {
        let role = match (s.role, s.aux) {
            (Role::Control, _) => ", control",
            (Role::Measured, true) => ", auxiliary",
            (Role::Measured, false) => "",
            // A check has no metric, so no series.
            (Role::Check, _) => ", check",
        };
        // The display unit, as the table of means above says it (issue 29: one metric, one
        // unit): `(µs, lower is better)` under "Mean results in µs", never the recipe's ns.
        let unit = if s.unit.is_empty() {
            String::new()
        } else {
            format!("{}, ", display_scale(analysis, &s.unit).unit)
        };
        if i > 0 {
            table.span("");
        }
        let what = format!("({unit}{}{role})", better_text(s.better));
        if s.label.chars().count() + 1 + what.chars().count() + 2 > WIDTH {
            table.span(s.label.clone());
            table.span(format!("  {what}"));
        } else {
            table.span(format!("{} {what}", s.label));
        }
        table.row(["  kernel", "change", "drop-first", "verdict"]);
        for c in &all.comparisons {
            let df = s
                .drop_first
                .as_ref()
                .and_then(|df| df.comparisons.iter().find(|d| d.same_pair(c)))
                .map_or_else(|| "-".to_owned(), |d| signed_pct(d.comparison.change_pct));
            table.row([
                format!("  {}", c.shown()),
                signed_pct(c.comparison.change_pct),
                df,
                verdict_cell(c),
            ]);
        }
    }
    format!(
        "Change against {}:\n\n{}",
        baseline_reference(analysis),
        table.render(2)
    )
}

/// Recovery decompositions: each step's share of the gap, all samples and drop-first.
#[must_use]
pub fn recovery(analysis: &Analysis) -> String {
    let mut out = String::new();
    for s in &analysis.series {
        let Some(all) = &s.all else { continue };
        for (i, r) in all.recoveries.iter().enumerate() {
            let df = s.drop_first.as_ref().and_then(|d| d.recoveries.get(i));
            if !out.is_empty() {
                out.push('\n');
            }
            let means = kernel_mean(&all.points, &r.gap.0).zip(kernel_mean(&all.points, &r.gap.1));
            let span = means.map_or_else(String::new, |(a, b)| {
                let scale = display_scale(analysis, &s.unit);
                format!(", {} -> {}", with_unit(a, &scale), with_unit(b, &scale))
            });
            out.push_str(&crate::report::layout::wrap(
                &format!(
                    "Recovery of the {} -> {} gap (\"{}\", {}{}):",
                    r.gap.0,
                    r.gap.1,
                    r.name,
                    s.label,
                    span.trim_end()
                ),
                WIDTH,
                "",
            ));
            out.push('\n');
            let mut table = Table::new(&[Align::Left, Align::Right, Align::Right, Align::Left]);
            table.row(["step", "all", "drop-first", ""]);
            for (j, step) in r.steps.iter().enumerate() {
                let df_pct = df
                    .and_then(|d| d.steps.get(j))
                    .and_then(|d| d.pct)
                    .map_or_else(|| "-".to_owned(), pct);
                let kind = match step.kind {
                    RecoveryStepKind::Step => "",
                    RecoveryStepKind::Combined => "combined",
                    RecoveryStepKind::Residual => "residual",
                };
                table.row([
                    format!("{} -> {}", step.from, step.to),
                    step.pct.map_or_else(|| "-".to_owned(), pct),
                    df_pct,
                    kind.to_owned(),
                ]);
            }
            out.push_str(&table.render(2));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{changes, cvs, design, means};
    use crate::report::{layout::WIDTH, testdata::fixture};

    fn fits(text: &str) {
        for line in text.lines() {
            assert!(
                line.chars().count() <= WIDTH,
                "{} columns: {line}",
                line.len()
            );
        }
    }

    #[test]
    fn nine_points_wrap_into_blocks_in_boot_order() {
        let analysis = fixture("mprotect-mechanism");
        assert_eq!(design(&analysis), "A/B/C/D/E/D/C/B/A");
        let text = means(&analysis);
        fits(&text);
        let headers: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| l.starts_with("  workload "))
            .map(|l| l.split_whitespace().skip(1).collect())
            .collect();
        let order: Vec<&str> = headers.concat();
        assert_eq!(
            order,
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
            "points read as boots of their kernel, never as their identifiers"
        );
        assert!(headers.len() > 1, "wrapped into several blocks");
    }

    #[test]
    fn the_cv_table_names_each_point_and_its_noise() {
        let analysis = fixture("mprotect-mechanism");
        let text = cvs(&analysis);
        fits(&text);
        assert!(text.starts_with("Within-boot CV per point:\n\n"), "{text}");
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert!(
            rows[0].starts_with("  workload "),
            "a header for the label column: {text}"
        );
        // Each point's own CV, in boot order: nofolio was the noisiest boot.
        let cells: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  mprotect/"))
            .flat_map(|l| l.split_whitespace().skip(1))
            .collect();
        assert_eq!(cells.len(), analysis.points.len());
        let series = &analysis.series[0];
        for (cell, p) in cells.iter().zip(&series.points) {
            let cv = p.all.cv_pct.expect("n >= 2");
            assert_eq!(*cell, format!("{cv:.2}%"), "{}", p.label);
        }
        assert_eq!(cells[4], "1.56%");
    }

    #[test]
    fn a_time_unit_is_scaled_for_the_whole_table() {
        let mut analysis = fixture("mprotect-exact-cac1");
        for s in &mut analysis.series {
            for p in &mut s.points {
                p.all.mean *= 1e6;
            }
        }
        let text = means(&analysis);
        assert!(text.starts_with("Mean results in ms/page were:"), "{text}");
        assert!(!text.contains("000000"), "{text}");
    }

    #[test]
    fn a_long_series_label_gets_its_own_line() {
        let mut analysis = fixture("mprotect-exact-cac1");
        let long = "a_very_long_workload_name[level=3,flags=-d]/iterations_per_second".to_owned();
        analysis.series[0].label.clone_from(&long);
        let text = means(&analysis);
        fits(&text);
        assert!(text.lines().any(|l| l.trim() == long), "{text}");
        assert!(text.contains("38.133"));
        fits(&changes(&analysis));
    }
}
