//! Why `aba bisect` could not start or go on: each names the file, the ref or the step.

use std::path::PathBuf;

use super::{journal::BisectJournalError, range::RangeError};
use crate::bisect::BisectError;

/// Why a bisection could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum BisectFailure {
    /// The bisect journal could not be read or written.
    #[error(transparent)]
    Journal(#[from] BisectJournalError),
    /// The range could not be resolved or a commit checked out.
    #[error(transparent)]
    Range(#[from] RangeError),
    /// The decision core refused its input or a record (a journal of another bisection).
    #[error("{}: {source}", journal.display())]
    Core {
        /// The journal whose records were replayed.
        journal: PathBuf,
        /// What the core said.
        source: BisectError,
    },
    /// The builds file is not one a bisection can use.
    #[error("{}: {why}", path.display())]
    Builds {
        /// The builds file.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// `--dir` holds a bisection of other inputs.
    #[error("{}: {why}", journal.display())]
    Mismatch {
        /// Its journal.
        journal: PathBuf,
        /// What differs.
        why: String,
    },
    /// The recipe has no series to bisect, or not the one named.
    #[error("{0}")]
    Series(String),
    /// The step recipe made from the tester's recipe does not read back as a recipe.
    #[error("the recipe of a bisection step, made from the recipe, is not valid: {why}")]
    StepRecipe {
        /// What the recipe reader said.
        why: String,
    },
    /// An endpoint could not be built: nothing can be bisected.
    #[error("the {which} commit {hash} does not build: {why}")]
    Endpoint {
        /// `good` or `bad`.
        which: &'static str,
        /// Its hash.
        hash: String,
        /// The build's error.
        why: String,
    },
    /// A step's campaign ended without a decision the bisection can use.
    #[error("step {} did not decide: {why}", dir.display())]
    Step {
        /// The step's results directory.
        dir: PathBuf,
        /// Why.
        why: String,
    },
    /// A file of the bisect directory could not be written or copied.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
}
