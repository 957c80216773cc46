//! Why a results directory could not be analysed. Each variant names the file at fault, so
//! the message alone tells the user where to look.
//!
//! Problems inside the data that still allow an analysis (a failed run, a rejected row, a
//! missing point) are not errors: they go into the audit and the report says so.

use std::path::PathBuf;

use thiserror::Error;

use crate::{
    recipe::RecipeError,
    results::{journal::JournalError, samples::SamplesError},
};

/// Why `analyze` could not produce an analysis.
#[derive(Debug, Error)]
pub enum AnalysisError {
    /// The directory lacks one of the raw files every campaign writes first.
    #[error("not a results directory: {} missing", path.display())]
    NotResultsDir {
        /// The missing file.
        path: PathBuf,
    },
    /// The copied recipe is unreadable or invalid.
    #[error("cannot load the campaign's recipe {}", path.display())]
    Recipe {
        /// `recipe.toml` in the results directory.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: RecipeError,
    },
    /// The journal is unreadable or corrupt.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// `samples.csv` is unreadable or malformed.
    #[error(transparent)]
    Samples(#[from] SamplesError),
    /// The journal's points are not the ones the copied recipe plans.
    #[error(
        "journal {} lists the points [{}], but its recipe plans [{}]",
        path.display(),
        journal.join(", "),
        recipe.join(", ")
    )]
    PlanMismatch {
        /// The journal.
        path: PathBuf,
        /// Point labels in the journal's campaign record.
        journal: Vec<String>,
        /// Point labels the recipe's sequence gives.
        recipe: Vec<String>,
    },
    /// The campaign's copy of its noise profile is unreadable or invalid.
    #[error(transparent)]
    Profile(crate::profile::ProfileError),
    /// The campaign's copy of its noise profile changed since the campaign journaled it.
    #[error(
        "{} changed after the campaign recorded it (sha256 {now} now, {then} then)",
        path.display()
    )]
    ProfileChanged {
        /// `profile.toml` in the results directory.
        path: PathBuf,
        /// SHA-256 now.
        now: String,
        /// SHA-256 in the journal.
        then: String,
    },
    /// The preregistered limits in the recipe copy are not the ones the campaign ran with
    /// (the journal records them), or the recipe changed and the journal does not record
    /// them; refused unless `--accept-edited-limits`.
    #[error("{} was edited after the run: {what}", path.display())]
    LimitsEdited {
        /// `recipe.toml` in the results directory.
        path: PathBuf,
        /// Which limits changed, from what to what, or why that cannot be told.
        what: String,
    },
}
