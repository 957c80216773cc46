//! The recipe file as written: serde structs, one per TOML table, unknown keys rejected.
//!
//! These types mirror the file, spans included where a cross-field check needs to point at a
//! value. Nothing downstream uses them: `load` validates them and builds the resolved
//! [`crate::recipe::Recipe`]. Keys are snake_case, like the sysctls and the statistics they
//! name (`gate_pct`, `max_drift_pct`).

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use crate::recipe::{
    ident::{
        CpuList, EnvName, KernelLabel, KnobValue, MatrixKey, MetricName, Name, ParamName, Release,
        RemoteFileName, SysctlName, TargetPath, WorkloadName,
    },
    params::{NumberOrParam, ParamSpec},
    range::{
        Count, Dur, Estimate, PointRetries, Retries, RunTimeout, Samples, Settle, StepTimeout,
        Warmup,
    },
};

/// A size in bytes written the human way: `"16MiB"`, `"512KiB"`, `"1GiB"` or a plain number
/// of bytes; within [`ByteSize::MIN`]..=[`ByteSize::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub usize);

impl ByteSize {
    /// The smallest size accepted: 4 KiB.
    pub const MIN: usize = 4 << 10;
    /// The largest size accepted: 1 GiB.
    pub const MAX: usize = 1 << 30;

    /// Parses `16MiB` (also `16M`, `16 MiB`, `16777216`).
    pub fn parse(text: &str) -> Result<ByteSize, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let shift = match unit.trim() {
            "" | "B" => 0,
            "K" | "KiB" | "k" | "kB" => 10,
            "M" | "MiB" | "MB" => 20,
            "G" | "GiB" | "GB" => 30,
            other => return Err(format!("unknown unit `{other}`")),
        };
        let n: u64 = number.parse().map_err(|_| "no number".to_owned())?;
        let bytes = n
            .checked_mul(1 << shift)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| "too large".to_owned())?;
        if !(ByteSize::MIN..=ByteSize::MAX).contains(&bytes) {
            return Err("outside 4KiB..=1GiB".to_owned());
        }
        Ok(ByteSize(bytes))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ByteSize::parse(&text).map_err(|e| {
            serde::de::Error::custom(format!(
                "invalid size `{text}`: {e}\nhelp: write a number with a unit between \"4KiB\" and \"1GiB\", e.g. \"16MiB\""
            ))
        })
    }
}

impl schemars::JsonSchema for ByteSize {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteSize".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A size such as \"16MiB\" or \"512KiB\", from \"4KiB\" to \"1GiB\"",
        })
    }
}

