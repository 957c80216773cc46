//! A campaign against its recipe's `[expect] reference`, whichever kind the reference is:
//! evidence with samples (an aba results directory or a published bundle, judged by
//! [`crate::reproduction::compare`]) or a summary reference (a mapping of a table of
//! means, judged by [`crate::reproduction::summary_judge`]). `aba check` and `aba run` read
//! it before the night, and the end of a run and `aba report` judge the results directory's
//! own copy of it.

use std::path::Path;

use crate::{
    reproduction::{
        error::ReproductionError,
        model::Reproduction,
        source::{compare_paths, open_new, open_reference},
        summary::{self, is_mapping},
        summary_judge::{SummaryReproduction, judge},
    },
    stats::VerdictParams,
};

/// A campaign's comparison with its reference.
#[derive(Clone, Debug)]
pub enum ReferenceComparison {
    /// Against evidence with samples: both sides' intervals judge.
    Evidence(Box<Reproduction>),
    /// Against a table of means: the campaign's interval alone judges.
    Summary(Box<SummaryReproduction>),
}

impl ReferenceComparison {
    /// Whether a comparison is NOT_REPRODUCED (the campaign then ends so).
    #[must_use]
    pub fn not_reproduced(&self) -> bool {
        match self {
            ReferenceComparison::Evidence(r) => r.counts.not_reproduced > 0,
            ReferenceComparison::Summary(s) => s.counts.not_reproduced > 0,
        }
    }

    /// The comparison with evidence, when that is what it is.
    #[must_use]
    pub fn evidence(&self) -> Option<&Reproduction> {
        match self {
            ReferenceComparison::Evidence(r) => Some(r.as_ref()),
            ReferenceComparison::Summary(_) => None,
        }
    }

    /// The comparison with a summary reference, when that is what it is.
    #[must_use]
    pub fn summary(&self) -> Option<&SummaryReproduction> {
        match self {
            ReferenceComparison::Evidence(_) => None,
            ReferenceComparison::Summary(s) => Some(s.as_ref()),
        }
    }
}

/// Reads the reference at `path` as `aba check` and `aba run` do before a campaign: a
/// mapping file and every table it names, or the evidence (judged with `params`, the
/// recipe's limits, when it is a bundle).
pub fn check_reference(path: &Path, params: &VerdictParams) -> Result<(), ReproductionError> {
    if is_mapping(path) {
        summary::read(path).map(|_| ())
    } else {
        open_reference(path, params).map(|_| ())
    }
}

/// The campaign in the results directory `new` against the reference at `reference` (its
/// copy in the directory, or any path `aba compare` is given).
pub fn compare_with_reference(
    new: &Path,
    reference: &Path,
) -> Result<ReferenceComparison, ReproductionError> {
    if !is_mapping(reference) {
        return compare_paths(new, reference).map(|r| ReferenceComparison::Evidence(Box::new(r)));
    }
    let new_side = open_new(new)?;
    let read = summary::read(reference)?;
    let judged = judge(&new_side, &read);
    if judged.series.is_empty() {
        return Err(ReproductionError::NothingInCommon {
            new: new_side.info.path.clone().into(),
            reference: reference.to_path_buf(),
            new_series: new_side.series.iter().map(|s| s.label.clone()).collect(),
            reference_series: judged.only_reference.clone(),
        });
    }
    Ok(ReferenceComparison::Summary(Box::new(judged)))
}
