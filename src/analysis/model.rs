//! The analysis of one campaign as plain data: what every exporter and template reads.
//!
//! Everything here is computed by [`crate::analysis::analyze`] from the raw files and is
//! `Serialize`, because the whole [`Analysis`] is the context of the report templates: a user
//! who writes their own layout finds every number here, unrounded. Nothing is formatted and
//! nothing is rounded in this model; the report layer does that at output time.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{
    recipe::{model::Role, scoped_limits::SeriesLimits},
    stats::{
        Better, Comparison, Confidence, KernelSummary, Limit, RatioInterval, Spread, SpreadMeasure,
        Summary, Verdict, VerdictLabel, VerdictParams,
    },
};

/// A whole campaign, recomputed from its results directory.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// What was run, where and when.
    pub campaign: Campaign,
    /// The preregistered verdict parameters from the recipe's `[analysis]`.
    pub params: VerdictParams,
    /// The kernels in recipe order.
    pub kernels: Vec<KernelInfo>,
    /// Every planned point in plan (boot) order, done or not.
    pub points: Vec<PointInfo>,
    /// Labels of planned points that are not done; their kernels' numbers lack those boots.
    pub missing_points: Vec<String>,
    /// One entry per workload case and metric, in recipe order.
    pub series: Vec<Series>,
    /// Each `[[analysis.case_comparison]]`, one entry per metric the two cases share, in
    /// recipe order.
    pub case_comparisons: Vec<CaseSeries>,
    /// What each untimed correctness workload (`role = "check"`) proved on each kernel.
    pub checks: Vec<CheckOutcome>,
    /// What the probes (`[[probe]]`) gave at the done points: evidence beside the timed
    /// results, never in a verdict.
    pub probes: Vec<crate::analysis::probes::ProbeResult>,
    /// The output the passing checks kept at the done points (`checks/<point>/…`).
    pub kept_checks: Vec<crate::analysis::probes::KeptInfo>,
    /// The recipe's `[[expect]]` entries and whether each was reproduced.
    pub expects: Vec<ExpectCheck>,
    /// What happened during the run, point attempt by point attempt.
    pub audit: Audit,
    /// The campaign-level conclusions.
    pub summary: CampaignSummary,
    /// Whether the recipe copy is the one the campaign ran with.
    pub preregistration: Preregistration,
    /// The environment records of the done points, compared.
    pub environment: crate::analysis::environment::EnvironmentCheck,
    /// Every kernel's build against the baseline's, field by field (`matched-build.tsv`).
    pub matched_builds: crate::analysis::matched_build::MatchedBuilds,
    /// The noise profile the campaign used, or why none.
    pub profile: ProfileUse,
    /// How a campaign that extends itself (`[analysis] extend`) extended; `None` when the
    /// recipe does not.
    pub extension: Option<Extension>,
}

/// How an extended campaign extended: its looks, as journaled, and the look its verdicts are
/// judged at.
#[derive(Clone, Debug, Serialize)]
pub struct Extension {
    /// `max_points` of the recipe.
    pub max_points: usize,
    /// Points of the recipe's sequence.
    pub planned: usize,
    /// Labels of the points the looks appended, in boot order.
    pub appended: Vec<String>,
    /// Every look taken, in order.
    pub looks: Vec<LookRecord>,
    /// The look the verdicts are judged at (the points there are make it).
    pub judged_at: Option<crate::stats::sequential::Look>,
}

/// One look, as the journal recorded it.
#[derive(Clone, Debug, Serialize)]
pub struct LookRecord {
    /// 1-based look.
    pub look: u32,
    /// The most looks.
    pub of: u32,
    /// Its α.
    pub alpha: f64,
    /// What it decided.
    pub decision: crate::stats::sequential::Decision,
    /// Why.
    pub reason: String,
    /// The driving comparisons and where each stood.
    pub comparisons: Vec<crate::results::journal::LookComparison>,
    /// Labels of the points it appended.
    pub appended: Vec<String>,
}