/// A recipe file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "aba recipe", description = "An aba recipe (docs/recipes.md).")]
pub struct RecipeFile {
    /// Format version; only 1 exists.
    #[schemars(with = "i64")]
    pub version: Spanned<i64>,
    /// Short name; it becomes part of the results directory name.
    pub name: Name,
    /// One paragraph: what is measured and why (checked for control characters by `load`).
    #[schemars(with = "String")]
    pub description: Spanned<String>,
    /// Kernel labels in boot order: `["a", "b", "a"]`. Read as text and validated as
    /// [`KernelLabel`]s by `load`, because toml reports an element's error at the whole
    /// array; `load` points at the element.
    #[schemars(with = "Vec<String>")]
    pub sequence: Spanned<Vec<Spanned<String>>>,
    /// Warm-up runs per workload case per point (not analysed, kept in the raw data).
    #[serde(default)]
    pub warmup: Option<Count<Warmup>>,
    /// Measured runs per workload case per point.
    #[serde(default)]
    pub samples: Option<Count<Samples>>,
    /// Time to let a fresh boot settle before tuning and measuring.
    #[serde(default)]
    pub settle: Option<Dur<Settle>>,
    /// Point-level retries: how often a failed point is redone before its kernel counts as
    /// failed.
    #[serde(default)]
    pub point_retries: Option<Count<PointRetries>>,
    /// The kernels, by label.
    #[schemars(with = "IndexMap<KernelLabel, KernelSpec>")]
    pub kernels: Spanned<IndexMap<Spanned<KernelLabel>, KernelSpec>>,
    /// Boot parameters for every kernel.
    #[serde(default)]
    pub boot: BootSpec,
    /// Sysctls to write after each boot, in file order, and read back.
    #[serde(default)]
    #[schemars(with = "IndexMap<SysctlName, SysctlValue>")]
    pub sysctl: IndexMap<SysctlName, Spanned<SysctlValue>>,
    /// CPU frequency tuning.
    #[serde(default)]
    pub tuning: TuningSpec,
    /// Files copied into the target's work directory after each boot: remote name → local path
    /// relative to the recipe file.
    #[serde(default)]
    #[schemars(with = "IndexMap<RemoteFileName, String>")]
    pub files: IndexMap<RemoteFileName, Spanned<String>>,
    /// Commands run after the files are copied, before the workloads.
    #[serde(default)]
    pub setup: StepsSpec,
    /// Commands run after the workloads, before the audit.
    #[serde(default)]
    pub teardown: StepsSpec,
    /// The workloads, in run order.
    #[serde(default = "no_workloads", rename = "workload")]
    #[schemars(with = "Vec<WorkloadSpec>")]
    pub workloads: Spanned<Vec<WorkloadSpec>>,
    /// Untimed commands whose output is kept (`[[probe]]`), before or after a point's timed
    /// samples: attribution evidence, never in the verdict.
    #[serde(default, rename = "probe")]
    pub probes: Vec<ProbeSpec>,
    /// How results are judged.
    #[serde(default)]
    pub analysis: AnalysisSpec,
    /// Published results this recipe should reproduce: `[[expect]]` tables (one change
    /// each), or one `[expect]` table naming a reference to compare the campaign with.
    #[serde(default)]
    pub expect: ExpectSection,
    /// Facts of the machine the recipe runs on, each with a default, bound per target by the
    /// inventory's `[targets.NAME.params]` or `--param NAME=VALUE` and written as
    /// `{params.NAME}` where it is used (`aba::recipe::params`).
    #[serde(default)]
    #[schemars(with = "IndexMap<ParamName, ParamSpec>")]
    pub params: IndexMap<Spanned<ParamName>, ParamSpec>,
    /// What `aba export` writes into a published bundle's README beside `description`.
    #[serde(default)]
    pub publish: PublishSpec,
}

/// `[publish]`: the prose of a published bundle's README (`aba export`). It decides nothing
/// about the measurement; it is read back from the results directory's recipe copy.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishSpec {
    /// What the evidence covers and what it does not.
    #[serde(default)]
    pub scope: Option<String>,
    /// How it was measured, beyond the sequence and sample counts aba writes itself.
    #[serde(default)]
    pub method: Option<String>,
    /// The machine, beyond what the environment records say.
    #[serde(default)]
    pub machine: Option<String>,
    /// What a reader must keep in mind, one sentence each.
    #[serde(default)]
    pub caveats: Vec<String>,
}

/// One kernel.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelSpec {
    /// What `uname -r` must print after booting it.
    pub release: Release,
    /// Kernel image on the target; default `/boot/vmlinuz-<release>`.
    #[serde(default)]
    pub image: Option<TargetPath>,
    /// Initrd on the target; default `/boot/initrd.img-<release>`.
    #[serde(default)]
    pub initrd: Option<TargetPath>,
    /// Extra parameters for this kernel only.
    #[serde(default = "no_text")]
    #[schemars(with = "String")]
    pub cmdline: Spanned<String>,
}

/// `[boot]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BootSpec {
    /// Parameters appended for every kernel; each is verified in `/proc/cmdline`.
    #[serde(default = "no_text")]
    #[schemars(with = "String")]
    pub cmdline: Spanned<String>,
}

impl Default for BootSpec {
    fn default() -> Self {
        BootSpec { cmdline: no_text() }
    }
}

fn no_text() -> Spanned<String> {
    Spanned::new(0..0, String::new())
}

