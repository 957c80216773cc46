//! Descriptive statistics of one point (one fresh boot): n, mean, SD, CV, min, max, median,
//! MAD and outlier flags (STATISTICS.md 3.2).
//!
//! Owns the summation and the SD definition that the golden figures depend on. It does not
//! validate samples: non-finite values must be rejected by the samples layer, with file and
//! line, before they get here (STATISTICS.md 3.9); a NaN passed in propagates into the result.

use serde::Serialize;

use crate::stats::outliers::{self, median};

/// Which denominator the SD uses.
///
/// Every published source uses `n − 1` except one historical CSV
/// (`mprotect-release-window`), which used the population SD; `N` exists only so that file's
/// published CVs can be reproduced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SdDenominator {
    /// Sample SD, √(Σ(x−x̄)²/(n−1)): aba's definition.
    #[default]
    NMinus1,
    /// Population SD, √(Σ(x−x̄)²/n): only for reproducing historical figures.
    N,
}

/// Summary of the measured values x₁..xₙ of one point, in measurement order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean Σx/n, with a compensated sum.
    pub mean: f64,
    /// Standard deviation (two-pass); `None` when it is undefined (n = 1 with `n − 1`), which
    /// the report prints as `-`, never as 0.
    pub sd: Option<f64>,
    /// Coefficient of variation 100·sd/mean in percent; `None` when sd is undefined or the
    /// mean is 0.
    pub cv_pct: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Median, Hyndman–Fan type 7 (see [`median`]).
    pub median: f64,
    /// Median absolute deviation median|x − median| (unscaled); `None` when n < 2, because a
    /// single value has no spread to report.
    pub mad: Option<f64>,
    /// Indices of values with |modified z| > 3.5 (Iglewicz–Hoaglin). Flagged, never dropped.
    pub outliers: Vec<usize>,
    /// Indices of values with |x − median| > 10·1.4826·MAD (hyperfine's lenient rule).
    pub lenient_outliers: Vec<usize>,
    /// The first measured value is flagged by the modified z rule (hyperfine's
    /// `SlowInitialRun`, in either direction); it motivates the drop-first check.
    pub first_is_outlier: bool,
}

/// Summarizes `values` with the sample SD (`n − 1`); `None` when `values` is empty.
#[must_use]
pub fn summarize(values: &[f64]) -> Option<Summary> {
    summarize_with(values, SdDenominator::NMinus1)
}

/// Summarizes `values` with the given SD denominator; `None` when `values` is empty.
#[must_use]
pub fn summarize_with(values: &[f64], denominator: SdDenominator) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = compensated_sum(values.iter().copied()) / n as f64;
    let divisor = match denominator {
        SdDenominator::NMinus1 => n - 1,
        SdDenominator::N => n,
    };
    // Two-pass: summing squared deviations from the mean avoids the cancellation of
    // Σx² − n·x̄², which matters for values like 17352.417 with small spread.
    let sd = (divisor > 0).then(|| {
        let squares = compensated_sum(values.iter().map(|x| (x - mean) * (x - mean)));
        (squares / divisor as f64).sqrt()
    });
    let cv_pct = sd.and_then(|sd| (mean != 0.0).then(|| 100.0 * sd / mean));
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let median = median(values).expect("invariant: values is not empty");
    let flags = outliers::detect(values);
    Some(Summary {
        n,
        mean,
        sd,
        cv_pct,
        min,
        max,
        median,
        mad: if n < 2 { None } else { flags.mad },
        first_is_outlier: flags.modified_z.first() == Some(&0),
        outliers: flags.modified_z,
        lenient_outliers: flags.lenient,
    })
}

/// Neumaier's compensated sum: like Kahan's, but also exact when a term is larger than the
/// running sum. STATISTICS.md 3.2 asks for a compensated or pairwise sum, so the mean does not
/// depend on the order or number of samples beyond the last bit.
pub(crate) fn compensated_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut sum = 0.0_f64;
    let mut compensation = 0.0_f64;
    for x in values {
        let t = sum + x;
        if sum.abs() >= x.abs() {
            compensation += (sum - t) + x;
        } else {
            compensation += (x - t) + sum;
        }
        sum = t;
    }
    sum + compensation
}

/// Mean of `values` with a compensated sum, `None` when empty.
pub(crate) fn compensated_mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut count = 0_usize;
    let sum = compensated_sum(values.into_iter().inspect(|_| count += 1));
    (count > 0).then(|| sum / count as f64)
}

#[cfg(test)]
mod tests {
    use super::{SdDenominator, compensated_sum, summarize, summarize_with};

    /// exact-cac1 parent-a, published as mean 38.133333, sd 0.743223, cv 1.949012.
    const PARENT_A: [f64; 15] = [
        37.0, 38.0, 38.0, 38.0, 39.0, 37.0, 39.0, 37.0, 38.0, 39.0, 38.0, 38.0, 39.0, 39.0, 38.0,
    ];

    #[test]
    fn reproduces_published_point() {
        let s = summarize(&PARENT_A).expect("not empty");
        assert_eq!(s.n, 15);
        assert_eq!(format!("{:.6}", s.mean), "38.133333");
        assert_eq!(format!("{:.6}", s.sd.expect("n > 1")), "0.743223");
        assert_eq!(format!("{:.6}", s.cv_pct.expect("mean != 0")), "1.949012");
        assert_eq!((s.min, s.max, s.median), (37.0, 39.0, 38.0));
        assert_eq!(s.mad, Some(1.0));
        assert!(s.outliers.is_empty());
    }

    #[test]
    fn population_sd_for_the_historical_csv() {
        let s = summarize_with(&[37.0, 36.0, 37.0], SdDenominator::N).expect("not empty");
        let expected = (2.0_f64 / 9.0).sqrt();
        assert!((s.sd.expect("n > 0") - expected).abs() < 1e-12);
        let one = summarize_with(&[5.0], SdDenominator::N).expect("not empty");
        assert_eq!(one.sd, Some(0.0));
    }

    #[test]
    fn edge_cases() {
        assert!(summarize(&[]).is_none());
        let one = summarize(&[4.0]).expect("not empty");
        assert_eq!((one.sd, one.cv_pct, one.mad), (None, None, None));
        let flat = summarize(&[23.0; 15]).expect("not empty");
        assert_eq!(format!("{:.6}", flat.cv_pct.expect("defined")), "0.000000");
        let zero = summarize(&[-1.0, 1.0]).expect("not empty");
        assert_eq!(zero.cv_pct, None);
    }

    #[test]
    fn compensated_sum_keeps_small_terms() {
        assert_eq!(compensated_sum([1.0, 1e100, 1.0, -1e100]), 2.0);
    }

    #[test]
    fn first_value_outlier_is_flagged() {
        let values = [30.0, 9.0, 10.0, 11.0, 10.0, 9.0, 11.0, 10.0, 9.0, 11.0];
        let s = summarize(&values).expect("not empty");
        assert_eq!(s.mad, Some(1.0));
        assert!(s.first_is_outlier);
        assert_eq!(s.outliers, vec![0]);
        assert_eq!(s.lenient_outliers, vec![0]);
    }
}
