//! The change a design can detect (issue 10 §3): the smallest true change whose boot-level
//! 95% interval excludes 0 with 80% power, from the variance of one boot mean and the
//! degrees of freedom that variance will be known with.
//!
//! With V the variance of one boot mean relative to the mean squared, m_A and m_C the boots of
//! the baseline and the candidate, the change estimate has the relative standard error
//! SE = √(V·(1/m_A + 1/m_C)) (the small-change form of the Fieller interval the verdict uses).
//! The interval excludes 0 when |Δ̂|/(SE·√W) > t_{0.975,ν}, W ~ χ²_ν/ν being how far the
//! estimated variance falls from the true one, so the power at a true Δ = δ·SE is
//! E_W[Φ(δ − t√W) + Φ(−δ − t√W)], the noncentral-t power (J. Cohen, Statistical Power
//! Analysis, 1988, ch. 2); the detectable change solves it for 80%. (The usual shortcut
//! δ = t_{0.975,ν} + t_{0.80,ν} is close from ν ≈ 6 on, but gives 73% at ν = 1 and 77% at
//! ν = 2, by simulation.) bench/profiles.rs checks, through aba's own analysis, how often a
//! true change of that size is resolved.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

use crate::stats::interval::t_quantile;

/// The power the minimal detectable change is quoted at.
pub const POWER: f64 = 0.80;

/// The variance of one boot mean with `n` samples, relative to the mean squared, from the
/// boot-level variance component T² and the within-boot variance s_W² (both relative): the
/// Kalibera–Jones model T² + s_W²/n.
#[must_use]
pub fn boot_mean_rel_var(boot_rel: f64, within_rel: f64, n: u32) -> f64 {
    boot_rel + within_rel / f64::from(n.max(1))
}

/// The minimal detectable change in percent of a design with `baseline_boots` and
/// `candidate_boots`, a relative boot-mean variance `rel_var` known with `dof` degrees of
/// freedom; `None` when it does not exist (ν ≤ 0, a kernel not booted, a variance that is
/// not a finite non-negative number).
#[must_use]
pub fn minimal_detectable_pct(
    rel_var: f64,
    baseline_boots: usize,
    candidate_boots: usize,
    dof: f64,
) -> Option<f64> {
    if baseline_boots == 0 || candidate_boots == 0 || dof.is_nan() || dof <= 0.0 {
        return None;
    }
    if !rel_var.is_finite() || rel_var < 0.0 {
        return None;
    }
    let share = 1.0 / baseline_boots as f64 + 1.0 / candidate_boots as f64;
    let pct = 100.0 * standardized_effect(dof)? * (rel_var * share).sqrt();
    pct.is_finite().then_some(pct)
}

/// The smallest change in percent `cmp` could have detected with [`POWER`] at its own
/// measured noise: its boot-level variance (floored and pooled as its interval uses it) and
/// its boots; `None` without a boot-level variance or with a baseline mean of 0.
#[must_use]
pub fn detectable_at_measured_noise(cmp: &crate::stats::Comparison) -> Option<f64> {
    let boot = cmp.boot_variance.as_ref()?;
    let rel_var = relative(boot.used, cmp.baseline_mean)?;
    minimal_detectable_pct(rel_var, cmp.baseline_boots, cmp.candidate_boots, boot.dof)
}

/// A longer campaign of the same alternation that would detect `target_pct` with [`POWER`]
/// at `cmp`'s measured noise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LongerDesign {
    /// Boots of the two compared kernels, the campaign's own included.
    pub boots: usize,
    /// Boots of the baseline.
    pub baseline_boots: usize,
    /// Boots of the candidate.
    pub candidate_boots: usize,
    /// The change that design detects, percent (≤ the target).
    pub detectable_pct: f64,
}

/// The most pairs [`longer_design`] adds before it gives up: 40 boots more than a night
/// holds.
const MAX_MORE_PAIRS: usize = 20;

/// The fewest baseline/candidate pairs appended to `cmp`'s campaign (A/B/A → A/B/A/B/A → …,
/// each pair adding two degrees of freedom to the boot variance) whose detectable change at
/// the measured noise is at most `target_pct`; `None` when no such design of up to
/// [`MAX_MORE_PAIRS`] more pairs exists or the noise is unknown. The measured variance is
/// taken as the truth: a projection, as the printed words say.
#[must_use]
pub fn longer_design(cmp: &crate::stats::Comparison, target_pct: f64) -> Option<LongerDesign> {
    let boot = cmp.boot_variance.as_ref()?;
    let rel_var = relative(boot.used, cmp.baseline_mean)?;
    let own_boots = cmp.baseline_boots + cmp.candidate_boots;
    (1..=MAX_MORE_PAIRS).find_map(|k| {
        let (a, c) = (cmp.baseline_boots + k, cmp.candidate_boots + k);
        let pct = minimal_detectable_pct(rel_var, a, c, boot.dof + 2.0 * k as f64)?;
        (pct <= target_pct).then_some(LongerDesign {
            boots: own_boots + 2 * k,
            baseline_boots: a,
            candidate_boots: c,
            detectable_pct: pct,
        })
    })
}