fn no_metrics() -> Spanned<OneOrMany<MetricSpec>> {
    Spanned::new(0..0, OneOrMany(Vec::new()))
}

fn no_workloads() -> Spanned<Vec<WorkloadSpec>> {
    Spanned::new(0..0, Vec::new())
}

/// Longest sysctl value, in characters (a page is what `/proc/sys` reads at once).
pub const SYSCTL_VALUE_MAX: usize = 4096;

/// A sysctl value: TOML integers and strings are both accepted and written as text.
#[derive(Debug, Clone, PartialEq)]
pub enum SysctlValue {
    /// `1000000`
    Integer(i64),
    /// `"4096 87380 6291456"`
    Text(String),
}

impl<'de> Deserialize<'de> for SysctlValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = SysctlValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SysctlValue, E> {
                Ok(SysctlValue::Integer(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SysctlValue, E> {
                i64::try_from(v)
                    .map(SysctlValue::Integer)
                    .map_err(|_| E::custom("integer out of range"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SysctlValue, E> {
                if let Some(c) = crate::text::control_char(v, &[]) {
                    return Err(E::custom(format!(
                        "a sysctl value may not contain a newline or another control character (it contains {})\nhelp: separate the fields of a multi-value sysctl with spaces",
                        crate::text::char_name(c)
                    )));
                }
                if v.chars().count() > SYSCTL_VALUE_MAX {
                    return Err(E::custom(format!(
                        "a sysctl value is at most {SYSCTL_VALUE_MAX} characters; this one has {}",
                        v.chars().count()
                    )));
                }
                Ok(SysctlValue::Text(v.to_owned()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl schemars::JsonSchema for SysctlValue {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SysctlValue".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["integer", "string"],
            "maxLength": SYSCTL_VALUE_MAX,
            "description": "A sysctl value: an integer, or a string (fields separated by spaces)",
        })
    }
}

/// `[tuning]`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TuningSpec {
    /// cpufreq governor for every online CPU.
    #[serde(default)]
    pub governor: Option<KnobValue>,
    /// Energy-performance preference for every online CPU.
    #[serde(default)]
    pub epp: Option<KnobValue>,
    /// Turbo/boost on or off (intel_pstate `no_turbo` or cpufreq `boost`).
    #[serde(default)]
    pub turbo: Option<bool>,
    /// Knobs that may be absent on some machines (VMs have no cpufreq); a missing required knob
    /// fails the point.
    #[serde(default)]
    #[schemars(with = "Vec<TuningKnob>")]
    pub optional: Vec<Spanned<TuningKnob>>,
}

/// The tuning knobs, by name.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TuningKnob {
    /// `governor`
    Governor,
    /// `epp`
    Epp,
    /// `turbo`
    Turbo,
}

impl TuningKnob {
    /// The knob's key in `[tuning]`.
    pub fn as_str(self) -> &'static str {
        match self {
            TuningKnob::Governor => "governor",
            TuningKnob::Epp => "epp",
            TuningKnob::Turbo => "turbo",
        }
    }
}

/// `[setup]` / `[teardown]`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepsSpec {
    /// Shell commands, run in order in the work directory; the first failure fails the point.
    /// `{params.NAME}` expands a parameter, shell-quoted.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub run: Vec<Spanned<String>>,
    /// Deadline for each command.
    #[serde(default)]
    pub timeout: Option<Dur<StepTimeout>>,
}

/// `[[workload]]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Unique name.
    #[schemars(with = "WorkloadName")]
    pub name: Spanned<WorkloadName>,
    /// Shell command, run in the work directory; `{key}` expands matrix values.
    #[schemars(with = "String")]
    pub run: Spanned<String>,
    /// Environment for the command; values may use `{key}`.
    #[serde(default)]
    #[schemars(with = "IndexMap<EnvName, String>")]
    pub env: IndexMap<EnvName, Spanned<String>>,
    /// Pin the command to these CPUs (`taskset -c`): a CPU list, or `{params.NAME}` (read
    /// as text, checked as a [`CpuList`] by `load` once the parameter is in).
    #[serde(default)]
    #[schemars(with = "Option<CpuList>")]
    pub cpu: Option<Spanned<String>>,
    /// Deadline per run; the whole process group is killed when it passes.
    #[serde(default)]
    pub timeout: Option<Dur<RunTimeout>>,
    /// Expected duration of one run, for the ETA.
    #[serde(default)]
    pub estimate: Option<Dur<Estimate>>,
    /// How much of each output stream of a run is kept (default 16 MiB); the rest is counted
    /// and the truncation noted in the journal and the raw output.
    #[serde(default)]
    pub max_output: Option<ByteSize>,
    /// Overrides the global `warmup`.
    #[serde(default)]
    pub warmup: Option<Count<Warmup>>,
    /// Overrides the global `samples`.
    #[serde(default)]
    pub samples: Option<Count<Samples>>,
    /// How often a failed run is retried before the point fails.
    #[serde(default)]
    pub retries: Option<Count<Retries>>,
    /// The kernels whose points run it; default: every point. A workload that does not run
    /// on the baseline has no comparison (the report says so instead of a verdict).
    /// Labels validated by `load`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub kernels: Option<Spanned<Vec<Spanned<String>>>>,
    /// `measured` (default), `control` (expected not to move) or `check` (untimed
    /// correctness: no metric, pass/fail per kernel).
    #[serde(default)]
    pub role: Role,
    /// Auxiliary: reported with `AUX_` verdicts, never drives the campaign summary.
    #[serde(default)]
    pub aux: bool,
    /// Named lists whose cross product gives the cases.
    #[serde(default)]
    #[schemars(with = "IndexMap<MatrixKey, Vec<String>>")]
    pub matrix: IndexMap<MatrixKey, Spanned<Vec<Spanned<String>>>>,
    /// The numbers read from each run's output; none for a check (`role = "check"`).
    #[serde(default = "no_metrics")]
    #[schemars(with = "Option<OneOrMany<MetricSpec>>")]
    pub metric: Spanned<OneOrMany<MetricSpec>>,
    /// Pass/fail conditions on each run.
    #[serde(default)]
    pub check: CheckSpec,
    // The three limits are repeated on `MetricSpec`: `#[serde(flatten)]` would share them but
    // does not work with `deny_unknown_fields`, which every table here relies on.
    /// Overrides `[analysis] gate_pct` for this workload's metrics.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub gate_pct: Option<Spanned<f64>>,
    /// Overrides `[analysis] max_drift_pct` for this workload's metrics.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_drift_pct: Option<Spanned<f64>>,
    /// Overrides `[analysis] max_cv_pct` for this workload's metrics.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_cv_pct: Option<Spanned<f64>>,
}

/// What a workload is for.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The workload the change is about.
    #[default]
    Measured,
    /// Expected not to move; a change here questions the setup.
    Control,
    /// Untimed correctness: no metric, pass/fail per kernel only, never a performance series.
    Check,
}

