//! aba's verdict for one workload and metric (STATISTICS.md 3.6): the sandwich logic of the
//! published evidence (gate, drift margin, bracket, drop-first robustness) plus stability
//! limits, with parameters preregistered in the recipe.
//!
//! Every comparison uses unrounded values and a limit is never relaxed after the run: a CV of
//! 15.006954 fails a 15% limit even though it prints as 15.01. The verdict only reads the
//! statistics it is given; it computes nothing from samples.

use std::fmt;

use serde::Serialize;

use crate::stats::{compare::Comparison, interval::RatioInterval, kernel::KernelSummary};

/// Which direction of the metric is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Better {
    /// Lower is better (latency, ns per operation).
    Lower,
    /// Higher is better (throughput).
    Higher,
}

/// Preregistered verdict parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerdictParams {
    /// G: minimum |change| in percent for a material change.
    pub gate_pct: f64,
    /// M: |change| must be at least M times the largest |drift| of a multi-boot kernel.
    pub drift_margin: f64,
    /// D: a multi-boot kernel whose |drift| exceeds this (percent) makes the run unstable.
    pub max_drift_pct: f64,
    /// C: a point CV above this (percent) makes the run unstable.
    pub max_cv_pct: f64,
    /// SIGNAL additionally requires the boot-level CI to exclude 0. Off by default because
    /// with A/B/A (ν = 1) that almost never happens; `confidence` reports it instead.
    pub require_boot_ci: bool,
}

impl Default for VerdictParams {
    /// G = 5%, M = 2, D = 1%, C = 2%, boot-level CI not required (STATISTICS.md 3.6).
    fn default() -> Self {
        Self {
            gate_pct: 5.0,
            drift_margin: 2.0,
            max_drift_pct: 1.0,
            max_cv_pct: 2.0,
            require_boot_ci: false,
        }
    }
}

/// The verdict label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum VerdictLabel {
    /// Material, above the drift margin, beats every control boot and survives drop-first.
    Signal,
    /// Not a signal, but above the drift margin and resolved by the CI: measurable, under the gate.
    BelowGate,
    /// Neither of the above.
    NoMaterialSignal,
    /// A drift or CV limit tripped; the numbers are still reported.
    Unstable,
}

impl fmt::Display for VerdictLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Signal => "SIGNAL",
            Self::BelowGate => "BELOW_GATE",
            Self::NoMaterialSignal => "NO_MATERIAL_SIGNAL",
            Self::Unstable => "UNSTABLE",
        })
    }
}

/// Whether the change is an improvement, from its sign and the metric's `better`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// Slower / worse.
    Worse,
    /// Faster / better.
    Better,
}

/// What the best available interval says about the change.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Confidence {
    /// "boot-level CI excludes 0".
    BootCiExcludesZero,
    /// "boot-level CI includes 0 (ν = dof)".
    BootCiIncludesZero {
        /// Degrees of freedom of the boot-level interval.
        dof: f64,
    },
    /// "within-boot only": no kernel booted twice, boot-to-boot variation unmeasured.
    WithinOnly,
    /// No interval could be computed or it is unbounded.
    NotEstimable,
}

/// What the verdict looks at for one candidate against the baseline.
#[derive(Clone, Copy, Debug)]
pub struct VerdictInput<'a> {
    /// The comparison over all measured samples.
    pub all: &'a Comparison,
    /// The same comparison with x₁ dropped at every point; `None` when unavailable, which
    /// fails `robust` (a limit is never relaxed).
    pub drop_first: Option<&'a Comparison>,
    /// Summaries of the kernels in this comparison (baseline, candidate, and any other kernel
    /// booted in the sequence); their drifts feed `unstable` and `margin`.
    pub kernels: &'a [KernelSummary],
    /// Largest point CV over the comparison's points; `None` when unknown (not checked).
    pub max_cv_pct: Option<f64>,
    /// Which direction is an improvement.
    pub better: Better,
}

