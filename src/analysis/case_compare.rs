//! `[[analysis.case_comparison]]`: a treatment case against a control case within every
//! kernel (seed 003's flag, seed 004's cgroup level), judged with the verdict rules of a
//! kernel comparison.
//!
//! Both cases run in the same boots, so the comparison is paired per point
//! ([`crate::stats::compare_paired`]): the boot-level interval comes from the per-point
//! differences, in which the boot effect the two cases share cancels. Everything else is a
//! kernel comparison's: the control case's midpoint, the change, the brackets (the change
//! at every point), drop-first as the robustness check, the control's and treatment's
//! spreads for the drift limit and margin, the largest point CV, and
//! [`crate::stats::verdict`] itself. The verdict simulator runs this module
//! (`bench/verdicts.rs --cases`).

use crate::{
    analysis::{
        environment::EnvironmentCheck,
        model::{AnalysisKind, CaseResult, SeriesPoint},
        series::percentages_refused,
    },
    stats::{
        Better, BootPoint, Comparison, Direction, KernelSummary, PairedPoint, Summary, Verdict,
        VerdictInput, VerdictParams, compare_paired, kernel_summary, verdict,
    },
};

/// What a case comparison depends on besides the two cases' points.
#[derive(Clone, Copy, Debug)]
pub struct CaseContext<'a> {
    /// The treatment's series label.
    pub treatment: &'a str,
    /// The control's series label.
    pub control: &'a str,
    /// The verdict parameters (the treatment series' limits).
    pub params: &'a VerdictParams,
    /// Which direction is an improvement.
    pub better: Better,
    /// Auxiliary: `AUX_` labels.
    pub aux: bool,
    /// Environment differences: one among a kernel's boots makes its comparison UNSTABLE.
    pub environment: &'a EnvironmentCheck,
}

/// Both analyses of a case comparison, and the kernels not compared.
#[derive(Clone, Debug, Default)]
pub struct CaseAnalyses {
    /// All samples, per kernel.
    pub all: Vec<CaseResult>,
    /// Drop-first, per kernel; empty when unavailable.
    pub drop_first: Vec<CaseResult>,
    /// Kernels not compared, with why.
    pub not_compared: Vec<String>,
}

/// The paired points of one analysis, and the comparisons before verdicts.
struct Stage {
    kind: AnalysisKind,
    pairs: Vec<PairedPoint>,
    cvs: Vec<(String, Option<f64>, Option<f64>)>,
    kernels: Vec<String>,
    comparisons: Vec<Option<Comparison>>,
}

/// Compares `treatment` with `control` (each a series' done points in boot order) on every
/// kernel where both have values at the same points.
#[must_use]
pub fn compare_cases(
    control: &[SeriesPoint],
    treatment: &[SeriesPoint],
    ctx: &CaseContext<'_>,
) -> CaseAnalyses {
    let paired: Vec<(&SeriesPoint, &SeriesPoint)> = treatment
        .iter()
        .filter_map(|t| Some((control.iter().find(|c| c.label == t.label)?, t)))
        .collect();
    if paired.is_empty() {
        return CaseAnalyses {
            not_compared: vec!["no done point has values of both cases".to_owned()],
            ..CaseAnalyses::default()
        };
    }
    let both: Vec<SeriesPoint> = paired
        .iter()
        .flat_map(|(c, t)| [(*c).clone(), (*t).clone()])
        .collect();
    if let Some(why) = percentages_refused(&both) {
        return CaseAnalyses {
            not_compared: vec![why],
            ..CaseAnalyses::default()
        };
    }
    let all = stage(AnalysisKind::All, &paired, ctx);
    // As for a series: drop-first needs n ≥ 3 at every point of both cases.
    let usable = paired
        .iter()
        .all(|(c, t)| c.values_n() >= 3 && t.values_n() >= 3);
    let drop_first = usable.then(|| stage(AnalysisKind::DropFirst, &paired, ctx));
    let mut not_compared = Vec::new();
    let all_results = finish(&all, drop_first.as_ref(), ctx, &mut not_compared);
    let df_results = drop_first
        .as_ref()
        .map(|df| finish(df, Some(&all), ctx, &mut Vec::new()))
        .unwrap_or_default();
    CaseAnalyses {
        all: all_results,
        drop_first: df_results,
        not_compared,
    }
}

fn summary(point: &SeriesPoint, kind: AnalysisKind) -> &Summary {
    match kind {
        AnalysisKind::All => &point.all,
        AnalysisKind::DropFirst => point
            .drop_first
            .as_ref()
            .expect("invariant: drop-first is staged only when every point has it"),
    }
}