impl Analysis {
    /// How point `point` reads in a report ([`crate::point_name::point_name`]): `a#1`, `b`,
    /// `a#2`. A point that is not in the plan is shown as it is.
    #[must_use]
    pub fn point_name(&self, point: &str) -> String {
        self.points.iter().find(|p| p.label == point).map_or_else(
            || point.to_owned(),
            |p| crate::point_name::point_name(point, &p.kernel),
        )
    }
}

/// The noise profile of a campaign (issue 10 §2): which file, and whether it holds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ProfileUse {
    /// The profile file the campaign copied (its path when `aba run` chose it); `None` when
    /// it used none.
    pub file: Option<String>,
    /// Its file name, without the tester's directories (what the reports print).
    pub name: Option<String>,
    /// SHA-256 of the copy (`profile.toml` in the results directory), as journaled.
    pub sha256: Option<String>,
    /// When the profile was made.
    pub created: Option<String>,
    /// Its boots (ν = boots − 1).
    pub boots: Option<u32>,
    /// Boot-to-boot or run-to-run.
    pub scope: Option<crate::profile::Scope>,
    /// Some series pooled it.
    pub used: bool,
    /// Turned off: `--no-profile` at run time or now.
    pub disabled: bool,
    /// Why it does not hold for the campaign (any series), or why none was chosen.
    pub reasons: Vec<String>,
}

impl ProfileUse {
    /// The file's name without its directory.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// How one series used the campaign's noise profile.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SeriesCalibration {
    /// Its entry holds: the boot variances to pool.
    Used {
        /// For all samples.
        all: crate::stats::BootPrior,
        /// For drop-first, when the profile has it.
        drop_first: Option<crate::stats::BootPrior>,
    },
    /// Its entry does not hold, or there is none.
    NotUsed {
        /// Why.
        why: String,
    },
}

/// The recipe copy against the journal's record of it (SHA-256 and limits).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Preregistration {
    /// The recipe copy and its files hash to the journal's SHA-256.
    pub unchanged: bool,
    /// The SHA-256 of the recipe copy now.
    pub sha256_now: String,
    /// Limits that differ from the ones the journal recorded (only with
    /// `--accept-edited-limits`: otherwise the analysis is refused).
    pub edited: Vec<LimitEdit>,
    /// The recipe changed and the journal (older aba) does not record the limits, so whether
    /// they were edited is unknown (only with `--accept-edited-limits`).
    pub limits_unknown: bool,
}

/// One limit edited after the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LimitEdit {
    /// `max_drift_pct`, …, or `max_cv_pct of workload/metric` for a limit a workload or
    /// metric sets.
    pub name: String,
    /// What the campaign ran with; `None` for a limit that was not set (a drift gate).
    pub then: Option<f64>,
    /// What the recipe copy says now (the analysis uses it).
    pub now: Option<f64>,
}

/// What was run, where and when.
#[derive(Clone, Debug, Serialize)]
pub struct Campaign {
    /// Recipe name.
    pub name: String,
    /// Recipe description.
    pub description: String,
    /// The results directory's own name (not its path, so reports do not depend on where
    /// the bundle is unpacked).
    pub directory: String,
    /// Target the campaign ran on (`local` for this machine without kernel switches).
    pub target: String,
    /// aba version that ran the campaign (from the journal).
    pub aba_version: String,
    /// aba version that computed this analysis.
    pub report_version: String,
    /// SHA-256 of the recipe and its files.
    pub recipe_sha256: String,
    /// When the campaign was created (RFC 3339).
    pub started: String,
    /// Every point is done and the journal says the campaign finished.
    pub finished: bool,
    /// Why the last run stopped early, when it did.
    pub stopped: Option<String>,
    /// The baseline kernel every candidate is compared with.
    pub baseline: String,
    /// Candidate kernels in order of first boot.
    pub candidates: Vec<String>,
    /// `[boot] cmdline` parameters appended for every kernel.
    pub boot_cmdline: Vec<String>,
    /// Sysctls the recipe sets, as `name=value`.
    pub sysctls: Vec<String>,
    /// Tuning the recipe asks for, as `knob=value`.
    pub tuning: Vec<String>,
    /// The recipe's `[params]` as the campaign used them (the journal's record), one
    /// `name = value (…where it came from)` each: the machine facts a reader must know.
    pub params: Vec<String>,
    /// Amendments of the recipe (`aba resume --amend`), in order.
    pub amendments: Vec<Amendment>,
    /// The recipe's `[expect] reference`, as written: the published result the campaign is
    /// compared with at its end (its copy is `<results>/reference/`).
    pub reference: Option<String>,
}

