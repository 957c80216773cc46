//! `aba compare NEW MAPPING.toml`: the text (≤ 72 columns) and the TSV of a campaign against
//! a summary reference ([`SummaryReproduction`]). Every number printed is a published mean
//! (as published, its unit the table's), a change in percent from those means, a change the
//! table states (as published), or this campaign's change and interval as its own report
//! gives them.

use std::fmt::Write as _;

use serde::Serialize;

use crate::{
    report::{
        layout::{Align, WIDTH, fit_width, table_last_under, wrap, wrap_hanging},
        number::{fixed, signed_pct, tsv},
        tsv::to_tsv,
    },
    reproduction::summary_judge::{MEANS_ONLY, SummaryCandidate, SummaryReproduction},
    stats::ReproductionLabel,
};

fn interval_text(c: &SummaryCandidate) -> String {
    c.interval.map_or_else(
        || "not estimable".to_owned(),
        |(lo, hi)| format!("{}..{}", signed_pct(lo), signed_pct(hi)),
    )
}

/// The counts line: `2 REPRODUCED, 1 NOT_REPRODUCED`.
fn counts(r: &SummaryReproduction) -> String {
    let c = &r.counts;
    let parts: Vec<String> = ReproductionLabel::ALL
        .iter()
        .filter_map(|label| {
            let n = match label {
                ReproductionLabel::Reproduced => c.reproduced,
                ReproductionLabel::Different => c.different,
                ReproductionLabel::NotReproduced => c.not_reproduced,
                ReproductionLabel::Inconclusive => c.inconclusive,
            };
            (n > 0).then(|| format!("{n} {label}"))
        })
        .collect();
    if parts.is_empty() {
        "nothing compared".to_owned()
    } else {
        parts.join(", ")
    }
}

/// What a candidate is called: its name against the reference's baseline, `fix vs child`
/// against another kernel a table of changes names.
fn shown(c: &SummaryCandidate, baseline: &str) -> String {
    if c.baseline == baseline {
        c.candidate.clone()
    } else {
        format!("{} vs {}", c.candidate, c.baseline)
    }
}

/// The candidates' table; the verdict moves under its row when a row would pass [`WIDTH`].
fn candidates_table(candidates: &[SummaryCandidate], baseline: &str) -> String {
    let header = ["kernel", "published", "new", "95% interval", "verdict"];
    let rows: Vec<Vec<String>> = candidates
        .iter()
        .map(|c| {
            vec![
                shown(c, baseline),
                signed_pct(c.published_pct),
                signed_pct(c.new_pct),
                interval_text(c),
                c.verdict.to_string(),
            ]
        })
        .collect();
    let aligns = [
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ];
    table_last_under(&aligns, &header, &rows)
}

