//! The change a design can detect (issue 10 §3): the smallest true change whose boot-level
//! 95% interval excludes 0 with 80% power, from the variance of one boot mean and the
//! degrees of freedom that variance will be known with.
//!
//! With V the variance of one boot mean relative to the mean squared, m_A and m_C the boots of
//! the baseline and the candidate, the change estimate has the relative standard error
//! SE = √(V·(1/m_A + 1/m_C)) (the small-change form of the Fieller interval the verdict uses),
//! and a two-sided 5% test at ν degrees of freedom reaches power 1 − β at
//! Δ = (t_{0.975,ν} + t_{1−β,ν})·SE (the usual normal-approximation sample-size formula with
//! t quantiles; J. Cohen, Statistical Power Analysis, 1988, ch. 2). bench/profiles.rs checks
//! by simulation, through aba's own analysis, that a true change of that size is resolved
//! about 80% of the time.

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
    let t = t_quantile(0.975, dof) + t_quantile(POWER, dof);
    let pct = 100.0 * t * (rel_var * share).sqrt();
    pct.is_finite().then_some(pct)
}

#[cfg(test)]
mod tests {
    use super::{boot_mean_rel_var, minimal_detectable_pct};

    #[test]
    fn detectable_change_of_an_aba_with_a_profile() {
        // Boot SD 1% (V = 1e-4), A/B/A (m_A = 2, m_C = 1) known with ν = 6:
        // (2.447 + 0.906)·1%·√1.5 = 4.11%.
        let pct = minimal_detectable_pct(1e-4, 2, 1, 6.0).expect("defined");
        assert!((pct - 4.106).abs() < 0.01, "{pct}");
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
