//! The trend test of a campaign's boot means: does the measurement drift over the campaign?
//!
//! Why this and not the compared kernels' boot spread (docs/statistics.md §5.2): a stability
//! rule that reads how far a kernel's boots lie apart keeps exactly the campaigns whose boots
//! happened to agree, whose boot variance is then too small, so SIGNAL among the kept ones is
//! wrong far more often than 5 % at high boot noise. The F statistic of a linear time trend
//! against the remaining boot scatter is scale-free: under the model of §0 (normal boot and
//! within noise, no drift) it is independent of the kernel means and of the total boot
//! scatter (a ratio of independent χ² parts is independent of their sum), so rejecting on it
//! selects nothing that the interval or the change depend on. Its false alarm rate is its
//! level at every boot SD.
//!
//! Model: point i (boot order t_i = i) of kernel k(i) has mean y_i = μ_k(i) + β·t_i + ε_i.
//! Fitting each kernel's mean leaves residuals r_i and within-kernel centred times s_i; the
//! trend takes SS_trend = (Σ r·s)² / Σ s² of the residual sum of squares SS_0 = Σ r², and
//! F = SS_trend / ((SS_0 − SS_trend) / (N − k − 1)) ~ F(1, N − k − 1).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::stats::kernel::BootPoint;

/// The level of the trend test: a campaign whose boot means follow a linear time trend with
/// p below it is UNSTABLE. 2 %, not 5 %: with the CV test ([`crate::stats::verdict::CV_ALPHA`])
/// the false UNSTABLE of a campaign must stay under 5 % (issue 28), and in a palindrome a
/// linear drift cancels in the change anyway, so the test guards the interval, not the sign.
pub const TREND_ALPHA: f64 = 0.02;

/// The smallest ν (points − kernels) at which the test is made: with ν = 1 (A/B/A) nothing is
/// left after fitting a trend, and with ν = 2 (A/B/B/A) one degree of freedom is left, too
/// few to tell a trend from two boots that differ.
pub const TREND_MIN_NU: usize = 3;

/// The result of the trend test over one analysis' points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trend {
    /// F(1, dof).
    pub f: f64,
    /// Its denominator degrees of freedom, N − k − 1.
    pub dof: usize,
    /// Upper-tail p-value.
    pub p_value: f64,
    /// The fitted slope per point, in percent of the mean of the point means (signed).
    pub slope_pct_per_point: f64,
}

impl Trend {
    /// p < [`TREND_ALPHA`].
    #[must_use]
    pub fn significant(&self) -> bool {
        self.p_value < TREND_ALPHA
    }
}

/// The trend test over `points` in boot order; `None` when ν = points − kernels is below
/// [`TREND_MIN_NU`] or a mean is not finite.
#[must_use]
pub fn trend_test(points: &[BootPoint]) -> Option<Trend> {
    let mut kernels: Vec<&str> = Vec::new();
    for p in points {
        if !kernels.contains(&p.kernel.as_str()) {
            kernels.push(&p.kernel);
        }
    }
    let n = points.len();
    let nu = n.checked_sub(kernels.len())?;
    if nu < TREND_MIN_NU || points.iter().any(|p| !p.mean.is_finite()) {
        return None;
    }
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for kernel in &kernels {
        let mine: Vec<(f64, f64)> = points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kernel == *kernel)
            .map(|(i, p)| (i as f64, p.mean))
            .collect();
        let m = mine.len() as f64;
        let t_bar = mine.iter().map(|(t, _)| t).sum::<f64>() / m;
        let y_bar = mine.iter().map(|(_, y)| y).sum::<f64>() / m;
        for (t, y) in mine {
            sxy += (t - t_bar) * (y - y_bar);
            sxx += (t - t_bar) * (t - t_bar);
            syy += (y - y_bar) * (y - y_bar);
        }
    }
    let dof = nu - 1;
    let level = points.iter().map(|p| p.mean).sum::<f64>() / n as f64;
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let slope_pct_per_point = if level != 0.0 {
        100.0 * slope / level.abs()
    } else {
        f64::NAN
    };
    let ss_trend = if sxx > 0.0 { sxy * sxy / sxx } else { 0.0 };
    let ss_rest = (syy - ss_trend).max(0.0);
    // Identical means (no scatter at all) show no trend; a trend that leaves no scatter is as
    // strong as a trend can be.
    let (f, p_value) = if ss_trend <= 0.0 {
        (0.0, 1.0)
    } else if ss_rest <= f64::EPSILON * syy {
        (f64::INFINITY, 0.0)
    } else {
        let f = ss_trend / (ss_rest / dof as f64);
        let p = FisherSnedecor::new(1.0, dof as f64).map_or(f64::NAN, |d| d.sf(f));
        (f, p)
    };
    Some(Trend {
        f,
        dof,
        p_value,
        slope_pct_per_point,
    })
}

