//! The combined report of a multi-target run (issue 13), written into the parent directory:
//! `report.txt` (≤ 72 columns, mail-ready), `README.md` and `targets.tsv`, all from a
//! [`TargetsAnalysis`]. Each target's own reports stay in its subdirectory; this one only
//! puts them side by side, as seed 002's mail does by hand for two machines. Linked
//! campaigns (`aba report A B --together`: two campaigns of one question, as the tmpfs
//! bundle's production-config and exact-config A/Bs) are put side by side the same way, in
//! the same words with "campaign" for "target", into `report.txt`, `README.md` and
//! `linked.tsv`.

use std::{fmt::Write as _, path::Path};

use serde::Serialize;

use crate::{
    analysis::targets::{
        Agreement, CrossComparison, Grouping, Machines, TargetRow, TargetState, TargetsAnalysis,
    },
    report::{
        ReportError,
        layout::{Align, Table, WIDTH, fit_width, table_last_under, wrap, wrap_hanging},
        mail_tables::better_text,
        markdown,
        number::{pct, signed_pct, tsv},
        tsv::to_tsv,
    },
    results::atomic::write_atomic,
    stats::SpreadMeasure,
};

/// The files of the combined report, in the parent directory.
pub const TARGETS_FILES: &[&str] = &["report.txt", "README.md", "targets.tsv"];

/// The files of linked campaigns' combined report (`aba report … --together --to OUT`).
pub const LINKED_FILES: &[&str] = &["report.txt", "README.md", "linked.tsv"];

/// The TSV file of a grouping.
fn tsv_name(grouping: Grouping) -> &'static str {
    match grouping {
        Grouping::Targets => "targets.tsv",
        Grouping::Campaigns => "linked.tsv",
    }
}

/// What differs between them when fingerprints differ: machines for targets; for linked
/// campaigns, which may share a machine and differ in its setup, environments.
fn apart_words(grouping: Grouping) -> &'static str {
    match grouping {
        Grouping::Targets => "machines",
        Grouping::Campaigns => "environments",
    }
}

/// What a target's campaign reached, in words (`finished, 3/3 points`).
#[must_use]
pub fn state_text(state: &TargetState) -> String {
    match state {
        TargetState::Finished { points } => format!("finished, {points}/{points} points"),
        TargetState::Stopped { done, points, .. } => format!("stopped, {done}/{points} points"),
        TargetState::Unfinished { done, points } => {
            format!("running or killed, {done}/{points} points")
        }
        TargetState::NotStarted { .. } => "not started".to_owned(),
    }
}

/// Why a target did not finish, when that needs saying.
fn state_why(state: &TargetState) -> Option<&str> {
    match state {
        TargetState::Stopped { reason, .. } => Some(reason),
        TargetState::NotStarted { why } => Some(why),
        TargetState::Finished { .. } | TargetState::Unfinished { .. } => None,
    }
}

