//! aba's verdict for one workload and metric: the sandwich logic of the published evidence
//! (gate, drift margin, bracket, drop-first robustness) and stability limits, with parameters
//! preregistered in the recipe, plus the boot-level interval that makes the verdict's false
//! rates bounded (issue 9; the rules and the simulation behind each one are in
//! docs/statistics.md).
//!
//! Every comparison uses unrounded values and a limit is never relaxed after the run: a CV of
//! 15.006954 fails a 15% limit even though it prints as 15.01. The verdict only reads the
//! statistics it is given; it computes nothing from samples.

use std::fmt;

use serde::Serialize;

use crate::stats::{
    compare::Comparison,
    interval::RatioInterval,
    kernel::{BootEffect, KernelSummary},
    trend::Trend,
};

/// Which direction of the metric is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Better {
    /// Lower is better (latency, ns per operation).
    Lower,
    /// Higher is better (throughput).
    Higher,
}

/// Preregistered verdict parameters.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictParams {
    /// G: minimum |change| in percent for a material change.
    pub gate_pct: f64,
    /// M: |change| must be at least M times the largest spread of a multi-boot kernel.
    pub drift_margin: f64,
    /// D: the recipe's own preregistered drift gate (`max_drift_pct`), `None` when the
    /// recipe sets none. A compared kernel whose spread exceeds it, by more than its samples
    /// explain, makes the run unstable. Not aba's statistical judgement: a gate on the
    /// compared kernels' spread keeps the campaigns whose boots happened to agree
    /// (docs/statistics.md §5.2), so aba applies one only where the recipe asks for it.
    pub max_drift_pct: Option<f64>,
    /// C: a point CV above this (percent) makes the run unstable.
    pub max_cv_pct: f64,
}

impl Default for VerdictParams {
    /// G = 5%, M = 2, no drift gate, C = 2% (docs/statistics.md §5).
    fn default() -> Self {
        Self {
            gate_pct: 5.0,
            drift_margin: 2.0,
            max_drift_pct: None,
            max_cv_pct: 2.0,
        }
    }
}

/// The verdict label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum VerdictLabel {
    /// Material, above the drift margin, beats every control boot, survives drop-first, and
    /// its boot-level 95% interval excludes 0.
    Signal,
    /// Not material, above the drift margin, and its boot-level 95% interval lies between 0
    /// and the gate: measurable, shown to be under the gate.
    BelowGate,
    /// Not a SIGNAL, and the boot-level 95% interval lies inside ±gate: a change as large as
    /// the gate is ruled out (an equivalence claim).
    NoMaterialSignal,
    /// Neither shown nor ruled out: not a SIGNAL or BELOW_GATE, and the boot-level interval
    /// reaches past the gate (or is not estimable). More boots would decide it.
    Inconclusive,
    /// The measurement itself is broken: a point's CV over its limit, an environment
    /// difference, a trend over the campaign, a campaign noisier than its noise profile, or
    /// the recipe's own drift gate exceeded; the numbers are still reported.
    Unstable,
    /// No kernel was booted twice (plain A/B): boot-to-boot variation is unmeasured, so the
    /// change cannot be told from it. Never a SIGNAL or BELOW_GATE.
    Unreplicated,
}

impl fmt::Display for VerdictLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Signal => "SIGNAL",
            Self::BelowGate => "BELOW_GATE",
            Self::NoMaterialSignal => "NO_MATERIAL_SIGNAL",
            Self::Inconclusive => "INCONCLUSIVE",
            Self::Unstable => "UNSTABLE",
            Self::Unreplicated => "UNREPLICATED",
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

/// What the intervals say about the change: the confidence statement printed with every
/// verdict.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Confidence {
    /// "boot-level 95% CI [lo, hi] excludes 0".
    BootCiExcludesZero {
        /// Degrees of freedom of the boot-level interval.
        dof: f64,
    },
    /// "boot-level 95% CI [lo, hi] includes 0 (ν = dof)".
    BootCiIncludesZero {
        /// Degrees of freedom of the boot-level interval.
        dof: f64,
    },
    /// "boot-level 95% CI not estimable (ν = dof)": the baseline's own boots differ too much
    /// for a ratio (Fieller's q ≤ 0).
    BootCiNotEstimable {
        /// Degrees of freedom of the boot-level interval.
        dof: f64,
    },
    /// "within-boot only": no kernel booted twice, boot-to-boot variation unmeasured.
    WithinOnly,
    /// No interval at all (no kernel booted twice and no SD).
    NotEstimable,
}

impl Confidence {
    /// ν of the boot-level interval; `None` without one.
    #[must_use]
    pub fn dof(self) -> Option<f64> {
        match self {
            Self::BootCiExcludesZero { dof }
            | Self::BootCiIncludesZero { dof }
            | Self::BootCiNotEstimable { dof } => Some(dof),
            Self::WithinOnly | Self::NotEstimable => None,
        }
    }
}

/// How a kernel's spread is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SpreadMeasure {
    /// Two boots: drift_pct, last against first (signed, relative to the first boot).
    Drift,
    /// Three boots or more: the root-mean-square difference between two of its boots,
    /// 100·√(2·S_B²)/mean, over every pair, so the middle boots count (100 / 104 / 100.1
    /// differ by 3.18%, not by the 0.10% drift of the last against the first). For two boots
    /// it would be |A2 − A1|/midpoint; unlike the range it does not grow with the number of
    /// boots.
    Rms,
}

/// How far the boots of one kernel booted twice or more lie apart: what the UNSTABLE and
/// margin rules read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Kernel label.
    pub kernel: String,
    /// Its number of boots.
    pub boots: usize,
    /// Drift or range.
    pub measure: SpreadMeasure,
    /// The spread in percent (signed for a drift).
    pub pct: f64,
    /// The boot-effect test over all its boots (Welch for 2, ANOVA for 3 or more); `None`
    /// when an SD is unknown.
    pub effect: Option<BootEffect>,
}

impl Spread {
    /// The boots differ by more than their samples explain (p < 0.05), or that cannot be
    /// tested (no SD): then the spread alone decides.
    #[must_use]
    pub fn beyond_noise(&self) -> bool {
        self.effect.as_ref().is_none_or(|e| e.dominates)
    }
}

