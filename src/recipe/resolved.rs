//! The validated recipe that the planner, the engine and the analysis use: defaults filled in,
//! cross-references checked, regexes compiled, cases expandable. No spans, no options that
//! have a default.

use std::{fmt, path::PathBuf, sync::Arc, time::Duration};

use indexmap::IndexMap;
use regex::Regex;

use crate::recipe::{
    ident::{
        CpuList, EnvName, KernelLabel, KnobValue, MatrixKey, MetricName, Name, Release,
        RemoteFileName, SysctlName, TargetPath, WorkloadName,
    },
    model::{BetterSpec, ProbeExpect, ProbeWhen, Role, Stream, TuningKnob},
};

/// A recipe that passed validation.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// The file it was read from.
    pub path: PathBuf,
    /// The text that was validated and hashed, byte for byte: the results directory's
    /// recipe.toml is written from it (the file on disk may have changed since, and a
    /// calibration recipe's generated text has no file), and a calibration rewrites it. Kept
    /// for that copy, not for reading again: parameters are bound in the one reading
    /// ([`Loader`](crate::recipe::Loader)).
    pub hashed_text: String,
    /// Hex SHA-256 of `hashed_text` and of every `[files]` entry's content, in order: resume refuses
    /// a campaign whose recipe or workload programs changed.
    pub sha256: String,
    /// `name`.
    pub name: Name,
    /// `description`.
    pub description: String,
    /// Kernel labels in boot order.
    pub sequence: Vec<KernelLabel>,
    /// The kernels, in declaration order.
    pub kernels: IndexMap<KernelLabel, Kernel>,
    /// `[boot] cmdline`, split into parameters.
    pub boot_cmdline: Vec<String>,
    /// Wait after a boot is proven, before tuning.
    pub settle: Duration,
    /// How often a failed point is redone before its kernel counts as failed.
    pub point_retries: u32,
    /// Sysctls in file order, values as text.
    pub sysctls: Vec<(SysctlName, String)>,
    /// CPU frequency tuning.
    pub tuning: Tuning,
    /// Files to copy after each boot.
    pub files: Vec<FileCopy>,
    /// `[setup]`.
    pub setup: Steps,
    /// `[teardown]`.
    pub teardown: Steps,
    /// Workloads in run order.
    pub workloads: Vec<Workload>,
    /// `[[probe]]`, in file order.
    pub probes: Vec<Probe>,
    /// `[analysis]`.
    pub analysis: AnalysisSettings,
    /// `[[expect]]`.
    pub expect: Vec<Expect>,
    /// `[expect] reference`: what the campaign is compared with at its end.
    pub reference: Option<Reference>,
    /// `[params]` with the values in effect (already substituted everywhere they are used).
    pub params: Vec<crate::recipe::params::Param>,
}

/// Where a results directory keeps its copy of the recipe's reference: `<results>/reference/`.
pub const REFERENCE_COPY: &str = "reference";

/// Where the results directory at `root` keeps its copy of the reference written `written`:
/// `<root>/reference/`, or, for a summary reference (a mapping file, `*.toml`), the mapping
/// under its own name in that folder, the tables it names beside it as the mapping names
/// them.
#[must_use]
pub fn reference_copy(root: &std::path::Path, written: &str) -> std::path::PathBuf {
    let folder = root.join(REFERENCE_COPY);
    match std::path::Path::new(written).file_name() {
        Some(name) if written.ends_with(".toml") => folder.join(name),
        _ => folder,
    }
}

/// `[expect] reference`: a published result the whole campaign is compared with.
#[derive(Clone, Debug)]
pub struct Reference {
    /// As written in the recipe.
    pub written: String,
    /// Where it is read from: resolved from the recipe's folder, or, for a results
    /// directory's copy of the recipe, its copy `<results>/reference/`.
    pub path: std::path::PathBuf,
}

/// One kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Label.
    pub label: KernelLabel,
    /// Expected `uname -r`.
    pub release: Release,
    /// Image path on the target.
    pub image: TargetPath,
    /// Initrd path on the target.
    pub initrd: TargetPath,
    /// Parameters for this kernel only.
    pub cmdline: Vec<String>,
    /// Built on this host (`--builds`): aba installs it before switching to it and proves the
    /// build, not only the release; `None` for a kernel already on the target.
    pub build: Option<Box<crate::build::record::KernelBuild>>,
}