/// `metric = { … }` or `[[workload.metric]]`: one table or a list of them.
#[derive(Debug)]
pub struct OneOrMany<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table or an array of tables")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|one| OneOrMany(vec![one]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut all = Vec::new();
                while let Some(item) = seq.next_element()? {
                    all.push(item);
                }
                Ok(OneOrMany(all))
            }
        }
        deserializer.deserialize_any(Visitor(std::marker::PhantomData))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for OneOrMany<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("OneOrMany_{}", T::schema_name()).into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let one = generator.subschema_for::<T>();
        schemars::json_schema!({
            "oneOf": [one, { "type": "array", "items": one }],
        })
    }
}

/// One metric.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Unique within the workload; defaults to the workload's name when it has one metric.
    #[serde(default)]
    #[schemars(with = "Option<MetricName>")]
    pub name: Option<Spanned<MetricName>>,
    /// A JSON pointer (RFC 6901) into the output, which must be one JSON document.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub json: Option<Spanned<String>>,
    /// A regex whose first capture group (or the group named `value`) is the number.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub regex: Option<Spanned<String>>,
    /// `true`: the whole output (trimmed) is one number.
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub number: Option<Spanned<bool>>,
    /// Which stream to read: `stdout` (default) or `stderr`.
    #[serde(default)]
    pub stream: Stream,
    /// Divide the extracted number by this (e.g. the operations per run).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub divide: Option<Spanned<f64>>,
    /// Multiply the extracted number by this (e.g. 1e9 for seconds → ns).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub multiply: Option<Spanned<f64>>,
    /// Unit of the final value (`ns/read`, `ops/s`); checked by `load`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub unit: Option<Spanned<String>>,
    /// `lower` or `higher` is better.
    pub better: BetterSpec,
    /// Overrides the workload's (else `[analysis]`'s) `gate_pct` for this metric.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub gate_pct: Option<Spanned<f64>>,
    /// Overrides the workload's (else `[analysis]`'s) `max_drift_pct` for this metric.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_drift_pct: Option<Spanned<f64>>,
    /// Overrides the workload's (else `[analysis]`'s) `max_cv_pct` for this metric.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_cv_pct: Option<Spanned<f64>>,
}

