//! How numbers are printed (STATISTICS.md 3.7): rounding happens here and only here, from
//! unrounded doubles, with Rust's correctly rounded `format!`.
//!
//! - TSV: 6 decimals, `-0.000000` printed as `0.000000`.
//! - Prose: percentages with 2 decimals and an explicit sign for changes.
//! - Bounds ("at most …"): the 2-decimal ceiling, so the printed bound is never below the
//!   value it bounds.

/// `value` with `decimals` decimals; a result that reads as negative zero loses its sign.
#[must_use]
pub fn fixed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_owned(),
        _ => text,
    }
}

/// Significant digits a TSV number may show: a double holds 15 decimal digits exactly
/// (DBL_DIG); a 17th or 16th digit is representation noise, not data.
pub const TSV_DIGITS: i32 = 15;

/// 6 decimals for TSV files, fewer when the value has more than 9 integer digits so that no
/// more than [`TSV_DIGITS`] significant digits are printed (a variance of 1.2e13 gets 1
/// decimal, not 6 that carry noise); `-` for a value that does not exist (never 0).
#[must_use]
pub fn tsv(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| fixed(v, tsv_decimals(v)))
}

/// Decimals for `value` in a TSV file: 6, or fewer so that at most [`TSV_DIGITS`]
/// significant digits are printed.
#[must_use]
pub fn tsv_decimals(value: f64) -> usize {
    if !value.is_finite() || value == 0.0 {
        return 6;
    }
    let integer_digits = value.abs().log10().floor() as i32 + 1;
    (TSV_DIGITS - integer_digits).clamp(0, 6) as usize
}

/// A signed percentage with 2 decimals: `+39.77%`, `-0.83%`, `0.00%`.
#[must_use]
pub fn signed_pct(value: f64) -> String {
    let text = fixed(value, 2);
    if text.starts_with('-') || text.bytes().all(|b| b == b'0' || b == b'.') {
        format!("{text}%")
    } else {
        format!("+{text}%")
    }
}

/// An unsigned percentage with 2 decimals: `1.95%`.
#[must_use]
pub fn pct(value: f64) -> String {
    format!("{}%", fixed(value, 2))
}

/// The smallest 2-decimal number ≥ `value`, printed: the honest "at most" of a bound.
///
/// `format!` rounds correctly, so the rounded text is the ceiling whenever it is not below
/// `value`; otherwise the ceiling is one hundredth above it. A value within 10⁻⁹ (relative)
/// above a 2-decimal number is that number plus floating-point error (100·0.2/100 computes
/// as 0.2000000000000003), not a reason to print the next hundredth.
#[must_use]
pub fn ceil2(value: f64) -> String {
    let rounded = fixed(value, 2);
    let parsed: f64 = rounded
        .parse()
        .expect("invariant: a formatted float parses");
    if parsed >= value - 1e-9 * value.abs().max(1.0) {
        rounded
    } else {
        fixed(parsed + 0.01, 2)
    }
}

/// Decimals for a column of means: 3 (like the mails' tables) for magnitudes from 1 to 10⁵,
/// fewer for larger values, more (up to 6) below 1 so small values keep 4 significant digits.
#[must_use]
pub fn mean_decimals(values: impl IntoIterator<Item = f64>) -> usize {
    let max = values
        .into_iter()
        .map(f64::abs)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    if max == 0.0 {
        return 3;
    }
    let magnitude = max.log10().floor();
    if magnitude >= 5.0 {
        // 100000.0 → 2 decimals, 1e6 → 1, 1e7 and above → 0.
        (7.0 - magnitude).clamp(0.0, 3.0) as usize
    } else if magnitude >= 0.0 {
        3
    } else {
        (3.0 - magnitude).clamp(3.0, 6.0) as usize
    }
}

/// Degrees of freedom ν: an integer when it is one, else one decimal (Welch–Satterthwaite).
#[must_use]
pub fn nu(dof: f64) -> String {
    if dof.fract() == 0.0 && dof.abs() < 1e9 {
        format!("{dof:.0}")
    } else {
        fixed(dof, 1)
    }
}