/// One `aba resume --amend`: what changed, for what the later points ran.
#[derive(Clone, Debug, Serialize)]
pub struct Amendment {
    /// When.
    pub time: String,
    /// What changed, in words.
    pub changes: Vec<String>,
    /// The recipe file it came from.
    pub recipe: String,
}

/// One kernel of the recipe and what the run saw of it.
#[derive(Clone, Debug, Serialize)]
pub struct KernelInfo {
    /// Label.
    pub label: String,
    /// Release the recipe expects (`uname -r`).
    pub release: String,
    /// Every cmdline parameter requested for it (`[boot]` plus its own).
    pub cmdline: Vec<String>,
    /// Points planned for it.
    pub planned: usize,
    /// Labels of its done points, in boot order.
    pub booted: Vec<String>,
    /// Its release, image and initrd with where each came from, when the journal recorded
    /// a binding (`aba::kernel::binding`); `null`: as the recipe said.
    pub bound: Option<crate::kernel::binding::BoundKernel>,
}

/// One planned point.
#[derive(Clone, Debug, Serialize)]
pub struct PointInfo {
    /// 1-based boot order.
    pub order: usize,
    /// Point label (`parent-a`).
    pub label: String,
    /// Kernel label.
    pub kernel: String,
    /// The attempt whose rows are valid; `None` when the point is not done.
    pub done_attempt: Option<u32>,
    /// boot_id of the done attempt.
    pub boot_id: Option<String>,
    /// `uname -r` of the done attempt.
    pub release: Option<String>,
    /// `/proc/cmdline` of the done attempt.
    pub cmdline: Option<String>,
}

/// Which samples an analysis uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisKind {
    /// Every measured sample.
    All,
    /// x₁ removed at every point: a check that warm-up did not leak into the samples.
    DropFirst,
}

impl AnalysisKind {
    /// The spelling in TSV files (`all`, `drop_first`), as in the golden data.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            AnalysisKind::All => "all",
            AnalysisKind::DropFirst => "drop_first",
        }
    }
}

/// One workload case and metric across the campaign.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Workload name.
    pub workload: String,
    /// Matrix case (`key=value,…`), empty without a matrix.
    pub case: String,
    /// Metric name.
    pub metric: String,
    /// Display label: `workload`, `workload[case]`, plus `/metric` when the metric is not
    /// named after the workload.
    pub label: String,
    /// Unit of the values.
    pub unit: String,
    /// Which direction is an improvement.
    pub better: Better,
    /// Measured or control.
    pub role: Role,
    /// Auxiliary: `AUX_` verdicts that never drive the campaign summary.
    pub aux: bool,
    /// Planned warm-ups per point.
    pub warmup: u32,
    /// Planned measured samples per point.
    pub samples: u32,
    /// Done points with valid values, in boot order.
    pub points: Vec<SeriesPoint>,
    /// Done points that have no valid value for this series.
    pub missing: Vec<String>,
    /// The analysis of every measured sample; `None` when no point has values.
    pub all: Option<SeriesResult>,
    /// The drop-first analysis; `None` when unavailable (see `drop_first_unavailable`).
    pub drop_first: Option<SeriesResult>,
    /// Why there is no drop-first analysis.
    pub drop_first_unavailable: Option<String>,
    /// How it used the campaign's noise profile; `None` when the campaign has none.
    pub calibration: Option<SeriesCalibration>,
    /// The verdict limits that judged it, and which table set each.
    pub limits: SeriesLimits,
}

