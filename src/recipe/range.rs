//! Durations and counts with a documented range, checked where they are read so that the error
//! points at the value's line and column and names the range.
//!
//! Every duration and count of a recipe or an inventory has one (docs/recipes.md and
//! docs/targets.md list them). The upper bounds are not style: aba adds durations to the clock
//! and multiplies them by counts, and a value near `u64::MAX` seconds would overflow that
//! arithmetic mid-campaign. The lower bounds refuse what cannot work (`timeout = "0s"` would
//! fail every run). Each key is a marker type implementing [`Bounds`].

use std::{fmt, marker::PhantomData, time::Duration};

use serde::{Deserialize, Deserializer};

/// The range of one key, and what it means (for the help line).
pub trait Bounds {
    /// The key as written in the file (`timeout`).
    const KEY: &'static str;
    /// Smallest allowed value: a count, or milliseconds for a duration.
    const MIN: u64;
    /// Largest allowed value: a count, or milliseconds for a duration.
    const MAX: u64;
    /// What the value is, as help: "the deadline of one workload run".
    const MEANS: &'static str;
}

/// `"90s"`, `"10m"`, `"1h 30m"`, `"500ms"` within the range of `B`.
pub struct Dur<B>(Duration, PhantomData<B>);

/// A non-negative integer within the range of `B`.
pub struct Count<B>(u32, PhantomData<B>);

impl<B> Dur<B> {
    /// The duration.
    pub fn get(&self) -> Duration {
        self.0
    }
}

impl<B> Count<B> {
    /// The count.
    pub fn get(&self) -> u32 {
        self.0
    }
}

// Manual impls: derives would require the marker types themselves to be Clone, Debug, ….
impl<B> Clone for Dur<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Dur<B> {}
impl<B> fmt::Debug for Dur<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}
impl<B> PartialEq for Dur<B> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<B> Clone for Count<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Count<B> {}
impl<B> fmt::Debug for Count<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
impl<B> PartialEq for Count<B> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// `1s`, `24h`, `500ms`, `0s`: a range bound as the docs write it.
pub fn format_ms(ms: u64) -> String {
    if ms == 0 {
        "0s".to_owned()
    } else if ms.is_multiple_of(3_600_000) {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The allowed range of a duration key, as help text.
pub fn duration_range<B: Bounds>() -> String {
    format!(
        "`{}`: {}, from {} to {}",
        B::KEY,
        B::MEANS,
        format_ms(B::MIN),
        format_ms(B::MAX)
    )
}

/// The allowed range of a count key, as help text.
pub fn count_range<B: Bounds>() -> String {
    format!("`{}`: {}, from {} to {}", B::KEY, B::MEANS, B::MIN, B::MAX)
}

/// Checks `text` as a duration in the range of `B`.
pub fn parse_duration<B: Bounds>(text: &str) -> Result<Duration, String> {
    let shown = crate::text::quoted(text);
    let d = humantime::parse_duration(text).map_err(|e| {
        format!(
            "invalid duration `{shown}`: {e}\nhelp: write a number with a unit, e.g. \"30s\", \"5m\" or \"1h 30m\"\nhelp: {}",
            duration_range::<B>()
        )
    })?;
    let ms = d.as_millis();
    if ms < u128::from(B::MIN) || d > Duration::from_millis(B::MAX) {
        return Err(format!(
            "`{}` = \"{shown}\" is out of range\nhelp: {}",
            B::KEY,
            duration_range::<B>()
        ));
    }
    Ok(d)
}

/// Checks `value` as a count in the range of `B`.
pub fn check_count<B: Bounds>(value: i128) -> Result<u32, String> {
    if value < i128::from(B::MIN) || value > i128::from(B::MAX) {
        return Err(format!(
            "`{}` = {value} is out of range\nhelp: {}",
            B::KEY,
            count_range::<B>()
        ));
    }
    u32::try_from(value).map_err(|_| format!("`{}` = {value} is out of range", B::KEY))
}

impl<'de, B: Bounds> Deserialize<'de> for Dur<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_duration::<B>(&text)
            .map(|d| Dur(d, PhantomData))
            .map_err(serde::de::Error::custom)
    }
}

impl<'de, B: Bounds> Deserialize<'de> for Count<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<B>(PhantomData<B>);
        impl<B: Bounds> serde::de::Visitor<'_> for Visitor<B> {
            type Value = Count<B>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Count<B>, E> {
                check_count::<B>(i128::from(v))
                    .map(|n| Count(n, PhantomData))
                    .map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Count<B>, E> {
                check_count::<B>(i128::from(v))
                    .map(|n| Count(n, PhantomData))
                    .map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Visitor(PhantomData))
    }
}

// Schemas: a count carries its range; a duration is a string (humantime's grammar is wider
// than a pattern should try to be) whose range the description names.
impl<B: Bounds> schemars::JsonSchema for Dur<B> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": format!("A duration such as \"90s\" or \"1h 30m\"; {}", duration_range::<B>()),
        })
    }
}

impl<B: Bounds> schemars::JsonSchema for Count<B> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Count".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "integer",
            "minimum": B::MIN,
            "maximum": B::MAX,
            "description": count_range::<B>(),
        })
    }
}

