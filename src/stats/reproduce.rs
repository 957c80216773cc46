//! Reproduction verdicts (issue 18): does a new campaign reproduce a reference campaign's
//! change of one candidate against its baseline?
//!
//! Each campaign's own verdict says what it claims (SIGNAL, BELOW_GATE, NO_MATERIAL_SIGNAL)
//! or that it claims nothing (UNSTABLE, UNREPLICATED, an interval that is not estimable).
//! Whether two claims agree is then a test of the two changes: their difference, with an
//! interval built from both campaigns' boot-level variances, contains 0 or not.
//!
//! Why a difference test and not "both SIGNAL": a reference SIGNAL at the gate is reproduced
//! by a campaign of the same truth only about half of the time, so "the new one is not a
//! SIGNAL" alone would call a faithful reproduction NOT_REPRODUCED half of the time. A claim is
//! only rejected when the two changes are shown to differ; when they agree but only one side
//! reaches SIGNAL, the answer is INCONCLUSIVE (the other campaign cannot tell). The rates of
//! every outcome are measured by `bench/reproduction.rs` (docs/report.md, "Reproduction
//! verdicts").

use std::fmt;

use serde::Serialize;

use crate::stats::{
    compare::Comparison,
    interval::t_quantile,
    verdict::{Confidence, Verdict, VerdictLabel},
};

/// The variance of one campaign's change, from its boot-level variance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeVariance {
    /// The change in percent, 100·(c/a − 1).
    pub change_pct: f64,
    /// Its variance in percentage points² (delta method, below).
    pub variance: f64,
    /// ν of the boot variance it comes from.
    pub dof: f64,
}

/// The variance of `cmp.change_pct` from the boot variance its boot-level interval uses;
/// `None` without one (no kernel booted twice) or with a baseline mean of 0.
///
/// The boot-level interval's own inputs: V_A = S²/m_A and V_C = S²/m_C (S² the floored,
/// pooled between-boot variance, m the boots of each kernel), and the first-order (delta
/// method) variance of 100·(c/a − 1): 100²·(V_C/a² + c²·V_A/a⁴). The delta method and not
/// Fieller's interval because a difference of two changes needs a variance, and Fieller
/// gives bounds; the two agree to first order (G. W. Snedecor and W. G. Cochran,
/// "Statistical Methods", 8th ed., §6.12, and Fieller 1954 for the exact ratio).
#[must_use]
pub fn change_variance(cmp: &Comparison) -> Option<ChangeVariance> {
    let boot = cmp.boot_variance.as_ref()?;
    let (a, c) = (cmp.baseline_mean, cmp.candidate_mean);
    if a == 0.0 || cmp.baseline_boots == 0 || cmp.candidate_boots == 0 {
        return None;
    }
    let v_a = boot.used / cmp.baseline_boots as f64;
    let v_c = boot.used / cmp.candidate_boots as f64;
    let a2 = a * a;
    Some(ChangeVariance {
        change_pct: cmp.change_pct,
        variance: 1e4 * (v_c / a2 + c * c * v_a / (a2 * a2)),
        dof: boot.dof,
    })
}

/// The confidence of the interval that decides whether two changes agree: 99%, not 95%.
///
/// A reproduction verdict must hold for every campaign pair of the same truth at least 95%
/// of the time (issue 18), cell by cell; a 95% interval rejects 5% of them by construction,
/// and 24 of the 288 cells of the simulator's short run landed below 95% (none beyond
/// Monte-Carlo noise). At 99% the false alarms are at most 1.9% of a cell in the full run
/// (bench/reproduction.rs, docs/report.md) and a difference of 2G is still found at quiet
/// noise; calling someone's published result NOT_REPRODUCED or DIFFERENT asks for that much.
pub const CONSISTENCY_LEVEL: f64 = 0.99;

/// The difference of two changes, new − reference, in percentage points, with its
/// [`CONSISTENCY_LEVEL`] interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeDifference {
    /// new change − reference change, percentage points.
    pub diff_pp: f64,
    /// Standard error of the difference: √(V_new + V_ref).
    pub se_pp: f64,
    /// Welch–Satterthwaite ν of the two variances.
    pub dof: f64,
    /// The [`CONSISTENCY_LEVEL`] interval of the difference, diff ± t_ν·se.
    pub bounds: (f64, f64),
}