/// One point of one series.
#[derive(Clone, Debug, Serialize)]
pub struct SeriesPoint {
    /// 1-based boot order.
    pub order: usize,
    /// Point label.
    pub label: String,
    /// Kernel label.
    pub kernel: String,
    /// Measured values in index order.
    pub values: Vec<f64>,
    /// Warm-up values in index order (never analysed; plotted).
    pub warmups: Vec<f64>,
    /// Summary of all measured values.
    pub all: Summary,
    /// Summary without x₁; `None` when n < 2.
    pub drop_first: Option<Summary>,
}

impl SeriesPoint {
    /// Number of measured values.
    #[must_use]
    pub fn values_n(&self) -> usize {
        self.all.n
    }
}

/// One analysis (all or drop-first) of one series.
#[derive(Clone, Debug, Serialize)]
pub struct SeriesResult {
    /// All or drop-first.
    pub kind: AnalysisKind,
    /// The point statistics used, in boot order.
    pub points: Vec<crate::stats::BootPoint>,
    /// Every kernel with a done point, in order of first boot.
    pub kernels: Vec<KernelSummary>,
    /// Largest point CV of the series.
    pub max_cv_pct: Option<f64>,
    /// Each candidate against the baseline, in order of first boot.
    pub comparisons: Vec<CandidateResult>,
    /// Candidates that could not be compared, with the reason.
    pub not_compared: Vec<String>,
    /// The recipe's recovery decompositions.
    pub recoveries: Vec<RecoveryResult>,
}

/// One candidate kernel against the baseline in one analysis.
#[derive(Clone, Debug, Serialize)]
pub struct CandidateResult {
    /// Candidate kernel.
    pub candidate: String,
    /// Baseline kernel.
    pub baseline: String,
    /// A declared comparison (`[[analysis.comparison]]`): `baseline` is not the campaign's.
    pub declared: bool,
    /// Change, brackets and intervals.
    pub comparison: Comparison,
    /// Largest CV over the candidate's and the baseline's points (the verdict's CV input).
    pub max_cv_pct: Option<f64>,
    /// The verdict and every condition behind it.
    pub verdict: Verdict,
    /// The label as printed: `SIGNAL`, or `AUX_SIGNAL` for an auxiliary workload.
    pub label: String,
    /// `slower` or `faster` (from the sign of the change and `better`); `None` at exactly 0.
    pub direction: Option<String>,
    /// The candidate was booted once and its boot-level interval borrows the pooled boot
    /// variance of the kernels that were booted several times.
    pub borrowed_from: Vec<String>,
    /// The other analysis (drop-first for `all`, `all` for drop-first) reaches the same
    /// label; `None` when the other analysis is unavailable.
    pub same_conclusion: Option<bool>,
}

impl CandidateResult {
    /// Whether `other` compares the same two kernels (the drop-first twin of a comparison).
    #[must_use]
    pub fn same_pair(&self, other: &CandidateResult) -> bool {
        self.candidate == other.candidate && self.baseline == other.baseline
    }

    /// How a report names this comparison: the candidate alone against the campaign's
    /// baseline, `candidate vs baseline` for a declared comparison.
    #[must_use]
    pub fn shown(&self) -> String {
        if self.declared {
            format!("{} vs {}", self.candidate, self.baseline)
        } else {
            self.candidate.clone()
        }
    }
}

/// Whether a recovery step is one step of the path, the whole path, or what is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryStepKind {
    /// path\[i\] → path\[i+1\].
    Step,
    /// path\[0\] → path\[last\].
    Combined,
    /// path\[last\] → gap\[1\]: the part of the gap the path does not explain.
    Residual,
}

