//! How a recipe's results will be judged, as `aba check` shows it before anything runs: each
//! workload's metrics with their direction and the limits that apply to them, each check with
//! the kernels it must pass and must fail on, and each published result the campaign must
//! reproduce. A tester who reads only the commands cannot see that a check is meant to fail
//! on the unmodified kernel, or that a tick count is held to a looser CV than the timings;
//! this is that part of the recipe, read from the resolved recipe (parameters substituted).

use serde::Serialize;

use crate::recipe::{
    Recipe,
    ident::{KernelLabel, MetricName, WorkloadName},
    model::{BetterSpec, Role},
    resolved::{Expected, KernelComparison},
    scoped_limits::SeriesLimits,
};

/// The judging part of a recipe.
#[derive(Debug, Serialize)]
pub struct Judging<'a> {
    /// The kernel every other kernel is compared with.
    pub baseline: &'a KernelLabel,
    /// `[analysis]`'s gate, drift and CV limits: those of every series that sets none.
    pub limits: AnalysisLimits,
    /// `[analysis] drift_margin` (campaign-wide).
    pub drift_margin: f64,
    /// Every workload, in file order.
    pub workloads: Vec<WorkloadJudging<'a>>,
    /// The `[[expect]]` entries.
    pub expect: Vec<ExpectJudging<'a>>,
    /// The declared comparisons besides every candidate against the baseline
    /// (`[[analysis.comparison]]`).
    pub comparisons: &'a [KernelComparison],
}

/// `[analysis]`'s limits, percent.
#[derive(Debug, Serialize)]
pub struct AnalysisLimits {
    /// `gate_pct`.
    pub gate_pct: f64,
    /// `max_drift_pct`: the recipe's own preregistered drift gate, absent
    /// unless the recipe sets one (aba's stability rule does not need it).
    pub max_drift_pct: Option<f64>,
    /// `max_cv_pct`.
    pub max_cv_pct: f64,
}

/// One workload: its metrics, or, for a check, its pass/fail rule per kernel.
#[derive(Debug, Serialize)]
pub struct WorkloadJudging<'a> {
    /// The workload.
    pub name: &'a WorkloadName,
    /// Measured, control or check.
    pub role: Role,
    /// Reported with `AUX_` verdicts that never drive the summary.
    pub aux: bool,
    /// Its metrics (none for a check).
    pub metrics: Vec<MetricJudging<'a>>,
    /// The kernels it runs on (`kernels`); empty: every kernel.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub kernels: &'a [KernelLabel],
    /// The check's kernels (only for `role = "check"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckJudging<'a>>,
}

/// One metric: its unit, direction and the limits of its series.
#[derive(Debug, Serialize)]
pub struct MetricJudging<'a> {
    /// The metric.
    pub name: &'a MetricName,
    /// Its unit.
    pub unit: &'a str,
    /// Which direction is an improvement.
    pub better: BetterSpec,
    /// Gate, drift and CV limits, each with the table that set it.
    pub limits: SeriesLimits,
}

/// A correctness check: where it must pass, where it must fail, and what it looks for.
#[derive(Debug, Serialize)]
pub struct CheckJudging<'a> {
    /// The kernels it must pass on.
    pub must_pass_on: Vec<&'a KernelLabel>,
    /// The kernels it must fail on (`expect_fail`).
    pub must_fail_on: &'a [KernelLabel],
    /// The exit status a run must end with, on every kernel.
    pub exit: i32,
    /// Regexes that must match (stdout or stderr).
    pub must_match: Vec<&'a str>,
    /// Regexes that may not match.
    pub must_not_match: Vec<&'a str>,
}

