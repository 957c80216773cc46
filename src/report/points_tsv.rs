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
    values: &'a str,
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

/// Joined values without the first (a value's text has no space).
fn without_first(joined: &str) -> &str {
    joined.split_once(' ').map_or("", |(_, rest)| rest)
}

/// Renders `points.tsv`.
#[must_use]
pub fn render(analysis: &Analysis) -> Vec<u8> {
    // Each point's values are written twice, all of them and without the first: joined once
    // (two million values at a million samples), the second row takes the first's tail.
    let joined: Vec<Vec<String>> = analysis
        .series
        .iter()
        .map(|series| {
            series
                .points
                .iter()
                .map(|p| join_values(&p.values))
                .collect()
        })
        .collect();
    let mut rows = Vec::new();
    for (series, joined) in analysis.series.iter().zip(&joined) {
        for kind in [AnalysisKind::All, AnalysisKind::DropFirst] {
            for (point, all_values) in series.points.iter().zip(joined) {
                let (summary, values, first_index): (&Summary, &str, usize) = match kind {
                    AnalysisKind::All => (&point.all, all_values, 1),
                    AnalysisKind::DropFirst => match &point.drop_first {
                        Some(s) => (s, without_first(all_values), 2),
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
                    values,
                    point_name: point_name(&point.label, &point.kernel),
                });
            }
        }
    }
    to_tsv(&HEADER, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The second row's values are the first's without its first value, as if joined apart.
    #[test]
    fn values_without_the_first_are_the_tail_of_all_of_them() {
        for values in [
            &[1.5, 2.0, -3.25e-7][..],
            &[1e21, f64::MIN_POSITIVE][..],
            &[7.0][..],
            &[][..],
        ] {
            let all = join_values(values);
            let rest = values.get(1..).unwrap_or_default();
            assert_eq!(without_first(&all), join_values(rest), "{values:?}");
        }
    }
}