/// One row of a recovery decomposition.
#[derive(Clone, Debug, Serialize)]
pub struct RecoveryStep {
    /// Step, combined or residual.
    pub kind: RecoveryStepKind,
    /// From kernel.
    pub from: String,
    /// To kernel.
    pub to: String,
    /// 100·(mean(from) − mean(to))/(mean(gap.0) − mean(gap.1)); `None` when a kernel is
    /// missing or the gap is 0.
    pub pct: Option<f64>,
}

/// A recovery decomposition of one series in one analysis.
#[derive(Clone, Debug, Serialize)]
pub struct RecoveryResult {
    /// Its name in the recipe.
    pub name: String,
    /// `[from, to]`.
    pub gap: (String, String),
    /// kernel_mean(gap.0) − kernel_mean(gap.1); `None` when a kernel is missing.
    pub gap_size: Option<f64>,
    /// The steps in path order, then the combined row (paths of 3+ kernels), then the
    /// residual (when the path does not end at gap.1).
    pub steps: Vec<RecoveryStep>,
}

/// One `[[expect]]` entry, checked.
#[derive(Clone, Debug, Serialize)]
pub struct ExpectCheck {
    /// Label of the series it is about.
    pub series: String,
    /// Candidate kernel, or the kernel whose mean is expected.
    pub kernel: String,
    /// For a change: the kernel it is against (the campaign's baseline, or a declared
    /// comparison's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// For a case's change: the control case's series label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    /// For a share: the `[[analysis.recovery]]`'s name and the step, `from -> to`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<String>,
    /// The only target the expectation is about (`target`); `None`: every target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// False when the campaign ran on another target than `target`: the expectation was not
    /// judged and counts neither way.
    pub applies: bool,
    /// What is expected: `change_pct` (against the baseline) or `mean` (an absolute value).
    pub quantity: ExpectedQuantity,
    /// For a point's mean, the point's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// The published value: percent for a change, the unit for a mean.
    pub expected: f64,
    /// The reproduced value (all samples); `None` when it could not be computed.
    pub got: Option<f64>,
    /// The unit of `expected`, `got` and `tolerance`: `%` (a change, tolerance in
    /// percentage points) or the metric's.
    pub unit: String,
    /// The published change, percent (a change only; kept for readers of format 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_pct: Option<f64>,
    /// Allowed distance: percentage points for a change, the unit for a mean.
    pub tolerance: f64,
    /// The reproduced change (a change only: `null` for a mean, or when it could not be
    /// computed).
    pub got_pct: Option<f64>,
    /// |got − expected| ≤ tolerance (false when it does not apply).
    pub reproduced: bool,
}

/// What an `[[expect]]` compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedQuantity {
    /// The change against the baseline, percent.
    ChangePct,
    /// An absolute value in the metric's unit.
    Mean,
    /// The change of a case against a control case on one kernel, percent.
    CaseChangePct,
    /// The share of a recovery's gap one step recovers, percent.
    SharePct,
}

/// What happened to one point attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Finished; its rows are the valid ones.
    Done,
    /// Failed; its rows are ignored.
    Failed,
    /// Discarded on resume (the runner died during it); its rows do not count.
    Discarded,
    /// Started and never finished, failed or discarded: the runner died and was not resumed.
    Unfinished,
}

impl AttemptOutcome {
    /// The spelling in `run-audit.tsv`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Done => "done",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Discarded => "discarded",
            AttemptOutcome::Unfinished => "unfinished",
        }
    }
}

/// A workload run that failed, or succeeded only after retries.
#[derive(Clone, Debug, Serialize)]
pub struct RunIssue {
    /// Workload.
    pub workload: String,
    /// Case.
    pub case: String,
    /// `warmup` or `sample`.
    pub phase: String,
    /// 1-based index within the phase.
    pub index: u32,
    /// Retry number (0 = first try).
    pub retry: u32,
    /// Why it failed.
    pub error: Option<String>,
    /// Saved raw output, relative to the results directory.
    pub raw: Option<String>,
}