/// One `[[expect]]`: the published change the candidate must reproduce.
#[derive(Debug, Serialize)]
pub struct ExpectJudging<'a> {
    /// Workload.
    pub workload: &'a WorkloadName,
    /// Case (empty without a matrix).
    pub case: &'a str,
    /// Metric.
    pub metric: &'a MetricName,
    /// Candidate kernel, or the kernel whose mean is expected.
    pub kernel: &'a KernelLabel,
    /// The kernel a change is against (`change_pct` expectations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<&'a KernelLabel>,
    /// Published change against the baseline, percent (`change_pct` expectations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_pct: Option<f64>,
    /// Published absolute value in the metric's unit (`mean` expectations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// The point whose mean is expected (else the kernel's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<&'a str>,
    /// The control case (`workload[case]`) a case's change is against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    /// A recovery's name, whose step ending at `kernel` has an expected share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<&'a str>,
    /// The published share of the gap, percent (`share_pct` expectations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_pct: Option<f64>,
    /// The only target whose campaign is held to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<&'a str>,
    /// The metric's unit, which a `mean` and its tolerance are in.
    pub unit: &'a str,
    /// How far the reproduction may be: percentage points for a change, the unit for a mean.
    pub tolerance: f64,
}

impl<'a> Judging<'a> {
    /// The judging part of `recipe`.
    #[must_use]
    pub fn of(recipe: &'a Recipe) -> Judging<'a> {
        let analysis = &recipe.analysis;
        let workloads = recipe
            .workloads
            .iter()
            .map(|w| WorkloadJudging {
                name: &w.name,
                role: w.role,
                aux: w.aux,
                kernels: &w.kernels,
                metrics: w
                    .metrics
                    .iter()
                    .map(|m| MetricJudging {
                        name: &m.name,
                        unit: &m.unit,
                        better: m.better,
                        limits: SeriesLimits::of(analysis, w, m),
                    })
                    .collect(),
                check: w.is_check().then(|| CheckJudging {
                    must_pass_on: recipe
                        .kernels
                        .keys()
                        .filter(|k| !w.check.expect_fail.contains(k) && w.runs_on(k.as_str()))
                        .collect(),
                    must_fail_on: &w.check.expect_fail,
                    exit: w.check.exit,
                    must_match: w
                        .check
                        .must_match
                        .iter()
                        .map(regex::Regex::as_str)
                        .collect(),
                    must_not_match: w
                        .check
                        .must_not_match
                        .iter()
                        .map(regex::Regex::as_str)
                        .collect(),
                }),
            })
            .collect();
        let expect = recipe
            .expect
            .iter()
            .map(|e| {
                let (change_pct, mean, point) = match &e.value {
                    Expected::ChangePct(c) | Expected::CaseChangePct { value: c, .. } => {
                        (Some(*c), None, None)
                    }
                    Expected::Mean { value, point } => (None, Some(*value), point.as_deref()),
                    Expected::RecoveryShare { .. } => (None, None, None),
                };
                let (control, recovery, share_pct) = match &e.value {
                    Expected::CaseChangePct {
                        control_workload,
                        control,
                        ..
                    } => (Some(format!("{control_workload}[{control}]")), None, None),
                    Expected::RecoveryShare { value, recovery } => {
                        (None, Some(recovery.as_str()), Some(*value))
                    }
                    Expected::ChangePct(_) | Expected::Mean { .. } => (None, None, None),
                };
                ExpectJudging {
                    workload: &e.workload,
                    case: &e.case,
                    metric: &e.metric,
                    kernel: &e.kernel,
                    baseline: matches!(e.value, Expected::ChangePct(_)).then_some(&e.baseline),
                    control,
                    recovery,
                    share_pct,
                    target: e.target.as_deref(),
                    change_pct,
                    mean,
                    point,
                    unit: recipe
                        .workloads
                        .iter()
                        .find(|w| w.name == e.workload)
                        .and_then(|w| w.metrics.iter().find(|m| m.name == e.metric))
                        .map_or("", |m| m.unit.as_str()),
                    tolerance: e.tolerance,
                }
            })
            .collect();
        Judging {
            baseline: &analysis.baseline,
            limits: AnalysisLimits {
                gate_pct: analysis.gate_pct,
                max_drift_pct: analysis.max_drift_pct,
                max_cv_pct: analysis.max_cv_pct,
            },
            drift_margin: analysis.drift_margin,
            workloads,
            expect,
            comparisons: &analysis.comparisons,
        }
    }
}
