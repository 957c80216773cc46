//! `aba check --json`: the plan of a recipe on a target and the change its design can detect,
//! from the same [`Summary`] and [`Advice`] the text is printed from.

use serde::Serialize;

use crate::{
    campaign::{
        advice::{Advice, Recommendation, SeriesAdvice, SeriesNoise},
        footprint::{Footprint, HostCopy, StepCommands},
        plan::{PointSummary, Summary},
    },
    inventory::Target,
    json::{FORMAT, Kind},
    kernel::binding::BoundKernel,
    profile::select::Choice,
    recipe::Recipe,
};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct CheckDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `check`.
    pub kind: Kind,
    /// The recipe checked.
    pub recipe: RecipeJson<'a>,
    /// The target it was planned for.
    pub target: TargetJson<'a>,
    /// The recipe's kernels as the campaign would boot them, each field with where it came
    /// from (`{"from": "recipe"}`, `{"from": "inventory", "at": "FILE:LINE:COLUMN"}`,
    /// `{"from": "command_line", "option": "--kernel …"}`).
    pub kernels: Vec<KernelJson<'a>>,
    /// The recipe's `[params]` with the value the campaign would use and where it came from
    /// (`from` as for kernels; `{"from": "recipe"}` is the default).
    pub params: Vec<ParamJson<'a>>,
    /// Points in boot order.
    pub points: &'a [PointSummary],
    /// Workload cases every point runs.
    pub cases: u64,
    /// Workload runs in all, warm-ups included.
    pub runs: u64,
    /// Fresh boots the campaign needs: 0 on a target that does not switch kernels.
    pub boots: usize,
    /// Estimated wall time, seconds.
    pub eta_s: f64,
    /// The largest plan of a campaign that extends itself (`[analysis] extend`): points,
    /// the unit, looks, boots, runs and `eta` in seconds; absent when the recipe does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extend: Option<&'a crate::campaign::plan::MaxPlan>,
    /// Estimated seconds per boot in `eta_s`.
    pub boot_estimate_s: f64,
    /// Estimated seconds of setup and teardown per point in `eta_s` (each command a tenth of
    /// its timeout).
    pub steps_estimate_s: f64,
    /// The host files copied to the target after every boot.
    pub copies: Vec<CopyJson<'a>>,
    /// The commands run on the target at every point.
    pub commands: CommandsJson<'a>,
    /// The settings changed on the target.
    pub changes: ChangesJson<'a>,
    /// `aba run` starts the plan only with `--yes` (estimated at more than a day, or more
    /// than 10^5 runs).
    pub needs_yes: bool,
    /// How the results will be judged: metrics, limits, checks per kernel, expectations.
    pub judged: crate::campaign::judging::Judging<'a>,
    /// Design warnings, as the text prints them after `warning: `.
    pub warnings: Vec<String>,
    /// The change the design can detect, or why it is unknown.
    pub detect: DetectJson<'a>,
}

/// Which recipe.
#[derive(Debug, Serialize)]
pub struct RecipeJson<'a> {
    /// Its `name`.
    pub name: &'a str,
    /// The file, as given on the command line.
    pub path: String,
    /// SHA-256 of the recipe and its files (what the journal records).
    pub sha256: &'a str,
}

/// Which target.
#[derive(Debug, Serialize)]
pub struct TargetJson<'a> {
    /// Its inventory name (`local` when none was given, as for `aba run`).
    pub name: &'a str,
    /// Its switch method (`none`, `kexec`, `grub-reboot`, …).
    pub switch: String,
}

/// One `[files]` entry.
#[derive(Debug, Serialize)]
pub struct CopyJson<'a> {
    /// The path under the target's work directory.
    pub to: &'a str,
    /// The resolved host file.
    pub from: String,
    /// Its size; `null` when it cannot be read.
    pub bytes: Option<u64>,
    /// Its hex SHA-256; `null` when it cannot be read.
    pub sha256: Option<&'a str>,
    /// Why it cannot be read; `null` when it can.
    pub unreadable: Option<&'a str>,
}

/// The commands, in the order a point runs them.
#[derive(Debug, Serialize)]
pub struct CommandsJson<'a> {
    /// `[setup]`.
    pub setup: StepsJson<'a>,
    /// The first cases in run order, at most as many as the text lists.
    pub cases: Vec<CaseJson<'a>>,
    /// Cases in all; more than `cases` holds when the listing is cut.
    pub cases_total: u64,
    /// `[[probe]]`, in file order (absent without any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ProbeJson<'a>>,
    /// `[teardown]`.
    pub teardown: StepsJson<'a>,
}

/// Setup or teardown.
#[derive(Debug, Serialize)]
pub struct StepsJson<'a> {
    /// The shell commands, in order.
    pub run: &'a [String],
    /// Deadline of each, seconds.
    pub timeout_s: f64,
    /// What each counts in `eta_s`, seconds.
    pub estimate_s: f64,
}

