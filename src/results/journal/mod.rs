//! The journal: an append-only, versioned JSON-lines log of everything a campaign did, fsynced
//! record by record. It is the campaign's state: `status`, `resume` and `report` replay it.
//!
//! A runner killed mid-write leaves at most one partial last line; readers skip it (and say so)
//! and writers cut it off before appending, so the journal always stays parseable.
//!
//! One concern per file: `event.rs` the records, `limits.rs` the verdict limits a header
//! records, `read.rs` reading them back (every limit and error an untrusted journal meets),
//! `plain_run.rs` the fast read of aba's own sample lines,
//! `write.rs` appending them, and `history.rs` the one replay ([`History`]) every reader of a
//! campaign's state uses.

mod event;
mod history;
mod limits;
mod plain_run;
mod read;
mod write;

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

pub use event::{
    AppendedPoint, Event, Facts, LookComparison, ProbeReading, ReservationAction, SavedValue,
};
pub use history::{
    At, AttemptHistory, Boot, CampaignState, End, History, PendingRestore, PointState, ProbeRun,
    ProvenBoot, RunRemark, Step,
};
pub use limits::{Limits, ScopedLimits};
pub use read::{
    Journal, JournalError, RECORD_BYTES, RunRecord, ValuePairs, first_line_of, recorded_kernels,
    recorded_params, visit_from, visit_runs_for_analysis, visit_runs_from,
};
pub use write::{JournalWriter, now_rfc3339, now_rfc3339_micros};

/// Journal format version written in the first record; readers refuse other versions.
pub const JOURNAL_FORMAT: u32 = 1;
