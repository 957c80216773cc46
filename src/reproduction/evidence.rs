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
        /// The files looked at and not used, each with the reason.
        ignored: Vec<IgnoredFile>,
    },
}

/// A file of a bundle that a comparison did not use, and why: what was read is listed
/// exactly, so a reader never takes a file for evidence that no number came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IgnoredFile {
    /// Its path relative to the bundle's folder.
    pub file: String,
    /// Why it was not used.
    pub reason: String,
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
    /// The bundle experiment it belongs to (its kernels are that experiment's); `None` for a
    /// results directory, whose kernels are the campaign's.
    pub experiment: Option<String>,
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
    /// The kernel the change is against (the baseline, or a declared comparison's).
    pub baseline: String,
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
    /// The kernel label (a bundle's `role`).
    pub label: String,
    /// The bundle experiment whose kernel it is: two experiments of one bundle may give one
    /// role name to different builds, which must never be merged. `None` for a campaign.
    pub experiment: Option<String>,
    /// The releases its boots proved (`uname -r`), distinct; the recipe's when none is done.
    pub releases: Vec<String>,
    /// Build identities, distinct, each of its kind (only a kind is compared with itself).
    pub builds: Vec<BuildId>,
    /// The preemption model a bundle records (`source-identity.tsv`'s `preemption`).
    pub preemption: Vec<String>,
    /// The compiler a bundle records (`source-identity.tsv`'s `compiler`).
    pub compilers: Vec<String>,
    /// `/proc/version` of its boots, distinct (compiler and build stamp).
    pub versions: Vec<String>,
    /// Parameters requested for it beyond `[boot] cmdline`.
    pub cmdline: Vec<String>,
}

/// One identity of a kernel build, typed: a git commit is only ever compared with a git
/// commit and a config hash with a config hash of the same kind, so a faithful reproduction
/// is never told its build "differs" because the two sides recorded different things.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum BuildId {
    /// A git commit: the tree's `git rev-parse HEAD`, or a bundle's `commit`/`git_commit`.
    GitCommit(String),
    /// SHA-256 of the kernel's `.config` file as aba records it (`config_sha256`).
    ConfigSha256(String),
    /// A bundle's `canonical_config_sha256`: the hash of a config normalised in a way the
    /// bundle defines, not the file's own hash, so never compared with [`Self::ConfigSha256`].
    CanonicalConfigSha256(String),
}

impl BuildId {
    /// Whether `other` names the same build: `None` when they are of different kinds. Git
    /// commits agree when one abbreviates the other (at least 7 hex digits).
    #[must_use]
    pub fn same_as(&self, other: &BuildId) -> Option<bool> {
        match (self, other) {
            (BuildId::GitCommit(a), BuildId::GitCommit(b)) => {
                let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
                let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
                Some(short.len() >= 7 && long.starts_with(&short))
            }
            (BuildId::ConfigSha256(a), BuildId::ConfigSha256(b))
            | (BuildId::CanonicalConfigSha256(a), BuildId::CanonicalConfigSha256(b)) => {
                Some(a.eq_ignore_ascii_case(b))
            }
            _ => None,
        }
    }

    /// What kind of identity it is, in words.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            BuildId::GitCommit(_) => "git commit",
            BuildId::ConfigSha256(_) => "config SHA-256",
            BuildId::CanonicalConfigSha256(_) => "canonical config SHA-256",
        }
    }
}

impl std::fmt::Display for BuildId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildId::GitCommit(v) => write!(f, "commit {v}"),
            BuildId::ConfigSha256(v) => write!(f, "config {v}"),
            BuildId::CanonicalConfigSha256(v) => write!(f, "canonical config {v}"),
        }
    }
}