fn stage(
    kind: AnalysisKind,
    paired: &[(&SeriesPoint, &SeriesPoint)],
    ctx: &CaseContext<'_>,
) -> Stage {
    let pairs: Vec<PairedPoint> = paired
        .iter()
        .map(|(c, t)| PairedPoint {
            control: BootPoint::from_summary(&c.label, &c.kernel, summary(c, kind)),
            treatment: BootPoint::from_summary(&t.label, &t.kernel, summary(t, kind)),
        })
        .collect();
    let mut kernels: Vec<String> = Vec::new();
    for (c, _) in paired {
        if !kernels.contains(&c.kernel) {
            kernels.push(c.kernel.clone());
        }
    }
    let comparisons = kernels
        .iter()
        .map(|k| compare_paired(&pairs, k, ctx.treatment, ctx.control))
        .collect();
    Stage {
        kind,
        cvs: paired
            .iter()
            .map(|(c, t)| {
                (
                    c.kernel.clone(),
                    summary(c, kind).cv_pct,
                    summary(t, kind).cv_pct,
                )
            })
            .collect(),
        pairs,
        kernels,
        comparisons,
    }
}

/// One case's points on `kernel`, labelled with the case as their "kernel", and its summary.
fn case_summary(
    stage: &Stage,
    kernel: &str,
    pick: fn(&PairedPoint) -> &BootPoint,
    name: &str,
) -> KernelSummary {
    let points: Vec<BootPoint> = stage
        .pairs
        .iter()
        .filter(|p| p.control.kernel == kernel)
        .map(|p| BootPoint {
            kernel: name.to_owned(),
            ..pick(p).clone()
        })
        .collect();
    kernel_summary(&points, name).expect("invariant: a compared kernel has paired points")
}

fn max_cv(stage: &Stage, kernel: &str) -> Option<f64> {
    stage
        .cvs
        .iter()
        .filter(|(k, _, _)| k == kernel)
        .flat_map(|(_, c, t)| [*c, *t])
        .flatten()
        .reduce(f64::max)
}

fn judge(
    stage: &Stage,
    kernel: &str,
    cmp: &Comparison,
    robust_against: Option<&Comparison>,
    ctx: &CaseContext<'_>,
) -> (Verdict, KernelSummary, KernelSummary) {
    let control = case_summary(stage, kernel, |p| &p.control, ctx.control);
    let treatment = case_summary(stage, kernel, |p| &p.treatment, ctx.treatment);
    let kernels = [control, treatment];
    let input = VerdictInput {
        all: cmp,
        drop_first: robust_against,
        kernels: &kernels,
        max_cv_pct: max_cv(stage, kernel),
        // The case stage keeps CVs without their sample counts: the limit applies as it
        // stands (never looser than the series' test).
        cv_basis: None,
        better: ctx.better,
        environment: &ctx.environment.affecting(kernel, kernel),
        // Treatment and control run at every point of one kernel, so a drift over the
        // campaign moves both and cancels in their ratio: no trend test here.
        trend: None,
    };
    let judged = verdict(ctx.params, &input);
    let [control, treatment] = kernels;
    (judged, control, treatment)
}

