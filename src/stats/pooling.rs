//! A noise profile's boot variance pooled with a campaign's own (issue 10 §2).
//!
//! An A/B/A learns its boot-to-boot variance from one difference (ν = 1); a profile measured
//! many boots of the same kernel on the same machine. When the campaign's own between-boot
//! variance is compatible with the profile's, the two estimates are pooled as two independent
//! estimates of one variance: S² = (ν_p·S_p² + ν_c·S_c²)/(ν_p + ν_c), ν = ν_p + ν_c (the
//! Kalibera–Jones S₂² with the profile's boots as further boots of the baseline). A campaign
//! whose own variance is far above the profile's ("noisier than its calibration") is not
//! pooled: the upper-tail F test F = S_c²/S_p² with (ν_c, ν_p) degrees of freedom and
//! [`HOMOGENEITY_ALPHA`] decides, and the campaign is then judged on its own boots alone.
//!
//! Variances travel between a profile and a campaign relative to the square of the mean (the
//! profile stores S_p²/mean_p²): the same machine's boot noise is a fraction of the level,
//! and a baseline whose level moved by a percent keeps its calibration.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::stats::{
    interval::{BootVariance, boot_variance},
    kernel::{BootPoint, kernel_mean},
    summary::compensated_sum,
};

/// Level of the homogeneity test: a campaign whose own between-boot variance is this unlikely
/// under the profile's is "noisier than its calibration" and not pooled. 1%, so that a
/// campaign as noisy as its calibration is refused 1 time in 100 (bench/profiles.rs measures
/// it), while a campaign three times as noisy is caught at ν_c ≥ 3.
pub const HOMOGENEITY_ALPHA: f64 = 0.01;

/// What a noise profile knows of one series' boot-to-boot variance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BootPrior {
    /// S_p²/mean_p²: the between-boot variance of the profile's point means, relative to the
    /// square of its mean.
    pub rel_var: f64,
    /// ν_p = boots − 1.
    pub dof: f64,
}

/// The homogeneity test of a campaign's own between-boot variance against its profile's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Homogeneity {
    /// F = S_c²/S_p² (both relative to their means squared).
    pub f: f64,
    /// ν_c, the numerator's degrees of freedom.
    pub own_dof: f64,
    /// ν_p, the denominator's.
    pub prior_dof: f64,
    /// Upper-tail p-value.
    pub p_value: f64,
    /// p < [`HOMOGENEITY_ALPHA`]: noisier than its calibration, not pooled.
    pub noisier: bool,
}

/// How a comparison used a noise profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pooling {
    /// The profile's variance of a boot mean in the campaign's units: rel_var · baseline
    /// mean².
    pub prior_var: f64,
    /// ν_p.
    pub prior_dof: f64,
    /// The campaign's own S_B²; `None` when no kernel was booted twice.
    pub own_var: Option<f64>,
    /// ν_c (0 when no kernel was booted twice).
    pub own_dof: f64,
    /// The test; `None` when ν_c = 0 (nothing to test: the profile alone is used).
    pub homogeneity: Option<Homogeneity>,
    /// The boot variance is the pooled one (false: noisier than its calibration).
    pub pooled: bool,
}

/// Tests whether a campaign's own relative between-boot variance `own_rel` (ν = `own_dof`)
/// is compatible with `prior`'s.
#[must_use]
pub fn homogeneity(own_rel: f64, own_dof: f64, prior: &BootPrior) -> Homogeneity {
    let f = if prior.rel_var > 0.0 {
        own_rel / prior.rel_var
    } else if own_rel > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let p_value = match FisherSnedecor::new(own_dof, prior.dof) {
        Ok(dist) if f.is_finite() => dist.sf(f),
        _ if f == 0.0 => 1.0,
        _ => 0.0,
    };
    Homogeneity {
        f,
        own_dof,
        prior_dof: prior.dof,
        p_value,
        noisier: p_value < HOMOGENEITY_ALPHA,
    }
}

/// What within-boot noise alone makes the variance of one boot mean, on average over the
/// campaign's points: L = mean_j s_j²/n_j; `None` when some point lacks an SD.
fn within_floor(points: &[BootPoint]) -> Option<f64> {
    let terms = points
        .iter()
        .map(|p| Some(p.sd.filter(|_| p.n >= 2)?.powi(2) / p.n as f64))
        .collect::<Option<Vec<f64>>>()?;
    (!terms.is_empty()).then(|| compensated_sum(terms.iter().copied()) / terms.len() as f64)
}