/// One point attempt, as the journal and `samples.csv` tell it.
#[derive(Clone, Debug, Serialize)]
pub struct AttemptAudit {
    /// 1-based boot order of the point.
    pub order: usize,
    /// Point label.
    pub point: String,
    /// 1-based attempt.
    pub attempt: u32,
    /// Kernel label.
    pub kernel: String,
    /// Done, failed, discarded or unfinished.
    pub outcome: AttemptOutcome,
    /// Why it failed.
    pub reason: Option<String>,
    /// Proven boot_id.
    pub boot_id: Option<String>,
    /// Proven release.
    pub release: Option<String>,
    /// `/proc/cmdline` as proven.
    pub cmdline: Option<String>,
    /// Seconds from the switch trigger to the completed proof.
    pub switch_s: Option<f64>,
    /// Seconds from the switch trigger to the first login.
    pub login_s: Option<f64>,
    /// Tuning read back after it was applied.
    pub tuning: BTreeMap<String, String>,
    /// Optional knobs absent on the machine.
    pub skipped_knobs: Vec<String>,
    /// `ok` measured rows in `samples.csv` (0 for an attempt that does not count).
    pub samples_ok: usize,
    /// `ok` warm-up rows (0 for an attempt that does not count).
    pub warmups_ok: usize,
    /// Rows of failed runs.
    pub rows_failed: usize,
    /// `ok` rows set aside with an attempt that failed or was discarded (and rows aba 0.1
    /// rewrote as `discarded`).
    pub rows_discarded: usize,
    /// Runs that failed.
    pub failed_runs: Vec<RunIssue>,
    /// Runs that succeeded on a retry.
    pub retried_runs: Vec<RunIssue>,
    /// Processes runs left behind, killed when the run's own process exited:
    /// `workload phase index: PID command line`.
    pub left_behind: Vec<String>,
    /// Runs whose output was cut at `max_output`: `workload phase index: N bytes dropped`.
    pub output_cut: Vec<String>,
    /// New kernel warnings in dmesg (done attempts).
    pub dmesg_warnings: Option<u32>,
    /// Failed systemd units at the end (done attempts).
    pub failed_units: Vec<String>,
    /// Connection losses and what aba found after reconnecting.
    pub connection_lost: Vec<String>,
    /// Journal warnings about this point.
    pub warnings: Vec<String>,
    /// The environment snapshot, relative to the results directory, when it exists.
    pub env_file: Option<String>,
    /// For a kernel built on the host: how its boot was proven to run the build
    /// (`/proc/version`, and how its config compared).
    pub build: Option<crate::build::proof::BuildProof>,
}

/// A `samples.csv` row that was rejected because its value is not a finite number.
#[derive(Clone, Debug, Serialize)]
pub struct RejectedRow {
    /// 1-based line in `samples.csv`.
    pub line: u64,
    /// Why.
    pub reason: String,
}

/// All done points ran in one boot: the target did not switch kernels.
#[derive(Clone, Debug, Serialize)]
pub struct SharedBoot {
    /// The boot.
    pub boot_id: String,
    /// How many done points shared it.
    pub points: usize,
}