/// The verdict and every condition behind it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The label.
    pub label: VerdictLabel,
    /// Why: the limits that tripped (UNSTABLE) or the conditions that failed, in plain words.
    pub reasons: Vec<String>,
    /// Worse or better; `None` when the change is exactly 0.
    pub direction: Option<Direction>,
    /// What the best available interval says.
    pub confidence: Confidence,
    /// Some kernel was booted at least twice, so the drift margin could be checked; when
    /// false, max |drift| was taken as 0 and `margin` is reported as "unchecked".
    pub margin_checked: bool,
    /// |change| ≥ gate.
    pub material: bool,
    /// |change| ≥ drift_margin · max |drift|.
    pub margin: bool,
    /// Every baseline boot is beaten: same sign as the change and |b_j| ≥ gate.
    pub bracket: bool,
    /// The drop-first change has the same sign and |change| ≥ gate.
    pub robust: bool,
    /// |change| exceeds the half-width of the best available CI (boot-level if any).
    pub resolved: bool,
}

/// Decides the verdict for `input` under `params` (STATISTICS.md 3.6).
///
/// "Best available CI" for `resolved` is the boot-level interval whenever one exists, even
/// when it is unbounded (then the change is not resolved); the within-only interval is used
/// only when no kernel was booted twice. "Half-width" is half the (asymmetric) Fieller width.
#[must_use]
pub fn verdict(params: &VerdictParams, input: &VerdictInput<'_>) -> Verdict {
    let checks = Checks::new(params, input);
    let limits = tripped_limits(params, input);
    let signal =
        checks.material && checks.margin && checks.bracket && checks.robust && checks.ci_ok;
    let size = input.all.change_pct.abs();
    let label = if !limits.is_empty() {
        VerdictLabel::Unstable
    } else if signal {
        VerdictLabel::Signal
    } else if size > checks.needed && checks.resolved {
        VerdictLabel::BelowGate
    } else {
        VerdictLabel::NoMaterialSignal
    };
    let reasons = if label == VerdictLabel::Unstable {
        limits
    } else {
        failed_checks(params, input, &checks)
    };
    Verdict {
        label,
        reasons,
        direction: direction(input.all.change_pct, input.better),
        confidence: checks.confidence,
        margin_checked: checks.margin_checked,
        material: checks.material,
        margin: checks.margin,
        bracket: checks.bracket,
        robust: checks.robust,
        resolved: checks.resolved,
    }
}

/// The conditions of STATISTICS.md 3.6, evaluated once.
struct Checks {
    /// Largest |drift| of a kernel booted ≥ 2 times (0 when none was).
    max_drift: f64,
    /// drift_margin · max_drift.
    needed: f64,
    margin_checked: bool,
    material: bool,
    margin: bool,
    bracket: bool,
    robust: bool,
    resolved: bool,
    /// Half-width of the best available CI; `None` when there is none or it is unbounded.
    half_width: Option<f64>,
    has_ci: bool,
    confidence: Confidence,
    /// `require_boot_ci` is off or satisfied.
    ci_ok: bool,
}

impl Checks {
    fn new(params: &VerdictParams, input: &VerdictInput<'_>) -> Self {
        let change = input.all.change_pct;
        let size = change.abs();
        let drifts: Vec<f64> = input.kernels.iter().filter_map(|k| k.drift_pct).collect();
        let max_drift = drifts.iter().map(|d| d.abs()).fold(0.0, f64::max);
        let needed = params.drift_margin * max_drift;
        let beats = |pct: f64| same_sign(pct, change) && pct.abs() >= params.gate_pct;
        let best_ci = input.all.ci_boot.as_ref().or(input.all.ci_within.as_ref());
        let half_width = best_ci.and_then(RatioInterval::half_width);
        let confidence = confidence(input.all);
        Self {
            max_drift,
            needed,
            margin_checked: !drifts.is_empty(),
            material: size >= params.gate_pct,
            margin: size >= needed,
            // No bracket at all is not a pass: a limit is never satisfied vacuously.
            bracket: !input.all.brackets.is_empty()
                && input.all.brackets.iter().all(|b| beats(b.pct)),
            robust: input.drop_first.is_some_and(|df| beats(df.change_pct)),
            resolved: half_width.is_some_and(|hw| size > hw),
            half_width,
            has_ci: best_ci.is_some(),
            confidence,
            ci_ok: !params.require_boot_ci || confidence == Confidence::BootCiExcludesZero,
        }
    }
}