/// A journal's reason (several lines: the failure and its causes) as one line of words.
fn flat(text: &str) -> String {
    crate::text::printable(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn interval_text(row: &TargetRow) -> String {
    row.interval.map_or_else(
        || "not estimable".to_owned(),
        |(lo, hi)| format!("{}..{}", signed_pct(lo), signed_pct(hi)),
    )
}

fn drift_text(row: &TargetRow) -> String {
    match (row.drift_pct, row.drift_measure) {
        (Some(d), Some(SpreadMeasure::Drift)) => signed_pct(d),
        (Some(d), _) => pct(d),
        (None, _) => "-".to_owned(),
    }
}

fn cv_text(row: &TargetRow) -> String {
    row.cv_pct.map_or_else(|| "-".to_owned(), pct)
}

/// The agreement line of one comparison.
fn agreement_text(c: &CrossComparison, machines: &Machines, grouping: Grouping) -> String {
    let nouns = grouping.nouns();
    // Different only when fingerprints differ; without every fingerprint it is not known.
    let apart = if machines.same() {
        String::new()
    } else if machines.differences.is_empty() {
        format!(" ({} not known to be the same)", apart_words(grouping))
    } else {
        format!(" (different {})", apart_words(grouping))
    };
    let mut text = match &c.agreement {
        Agreement::Agree { direction, verdict } => match direction {
            Some(d) => format!("{nouns} agree{apart}: {d}, {verdict}"),
            None => format!("{nouns} agree{apart}: {verdict}"),
        },
        Agreement::Disagree => {
            let each: Vec<String> = c
                .rows
                .iter()
                .map(|r| match &r.direction {
                    Some(d) => format!("{} {d} {}", r.target, r.verdict),
                    None => format!("{} {}", r.target, r.verdict),
                })
                .collect();
            format!("{nouns} disagree{apart}: {}", each.join("; "))
        }
        Agreement::Alone => format!(
            "only one {} has a result: nothing to agree on",
            grouping.noun()
        ),
    };
    if !c.missing.is_empty() {
        let _ = write!(text, "; no result on {}", c.missing.join(", "));
    }
    text
}

fn series_title(c: &CrossComparison) -> String {
    let unit = if c.unit.is_empty() {
        String::new()
    } else {
        format!("{}, ", c.unit)
    };
    format!(
        "{} ({unit}{}): {} against {}",
        c.series,
        better_text(c.better),
        c.candidate,
        c.baseline
    )
}

/// One comparison's table; the verdict moves under its row when the row would pass
/// [`WIDTH`] (long target names, `AUX_NO_MATERIAL_SIGNAL`).
fn comparison_table(c: &CrossComparison, grouping: Grouping) -> String {
    let header = [
        grouping.noun(),
        "change",
        "95% interval",
        "drift",
        "CV",
        "verdict",
    ];
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                r.target.clone(),
                signed_pct(r.change_pct),
                interval_text(r),
                drift_text(r),
                cv_text(r),
                r.verdict.clone(),
            ]
        })
        .collect();
    let aligns = [
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ];
    table_last_under(&aligns, &header, &rows)
}

