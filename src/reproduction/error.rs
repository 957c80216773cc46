//! Why two campaigns could not be compared. Each variant names the directory or file at
//! fault, so the message alone tells the user where to look.

use std::path::PathBuf;

use thiserror::Error;

use crate::analysis::AnalysisError;

/// Why `aba compare` could not compare a new campaign with a reference.
#[derive(Debug, Error)]
pub enum ReproductionError {
    /// The path is neither an aba results directory nor a published bundle.
    #[error(
        "{} is neither an aba results directory (it has no journal.jsonl) nor a published \
         bundle (it has no *-points.tsv)",
        path.display()
    )]
    NotEvidence {
        /// What was given.
        path: PathBuf,
    },
    /// A bundle root whose tables are in several subfolders: which one is meant cannot be told.
    #[error(
        "{} holds no *-points.tsv itself, and several of its folders do: {}",
        path.display(),
        folders.join(", ")
    )]
    SeveralBundles {
        /// What was given.
        path: PathBuf,
        /// The subfolders with points files.
        folders: Vec<String>,
    },
    /// The path does not exist or cannot be listed.
    #[error("cannot read {}", path.display())]
    Unreadable {
        /// What was given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A published bundle can only be a reference: it has no campaign to judge.
    #[error(
        "{} is a published bundle; the new campaign must be an aba results directory",
        path.display()
    )]
    BundleAsNew {
        /// What was given as the new campaign.
        path: PathBuf,
    },
    /// An aba results directory that cannot be analysed.
    #[error("cannot analyse {}", dir.display())]
    Analysis {
        /// The results directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: AnalysisError,
    },
    /// A file of a published bundle that does not read as its layout.
    #[error(
        "{}:{line}{}: {what}",
        path.display(),
        column.map_or_else(String::new, |c| format!(":{c}"))
    )]
    Bundle {
        /// The file.
        path: PathBuf,
        /// 1-based line (1 for the header).
        line: usize,
        /// 1-based column, when one cell is at fault.
        column: Option<usize>,
        /// What is wrong, naming the column.
        what: String,
    },
    /// The recipe's reference could not be copied into the results directory.
    #[error("cannot copy the reference {} into {}", from.display(), to.display())]
    Copy {
        /// What was being copied.
        from: PathBuf,
        /// Where to.
        to: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A symbolic link inside a reference: its target could be any file of this machine.
    #[error(
        "{} is a symbolic link: aba does not follow links inside a reference (they could name \
         any file of this machine, which a copy would publish)",
        crate::text::one_line(&path.to_string_lossy())
    )]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// A summary reference where only a results directory or a bundle of samples can be:
    /// a recipe's `[expect] reference`, or the new side of `aba compare`.
    #[error(
        "{} is a summary reference (a mapping of a table of means): `aba compare NEW {}` \
         judges a campaign against it; here a results directory or a bundle of samples is needed",
        path.display(),
        path.display()
    )]
    SummaryNotHere {
        /// What was given.
        path: PathBuf,
    },
    /// A summary reference's mapping file that cannot be used, each problem at its line and
    /// column.
    #[error("{0}")]
    SummaryMapping(crate::recipe::load::Diagnostics),
    /// No workload, case and metric is in both.
    #[error(
        "{} and {} have no workload, case and metric in common",
        new.display(),
        reference.display()
    )]
    NothingInCommon {
        /// The new campaign.
        new: PathBuf,
        /// The reference.
        reference: PathBuf,
        /// The new campaign's series.
        new_series: Vec<String>,
        /// The reference's series.
        reference_series: Vec<String>,
    },
}