/// `value` with 3 significant digits (`0.00103`, `0.141`, `1.00`), for factors in prose.
#[must_use]
pub fn significant(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return fixed(value, 2);
    }
    let magnitude = value.abs().log10().floor();
    let decimals = (2.0 - magnitude).clamp(0.0, 12.0) as usize;
    fixed(value, decimals)
}

/// A value printed with the shortest text that round-trips (`39.77`, `0.005`), for numbers
/// the user wrote in the recipe.
#[must_use]
pub fn as_written(value: f64) -> String {
    let text = value.to_string();
    if text == "-0" { "0".to_owned() } else { text }
}

/// `max_drift_pct 1 -> 2`, `max_drift_pct none -> 0.5`: a limit edited after the run, as every
/// report words it.
#[must_use]
pub fn limit_edit_words(edit: &crate::analysis::model::LimitEdit) -> String {
    let value = |v: Option<f64>| v.map_or_else(|| "not set".to_owned(), as_written);
    format!("{} {} -> {}", edit.name, value(edit.then), value(edit.now))
}

#[cfg(test)]
mod tests {
    use super::{as_written, ceil2, fixed, mean_decimals, nu, pct, signed_pct, significant, tsv};

    #[test]
    fn negative_zero_loses_its_sign() {
        assert_eq!(fixed(-0.0000001, 6), "0.000000");
        assert_eq!(fixed(-0.0000006, 6), "-0.000001");
        assert_eq!(tsv(None), "-");
        assert_eq!(tsv(Some(39.773_716_4)), "39.773716");
        assert_eq!(signed_pct(-0.001), "0.00%");
        assert_eq!(signed_pct(39.773_716), "+39.77%");
        assert_eq!(signed_pct(-0.826), "-0.83%");
        assert_eq!(pct(1.949_012), "1.95%");
    }

    #[test]
    fn tsv_never_prints_digits_a_double_does_not_hold() {
        // Means of the golden data keep their 6 decimals (at most 6 integer digits).
        assert_eq!(tsv(Some(17_352.416_666_666_67)), "17352.416667");
        assert_eq!(tsv(Some(123_456_789.123_456_7)), "123456789.123457");
        // A variance around 1e13 has 14 integer digits: one decimal, 15 significant digits.
        assert_eq!(tsv(Some(12_345_678_901_234.567)), "12345678901234.6");
        assert_eq!(tsv(Some(-1.234_567_890_123_456_7e15)), "-1234567890123457");
        assert_eq!(tsv(Some(0.0)), "0.000000");
        assert_eq!(tsv(Some(1e-9)), "0.000000");
    }

    #[test]
    fn ceilings_never_understate() {
        assert_eq!(ceil2(0.874_126), "0.88");
        assert_eq!(ceil2(0.34), "0.34");
        assert_eq!(ceil2(0.340_001), "0.35");
        assert_eq!(ceil2(0.200_000_000_000_002_8), "0.20");
        assert_eq!(ceil2(0.0), "0.00");
        assert_eq!(ceil2(1.999), "2.00");
    }

    #[test]
    fn decimals_follow_magnitude() {
        assert_eq!(mean_decimals([8547.294, 264.575]), 3);
        assert_eq!(mean_decimals([0.264]), 4);
        assert_eq!(mean_decimals([0.00123]), 6);
        assert_eq!(mean_decimals([123_456.0]), 2);
        assert_eq!(mean_decimals([12_345_678.0]), 0);
        assert_eq!(mean_decimals([]), 3);
        assert_eq!(as_written(39.77), "39.77");
        assert_eq!(as_written(0.005), "0.005");
        assert_eq!((nu(1.0), nu(36.04)), ("1".to_owned(), "36.0".to_owned()));
        assert_eq!(significant(0.001_03), "0.00103");
        assert_eq!(significant(0.141_4), "0.141");
        assert_eq!(significant(1.0), "1.00");
    }
}