/// A tuning knob's wanted value and whether its absence fails the point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob<T> {
    /// The value to set and read back.
    pub value: T,
    /// False when the recipe lists the knob under `optional`.
    pub required: bool,
}

/// `[tuning]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    /// cpufreq governor.
    pub governor: Option<Knob<KnobValue>>,
    /// Energy-performance preference.
    pub epp: Option<Knob<KnobValue>>,
    /// Turbo on (true) or off (false).
    pub turbo: Option<Knob<bool>>,
}

impl Tuning {
    /// True when no knob is set.
    pub fn is_empty(&self) -> bool {
        self.governor.is_none() && self.epp.is_none() && self.turbo.is_none()
    }

    /// The knobs that are set, as `governor=performance`, `epp=…`, `turbo=on|off`.
    #[must_use]
    pub fn settings(&self) -> Vec<String> {
        self.values()
            .into_iter()
            .map(|(knob, value)| format!("{}={}", knob.as_str(), value.value))
            .collect()
    }

    /// The knobs that are set with their values as text (`on` / `off` for turbo), in
    /// governor, EPP, turbo order.
    #[must_use]
    pub fn values(&self) -> Vec<(TuningKnob, Knob<String>)> {
        let text = |k: &Knob<KnobValue>| Knob {
            value: k.value.to_string(),
            required: k.required,
        };
        let mut out = Vec::new();
        if let Some(g) = &self.governor {
            out.push((TuningKnob::Governor, text(g)));
        }
        if let Some(e) = &self.epp {
            out.push((TuningKnob::Epp, text(e)));
        }
        if let Some(t) = &self.turbo {
            let value = if t.value { "on" } else { "off" }.to_owned();
            out.push((
                TuningKnob::Turbo,
                Knob {
                    value,
                    required: t.required,
                },
            ));
        }
        out
    }

    /// The knobs that are set, by name.
    pub fn knobs(&self) -> Vec<TuningKnob> {
        let mut out = Vec::new();
        if self.governor.is_some() {
            out.push(TuningKnob::Governor);
        }
        if self.epp.is_some() {
            out.push(TuningKnob::Epp);
        }
        if self.turbo.is_some() {
            out.push(TuningKnob::Turbo);
        }
        out
    }
}

/// The limits one table sets (`[analysis]`, a `[[workload]]` or one of its metrics; which
/// one judges a series is `scoped_limits`' business); `None` where it leaves them to the
/// enclosing table.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LimitOverrides {
    /// `gate_pct`.
    pub gate_pct: Option<f64>,
    /// `max_drift_pct`.
    pub max_drift_pct: Option<f64>,
    /// `max_cv_pct`.
    pub max_cv_pct: Option<f64>,
}

impl LimitOverrides {
    /// True when the table sets no limit.
    pub fn is_empty(&self) -> bool {
        *self == LimitOverrides::default()
    }
}

/// A file to copy into the work directory.
#[derive(Clone)]
pub struct FileCopy {
    /// Path under the work directory.
    pub remote: RemoteFileName,
    /// Absolute local path.
    pub local: PathBuf,
    /// The bytes read from `local` when the recipe was loaded (at most
    /// [`limits::FILE_SOURCE_BYTES`](crate::recipe::limits::FILE_SOURCE_BYTES), all sources
    /// together at most [`limits::FILES_TOTAL_BYTES`](crate::recipe::limits::FILES_TOTAL_BYTES)).
    /// The recipe's hash and each series' definition hash are taken over them, so that
    /// analysis, documented as pure, hashes what was loaded and never reads the disk again;
    /// shared, so that a cloned recipe does not copy them.
    pub content: Arc<[u8]>,
}

impl fmt::Debug for FileCopy {
    /// The content's length, not its bytes: a recipe in an error or a test failure stays
    /// readable.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileCopy")
            .field("remote", &self.remote)
            .field("local", &self.local)
            .field("content_bytes", &self.content.len())
            .finish()
    }
}