impl ChangeDifference {
    /// The two changes agree: the interval contains 0.
    #[must_use]
    pub fn consistent(&self) -> bool {
        self.bounds.0 <= 0.0 && 0.0 <= self.bounds.1
    }
}

/// new − reference with a [`CONSISTENCY_LEVEL`] interval from both campaigns' boot-level
/// variances.
///
/// The campaigns are independent (different boots, usually different machines), so the
/// variances add; their ν combine by Welch–Satterthwaite, ν = (V₁+V₂)²/(V₁²/ν₁ + V₂²/ν₂)
/// (B. L. Welch, Biometrika 34, 1947), which errs on the wide side when both ν are small (two
/// A/B/A campaigns of equal noise: ν ∈ [1, 2] where the exact ν is 2). When both variances
/// are 0 the interval is the point and ν = ν₁ + ν₂ (any ν gives the same point).
#[must_use]
pub fn change_difference(new: &ChangeVariance, reference: &ChangeVariance) -> ChangeDifference {
    let diff_pp = new.change_pct - reference.change_pct;
    let total = new.variance + reference.variance;
    let dof = if total > 0.0 {
        total * total
            / (new.variance * new.variance / new.dof
                + reference.variance * reference.variance / reference.dof)
    } else {
        new.dof + reference.dof
    };
    let se_pp = total.sqrt();
    let half = t_quantile(0.5 + CONSISTENCY_LEVEL / 2.0, dof) * se_pp;
    ChangeDifference {
        diff_pp,
        se_pp,
        dof,
        bounds: (diff_pp - half, diff_pp + half),
    }
}

/// The reproduction verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ReproductionLabel {
    /// The same claim, and the two changes agree within their intervals.
    Reproduced,
    /// The same direction, but the changes differ beyond their intervals: a real difference
    /// between the machines or setups.
    Different,
    /// The reference's SIGNAL is not there, or reversed.
    NotReproduced,
    /// One of the campaigns claims nothing, or the two agree but cannot tell their claims
    /// apart.
    Inconclusive,
}

impl ReproductionLabel {
    /// Every label, in the order reports count them.
    pub const ALL: [ReproductionLabel; 4] = [
        ReproductionLabel::Reproduced,
        ReproductionLabel::Different,
        ReproductionLabel::NotReproduced,
        ReproductionLabel::Inconclusive,
    ];
}

impl fmt::Display for ReproductionLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Reproduced => "REPRODUCED",
            Self::Different => "DIFFERENT",
            Self::NotReproduced => "NOT_REPRODUCED",
            Self::Inconclusive => "INCONCLUSIVE",
        })
    }
}

/// One of the two campaigns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Which {
    /// The reference (the published result).
    Reference,
    /// The new campaign.
    New,
}

/// Why a campaign's verdict claims nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoClaim {
    /// UNSTABLE: a drift or CV limit tripped.
    Unstable,
    /// UNREPLICATED: no kernel was booted twice, boot-to-boot variation is unmeasured.
    Unreplicated,
    /// The boot-level interval is not estimable (the baseline's own boots differ too much
    /// for a ratio).
    NotEstimable,
}

/// Which rule decided the verdict: the row of the table in docs/report.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum Rule {
    /// INCONCLUSIVE: `side` claims nothing (the reference is checked first).
    NoClaim {
        /// The campaign.
        side: Which,
        /// Why.
        why: NoClaim,
    },
    /// REPRODUCED: both SIGNAL in the same direction, and the changes agree.
    BothSignal,
    /// REPRODUCED: neither is a SIGNAL and both changes are below the gate, and the changes
    /// agree.
    NeitherSignal,
    /// INCONCLUSIVE: the changes agree, but only `side` is a SIGNAL: the other campaign can
    /// neither confirm nor exclude it.
    OneSignal {
        /// The campaign with the SIGNAL.
        side: Which,
    },
    /// INCONCLUSIVE: the changes agree and neither is a SIGNAL, but `side`'s change is as
    /// large as the gate without being shown: two campaigns that show nothing do not
    /// reproduce "no material change".
    Unshown {
        /// The campaign whose change reaches the gate.
        side: Which,
    },
    /// DIFFERENT: both SIGNAL in the same direction, but the changes differ.
    SignalsApart,
    /// DIFFERENT: the new campaign shows a SIGNAL the reference did not, and the changes
    /// differ.
    NewSignal,
    /// DIFFERENT: neither is a SIGNAL, but the changes differ.
    BelowGateApart,
    /// NOT_REPRODUCED: the reference's SIGNAL is not a SIGNAL here, and the changes differ.
    SignalGone,
    /// NOT_REPRODUCED: both claim a direction (SIGNAL or BELOW_GATE), opposite ones.
    Reversed,
}