/// One case's command, placeholders substituted.
#[derive(Debug, Serialize)]
pub struct CaseJson<'a> {
    /// `workload` or `workload[case]`.
    pub name: &'a str,
    /// The command `sh -c` runs.
    pub run: &'a str,
    /// Its environment: `[name, value]` pairs in file order.
    pub env: &'a [(String, String)],
    /// The CPUs it is pinned to (`taskset -c`); `null` when not pinned.
    pub cpu: Option<&'a str>,
    /// Warm-up runs per point.
    pub warmup: u32,
    /// Measured runs per point.
    pub samples: u32,
    /// An untimed correctness check (`role = "check"`): pass/fail, never analysed.
    pub check: bool,
    /// The kernels whose points run it (`kernels`, as `b` or `a, b`); absent: every point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<&'a str>,
}

/// One `[[probe]]`.
#[derive(Debug, Serialize)]
pub struct ProbeJson<'a> {
    /// Its name.
    pub name: &'a str,
    /// The command `sh -c` runs.
    pub run: &'a str,
    /// `before` or `after` the samples.
    pub when: &'a str,
    /// Its kernels (`b`, `a, b`); absent: every point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<&'a str>,
    /// Its deadline, seconds.
    pub timeout_s: f64,
    /// The functions of its ftrace profile.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub ftrace: &'a [String],
}

/// What the recipe changes on the target, every value read back.
#[derive(Debug, Serialize)]
pub struct ChangesJson<'a> {
    /// `[boot] cmdline`: parameters every boot must carry.
    pub cmdline: &'a [String],
    /// Parameters of one kernel only: `{kernel, cmdline}` for the kernels that have some.
    pub kernel_cmdline: Vec<KernelCmdlineJson<'a>>,
    /// `[sysctl]` in file order: `{name, value}`.
    pub sysctls: Vec<SysctlJson<'a>>,
    /// `[tuning]`: `{knob, value, required}`.
    pub tuning: Vec<KnobJson<'a>>,
}

/// One kernel's own parameters.
#[derive(Debug, Serialize)]
pub struct KernelCmdlineJson<'a> {
    /// The kernel label.
    pub kernel: &'a str,
    /// Its parameters.
    pub cmdline: &'a [String],
}

/// One sysctl.
#[derive(Debug, Serialize)]
pub struct SysctlJson<'a> {
    /// Dotted name.
    pub name: &'a str,
    /// The value written.
    pub value: &'a str,
}

/// One CPU frequency knob.
#[derive(Debug, Serialize)]
pub struct KnobJson<'a> {
    /// `governor`, `epp` or `turbo`.
    pub knob: &'a str,
    /// The value written (`on`, `off` for turbo).
    pub value: &'a str,
    /// False for an `optional` knob.
    pub required: bool,
}

/// What `aba check` knows of the change the design can detect.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DetectJson<'a> {
    /// `--no-profile`.
    Off,
    /// The target has no noise profile that holds for the recipe.
    NoProfile {
        /// The directory searched.
        dir: String,
        /// The profiles found there, each with why it was not used.
        not_used: &'a [String],
    },
    /// From the target's profile.
    Profile {
        /// The profile file.
        file: String,
        /// The recipe's design: the largest detectable change over the profiled series,
        /// percent; `null` when no series is profiled.
        design_pct: Option<f64>,
        /// Per series.
        series: Vec<SeriesDetectJson<'a>>,
        /// With `[analysis] detect_pct`: the shortest design that resolves it; `null` without
        /// `detect_pct` or when none does.
        recommendation: Option<RecommendationJson<'a>>,
    },
}

/// One series' detectable change.
#[derive(Debug, Serialize)]
pub struct SeriesDetectJson<'a> {
    /// `workload`, `workload[case]`, plus `/metric`.
    pub label: &'a str,
    /// Per candidate, in order of first boot: the change in percent, `null` when the design
    /// cannot resolve any; empty when the profile does not hold for the series.
    pub detectable: Vec<DetectableJson<'a>>,
    /// ν of the boot variance (the profile's plus the design's own); `null` when unknown.
    pub dof: Option<f64>,
    /// The profile's boot-level (or point-to-point) SD, percent.
    pub boot_sd_pct: Option<f64>,
    /// The profile's within-boot CV, percent.
    pub within_cv_pct: Option<f64>,
    /// Why the profile says nothing of this series; `null` when it does.
    pub unknown: Option<&'a str>,
}

/// One candidate's detectable change.
#[derive(Debug, Serialize)]
pub struct DetectableJson<'a> {
    /// The candidate kernel.
    pub candidate: &'a str,
    /// Percent; `null` when not resolvable (ν = 0).
    pub pct: Option<f64>,
}