/// The boot variance of a comparison against `baseline` with a noise profile: the pooled one
/// when the campaign's own is compatible (or absent), else the campaign's own. Floored like
/// the campaign's own ([`crate::stats::floor_factor`] at the pooled ν, with L the mean within-boot variance
/// of a point mean). `None` when the baseline is absent, its mean is 0, or the profile is
/// refused and the campaign has no boot variance of its own.
#[must_use]
pub fn pooled_boot_variance(
    points: &[BootPoint],
    baseline: &str,
    prior: &BootPrior,
) -> Option<(Option<BootVariance>, Pooling)> {
    let a = kernel_mean(points, baseline)?;
    if a == 0.0 {
        return None;
    }
    let own = boot_variance(points);
    let prior_var = prior.rel_var * a * a;
    let (own_var, own_dof) = own
        .as_ref()
        .map_or((None, 0.0), |v| (Some(v.between), v.dof));
    let test = own_var.map(|v| homogeneity(v / (a * a), own_dof, prior));
    let noisier = test.as_ref().is_some_and(|t| t.noisier);
    let pooling = Pooling {
        prior_var,
        prior_dof: prior.dof,
        own_var,
        own_dof,
        homogeneity: test,
        pooled: !noisier,
    };
    if noisier {
        return Some((own, pooling));
    }
    let dof = prior.dof + own_dof;
    let between = (prior.dof * prior_var + own_var.map_or(0.0, |v| own_dof * v)) / dof;
    let variance = BootVariance::floored_at(between, dof, within_floor(points));
    Some((Some(variance), pooling))
}

#[cfg(test)]
mod tests {
    use super::{BootPrior, HOMOGENEITY_ALPHA, homogeneity, pooled_boot_variance};
    use crate::stats::kernel::BootPoint;

    fn point(label: &str, kernel: &str, mean: f64) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 9,
            sd: Some(0.3),
        }
    }

    fn aba(a1: f64, b: f64, a2: f64) -> Vec<BootPoint> {
        vec![
            point("a-a", "a", a1),
            point("b", "b", b),
            point("a-b", "a", a2),
        ]
    }

    #[test]
    fn degrees_of_freedom_add_and_variances_pool_by_them() {
        // A1, A2 = 99, 101: own S_B² = 2 (ν = 1); the profile: 1% boot SD of 5 boots, i.e.
        // relative 1e-4, at a baseline mean of 100 a variance of 1 (ν = 5).
        let prior = BootPrior {
            rel_var: 1e-4,
            dof: 5.0,
        };
        let (variance, pooling) =
            pooled_boot_variance(&aba(99.0, 110.0, 101.0), "a", &prior).expect("baseline");
        let variance = variance.expect("pooled");
        assert!(pooling.pooled);
        assert_eq!(variance.dof, 6.0);
        assert!((pooling.prior_var - 1.0).abs() < 1e-12);
        assert_eq!(pooling.own_var, Some(2.0));
        assert!((variance.between - (5.0 * 1.0 + 2.0) / 6.0).abs() < 1e-12);
        let test = pooling.homogeneity.expect("ν_c = 1");
        assert!((test.f - 2.0).abs() < 1e-9 && !test.noisier);
    }

    #[test]
    fn a_campaign_far_noisier_than_its_calibration_is_not_pooled() {
        // A1, A2 = 90, 110: own S_B² = 200, 200 times the profile's 1.
        let prior = BootPrior {
            rel_var: 1e-4,
            dof: 5.0,
        };
        let (variance, pooling) =
            pooled_boot_variance(&aba(90.0, 100.0, 110.0), "a", &prior).expect("baseline");
        assert!(!pooling.pooled);
        let test = pooling.homogeneity.expect("tested");
        assert!(test.noisier && test.p_value < HOMOGENEITY_ALPHA, "{test:?}");
        // The campaign's own variance, unpooled.
        let own = variance.expect("own boots");
        assert_eq!((own.between, own.dof), (200.0, 1.0));
    }

    #[test]
    fn without_a_repeated_kernel_the_profile_alone_gives_the_boot_variance() {
        let prior = BootPrior {
            rel_var: 4e-4,
            dof: 9.0,
        };
        let points = vec![point("a", "a", 100.0), point("b", "b", 103.0)];
        let (variance, pooling) = pooled_boot_variance(&points, "a", &prior).expect("baseline");
        let variance = variance.expect("from the profile");
        assert_eq!((variance.dof, pooling.homogeneity), (9.0, None));
        assert!((variance.between - 4.0).abs() < 1e-12 && pooling.pooled);
    }

    #[test]
    fn the_f_test_matches_its_distribution() {
        let prior = BootPrior {
            rel_var: 1.0,
            dof: 5.0,
        };
        // F(1, 5) upper 1% point is 16.258: just below it passes, just above fails.
        assert!(!homogeneity(16.2, 1.0, &prior).noisier);
        assert!(homogeneity(16.3, 1.0, &prior).noisier);
        assert_eq!(homogeneity(0.0, 1.0, &prior).p_value, 1.0);
        let zero = BootPrior {
            rel_var: 0.0,
            dof: 5.0,
        };
        assert!(homogeneity(1.0, 1.0, &zero).noisier);
        assert!(!homogeneity(0.0, 1.0, &zero).noisier);
    }
}