fn machines_text(t: &TargetsAnalysis) -> String {
    let m = &t.machines;
    let (noun, apart) = (t.grouping.noun(), apart_words(t.grouping));
    let names: Vec<&str> = t.targets.iter().map(|s| s.target.as_str()).collect();
    let mut out = String::from("Machines\n");
    if m.same() {
        out.push_str(&wrap(
            &format!(
                "{}: the same environment fingerprint (CPU model, microcode, \
                 command line, tuning and sysctls read back). Still reported side \
                 by side, never pooled.",
                names.join(", ")
            ),
            WIDTH,
            "  ",
        ));
        return out;
    }
    if m.differences.is_empty() && m.fingerprints.len() >= 2 {
        out.push_str(&wrap(
            &format!(
                "The {noun}s with a fingerprint have the same one; the others \
                 cannot be compared, so each {noun} is reported on its own, never pooled."
            ),
            WIDTH,
            "  ",
        ));
    } else if m.differences.is_empty() {
        out.push_str(&wrap(
            &format!(
                "Not every {noun} has a fingerprint yet, so whether they are one \
                 kind of machine is not known: each {noun} is reported on its own, \
                 never pooled."
            ),
            WIDTH,
            "  ",
        ));
    } else {
        let mut lead =
            format!("Different {apart}: each {noun} is reported on its own, never pooled.");
        if let Some(first) = lead.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        out.push_str(&wrap(&lead, WIDTH, "  "));
        for d in &m.differences {
            let values: Vec<String> = d
                .values
                .iter()
                .map(|(target, value)| format!("{value} at {target}"))
                .collect();
            out.push_str(&wrap_hanging(
                &format!("{}: {}", d.what, values.join("; ")),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
    }
    if !m.unknown.is_empty() {
        out.push_str(&wrap_hanging(
            &format!(
                "no fingerprint (no done baseline point with an environment record): {}",
                m.unknown.join(", ")
            ),
            WIDTH,
            "  - ",
            "    ",
        ));
    }
    out
}

/// `report.txt` of the parent.
#[must_use]
pub fn render_text(t: &TargetsAnalysis) -> String {
    let mut out = String::new();
    let (noun, nouns) = (t.grouping.noun(), t.grouping.nouns());
    let names: Vec<&str> = t.targets.iter().map(|s| s.target.as_str()).collect();
    match t.grouping {
        Grouping::Targets => {
            out.push_str(&wrap(
                &format!(
                    "{} on {} targets: {}",
                    t.recipe,
                    t.targets.len(),
                    names.join(", ")
                ),
                WIDTH,
                "",
            ));
            out.push_str(&wrap(
                &format!(
                    "Results: {}/, one campaign directory per target.",
                    t.directory
                ),
                WIDTH,
                "",
            ));
        }
        Grouping::Campaigns => {
            out.push_str(&wrap(
                &format!(
                    "{} linked campaigns of one question: {} (recipes: {})",
                    t.targets.len(),
                    names.join(", "),
                    t.recipe
                ),
                WIDTH,
                "",
            ));
            out.push_str(&wrap(
                "Each campaign keeps its own recipe, limits and verdicts; nothing here \
                 pools them.",
                WIDTH,
                "",
            ));
        }
    }
    let _ = write!(out, "\n{}\n", capitalised(nouns));
    let mut table = Table::new(&[Align::Left, Align::Left, Align::Left]);
    for s in &t.targets {
        table.row([
            s.target.clone(),
            state_text(&s.state),
            format!("{}/", s.dir),
        ]);
    }
    out.push_str(&table.render(2));
    for s in &t.targets {
        if let Some(why) = state_why(&s.state) {
            out.push_str(&wrap_hanging(
                &format!("{}: {}", s.target, flat(why)),
                WIDTH,
                "  ",
                "    ",
            ));
        }
        if let Some(why) = &s.not_analysed
            && !matches!(s.state, TargetState::NotStarted { .. })
        {
            out.push_str(&wrap_hanging(
                &format!("{}: no analysis: {}", s.target, flat(why)),
                WIDTH,
                "  ",
                "    ",
            ));
        }
    }
    out.push('\n');
    out.push_str(&machines_text(t));
    if t.comparisons.is_empty() {
        let _ = writeln!(out, "\nNo {noun} has a comparison yet.");
    } else {
        let _ = writeln!(out, "\nChanges per {noun}");
        for c in &t.comparisons {
            out.push('\n');
            out.push_str(&wrap(&series_title(c), WIDTH, ""));
            out.push_str(&comparison_table(c, t.grouping));
            out.push_str(&wrap(
                &agreement_text(c, &t.machines, t.grouping),
                WIDTH,
                "  ",
            ));
        }
    }
    out.push('\n');
    out.push_str(&wrap(
        &format!(
            "change: candidate against baseline, all samples; 95% interval: \
             its boot-level interval; drift: the baseline's last boot against its \
             first (with three boots or more, the RMS difference of its boot \
             pairs); CV: the largest point CV of the two kernels. {} agree \
             when they have the same direction and verdict. {}",
            capitalised(nouns),
            match t.grouping {
                Grouping::Targets => "Each target's own report is <target>/report.txt.",
                Grouping::Campaigns => "Each campaign's own report is report.txt in its directory.",
            }
        ),
        WIDTH,
        "",
    ));
    fit_width(&out, WIDTH)
}

/// `Targets` from `targets`.
fn capitalised(word: &str) -> String {
    let mut out = word.to_owned();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}

/// `README.md` of the parent.
#[must_use]
pub fn render_markdown(t: &TargetsAnalysis) -> String {
    let noun = t.grouping.noun();
    let mut out = match t.grouping {
        Grouping::Targets => format!(
            "# {} on {} targets\n\nOne campaign directory per target; each is a complete \
             results directory with its own README.md.\n\n## Targets\n\n",
            t.recipe,
            t.targets.len()
        ),
        Grouping::Campaigns => format!(
            "# {} linked campaigns\n\nCampaigns of one question (recipes: {}), each a \
             complete results directory with its own README.md, recipe, limits and \
             verdicts; nothing here pools them.\n\n## Campaigns\n\n",
            t.targets.len(),
            t.recipe
        ),
    };
    let rows: Vec<Vec<String>> = t
        .targets
        .iter()
        .map(|s| {
            vec![
                s.target.clone(),
                state_text(&s.state),
                state_why(&s.state).map(flat).unwrap_or_default(),
                format!("[{}/]({}/README.md)", s.dir, s.dir),
            ]
        })
        .collect();
    out.push_str(&markdown::table(
        &[noun, "state", "why", "directory"],
        &rows,
    ));
    out.push_str("\n## Machines\n\n");
    let m = &t.machines;
    if m.same() {
        let _ = writeln!(
            out,
            "Every {noun} has the same environment fingerprint (CPU model, microcode, \
             command line, tuning and sysctls read back). Results are still reported per \
             {noun}, never pooled."
        );
    } else {
        let _ = write!(
            out,
            "**Different {}** (or not comparable): each {noun} is reported on its \
             own, never pooled.\n\n",
            apart_words(t.grouping)
        );
        if !m.differences.is_empty() {
            let mut header = vec!["fact"];
            header.extend(m.fingerprints.iter().map(|f| f.target.as_str()));
            let rows: Vec<Vec<String>> = m
                .differences
                .iter()
                .map(|d| {
                    std::iter::once(d.what.clone())
                        .chain(d.values.iter().map(|(_, v)| v.clone()))
                        .collect()
                })
                .collect();
            out.push_str(&markdown::table(&header, &rows));
        }
        if !m.unknown.is_empty() {
            let _ = writeln!(
                out,
                "\nNo fingerprint (no done baseline point with an environment record): {}.",
                m.unknown.join(", ")
            );
        }
    }
    let _ = writeln!(out, "\n## Changes per {noun}");
    for c in &t.comparisons {
        let _ = write!(out, "\n### {}\n\n", series_title(c));
        let rows: Vec<Vec<String>> = c
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.target.clone(),
                    signed_pct(r.change_pct),
                    interval_text(r),
                    drift_text(r),
                    cv_text(r),
                    format!("`{}`", r.verdict),
                ]
            })
            .collect();
        out.push_str(&markdown::table(
            &[noun, "change", "95% interval", "drift", "CV", "verdict"],
            &rows,
        ));
        let _ = writeln!(out, "\n{}.", agreement_text(c, &t.machines, t.grouping));
    }
    if t.comparisons.is_empty() {
        let _ = writeln!(out, "\nNo {noun} has a comparison yet.");
    }
    let _ = writeln!(
        out,
        "\nThe same numbers, unrounded to 6 decimals, are in `{}`; `report.txt` is \
         the mail-ready text.",
        tsv_name(t.grouping)
    );
    out
}

