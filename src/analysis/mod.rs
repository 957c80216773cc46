//! The analysis: everything a report shows, recomputed from a results directory's raw files
//! (recipe copy, journal, samples) through the public `stats` API.
//!
//! Pure apart from reading those files: it never prints, never writes and never talks to a
//! target, so `aba report` can re-run on an old campaign offline.

pub(crate) mod analyze;
pub mod audit;
pub mod calibration;
pub mod case_compare;
pub mod checks;
pub mod environment;
pub mod error;
pub mod expect;
pub mod extension;
pub(crate) mod limit_edits;
pub mod matched_build;
pub mod model;
pub mod probes;
pub mod recovery;
#[cfg(test)]
mod seed_expectations;
pub mod select;
pub mod series;
pub mod summary;
pub mod targets;
#[cfg(test)]
pub(crate) mod testkit;

pub use analyze::{
    AnalyzeOptions, Inputs, analyze, analyze_inputs, analyze_read, analyze_with, series_label,
    verdict_params,
};
pub use error::AnalysisError;
pub use model::{
    Analysis, AnalysisKind, AttemptAudit, AttemptOutcome, Audit, Campaign, CampaignSummary,
    CandidateResult, ExpectCheck, KernelInfo, LimitEdit, PointInfo, Preregistration, ProfileUse,
    RecoveryResult, RecoveryStep, RecoveryStepKind, RunIssue, Series, SeriesCalibration,
    SeriesPoint, SeriesResult, VerdictLine, Worst,
};