/// Which output stream a metric reads.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// Standard output.
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
}

/// `better = "lower" | "higher"`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BetterSpec {
    /// Smaller numbers are better (latency, time).
    Lower,
    /// Larger numbers are better (throughput).
    Higher,
}

/// `[workload.check]`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// Expected exit status (default 0).
    #[serde(default)]
    pub exit: Option<i32>,
    /// Regexes that must each match the output (stdout and stderr).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub must_match: Vec<Spanned<String>>,
    /// Regexes that must not match the output.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub must_not_match: Vec<Spanned<String>>,
    /// Kernels on which the check must fail (a `role = "check"` workload only): there a run
    /// that passes fails, and one that fails the check counts as the expected outcome.
    /// Labels validated by `load`, like `sequence`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub expect_fail: Vec<Spanned<String>>,
}

/// `[[probe]]`: an untimed command whose output is kept as evidence (`probes/<point>/<name>.out`
/// and `.err`), run once at a point before or after the timed samples, never between them.
///
/// A table of its own rather than a workload role: a probe has none of a workload's timing
/// (warm-ups, samples, retries, a matrix, a direction, verdict limits), runs outside the
/// workloads' order, and its values are read into `probes.tsv`, never into a series.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Unique among the probes; the stem of its kept files.
    #[schemars(with = "WorkloadName")]
    pub name: Spanned<WorkloadName>,
    /// Shell command, run in the work directory; `{params.NAME}` expands a parameter.
    #[schemars(with = "String")]
    pub run: Spanned<String>,
    /// The kernels whose points run it; default: every point. Labels validated by `load`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub kernels: Option<Spanned<Vec<Spanned<String>>>>,
    /// `before` or `after` (default) the point's timed samples.
    #[serde(default)]
    pub when: ProbeWhen,
    /// Deadline of the command; the whole process group is killed when it passes.
    #[serde(default)]
    pub timeout: Option<Dur<RunTimeout>>,
    /// How much of each output stream is kept (default 1 MiB); the cut is named at the end
    /// of the kept file and in the report.
    #[serde(default)]
    pub max_output: Option<ByteSize>,
    /// `success` (default: exit status 0) or `failure` (any other exit). A probe that does
    /// not end as expected is a warning of its point, never a failed point.
    #[serde(default)]
    pub expect: ProbeExpect,
    /// Numbers read from the output with the metric rules (`json`, `regex`, `number`,
    /// `stream`, `divide`, `multiply`, `unit`), into `probes.tsv`.
    #[serde(default)]
    #[schemars(with = "Vec<ProbeValueSpec>")]
    pub value: Vec<ProbeValueSpec>,
    /// A call counter around the command (a kprobe event on each function, read from
    /// `kprobe_profile`): each function's calls become a value.
    #[serde(default)]
    pub ftrace: Option<FtraceSpec>,
}

