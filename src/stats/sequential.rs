//! Campaigns that extend themselves (`[analysis] extend`, issue 10 §4): the boundary that
//! spends the 5% false-SIGNAL budget over repeated looks, and the stopping decision at a look.
//!
//! A fixed design judges its comparisons once, with 95% intervals. An extended campaign judges
//! them after the planned sequence and again after every appended unit, and stops as soon as
//! each is decided. Judging every look at 95% would let noise cross the line at one of them
//! more often than 5% of the time. So look k of K judges the evidence (the boot-level interval
//! excludes 0, the within-only veto, the gate test of BELOW_GATE) with intervals at confidence
//! 1 − α_k, where α₁ + … + α_K = 5%: whatever decided the stop (this comparison, another one,
//! the budget), a false SIGNAL needs the evidence at some look k, which has probability at
//! most α_k there, so at most 5% in all (the union bound). That holds for any spending, and
//! for a verdict made of more than an interval; the simulator (`bench/sequential.rs`,
//! docs/statistics.md §12) chose the spending.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use crate::stats::{
    interval::{BootVariance, RatioInterval, ci_boot_at, ci_within_at},
    kernel::BootPoint,
};

/// The false-SIGNAL budget of a whole extended campaign, as of a fixed design.
pub const FAMILY_ALPHA: f64 = 0.05;

/// How the budget is spread over the looks: the Lan–DeMets spending function A(t) of the
/// information fraction t = points at the look / the maximum points, with α_k = A(t_k) −
/// A(t_{k−1}).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spending {
    /// α/K at every look, whatever its size.
    Bonferroni,
    /// Pocock-type, A(t) = α·ln(1 + (e − 1)·t): much of the budget early, for early stops.
    Pocock,
    /// O'Brien–Fleming-type, A(t) = 2 − 2Φ(z_{1−α/2}/√t): almost nothing early, nearly all
    /// at the last look.
    OBrienFleming,
}

/// The spending aba uses. Pocock-type: the simulator shows that every spending keeps the
/// false-SIGNAL rate far under 5% (the verdict needs more than an interval), and that this one
/// stops soonest at a true change of 2G (docs/statistics.md §12).
pub const SPENDING: Spending = Spending::Pocock;

impl Spending {
    /// A(t) for t in [0, 1].
    #[must_use]
    pub fn spent(self, t: f64, looks: u32) -> f64 {
        let t = t.clamp(0.0, 1.0);
        match self {
            Spending::Bonferroni => {
                // A step function: each look of the K spends α/K; t is the look's share.
                FAMILY_ALPHA * (t * f64::from(looks)).round() / f64::from(looks)
            }
            Spending::Pocock => FAMILY_ALPHA * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
            Spending::OBrienFleming => {
                if t <= 0.0 {
                    return 0.0;
                }
                let normal = Normal::new(0.0, 1.0).expect("invariant: the standard normal");
                let z = normal.inverse_cdf(1.0 - FAMILY_ALPHA / 2.0);
                2.0 - 2.0 * normal.cdf(z / t.sqrt())
            }
        }
    }
}

/// The looks of an extended campaign and the per-look α of each.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Boundary {
    /// The spending.
    pub spending: Spending,
    /// Points at each look: the planned sequence, then one more unit per look.
    pub points: Vec<usize>,
    /// α_k of each look (two-sided), summing to [`FAMILY_ALPHA`].
    pub alphas: Vec<f64>,
}

impl Boundary {
    /// The boundary of a campaign that plans `planned` points, appends `unit` at a time and
    /// stops at `max_points`: look 1 after the planned points, and one more after every unit
    /// that fits.
    #[must_use]
    pub fn new(spending: Spending, planned: usize, unit: usize, max_points: usize) -> Boundary {
        let unit = unit.max(1);
        let extra = max_points.saturating_sub(planned) / unit;
        let points: Vec<usize> = (0..=extra).map(|k| planned + k * unit).collect();
        let looks = u32::try_from(points.len()).unwrap_or(u32::MAX);
        let last = *points.last().expect("invariant: look 1 exists") as f64;
        let mut alphas = Vec::with_capacity(points.len());
        let mut before = 0.0;
        for (k, &n) in points.iter().enumerate() {
            let t = if matches!(spending, Spending::Bonferroni) {
                (k + 1) as f64 / f64::from(looks)
            } else {
                n as f64 / last
            };
            // The last look spends what is left, so the looks spend exactly 5% whatever
            // the rounding of A.
            let now = if k + 1 == points.len() {
                FAMILY_ALPHA
            } else {
                spending.spent(t, looks)
            };
            alphas.push(now - before);
            before = now;
        }
        Boundary {
            spending,
            points,
            alphas,
        }
    }

    /// K, the most looks the campaign can take.
    #[must_use]
    pub fn looks(&self) -> u32 {
        u32::try_from(self.points.len()).unwrap_or(u32::MAX)
    }

