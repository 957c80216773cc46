//! A panel's value axis: the range the samples span, and "nice" ticks (1, 2 or 5 × 10^k)
//! in the display unit ([`crate::report::unit_scale`]), so a reader sees `22.385 ms` steps
//! rather than `22385000` ns. Non-finite values never reach it, and it never makes more than
//! [`MAX_TICKS`] ticks whatever the input.

use crate::report::{number::fixed, unit_scale::Scale};

/// Ticks one axis may carry at most (about five are asked for).
pub const MAX_TICKS: usize = 12;

/// A value axis: its display unit and labelled ticks.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The display unit of the tick labels.
    pub scale: Scale,
    /// Each tick: its value in the recipe's unit and its label in the display unit.
    pub ticks: Vec<(f64, String)>,
}

/// The finite range of `values`, padded by 8% each way; a single value or equal values get
/// a range of ±1% around them (±1 around 0), no values the range 0 to 1.
#[must_use]
pub fn padded_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
        lo -= pad;
        hi += pad;
    }
    let pad = (hi - lo) * 0.08;
    let padded = (lo - pad, hi + pad);
    if padded.0.is_finite() && padded.1.is_finite() && padded.1 > padded.0 {
        padded
    } else {
        (lo, hi)
    }
}

/// The smallest "nice" tick step (1, 2 or 5 × 10^k) that cuts `range` into at most seven
/// steps (four to eight ticks); `None` for a range that is not a positive finite number.
#[must_use]
pub fn tick_step(range: f64) -> Option<f64> {
    if !(range.is_finite() && range > 0.0) {
        return None;
    }
    let raw = range / 7.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw)
        .unwrap_or(10.0 * magnitude);
    (step.is_finite() && step > 0.0).then_some(step)
}

/// A tick's label: as many decimals as the step needs, or shortest exponent form for steps
/// of a million and more (a count of 10^12 is `2e12`, not thirteen digits).
fn tick_label(value: f64, step: f64) -> String {
    if step >= 1e6 {
        return if value == 0.0 {
            "0".to_owned()
        } else {
            format!("{value:e}")
        };
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 15.0) as usize;
    fixed(value, decimals)
}

/// The axis from `lo` to `hi` (recipe unit), labelled in `scale`: the metric's display unit
/// ([`crate::report::unit_scale::display_scale`]), the one its title and report.txt use.
#[must_use]
pub fn axis(lo: f64, hi: f64, scale: Scale) -> Axis {
    let (slo, shi) = (scale.apply(lo), scale.apply(hi));
    let mut ticks = Vec::new();
    if let Some(step) = tick_step(shi - slo) {
        let first = (slo / step).ceil();
        for i in 0..MAX_TICKS {
            let tick = (first + i as f64) * step;
            // Half a step's millionth of slack: 0.1 + 0.2 must not drop the last tick.
            if tick > shi + step * 1e-6 {
                break;
            }
            ticks.push((tick * scale.factor, tick_label(tick, step)));
        }
    }
    Axis { scale, ticks }
}

#[cfg(test)]
mod tests {
    use super::{MAX_TICKS, axis, padded_range, tick_step};
    use crate::report::unit_scale::scale_for;

    /// The axis of `lo` to `hi` in the scale their own magnitude asks for.
    fn axis_of(lo: f64, hi: f64, unit: &str) -> super::Axis {
        axis(lo, hi, scale_for(unit, lo.abs().max(hi.abs())))
    }

    fn labels(lo: f64, hi: f64, unit: &str) -> (Vec<String>, String) {
        let a = axis_of(lo, hi, unit);
        (a.ticks.into_iter().map(|(_, l)| l).collect(), a.scale.unit)
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(tick_step(10.0), Some(2.0));
        assert_eq!(tick_step(17.0), Some(5.0));
        assert_eq!(tick_step(50.0), Some(10.0));
        assert_eq!(tick_step(115.0), Some(20.0));
        assert!((tick_step(0.03).unwrap_or(0.0) - 0.005).abs() < 1e-12);
        assert_eq!(tick_step(0.0), None);
        assert_eq!(tick_step(-1.0), None);
        assert_eq!(tick_step(f64::NAN), None);
        assert_eq!(tick_step(f64::INFINITY), None);
    }

    #[test]
    fn ticks_are_scaled_to_the_unit_a_reader_wants() {
        assert_eq!(
            labels(22_380_000.0, 22_400_000.0, "ns"),
            (
                ["22.380", "22.385", "22.390", "22.395", "22.400"]
                    .map(String::from)
                    .to_vec(),
                "ms".to_owned()
            )
        );
        assert_eq!(
            labels(400.0, 520.0, "ns/read").0,
            ["400", "420", "440", "460", "480", "500", "520"]
        );
        assert_eq!(labels(400.0, 520.0, "ns/read").1, "ns/read");
        assert_eq!(labels(0.0, 3.0, "locks/5s").1, "locks/5s");
    }

    #[test]
    fn edge_cases_still_make_an_axis() {
        // One value, or all equal: ±1% around it.
        let (lo, hi) = padded_range([500.0]);
        assert!(lo < 500.0 && hi > 500.0);
        assert!(!labels(lo, hi, "ns").0.is_empty());
        assert_eq!(padded_range([0.0, 0.0]), (-1.16, 1.16));
        // Nothing finite: 0 to 1.
        assert_eq!(padded_range([f64::NAN, f64::INFINITY]), (0.0, 1.0));
        assert_eq!(padded_range([]), (0.0, 1.0));
        // Negative values keep their sign and a minus zero reads 0.
        let (l, _) = labels(-10.0, 10.0, "");
        assert_eq!(l, ["-10", "-5", "0", "5", "10"]);
        // A huge range: a handful of ticks in exponent form.
        let (l, _) = labels(0.0, 4e12, "grants");
        assert_eq!(l, ["0", "1e12", "2e12", "3e12", "4e12"]);
        // Degenerate ranges make no ticks and never loop.
        assert!(axis_of(1.0, 1.0, "ns").ticks.is_empty());
        assert!(axis_of(f64::NAN, 1.0, "ns").ticks.is_empty());
        assert!(axis_of(-f64::MAX, f64::MAX, "").ticks.len() <= MAX_TICKS);
    }
}