/// The stability limits that tripped, each naming the limit; empty when stable.
fn tripped_limits(params: &VerdictParams, input: &VerdictInput<'_>) -> Vec<String> {
    let mut limits = Vec::new();
    for kernel in input.kernels {
        if let Some(drift) = kernel.drift_pct.filter(|d| d.abs() > params.max_drift_pct) {
            limits.push(format!(
                "drift of {} {} exceeds max_drift_pct {}",
                kernel.kernel,
                signed_pct(drift, params.max_drift_pct),
                limit(params.max_drift_pct, drift.abs()),
            ));
        }
    }
    if let Some(cv) = input.max_cv_pct.filter(|cv| *cv > params.max_cv_pct) {
        limits.push(format!(
            "max point CV {}% exceeds max_cv_pct {}",
            limit(cv, params.max_cv_pct),
            limit(params.max_cv_pct, cv),
        ));
    }
    limits
}

/// Plain-words list of the conditions that failed (and of an unchecked margin).
fn failed_checks(params: &VerdictParams, input: &VerdictInput<'_>, checks: &Checks) -> Vec<String> {
    let change = input.all.change_pct;
    let gate = params.gate_pct;
    let mut reasons = Vec::new();
    if !checks.margin_checked {
        reasons.push("margin unchecked: no kernel was booted twice".to_owned());
    }
    if !checks.material {
        reasons.push(format!(
            "change {} is below gate_pct {}",
            signed_pct(change, gate),
            limit(gate, change.abs())
        ));
    }
    if !checks.margin {
        reasons.push(format!(
            "change {} is less than drift_margin {} x max drift {}",
            signed_pct(change, checks.needed),
            limit(params.drift_margin, 0.0),
            unsigned_pct(checks.max_drift)
        ));
    }
    for b in &input.all.brackets {
        if !(same_sign(b.pct, change) && b.pct.abs() >= gate) {
            reasons.push(format!(
                "change against {} is {}, not beyond gate_pct {} in the same direction",
                b.baseline_point,
                signed_pct(b.pct, gate),
                limit(gate, b.pct.abs())
            ));
        }
    }
    match input.drop_first {
        None => reasons.push("drop-first comparison unavailable".to_owned()),
        Some(df) if !checks.robust => reasons.push(format!(
            "drop-first change {} is not beyond gate_pct {} in the same direction",
            signed_pct(df.change_pct, gate),
            limit(gate, df.change_pct.abs())
        )),
        Some(_) => {}
    }
    match (checks.has_ci, checks.half_width) {
        (false, _) => reasons.push("no confidence interval available".to_owned()),
        (true, None) => reasons.push("confidence interval not estimable".to_owned()),
        (true, Some(hw)) if !checks.resolved => reasons.push(format!(
            "change {} is within the CI half-width {}",
            signed_pct(change, hw),
            unsigned_pct(hw)
        )),
        (true, Some(_)) => {}
    }
    if !checks.ci_ok {
        reasons.push("require_boot_ci: the boot-level CI does not exclude 0".to_owned());
    }
    reasons
}

/// Both nonzero with the same sign.
fn same_sign(x: f64, reference: f64) -> bool {
    (x > 0.0 && reference > 0.0) || (x < 0.0 && reference < 0.0)
}

fn direction(change: f64, better: Better) -> Option<Direction> {
    let up = if change > 0.0 {
        true
    } else if change < 0.0 {
        false
    } else {
        return None;
    };
    Some(match (up, better) {
        (true, Better::Lower) | (false, Better::Higher) => Direction::Worse,
        (true, Better::Higher) | (false, Better::Lower) => Direction::Better,
    })
}

fn confidence(all: &Comparison) -> Confidence {
    match (&all.ci_boot, &all.ci_within) {
        (Some(ci), _) => match ci.excludes_zero() {
            Some(true) => Confidence::BootCiExcludesZero,
            Some(false) => Confidence::BootCiIncludesZero { dof: ci.dof },
            None => Confidence::NotEstimable,
        },
        (None, Some(ci)) if ci.bounds.is_some() => Confidence::WithinOnly,
        (None, _) => Confidence::NotEstimable,
    }
}

/// Decimals (2..=6) needed so that `value` and `other` do not print the same: a reason must
/// never read "2.00 exceeds 2.00".
fn decimals(value: f64, other: f64) -> usize {
    (2..=6)
        .find(|&d| format!("{value:.d$}") != format!("{other:.d$}"))
        .unwrap_or(6)
}

