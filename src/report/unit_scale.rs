//! Units scaled for reading (issue 15 §7): 22387915 ns reads as 22.39 ms. Only a time unit
//! is rescaled (`ns`, `us`/`µs`, `ms`, `s`, also as the numerator of `ns/read`); any other
//! unit is printed as the recipe gives it, because aba cannot know what `locks/5s` or
//! `% of reserved` scale to. The one place that decides a display unit, for the plot's axis
//! and for any text that prints a value with its unit.

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

#[cfg(test)]
mod tests {
    use super::scale_for;

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