    /// The look of a campaign that has `points` points; `None` between looks (a unit that is
    /// not complete) or beyond the last.
    #[must_use]
    pub fn look_at(&self, points: usize) -> Option<Look> {
        let k = self.points.iter().position(|&n| n == points)?;
        Some(Look {
            look: u32::try_from(k + 1).unwrap_or(u32::MAX),
            of: self.looks(),
            alpha: self.alphas[k],
        })
    }
}

/// One look: its number, how many there can be, and the α its intervals are judged at.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// 1-based.
    pub look: u32,
    /// K.
    pub of: u32,
    /// α_k, two-sided.
    pub alpha: f64,
}

impl Look {
    /// The interval's confidence in percent, `98.75`.
    #[must_use]
    pub fn confidence_pct(&self) -> f64 {
        100.0 * (1.0 - self.alpha)
    }

    /// True at the last look: no budget is left for another unit.
    #[must_use]
    pub fn is_last(&self) -> bool {
        self.look >= self.of
    }
}

/// The intervals a look judges a comparison with: the boot-level and within-only intervals at
/// confidence 1 − α_k. The 95% ones stay in the comparison and are printed as always.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LookIntervals {
    /// The look.
    pub look: Look,
    /// Boot-level, at 1 − α_k.
    pub ci_boot: Option<RatioInterval>,
    /// Within-only, at 1 − α_k.
    pub ci_within: Option<RatioInterval>,
}

impl LookIntervals {
    /// The intervals of `candidate` against `baseline` at `look`, with the boot variance the
    /// 95% interval used.
    #[must_use]
    pub fn new(
        points: &[BootPoint],
        candidate: &str,
        baseline: &str,
        variance: Option<&BootVariance>,
        look: Look,
    ) -> LookIntervals {
        LookIntervals {
            look,
            ci_boot: variance.and_then(|v| ci_boot_at(points, candidate, baseline, v, look.alpha)),
            ci_within: ci_within_at(points, candidate, baseline, look.alpha),
        }
    }
}

/// Where one comparison stands at a look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonState {
    /// SIGNAL at the look's boundary.
    Signal,
    /// Confidently below the gate: the boot-level interval at the look's level is bounded and
    /// lies strictly inside (−G, +G) (a BELOW_GATE, or a change too small to matter that is
    /// not shown to differ from 0).
    BelowGate,
    /// A stability limit tripped. More boots are not a remedy: sampling until the boots happen
    /// to agree would select exactly the runs whose variance is too small (docs/statistics.md
    /// §10.2), so an UNSTABLE comparison stops the extension.
    Unstable,
    /// None of these: more boots may decide it.
    Undecided,
}

impl ComparisonState {
    /// `SIGNAL`, `below the gate`, … as the journal and the report print it.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            ComparisonState::Signal => "SIGNAL",
            ComparisonState::BelowGate => "below the gate",
            ComparisonState::Unstable => "UNSTABLE",
            ComparisonState::Undecided => "undecided",
        }
    }

    /// The state of a comparison from its verdict label and its boot-level interval at the
    /// look's level (`None` when there is none or it is unbounded), with gate `gate_pct`.
    #[must_use]
    pub fn of(
        label: crate::stats::VerdictLabel,
        look_bounds: Option<(f64, f64)>,
        gate_pct: f64,
    ) -> ComparisonState {
        use crate::stats::VerdictLabel;
        match label {
            VerdictLabel::Signal => ComparisonState::Signal,
            VerdictLabel::Unstable => ComparisonState::Unstable,
            VerdictLabel::BelowGate => ComparisonState::BelowGate,
            VerdictLabel::NoMaterialSignal
            | VerdictLabel::Inconclusive
            | VerdictLabel::Unreplicated => match look_bounds {
                Some((lo, hi)) if lo > -gate_pct && hi < gate_pct => ComparisonState::BelowGate,
                _ => ComparisonState::Undecided,
            },
        }
    }
}

/// What a look decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Append another unit and look again.
    Extend,
    /// Every driving comparison is decided (SIGNAL or below the gate).
    Decided,
    /// A comparison is UNSTABLE: the campaign stops as a fixed design would.
    Unstable,
    /// Some comparison is undecided, but `max_points` leaves no room for another unit.
    Budget,
    /// No comparison could be judged (no series has a verdict): more points would not
    /// change that.
    Nothing,
}

impl Decision {
    /// Why, in a few words for the journal and the report.
    #[must_use]
    pub fn why(self) -> &'static str {
        match self {
            Decision::Extend => "a comparison is undecided and the budget allows another unit",
            Decision::Decided => "every comparison is decided",
            Decision::Unstable => {
                "a comparison is UNSTABLE, and more boots would select the runs whose boots agree"
            }
            Decision::Budget => {
                "a comparison is undecided, but max_points leaves no room for another unit"
            }
            Decision::Nothing => "no comparison has a verdict",
        }
    }
}