/// One row of `targets.tsv`: one target's result of one comparison.
#[derive(Serialize)]
struct TsvRow {
    series: String,
    unit: String,
    candidate: String,
    baseline: String,
    target: String,
    same_machines: &'static str,
    change_pct: String,
    ci_low_pct: String,
    ci_high_pct: String,
    drift_pct: String,
    drift_measure: &'static str,
    cv_pct: String,
    direction: String,
    verdict: String,
    agreement: &'static str,
}

/// The header of `targets.tsv`.
pub const TSV_HEADER: &[&str] = &[
    "series",
    "unit",
    "candidate",
    "baseline",
    "target",
    "same_machines",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "drift_pct",
    "drift_measure",
    "cv_pct",
    "direction",
    "verdict",
    "agreement",
];

/// `targets.tsv` of the parent, or `linked.tsv` of linked campaigns.
#[must_use]
pub fn render_tsv(t: &TargetsAnalysis) -> Vec<u8> {
    let same = if t.machines.same() { "yes" } else { "no" };
    let rows: Vec<TsvRow> = t
        .comparisons
        .iter()
        .flat_map(|c| {
            c.rows.iter().map(move |r| TsvRow {
                series: c.series.clone(),
                unit: c.unit.clone(),
                candidate: c.candidate.clone(),
                baseline: c.baseline.clone(),
                target: r.target.clone(),
                same_machines: same,
                change_pct: tsv(Some(r.change_pct)),
                ci_low_pct: tsv(r.interval.map(|i| i.0)),
                ci_high_pct: tsv(r.interval.map(|i| i.1)),
                drift_pct: tsv(r.drift_pct),
                drift_measure: match r.drift_measure {
                    Some(SpreadMeasure::Drift) => "drift",
                    Some(SpreadMeasure::Rms) => "rms",
                    None => "-",
                },
                cv_pct: tsv(r.cv_pct),
                direction: r.direction.clone().unwrap_or_else(|| "-".to_owned()),
                verdict: r.verdict.clone(),
                agreement: match c.agreement {
                    Agreement::Agree { .. } => "agree",
                    Agreement::Disagree => "disagree",
                    Agreement::Alone => "alone",
                },
            })
        })
        .collect();
    let tsv = to_tsv(TSV_HEADER, &rows);
    match t.grouping {
        Grouping::Targets => tsv,
        // The same rows and columns; `campaign` names the fifth, `target` in targets.tsv.
        Grouping::Campaigns => {
            let text = String::from_utf8(tsv).expect("invariant: to_tsv writes UTF-8");
            let (_, body) = text.split_once('\n').unwrap_or((&text, ""));
            let header: Vec<&str> = TSV_HEADER
                .iter()
                .map(|h| if *h == "target" { "campaign" } else { h })
                .collect();
            format!("{}\n{body}", header.join("\t")).into_bytes()
        }
    }
}