/// When a probe runs at its point.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProbeWhen {
    /// After setup, before the first workload run.
    Before,
    /// After the last workload run, before teardown.
    #[default]
    After,
}

impl ProbeWhen {
    /// `before` / `after`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeWhen::Before => "before",
            ProbeWhen::After => "after",
        }
    }
}

/// How a probe is expected to end.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProbeExpect {
    /// Exit status 0.
    #[default]
    Success,
    /// Any exit status but 0 (never a timeout or a signal).
    Failure,
}

/// One value of a probe, read like a metric's number but with no direction.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeValueSpec {
    /// Unique within the probe.
    #[schemars(with = "MetricName")]
    pub name: Spanned<MetricName>,
    /// A JSON pointer (RFC 6901) into the output, which must be one JSON document.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub json: Option<Spanned<String>>,
    /// A regex whose first capture group (or the group named `value`) is the number.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub regex: Option<Spanned<String>>,
    /// `true`: the whole output (trimmed) is one number.
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub number: Option<Spanned<bool>>,
    /// Which stream to read: `stdout` (default) or `stderr`.
    #[serde(default)]
    pub stream: Stream,
    /// Divide the extracted number by this.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub divide: Option<Spanned<f64>>,
    /// Multiply the extracted number by this.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub multiply: Option<Spanned<f64>>,
    /// Unit of the final value.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub unit: Option<Spanned<String>>,
}

/// `ftrace = { functions = [...] }` on a probe.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtraceSpec {
    /// Kernel functions, by exact name (as `/proc/kallsyms` lists them).
    #[schemars(with = "Vec<String>")]
    pub functions: Spanned<Vec<Spanned<String>>>,
}

/// `[analysis]`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalysisSpec {
    /// The kernel every other kernel is compared with; default: the first in `sequence`.
    #[serde(default)]
    #[schemars(with = "Option<KernelLabel>")]
    pub baseline: Option<Spanned<KernelLabel>>,
    /// A change smaller than this (percent) is not material.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub gate_pct: Option<Spanned<f64>>,
    /// A signal must exceed this multiple of the largest drift.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub drift_margin: Option<Spanned<f64>>,
    /// Drift of a twice-booted kernel above this (percent) makes the result UNSTABLE.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_drift_pct: Option<Spanned<f64>>,
    /// Within-boot CV above this (percent) makes the result UNSTABLE.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_cv_pct: Option<Spanned<f64>>,
    /// SIGNAL additionally requires the boot-level CI to exclude zero.
    #[serde(default)]
    pub require_boot_ci: bool,
    /// The change (percent) the tester wants the design to resolve: `aba check` names the
    /// shortest sequence and sample count that reach it.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub detect_pct: Option<Spanned<f64>>,
    /// Recovery decompositions.
    #[serde(default)]
    pub recovery: Vec<RecoverySpec>,
    /// `extend = { until = "decided", max_points = N }`: after the planned sequence, append
    /// another unit of points while a comparison is undecided and `max_points` allows.
    #[serde(default)]
    pub extend: Option<ExtendSpec>,
    /// Comparisons between two cases within each kernel (`[[analysis.case_comparison]]`).
    #[serde(default)]
    pub case_comparison: Vec<CaseComparisonSpec>,
    /// Comparisons besides each kernel against the baseline (`[[analysis.comparison]]`):
    /// a candidate against another candidate, or against a second baseline.
    #[serde(default)]
    pub comparison: Vec<ComparisonSpec>,
}

/// `[[analysis.comparison]]`: one more kernel-against-kernel comparison, judged like every
/// candidate against the baseline, with its own verdict and statement.
///
/// Evidence bundles headline more than one: a fix against the parent and against the
/// previous release, or two diagnostic variants against each other.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComparisonSpec {
    /// The kernel whose change is measured.
    #[schemars(with = "KernelLabel")]
    pub candidate: Spanned<KernelLabel>,
    /// The kernel it is measured against.
    #[schemars(with = "KernelLabel")]
    pub baseline: Spanned<KernelLabel>,
}