/// A stability limit that tripped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Limit {
    /// A compared kernel's spread exceeds the recipe's own drift gate (`max_drift_pct`),
    /// beyond what within-boot noise explains.
    Spread(Spread),
    /// The boot means follow a linear trend over the campaign (F test, ν ≥ 3).
    Trend(Trend),
    /// The campaign's boots are noisier than the target's noise profile says (the
    /// homogeneity test failed): the machine is not the one that was calibrated.
    NoisierThanProfile {
        /// F of the homogeneity test.
        f: f64,
        /// Its p-value.
        p_value: f64,
    },
    /// The largest point CV exceeds `max_cv_pct`.
    Cv {
        /// The CV in percent.
        pct: f64,
    },
    /// The environment fingerprint differs between boots of a compared kernel, or between
    /// the two kernels beyond what the recipe's per-kernel parameters set (issue 10 §5).
    Environment {
        /// The difference in words (`microcode revision differs between the boots of a: …`).
        text: String,
    },
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
    /// booted in the sequence); their spreads feed `unstable` and `margin`.
    pub kernels: &'a [KernelSummary],
    /// Largest point CV over the comparison's points; `None` when unknown (not checked).
    pub max_cv_pct: Option<f64>,
    /// What the largest CV was measured from; `None` when unknown, and then a CV over the
    /// limit trips it as it stands.
    pub cv_basis: Option<CvBasis>,
    /// Which direction is an improvement.
    pub better: Better,
    /// Differences of the environment fingerprint among the compared kernels' points, in
    /// words; each makes the comparison UNSTABLE.
    pub environment: &'a [String],
    /// The trend test over the series' points (`None` below ν = 3).
    pub trend: Option<&'a Trend>,
}

/// The level of the CV test over a whole comparison: a point's CV over `max_cv_pct` makes
/// the comparison UNSTABLE when its samples show the true CV above the limit at this level,
/// Bonferroni-split over the compared points. Without the test a CV limit of twice the true
/// CV trips in about 9 % of A/B/A/B/A campaigns of 3 samples a point by sampling alone
/// (P(χ²₂ > 8) = 1.8 % a point): a broken measurement is what the samples show, not what
/// three of them happen to say (docs/statistics.md §5).
pub const CV_ALPHA: f64 = 0.02;

/// What the largest point CV of a comparison was measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CvBasis {
    /// Samples of the point with the largest CV.
    pub samples: usize,
    /// The compared points that have a CV (the Bonferroni divisor).
    pub points: usize,
}

impl CvBasis {
    /// The p-value of "the true CV is at most `limit`" for an observed `cv` (both percent):
    /// (n − 1)·(cv/limit)² against χ²(n − 1); `None` below 2 samples.
    #[must_use]
    pub fn p_value(self, cv: f64, limit: f64) -> Option<f64> {
        use statrs::distribution::{ChiSquared, ContinuousCDF};
        let dof = self.samples.checked_sub(1).filter(|d| *d >= 1)? as f64;
        let stat = dof * (cv / limit).powi(2);
        ChiSquared::new(dof).ok().map(|chi| chi.sf(stat))
    }

    /// The level one point is tested at.
    #[must_use]
    pub fn level(self) -> f64 {
        CV_ALPHA / self.points.max(1) as f64
    }
}

/// The verdict and every condition behind it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The label.
    pub label: VerdictLabel,
    /// Why: the limits that tripped (UNSTABLE) or the conditions that failed, in plain words.
    pub reasons: Vec<String>,
    /// Remarks that did not decide the label (a spread above the limit that within-boot
    /// noise explains).
    pub notes: Vec<String>,
    /// Worse or better; `None` when the change is exactly 0.
    pub direction: Option<Direction>,
    /// The confidence statement.
    pub confidence: Confidence,
    /// The limits that tripped; empty unless UNSTABLE.
    pub tripped: Vec<Limit>,
    /// Every kernel booted twice or more, with its spread.
    pub spreads: Vec<Spread>,
    /// Some kernel was booted at least twice, so the drift margin could be checked.
    pub margin_checked: bool,
    /// |change| ≥ gate.
    pub material: bool,
    /// |change| ≥ drift_margin · max |spread|.
    pub margin: bool,
    /// Every baseline boot is beaten: same sign as the change and |b_j| ≥ gate.
    pub bracket: bool,
    /// The drop-first change has the same sign and |change| ≥ gate.
    pub robust: bool,
    /// The boot-level 95% interval is bounded and excludes 0.
    pub boot_ci_excludes_zero: bool,
    /// The within-only 95% interval excludes 0 (within-boot noise alone does not explain the
    /// change); `None` when there is none (no SDs).
    pub within_ci_excludes_zero: Option<bool>,
    /// The boot-level 95% interval lies strictly between 0 and ±gate.
    pub under_gate: bool,
    /// The boot-level 95% interval lies strictly inside (−gate, +gate).
    pub within_gate: bool,
}

impl Verdict {
    /// Why a NO_MATERIAL_SIGNAL is not more when its boot-level interval excludes 0, in a few
    /// words for a headline; `None` for other labels or when the interval includes 0 (which
    /// the confidence statement already says).
    #[must_use]
    pub fn short_why(&self) -> Option<String> {
        if self.label != VerdictLabel::NoMaterialSignal {
            return None;
        }
        if !self.boot_ci_excludes_zero {
            return None;
        }
        if self.within_ci_excludes_zero == Some(false) {
            return Some("within-boot noise alone explains it".to_owned());
        }
        if !self.material {
            return Some(if self.under_gate {
                "measurable, but within the drift margin".to_owned()
            } else {
                "measurable, not shown to be under the gate".to_owned()
            });
        }
        let mut failed = Vec::new();
        if !self.margin {
            failed.push("within the drift margin");
        }
        if !self.bracket {
            failed.push("does not beat every baseline boot");
        }
        if !self.robust {
            failed.push("not robust to dropping the first sample");
        }
        Some(format!("material, but {}", failed.join(", ")))
    }
}