impl Rule {
    /// The rule's name, as the JSON output and the TSV spell it (`both_signal`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Rule::NoClaim { .. } => "no_claim",
            Rule::BothSignal => "both_signal",
            Rule::NeitherSignal => "neither_signal",
            Rule::OneSignal { .. } => "one_signal",
            Rule::Unshown { .. } => "unshown",
            Rule::SignalsApart => "signals_apart",
            Rule::NewSignal => "new_signal",
            Rule::BelowGateApart => "below_gate_apart",
            Rule::SignalGone => "signal_gone",
            Rule::Reversed => "reversed",
        }
    }

    /// The label this rule gives.
    #[must_use]
    pub fn label(self) -> ReproductionLabel {
        match self {
            Rule::NoClaim { .. } | Rule::OneSignal { .. } | Rule::Unshown { .. } => {
                ReproductionLabel::Inconclusive
            }
            Rule::BothSignal | Rule::NeitherSignal => ReproductionLabel::Reproduced,
            Rule::SignalsApart | Rule::NewSignal | Rule::BelowGateApart => {
                ReproductionLabel::Different
            }
            Rule::SignalGone | Rule::Reversed => ReproductionLabel::NotReproduced,
        }
    }
}

/// One campaign's comparison of a candidate with its baseline, and its verdict.
#[derive(Clone, Copy, Debug)]
pub struct Claim<'a> {
    /// The comparison (change, boot variance, boots).
    pub comparison: &'a Comparison,
    /// Its verdict under that campaign's own limits.
    pub verdict: &'a Verdict,
    /// That campaign's `gate_pct`.
    pub gate_pct: f64,
}

/// The reproduction verdict and what it rests on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReproductionVerdict {
    /// The label.
    pub label: ReproductionLabel,
    /// The rule that gave it.
    pub rule: Rule,
    /// new − reference with its interval; `None` when either campaign has no boot variance.
    pub difference: Option<ChangeDifference>,
    /// new change / reference change; `None` when the reference change is 0.
    pub ratio: Option<f64>,
}

/// The reproduction verdict of `new` against `reference`.
///
/// ```text
/// no claim   := UNSTABLE | UNREPLICATED | boot-level CI not estimable   (either side)
/// shown(X)   := the sign of X's change when X is SIGNAL or BELOW_GATE
/// consistent := the 99% interval of new − reference contains 0
/// verdict    := INCONCLUSIVE (no claim)
///             | NOT_REPRODUCED (shown(ref) = −shown(new): reversed)
///             | consistent:  both SIGNAL → REPRODUCED; one SIGNAL → INCONCLUSIVE;
///                            neither, both |change| < gate → REPRODUCED, else INCONCLUSIVE
///             | otherwise:   ref SIGNAL, new not → NOT_REPRODUCED; else DIFFERENT
/// ```
#[must_use]
pub fn reproduce(reference: Claim<'_>, new: Claim<'_>) -> ReproductionVerdict {
    let ratio = (reference.comparison.change_pct != 0.0)
        .then(|| new.comparison.change_pct / reference.comparison.change_pct);
    let variances = change_variance(reference.comparison).zip(change_variance(new.comparison));
    let difference = variances.map(|(r, n)| change_difference(&n, &r));
    let rule = rule(reference, new, difference.as_ref());
    ReproductionVerdict {
        label: rule.label(),
        rule,
        difference,
        ratio,
    }
}