impl FileCopy {
    /// The source's permission bits, as the copy on the target gets them: a script stays
    /// executable, a data file does not become one.
    pub fn mode(&self) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(&self.local).map_or(0o644, |m| m.permissions().mode() & 0o7777)
    }
}

/// Setup or teardown commands.
#[derive(Clone, Debug, Default)]
pub struct Steps {
    /// Shell commands in order.
    pub commands: Vec<String>,
    /// Deadline per command.
    pub timeout: Duration,
}

/// A setup or teardown command counts in the ETA as this fraction of its timeout
/// (docs/recipes.md): steps have no `estimate`, and a deadline is set with room to spare, so
/// its full length would overstate a compile of a few seconds tenfold.
pub const STEP_ESTIMATE_DIVISOR: u32 = 10;

impl Steps {
    /// What the commands are expected to take at one point, for the ETA: each counts as
    /// [`STEP_ESTIMATE_DIVISOR`]th of the timeout.
    #[must_use]
    pub fn estimate(&self) -> Duration {
        self.per_command()
            .saturating_mul(u32::try_from(self.commands.len()).unwrap_or(u32::MAX))
    }

    /// What one command is expected to take, for the ETA.
    #[must_use]
    pub fn per_command(&self) -> Duration {
        self.timeout / STEP_ESTIMATE_DIVISOR
    }
}

/// One workload.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Name.
    pub name: WorkloadName,
    /// Command template (`{key}` placeholders).
    pub run: String,
    /// Environment templates.
    pub env: Vec<(EnvName, String)>,
    /// CPU pinning.
    pub cpu: Option<CpuList>,
    /// Deadline per run.
    pub timeout: Duration,
    /// Expected duration of one run, for the ETA.
    pub estimate: Duration,
    /// Bytes kept of each output stream of a run.
    pub max_output: usize,
    /// Warm-up runs per case per point.
    pub warmup: u32,
    /// Measured runs per case per point.
    pub samples: u32,
    /// Retries of a failed run before the point fails.
    pub retries: u32,
    /// The kernels whose points run it; empty: every point.
    pub kernels: Vec<KernelLabel>,
    /// Measured or control.
    pub role: Role,
    /// Auxiliary workload.
    pub aux: bool,
    /// Matrix dimensions in file order.
    pub matrix: Vec<(MatrixKey, Vec<String>)>,
    /// Metrics read from each run.
    pub metrics: Vec<Metric>,
    /// Pass/fail conditions.
    pub check: Check,
    /// Verdict limits set on the workload.
    pub limits: LimitOverrides,
}

/// One case of a workload: one combination of matrix values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// `key=value,key=value`, or empty for a workload without a matrix.
    pub name: String,
    /// The values, in matrix order.
    pub bindings: Vec<(String, String)>,
}

impl Workload {
    /// Expands the matrix into cases, first key varying slowest (the file's reading order).
    /// The recipe limits their number ([`crate::recipe::limits::CASES`]).
    pub fn cases(&self) -> Vec<Case> {
        let n = usize::try_from(self.case_count()).unwrap_or(usize::MAX);
        (0..n).map(|i| self.case_at(i)).collect()
    }

    /// How many cases the matrix has (1 without one), without expanding it; saturates.
    pub fn case_count(&self) -> u64 {
        self.matrix
            .iter()
            .fold(1u64, |n, (_, values)| n.saturating_mul(values.len() as u64))
    }

    /// The case at `index` in [`Workload::cases`] order, computed without expanding the others.
    pub fn case_at(&self, index: usize) -> Case {
        let mut rest = index;
        let mut bindings = vec![(String::new(), String::new()); self.matrix.len()];
        for (slot, (key, values)) in bindings.iter_mut().zip(&self.matrix).rev() {
            let n = values.len().max(1);
            *slot = (
                key.to_string(),
                values.get(rest % n).cloned().unwrap_or_default(),
            );
            rest /= n;
        }
        let name = bindings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        Case { name, bindings }
    }

