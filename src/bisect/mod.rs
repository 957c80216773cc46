//! The decision core of `aba bisect` (issue 32): which commit of a range first changed a
//! workload, with a stated error rate. Pure and deterministic: no I/O, no clock, no random
//! numbers. The command (journal, builds, boots, resume) drives it; `bench/bisect.rs` drives
//! it with synthetic histories.
//!
//! The range is a list of commits on the **first-parent line** from good to bad, oldest first
//! (`git rev-list --first-parent --reverse good..bad` with good prepended): a merge is one
//! commit of the line, and a regression brought in by a merged branch is named as its merge.
//! Bisecting the DAG is not supported; the first-parent line keeps every step's "good side"
//! and "bad side" a prefix and a suffix, which both searches below rely on.
//!
//! How it runs (the command's loop):
//!
//! 1. [`Bisection::new`] (or [`Bisection::replay`] with the journaled [`Record`]s: resume is
//!    a replay, the state holds nothing else);
//! 2. [`Bisection::next`] says what to do: confirm the endpoints, test a commit, or done;
//! 3. for a step, boot the sandwich good/X/good/X/… and after each look's points (3, 5, 7, …,
//!    [`Bisection::look_points`]) call [`Bisection::judge`]: it runs the analysis `aba report`
//!    runs and says extend (boot more) or decided;
//! 4. journal the decided [`Record`] (or a [`Record::Skip`] for a commit that does not build
//!    or boot) and [`Bisection::push`] it; back to 2.
//!
//! One concern per file: [`input`] (the range, the limits, the budget), [`step`] (what a step
//! decides from its points), [`search`] (plain bisection and the posterior over commits),
//! [`state`] (the replayable state and the outcome).

pub mod input;
pub mod search;
pub mod state;
pub mod step;

pub use input::{BisectInput, Budget, Strategy};
pub use search::{Choice, Search};
pub use state::{Action, Bisection, Outcome, Record};
pub use step::{Judged, StepResult, StepVerdict};

use thiserror::Error;

/// Why the core refused an input or a record: a journal that does not fit the bisection it
/// claims to continue, or points that are not at a look.
#[derive(Debug, Error, PartialEq)]
pub enum BisectError {
    /// Fewer than two commits: nothing lies between good and bad.
    #[error("a bisection needs at least a good and a bad commit, got {0} commit(s)")]
    TooFewCommits(usize),
    /// A limit of the input is out of its range.
    #[error("bisection input: {0}")]
    Input(String),
    /// A record for a step the bisection is not at (a journal from another bisection, or
    /// edited).
    #[error("record {index}: {why}")]
    Record {
        /// 0-based position of the record in the replayed list.
        index: usize,
        /// What does not fit.
        why: String,
    },
    /// Points whose count is not one of the step's looks.
    #[error("{points} points are not a look of this step (looks at {looks:?})")]
    NotALook {
        /// Points given.
        points: usize,
        /// The looks of the step.
        looks: Vec<usize>,
    },
    /// The bisection is already done.
    #[error("the bisection is done: nothing to judge or record")]
    Done,
}

#[cfg(test)]
mod tests;
