//! `aba compare --tsv FILE`: every figure of a comparison, one per row, in the long form of
//! `comparison.tsv` with a `side` column: `workload case metric unit side quantity args value`.
//!
//! `side` is `reference`, `new` or `both` (a figure of the pair: the ratio, the difference
//! and its interval, the reproduction verdict and its rule). The series columns are the new
//! campaign's names; a side's own figures carry its own labels in `args` (`mean parent-a`,
//! `change_pct child,parent`), so the reference's are found by the names it publishes. The
//! environment comes first, with empty series columns. Numbers as in every TSV of aba
//! (`number::tsv`): 6 decimals, `-` for a value that does not exist.

use serde::Serialize;

use crate::{
    analysis::model::CandidateResult,
    report::{number::tsv, tsv::to_tsv},
    reproduction::model::{
        Agreement, Reproduction, SeriesFigures, SeriesMatch, SeriesReproduction,
    },
    stats::{SpreadMeasure, spread_of},
};

/// The columns.
pub const HEADER: [&str; 8] = [
    "workload", "case", "metric", "unit", "side", "quantity", "args", "value",
];

#[derive(Serialize)]
struct Row {
    workload: String,
    case: String,
    metric: String,
    unit: String,
    side: &'static str,
    quantity: &'static str,
    args: String,
    value: String,
}

/// Appends rows for one series (or, with `series` `None`, for the whole comparison).
struct Rows<'a> {
    rows: Vec<Row>,
    series: Option<&'a SeriesReproduction>,
}

impl Rows<'_> {
    fn push(&mut self, side: &'static str, quantity: &'static str, args: String, value: String) {
        let (workload, case, metric, unit) = self.series.map_or_else(Default::default, |s| {
            (
                s.workload.clone(),
                s.case.clone(),
                s.metric.clone(),
                s.unit.clone().unwrap_or_default(),
            )
        });
        self.rows.push(Row {
            workload,
            case,
            metric,
            unit,
            side,
            quantity,
            args,
            value,
        });
    }
}

/// Renders the TSV.
#[must_use]
pub fn render(r: &Reproduction) -> Vec<u8> {
    let mut rows = Rows {
        rows: Vec::new(),
        series: None,
    };
    for e in &r.environment {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        rows.push(
            "reference",
            "environment",
            e.what.clone(),
            shown(&e.reference),
        );
        rows.push("new", "environment", e.what.clone(), shown(&e.new));
        let agreement = match e.agreement {
            Agreement::Same => "same",
            Agreement::Differs => "differs",
            Agreement::Unknown => "unknown",
            Agreement::NotComparable => "not_comparable",
        };
        rows.push("both", "agreement", e.what.clone(), agreement.to_owned());
    }
    for label in &r.only_new {
        rows.push("new", "only_in", label.clone(), "yes".to_owned());
    }
    for label in &r.only_reference {
        rows.push("reference", "only_in", label.clone(), "yes".to_owned());
    }
    let mut out = rows.rows;
    for s in &r.series {
        let mut rows = Rows {
            rows: Vec::new(),
            series: Some(s),
        };
        series_rows(&mut rows, s);
        out.extend(rows.rows);
    }
    to_tsv(&HEADER, &out)
}

fn series_rows(rows: &mut Rows<'_>, s: &SeriesReproduction) {
    rows.push(
        "reference",
        "series",
        String::new(),
        s.reference_label.clone(),
    );
    let by = match s.matched_by {
        SeriesMatch::Name => "name",
        SeriesMatch::CaseAndMetric => "case_and_metric",
    };
    rows.push("both", "matched_by", String::new(), by.to_owned());
    if let Some(unit) = &s.reference_unit {
        rows.push("reference", "unit", String::new(), unit.clone());
    }
    figures(rows, "reference", &s.reference);
    figures(rows, "new", &s.new);
    for c in &s.candidates {
        side_comparison(rows, "reference", &c.reference);
        side_comparison(rows, "new", &c.new);
        if let Some(p) = &c.published {
            let pair = pair(&c.reference);
            rows.push(
                "reference",
                "published_change_pct",
                pair.clone(),
                p.text.clone(),
            );
            rows.push(
                "reference",
                "published_column",
                pair.clone(),
                p.column.clone(),
            );
            let agrees = if p.agrees { "yes" } else { "no" };
            rows.push("reference", "published_agrees", pair, agrees.to_owned());
        }
        let pair = pair(&c.new);
        let v = &c.verdict;
        rows.push("both", "ratio", pair.clone(), tsv(v.ratio));
        let d = v.difference.as_ref();
        rows.push(
            "both",
            "difference_pp",
            pair.clone(),
            tsv(d.map(|d| d.diff_pp)),
        );
        rows.push(
            "both",
            "difference_lo",
            pair.clone(),
            tsv(d.map(|d| d.bounds.0)),
        );
        rows.push(
            "both",
            "difference_hi",
            pair.clone(),
            tsv(d.map(|d| d.bounds.1)),
        );
        rows.push("both", "difference_nu", pair.clone(), tsv(d.map(|d| d.dof)));
        rows.push("both", "rule", pair.clone(), v.rule.name().to_owned());
        rows.push("both", "reproduction", pair, v.label.to_string());
    }
    for candidate in &s.only_new {
        rows.push("new", "only_candidate", candidate.clone(), "yes".to_owned());
    }
    for candidate in &s.only_reference {
        rows.push(
            "reference",
            "only_candidate",
            candidate.clone(),
            "yes".to_owned(),
        );
    }
}

/// `candidate,baseline`.
fn pair(c: &CandidateResult) -> String {
    format!("{},{}", c.candidate, c.baseline)
}

fn figures(rows: &mut Rows<'_>, side: &'static str, f: &SeriesFigures) {
    for p in &f.points {
        rows.push(side, "mean", p.label.clone(), tsv(Some(p.mean)));
    }
    rows.push(side, "max_cv_pct", String::new(), tsv(f.max_cv_pct));
    for k in &f.kernels {
        rows.push(side, "kernel_mean", k.kernel.clone(), tsv(Some(k.mean)));
        if let Some(spread) = spread_of(k) {
            let quantity = match spread.measure {
                SpreadMeasure::Drift => "drift_pct",
                SpreadMeasure::Rms => "spread_rms_pct",
            };
            rows.push(side, quantity, k.kernel.clone(), tsv(Some(spread.pct)));
        }
    }
}

fn side_comparison(rows: &mut Rows<'_>, side: &'static str, c: &CandidateResult) {
    let pair = pair(c);
    let cmp = &c.comparison;
    rows.push(side, "change_pct", pair.clone(), tsv(Some(cmp.change_pct)));
    let bounds = cmp.ci_boot.as_ref().and_then(|ci| ci.bounds);
    rows.push(side, "ci95_boot_lo", pair.clone(), tsv(bounds.map(|b| b.0)));
    rows.push(side, "ci95_boot_hi", pair.clone(), tsv(bounds.map(|b| b.1)));
    let nu = cmp.ci_boot.as_ref().map(|ci| ci.dof);
    rows.push(side, "ci95_boot_nu", pair.clone(), tsv(nu));
    rows.push(side, "max_cv_pct", pair.clone(), tsv(c.max_cv_pct));
    rows.push(side, "verdict", pair, c.label.clone());
}