/// `[analysis] extend`: a campaign that extends itself until its comparisons are decided.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtendSpec {
    /// When to stop before the budget: `"decided"` (every comparison SIGNAL or confidently
    /// below the gate; an UNSTABLE one stops too).
    pub until: ExtendUntil,
    /// The most points the campaign may have, the planned ones included.
    #[schemars(with = "u32")]
    pub max_points: Spanned<i64>,
}

/// `until` of `[analysis] extend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExtendUntil {
    /// Every comparison is decided.
    Decided,
}

/// `[[analysis.case_comparison]]`: one case against another on every kernel, judged like a
/// kernel against the baseline (a flag, a cgroup level: seeds 003 and 004).
///
/// Cases, not kernels, because both run in the same boot: the comparison pairs them point
/// by point, so the boot effect they share cancels (docs/statistics.md §13).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseComparisonSpec {
    /// The workload of the treatment case (and of the control case unless
    /// `control_workload` names another).
    #[schemars(with = "WorkloadName")]
    pub workload: Spanned<WorkloadName>,
    /// The treatment case (`key=value,…`, `""` for a workload without a matrix).
    #[schemars(with = "String")]
    pub treatment: Spanned<String>,
    /// The control case: what the treatment is compared with.
    #[schemars(with = "String")]
    pub control: Spanned<String>,
    /// The control case's workload when it is another one (a control workload of its own,
    /// seed 003's `-d`); its metrics are matched by name.
    #[serde(default)]
    #[schemars(with = "Option<WorkloadName>")]
    pub control_workload: Option<Spanned<WorkloadName>>,
}

/// `[[analysis.recovery]]`: how much of the gap between two kernels each step of a path
/// recovers.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoverySpec {
    /// Name of the decomposition.
    pub name: Name,
    /// `[from, to]`: the gap, e.g. `["child", "parent"]` for a regression (labels validated
    /// by `load`, like `sequence`).
    #[schemars(with = "Vec<String>")]
    pub gap: Spanned<Vec<Spanned<String>>>,
    /// Kernels in order, starting at `gap[0]`; each consecutive pair is one step.
    #[schemars(with = "Vec<String>")]
    pub path: Spanned<Vec<Spanned<String>>>,
}

/// What the recipe expects of the campaign: `[[expect]]` tables or one `[expect]` table.
///
/// TOML cannot hold both (an array of tables and a table of the same name), so the two are
/// exclusive by construction; the visitor says which forms exist instead of serde's
/// "did not match any variant".
#[derive(Debug)]
pub enum ExpectSection {
    /// `[[expect]]`: published results, each with a tolerance (none when absent), and at most
    /// one table with `reference` alone.
    Changes(Vec<Spanned<ExpectSpec>>),
    /// `[expect] reference = "…"`: a published result to compare the whole campaign with.
    Reference(ReferenceSpec),
}

impl Default for ExpectSection {
    fn default() -> Self {
        ExpectSection::Changes(Vec::new())
    }
}

impl<'de> Deserialize<'de> for ExpectSection {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ExpectSection;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "[[expect]] tables (one published change each) or one [expect] table with \
                     `reference = \"…\"`",
                )
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<ExpectSection, A::Error> {
                Vec::<Spanned<ExpectSpec>>::deserialize(
                    serde::de::value::SeqAccessDeserializer::new(seq),
                )
                .map(ExpectSection::Changes)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ExpectSection, A::Error> {
                ReferenceSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ExpectSection::Reference)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl schemars::JsonSchema for ExpectSection {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ExpectSection".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let changes = generator.subschema_for::<Vec<ExpectSpec>>();
        let reference = generator.subschema_for::<ReferenceSpec>();
        schemars::json_schema!({
            "description": "[[expect]] tables (one published change each) or one [expect] table with `reference`",
            "oneOf": [changes, reference],
        })
    }
}

