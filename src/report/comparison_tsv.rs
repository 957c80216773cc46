//! `comparison.tsv`: every derived figure of every series, in long form, one figure per row:
//! `workload case metric unit analysis quantity args value`.
//!
//! Long form because designs differ (3 points or 9, one baseline boot or three): the columns
//! stay the same for all of them. `quantity` and `args` use the golden data's vocabulary
//! (`mean parent-a`, `kernel_mean parent`, `change_pct child,parent`, `drift_pct parent`,
//! `recovery_pct child,fastpath,child,parent`), so a published figure is found with one grep.
//! Rows come per series and analysis: point means, then per kernel (boots, boot-weighted
//! mean, within-boot variance; for kernels booted twice or more also between-boot variance,
//! the Kalibera–Jones boot-level component `boot_var`, drift, range and the boot-effect
//! test's p, and with three boots or more the RMS difference between two boots
//! `spread_rms_pct`), then per candidate against the baseline (with `ci95_boot_floored` and
//! the `confidence` statement, `detectable_pct` and for an INCONCLUSIVE verdict
//! `boots_to_decide` (the mail's calibrated statement), and with a noise profile `profile_pooled` and the homogeneity
//! test's `homogeneity_f` and `homogeneity_p`), then recovery rows. A series of a campaign
//! with a noise profile also has `profile_file`, `profile_created`, `profile_nu` and
//! `profile_boot_rel_var` (or `profile_not_used` with why). Numbers have 6 decimals (fewer beyond 9
//! integer digits: at most 15 significant digits); `-` marks a value that does not exist (an
//! interval that is not estimable). The last column, `args_named`, is `args` as the reports
//! show it: a point identifier (`parent-a`) by its name (`parent#1`, [`crate::point_name`]);
//! `args` keeps the identifiers, which the golden data and scripts look up. The case
//! comparisons (`[[analysis.case_comparison]]`) come last, with the treatment's workload and case and `case_` quantities
//! ([`case_rows`]).

use serde::Serialize;

use crate::{
    analysis::{Analysis, AnalysisKind, Series, SeriesCalibration, SeriesResult},
    report::{number::tsv, tsv::to_tsv},
    stats::{
        Confidence, RatioInterval, SpreadMeasure, VerdictLabel, detectable_at_measured_noise,
        longer_design, spread_of,
    },
};

/// The rules this aba judges with, as `comparison.tsv`'s `verdict_rules` rows record them.
/// A file without such rows was written under the rules before issue 28.
pub const RULES: &str = "2";

/// The columns.
pub const HEADER: [&str; 9] = [
    "workload",
    "case",
    "metric",
    "unit",
    "analysis",
    "quantity",
    "args",
    "value",
    "args_named",
];

#[derive(Serialize)]
struct Row<'a> {
    workload: &'a str,
    case: &'a str,
    metric: &'a str,
    unit: &'a str,
    analysis: &'static str,
    quantity: &'static str,
    args: String,
    value: String,
    args_named: String,
}

/// Renders `comparison.tsv`.
#[must_use]
pub fn render(analysis: &Analysis) -> Vec<u8> {
    let mut rows = Vec::new();
    for series in &analysis.series {
        for result in [&series.all, &series.drop_first].into_iter().flatten() {
            rows_of(analysis, series, result, &mut rows);
        }
    }
    let mut out = to_tsv(&HEADER, &rows);
    // The case comparisons after every series, in the same columns (`case_` quantities).
    let cases = case_rows(analysis);
    if !cases.is_empty() {
        let body = to_tsv(&HEADER, &cases);
        let header_end = body.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1);
        out.extend_from_slice(&body[header_end..]);
    }
    out
}

/// `args` with each point identifier by its name (the `args_named` column).
pub(crate) fn named_args(analysis: &Analysis, args: &str) -> String {
    args.split(',')
        .map(|a| analysis.point_name(a))
        .collect::<Vec<_>>()
        .join(",")
}