/// `variance / mean²`; `None` at a mean of 0 or a variance that is not finite.
fn relative(variance: f64, mean: f64) -> Option<f64> {
    let rel = variance / (mean * mean);
    (mean != 0.0 && rel.is_finite()).then_some(rel)
}

/// Points of the χ²_ν/ν distribution at the midpoints of 400 equal-probability slices: the
/// expectation over W is their mean.
const SLICES: usize = 400;

/// δ: the true change, in standard errors, that a two-sided 5% t test with `dof` degrees of
/// freedom detects with [`POWER`]; `None` when it cannot be computed. Memoized per ν: the
/// advice tries a few designs, each with one or two ν.
fn standardized_effect(dof: f64) -> Option<f64> {
    thread_local! {
        static MEMO: std::cell::RefCell<Vec<(u64, Option<f64>)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = dof.to_bits();
    if let Some(d) = MEMO.with(|m| m.borrow().iter().find(|(k, _)| *k == key).map(|(_, d)| *d)) {
        return d;
    }
    let d = solve_effect(dof);
    MEMO.with(|m| m.borrow_mut().push((key, d)));
    d
}

/// Bisection for [`standardized_effect`] on the power (monotone in δ).
fn solve_effect(dof: f64) -> Option<f64> {
    let normal = Normal::new(0.0, 1.0).expect("invariant: the standard normal is valid");
    let t = t_quantile(0.975, dof);
    if !t.is_finite() {
        return None;
    }
    let roots: Vec<f64> = if dof > 1e4 {
        vec![1.0]
    } else {
        let chi = ChiSquared::new(dof).ok()?;
        (0..SLICES)
            .map(|i| (chi.inverse_cdf((i as f64 + 0.5) / SLICES as f64) / dof).sqrt())
            .collect()
    };
    let power = |delta: f64| {
        roots
            .iter()
            .map(|r| normal.cdf(delta - t * r) + normal.cdf(-delta - t * r))
            .sum::<f64>()
            / roots.len() as f64
    };
    // Power grows with δ; it is below 80% at 0 and above it well past t + z_0.8·4.
    let (mut lo, mut hi) = (0.0, t + 4.0 * t_quantile(POWER, dof).max(1.0) + 10.0);
    if power(hi) < POWER {
        return None;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if power(mid) < POWER {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::{boot_mean_rel_var, minimal_detectable_pct};

    #[test]
    fn detectable_change_of_an_aba_with_a_profile() {
        // Boot SD 1% (V = 1e-4), A/B/A (m_A = 2, m_C = 1) known with ν = 6: δ solves the
        // noncentral-t power, 3.367 standard errors (a Monte-Carlo of (Z + δ)/√(χ²₆/6) with
        // 400,000 draws gives power 0.800 there), so 3.367·1%·√1.5 = 4.12%, just above the
        // shortcut (2.447 + 0.906)·√1.5 = 4.11%.
        let pct = minimal_detectable_pct(1e-4, 2, 1, 6.0).expect("defined");
        assert!((pct - 4.124).abs() < 0.005, "{pct}");
        // ν = 1: far above the shortcut (12.71 + 1.38)·√1.5, which has 73% power.
        let one = minimal_detectable_pct(1e-4, 2, 1, 1.0).expect("defined");
        assert!(one > 1.1 * (12.706 + 1.376) * 1.5_f64.sqrt(), "{one}");
        // Many degrees of freedom: the normal value, (1.960 + 0.842)·√1.5 = 3.43%.
        let normal = minimal_detectable_pct(1e-4, 2, 1, 1e6).expect("defined");
        assert!((normal - 3.432).abs() < 0.005, "{normal}");
        // ν = 1, the campaign alone: t = 12.71 + 1.38, three and a half times as much.
        let alone = minimal_detectable_pct(1e-4, 2, 1, 1.0).expect("defined");
        assert!(alone > 3.4 * pct, "{alone} {pct}");
        // More boots of both kernels shrink it.
        assert!(minimal_detectable_pct(1e-4, 4, 3, 11.0).expect("defined") < pct);
    }

    #[test]
    fn undefined_designs_have_none() {
        assert_eq!(minimal_detectable_pct(1e-4, 2, 0, 6.0), None);
        assert_eq!(minimal_detectable_pct(1e-4, 2, 1, 0.0), None);
        assert_eq!(minimal_detectable_pct(f64::NAN, 2, 1, 6.0), None);
        assert_eq!(minimal_detectable_pct(-1.0, 2, 1, 6.0), None);
    }

    #[test]
    fn more_samples_only_shrink_the_within_part() {
        assert!((boot_mean_rel_var(1e-4, 9e-4, 9) - 2e-4).abs() < 1e-18);
        assert!(boot_mean_rel_var(1e-4, 9e-4, 1000) > 1e-4);
    }
}