/// A design that resolves `detect_pct`.
#[derive(Debug, Serialize)]
pub struct RecommendationJson<'a> {
    /// The boot sequence.
    pub sequence: Vec<&'a str>,
    /// Measured samples per point.
    pub samples: u32,
    /// Its largest detectable change, percent.
    pub pct: f64,
    /// Its estimated wall time, seconds.
    pub eta_s: f64,
    /// It pools the profile (otherwise its own boots alone give the boot variance).
    pub pooled: bool,
}

/// What the command found about detection, before it becomes JSON.
pub enum DetectSource<'a> {
    /// `--no-profile`.
    Off,
    /// No profile holds.
    None(&'a Choice),
    /// The advice and the profile file it came from.
    Profile(&'a Advice, &'a std::path::Path),
}

/// One `[params]` entry as `aba check --json` shows it.
#[derive(Debug, Serialize)]
pub struct ParamJson<'a> {
    /// Its name.
    pub name: &'a str,
    /// The value in effect.
    pub value: &'a str,
    /// The recipe's default.
    pub default: &'a str,
    /// What it means, as the recipe says.
    pub means: &'a str,
    /// Where `value` came from.
    pub from: &'a crate::origin::Origin,
}

/// One kernel of [`CheckDoc`]: the bound kernel, with `image` and `initrd` (and where they
/// came from) `null` when no file is booted: a kernel of release `running`, or any kernel on a
/// target that does not switch, runs on the boot that is up (no made-up
/// `/boot/vmlinuz-running`).
#[derive(Debug, Serialize)]
pub struct KernelJson<'a> {
    /// The recipe's label.
    pub label: &'a crate::recipe::ident::KernelLabel,
    /// What `uname -r` must print.
    pub release: &'a crate::recipe::ident::Release,
    /// Where `release` came from.
    pub release_from: &'a crate::origin::Origin,
    /// The image booted, when one is.
    pub image: Option<&'a crate::recipe::ident::TargetPath>,
    /// Where `image` came from.
    pub image_from: Option<&'a crate::origin::Origin>,
    /// The initrd booted, when one is.
    pub initrd: Option<&'a crate::recipe::ident::TargetPath>,
    /// Where `initrd` came from.
    pub initrd_from: Option<&'a crate::origin::Origin>,
    /// A kernel built on this host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<&'a crate::build::record::KernelBuild>,
}

impl<'a> KernelJson<'a> {
    /// `kernels` as they are used on a target that switches kernels or (`switches` false)
    /// does not.
    #[must_use]
    pub fn all(kernels: &'a [BoundKernel], switches: bool) -> Vec<KernelJson<'a>> {
        kernels
            .iter()
            .map(|k| {
                let booted = switches && !k.release.is_running();
                KernelJson {
                    label: &k.label,
                    release: &k.release,
                    release_from: &k.release_from,
                    image: booted.then_some(&k.image),
                    image_from: booted.then_some(&k.image_from),
                    initrd: booted.then_some(&k.initrd),
                    initrd_from: booted.then_some(&k.initrd_from),
                    build: k.build.as_deref(),
                }
            })
            .collect()
    }
}

impl<'a> CheckDoc<'a> {
    /// The document of `plan` for `recipe` on `target`.
    #[must_use]
    pub fn new(
        recipe: &'a Recipe,
        target: &'a Target,
        plan: &'a Summary,
        footprint: &'a Footprint,
        detect: &DetectSource<'a>,
    ) -> CheckDoc<'a> {
        CheckDoc {
            format: FORMAT,
            kind: Kind::Check,
            recipe: RecipeJson {
                name: recipe.name.as_str(),
                path: recipe.path.to_string_lossy().into_owned(),
                sha256: &recipe.sha256,
            },
            target: TargetJson {
                name: target.name.as_str(),
                switch: target.switch.method().kind().to_string(),
            },
            kernels: Vec::new(),
            params: recipe
                .params
                .iter()
                .map(|p| ParamJson {
                    name: p.name.as_str(),
                    value: p.value.as_str(),
                    default: p.default.as_str(),
                    means: &p.means,
                    from: &p.from,
                })
                .collect(),
            points: &plan.points,
            cases: plan.cases,
            runs: plan.runs,
            boots: plan.boots,
            eta_s: plan.eta.as_secs_f64(),
            extend: plan.extended.as_ref(),
            boot_estimate_s: plan.boot_estimate.as_secs_f64(),
            steps_estimate_s: plan.steps_estimate.as_secs_f64(),
            copies: footprint.copies.iter().map(CopyJson::new).collect(),
            commands: CommandsJson::new(footprint),
            changes: ChangesJson::new(footprint),
            needs_yes: plan.needs_confirmation(),
            judged: crate::campaign::judging::Judging::of(recipe),
            warnings: plan.warnings.iter().map(ToString::to_string).collect(),
            detect: DetectJson::new(detect),
        }
    }
}