fn limit(value: f64, other: f64) -> String {
    let d = decimals(value, other);
    format!("{value:.d$}")
}

fn signed_pct(value: f64, other: f64) -> String {
    let d = decimals(value.abs(), other.abs());
    format!("{value:+.d$}%")
}

fn unsigned_pct(value: f64) -> String {
    format!("{value:.2}%")
}

#[cfg(test)]
mod tests {
    use super::{
        Better, Confidence, Direction, Verdict, VerdictInput, VerdictLabel, VerdictParams, verdict,
    };
    use crate::stats::{
        compare::compare,
        interval::IntervalKind,
        kernel::{BootPoint, KernelSummary, kernel_summary, kernels_in_order},
        summary::summarize,
        testdata::{EXACT_CAC1, PEDRO_V3, points},
    };

    fn kernels(points: &[BootPoint]) -> Vec<KernelSummary> {
        kernels_in_order(points)
            .iter()
            .filter_map(|k| kernel_summary(points, k))
            .collect()
    }

    fn point(label: &str, kernel: &str, mean: f64, sd: Option<f64>, n: usize) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n,
            sd,
        }
    }

    /// Runs the verdict for raw golden rows, with max CV over all points.
    fn raw_case(rows: &[(&str, &str, &str)], params: &VerdictParams) -> Verdict {
        let all = points(rows, false);
        let df = points(rows, true);
        let max_cv = rows
            .iter()
            .filter_map(|(_, _, values)| {
                let values: Vec<f64> = values.split(' ').filter_map(|v| v.parse().ok()).collect();
                summarize(&values)?.cv_pct
            })
            .fold(None, |acc: Option<f64>, cv| {
                Some(acc.map_or(cv, |m| m.max(cv)))
            });
        let all_cmp = compare(&all, "child", "parent").expect("present");
        let df_cmp = compare(&df, "child", "parent").expect("present");
        let input = VerdictInput {
            all: &all_cmp,
            drop_first: Some(&df_cmp),
            kernels: &kernels(&all),
            max_cv_pct: max_cv,
            better: Better::Lower,
        };
        verdict(params, &input)
    }

    #[test]
    fn exact_cac1_is_a_signal() {
        let v = raw_case(&EXACT_CAC1, &VerdictParams::default());
        assert_eq!(v.label, VerdictLabel::Signal, "{:?}", v.reasons);
        assert_eq!(v.label.to_string(), "SIGNAL");
        assert_eq!(v.direction, Some(Direction::Worse));
        assert_eq!(v.confidence, Confidence::BootCiExcludesZero);
        assert!(v.margin_checked && v.material && v.margin && v.bracket && v.robust);
        assert!(v.resolved && v.reasons.is_empty());
    }

    #[test]
    fn pedro_v3_is_unstable_by_default() {
        let v = raw_case(&PEDRO_V3, &VerdictParams::default());
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert_eq!(
            v.reasons,
            vec!["drift of parent -1.93% exceeds max_drift_pct 1.00"]
        );
    }

    #[test]
    fn pedro_v3_is_a_signal_with_a_2_percent_drift_limit() {
        let params = VerdictParams {
            max_drift_pct: 2.0,
            ..VerdictParams::default()
        };
        let v = raw_case(&PEDRO_V3, &params);
        // 6.20 ≥ 2 × 1.93, brackets +5.18 and +7.25 both ≥ 5.
        assert_eq!(v.label, VerdictLabel::Signal, "{:?}", v.reasons);
        assert_eq!(v.confidence, Confidence::BootCiIncludesZero { dof: 1.0 });
        assert!(!v.resolved);
        let strict = VerdictParams {
            require_boot_ci: true,
            ..params
        };
        let v = raw_case(&PEDRO_V3, &strict);
        assert_eq!(v.label, VerdictLabel::NoMaterialSignal);
        assert!(v.reasons.iter().any(|r| r.starts_with("require_boot_ci")));
    }

    #[test]
    fn rt_mail_rr_control_is_no_material_signal() {
        // −0.83% against a drift of −0.83%: neither material nor above the margin.
        let points = vec![
            point("original-a", "original", 253.400, None, 0),
            point("patched", "patched", 250.268, None, 0),
            point("original-b", "original", 251.304, None, 0),
        ];
        let all = compare(&points, "patched", "original").expect("present");
        let input = VerdictInput {
            all: &all,
            drop_first: None,
            kernels: &kernels(&points),
            max_cv_pct: Some(0.89),
            better: Better::Lower,
        };
        let v = verdict(&VerdictParams::default(), &input);
        assert_eq!(v.label, VerdictLabel::NoMaterialSignal);
        assert_eq!(v.direction, Some(Direction::Better));
        assert!(!v.material && !v.margin && !v.resolved);
    }

    /// sched_setparam custom slice, +0.40% against 0.15% drift: BELOW_GATE only if resolved.
    fn setparam(points: &[BootPoint]) -> Verdict {
        let all = compare(points, "revision", "original").expect("present");
        let input = VerdictInput {
            all: &all,
            drop_first: None,
            kernels: &kernels(points),
            max_cv_pct: None,
            better: Better::Lower,
        };
        verdict(&VerdictParams::default(), &input)
    }

    #[test]
    fn setparam_custom_as_published_is_not_resolved() {
        // The mail's A/B/A: ν = 1, the boot-level half-width (~1.6%) swamps +0.40%.
        let points = vec![
            point("original-a", "original", 162.69, Some(0.3), 10),
            point("revision", "revision", 163.22, Some(0.3), 10),
            point("original-b", "original", 162.45, Some(0.3), 10),
        ];
        let v = setparam(&points);
        assert!(v.margin && !v.material && !v.resolved);
        assert_eq!(v.label, VerdictLabel::NoMaterialSignal);
    }

    #[test]
    fn setparam_custom_resolved_is_below_gate() {
        // Synthetic A/B/A/B/A with the same change and drift: ν = 3 resolves +0.40%.
        let points = vec![
            point("original-a", "original", 162.69, Some(0.3), 10),
            point("revision-a", "revision", 163.22, Some(0.3), 10),
            point("original-b", "original", 162.57, Some(0.3), 10),
            point("revision-b", "revision", 163.22, Some(0.3), 10),
            point("original-c", "original", 162.45, Some(0.3), 10),
        ];
        let v = setparam(&points);
        assert_eq!(v.label, VerdictLabel::BelowGate, "{:?}", v.reasons);
        assert_eq!(v.label.to_string(), "BELOW_GATE");
        assert!(v.margin_checked && v.resolved && !v.material);
        assert_eq!(v.confidence, Confidence::BootCiExcludesZero);
    }

    #[test]
    fn plain_ab_uses_within_only_and_leaves_margin_unchecked() {
        // Synthetic sd/n: the within-only interval resolves +0.40% but says nothing about
        // boot-to-boot variation.
        let points = vec![
            point("original", "original", 162.57, Some(0.3), 10),
            point("revision", "revision", 163.22, Some(0.3), 10),
        ];
        let all = compare(&points, "revision", "original").expect("present");
        assert_eq!(all.ci_boot, None);
        assert_eq!(
            all.ci_within.as_ref().map(|ci| ci.kind),
            Some(IntervalKind::WithinOnly)
        );
        let v = setparam(&points);
        assert_eq!(v.label, VerdictLabel::BelowGate);
        assert_eq!(v.confidence, Confidence::WithinOnly);
        assert!(!v.margin_checked && v.margin);
        assert!(v.reasons.iter().any(|r| r.starts_with("margin unchecked")));
    }

    #[test]
    fn cv_just_above_the_limit_fails() {
        let params = VerdictParams {
            max_cv_pct: 15.0,
            max_drift_pct: 5.0,
            ..VerdictParams::default()
        };
        let points = vec![
            point("parent_a", "parent", 0.221750648, None, 0),
            point("child", "child", 0.264366322, None, 0),
            point("parent_b", "parent", 0.221213550, None, 0),
        ];
        let all = compare(&points, "child", "parent").expect("present");
        let input = VerdictInput {
            all: &all,
            drop_first: None,
            kernels: &kernels(&points),
            max_cv_pct: Some(15.006954),
            better: Better::Lower,
        };
        let v = verdict(&params, &input);
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert_eq!(
            v.reasons,
            vec!["max point CV 15.01% exceeds max_cv_pct 15.00"]
        );
    }
}