/// `comparison.tsv` rows of the case comparisons: `(workload, case, metric, unit, analysis,
/// quantity, args, value)` with the treatment's workload and case, quantities prefixed
/// `case_` and args `kernel,control` (the control's series label).
#[must_use]
fn case_rows(analysis: &Analysis) -> Vec<[String; 9]> {
    let mut rows = Vec::new();
    for s in &analysis.case_comparisons {
        for r in s.all.iter().chain(&s.drop_first) {
            let mut push = |quantity: &str, args: String, value: String| {
                let named = named_args(analysis, &args);
                rows.push([
                    s.workload.clone(),
                    s.treatment.clone(),
                    s.metric.clone(),
                    s.unit.clone(),
                    r.kind.as_str().to_owned(),
                    quantity.to_owned(),
                    args,
                    value,
                    named,
                ]);
            };
            let pair = format!("{},{}", r.kernel, s.control_label);
            let cmp = &r.comparison;
            push("case_points", pair.clone(), r.points.join(" "));
            push(
                "case_control_mean",
                pair.clone(),
                tsv(Some(cmp.baseline_mean)),
            );
            push(
                "case_treatment_mean",
                pair.clone(),
                tsv(Some(cmp.candidate_mean)),
            );
            push("case_change_pct", pair.clone(), tsv(Some(cmp.change_pct)));
            for b in &cmp.brackets {
                push(
                    "case_point_change_pct",
                    format!("{},{}", b.baseline_point, s.control_label),
                    tsv(Some(b.pct)),
                );
            }
            for (names, ci) in [
                (
                    [
                        "case_ci95_boot_lo",
                        "case_ci95_boot_hi",
                        "case_ci95_boot_nu",
                    ],
                    &cmp.ci_boot,
                ),
                (
                    [
                        "case_ci95_within_lo",
                        "case_ci95_within_hi",
                        "case_ci95_within_nu",
                    ],
                    &cmp.ci_within,
                ),
            ] {
                let bounds = ci.as_ref().and_then(|c| c.bounds);
                push(names[0], pair.clone(), tsv(bounds.map(|b| b.0)));
                push(names[1], pair.clone(), tsv(bounds.map(|b| b.1)));
                push(names[2], pair.clone(), tsv(ci.as_ref().map(|c| c.dof)));
            }
            push(
                "case_control_drift_pct",
                pair.clone(),
                tsv(r.control.drift_pct),
            );
            push("case_max_cv_pct", pair.clone(), tsv(r.max_cv_pct));
            push("case_verdict", pair.clone(), r.label.clone());
            let reason = if r.verdict.reasons.is_empty() {
                "-".to_owned()
            } else {
                r.verdict.reasons.join("; ")
            };
            push("case_reason", pair, reason);
        }
    }
    rows
}