macro_rules! bounds {
    ($($(#[$doc:meta])* $name:ident = $key:literal, $min:expr, $max:expr, $means:literal;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub enum $name {}
            impl Bounds for $name {
                const KEY: &'static str = $key;
                const MIN: u64 = $min;
                const MAX: u64 = $max;
                const MEANS: &'static str = $means;
            }
        )*
    };
}

/// One second, in the milliseconds duration bounds are written in.
const S: u64 = 1000;
/// One minute.
const M: u64 = 60 * S;
/// One hour.
const H: u64 = 60 * M;

bounds! {
    /// `warmup` (top level and per workload).
    Warmup = "warmup", 0, 1000, "the warm-up runs per workload case per point";
    /// `samples` (top level and per workload).
    Samples = "samples", 1, 10_000, "the measured runs per workload case per point (default 9; 3 or more give a usable CV)";
    /// `retries` of a workload.
    Retries = "retries", 0, 10, "how often a failed run is retried before the point fails";
    /// `point_retries`.
    PointRetries = "point_retries", 0, 10, "how many failed points a kernel may have before the campaign stops";
    /// `settle`.
    Settle = "settle", 0, H, "the wait after a proven boot, before tuning";
    /// A workload's `timeout`.
    RunTimeout = "timeout", S, 24 * H, "the deadline of one workload run";
    /// A workload's `estimate`.
    Estimate = "estimate", 0, 24 * H, "the expected length of one run, for the ETA";
    /// `setup.timeout` and `teardown.timeout`.
    StepTimeout = "timeout", S, 24 * H, "the deadline of each setup or teardown command";
    /// An inventory target's `boot_timeout`.
    BootTimeout = "boot_timeout", 10 * S, 24 * H, "how long a switch may take until a fresh boot logs in";
    /// An inventory target's `boot_estimate`.
    BootEstimate = "boot_estimate", 0, 24 * H, "the expected time of one switch, for the ETA";
    /// An inventory target's `reserve_timeout`.
    ReserveTimeout = "reserve_timeout", S, 24 * H, "how long the inventory's `reserve` command may wait for the lab scheduler";
    /// An inventory target's `keepalive`.
    Keepalive = "keepalive", S, 10 * M, "the idle time after which the target's kernel is probed by TCP keepalive (whole seconds)";
    /// An inventory target's `dead_after`; TCP_KEEPCNT (one probe per second) takes at most
    /// 127.
    DeadAfter = "dead_after", 2 * S, 2 * M, "the silence after which a target counts as dead (the kernel's TCP keepalive count allows at most 127 one-second probes)";
    /// An inventory target's `connect_timeout`.
    ConnectTimeout = "connect_timeout", 100, 5 * M, "the limit of one TCP connect";
    /// An inventory target's `port`.
    Port = "port", 1, 65_535, "a TCP port";
    /// A kernel's build `timeout` in a builds file.
    BuildTimeout = "timeout", S, 48 * H, "the deadline of a kernel's build command";
    /// A kernel's build `estimate` in a builds file.
    BuildEstimate = "estimate", 0, 48 * H, "the expected length of a kernel's build command, for the ETA";
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Count, Dur, RunTimeout, Samples, Settle, check_count, format_ms, parse_duration};

    #[derive(serde::Deserialize)]
    struct T {
        timeout: Option<Dur<RunTimeout>>,
        samples: Option<Count<Samples>>,
        settle: Option<Dur<Settle>>,
    }

    fn parse(src: &str) -> Result<T, String> {
        toml::from_str::<T>(src).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn durations_are_checked_against_their_range() {
        let t = parse("timeout = \"90s\"\nsettle = \"0s\"").expect("valid");
        assert_eq!(t.timeout.map(|d| d.get()), Some(Duration::from_secs(90)));
        assert_eq!(t.settle.map(|d| d.get()), Some(Duration::ZERO));
        let err = parse("timeout = \"0s\"").err().expect("too short");
        assert_eq!(
            err,
            "`timeout` = \"0s\" is out of range\nhelp: `timeout`: the deadline of one workload run, from 1s to 24h"
        );
        let err = parse("timeout = \"584542046090y\"")
            .err()
            .expect("too long");
        assert!(
            err.starts_with("`timeout` = \"584542046090y\" is out of range"),
            "{err}"
        );
        let err = parse("timeout = \"99999999999999999999y\"")
            .err()
            .expect("overflow");
        assert!(err.starts_with("invalid duration"), "{err}");
        assert!(err.contains("from 1s to 24h"), "{err}");
    }

    #[test]
    fn counts_are_checked_against_their_range() {
        assert_eq!(
            parse("samples = 9").expect("ok").samples.map(|c| c.get()),
            Some(9)
        );
        for bad in ["samples = 0", "samples = 4294967295", "samples = -1"] {
            let err = parse(bad).err().expect("out of range");
            assert!(err.contains("is out of range"), "{bad}: {err}");
            assert!(err.contains("from 1 to 10000"), "{bad}: {err}");
        }
        assert!(check_count::<Samples>(i128::from(u64::MAX)).is_err());
    }

    #[test]
    fn bounds_read_like_the_docs() {
        assert_eq!(format_ms(0), "0s");
        assert_eq!(format_ms(100), "100ms");
        assert_eq!(format_ms(2 * 60_000), "2m");
        assert_eq!(format_ms(24 * 3_600_000), "24h");
        assert!(parse_duration::<Settle>("2h").is_err());
    }
}