/// Decides the verdict for `input` under `params`.
///
/// ```text
/// unstable   := a point CV > C, an environment difference, a linear trend of the boot
///               means (F test, ν ≥ 3, p < 0.05), a campaign noisier than its noise profile,
///               or — only when the recipe sets one — a compared kernel's spread over its own
///               drift gate D beyond within-boot noise
/// replicated := a boot-level interval exists (some kernel booted twice: ν ≥ 1)
/// evidence   := boot-level CI excludes 0 ∧ within-only CI excludes 0 (when it exists)
/// SIGNAL     := material ∧ margin ∧ bracket ∧ robust ∧ evidence
/// BELOW_GATE := ¬material ∧ |change| > M·max|spread| ∧ evidence ∧ boot-level CI ⊂ (0, ±G)
/// NO_MATERIAL_SIGNAL := boot-level CI ⊂ (−G, +G)
/// verdict    := UNSTABLE | UNREPLICATED (¬replicated) | SIGNAL | BELOW_GATE
///               | NO_MATERIAL_SIGNAL | INCONCLUSIVE, the first that holds
/// ```
#[must_use]
pub fn verdict(params: &VerdictParams, input: &VerdictInput<'_>) -> Verdict {
    let checks = Checks::new(params, input);
    let (tripped, mut notes) = tripped_limits(params, input, &checks.spreads);
    if let Some(look) = &input.all.look {
        notes.push(format!(
            "look {} of {} of an extended campaign: the evidence is judged with {:.2}% intervals \
             (α = {:.4} of the 5% spent over the looks), not 95%",
            look.look.look,
            look.look.of,
            look.look.confidence_pct(),
            look.look.alpha
        ));
    }
    let size = input.all.change_pct.abs();
    let evidence = checks.boot_excludes && checks.within_excludes != Some(false);
    let signal = checks.material && checks.margin && checks.bracket && checks.robust && evidence;
    let label = if !tripped.is_empty() {
        VerdictLabel::Unstable
    } else if input.all.ci_boot.is_none() {
        VerdictLabel::Unreplicated
    } else if signal {
        VerdictLabel::Signal
    } else if !checks.material && size > checks.needed && evidence && checks.under_gate {
        VerdictLabel::BelowGate
    } else if checks.within_gate {
        VerdictLabel::NoMaterialSignal
    } else {
        VerdictLabel::Inconclusive
    };
    let reasons = match label {
        VerdictLabel::Unstable => tripped.iter().map(|l| limit_text(params, l)).collect(),
        VerdictLabel::Signal => Vec::new(),
        _ => failed_checks(params, input, &checks),
    };
    Verdict {
        label,
        reasons,
        notes,
        direction: direction(input.all.change_pct, input.better),
        confidence: confidence(input.all),
        tripped,
        margin_checked: !checks.spreads.is_empty(),
        spreads: checks.spreads,
        material: checks.material,
        margin: checks.margin,
        bracket: checks.bracket,
        robust: checks.robust,
        boot_ci_excludes_zero: checks.boot_excludes,
        within_ci_excludes_zero: checks.within_excludes,
        under_gate: checks.under_gate,
        within_gate: checks.within_gate,
    }
}

/// The conditions, evaluated once.
struct Checks {
    spreads: Vec<Spread>,
    /// Largest |spread| of a kernel booted ≥ 2 times (0 when none was).
    max_spread: f64,
    /// drift_margin · max_spread.
    needed: f64,
    material: bool,
    margin: bool,
    bracket: bool,
    robust: bool,
    boot_excludes: bool,
    within_excludes: Option<bool>,
    under_gate: bool,
    within_gate: bool,
}

impl Checks {
    fn new(params: &VerdictParams, input: &VerdictInput<'_>) -> Self {
        let change = input.all.change_pct;
        let size = change.abs();
        let spreads = spreads(input.kernels);
        let max_spread = spreads.iter().map(|s| s.pct.abs()).fold(0.0, f64::max);
        let needed = params.drift_margin * max_spread;
        let beats = |pct: f64| same_sign(pct, change) && pct.abs() >= params.gate_pct;
        let (boot_ci, within_ci, _) = evidence(input.all);
        let boot = boot_ci.and_then(|ci| ci.bounds);
        let excludes = |ci: &RatioInterval| ci.excludes_zero() == Some(true);
        let gate = params.gate_pct;
        Self {
            max_spread,
            needed,
            material: size >= gate,
            margin: size >= needed,
            // No bracket at all is not a pass: a limit is never satisfied vacuously.
            bracket: !input.all.brackets.is_empty()
                && input.all.brackets.iter().all(|b| beats(b.pct)),
            robust: input.drop_first.is_some_and(|df| beats(df.change_pct)),
            boot_excludes: boot_ci.is_some_and(excludes),
            within_excludes: within_ci.map(excludes),
            under_gate: boot
                .is_some_and(|(lo, hi)| (lo > 0.0 && hi < gate) || (hi < 0.0 && lo > -gate)),
            within_gate: boot.is_some_and(|(lo, hi)| lo > -gate && hi < gate),
            spreads,
        }
    }
}

/// The spread of every kernel booted twice or more, in kernel order.
fn spreads(kernels: &[KernelSummary]) -> Vec<Spread> {
    kernels.iter().filter_map(spread_of).collect()
}

/// The spread of one kernel; `None` when it was booted once (or its mean is 0).
#[must_use]
pub fn spread_of(k: &KernelSummary) -> Option<Spread> {
    let (measure, pct) = match k.boots.len() {
        0 | 1 => return None,
        2 => (SpreadMeasure::Drift, k.drift_pct?),
        _ => {
            let rms = (2.0 * k.between_var?).sqrt();
            (
                SpreadMeasure::Rms,
                (k.mean != 0.0).then(|| 100.0 * rms / k.mean.abs())?,
            )
        }
    };
    Some(Spread {
        kernel: k.kernel.clone(),
        boots: k.boots.len(),
        measure,
        pct,
        effect: k.boot_effect.clone(),
    })
}

