//! One side of a comparison as plain data: what a results directory or a published bundle
//! says, already analysed by aba's own statistics, whatever its source.
//!
//! Both sources end up here so that matching and judging never ask where a number came
//! from. What a source does not publish is `None` or empty (a bundle has no `better`, no
//! unit, no CPU model), never a guess.

use serde::Serialize;

use crate::{
    analysis::model::SeriesResult,
    recipe::model::Role,
    stats::{Better, VerdictParams},
};

/// A label, release or fact from someone else's bundle or reference (a kernel's role, a
/// point's name, a commit, a CPU model), as everything after the read shows it: one line,
/// control characters escaped, cut at [`crate::text::UNTRUSTED_CHARS`] with the length said.
/// Cut once here, so no report, terminal or TSV gets a 5000-character label.
#[must_use]
pub fn foreign_label(text: &str) -> String {
    crate::text::untrusted(text, crate::text::UNTRUSTED_CHARS).into_owned()
}

/// One campaign, from its results directory or its published files.
#[derive(Clone, Debug, Serialize)]
pub struct Evidence {
    /// Where it comes from and how it was judged.
    pub info: EvidenceInfo,
    /// Every series with values, in the source's order.
    pub series: Vec<EvidenceSeries>,
}

/// Everything about one side but its series: what a comparison reports of it.
#[derive(Clone, Debug, Serialize)]
pub struct EvidenceInfo {
    /// The path as given on the command line (or the recipe's reference).
    pub path: String,
    /// The campaign's recipe name, or the bundle's experiment (file stem) or folder name.
    pub name: String,
    /// What kind of evidence it is.
    pub source: Source,
    /// The limits its verdicts were judged with.
    pub params: VerdictParams,
    /// Where those limits come from.
    pub limits: LimitsOrigin,
    /// Every done point ran in one boot (the `local` target): its intervals measure
    /// run-to-run noise, not boot-to-boot.
    pub shared_boot: bool,
    /// The machine and setup, as far as recorded.
    pub environment: Environment,
    /// Remarks on what could not be read as a series (a metric published as means only).
    pub notes: Vec<String>,
}

/// What kind of evidence.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Source {
    /// An aba results directory, any format version aba reads.
    Campaign {
        /// The aba version that ran it (from the journal).
        aba_version: String,
        /// Every point is done and the journal says it finished.
        finished: bool,
        /// Planned points that are not done.
        missing_points: Vec<String>,
    },
    /// A published bundle in the layout of lcf0399/linux-regression-evidence
    /// (`<name>-points.tsv`, optional `<name>-comparison.tsv`): read-only, its figures as
    /// published.
    Published {
        /// The files read, relative to the bundle's folder.
        files: Vec<String>,
    },
}

/// Where a side's verdict limits come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitsOrigin {
    /// The campaign's own `[analysis]`, preregistered in its journal.
    Preregistered,
    /// A published bundle records no limits: it is judged with the new campaign's.
    NewCampaign,
}

/// One workload case and metric of one side.
#[derive(Clone, Debug, Serialize)]
pub struct EvidenceSeries {
    /// Workload name (a bundle: the experiment, its file stem).
    pub workload: String,
    /// Matrix case, empty without one.
    pub case: String,
    /// Metric name.
    pub metric: String,
    /// Display label, as `aba report` prints it.
    pub label: String,
    /// Unit; `None` when the source does not say.
    pub unit: Option<String>,
    /// Which direction is an improvement; `None` when the source does not say.
    pub better: Option<Better>,
    /// Measured or control; `None` when the source does not say.
    pub role: Option<Role>,
    /// Auxiliary workload (`AUX_` labels).
    pub aux: bool,
    /// The all-samples analysis.
    pub result: SeriesResult,
    /// Changes the source publishes itself (a bundle's comparison file), beside aba's
    /// recomputation.
    pub published: Vec<PublishedChange>,
}

/// A change a bundle publishes in its comparison file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PublishedChange {
    /// The candidate kernel.
    pub candidate: String,
    /// The column it was read from (`child_vs_parent_midpoint_pct`).
    pub column: String,
    /// The text as published (`39.773716`).
    pub text: String,
    /// The published value.
    pub value: f64,
    /// aba's recomputation from the points agrees to the published decimals.
    pub agrees: bool,
}

/// The machine and setup of one side, as far as recorded.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Environment {
    /// The target the campaign ran on.
    pub target: Option<String>,
    /// CPU models its environment records name, distinct, in boot order.
    pub cpu_models: Vec<String>,
    /// The kernels in recipe (or first-boot) order.
    pub kernels: Vec<KernelIdentity>,
    /// Parameters requested for every kernel (`[boot] cmdline`); `None` when not recorded.
    pub cmdline: Option<Vec<String>>,
    /// Sysctls the recipe sets, `name=value`; `None` when not recorded.
    pub sysctls: Option<Vec<String>>,
    /// Tuning the recipe asks for, `knob=value`; `None` when not recorded.
    pub tuning: Option<Vec<String>>,
}

/// What identifies one kernel's build.
#[derive(Clone, Debug, Serialize)]
pub struct KernelIdentity {
    /// The kernel label.
    pub label: String,
    /// The releases its boots proved (`uname -r`), distinct; the recipe's when none is done.
    pub releases: Vec<String>,
    /// Build identities, distinct: `config <sha256>` from the environment records, or a
    /// bundle's `commit`.
    pub builds: Vec<String>,
    /// `/proc/version` of its boots, distinct (compiler and build stamp).
    pub versions: Vec<String>,
    /// Parameters requested for it beyond `[boot] cmdline`.
    pub cmdline: Vec<String>,
}