    /// True when the points of `kernel` run it (`kernels`, default every kernel).
    #[must_use]
    pub fn runs_on(&self, kernel: &str) -> bool {
        self.kernels.is_empty() || self.kernels.iter().any(|k| k.as_str() == kernel)
    }

    /// `kernels = [...]` as a reader sees it (`b`, `a, b`), or `None` for every kernel.
    #[must_use]
    pub fn kernels_shown(&self) -> Option<String> {
        (!self.kernels.is_empty()).then(|| {
            self.kernels
                .iter()
                .map(KernelLabel::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// True for an untimed correctness workload (`role = "check"`): no metric, no series.
    pub fn is_check(&self) -> bool {
        self.role == Role::Check
    }

    /// The metric names, in order.
    pub fn metric_names(&self) -> impl Iterator<Item = &MetricName> {
        self.metrics.iter().map(|m| &m.name)
    }
}

impl Case {
    /// `workload` or `workload[case]`: how every listing and report names a case.
    #[must_use]
    pub fn display_name(&self, workload: &WorkloadName) -> String {
        if self.name.is_empty() {
            workload.to_string()
        } else {
            format!("{workload}[{}]", self.name)
        }
    }

    /// Substitutes this case's values into a template. Unknown placeholders were rejected at
    /// load time, so this cannot fail.
    pub fn render(&self, template: &str) -> String {
        crate::placeholders::render_template(template, &mut |name| {
            self.bindings
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_else(|unknown| format!("{template} (unknown placeholder {{{unknown}}})"))
    }
}

/// How a metric's number is found in the output.
#[derive(Clone, Debug)]
pub enum Extract {
    /// JSON pointer into the output parsed as one JSON document.
    Json(String),
    /// First match of the regex; the group named `value`, else group 1.
    Regex(Regex),
    /// The trimmed output is one number.
    Number,
}

/// One metric.
#[derive(Clone, Debug)]
pub struct Metric {
    /// Name (unique within the workload).
    pub name: MetricName,
    /// How to find the number.
    pub extract: Extract,
    /// Which stream.
    pub stream: Stream,
    /// Divisor applied after extraction.
    pub divide: f64,
    /// Factor applied after extraction.
    pub multiply: f64,
    /// Unit of the final value.
    pub unit: String,
    /// Which direction is better.
    pub better: BetterSpec,
    /// Verdict limits set on the metric.
    pub limits: LimitOverrides,
}

/// A `[[probe]]`: an untimed command whose output is kept, once per point of its kernels.
#[derive(Clone, Debug)]
pub struct Probe {
    /// Name, unique among the probes.
    pub name: WorkloadName,
    /// The command, parameters expanded.
    pub run: String,
    /// The kernels whose points run it; empty: every point.
    pub kernels: Vec<KernelLabel>,
    /// Before or after the timed samples.
    pub when: ProbeWhen,
    /// Deadline of the command.
    pub timeout: Duration,
    /// Bytes kept of each output stream.
    pub max_output: usize,
    /// How it is expected to end.
    pub expect: ProbeExpect,
    /// Values read from its output.
    pub values: Vec<ProbeValue>,
    /// Functions whose ftrace profiler hits become values; empty: no profiler.
    pub ftrace: Vec<String>,
}

impl Probe {
    /// True when the points of `kernel` run it.
    #[must_use]
    pub fn runs_on(&self, kernel: &str) -> bool {
        self.kernels.is_empty() || self.kernels.iter().any(|k| k.as_str() == kernel)
    }
}

/// One value of a probe: read with the metric rules ([`crate::campaign::extract::read_number`]).
#[derive(Clone, Debug)]
pub struct ProbeValue {
    /// Name, unique within the probe.
    pub name: MetricName,
    /// How to find the number.
    pub extract: Extract,
    /// Which stream.
    pub stream: Stream,
    /// Divisor applied after extraction.
    pub divide: f64,
    /// Factor applied after extraction.
    pub multiply: f64,
    /// Unit of the final value.
    pub unit: String,
}

/// Pass/fail conditions on a run.
#[derive(Clone, Debug, Default)]
pub struct Check {
    /// Expected exit status.
    pub exit: i32,
    /// Regexes that must match stdout or stderr.
    pub must_match: Vec<Regex>,
    /// Regexes that must not match stdout or stderr.
    pub must_not_match: Vec<Regex>,
    /// Kernels on which the check must fail (check workloads only).
    pub expect_fail: Vec<KernelLabel>,
}

impl Check {
    /// True when the check must fail on `kernel`.
    pub fn must_fail_on(&self, kernel: &str) -> bool {
        self.expect_fail.iter().any(|k| k.as_str() == kernel)
    }
}

/// `[analysis]` with defaults applied.
#[derive(Clone, Debug)]
pub struct AnalysisSettings {
    /// Baseline kernel.
    pub baseline: KernelLabel,
    /// Materiality gate, percent.
    pub gate_pct: f64,
    /// Required multiple of the largest drift.
    pub drift_margin: f64,
    /// The recipe's own drift gate, percent; `None` when `[analysis]` sets none.
    pub max_drift_pct: Option<f64>,
    /// CV limit, percent.
    pub max_cv_pct: f64,
    /// SIGNAL requires the boot-level CI to exclude zero.
    pub require_boot_ci: bool,
    /// The change (percent) the design should resolve, for `aba check`'s advice.
    pub detect_pct: Option<f64>,
    /// Recovery decompositions.
    pub recovery: Vec<Recovery>,
    /// `[analysis] extend`: the campaign appends units of points until it is decided.
    pub extend: Option<Extend>,
    /// Case comparisons within each kernel, in file order.
    pub case_comparisons: Vec<CaseComparison>,
    /// Declared kernel comparisons besides each candidate against `baseline`, in file order.
    pub comparisons: Vec<KernelComparison>,
}

/// A declared comparison (`[[analysis.comparison]]`): `candidate` against `baseline`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelComparison {
    /// The kernel whose change is measured.
    pub candidate: KernelLabel,
    /// The kernel it is measured against.
    pub baseline: KernelLabel,
}

/// A campaign that extends itself (`[analysis] extend`, docs/statistics.md §12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extend {
    /// The most points, the planned ones included.
    pub max_points: usize,
    /// The kernels of one appended unit, in boot order: every candidate in order of first
    /// boot, then the baseline (A-B-A appends B-A).
    pub unit: Vec<KernelLabel>,
}

impl Extend {
    /// The boundary of a campaign that plans `planned` points.
    #[must_use]
    pub fn boundary(&self, planned: usize) -> crate::stats::sequential::Boundary {
        crate::stats::sequential::Boundary::new(
            crate::stats::sequential::SPENDING,
            planned,
            self.unit.len(),
            self.max_points,
        )
    }
}

/// One case against another within every kernel (`[[analysis.case_comparison]]`), checked:
/// both cases exist, neither is a check, and they share at least one metric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseComparison {
    /// The treatment case's workload.
    pub workload: WorkloadName,
    /// The treatment case's name.
    pub treatment: String,
    /// The control case's workload (`workload` unless `control_workload` was given).
    pub control_workload: WorkloadName,
    /// The control case's name.
    pub control: String,
    /// The metrics both workloads have (same name, unit and direction), in the treatment
    /// workload's order: one comparison each.
    pub metrics: Vec<MetricName>,
}

/// A recovery decomposition.
#[derive(Clone, Debug)]
pub struct Recovery {
    /// Name.
    pub name: Name,
    /// The gap `[from, to]`.
    pub gap: (KernelLabel, KernelLabel),
    /// The path, starting at `gap.0`.
    pub path: Vec<KernelLabel>,
}

/// A published result to reproduce.
#[derive(Clone, Debug)]
pub struct Expect {
    /// Workload.
    pub workload: WorkloadName,
    /// Case name (empty without a matrix).
    pub case: String,
    /// Metric.
    pub metric: MetricName,
    /// Candidate kernel, or the kernel whose mean is expected (a point's kernel).
    pub kernel: KernelLabel,
    /// For a change: the kernel it is against (the campaign's baseline unless a declared
    /// comparison's).
    pub baseline: KernelLabel,
    /// What is expected.
    pub value: Expected,
    /// Allowed distance: percentage points for a change or a share, the metric's unit for a
    /// mean.
    pub tolerance: f64,
    /// The only target whose campaigns are held to it; `None`: every target's.
    pub target: Option<String>,
}

impl Expect {
    /// The published change, percent, when this expects a change.
    #[must_use]
    pub fn change_pct(&self) -> Option<f64> {
        match self.value {
            Expected::ChangePct(c) => Some(c),
            Expected::Mean { .. }
            | Expected::CaseChangePct { .. }
            | Expected::RecoveryShare { .. } => None,
        }
    }
}

/// What an `[[expect]]` table expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// The change against the baseline, percent (`change_pct`).
    ChangePct(f64),
    /// An absolute value in the metric's unit (`mean`): the kernel's boot-weighted mean, or
    /// the mean of `point` when given.
    Mean {
        /// The value.
        value: f64,
        /// The point's label, for a point's mean.
        point: Option<String>,
    },
    /// The change of the case against a control case on one kernel, percent
    /// (`change_pct` with `control`): an `[[analysis.case_comparison]]`'s.
    CaseChangePct {
        /// The value.
        value: f64,
        /// The control case's workload.
        control_workload: WorkloadName,
        /// The control case.
        control: String,
    },
    /// The share of a recovery's gap its step ending at the kernel recovers, percent
    /// (`share_pct` with `recovery`).
    RecoveryShare {
        /// The value.
        value: f64,
        /// The `[[analysis.recovery]]`'s name.
        recovery: String,
    },
}

impl Kernel {
    /// The files the target must already hold for this kernel: its image and initrd, minus
    /// those aba installs from a build on the host.
    pub fn files_on_target(&self) -> Vec<&str> {
        match &self.build {
            None => vec![self.image.as_str(), self.initrd.as_str()],
            Some(build) if build.initrd.is_some() => Vec::new(),
            Some(_) => vec![self.initrd.as_str()],
        }
    }
}

impl Recipe {
    /// The full cmdline parameters for a kernel: `[boot] cmdline` then the kernel's own.
    pub fn cmdline_for(&self, kernel: &KernelLabel) -> Vec<String> {
        let mut out = self.boot_cmdline.clone();
        if let Some(k) = self.kernels.get(kernel) {
            out.extend(k.cmdline.iter().cloned());
        }
        out
    }

    /// The recipe's directory, against which `[files]` paths resolve.
    pub fn dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    }
}

/// Point labels for a boot sequence: the kernel label when it is booted once, else
/// `label-a`, `label-b`, … in boot order (`label-27` onwards past `z`), like the published
/// tables (`parent-a child parent-b`).
pub fn point_labels(sequence: &[KernelLabel]) -> Vec<String> {
    let mut seen: IndexMap<&KernelLabel, usize> = IndexMap::new();
    let total = |k: &KernelLabel| sequence.iter().filter(|s| *s == k).count();
    sequence
        .iter()
        .map(|k| {
            let nth = seen.entry(k).or_insert(0);
            *nth += 1;
            if total(k) == 1 {
                k.to_string()
            } else if *nth <= 26 {
                let letter =
                    char::from(b'a' + u8::try_from(*nth - 1).expect("invariant: nth <= 26"));
                format!("{k}-{letter}")
            } else {
                format!("{k}-{nth}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Steps, point_labels};
    use crate::recipe::ident::KernelLabel;

    #[test]
    fn a_step_counts_as_a_tenth_of_its_timeout() {
        let steps = Steps {
            commands: vec!["cc -o a a.c".to_owned(), "true".to_owned()],
            timeout: Duration::from_secs(120),
        };
        assert_eq!(steps.per_command(), Duration::from_secs(12));
        assert_eq!(steps.estimate(), Duration::from_secs(24));
        assert_eq!(Steps::default().estimate(), Duration::ZERO);
    }

    #[test]
    fn point_labels_follow_the_published_shape() {
        let seq: Vec<KernelLabel> = ["parent", "child", "parent"]
            .iter()
            .map(|s| KernelLabel::new(s).expect("valid"))
            .collect();
        assert_eq!(point_labels(&seq), ["parent-a", "child", "parent-b"]);
    }
}