fn rule(reference: Claim<'_>, new: Claim<'_>, difference: Option<&ChangeDifference>) -> Rule {
    for (side, claim) in [(Which::Reference, reference), (Which::New, new)] {
        if let Some(why) = no_claim(claim) {
            return Rule::NoClaim { side, why };
        }
    }
    let difference =
        difference.expect("invariant: a side without a change variance claims nothing (no_claim)");
    let (r, n) = (shown(reference), shown(new));
    if let (Some(r), Some(n)) = (r, n)
        && r != n
    {
        return Rule::Reversed;
    }
    let signal = |c: Claim<'_>| c.verdict.label == VerdictLabel::Signal;
    match (signal(reference), signal(new), difference.consistent()) {
        (true, true, true) => Rule::BothSignal,
        (false, false, true) => match [(Which::Reference, reference), (Which::New, new)]
            .into_iter()
            .find(|(_, c)| c.comparison.change_pct.abs() >= c.gate_pct)
        {
            Some((side, _)) => Rule::Unshown { side },
            None => Rule::NeitherSignal,
        },
        (true, false, true) => Rule::OneSignal {
            side: Which::Reference,
        },
        (false, true, true) => Rule::OneSignal { side: Which::New },
        (true, true, false) => Rule::SignalsApart,
        (true, false, false) => Rule::SignalGone,
        (false, true, false) => Rule::NewSignal,
        (false, false, false) => Rule::BelowGateApart,
    }
}

/// Why `claim` claims nothing; `None` when it is SIGNAL, BELOW_GATE or NO_MATERIAL_SIGNAL
/// with a bounded boot-level interval.
fn no_claim(claim: Claim<'_>) -> Option<NoClaim> {
    match claim.verdict.label {
        VerdictLabel::Unstable => Some(NoClaim::Unstable),
        VerdictLabel::Unreplicated => Some(NoClaim::Unreplicated),
        _ if matches!(
            claim.verdict.confidence,
            Confidence::BootCiNotEstimable { .. }
        ) =>
        {
            Some(NoClaim::NotEstimable)
        }
        _ if change_variance(claim.comparison).is_none() => Some(NoClaim::Unreplicated),
        _ => None,
    }
}

/// The direction a SIGNAL or BELOW_GATE claims: the sign of its change (`true` up).
fn shown(claim: Claim<'_>) -> Option<bool> {
    let change = claim.comparison.change_pct;
    matches!(
        claim.verdict.label,
        VerdictLabel::Signal | VerdictLabel::BelowGate
    )
    .then_some(change > 0.0)
    .filter(|_| change != 0.0)
}

#[cfg(test)]
mod tests {
    use super::{
        ChangeVariance, Claim, NoClaim, ReproductionLabel, Rule, Which, change_difference,
        change_variance, reproduce,
    };
    use crate::stats::{
        Better, BootPoint, VerdictInput, VerdictLabel, VerdictParams, compare::compare,
        kernel_summary, kernels_in_order, verdict,
    };