/// The stability limits that tripped, and notes on what was measured but does not make the
/// comparison UNSTABLE (spreads, which widen the interval instead).
fn tripped_limits(
    params: &VerdictParams,
    input: &VerdictInput<'_>,
    spreads: &[Spread],
) -> (Vec<Limit>, Vec<String>) {
    let mut limits: Vec<Limit> = input
        .environment
        .iter()
        .map(|text| Limit::Environment { text: text.clone() })
        .collect();
    let mut notes = Vec::new();
    let pooling = input.all.pooling.as_ref();
    if let Some(test) = pooling.and_then(|p| p.homogeneity.as_ref().filter(|_| !p.pooled)) {
        limits.push(Limit::NoisierThanProfile {
            f: test.f,
            p_value: test.p_value,
        });
    }
    if let Some(trend) = input.trend.filter(|t| t.significant()) {
        limits.push(Limit::Trend(trend.clone()));
    }
    let calibrated = pooling.filter(|p| p.pooled);
    for spread in spreads {
        let compared = spread.kernel == input.all.candidate || spread.kernel == input.all.baseline;
        let over_gate = params
            .max_drift_pct
            .filter(|gate| compared && spread.pct.abs() > *gate);
        match over_gate {
            Some(gate) if calibrated.is_some() => {
                // The profile measured this machine's boot-to-boot noise over many boots: a
                // spread it explains is that noise, already in the pooled boot variance (a
                // spread beyond it fails the homogeneity test, and the profile is then not
                // pooled).
                let explained = calibrated.and_then(|p| p.homogeneity.as_ref()).map_or_else(
                    || "its boots are the profile's".to_owned(),
                    |t| format!("F = {:.2}, {}", t.f, p_is(t.p_value)),
                );
                notes.push(format!(
                    "{} {} the recipe's drift gate max_drift_pct {} but the noise profile's \
                     boot noise explains it ({explained}), so the gate does not count it",
                    spread_words(spread, gate),
                    exceed(spread),
                    limit_shown(gate, spread.pct.abs()),
                ));
            }
            Some(_) if spread.beyond_noise() => limits.push(Limit::Spread(spread.clone())),
            Some(gate) => {
                let p = spread.effect.as_ref().map_or(f64::NAN, |e| e.p_value);
                notes.push(format!(
                    "{} {} the recipe's drift gate max_drift_pct {} but within-boot noise \
                     explains it ({} p = {:.3}), so the gate does not count it",
                    spread_words(spread, gate),
                    exceed(spread),
                    limit_shown(gate, spread.pct.abs()),
                    test_name(spread),
                    p
                ));
            }
            None if spread.beyond_noise() && spread.effect.is_some() => {
                // The boots differ by more than their samples explain: that is boot-to-boot
                // noise, which the boot-level interval carries; as a filter it would keep the
                // campaigns whose boots happened to agree (docs/statistics.md §5.2).
                notes.push(format!(
                    "{} beyond within-boot noise ({} {}): boot-to-boot noise, carried by the \
                     boot-level interval{}",
                    spread_words_plain(spread),
                    test_name(spread),
                    spread
                        .effect
                        .as_ref()
                        .map_or_else(String::new, |e| p_is(e.p_value)),
                    if compared {
                        ""
                    } else {
                        " through the pooled boot variance"
                    }
                ));
            }
            None => {}
        }
    }
    if let Some(cv) = input.max_cv_pct {
        // A CV is a ratio to the mean: with a mean ≤ 0 it is not a CV, and a negative value
        // must never pass a limit (the analysis refuses such series before they get here).
        let limit = params.max_cv_pct;
        let tested = input
            .cv_basis
            .and_then(|b| Some((b, b.p_value(cv, limit)?)));
        match tested {
            _ if cv < 0.0 => limits.push(Limit::Cv { pct: cv }),
            _ if cv <= limit => {}
            Some((basis, p)) if p >= basis.level() => notes.push(format!(
                "max point CV {}% is over max_cv_pct {}, but its {} samples do not show the \
                 true CV above the limit (χ² {} ≥ {}): sampling, not a broken measurement",
                shown(cv, limit),
                limit_shown(limit, cv),
                basis.samples,
                p_is(p),
                p_text(basis.level())
            )),
            _ => limits.push(Limit::Cv { pct: cv }),
        }
    }
    (limits, notes)
}

/// `drift of parent -1.93%` / `a's 3 boots differ by 3.18% (RMS over pairs)`: a spread with
/// no limit beside it.
fn spread_words_plain(spread: &Spread) -> String {
    match spread.measure {
        SpreadMeasure::Drift => format!("drift of {} {}", spread.kernel, plain_signed(spread.pct)),
        SpreadMeasure::Rms => format!(
            "{}'s {} boots differ by {} (RMS over pairs)",
            spread.kernel,
            spread.boots,
            unsigned_pct(spread.pct)
        ),
    }
}

/// `drift of parent -1.93%` / `a's 3 boots, which differ by 3.18% (RMS over pairs),`, printed
/// so that it never reads equal to `limit`.
fn spread_words(spread: &Spread, limit: f64) -> String {
    match spread.measure {
        SpreadMeasure::Drift => format!(
            "drift of {} {}",
            spread.kernel,
            signed_pct(spread.pct, limit)
        ),
        SpreadMeasure::Rms => format!(
            "{}'s {} boots, which differ by {} (RMS over pairs),",
            spread.kernel,
            spread.boots,
            unsigned_vs(spread.pct, limit)
        ),
    }
}

/// The verb that agrees with [`spread_words`].
fn exceed(spread: &Spread) -> &'static str {
    match spread.measure {
        SpreadMeasure::Drift => "exceeds",
        SpreadMeasure::Rms => "exceed",
    }
}

fn test_name(spread: &Spread) -> &'static str {
    match spread.effect.as_ref().map(|e| e.test) {
        Some(crate::stats::kernel::BootEffectTest::Anova) => "ANOVA",
        _ => "Welch",
    }
}

/// A tripped limit in plain words.
#[must_use]
pub fn limit_text(params: &VerdictParams, limit: &Limit) -> String {
    match limit {
        Limit::Spread(spread) => {
            let why = spread.effect.as_ref().map_or_else(String::new, |e| {
                if e.p_value < 0.001 {
                    format!(
                        ", beyond within-boot noise ({} p < 0.001)",
                        test_name(spread)
                    )
                } else {
                    format!(
                        ", beyond within-boot noise ({} p = {:.3})",
                        test_name(spread),
                        e.p_value
                    )
                }
            });
            let gate = params.max_drift_pct.unwrap_or(f64::NAN);
            format!(
                "the recipe's drift gate was exceeded: {} {} max_drift_pct {}{why}",
                spread_words(spread, gate),
                exceed(spread),
                limit_shown(gate, spread.pct.abs()),
            )
        }
        Limit::Trend(trend) => format!(
            "the boot means drift over the campaign: a linear trend of {} per point (F(1, {}) \
             = {:.2}, {})",
            plain_signed(trend.slope_pct_per_point),
            trend.dof,
            trend.f,
            p_is(trend.p_value)
        ),
        Limit::NoisierThanProfile { f, p_value } => format!(
            "noisier than its calibration: the boots scatter more than the noise profile's \
             (F = {f:.2}, {})",
            p_is(*p_value)
        ),
        Limit::Environment { text } => format!("the environment differs: {text}"),
        Limit::Cv { pct } if *pct < 0.0 => {
            format!("max point CV {pct:.2}% is negative: the mean is not positive")
        }
        Limit::Cv { pct } => format!(
            "max point CV {}% exceeds max_cv_pct {}",
            shown(*pct, params.max_cv_pct),
            limit_shown(params.max_cv_pct, *pct),
        ),
    }
}