fn finish(
    own: &Stage,
    other: Option<&Stage>,
    ctx: &CaseContext<'_>,
    not_compared: &mut Vec<String>,
) -> Vec<CaseResult> {
    let mut out = Vec::new();
    for (i, kernel) in own.kernels.iter().enumerate() {
        let Some(cmp) = &own.comparisons[i] else {
            not_compared.push(format!(
                "{kernel}: the control's mean is 0, a percentage does not exist"
            ));
            continue;
        };
        let other_cmp = other.and_then(|o| o.comparisons[i].as_ref());
        let (own_verdict, control, treatment) = judge(own, kernel, cmp, other_cmp, ctx);
        let same_conclusion = other.zip(other_cmp).map(|(o, other_cmp)| {
            judge(o, kernel, other_cmp, Some(cmp), ctx).0.label == own_verdict.label
        });
        let label = if ctx.aux {
            format!("AUX_{}", own_verdict.label)
        } else {
            own_verdict.label.to_string()
        };
        out.push(CaseResult {
            kernel: kernel.clone(),
            kind: own.kind,
            points: own
                .pairs
                .iter()
                .filter(|p| &p.control.kernel == kernel)
                .map(|p| p.control.label.clone())
                .collect(),
            control,
            treatment,
            comparison: cmp.clone(),
            max_cv_pct: max_cv(own, kernel),
            direction: own_verdict.direction.map(|d| {
                match d {
                    Direction::Worse => "slower",
                    Direction::Better => "faster",
                }
                .to_owned()
            }),
            verdict: own_verdict,
            label,
            same_conclusion,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{CaseContext, compare_cases};
    use crate::{
        analysis::{environment::EnvironmentCheck, model::SeriesPoint},
        stats::{Better, VerdictLabel, VerdictParams, summarize},
    };

    fn point(order: usize, label: &str, kernel: &str, values: &[f64]) -> SeriesPoint {
        SeriesPoint {
            order,
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            values: values.to_vec(),
            warmups: Vec::new(),
            all: summarize(values).expect("not empty"),
            drop_first: summarize(&values[1..]),
        }
    }

    /// Five samples around `mean`, CV about 0.1 %.
    fn around(mean: f64) -> Vec<f64> {
        [1.0, 0.999, 1.001, 1.0005, 0.9995]
            .iter()
            .map(|f| f * mean)
            .collect()
    }

    fn ctx<'a>(params: &'a VerdictParams, env: &'a EnvironmentCheck) -> CaseContext<'a> {
        CaseContext {
            treatment: "pipe[level=1]",
            control: "pipe[level=root]",
            params,
            better: Better::Higher,
            aux: false,
            environment: env,
        }
    }

    #[test]
    fn a_level_costing_six_percent_is_a_signal_on_every_kernel_despite_the_boot_effect() {
        // Boot means 100, 103 and 98 (a boot effect of a few percent, which both cases of a
        // boot share) with level 1 6 % below root at each boot.
        let boots = [("a-a", "a", 100.0), ("b", "b", 103.0), ("a-b", "a", 98.0)];
        let control: Vec<SeriesPoint> = boots
            .iter()
            .enumerate()
            .map(|(i, (l, k, m))| point(i + 1, l, k, &around(*m)))
            .collect();
        let treatment: Vec<SeriesPoint> = boots
            .iter()
            .enumerate()
            .map(|(i, (l, k, m))| point(i + 1, l, k, &around(m * 0.94)))
            .collect();
        let params = VerdictParams {
            max_drift_pct: Some(5.0),
            ..VerdictParams::default()
        };
        let env = EnvironmentCheck::default();
        let result = compare_cases(&control, &treatment, &ctx(&params, &env));
        assert!(result.not_compared.is_empty(), "{:?}", result.not_compared);
        let kernels: Vec<&str> = result.all.iter().map(|r| r.kernel.as_str()).collect();
        assert_eq!(kernels, ["a", "b"]);
        let a = &result.all[0];
        assert_eq!(a.points, ["a-a", "a-b"]);
        assert!((a.comparison.change_pct + 6.0).abs() < 1e-9);
        assert!((a.comparison.baseline_mean - 99.0).abs() < 1e-9);
        assert_eq!(
            a.control.drift_pct.map(|d| (d * 100.0).round()),
            Some(-200.0)
        );
        assert_eq!(
            a.verdict.label,
            VerdictLabel::Signal,
            "{:?}",
            a.verdict.reasons
        );
        assert_eq!(a.direction.as_deref(), Some("slower"));
        assert_eq!(a.same_conclusion, Some(true));
        // Kernel b was booted once: it borrows a's ν = 1 and is judged too.
        let b = &result.all[1];
        assert_eq!(b.comparison.ci_boot.as_ref().map(|c| c.dof), Some(1.0));
        assert_eq!(
            b.verdict.label,
            VerdictLabel::Signal,
            "{:?}",
            b.verdict.reasons
        );
        assert_eq!(result.drop_first.len(), 2);
    }

    #[test]
    fn the_same_rules_hold_no_change_and_a_drift_beyond_the_limit() {
        let control = [
            point(1, "a-a", "a", &around(100.0)),
            point(2, "a-b", "a", &around(103.0)),
        ];
        // No change: NO_MATERIAL_SIGNAL without a drift gate (the 3 % drift of the control
        // case is boot noise, carried by the interval) and under a loose one, UNSTABLE under a
        // recipe's own 1 % drift gate.
        let same = [
            point(1, "a-a", "a", &around(100.02)),
            point(2, "a-b", "a", &around(102.99)),
        ];
        let env = EnvironmentCheck::default();
        let loose = VerdictParams {
            max_drift_pct: Some(5.0),
            ..VerdictParams::default()
        };
        let r = compare_cases(&control, &same, &ctx(&loose, &env));
        assert_eq!(r.all[0].verdict.label, VerdictLabel::NoMaterialSignal);
        let r = compare_cases(&control, &same, &ctx(&VerdictParams::default(), &env));
        assert_eq!(r.all[0].verdict.label, VerdictLabel::NoMaterialSignal);
        let strict = VerdictParams {
            max_drift_pct: Some(1.0),
            ..VerdictParams::default()
        };
        let r = compare_cases(&control, &same, &ctx(&strict, &env));
        assert_eq!(r.all[0].verdict.label, VerdictLabel::Unstable);
        // A case with no values at a point of the other is paired where both have values.
        let r = compare_cases(&control[..1], &same, &ctx(&loose, &env));
        assert_eq!(r.all[0].points, ["a-a"]);
        assert_eq!(r.all[0].verdict.label, VerdictLabel::Unreplicated);
        let r = compare_cases(&[], &same, &ctx(&loose, &env));
        assert_eq!(r.not_compared, ["no done point has values of both cases"]);
    }
}