/// Writes the combined report into `parent`, each file atomically; returns report.txt.
pub fn write_targets_report(parent: &Path, t: &TargetsAnalysis) -> Result<String, ReportError> {
    // Target names and reasons come from a manifest and journals: anyone's files.
    let text = crate::text::printable(&render_text(t)).into_owned();
    let readme = crate::text::printable(&render_markdown(t)).into_owned();
    let files: [(&str, Vec<u8>); 3] = [
        ("report.txt", text.clone().into_bytes()),
        ("README.md", readme.into_bytes()),
        (tsv_name(t.grouping), render_tsv(t)),
    ];
    for (name, bytes) in files {
        let path = parent.join(name);
        write_atomic(&path, &bytes).map_err(|source| ReportError::Write { path, source })?;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::{TSV_HEADER, render_markdown, render_text, render_tsv};
    use crate::{
        analysis::targets::{TargetInput, TargetState, TargetsAnalysis},
        report::layout::WIDTH,
    };

    fn combined(second_cpu: &str, second: &str) -> TargetsAnalysis {
        let mut a = crate::analysis::testkit::roles();
        a.environment
            .points
            .push(crate::analysis::environment::PointEnv {
                point: "a-a".to_owned(),
                kernel: "a".to_owned(),
                file: "env/a-a-1.json".to_owned(),
                facts: [("cpu_model".to_owned(), "Xeon".to_owned())].into(),
            });
        let mut b = a.clone();
        b.environment.points[0]
            .facts
            .insert("cpu_model".to_owned(), second_cpu.to_owned());
        let input = |target: &str, analysis| TargetInput {
            target: target.to_owned(),
            dir: target.to_owned(),
            state: TargetState::Finished { points: 3 },
            analysis: Ok(analysis),
        };
        TargetsAnalysis::new("roles", "roles-1", &[input("lab-a", a), input(second, b)])
    }

    #[test]
    fn the_text_fits_a_mail_and_says_what_agrees() {
        let same = combined("Xeon", "lab-b");
        let text = render_text(&same);
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "too wide: {line:?}");
        }
        assert!(text.contains("roles on 2 targets: lab-a, lab-b"), "{text}");
        assert!(text.contains("the same environment fingerprint"), "{text}");
        assert!(text.contains("targets agree: slower, SIGNAL"), "{text}");
        assert!(
            text.contains("main (ns, lower is better): b against a"),
            "{text}"
        );

        // Another CPU and a long name: labelled different machines, still within 72 columns.
        let apart = combined("EPYC", "a-rather-long-target-name-in-the-lab");
        let text = render_text(&apart);
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "too wide: {line:?}");
        }
        assert!(text.contains("Different machines"), "{text}");
        assert!(text.contains("CPU model: Xeon at lab-a; EPYC at"), "{text}");
        assert!(
            text.contains("targets agree (different machines)"),
            "{text}"
        );
        assert!(render_markdown(&apart).contains("**Different machines**"));
    }

    #[test]
    fn the_tsv_has_one_row_per_target_and_comparison() {
        let same = combined("Xeon", "lab-b");
        let tsv = String::from_utf8(render_tsv(&same)).expect("utf-8");
        let mut lines = tsv.lines();
        assert_eq!(lines.next(), Some(TSV_HEADER.join("\t").as_str()));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
        let comparisons = same.comparisons.len();
        assert_eq!(rows.len(), 2 * comparisons);
        assert!(rows.iter().all(|r| r.len() == TSV_HEADER.len()));
        assert_eq!(rows[0][4], "lab-a");
        assert_eq!(rows[1][4], "lab-b");
        assert_eq!(rows[0][5], "yes");
        assert_eq!(rows[0][6], rows[1][6], "the same change on both");
    }
}