/// Plain-words list of the conditions that failed.
fn failed_checks(params: &VerdictParams, input: &VerdictInput<'_>, checks: &Checks) -> Vec<String> {
    let change = input.all.change_pct;
    let gate = params.gate_pct;
    let mut reasons = Vec::new();
    let (boot, within, level) = evidence(input.all);
    let Some(boot) = boot else {
        reasons.push(
            "no kernel was booted twice: boot-to-boot variation is unmeasured, so the \
             within-boot interval cannot tell the change from it"
                .to_owned(),
        );
        return reasons;
    };
    if !checks.material {
        reasons.push(format!(
            "change {} is below gate_pct {}",
            signed_pct(change, gate),
            limit_shown(gate, change.abs())
        ));
    }
    if !checks.margin {
        reasons.push(format!(
            "change {} is less than drift_margin {} x max spread {}",
            signed_pct(change, checks.needed),
            limit_shown(params.drift_margin, 0.0),
            unsigned_pct(checks.max_spread)
        ));
    }
    for b in &input.all.brackets {
        if !(same_sign(b.pct, change) && b.pct.abs() >= gate) {
            reasons.push(format!(
                "change against {} is {}, not beyond gate_pct {} in the same direction",
                crate::point_name::point_name(&b.baseline_point, &input.all.baseline),
                signed_pct(b.pct, gate),
                limit_shown(gate, b.pct.abs())
            ));
        }
    }
    match input.drop_first {
        None => reasons.push("drop-first comparison unavailable".to_owned()),
        Some(df) if !checks.robust => reasons.push(format!(
            "drop-first change {} is not beyond gate_pct {} in the same direction",
            signed_pct(df.change_pct, gate),
            limit_shown(gate, df.change_pct.abs())
        )),
        Some(_) => {}
    }
    match boot.bounds {
        None => reasons.push(format!(
            "the boot-level {level} CI is not estimable (ν = {})",
            nu(boot.dof)
        )),
        Some((lo, hi)) if !checks.boot_excludes => reasons.push(format!(
            "the boot-level {level} CI [{}, {}] includes 0 (ν = {})",
            plain_signed(lo),
            plain_signed(hi),
            nu(boot.dof)
        )),
        Some((lo, hi)) if !checks.material && !checks.under_gate => reasons.push(format!(
            "the boot-level {level} CI [{}, {}] reaches gate_pct {}: not shown to be under the gate",
            plain_signed(lo),
            plain_signed(hi),
            limit_shown(gate, 0.0)
        )),
        Some(_) => {}
    }
    if let Some(within) = within
        && checks.within_excludes == Some(false)
    {
        match within.bounds {
            Some((lo, hi)) => reasons.push(format!(
                "the within-boot {level} CI [{}, {}] includes 0: within-boot noise alone explains \
                 the change",
                plain_signed(lo),
                plain_signed(hi)
            )),
            None => reasons.push(format!("the within-boot {level} CI is not estimable")),
        }
    }
    reasons
}

/// The intervals the evidence is judged with, and their confidence as printed: at a look of
/// an extended campaign the look's (1 − α_k), otherwise the 95% ones.
fn evidence(all: &Comparison) -> (Option<&RatioInterval>, Option<&RatioInterval>, String) {
    match &all.look {
        Some(look) => (
            look.ci_boot.as_ref(),
            look.ci_within.as_ref(),
            format!("{:.2}%", look.look.confidence_pct()),
        ),
        None => (
            all.ci_boot.as_ref(),
            all.ci_within.as_ref(),
            "95%".to_owned(),
        ),
    }
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
            Some(true) => Confidence::BootCiExcludesZero { dof: ci.dof },
            Some(false) => Confidence::BootCiIncludesZero { dof: ci.dof },
            None => Confidence::BootCiNotEstimable { dof: ci.dof },
        },
        (None, Some(ci)) if ci.bounds.is_some() => Confidence::WithinOnly,
        (None, _) => Confidence::NotEstimable,
    }
}

/// Decimals (2..=6) needed so that `value` and `other` do not print the same; `None` when
/// even 6 decimals print them equal.
fn decimals(value: f64, other: f64) -> Option<usize> {
    (2..=6).find(|&d| format!("{value:.d$}") != format!("{other:.d$}"))
}

/// `value` printed so that it never reads equal to `other` (a reason must never say "2.00
/// exceeds 2.00" or "+5.000000% is below gate_pct 5.000000"): 2 decimals, more when needed,
/// and when 6 are not enough, 2 decimals with the unrounded difference ("5.00 (unrounded:
/// 4.0e-10 below)").
fn shown(value: f64, other: f64) -> String {
    match decimals(value, other) {
        Some(d) => format!("{value:.d$}"),
        None => format!("{value:.2}{}", unrounded(value, other)),
    }
}

/// A limit next to `value`: as many decimals as tell them apart, never an annotation (the
/// value carries it).
fn limit_shown(limit: f64, value: f64) -> String {
    let d = decimals(limit, value).unwrap_or(2);
    format!("{limit:.d$}")
}

fn signed_pct(value: f64, other: f64) -> String {
    match decimals(value.abs(), other.abs()) {
        Some(d) => format!("{value:+.d$}%"),
        None => format!("{value:+.2}%{}", unrounded(value.abs(), other.abs())),
    }
}

/// ` (unrounded: 4.0e-10 below)` when `value` ≠ `other`.
fn unrounded(value: f64, other: f64) -> String {
    if value == other {
        String::new()
    } else {
        format!(
            " (unrounded: {:.1e} {})",
            (value - other).abs(),
            if value < other { "below" } else { "above" }
        )
    }
}

fn unsigned_vs(value: f64, other: f64) -> String {
    format!("{}%", shown(value, other))
}

fn unsigned_pct(value: f64) -> String {
    format!("{value:.2}%")
}

/// `+1.23%` / `-0.40%` with 2 decimals.
fn plain_signed(value: f64) -> String {
    let text = format!("{value:+.2}%");
    if text == "-0.00%" {
        "0.00%".to_owned()
    } else {
        text
    }
}

/// `0.004`, `< 0.001`.
/// `p = 0.004`, `p < 0.001`.
fn p_is(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {p:.3}")
    }
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_owned()
    } else {
        format!("{p:.3}")
    }
}