#[cfg(test)]
mod tests {
    use super::{TREND_ALPHA, trend_test};
    use crate::stats::kernel::BootPoint;

    fn points(design: &str, means: &[f64]) -> Vec<BootPoint> {
        design
            .split('/')
            .zip(means)
            .enumerate()
            .map(|(i, (k, &mean))| BootPoint {
                label: format!("{k}{i}"),
                kernel: k.to_owned(),
                mean,
                n: 9,
                sd: Some(0.1),
            })
            .collect()
    }

    #[test]
    fn aba_and_abba_have_no_test() {
        assert!(trend_test(&points("a/b/a", &[1.0, 2.0, 3.0])).is_none());
        assert!(trend_test(&points("a/b/b/a", &[1.0, 2.0, 3.0, 4.0])).is_none());
    }

    #[test]
    fn a_clean_linear_drift_is_flagged_and_its_slope_is_measured() {
        // A/B/A/B/A with a = 100, b = 110 and +1 per point, plus a little scatter.
        let t = trend_test(&points(
            "a/b/a/b/a",
            &[100.0, 111.02, 101.97, 113.01, 104.0],
        ))
        .expect("nu = 3");
        assert_eq!(t.dof, 2);
        assert!(t.p_value < TREND_ALPHA, "{t:?}");
        assert!(t.significant());
        assert!(
            (t.slope_pct_per_point - 0.95).abs() < 0.1,
            "{}",
            t.slope_pct_per_point
        );
    }

    #[test]
    fn scatter_without_a_trend_is_not_flagged() {
        // a's boots go up, down, up: no line through them.
        let t =
            trend_test(&points("a/b/a/b/a", &[100.0, 110.0, 103.0, 110.5, 100.2])).expect("nu = 3");
        assert!(t.p_value > 0.2, "{t:?}");
        assert!(!t.significant());
    }

    #[test]
    fn identical_means_show_no_trend() {
        let t = trend_test(&points("a/b/a/b/a", &[1.0, 2.0, 1.0, 2.0, 1.0])).expect("nu = 3");
        assert_eq!(t.p_value, 1.0);
    }

    #[test]
    fn the_f_statistic_does_not_depend_on_the_scale_or_the_kernel_means() {
        let base = [100.0, 111.02, 101.97, 113.01, 104.0];
        let scaled: Vec<f64> = base.iter().map(|v| v * 7.0).collect();
        let a = trend_test(&points("a/b/a/b/a", &base)).expect("nu");
        let b = trend_test(&points("a/b/a/b/a", &scaled)).expect("nu");
        assert!((a.f - b.f).abs() < 1e-9 * a.f);
        let shifted = [100.0, 211.02, 101.97, 213.01, 104.0];
        let c = trend_test(&points("a/b/a/b/a", &shifted)).expect("nu");
        assert!((a.f - c.f).abs() < 1e-9 * a.f);
    }
}
