//! Reproducing a published result (issue 18): a new campaign against a reference, series by
//! series and candidate by candidate, with a reproduction verdict for each comparison.
//!
//! Both sides are read into [`evidence::Evidence`] (an aba results directory through the same
//! analysis as `aba report`, or a published bundle in the layout of
//! lcf0399/linux-regression-evidence), matched ([`matching`]) and judged
//! ([`crate::stats::reproduce`]); the result is plain data ([`model::Reproduction`]) that the
//! report layer renders. Pure apart from reading the two sides: nothing here writes or prints.

pub mod bundle;
pub(crate) mod bundle_audit;
pub mod campaign;
pub mod compare;
pub mod copy;
pub mod environment;
pub mod error;
pub mod evidence;
pub mod kind;
pub mod matching;
pub mod model;
pub mod reference_comparison;
pub mod source;
pub mod summary;
pub mod summary_judge;
pub mod table;

pub use compare::compare;
pub use copy::copy_reference;
pub use error::ReproductionError;
pub use evidence::{Evidence, EvidenceInfo};
pub use model::Reproduction;
pub use reference_comparison::{ReferenceComparison, check_reference, compare_with_reference};
pub use source::{compare_paths, open_new, open_reference};