/// `[expect]`: the reference a campaign reproduces, compared at the end of `aba run`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// An aba results directory, or a published bundle's folder or `<name>-points.tsv`,
    /// relative to the recipe file.
    #[schemars(with = "String")]
    pub reference: Spanned<String>,
}

/// `[[expect]]`: a published result this recipe should reproduce; or, alone in its table,
/// `reference`: the published result to compare the whole campaign with, beside the others.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSpec {
    /// The reference (as `[expect] reference`), alone in its table: lets a recipe hold both
    /// `[[expect]]` figures and a reference, which TOML's `[expect]` table cannot.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub reference: Option<Spanned<String>>,
    /// Workload name; required unless `reference` is given.
    #[serde(default)]
    #[schemars(with = "Option<WorkloadName>")]
    pub workload: Option<Spanned<WorkloadName>>,
    /// Matrix case (`key=value,…`); required when the workload has a matrix.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub case: Option<Spanned<String>>,
    /// Metric name; required when the workload has several.
    #[serde(default)]
    #[schemars(with = "Option<MetricName>")]
    pub metric: Option<Spanned<MetricName>>,
    /// Candidate kernel (default: the only kernel other than the baseline); with `mean`, the
    /// kernel whose mean is expected (any kernel, the baseline too).
    #[serde(default)]
    #[schemars(with = "Option<KernelLabel>")]
    pub kernel: Option<Spanned<KernelLabel>>,
    /// With `change_pct`: the kernel the change is against (default: `analysis.baseline`);
    /// another kernel needs its `[[analysis.comparison]]`.
    #[serde(default)]
    #[schemars(with = "Option<KernelLabel>")]
    pub baseline: Option<Spanned<KernelLabel>>,
    /// The published change against the baseline, in percent; or `"{params.NAME}"`, since
    /// the published number may be a machine's. Exactly one of `change_pct`, `mean` and
    /// `share_pct`.
    #[serde(default)]
    #[schemars(with = "Option<NumberOrParam>")]
    pub change_pct: Option<Spanned<NumberOrParam>>,
    /// A published absolute value, in the metric's unit: the boot-weighted mean of `kernel`,
    /// or the mean of `point`; or `"{params.NAME}"`.
    #[serde(default)]
    #[schemars(with = "Option<NumberOrParam>")]
    pub mean: Option<Spanned<NumberOrParam>>,
    /// With `mean`: the point (its label in the plan, `original-a`) whose mean is expected.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub point: Option<Spanned<String>>,
    /// With `change_pct`: the control case of an `[[analysis.case_comparison]]`, making the
    /// expectation the change of `case` against it on `kernel` (both in one boot).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub control: Option<Spanned<String>>,
    /// With `control`: the control case's workload when the case comparison names another.
    #[serde(default)]
    #[schemars(with = "Option<WorkloadName>")]
    pub control_workload: Option<Spanned<WorkloadName>>,
    /// With `share_pct`: the `[[analysis.recovery]]` whose step ending at `kernel` is
    /// expected.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub recovery: Option<Spanned<String>>,
    /// A published share of a recovery's gap, in percent, that the step ending at `kernel`
    /// recovers; or `"{params.NAME}"`.
    #[serde(default)]
    #[schemars(with = "Option<NumberOrParam>")]
    pub share_pct: Option<Spanned<NumberOrParam>>,
    /// Only a campaign on this target (its name in the inventory) is held to the
    /// expectation: a published figure is one machine's. Elsewhere it is listed as not
    /// applying, never as reproduced.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub target: Option<Spanned<String>>,
    /// How far the reproduced value may be from the published one: percentage points for
    /// `change_pct` and `share_pct`, the metric's unit for `mean`; or `"{params.NAME}"`.
    /// Required unless `reference` is given.
    #[serde(default)]
    #[schemars(with = "Option<NumberOrParam>")]
    pub tolerance: Option<Spanned<NumberOrParam>>,
}
