//! Units scaled for reading (issue 15 §7): 22387915 ns reads as 22.39 ms. Only a time unit
//! is rescaled (`ns`, `us`/`µs`, `ms`, `s`, also as the numerator of `ns/read`); any other
//! unit is printed as the recipe gives it, because aba cannot know what `locks/5s` or
//! `% of reserved` scale to. The one place that decides a display unit, for the plot's axis
//! and for any text that prints a value with its unit.

use crate::report::number::{fixed, mean_decimals};

/// A display unit: divide a value in the recipe's unit by `factor` to print it in `unit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// Recipe unit per display unit (1000 for ns shown as µs).
    pub factor: f64,
    /// The unit to print (`ms/read`); the recipe's own when it is not a time.
    pub unit: String,
}

impl Scale {
    /// `value` in the display unit.
    #[must_use]
    pub fn apply(&self, value: f64) -> f64 {
        value / self.factor
    }
}

/// Time prefixes as powers of ten of a second, smallest first, with their spelling.
const TIME: [(i32, &str); 4] = [(-9, "ns"), (-6, "µs"), (-3, "ms"), (0, "s")];

/// The power of ten of a second that a time unit's spelling stands for.
fn time_exponent(unit: &str) -> Option<i32> {
    match unit {
        "ns" => Some(-9),
        "us" | "µs" | "μs" => Some(-6),
        "ms" => Some(-3),
        "s" => Some(0),
        _ => None,
    }
}

/// The display unit for values of about `magnitude` (the largest absolute value to show) in
/// `unit`: the time prefix that puts `magnitude` in [1, 1000) where one exists (never below
/// ns nor above s), else `unit` itself with factor 1. A non-finite or zero magnitude keeps
/// the recipe's unit.
#[must_use]
pub fn scale_for(unit: &str, magnitude: f64) -> Scale {
    let unscaled = Scale {
        factor: 1.0,
        unit: unit.to_owned(),
    };
    let (head, per) = unit.find('/').map_or((unit, ""), |i| unit.split_at(i));
    let Some(base) = time_exponent(head) else {
        return unscaled;
    };
    let magnitude = magnitude.abs();
    if !magnitude.is_finite() || magnitude == 0.0 {
        return unscaled;
    }
    // Exponent of the magnitude in seconds, rounded down to a multiple of 3.
    let exponent = base + magnitude.log10().floor() as i32;
    let wanted = exponent.div_euclid(3) * 3;
    let (target, spelling) = TIME
        .iter()
        .copied()
        .find(|(e, _)| *e == wanted.clamp(-9, 0))
        .unwrap_or((base, head));
    Scale {
        factor: 10f64.powi(target - base),
        unit: format!("{spelling}{per}"),
    }
}

/// `value` (in the recipe's unit) printed in `scale`, its series' one display unit
/// ([`display_scale`]), so prose reads in the unit of the table and the plot (issue 29: one
/// metric, one unit): `22.39 ms`, `454.00 ns/read`, `-8282.72 ns/read`; a unit that is not a
/// time keeps the recipe's spelling and the decimals of the mails' tables (`1234.500
/// ops/s`), and an empty unit prints the number alone.
#[must_use]
pub fn with_unit(value: f64, scale: &Scale) -> String {
    let shown = scale.apply(value);
    let time = time_exponent(scale.unit.split('/').next().unwrap_or("")).is_some();
    let number = if time {
        fixed(shown, 2)
    } else {
        fixed(shown, mean_decimals([shown]))
    };
    if scale.unit.is_empty() {
        number
    } else {
        format!("{number} {}", scale.unit)
    }
}

/// `with_unit` with an explicit sign: `+0.65 ns/read`, `-454.00 ns`.
#[must_use]
pub fn signed_with_unit(value: f64, scale: &Scale) -> String {
    let text = with_unit(value, scale);
    let number = text.split(' ').next().unwrap_or("");
    if text.starts_with('-') || number.bytes().all(|b| b == b'0' || b == b'.') {
        text
    } else {
        format!("+{text}")
    }
}

/// The display scale of a column or table of `values` in `unit`: the time prefix of its
/// smallest nonzero magnitude, so that no value of the table drops below 1 in the display
/// unit and loses digits (8547.294 and 264.575 ns stay in ns; 92008 and 80171 ns read as
/// 92.008 and 80.171 µs).
#[must_use]
pub fn scale_for_table(unit: &str, values: impl IntoIterator<Item = f64>) -> Scale {
    let smallest = values
        .into_iter()
        .map(f64::abs)
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    scale_for(unit, smallest)
}

