//! The batch journal's times (RFC 3339, to the microsecond), read back: shared by the
//! summary and the labgrid holds, which both measure spans between records.

use std::time::Duration;

/// A journal time, or `None` when it is not RFC 3339 (a forged or damaged record).
pub(super) fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// The span from `from` to `to`, or `None` when either is unreadable or `to` comes first.
pub(super) fn between(from: &str, to: &str) -> Option<Duration> {
    let d = parse_time(to)? - parse_time(from)?;
    Duration::try_from(d).ok()
}