fn rows_of<'a>(
    analysis: &Analysis,
    series: &'a Series,
    result: &SeriesResult,
    rows: &mut Vec<Row<'a>>,
) {
    let mut push = |quantity: &'static str, args: String, value: String| {
        let args_named = named_args(analysis, &args);
        rows.push(Row {
            workload: &series.workload,
            case: &series.case,
            metric: &series.metric,
            unit: &series.unit,
            analysis: result.kind.as_str(),
            quantity,
            args,
            value,
            args_named,
        });
    };
    for point in &result.points {
        push("mean", point.label.clone(), tsv(Some(point.mean)));
    }
    push("max_cv_pct", String::new(), tsv(result.max_cv_pct));
    if let (Some(file), Some(calibration)) = (analysis.profile.name(), &series.calibration) {
        // The noise profile of the series (issue 10 §2): which file, when, with what ν, and
        // whether its entry holds for this series.
        push("profile_file", String::new(), file.to_owned());
        push(
            "profile_created",
            String::new(),
            analysis
                .profile
                .created
                .clone()
                .unwrap_or_else(|| "-".to_owned()),
        );
        let prior = match (calibration, result.kind) {
            (SeriesCalibration::Used { all, .. }, AnalysisKind::All) => Some(all),
            (SeriesCalibration::Used { drop_first, .. }, AnalysisKind::DropFirst) => {
                drop_first.as_ref()
            }
            (SeriesCalibration::NotUsed { .. }, _) => None,
        };
        push("profile_nu", String::new(), tsv(prior.map(|p| p.dof)));
        push(
            "profile_boot_rel_var",
            String::new(),
            tsv(prior.map(|p| p.rel_var)),
        );
        if let SeriesCalibration::NotUsed { why } = calibration {
            push("profile_not_used", String::new(), why.clone());
        }
    }
    for k in &result.kernels {
        push("boots", k.kernel.clone(), k.boots.len().to_string());
        push("kernel_mean", k.kernel.clone(), tsv(Some(k.mean)));
        push("within_var", k.kernel.clone(), tsv(k.within_var));
        if k.boots.len() >= 2 {
            push("between_var", k.kernel.clone(), tsv(k.between_var));
            push("boot_var", k.kernel.clone(), tsv(k.boot_var));
            push("drift_pct", k.kernel.clone(), tsv(k.drift_pct));
            push("range_pct", k.kernel.clone(), tsv(k.range_pct));
            if let Some(effect) = &k.boot_effect {
                push("boot_effect_p", k.kernel.clone(), tsv(Some(effect.p_value)));
            }
            if let Some(spread) = spread_of(k).filter(|s| s.measure == SpreadMeasure::Rms) {
                push("spread_rms_pct", k.kernel.clone(), tsv(Some(spread.pct)));
            }
        }
    }
    for c in &result.comparisons {
        let pair = format!("{},{}", c.candidate, c.baseline);
        let cmp = &c.comparison;
        push("change_pct", pair.clone(), tsv(Some(cmp.change_pct)));
        push("diff", pair.clone(), tsv(Some(cmp.diff)));
        for b in &cmp.brackets {
            push(
                "bracket_pct",
                format!("{},{}", c.candidate, b.baseline_point),
                tsv(Some(b.pct)),
            );
        }
        let boot = ["ci95_boot_lo", "ci95_boot_hi", "ci95_boot_nu"];
        interval(&mut push, boot, &pair, cmp.ci_boot.as_ref());
        push(
            "ci95_boot_floored",
            pair.clone(),
            cmp.ci_boot
                .as_ref()
                .map_or("-", |ci| if ci.floored { "yes" } else { "no" })
                .to_owned(),
        );
        if let Some(p) = &cmp.pooling {
            push(
                "profile_pooled",
                pair.clone(),
                if p.pooled { "yes" } else { "no" }.to_owned(),
            );
            let test = p.homogeneity.as_ref();
            push("homogeneity_f", pair.clone(), tsv(test.map(|t| t.f)));
            push("homogeneity_p", pair.clone(), tsv(test.map(|t| t.p_value)));
        }
        let within = ["ci95_within_lo", "ci95_within_hi", "ci95_within_nu"];
        interval(&mut push, within, &pair, cmp.ci_within.as_ref());
        push("max_cv_pct", pair.clone(), tsv(c.max_cv_pct));
        push("verdict", pair.clone(), c.label.clone());
        push("verdict_rules", pair.clone(), RULES.to_owned());
        push(
            "confidence",
            pair.clone(),
            match c.verdict.confidence {
                Confidence::BootCiExcludesZero { .. } => "boot_ci_excludes_0",
                Confidence::BootCiIncludesZero { .. } => "boot_ci_includes_0",
                Confidence::BootCiNotEstimable { .. } => "boot_ci_not_estimable",
                Confidence::WithinOnly => "within_only",
                Confidence::NotEstimable => "none",
            }
            .to_owned(),
        );
        push(
            "direction",
            pair.clone(),
            c.direction.clone().unwrap_or_else(|| "-".to_owned()),
        );
        push(
            "same_conclusion",
            pair.clone(),
            match c.same_conclusion {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            }
            .to_owned(),
        );
        // The figures behind the mail's calibrated statement (issue 29): the smallest change
        // this comparison could detect at its measured noise, and for an INCONCLUSIVE one the
        // boots of the same alternation that would detect the gate (`-` when none would).
        push(
            "detectable_pct",
            pair.clone(),
            tsv(detectable_at_measured_noise(cmp)),
        );
        if c.verdict.label == VerdictLabel::Inconclusive {
            let longer = longer_design(cmp, series.limits.gate_pct.value);
            push(
                "boots_to_decide",
                pair.clone(),
                longer.map_or_else(|| "-".to_owned(), |d| d.boots.to_string()),
            );
        }
        let reason = if c.verdict.reasons.is_empty() {
            "-".to_owned()
        } else {
            c.verdict.reasons.join("; ")
        };
        push("reason", pair, reason);
    }
    for r in &result.recoveries {
        for step in &r.steps {
            push(
                "recovery_pct",
                format!("{},{},{},{}", step.from, step.to, r.gap.0, r.gap.1),
                tsv(step.pct),
            );
        }
    }
}

/// The lo, hi and ν rows of an interval (named by `names`); `-` when it does not exist or
/// is not estimable.
fn interval(
    push: &mut impl FnMut(&'static str, String, String),
    [lo, hi, nu]: [&'static str; 3],
    pair: &str,
    ci: Option<&RatioInterval>,
) {
    let bounds = ci.and_then(|c| c.bounds);
    push(lo, pair.to_owned(), tsv(bounds.map(|b| b.0)));
    push(hi, pair.to_owned(), tsv(bounds.map(|b| b.1)));
    push(nu, pair.to_owned(), tsv(ci.map(|c| c.dof)));
}