/// The mail-ready text.
#[must_use]
pub fn render_text(r: &SummaryReproduction) -> String {
    let mut out = wrap(
        &format!(
            "{} against the summary reference {}: {}",
            r.new,
            r.reference.path,
            counts(r)
        ),
        WIDTH,
        "",
    );
    if let Some(d) = &r.reference.description {
        out.push_str(&wrap(&format!("The reference: {d}"), WIDTH, ""));
    }
    out.push('\n');
    out.push_str(&wrap(MEANS_ONLY, WIDTH, ""));
    for s in &r.series {
        out.push('\n');
        out.push_str(&wrap(
            &format!(
                "{}{} ({}): against kernel {}",
                s.label,
                if s.unit.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", s.unit)
                },
                s.file,
                r.baseline
            ),
            WIDTH,
            "",
        ));
        if !s.candidates.is_empty() {
            out.push_str(&candidates_table(&s.candidates, &r.baseline));
        }
        for c in &s.candidates {
            out.push_str(&wrap_hanging(
                &format!(
                    "{}: published {} {}; this campaign {} ({}, {} 95% interval {}): {}, {}.",
                    shown(c, &r.baseline),
                    signed_pct(c.published_pct),
                    if c.stated {
                        "as the table states it"
                    } else {
                        "from the means below"
                    },
                    signed_pct(c.new_pct),
                    c.new_label,
                    c.interval_kind.unwrap_or("no"),
                    interval_text(c),
                    c.verdict,
                    c.why
                ),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
        for why in &s.not_compared {
            out.push_str(&wrap_hanging(
                &format!("not compared: {why}"),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
        let means: Vec<String> = s
            .published
            .iter()
            .map(|k| {
                format!(
                    "{} {} (the mean of {})",
                    k.kernel,
                    fixed(k.mean, 6),
                    k.from.join(", ")
                )
            })
            .collect();
        if !means.is_empty() {
            out.push_str(&wrap_hanging(
                &format!(
                    "published means, as the table gives them: {}",
                    means.join("; ")
                ),
                WIDTH,
                "  ",
                "    ",
            ));
        }
        let stated: Vec<String> = s
            .stated
            .iter()
            .map(|c| {
                format!(
                    "{} vs {} {}% ({})",
                    c.candidate,
                    c.baseline,
                    fixed(c.pct, 6),
                    c.from
                )
            })
            .collect();
        if !stated.is_empty() {
            out.push_str(&wrap_hanging(
                &format!(
                    "published changes, as the table states them: {}",
                    stated.join("; ")
                ),
                WIDTH,
                "  ",
                "    ",
            ));
        }
    }
    for s in r.reference.series.iter().filter(|s| !s.unused.is_empty()) {
        out.push_str(&wrap_hanging(
            &format!(
                "Not used from {} (no {}): {}.",
                s.file,
                if s.kernels.is_empty() {
                    "comparison in `comparisons`"
                } else {
                    "kernel in `kernels`"
                },
                s.unused.join(", ")
            ),
            WIDTH,
            "",
            "  ",
        ));
    }
    if !r.only_reference.is_empty() {
        out.push('\n');
        out.push_str(&wrap(
            &format!(
                "Only in the reference (no such series here): {}.",
                r.only_reference.join(", ")
            ),
            WIDTH,
            "",
        ));
    }
    out.push('\n');
    let _ = write!(
        out,
        "{}",
        wrap(
            &format!(
                "Reproduce: `aba compare {} {}` recomputes every figure: the published \
                 changes from {}, this campaign's from its raw files. A \
                 published change inside this campaign's interval is REPRODUCED; outside it, \
                 DIFFERENT when it is this campaign's SIGNAL at another size, else \
                 NOT_REPRODUCED; INCONCLUSIVE when this campaign decides nothing.",
                r.new,
                r.reference.path,
                r.reference.files.join(", ")
            ),
            WIDTH,
            "",
        )
    );
    fit_width(&out, WIDTH)
}

/// One row of the TSV: one candidate of one series.
#[derive(Serialize)]
struct Row {
    series: String,
    candidate: String,
    baseline: String,
    published_pct: String,
    new_pct: String,
    ci_low_pct: String,
    ci_high_pct: String,
    interval: &'static str,
    new_verdict: String,
    reproduction: String,
    file: String,
}

/// The TSV's header.
pub const TSV_HEADER: &[&str] = &[
    "series",
    "candidate",
    "baseline",
    "published_pct",
    "new_pct",
    "ci_low_pct",
    "ci_high_pct",
    "interval",
    "new_verdict",
    "reproduction",
    "file",
];

/// The TSV: every figure of the text, unrounded to 6 decimals.
#[must_use]
pub fn render_tsv(r: &SummaryReproduction) -> Vec<u8> {
    let rows: Vec<Row> = r
        .series
        .iter()
        .flat_map(|s| {
            s.candidates.iter().map(move |c| Row {
                series: s.label.clone(),
                candidate: c.candidate.clone(),
                baseline: c.baseline.clone(),
                published_pct: tsv(Some(c.published_pct)),
                new_pct: tsv(Some(c.new_pct)),
                ci_low_pct: tsv(c.interval.map(|i| i.0)),
                ci_high_pct: tsv(c.interval.map(|i| i.1)),
                interval: c.interval_kind.unwrap_or("-"),
                new_verdict: c.new_label.clone(),
                reproduction: c.verdict.to_string(),
                file: crate::text::one_line(&s.file).into_owned(),
            })
        })
        .collect();
    to_tsv(TSV_HEADER, &rows)
}
