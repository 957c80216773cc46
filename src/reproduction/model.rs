//! A comparison of a new campaign with a reference as plain data: what `aba compare`'s text,
//! TSV and JSON show, every number unrounded.

use serde::Serialize;

use crate::{
    analysis::model::CandidateResult,
    recipe::model::Role,
    reproduction::evidence::{EvidenceInfo, PublishedChange},
    stats::{Better, BootPoint, KernelSummary, ReproductionLabel, ReproductionVerdict},
};

/// The new campaign against the reference.
#[derive(Clone, Debug, Serialize)]
pub struct Reproduction {
    /// The new campaign.
    pub new: EvidenceInfo,
    /// The reference.
    pub reference: EvidenceInfo,
    /// The two environments side by side.
    pub environment: Vec<EnvironmentRow>,
    /// Every series in both, in the new campaign's order.
    pub series: Vec<SeriesReproduction>,
    /// Labels of the series only the new campaign has.
    pub only_new: Vec<String>,
    /// Labels of the series only the reference has.
    pub only_reference: Vec<String>,
    /// How many comparisons got each verdict.
    pub counts: Counts,
}

impl Reproduction {
    /// Every comparison, series by series.
    pub fn comparisons(
        &self,
    ) -> impl Iterator<Item = (&SeriesReproduction, &CandidateReproduction)> {
        self.series
            .iter()
            .flat_map(|s| s.candidates.iter().map(move |c| (s, c)))
    }
}

/// How many comparisons got each verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// REPRODUCED.
    pub reproduced: usize,
    /// DIFFERENT.
    pub different: usize,
    /// NOT_REPRODUCED.
    pub not_reproduced: usize,
    /// INCONCLUSIVE.
    pub inconclusive: usize,
}

impl Counts {
    /// Counts one verdict.
    pub fn add(&mut self, label: ReproductionLabel) {
        let slot = match label {
            ReproductionLabel::Reproduced => &mut self.reproduced,
            ReproductionLabel::Different => &mut self.different,
            ReproductionLabel::NotReproduced => &mut self.not_reproduced,
            ReproductionLabel::Inconclusive => &mut self.inconclusive,
        };
        *slot += 1;
    }

    /// How many got `label`.
    #[must_use]
    pub fn of(&self, label: ReproductionLabel) -> usize {
        match label {
            ReproductionLabel::Reproduced => self.reproduced,
            ReproductionLabel::Different => self.different,
            ReproductionLabel::NotReproduced => self.not_reproduced,
            ReproductionLabel::Inconclusive => self.inconclusive,
        }
    }
}

/// How a series of the new campaign was matched with one of the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesMatch {
    /// The same workload, case and metric.
    Name,
    /// The same case and metric, each the only one of its kind among the unmatched series
    /// of its side (a published bundle names its experiment, not the recipe's workload).
    CaseAndMetric,
}

/// How a candidate of the new campaign was matched with one of the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelMatch {
    /// The same kernel label.
    Label,
    /// The only unmatched candidate on each side (`patched` and `child`).
    OnlyCandidate,
}

/// One series in both campaigns.
#[derive(Clone, Debug, Serialize)]
pub struct SeriesReproduction {
    /// The new campaign's label.
    pub label: String,
    /// The reference's label.
    pub reference_label: String,
    /// How the two were matched.
    pub matched_by: SeriesMatch,
    /// Workload (the new campaign's).
    pub workload: String,
    /// Matrix case.
    pub case: String,
    /// Metric (the new campaign's).
    pub metric: String,
    /// The new campaign's unit, or the reference's when the new one has none.
    pub unit: Option<String>,
    /// The reference's unit, when it names one that differs.
    pub reference_unit: Option<String>,
    /// Which direction is an improvement (the new campaign's; a bundle does not say).
    pub better: Option<Better>,
    /// Measured or control (the new campaign's).
    pub role: Option<Role>,
    /// Auxiliary.
    pub aux: bool,
    /// The reference's figures.
    pub reference: SeriesFigures,
    /// The new campaign's figures.
    pub new: SeriesFigures,
    /// Every candidate compared in both.
    pub candidates: Vec<CandidateReproduction>,
    /// Candidates only the new campaign compared.
    pub only_new: Vec<String>,
    /// Candidates only the reference compared.
    pub only_reference: Vec<String>,
}

/// What one side shows of a series besides its comparisons.
#[derive(Clone, Debug, Serialize)]
pub struct SeriesFigures {
    /// Point means in boot order.
    pub points: Vec<BootPoint>,
    /// Every kernel: mean, drift, spread.
    pub kernels: Vec<KernelSummary>,
    /// Largest point CV.
    pub max_cv_pct: Option<f64>,
    /// Candidates that could not be compared there, with the reason.
    pub not_compared: Vec<String>,
}

/// One candidate against its baseline in both campaigns, and the reproduction verdict.
#[derive(Clone, Debug, Serialize)]
pub struct CandidateReproduction {
    /// The reference's comparison and verdict.
    pub reference: CandidateResult,
    /// The new campaign's comparison and verdict.
    pub new: CandidateResult,
    /// How the candidates were matched.
    pub matched_by: KernelMatch,
    /// The reproduction verdict.
    pub verdict: ReproductionVerdict,
    /// The change the reference publishes itself, when it does (a bundle).
    pub published: Option<PublishedChange>,
}

/// Whether the two sides agree on one fact of the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
    /// Both record it, the same.
    Same,
    /// Both record it, differently.
    Differs,
    /// One side does not record it.
    Unknown,
    /// Both record it, but as different kinds of thing (a git commit on one side, a config
    /// hash on the other): nothing can be said.
    NotComparable,
}

/// One fact of the environment on both sides.
#[derive(Clone, Debug, Serialize)]
pub struct EnvironmentRow {
    /// What it is: `target`, `CPU`, `parent release`, `command line`, …
    pub what: String,
    /// The reference's, `None` when not recorded.
    pub reference: Option<String>,
    /// The new campaign's, `None` when not recorded.
    pub new: Option<String>,
    /// Same, different, or unknown.
    pub agreement: Agreement,
}