fn nu(dof: f64) -> String {
    if dof.fract() == 0.0 && dof.abs() < 1e9 {
        format!("{dof:.0}")
    } else {
        format!("{dof:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::{
        Better, Confidence, CvBasis, Direction, Limit, SpreadMeasure, Verdict, VerdictInput,
        VerdictLabel, VerdictParams, verdict,
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
            cv_basis: None,
            better: Better::Lower,
            environment: &[],
            trend: None,
        };
        verdict(params, &input)
    }

    /// The verdict of `candidate` against `baseline` in `points`, drop-first taken as the
    /// same comparison.
    fn judge(points: &[BootPoint], candidate: &str, baseline: &str, cv: Option<f64>) -> Verdict {
        let all = compare(points, candidate, baseline).expect("present");
        let input = VerdictInput {
            all: &all,
            drop_first: Some(&all),
            kernels: &kernels(points),
            max_cv_pct: cv,
            cv_basis: None,
            better: Better::Lower,
            environment: &[],
            trend: None,
        };
        verdict(&VerdictParams::default(), &input)
    }

    /// [`judge`] under `params`, CV unknown.
    fn judge_params(
        points: &[BootPoint],
        candidate: &str,
        baseline: &str,
        params: &VerdictParams,
    ) -> Verdict {
        let all = compare(points, candidate, baseline).expect("present");
        let input = VerdictInput {
            all: &all,
            drop_first: Some(&all),
            kernels: &kernels(points),
            max_cv_pct: None,
            cv_basis: None,
            better: Better::Lower,
            environment: &[],
            trend: None,
        };
        verdict(params, &input)
    }

    /// The default parameters with the recipe's own drift gate `pct`.
    fn gated(pct: f64) -> VerdictParams {
        VerdictParams {
            max_drift_pct: Some(pct),
            ..VerdictParams::default()
        }
    }

    #[test]
    fn exact_cac1_is_a_signal() {
        let v = raw_case(&EXACT_CAC1, &VerdictParams::default());
        assert_eq!(v.label, VerdictLabel::Signal, "{:?}", v.reasons);
        assert_eq!(v.label.to_string(), "SIGNAL");
        assert_eq!(v.direction, Some(Direction::Worse));
        assert_eq!(v.confidence, Confidence::BootCiExcludesZero { dof: 1.0 });
        assert!(v.margin_checked && v.material && v.margin && v.bracket && v.robust);
        assert!(v.boot_ci_excludes_zero && v.within_ci_excludes_zero == Some(true));
        assert!(v.reasons.is_empty());
    }

    #[test]
    fn pedro_v3_is_inconclusive_and_unstable_only_under_a_drift_gate_of_its_own() {
        // No drift gate: parent's -1.93% is boot-to-boot noise, which widens the interval
        // (a note), and the interval [-14.25%, +29.96%] neither shows nor rules out 5%.
        let v = raw_case(&PEDRO_V3, &VerdictParams::default());
        assert_eq!(v.label, VerdictLabel::Inconclusive, "{:?}", v.reasons);
        assert!(v.tripped.is_empty());
        assert!(
            v.notes[0].starts_with("drift of parent -1.93% beyond within-boot noise"),
            "{:?}",
            v.notes
        );
        // A recipe that preregisters a 1% drift gate gets it, named as its own.
        let gated = VerdictParams {
            max_drift_pct: Some(1.0),
            ..VerdictParams::default()
        };
        let v = raw_case(&PEDRO_V3, &gated);
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert_eq!(
            v.reasons,
            vec![
                "the recipe's drift gate was exceeded: drift of parent -1.93% exceeds \
                 max_drift_pct 1.00, beyond within-boot noise (Welch p < 0.001)"
            ]
        );
        assert!(matches!(&v.tripped[..], [Limit::Spread(s)] if s.kernel == "parent"));
    }

    #[test]
    fn pedro_v3_with_a_2_percent_drift_gate_is_inconclusive_at_boot_level() {
        // 6.20 ≥ 2 × 1.93 and the brackets +5.18 and +7.25 pass the sandwich checks, but the
        // boot-level interval [-14.25%, +29.96%] (ν = 1) includes 0: without it, SIGNAL was
        // wrong 15% of the time among stable A/B/A runs with no change (docs/statistics.md).
        let params = VerdictParams {
            max_drift_pct: Some(2.0),
            ..VerdictParams::default()
        };
        let v = raw_case(&PEDRO_V3, &params);
        // Neither a SIGNAL nor an equivalence: the interval reaches past ±5%.
        assert_eq!(v.label, VerdictLabel::Inconclusive, "{:?}", v.reasons);
        assert!(v.material && v.margin && v.bracket && v.robust);
        assert_eq!(v.confidence, Confidence::BootCiIncludesZero { dof: 1.0 });
        assert!(
            v.reasons
                .iter()
                .any(|r| r == "the boot-level 95% CI [-14.25%, +29.96%] includes 0 (ν = 1)"),
            "{:?}",
            v.reasons
        );
    }

    #[test]
    fn rt_mail_rr_control_is_inconclusive_at_one_control_pair() {
        // −0.83% against a drift of −0.83%: neither material nor above the margin, and with
        // ν = 1 the boot-level interval is far wider than ±5%: not shown to be under the gate
        // (it was NO_MATERIAL_SIGNAL before equivalence had to be earned).
        let points = vec![
            point("original-a", "original", 253.400, None, 0),
            point("patched", "patched", 250.268, None, 0),
            point("original-b", "original", 251.304, None, 0),
        ];
        let v = judge(&points, "patched", "original", Some(0.89));
        assert_eq!(v.label, VerdictLabel::Inconclusive);
        assert!(!v.within_gate);
        assert_eq!(v.direction, Some(Direction::Better));
        assert!(!v.material && !v.margin && !v.boot_ci_excludes_zero);
    }

    #[test]
    fn setparam_custom_as_published_is_not_resolved() {
        // The mail's A/B/A: ν = 1, the boot-level interval swamps +0.40%.
        let points = vec![
            point("original-a", "original", 162.69, Some(0.3), 10),
            point("revision", "revision", 163.22, Some(0.3), 10),
            point("original-b", "original", 162.45, Some(0.3), 10),
        ];
        let v = judge(&points, "revision", "original", None);
        assert!(v.margin && !v.material && !v.boot_ci_excludes_zero);
        assert_eq!(v.label, VerdictLabel::NoMaterialSignal);
    }

    #[test]
    fn below_gate_needs_a_boot_level_interval_between_0_and_the_gate() {
        // Synthetic A/B/A/B/A with the same change and drift: ν = 3, the boot-level interval
        // lies between 0 and 5%.
        let points = vec![
            point("original-a", "original", 162.69, Some(0.3), 10),
            point("revision-a", "revision", 163.22, Some(0.3), 10),
            point("original-b", "original", 162.57, Some(0.3), 10),
            point("revision-b", "revision", 163.22, Some(0.3), 10),
            point("original-c", "original", 162.45, Some(0.3), 10),
        ];
        let v = judge(&points, "revision", "original", None);
        assert_eq!(v.label, VerdictLabel::BelowGate, "{:?}", v.reasons);
        assert_eq!(v.label.to_string(), "BELOW_GATE");
        assert!(v.under_gate && v.boot_ci_excludes_zero && !v.material);
        assert_eq!(v.confidence, Confidence::BootCiExcludesZero { dof: 3.0 });
        assert_eq!(v.spreads[0].measure, SpreadMeasure::Rms);
    }

    #[test]
    fn below_gate_is_refused_when_the_interval_reaches_the_gate() {
        // +4.62% whose boot-level interval reaches beyond 5%: measurable, not shown under the
        // gate.
        let points = vec![
            point("a1", "a", 100.0, Some(0.5), 10),
            point("b1", "b", 104.0, Some(0.5), 10),
            point("a2", "a", 99.5, Some(0.5), 10),
            point("b2", "b", 104.9, Some(0.5), 10),
            point("a3", "a", 100.0, Some(0.5), 10),
        ];
        let v = judge(&points, "b", "a", None);
        assert!(v.boot_ci_excludes_zero && !v.under_gate && !v.material);
        assert_eq!(v.label, VerdictLabel::Inconclusive);
        assert!(
            v.reasons
                .iter()
                .any(|r| r.ends_with("not shown to be under the gate")),
            "{:?}",
            v.reasons
        );
    }

    #[test]
    fn a_zero_width_interval_no_longer_resolves() {
        // The two control boots agree exactly: unfloored, S_B² = 0 and the interval was
        // [+10%, +10%]. Floored, and with the within-only interval required, it is not a
        // BELOW_GATE or a SIGNAL when within-boot noise alone explains the change.
        let points = vec![
            point("a1", "a", 100.0, Some(30.0), 3),
            point("b", "b", 103.0, Some(30.0), 3),
            point("a2", "a", 100.0, Some(30.0), 3),
        ];
        let v = judge(&points, "b", "a", None);
        let all = compare(&points, "b", "a").expect("present");
        let (lo, hi) = all.ci_boot.and_then(|ci| ci.bounds).expect("bounded");
        assert!(hi - lo > 1.0, "[{lo}, {hi}]");
        assert_eq!(v.within_ci_excludes_zero, Some(false));
        // Not ruled out either: the interval reaches past the gate.
        assert_eq!(v.label, VerdictLabel::Inconclusive);
        assert!(
            v.reasons
                .iter()
                .any(|r| r.contains("within-boot noise alone explains"))
        );
    }

    #[test]
    fn plain_ab_is_unreplicated_whatever_the_within_interval_says() {
        // The within-only interval resolves +0.40% and would once have made it BELOW_GATE (and
        // a 20% change a SIGNAL): it says nothing about boot-to-boot variation.
        for revision in [163.22, 200.0] {
            let points = vec![
                point("original", "original", 162.57, Some(0.3), 10),
                point("revision", "revision", revision, Some(0.3), 10),
            ];
            let all = compare(&points, "revision", "original").expect("present");
            assert_eq!(all.ci_boot, None);
            assert_eq!(
                all.ci_within.as_ref().map(|ci| ci.kind),
                Some(IntervalKind::WithinOnly)
            );
            let v = judge(&points, "revision", "original", None);
            assert_eq!(v.label, VerdictLabel::Unreplicated);
            assert_eq!(v.label.to_string(), "UNREPLICATED");
            assert_eq!(v.confidence, Confidence::WithinOnly);
            assert!(!v.margin_checked);
            assert!(v.reasons[0].starts_with("no kernel was booted twice"));
        }
    }

    #[test]
    fn the_range_sees_the_middle_boots() {
        // a's boots 100 / 104 / 100.1: drift +0.10%, but two of them differ by 3.18% (RMS over
        // the three pairs, relative to their mean), far beyond within-boot noise.
        let points = vec![
            point("a1", "a", 100.0, Some(0.2), 10),
            point("b1", "b", 120.0, Some(0.2), 10),
            point("a2", "a", 104.0, Some(0.2), 10),
            point("b2", "b", 120.0, Some(0.2), 10),
            point("a3", "a", 100.1, Some(0.2), 10),
        ];
        let v = judge(&points, "b", "a", None);
        // Without a drift gate the spread is boot noise carried by the interval: +18.7%
        // is still a SIGNAL, and the note names the spread.
        assert_eq!(v.label, VerdictLabel::Signal, "{:?}", v.reasons);
        assert!(
            v.notes[0].starts_with("a's 3 boots differ by 3.18% (RMS over pairs) beyond"),
            "{:?}",
            v.notes
        );
        let v = judge_params(&points, "b", "a", &gated(1.0));
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert!(
            v.reasons[0].starts_with(
                "the recipe's drift gate was exceeded: a's 3 boots, which differ by 3.18% (RMS \
                 over pairs), exceed max_drift_pct 1.00"
            ),
            "{:?}",
            v.reasons
        );
    }

    #[test]
    fn a_spread_that_within_noise_explains_is_a_note_not_instability() {
        // Drift +1.5% with a within-boot SE of about 1.3%: Welch p ≈ 0.4.
        let points = vec![
            point("a1", "a", 100.0, Some(3.0), 10),
            point("b", "b", 120.0, Some(3.0), 10),
            point("a2", "a", 101.5, Some(3.0), 10),
        ];
        let v = judge_params(&points, "b", "a", &gated(1.0));
        assert_ne!(v.label, VerdictLabel::Unstable);
        assert!(
            v.notes[0].contains("within-boot noise explains it"),
            "{:?}",
            v.notes
        );
    }

    #[test]
    fn another_kernel_that_moved_widens_the_interval_but_does_not_make_it_unstable() {
        // p c f n f c p: f's boots differ by 5% (far beyond noise). Comparing n with p, f is
        // not compared: its spread enters the pooled boot variance and the margin, and it is
        // a note. Making n-vs-p UNSTABLE would keep only the runs where every kernel agreed,
        // whose pooled variance is too small (docs/statistics.md).
        let points = vec![
            point("p1", "p", 100.0, Some(0.2), 10),
            point("c1", "c", 110.0, Some(0.2), 10),
            point("f1", "f", 105.0, Some(0.2), 10),
            point("n", "n", 103.0, Some(0.2), 10),
            point("f2", "f", 110.25, Some(0.2), 10),
            point("c2", "c", 110.1, Some(0.2), 10),
            point("p2", "p", 100.1, Some(0.2), 10),
        ];
        let v = judge_params(&points, "n", "p", &gated(1.0));
        assert_ne!(v.label, VerdictLabel::Unstable, "{:?}", v.reasons);
        assert!(!v.margin, "f's 5% drift still sets the margin");
        assert!(
            v.notes.iter().any(
                |n| n.starts_with("drift of f +5.00% beyond within-boot noise")
                    && n.ends_with("through the pooled boot variance")
            ),
            "{:?}",
            v.notes
        );
        // f against p: f is compared, so under the recipe's drift gate its own drift makes
        // that comparison UNSTABLE; without one it does not.
        let gated_f = judge_params(&points, "f", "p", &gated(1.0));
        assert_eq!(gated_f.label, VerdictLabel::Unstable);
        assert_ne!(judge(&points, "f", "p", None).label, VerdictLabel::Unstable);
    }

    #[test]
    fn cv_just_above_the_limit_fails() {
        let params = VerdictParams {
            max_cv_pct: 15.0,
            max_drift_pct: Some(5.0),
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
            cv_basis: None,
            better: Better::Lower,
            environment: &[],
            trend: None,
        };
        let v = verdict(&params, &input);
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert_eq!(
            v.reasons,
            vec!["max point CV 15.01% exceeds max_cv_pct 15.00"]
        );
        // A negative CV (a negative mean) never passes a limit.
        let input = VerdictInput {
            max_cv_pct: Some(-3.0),
            ..input
        };
        assert_eq!(verdict(&params, &input).label, VerdictLabel::Unstable);
    }

    #[test]
    fn a_cv_over_its_limit_is_unstable_only_when_its_samples_show_it() {
        let points = vec![
            point("a1", "a", 100.0, Some(0.3), 3),
            point("b", "b", 120.0, Some(0.3), 3),
            point("a2", "a", 100.1, Some(0.3), 3),
        ];
        let all = compare(&points, "b", "a").expect("present");
        let at = |cv: f64, basis: Option<CvBasis>| {
            verdict(
                &VerdictParams::default(),
                &VerdictInput {
                    all: &all,
                    drop_first: Some(&all),
                    kernels: &kernels(&points),
                    max_cv_pct: Some(cv),
                    cv_basis: basis,
                    better: Better::Lower,
                    environment: &[],
                    trend: None,
                },
            )
        };
        let three = Some(CvBasis {
            samples: 3,
            points: 3,
        });
        // 2.6% from 3 samples against a 2% limit: χ²₂ = 3.38, p = 0.18; sampling.
        let v = at(2.6, three);
        assert_ne!(v.label, VerdictLabel::Unstable);
        assert!(
            v.notes.iter().any(|n| n.starts_with(
                "max point CV 2.60% is over max_cv_pct 2.00, but its 3 samples do not show"
            )),
            "{:?}",
            v.notes
        );
        // 8% from 3 samples: χ²₂ = 32, p < 0.001 < 0.02/3: UNSTABLE.
        assert_eq!(at(8.0, three).label, VerdictLabel::Unstable);
        // 2.6% from 100 samples: χ²₉₉ = 167, shown.
        let many = Some(CvBasis {
            samples: 100,
            points: 3,
        });
        assert_eq!(at(2.6, many).label, VerdictLabel::Unstable);
        // Unknown basis: the limit as it stands.
        assert_eq!(at(2.6, None).label, VerdictLabel::Unstable);
    }

    /// A/B/A whose baseline boots differ by 3% (the machine's usual boot noise), with a
    /// candidate 20% slower; within-boot SD 0.3 at n = 9.
    fn noisy_aba() -> Vec<BootPoint> {
        vec![
            point("a-a", "a", 98.5, Some(0.3), 9),
            point("b", "b", 120.0, Some(0.3), 9),
            point("a-b", "a", 101.5, Some(0.3), 9),
        ]
    }

    fn judge_with(
        points: &[BootPoint],
        prior: Option<&crate::stats::BootPrior>,
        environment: &[String],
        params: &VerdictParams,
    ) -> Verdict {
        let all = crate::stats::compare_with(points, "b", "a", prior).expect("present");
        let input = VerdictInput {
            all: &all,
            drop_first: Some(&all),
            kernels: &kernels(points),
            max_cv_pct: Some(0.3),
            cv_basis: None,
            better: Better::Lower,
            environment,
            trend: None,
        };
        verdict(params, &input)
    }

    #[test]
    fn a_spread_the_noise_profile_explains_is_not_instability() {
        let points = noisy_aba();
        // Alone, a's 3% drift is beyond its within-boot noise: under the recipe's 1% drift
        // gate, UNSTABLE.
        assert_eq!(
            judge_with(&points, None, &[], &gated(1.0)).label,
            VerdictLabel::Unstable
        );
        // A profile of 10 boots at 2% boot SD explains it: judged, with a note.
        let prior = crate::stats::BootPrior {
            rel_var: 4e-4,
            dof: 9.0,
        };
        let v = judge_with(&points, Some(&prior), &[], &gated(1.0));
        assert_eq!(v.label, VerdictLabel::Signal, "{v:?}");
        assert!(
            v.notes
                .iter()
                .any(|n| n.contains("noise profile's boot noise explains it")),
            "{:?}",
            v.notes
        );
        assert_eq!(v.confidence.dof(), Some(10.0));
        // A profile of 0.1% boot SD does not: the campaign is noisier than its calibration,
        // the profile is not pooled, and its own rules apply.
        let quiet = crate::stats::BootPrior {
            rel_var: 1e-6,
            dof: 9.0,
        };
        let v = judge_with(&points, Some(&quiet), &[], &VerdictParams::default());
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert!(
            matches!(v.tripped[..], [Limit::NoisierThanProfile { .. }]),
            "{:?}",
            v.tripped
        );
        assert!(
            v.reasons[0].starts_with("noisier than its calibration: the boots scatter more"),
            "{:?}",
            v.reasons
        );
    }

    #[test]
    fn an_environment_difference_makes_the_comparison_unstable() {
        let prior = crate::stats::BootPrior {
            rel_var: 4e-4,
            dof: 9.0,
        };
        let diff = vec![
            "microcode revision differs between the boots of a: 0x1 at a-a; 0x2 at a-b".to_owned(),
        ];
        let v = judge_with(&noisy_aba(), Some(&prior), &diff, &VerdictParams::default());
        assert_eq!(v.label, VerdictLabel::Unstable);
        assert_eq!(
            v.tripped,
            [Limit::Environment {
                text: diff[0].clone()
            }]
        );
        assert_eq!(
            v.reasons,
            [
                "the environment differs: microcode revision differs between the boots of a: 0x1 \
              at a-a; 0x2 at a-b"
            ]
        );
    }

    #[test]
    fn a_change_at_the_gate_is_never_printed_equal_to_it() {
        // 4.9999999996% is below a 5% gate: the reason must not read "+5.000000% is below
        // gate_pct 5.000000".
        let points = vec![
            point("a1", "a", 100.0, Some(0.1), 10),
            point("b", "b", 104.999_999_999_6, Some(0.1), 10),
            point("a2", "a", 100.0, Some(0.1), 10),
        ];
        let v = judge(&points, "b", "a", None);
        let reason = v
            .reasons
            .iter()
            .find(|r| r.contains("is below gate_pct"))
            .expect("not material");
        assert_eq!(
            reason,
            "change +5.00% (unrounded: 4.0e-10 below) is below gate_pct 5.00"
        );
    }
}