/// What happened during the run.
#[derive(Clone, Debug, Serialize)]
pub struct Audit {
    /// Every point attempt in journal order.
    pub attempts: Vec<AttemptAudit>,
    /// Set when every done point shares one boot_id (the `local` target).
    pub shared_boot: Option<SharedBoot>,
    /// Rows of `samples.csv` rejected as non-finite.
    pub rejected_rows: Vec<RejectedRow>,
    /// Warnings in the journal that belong to no point.
    pub warnings: Vec<String>,
    /// Valid rows whose (point, series, index) repeats: the later retry was used.
    pub duplicate_rows: usize,
    /// The journal ended in a partial line (a killed writer); it was skipped.
    pub journal_truncated: bool,
    /// `samples.csv` ended in a partial line; it was skipped.
    pub samples_truncated: bool,
    /// The captured default cmdline of the target (kexec targets).
    pub base_cmdline: Option<String>,
    /// Sum of failed runs over all attempts.
    pub failed_runs: usize,
    /// Sum of runs that needed retries.
    pub retried_runs: usize,
    /// Sum of discarded rows.
    pub discarded_rows: usize,
    /// Sum of dmesg warnings over done attempts.
    pub dmesg_warnings: u32,
    /// Failed units seen at the end of any done attempt, deduplicated.
    pub failed_units: Vec<String>,
}

/// One line of the campaign verdict: one candidate in one series.
#[derive(Clone, Debug, Serialize)]
pub struct VerdictLine {
    /// Series label.
    pub series: String,
    /// Candidate kernel.
    pub candidate: String,
    /// Baseline kernel.
    pub baseline: String,
    /// How the reports name the comparison: the candidate, or `candidate vs baseline` for a
    /// declared comparison against another kernel than the campaign's baseline.
    pub name: String,
    /// Change in percent (all samples).
    pub change_pct: f64,
    /// The baseline's boot-weighted mean (A/B/A: the midpoint), in `unit`.
    pub baseline_mean: f64,
    /// Candidate mean minus `baseline_mean`, in `unit`: the absolute change the mails print
    /// beside the percentage ("saves about 454 ns (73.66%)").
    pub diff: f64,
    /// The series' unit (empty when the recipe gives none).
    pub unit: String,
    /// Verdict label as printed.
    pub label: String,
    /// The verdict, typed (the template renders it).
    pub verdict: VerdictLabel,
    /// The confidence statement.
    pub confidence: Confidence,
    /// The boot-level interval, when there is one.
    pub ci_boot: Option<RatioInterval>,
    /// The within-only interval, when there is one.
    pub ci_within: Option<RatioInterval>,
    /// The limits that tripped (UNSTABLE).
    pub tripped: Vec<Limit>,
    /// The baseline's spread, when it was booted twice or more.
    pub baseline_spread: Option<Spread>,
    /// Why a NO_MATERIAL_SIGNAL whose boot-level interval excludes 0 is not more, in a few
    /// words; `None` otherwise.
    pub short_why: Option<String>,
    /// `slower` / `faster`.
    pub direction: Option<String>,
    /// Same conclusion with drop-first.
    pub same_conclusion: Option<bool>,
    /// The smallest change, percent, this comparison could have detected with 80 % power at
    /// its own measured boot noise; `None` without a boot-level variance.
    pub detectable_pct: Option<f64>,
    /// For an INCONCLUSIVE line: the shortest longer alternation that would detect a change
    /// of the gate at the measured noise; `None` otherwise or when none of up to 20 more
    /// pairs would.
    pub decided_by: Option<crate::stats::LongerDesign>,
    /// The gate, percent, the line was judged against.
    pub gate_pct: f64,
}

/// The largest value of some statistic and where it occurred.
#[derive(Clone, Debug, Serialize)]
pub struct Worst {
    /// Series label.
    pub series: String,
    /// Point or kernel label.
    pub at: String,
    /// The value.
    pub value: f64,
}

