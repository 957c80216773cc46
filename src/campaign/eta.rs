//! The time a running campaign has left, from the durations of the points this run has
//! measured and never from the plan's guesses: `aba check`'s ETA counts a boot and every
//! setup command without an `estimate` at a default, which made a 15 s quickstart read
//! 1 m 24 s (issue 29 item 6). Before a point is done nothing is measured, and the ETA says
//! so; within a point it counts down by the time the point has already taken.

use std::time::{Duration, Instant};

/// What the progress display says of the time left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eta {
    /// No point of this run is done yet: nothing measured to count from.
    Unknown,
    /// The mean measured point duration times the points left, less what the point under way
    /// has already taken.
    Left(Duration),
    /// The point under way has taken longer than the measured mean, so its own rest is not
    /// known; `after` is what the points after it should take.
    Overrun {
        /// The points after the current one, at the measured mean.
        after: Duration,
    },
}

impl std::fmt::Display for Eta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Eta::Unknown => f.write_str("after the first point"),
            Eta::Left(d) => f.write_str(&super::plan::format_eta(*d)),
            Eta::Overrun { after } if after.is_zero() => f.write_str("this point (over its mean)"),
            Eta::Overrun { after } => write!(
                f,
                "this point (over its mean) + {}",
                super::plan::format_eta(*after)
            ),
        }
    }
}

/// The durations of the points done in this run and the start of the one under way.
#[derive(Debug, Default)]
pub struct PointClock {
    measured: Vec<Duration>,
    current: Option<Instant>,
}

impl PointClock {
    /// An attempt at a point starts now; a failed attempt's time is never measured.
    pub fn point_started(&mut self) {
        self.current = Some(Instant::now());
    }

    /// The point under way is done: its duration, now measured.
    pub fn point_done(&mut self) -> Duration {
        let took = self.current.take().map_or(Duration::ZERO, |t| t.elapsed());
        self.measured.push(took);
        took
    }

    /// The time left for `points_left` points not done yet, the one under way included.
    pub fn remaining(&self, points_left: usize) -> Eta {
        remaining(
            &self.measured,
            points_left,
            self.current.map(|t| t.elapsed()),
        )
    }
}

/// The time left for `points_left` points (the one under way, `into_current` old, included)
/// at the mean of `measured`.
pub fn remaining(measured: &[Duration], points_left: usize, into_current: Option<Duration>) -> Eta {
    let Ok(n) = u32::try_from(measured.len()) else {
        return Eta::Unknown;
    };
    if n == 0 {
        return Eta::Unknown;
    }
    let mean = measured.iter().sum::<Duration>() / n;
    let times = |k: usize| mean.saturating_mul(u32::try_from(k).unwrap_or(u32::MAX));
    match into_current {
        Some(into) if points_left > 0 => {
            let after = times(points_left - 1);
            match mean.checked_sub(into) {
                Some(rest) => Eta::Left(after.saturating_add(rest)),
                None => Eta::Overrun { after },
            }
        }
        _ => Eta::Left(times(points_left)),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Eta, remaining};

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn nothing_measured_is_unknown_never_a_guess() {
        assert_eq!(remaining(&[], 5, None), Eta::Unknown);
        assert_eq!(remaining(&[], 5, Some(S(3))), Eta::Unknown);
        assert_eq!(Eta::Unknown.to_string(), "after the first point");
    }

    #[test]
    fn the_mean_of_measured_points_times_the_points_left() {
        assert_eq!(remaining(&[S(10), S(20)], 3, None), Eta::Left(S(45)));
        assert_eq!(remaining(&[S(10)], 0, None), Eta::Left(S(0)));
    }

    /// Within a point the ETA counts down by what the point has taken; past the mean it
    /// says the point's rest is not known rather than 0 s.
    #[test]
    fn within_a_point_it_counts_down_and_says_when_the_point_overruns() {
        assert_eq!(remaining(&[S(60)], 3, Some(S(20))), Eta::Left(S(160)));
        assert_eq!(
            remaining(&[S(60)], 3, Some(S(90))),
            Eta::Overrun { after: S(120) }
        );
        assert_eq!(
            Eta::Overrun { after: S(120) }.to_string(),
            "this point (over its mean) + 2m 00s"
        );
        assert_eq!(
            Eta::Overrun { after: S(0) }.to_string(),
            "this point (over its mean)"
        );
    }
}