    fn point(label: &str, kernel: &str, mean: f64, sd: f64) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 9,
            sd: Some(sd),
        }
    }

    /// An A/B/A/B/A campaign: baseline boots `a`, candidate boots `b`, SD 0.3 per sample.
    fn campaign(a: [f64; 3], b: [f64; 2]) -> Vec<BootPoint> {
        vec![
            point("a-a", "a", a[0], 0.3),
            point("b-a", "b", b[0], 0.3),
            point("a-b", "a", a[1], 0.3),
            point("b-b", "b", b[1], 0.3),
            point("a-c", "a", a[2], 0.3),
        ]
    }

    /// Judges `points` as aba does (the drop-first check is the same comparison here).
    fn judged(points: &[BootPoint]) -> (crate::stats::Comparison, crate::stats::Verdict) {
        let cmp = compare(points, "b", "a").expect("both kernels");
        let kernels: Vec<_> = kernels_in_order(points)
            .iter()
            .filter_map(|k| kernel_summary(points, k))
            .collect();
        let v = verdict(
            &VerdictParams::default(),
            &VerdictInput {
                all: &cmp,
                drop_first: Some(&cmp),
                kernels: &kernels,
                max_cv_pct: points
                    .iter()
                    .filter_map(|p| Some(100.0 * p.sd? / p.mean))
                    .reduce(f64::max),
                cv_basis: None,
                better: Better::Lower,
                environment: &[],
                trend: None,
            },
        );
        (cmp, v)
    }

    fn claim<'a>(
        comparison: &'a crate::stats::Comparison,
        verdict: &'a crate::stats::Verdict,
    ) -> Claim<'a> {
        Claim {
            comparison,
            verdict,
            gate_pct: VerdictParams::default().gate_pct,
        }
    }

    #[track_caller]
    fn case(reference: &[BootPoint], new: &[BootPoint], want: Rule) {
        let (rc, rv) = judged(reference);
        let (nc, nv) = judged(new);
        let got = reproduce(claim(&rc, &rv), claim(&nc, &nv));
        assert_eq!(
            got.rule, want,
            "reference {} {:+.2}%, new {} {:+.2}%: {got:?}",
            rv.label, rc.change_pct, nv.label, nc.change_pct
        );
        assert_eq!(got.label, want.label());
        // The JSON spelling of the rule is its name.
        let json = serde_json::to_value(got.rule).expect("serialises");
        assert_eq!(json["rule"], want.name());
    }

    #[test]
    fn every_rule_of_the_table() {
        let base = [100.0, 100.2, 99.9];
        let quiet_20 = campaign(base, [120.0, 120.1]);
        // The same +20% SIGNAL twice: REPRODUCED.
        case(
            &quiet_20,
            &campaign([99.8, 100.0, 100.1], [120.2, 119.9]),
            Rule::BothSignal,
        );
        // +20% against +40%, both SIGNAL, far beyond their intervals: DIFFERENT.
        case(
            &quiet_20,
            &campaign(base, [140.0, 140.2]),
            Rule::SignalsApart,
        );
        // The +20% SIGNAL is gone (0%, tight): NOT_REPRODUCED.
        case(&quiet_20, &campaign(base, [100.1, 99.9]), Rule::SignalGone);
        // Reversed: +20% against −20%.
        case(&quiet_20, &campaign(base, [80.0, 80.1]), Rule::Reversed);
        // Two null results: REPRODUCED.
        let null = campaign(base, [100.1, 99.9]);
        case(
            &null,
            &campaign([100.1, 99.9, 100.0], [100.0, 100.2]),
            Rule::NeitherSignal,
        );
        // A null reference, a +20% SIGNAL here: DIFFERENT.
        case(&null, &quiet_20, Rule::NewSignal);
        // Two BELOW_GATE changes that differ: +2% against +4%.
        case(
            &campaign(base, [102.0, 102.1]),
            &campaign(base, [104.0, 104.1]),
            Rule::BelowGateApart,
        );
        // The reference's boots disagree by 3%: boot noise, not a broken measurement; both
        // +20% SIGNALs agree.
        case(
            &campaign([100.0, 103.0, 100.0], [120.0, 120.1]),
            &quiet_20,
            Rule::BothSignal,
        );
        // The reference's samples scatter by a CV over its limit: UNSTABLE, nothing to
        // reproduce.
        case(
            &campaign([100.0, 100.1, 100.05], [120.0, 120.1])
                .into_iter()
                .map(|p| BootPoint { sd: Some(5.0), ..p })
                .collect::<Vec<_>>(),
            &quiet_20,
            Rule::NoClaim {
                side: Which::Reference,
                why: NoClaim::Unstable,
            },
        );
    }

    #[test]
    fn agreeing_changes_where_only_one_side_is_a_signal_are_inconclusive() {
        // Reference: a clear +5.8% SIGNAL. New: +4.5%, below the gate, with boots that
        // differ by up to 0.9% (below max_drift_pct, so not UNSTABLE): its interval reaches
        // past the gate, so it is not shown to be below it either (NO_MATERIAL_SIGNAL), and
        // the two changes agree within their intervals.
        let reference = campaign([100.0, 100.05, 99.95], [105.8, 105.85]);
        let new = campaign([99.5, 100.5, 99.8], [104.9, 104.0]);
        case(
            &reference,
            &new,
            Rule::OneSignal {
                side: Which::Reference,
            },
        );
        case(&new, &reference, Rule::OneSignal { side: Which::New });
        // Neither is a SIGNAL, they agree, but the new change is as large as the gate: not a
        // reproduced "no material change".
        let wide = campaign([99.5, 100.5, 99.8], [105.9, 105.0]);
        case(
            &campaign([100.0, 100.05, 99.95], [103.5, 103.55]),
            &wide,
            Rule::Unshown { side: Which::New },
        );
    }

    #[test]
    fn plain_ab_claims_nothing() {
        let ab = vec![point("a", "a", 100.0, 0.3), point("b", "b", 120.0, 0.3)];
        let (cmp, v) = judged(&ab);
        assert_eq!(v.label, VerdictLabel::Unreplicated);
        assert_eq!(change_variance(&cmp), None);
        let (rc, rv) = judged(&campaign([100.0, 100.2, 99.9], [120.0, 120.1]));
        let got = reproduce(claim(&rc, &rv), claim(&cmp, &v));
        assert_eq!(
            got.rule,
            Rule::NoClaim {
                side: Which::New,
                why: NoClaim::Unreplicated
            }
        );
        assert_eq!(got.label, ReproductionLabel::Inconclusive);
        assert_eq!(got.difference, None);
        assert!((got.ratio.expect("reference change ≠ 0") - 1.0).abs() < 0.01);
    }

    #[test]
    fn the_change_variance_is_the_delta_method_of_the_boot_variance() {
        // A/B/A: S² from the baseline's two boots (ν = 1), floored at f₁·L.
        let points = vec![
            point("a-a", "a", 100.0, 1.0),
            point("b", "b", 110.0, 1.0),
            point("a-b", "a", 102.0, 1.0),
        ];
        let cmp = compare(&points, "b", "a").expect("both");
        let used = cmp.boot_variance.as_ref().expect("ν = 1").used;
        assert!(
            (used - 2.0).abs() < 1e-12,
            "S² = ((100-101)² + (102-101)²)/1"
        );
        let v = change_variance(&cmp).expect("boot variance");
        let (a, c) = (101.0_f64, 110.0_f64);
        let want = 1e4 * (used / (a * a) + c * c * (used / 2.0) / a.powi(4));
        assert!((v.variance - want).abs() < 1e-9, "{} vs {want}", v.variance);
        assert_eq!(v.dof, 1.0);
    }

    #[test]
    fn welch_satterthwaite_combines_the_two_variances() {
        let one = ChangeVariance {
            change_pct: 10.0,
            variance: 4.0,
            dof: 1.0,
        };
        let other = ChangeVariance {
            change_pct: 12.0,
            variance: 4.0,
            dof: 1.0,
        };
        let d = change_difference(&other, &one);
        assert!((d.diff_pp - 2.0).abs() < 1e-12);
        assert!((d.se_pp - 8f64.sqrt()).abs() < 1e-12);
        // Equal variances and ν: (4+4)²/(16+16) = 2.
        assert!((d.dof - 2.0).abs() < 1e-12);
        // t₂(0.995) = 9.925: [2 − 28.07, 2 + 28.07] contains 0.
        assert!(d.consistent());
        assert!((d.bounds.1 - (2.0 + 9.924_843 * 8f64.sqrt())).abs() < 1e-4);
        // One variance dominates: ν tends to its own.
        let tight = ChangeVariance {
            variance: 1e-6,
            dof: 30.0,
            ..other.clone()
        };
        let d = change_difference(&tight, &one);
        assert!((d.dof - 1.0).abs() < 1e-3, "{}", d.dof);
        // Both exactly known: the interval is the point, and a non-zero difference is a
        // difference.
        let exact = |change_pct| ChangeVariance {
            change_pct,
            variance: 0.0,
            dof: 1.0,
        };
        let d = change_difference(&exact(3.0), &exact(1.0));
        assert_eq!((d.bounds, d.dof), ((2.0, 2.0), 2.0));
        assert!(!d.consistent());
        assert!(change_difference(&exact(1.0), &exact(1.0)).consistent());
    }
}