impl<'a> CopyJson<'a> {
    fn new(c: &'a HostCopy) -> CopyJson<'a> {
        let (digest, unreadable) = match &c.content {
            Ok(d) => (Some(d), None),
            Err(e) => (None, Some(e.as_str())),
        };
        CopyJson {
            to: &c.to,
            from: c.from.to_string_lossy().into_owned(),
            bytes: digest.map(|d| d.bytes),
            sha256: digest.map(|d| d.sha256.as_str()),
            unreadable,
        }
    }
}

impl<'a> CommandsJson<'a> {
    fn new(f: &'a Footprint) -> CommandsJson<'a> {
        CommandsJson {
            setup: StepsJson::new(&f.setup),
            cases: f
                .cases
                .iter()
                .map(|c| CaseJson {
                    name: &c.name,
                    run: &c.run,
                    env: &c.env,
                    cpu: c.cpu.as_deref(),
                    warmup: c.warmup,
                    samples: c.samples,
                    check: c.check,
                    kernels: c.kernels.as_deref(),
                })
                .collect(),
            cases_total: f.cases_total,
            probes: f
                .probes
                .iter()
                .map(|p| ProbeJson {
                    name: &p.name,
                    run: &p.run,
                    when: p.when,
                    kernels: p.kernels.as_deref(),
                    timeout_s: p.timeout.as_secs_f64(),
                    ftrace: &p.ftrace,
                })
                .collect(),
            teardown: StepsJson::new(&f.teardown),
        }
    }
}

impl<'a> StepsJson<'a> {
    fn new(s: &'a StepCommands) -> StepsJson<'a> {
        StepsJson {
            run: &s.commands,
            timeout_s: s.timeout.as_secs_f64(),
            estimate_s: s.counted.as_secs_f64(),
        }
    }
}

impl<'a> ChangesJson<'a> {
    fn new(f: &'a Footprint) -> ChangesJson<'a> {
        ChangesJson {
            cmdline: &f.boot_cmdline,
            kernel_cmdline: f
                .kernel_cmdline
                .iter()
                .map(|(kernel, cmdline)| KernelCmdlineJson { kernel, cmdline })
                .collect(),
            sysctls: f
                .sysctls
                .iter()
                .map(|(name, value)| SysctlJson { name, value })
                .collect(),
            tuning: f
                .tuning
                .iter()
                .map(|k| KnobJson {
                    knob: k.knob,
                    value: &k.value,
                    required: k.required,
                })
                .collect(),
        }
    }
}

impl<'a> DetectJson<'a> {
    fn new(source: &DetectSource<'a>) -> DetectJson<'a> {
        match source {
            DetectSource::Off => DetectJson::Off,
            DetectSource::None(choice) => DetectJson::NoProfile {
                dir: choice.dir.to_string_lossy().into_owned(),
                not_used: &choice.not_used,
            },
            DetectSource::Profile(advice, file) => DetectJson::Profile {
                file: file.to_string_lossy().into_owned(),
                design_pct: advice.design_pct,
                series: advice.series.iter().map(SeriesDetectJson::new).collect(),
                recommendation: advice.recommendation.as_ref().map(RecommendationJson::new),
            },
        }
    }
}

impl<'a> SeriesDetectJson<'a> {
    fn new(s: &'a SeriesAdvice) -> SeriesDetectJson<'a> {
        match &s.noise {
            SeriesNoise::Known {
                detectable,
                dof,
                boot_sd_pct,
                within_cv_pct,
            } => SeriesDetectJson {
                label: &s.label,
                detectable: detectable
                    .iter()
                    .map(|d| DetectableJson {
                        candidate: d.candidate.as_str(),
                        pct: d.pct,
                    })
                    .collect(),
                dof: Some(*dof),
                boot_sd_pct: Some(*boot_sd_pct),
                within_cv_pct: Some(*within_cv_pct),
                unknown: None,
            },
            SeriesNoise::Unknown(why) => SeriesDetectJson {
                label: &s.label,
                detectable: Vec::new(),
                dof: None,
                boot_sd_pct: None,
                within_cv_pct: None,
                unknown: Some(why),
            },
        }
    }
}

impl<'a> RecommendationJson<'a> {
    fn new(r: &'a Recommendation) -> RecommendationJson<'a> {
        RecommendationJson {
            sequence: r.sequence.iter().map(|k| k.as_str()).collect(),
            samples: r.samples,
            pct: r.pct,
            eta_s: r.eta.as_secs_f64(),
            pooled: r.pooled,
        }
    }
}
