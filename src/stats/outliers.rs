//! Robust outlier flags for the samples of one point (STATISTICS.md 3.2), and the median
//! they are measured from.
//!
//! Two rules, both based on the median absolute deviation (MAD):
//! - Iglewicz & Hoaglin (1993), "How to Detect and Handle Outliers": modified
//!   z = 0.6745·(x − median)/MAD, flagged when |z| > 3.5.
//! - hyperfine's lenient rule (`src/outlier_detection.rs`, `OUTLIER_THRESHOLD = 1.4826 * 10`):
//!   |x − median|/MAD > 14.826, i.e. more than ten robust SDs away.
//!
//! Flags are reported, never used to drop data: every raw sample reaches the journal, the CSV
//! and the statistics. When MAD = 0 (more than half the values are equal, common with
//! integer-valued metrics) the scores are undefined and nothing is flagged.

use serde::Serialize;

/// Iglewicz–Hoaglin constant: 0.6745 is the 0.75 quantile of the standard normal, so
/// 0.6745·(x − median)/MAD is a z-score under normality.
pub const MODIFIED_Z_SCALE: f64 = 0.6745;

/// Iglewicz–Hoaglin flag threshold for |modified z|.
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// hyperfine's threshold on |x − median|/MAD: 1.4826 turns the MAD into an SD estimate under
/// normality, and 10 is the number of SDs.
pub const LENIENT_THRESHOLD: f64 = 1.4826 * 10.0;

/// Outlier flags of one point's values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outliers {
    /// median|x − median|; `None` when there are no values.
    pub mad: Option<f64>,
    /// Indices flagged by the modified z rule (|z| > 3.5).
    pub modified_z: Vec<usize>,
    /// Indices flagged by hyperfine's lenient rule.
    pub lenient: Vec<usize>,
}

/// Median of `values`, `None` when empty.
///
/// Hyndman–Fan type 7 (R's default, numpy's `linear`): with the values sorted and
/// h = (n−1)·0.5, the median interpolates between the two order statistics around h. For the
/// median this is the textbook rule (the middle value, or the mean of the two middle values),
/// and types 4–9 all agree on it; the type is stated because STATISTICS.md 3.2 asks for it.
#[must_use]
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    // The order statistics a full sort would put at `mid - 1` and `mid`, found by selection
    // (linear time; the same values under the same total order).
    let mut scratch = values.to_vec();
    let mid = scratch.len() / 2;
    let (lower, &mut upper, _) = scratch.select_nth_unstable_by(mid, f64::total_cmp);
    Some(if values.len() % 2 == 1 {
        upper
    } else {
        let below = lower
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .expect("invariant: an even count >= 2 leaves values below the middle");
        f64::midpoint(below, upper)
    })
}

/// Median absolute deviation median|x − median| (unscaled), `None` when `values` is empty.
#[must_use]
pub fn mad(values: &[f64]) -> Option<f64> {
    let center = median(values)?;
    let deviations: Vec<f64> = values.iter().map(|x| (x - center).abs()).collect();
    median(&deviations)
}

/// Modified z-scores 0.6745·(x − median)/MAD in value order; `None` when empty or MAD = 0.
#[must_use]
pub fn modified_z_scores(values: &[f64]) -> Option<Vec<f64>> {
    let center = median(values)?;
    let mad = mad(values)?;
    (mad > 0.0).then(|| {
        values
            .iter()
            .map(|x| MODIFIED_Z_SCALE * (x - center) / mad)
            .collect()
    })
}

/// Flags outliers in `values` by both rules.
pub(crate) fn detect(values: &[f64]) -> Outliers {
    let mad = mad(values);
    let (Some(center), Some(spread)) = (median(values), mad) else {
        return Outliers {
            mad,
            modified_z: Vec::new(),
            lenient: Vec::new(),
        };
    };
    if spread <= 0.0 {
        return Outliers {
            mad,
            modified_z: Vec::new(),
            lenient: Vec::new(),
        };
    }
    let flagged = |limit: f64, scale: f64| -> Vec<usize> {
        values
            .iter()
            .enumerate()
            .filter(|(_, x)| (scale * (*x - center) / spread).abs() > limit)
            .map(|(i, _)| i)
            .collect()
    };
    Outliers {
        mad,
        modified_z: flagged(MODIFIED_Z_THRESHOLD, MODIFIED_Z_SCALE),
        lenient: flagged(LENIENT_THRESHOLD, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::{detect, mad, median, modified_z_scores};

    #[test]
    fn mad_zero_flags_nothing() {
        let values = [23.0, 23.0, 23.0, 40.0];
        assert_eq!(mad(&values), Some(0.0));
        assert_eq!(modified_z_scores(&values), None);
        let flags = detect(&values);
        assert!(flags.modified_z.is_empty() && flags.lenient.is_empty());
    }

    #[test]
    fn lenient_rule_is_stricter_to_trip() {
        // median 10, MAD 1: 15 has z = 3.37 (not flagged), 16 has z = 4.05 (flagged by the
        // modified z rule only), 30 is 20 MADs away (flagged by both).
        let values = [
            9.0, 10.0, 11.0, 9.0, 10.0, 11.0, 15.0, 16.0, 30.0, 10.0, 10.0,
        ];
        let flags = detect(&values);
        assert_eq!(flags.mad, Some(1.0));
        assert_eq!(flags.modified_z, vec![7, 8]);
        assert_eq!(flags.lenient, vec![8]);
    }

    #[test]
    fn empty_input() {
        assert_eq!(mad(&[]), None);
        assert_eq!(detect(&[]).mad, None);
    }

    #[test]
    fn median_is_type_7() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7.0]), Some(7.0));
    }

    /// Selection finds exactly the values a full sort would (ties, signed zeros, many sizes).
    #[test]
    fn median_matches_the_sorted_definition() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for n in 1..200 {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match x % 5 {
                        0 => 0.0,
                        1 => -0.0,
                        _ => f64::from(u32::try_from(x % 1000).expect("small")) / 8.0,
                    }
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let mid = n / 2;
            let expected = if n % 2 == 1 {
                sorted[mid]
            } else {
                f64::midpoint(sorted[mid - 1], sorted[mid])
            };
            let got = median(&values).expect("not empty");
            assert_eq!(got.to_bits(), expected.to_bits(), "n = {n}");
        }
    }
}