/// The display unit of every series of `analysis` in `unit`: chosen once, by
/// [`scale_for_table`] over their point means, and used by every output that prints their
/// values with a unit (report.txt's table of means, the plot's title, axis and means), so a
/// metric never reads in two units.
#[must_use]
pub fn display_scale(analysis: &crate::analysis::Analysis, unit: &str) -> Scale {
    scale_for_table(
        unit,
        analysis
            .series
            .iter()
            .filter(|s| s.unit == unit)
            .flat_map(|s| s.points.iter().map(|p| p.all.mean)),
    )
}

#[cfg(test)]
mod tests {
    use super::{scale_for, scale_for_table, signed_with_unit, with_unit};

    #[test]
    fn prose_values_carry_their_display_unit() {
        let at = |value: f64, unit: &str| scale_for(unit, value);
        assert_eq!(with_unit(22_387_915.0, &at(22_387_915.0, "ns")), "22.39 ms");
        assert_eq!(with_unit(454.0, &at(454.0, "ns")), "454.00 ns");
        assert_eq!(signed_with_unit(0.65, &at(0.65, "ns")), "+0.65 ns");
        assert_eq!(signed_with_unit(0.0, &at(0.0, "ns")), "0.00 ns");
        assert_eq!(with_unit(1234.5, &at(1234.5, "ops/s")), "1234.500 ops/s");
        assert_eq!(with_unit(2.5, &at(2.5, "")), "2.500");
        // The mail's sysctl reads: its table stays in ns (264.575 ns would read 0.265 µs), so
        // the prose does too, where a per-value scale said 8.56 µs/read beside it.
        let table = scale_for_table("ns/read", [8547.294, 264.575]);
        assert_eq!(with_unit(8_561.8, &table), "8561.80 ns/read");
        assert_eq!(signed_with_unit(-8_283.0, &table), "-8283.00 ns/read");
    }

    #[test]
    fn a_table_is_scaled_by_its_smallest_value() {
        let kept = scale_for_table("ns/read", [8547.294, 264.575, 0.0]);
        assert_eq!((kept.factor, kept.unit.as_str()), (1.0, "ns/read"));
        let scaled = scale_for_table("ns/roundtrip", [92_008.0, 80_171.9]);
        assert_eq!(scaled.unit, "µs/roundtrip");
        assert_eq!(format!("{:.3}", scaled.apply(80_171.944)), "80.172");
        assert_eq!(scale_for_table("ns", []).unit, "ns");
    }

    fn shown(unit: &str, value: f64) -> (String, String) {
        let s = scale_for(unit, value);
        (format!("{:.2}", s.apply(value)), s.unit)
    }

    #[test]
    fn times_scale_to_three_integer_digits_at_most() {
        assert_eq!(shown("ns", 22_387_915.0), ("22.39".into(), "ms".into()));
        assert_eq!(shown("ns/read", 454.0), ("454.00".into(), "ns/read".into()));
        assert_eq!(shown("ns/read", 1454.0), ("1.45".into(), "µs/read".into()));
        assert_eq!(shown("us", 0.5), ("500.00".into(), "ns".into()));
        assert_eq!(shown("ms", 2500.0), ("2.50".into(), "s".into()));
        assert_eq!(shown("s", 86_400.0), ("86400.00".into(), "s".into()));
        assert_eq!(shown("ns", 0.25), ("0.25".into(), "ns".into()));
        assert_eq!(shown("us/op", -3200.0), ("-3.20".into(), "ms/op".into()));
    }

    #[test]
    fn other_units_and_odd_magnitudes_are_kept() {
        assert_eq!(shown("locks/5s", 12_000.0).1, "locks/5s");
        assert_eq!(shown("% of reserved", 95.0).1, "% of reserved");
        assert_eq!(shown("", 1e9).1, "");
        assert_eq!(scale_for("ns", f64::NAN).factor, 1.0);
        assert_eq!(scale_for("ns", 0.0).unit, "ns");
        assert_eq!(scale_for("ns", f64::INFINITY).unit, "ns");
    }
}
