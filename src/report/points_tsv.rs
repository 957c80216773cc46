//! `points.tsv`: one row per series, analysis (all, drop_first) and point, with the point's
//! statistics and its values. Outlier columns list 1-based sample indices (the `index` of
//! `samples.csv`); they flag, never drop. `point` is the identifier of journal.jsonl and
//! samples.csv; the last column, `point_name`, is how the reports show it (`a#1`,
//! [`crate::point_name`]), last so that the columns older readers index stay where they were.

use serde::Serialize;

use crate::{
    analysis::{Analysis, AnalysisKind},
    point_name::point_name,
    report::{number::tsv, tsv::to_tsv},
    stats::Summary,
};

/// The columns.
pub const HEADER: [&str; 21] = [
    "workload",
    "case",
    "metric",
    "unit",
    "analysis",
    "order",
    "point",
    "kernel",
    "n",
    "mean",
    "sd",
    "cv_pct",
    "min",
    "max",
    "median",
    "mad",
    "outliers",
    "lenient_outliers",
    "first_is_outlier",
    "values",
    "point_name",
];

#[derive(Serialize)]
struct Row<'a> {
    workload: &'a str,
    case: &'a str,
    metric: &'a str,
    unit: &'a str,
    analysis: &'static str,
    order: usize,
    point: &'a str,
    kernel: &'a str,
    n: usize,
    mean: String,
    sd: String,
    cv_pct: String,
    min: String,
    max: String,
    median: String,
    mad: String,
    outliers: String,
    lenient_outliers: String,
    first_is_outlier: &'static str,
    values: String,
    point_name: String,
}

/// The values, space-separated, each in its shortest round-trip form (one buffer, no string
/// per value: a million-sample campaign has two million of them here).
fn join_values(values: &[f64]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(values.len() * 12);
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{v}");
    }
    out
}

/// Renders `points.tsv`.
#[must_use]
pub fn render(analysis: &Analysis) -> Vec<u8> {
    let mut rows = Vec::new();
    for series in &analysis.series {
        for kind in [AnalysisKind::All, AnalysisKind::DropFirst] {
            for point in &series.points {
                let (summary, values, first_index): (&Summary, &[f64], usize) = match kind {
                    AnalysisKind::All => (&point.all, &point.values, 1),
                    AnalysisKind::DropFirst => match &point.drop_first {
                        Some(s) => (s, &point.values[1..], 2),
                        None => continue,
                    },
                };
                let indices = |flags: &[usize]| {
                    flags
                        .iter()
                        .map(|i| (i + first_index).to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                };
                rows.push(Row {
                    workload: &series.workload,
                    case: &series.case,
                    metric: &series.metric,
                    unit: &series.unit,
                    analysis: kind.as_str(),
                    order: point.order,
                    point: &point.label,
                    kernel: &point.kernel,
                    n: summary.n,
                    mean: tsv(Some(summary.mean)),
                    sd: tsv(summary.sd),
                    cv_pct: tsv(summary.cv_pct),
                    min: tsv(Some(summary.min)),
                    max: tsv(Some(summary.max)),
                    median: tsv(Some(summary.median)),
                    mad: tsv(summary.mad),
                    outliers: indices(&summary.outliers),
                    lenient_outliers: indices(&summary.lenient_outliers),
                    first_is_outlier: if summary.first_is_outlier {
                        "yes"
                    } else {
                        "no"
                    },
                    values: join_values(values),
                    point_name: point_name(&point.label, &point.kernel),
                });
            }
        }
    }
    to_tsv(&HEADER, &rows)
}