/// The campaign-level conclusions.
#[derive(Clone, Debug, Serialize)]
pub struct CampaignSummary {
    /// Measured, non-auxiliary series: these drive the campaign's conclusion.
    pub verdicts: Vec<VerdictLine>,
    /// Auxiliary series (`AUX_` labels).
    pub aux: Vec<VerdictLine>,
    /// Control series.
    pub controls: Vec<VerdictLine>,
    /// Control lines whose verdict is not NO_MATERIAL_SIGNAL: a control moved.
    pub control_alerts: Vec<VerdictLine>,
    /// Largest point CV over the measured series (controls and auxiliary ones stay out).
    pub max_cv: Option<Worst>,
    /// Largest spread of the baseline over the measured series: the drift with two boots,
    /// the RMS difference between two boots with three or more.
    pub baseline_drift: Option<Worst>,
    /// How `baseline_drift` is measured.
    pub baseline_spread: Option<SpreadMeasure>,
    /// Largest point CV over the control series (the summary says them apart).
    pub control_cv: Option<Worst>,
    /// Largest spread of the baseline over the control series.
    pub control_drift: Option<Worst>,
    /// Largest point CV over every series.
    pub worst_cv: Option<Worst>,
    /// Largest |drift| of any kernel in any series.
    pub worst_drift: Option<Worst>,
    /// Every drop-first verdict equals its all-samples verdict.
    pub drop_first_same: Option<bool>,
    /// Every `[[expect]]` was reproduced; `None` without expectations.
    pub expects_reproduced: Option<bool>,
}

/// One case comparison of one metric, on every kernel where both cases have values.
#[derive(Clone, Debug, Serialize)]
pub struct CaseSeries {
    /// `treatment vs control`, each as its series label (`pipe[level=1] vs pipe[level=root]`).
    pub label: String,
    /// The treatment case's workload.
    pub workload: String,
    /// The treatment case.
    pub treatment: String,
    /// The control case's workload (the same unless `control_workload` named another).
    pub control_workload: String,
    /// The control case.
    pub control: String,
    /// Metric name (both workloads have it, with the same unit and direction).
    pub metric: String,
    /// Series label of the treatment case.
    pub treatment_label: String,
    /// Series label of the control case.
    pub control_label: String,
    /// Unit.
    pub unit: String,
    /// Which direction is an improvement.
    pub better: Better,
    /// The limits that judged it: the treatment series' (its workload's and metric's).
    pub limits: SeriesLimits,
    /// Per kernel in order of first boot, over all samples.
    pub all: Vec<CaseResult>,
    /// The same with x₁ dropped at every point; empty when drop-first is unavailable.
    pub drop_first: Vec<CaseResult>,
    /// Kernels that could not be compared, with the reason.
    pub not_compared: Vec<String>,
}

/// The treatment case against the control case on one kernel, in one analysis.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The kernel.
    pub kernel: String,
    /// All samples or drop-first.
    pub kind: AnalysisKind,
    /// Its points where both cases have values, in boot order.
    pub points: Vec<String>,
    /// The control case's kernel summary on this kernel (mean = its midpoint; drift).
    pub control: KernelSummary,
    /// The treatment case's.
    pub treatment: KernelSummary,
    /// Change, brackets (per point) and intervals; `candidate` is the treatment and
    /// `baseline` the control.
    pub comparison: Comparison,
    /// Largest CV over both cases' points on this kernel (the verdict's CV input).
    pub max_cv_pct: Option<f64>,
    /// The verdict and every condition behind it.
    pub verdict: Verdict,
    /// The label as printed: `SIGNAL`, or `AUX_SIGNAL` for an auxiliary workload.
    pub label: String,
    /// `slower` or `faster`; `None` at exactly 0.
    pub direction: Option<String>,
    /// The other analysis reaches the same label; `None` when it is unavailable.
    pub same_conclusion: Option<bool>,
}

/// What a check must show on a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    /// The check passes.
    Pass,
    /// The check fails (`check.expect_fail`).
    Fail,
}

/// One check workload's outcome on one kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelCheck {
    /// Kernel label.
    pub kernel: String,
    /// What the check must show there.
    pub expected: Expected,
    /// Done points of the kernel: every run of the check had the expected outcome.
    pub held_at: Vec<String>,
    /// Planned points of the kernel that are not done: nothing is proven there.
    pub unproven_at: Vec<String>,
}

/// One check workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckOutcome {
    /// Workload name.
    pub workload: String,
    /// Per kernel, in boot order of first appearance.
    pub kernels: Vec<KernelCheck>,
}