/// The stopping rule: stop when a comparison is UNSTABLE, when every one is SIGNAL or below
/// the gate, or at the last look; otherwise extend.
#[must_use]
pub fn decide(states: &[ComparisonState], look: &Look) -> Decision {
    if states.is_empty() {
        return Decision::Nothing;
    }
    if states.contains(&ComparisonState::Unstable) {
        return Decision::Unstable;
    }
    if !states.contains(&ComparisonState::Undecided) {
        return Decision::Decided;
    }
    if look.is_last() {
        Decision::Budget
    } else {
        Decision::Extend
    }
}

#[cfg(test)]
mod tests {
    use super::{Boundary, ComparisonState, Decision, FAMILY_ALPHA, Look, Spending, decide};
    use crate::stats::VerdictLabel;

    #[test]
    fn every_spending_spends_exactly_the_budget_over_its_looks() {
        for spending in [
            Spending::Bonferroni,
            Spending::Pocock,
            Spending::OBrienFleming,
        ] {
            let b = Boundary::new(spending, 3, 2, 11);
            assert_eq!(b.points, [3, 5, 7, 9, 11], "{spending:?}");
            let total: f64 = b.alphas.iter().sum();
            assert!(
                (total - FAMILY_ALPHA).abs() < 1e-15,
                "{spending:?}: {total}"
            );
            assert!(
                b.alphas.iter().all(|a| *a > 0.0),
                "{spending:?}: {:?}",
                b.alphas
            );
        }
    }

    #[test]
    fn the_spendings_differ_where_they_should() {
        let bonf = Boundary::new(Spending::Bonferroni, 3, 2, 11);
        assert!(bonf.alphas.iter().all(|a| (a - 0.01).abs() < 1e-12));
        let pocock = Boundary::new(Spending::Pocock, 3, 2, 11);
        // A(3/11) = 0.05·ln(1 + 1.71828·0.2727) = 0.01922.
        assert!(
            (pocock.alphas[0] - 0.019_22).abs() < 1e-4,
            "{:?}",
            pocock.alphas
        );
        let obf = Boundary::new(Spending::OBrienFleming, 3, 2, 11);
        assert!(obf.alphas[0] < 1e-3, "{:?}", obf.alphas);
        assert!(
            obf.alphas.windows(2).all(|w| w[0] < w[1]),
            "{:?}",
            obf.alphas
        );
    }

    #[test]
    fn a_budget_that_is_not_a_whole_number_of_units_ends_at_the_last_full_one() {
        let b = Boundary::new(Spending::Pocock, 3, 2, 8);
        assert_eq!(b.points, [3, 5, 7]);
        assert_eq!(b.look_at(5).map(|l| l.look), Some(2));
        assert_eq!(b.look_at(6), None);
        assert_eq!(b.look_at(7).map(|l| (l.look, l.of)), Some((3, 3)));
        assert!(b.look_at(7).is_some_and(|l| l.is_last()));
        // The last look's α makes the sum 5%, so A(1) is spent at 7 points, not 8.
        let total: f64 = b.alphas.iter().sum();
        assert!((total - FAMILY_ALPHA).abs() < 1e-12);
    }

    fn look(k: u32, of: u32) -> Look {
        Look {
            look: k,
            of,
            alpha: 0.01,
        }
    }

    #[test]
    fn undecided_extends_until_the_budget_is_spent() {
        use ComparisonState::{BelowGate, Signal, Undecided, Unstable};
        assert_eq!(decide(&[Signal, Undecided], &look(1, 3)), Decision::Extend);
        assert_eq!(decide(&[Signal, Undecided], &look(3, 3)), Decision::Budget);
        assert_eq!(decide(&[Signal, BelowGate], &look(1, 3)), Decision::Decided);
        assert_eq!(
            decide(&[Undecided, Unstable], &look(1, 3)),
            Decision::Unstable
        );
        assert_eq!(decide(&[], &look(1, 3)), Decision::Nothing);
    }

    #[test]
    fn below_the_gate_needs_a_bounded_interval_inside_the_gate() {
        use ComparisonState::{BelowGate, Signal, Undecided};
        let nms = VerdictLabel::NoMaterialSignal;
        assert_eq!(ComparisonState::of(nms, Some((-1.0, 4.9)), 5.0), BelowGate);
        assert_eq!(ComparisonState::of(nms, Some((-1.0, 5.0)), 5.0), Undecided);
        assert_eq!(ComparisonState::of(nms, Some((-5.0, 1.0)), 5.0), Undecided);
        assert_eq!(ComparisonState::of(nms, None, 5.0), Undecided);
        assert_eq!(ComparisonState::of(VerdictLabel::Signal, None, 5.0), Signal);
        assert_eq!(
            ComparisonState::of(VerdictLabel::BelowGate, Some((0.5, 4.0)), 5.0),
            BelowGate
        );
        assert_eq!(
            ComparisonState::of(VerdictLabel::Unreplicated, None, 5.0),
            Undecided
        );
    }
}
