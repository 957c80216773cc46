//! The plan: a recipe and a target turned into the ordered list of points the engine runs, and
//! the design warnings a maintainer would raise before anyone spends a night on it.
//!
//! Pure: no I/O, no clock. `aba check` prints it; the engine executes it; resume re-derives it
//! from the copied recipe and compares.

use std::{fmt, sync::Arc, time::Duration};

use crate::point_name::point_name;

use thiserror::Error;

use crate::{
    inventory::{SwitchKind, Target},
    recipe::{
        Case, Recipe,
        ident::{EnvName, KernelLabel, PointLabel, Release, WorkloadName},
        limits,
        resolved::point_labels,
    },
    results::journal::AppendedPoint,
};

/// One workload case at one point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedCase {
    /// Index into `recipe.workloads`.
    pub workload: usize,
    /// Workload name.
    pub workload_name: WorkloadName,
    /// The matrix case.
    pub case: Case,
    /// The command, placeholders expanded.
    pub run: String,
    /// Environment, placeholders expanded.
    pub env: Vec<(EnvName, String)>,
    /// Warm-up runs.
    pub warmup: u32,
    /// Measured runs.
    pub samples: u32,
}

impl PlannedCase {
    /// `workload` or `workload[case]`.
    pub fn display_name(&self) -> String {
        self.case.display_name(&self.workload_name)
    }
}

/// One point: one fresh boot of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPoint {
    /// 1-based position in the sequence.
    pub order: usize,
    /// `original-a`, `patched`, …
    pub label: PointLabel,
    /// The kernel.
    pub kernel: KernelLabel,
    /// Its expected release (`running` for "whatever is up").
    pub release: Release,
    /// Every parameter that must appear in `/proc/cmdline`.
    pub cmdline: Vec<String>,
    /// The cases, in run order: those of the workloads that run on its kernel (`kernels`).
    /// The points of a kernel share one expansion: the plan's memory does not grow with the
    /// number of points.
    pub cases: Arc<[PlannedCase]>,
}

impl PlannedPoint {
    /// The name a reader sees (`a#1`, `b`): [`crate::point_name::point_name`].
    #[must_use]
    pub fn name(&self) -> String {
        point_name(self.label.as_str(), self.kernel.as_str())
    }
}

/// A design that will run but cannot answer the question well.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanWarning {
    /// No kernel is booted twice: boot-to-boot variation cannot be told from a change.
    NoRepeatedKernel,
    /// The baseline is booted once: its drift is unknown.
    BaselineOnce {
        /// The baseline.
        baseline: KernelLabel,
    },
    /// Fewer than 3 measured samples: no meaningful CV, and drop-first leaves no SD.
    FewSamples {
        /// The workload.
        workload: WorkloadName,
        /// Its sample count.
        samples: u32,
    },
    /// All points share one boot (no switch): they measure run-to-run noise, not boots.
    SharedBoot,
    /// The estimate exceeds [`limits::ETA_CONFIRM`]: `aba run` wants `--yes`.
    LongEta {
        /// The estimate.
        eta: Duration,
    },
    /// The plan makes more than [`limits::RUNS_CONFIRM`] workload runs: `aba run` wants
    /// `--yes`, whatever the estimates say (they are the recipe's guesses).
    ManyRuns {
        /// Workload runs in all, warm-ups included.
        runs: u64,
    },
    /// The boot-level interval rests on ν = 1 or 2 repeated boots: its t quantile is huge, so
    /// a verdict needs a change many times its boot noise (docs/statistics.md).
    FewBootPairs {
        /// ν = Σ (boots − 1) over the kernels booted twice or more.
        nu: usize,
        /// A sequence with ν ≥ 3 over the same kernels.
        suggestion: String,
    },
}

/// ν of a sequence: Σ (boots − 1) over the kernels it boots twice or more.
#[must_use]
pub fn boot_dof(sequence: &[KernelLabel]) -> usize {
    let mut kernels: Vec<&KernelLabel> = Vec::new();
    for k in sequence {
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    kernels
        .iter()
        .map(|k| sequence.iter().filter(|s| s == k).count().saturating_sub(1))
        .sum()
}

/// A sequence over the same kernels with ν ≥ 3: every kernel twice in order of first boot,
/// closed by the first again (`a, b, a, b, a` for two kernels, ν = 3; ν = K + 1 for K).
fn design_with_three_pairs(sequence: &[KernelLabel]) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    for k in sequence {
        if !kernels.contains(&k.as_str()) {
            kernels.push(k.as_str());
        }
    }
    let mut design: Vec<&str> = kernels.iter().chain(kernels.iter()).copied().collect();
    design.extend(kernels.first());
    format!(
        "[\"{}\"] (ν = {})",
        design.join("\", \""),
        kernels.len() + 1
    )
}

impl fmt::Display for PlanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanWarning::NoRepeatedKernel => f.write_str(
                "no kernel is booted twice (plain A/B): drift cannot be measured, so a change cannot be told from boot-to-boot variation; use A-B-A",
            ),
            PlanWarning::BaselineOnce { baseline } => write!(
                f,
                "the baseline `{baseline}` is booted once: its drift is unknown; bracket the candidate with it (A-B-A)"
            ),
            PlanWarning::FewSamples { workload, samples } => write!(
                f,
                "workload `{workload}` takes {samples} sample(s) per point: fewer than 3 gives no usable CV and no drop-first SD"
            ),
            PlanWarning::SharedBoot => f.write_str(
                "the target does not switch kernels: all points share one boot, so drift measures run-to-run noise, not boots",
            ),
            PlanWarning::LongEta { eta } => write!(
                f,
                "the campaign is estimated to take {}, more than {}: `aba run` starts it only with --yes",
                format_eta(*eta),
                format_eta(limits::ETA_CONFIRM)
            ),
            PlanWarning::ManyRuns { runs } => write!(
                f,
                "the plan makes {runs} workload runs, more than {}: `aba run` starts it only with --yes",
                limits::RUNS_CONFIRM
            ),
            PlanWarning::FewBootPairs { nu, suggestion } => write!(
                f,
                "the boot-level interval rests on ν = {nu} ({}), so its t quantile is {}: a SIGNAL needs a change far beyond the boot noise and every verdict says it rests on that few boots; sequence = {suggestion} reaches ν ≥ 3",
                if *nu == 1 { "one control pair" } else { "two boot pairs" },
                if *nu == 1 { "12.71" } else { "4.30" }
            ),
        }
    }
}

/// Why a recipe cannot run on a target.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    /// The journal appended a point of a kernel the recipe does not have.
    #[error(
        "the journal appended point `{point}` of kernel `{kernel}`, which the recipe does not have"
    )]
    UnknownAppended {
        /// Point label.
        point: String,
        /// Its kernel.
        kernel: String,
    },
    /// Different kernels, or a real release, on a target that cannot switch.
    #[error("target `{target}` cannot switch kernels, but the recipe boots {kernels}")]
    NoSwitch {
        /// Target name.
        target: String,
        /// What the recipe asks for.
        kernels: String,
    },
    /// Different kernels, or per-kernel parameters, on a power target that cannot choose
    /// what boots (no `set_next`): it would cut power and fail at the first point's proof.
    #[error(
        "target `{target}` switches by power without `set_next`, so a power cycle boots what the machine boots by default and cannot give each point its kernel, but the recipe asks for {kernels}; add to [targets.{target}.power] a `set_next` command that selects the next kernel (it may use {{release}}, {{kernel}}, {{image}}, {{initrd}}, {{cmdline}} or {{params}}), or name the kernel in its `cycle` command the same way"
    )]
    CannotChoose {
        /// Target name.
        target: String,
        /// What the recipe asks for.
        kernels: String,
    },
    /// `release = "running"` on a target that switches kernels.
    #[error(
        "kernel `{kernel}` has release = \"running\", which only a target with switch = \"none\" can run (target `{target}` switches by {method})"
    )]
    RunningWithSwitch {
        /// Kernel label.
        kernel: KernelLabel,
        /// Target name.
        target: String,
        /// Its switch method.
        method: SwitchKind,
    },
}

/// The ordered points and their cost.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Points in boot order.
    pub points: Vec<PlannedPoint>,
    /// Fresh boots the campaign needs (0 when the target does not switch).
    pub boots: usize,
    /// Workload runs in all (warm-ups included).
    pub runs: u64,
    /// Estimated wall time, boots included.
    pub eta: Duration,
    /// Estimated time per boot used for the ETA.
    pub boot_estimate: Duration,
    /// Design warnings.
    pub warnings: Vec<PlanWarning>,
}

/// One point of a [`Summary`]: who boots, in which order, with which parameters
/// (serialised as is by `aba check --json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PointSummary {
    /// 1-based position in the sequence.
    pub order: usize,
    /// `original-a`, `patched`, …
    pub label: PointLabel,
    /// The kernel.
    pub kernel: KernelLabel,
    /// Its expected release.
    pub release: Release,
    /// Every parameter that must appear in `/proc/cmdline`.
    pub cmdline: Vec<String>,
}

impl PointSummary {
    /// The name a reader sees (`a#1`, `b`): [`crate::point_name::point_name`].
    #[must_use]
    pub fn name(&self) -> String {
        point_name(self.label.as_str(), self.kernel.as_str())
    }
}

/// What a plan costs, computed without expanding a single case: what `aba check` prints, so
/// its memory stays proportional to the recipe, not to its cases × points.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Points in boot order.
    pub points: Vec<PointSummary>,
    /// Cases of all workloads (a point runs those of the workloads on its kernel).
    pub cases: u64,
    /// Fresh boots the campaign needs (0 when the target does not switch).
    pub boots: usize,
    /// Workload runs in all (warm-ups included).
    pub runs: u64,
    /// Estimated wall time, boots included.
    pub eta: Duration,
    /// Estimated time per boot used for the ETA.
    pub boot_estimate: Duration,
    /// Estimated time of `[setup]` and `[teardown]` at each point, in the ETA from the first
    /// point on (each command a tenth of its timeout:
    /// [`crate::recipe::resolved::Steps::estimate`]).
    pub steps_estimate: Duration,
    /// Design warnings.
    pub warnings: Vec<PlanWarning>,
    /// The largest plan an extended campaign (`[analysis] extend`) may reach; `None` when
    /// the recipe does not extend.
    pub extended: Option<MaxPlan>,
}

/// The largest plan of an extended campaign: every unit the budget allows appended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MaxPlan {
    /// Points, the planned ones included (at most `max_points`; a whole number of units).
    pub points: usize,
    /// The kernels of one appended unit.
    pub unit: Vec<KernelLabel>,
    /// Looks: after the planned points and after every unit.
    pub looks: u32,
    /// Fresh boots.
    pub boots: usize,
    /// Workload runs, warm-ups included.
    pub runs: u64,
    /// Estimated wall time (`eta_s`, seconds, in `aba check --json`).
    #[serde(rename = "eta_s", serialize_with = "crate::campaign::plan::secs")]
    pub eta: Duration,
}

/// The recipe's releases, sorted, each once.
fn distinct_releases(recipe: &Recipe) -> Vec<&str> {
    let mut releases: Vec<&str> = recipe
        .kernels
        .values()
        .map(|k| k.release.as_str())
        .collect();
    releases.sort_unstable();
    releases.dedup();
    releases
}

/// What in `recipe` needs a switch that chooses the kernel: two releases or more, or kernels
/// with parameters of their own; `None` when every point boots the same thing.
fn needs_a_choice(recipe: &Recipe) -> Option<String> {
    let releases = distinct_releases(recipe);
    let with_params: Vec<String> = recipe
        .kernels
        .values()
        .filter(|k| !k.cmdline.is_empty())
        .map(|k| format!("`{}`", k.label))
        .collect();
    let mut asked = Vec::new();
    if releases.len() > 1 {
        asked.push(format!(
            "{} different releases ({})",
            releases.len(),
            releases.join(", ")
        ));
    }
    if !with_params.is_empty() {
        asked.push(format!(
            "parameters of their own for kernel(s) {}",
            with_params.join(", ")
        ));
    }
    (!asked.is_empty()).then(|| asked.join(" and "))
}

/// A duration as whole seconds.
pub(crate) fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

impl Summary {
    /// Summarises the plan of `recipe` on `target`.
    pub fn new(recipe: &Recipe, target: &Target) -> Result<Summary, PlanError> {
        let method = target.switch.method();
        let switches = method.switches();
        if !switches {
            let releases = distinct_releases(recipe);
            if releases.len() > 1 {
                return Err(PlanError::NoSwitch {
                    target: target.name.clone(),
                    kernels: format!(
                        "{} different releases ({})",
                        releases.len(),
                        releases.join(", ")
                    ),
                });
            }
        } else if let Some(k) = recipe.kernels.values().find(|k| k.release.is_running()) {
            return Err(PlanError::RunningWithSwitch {
                kernel: k.label.clone(),
                target: target.name.clone(),
                method: method.kind(),
            });
        } else if !method.chooses_kernel()
            && let Some(kernels) = needs_a_choice(recipe)
        {
            return Err(PlanError::CannotChoose {
                target: target.name.clone(),
                kernels,
            });
        }

        let points: Vec<PointSummary> = recipe
            .sequence
            .iter()
            .zip(point_labels(&recipe.sequence))
            .enumerate()
            .map(|(i, (kernel, label))| PointSummary {
                order: i + 1,
                label: PointLabel::new(label),
                kernel: kernel.clone(),
                release: recipe.kernels[kernel].release.clone(),
                cmdline: recipe.cmdline_for(kernel),
            })
            .collect();
        let n_points = points.len() as u64;
        // Saturating throughout: the recipe's limits keep these far from overflowing, and a
        // value that still would must become a huge ETA, never a panic.
        let mut cases = 0u64;
        for workload in &recipe.workloads {
            cases = cases.saturating_add(workload.case_count());
        }
        // A point's runs and work depend on its kernel: workloads and probes may name theirs.
        let mut runs = 0u64;
        let mut work = Duration::ZERO;
        for p in &points {
            let (r, w) = point_work(recipe, &p.kernel);
            runs = runs.saturating_add(r);
            work = work.saturating_add(w);
        }
        let boots = if switches { points.len() } else { 0 };
        let boot_estimate = target.boot_estimate;
        // Setup runs after every boot (a compile is redone at every point), teardown at the
        // end of every point: both count at every point, the first included.
        let steps_estimate = recipe
            .setup
            .estimate()
            .saturating_add(recipe.teardown.estimate());
        let eta = work
            .saturating_add(
                recipe
                    .settle
                    .saturating_add(steps_estimate)
                    .saturating_mul(saturate(n_points)),
            )
            .saturating_add(boot_estimate.saturating_mul(saturate(boots as u64)));

        let mut warnings = Vec::new();
        let repeated = |k: &KernelLabel| recipe.sequence.iter().filter(|s| *s == k).count() >= 2;
        if recipe.kernels.len() > 1 {
            if !recipe.sequence.iter().any(repeated) {
                warnings.push(PlanWarning::NoRepeatedKernel);
            } else if !repeated(&recipe.analysis.baseline) {
                warnings.push(PlanWarning::BaselineOnce {
                    baseline: recipe.analysis.baseline.clone(),
                });
            }
            let nu = boot_dof(&recipe.sequence);
            if (1..=2).contains(&nu) && switches {
                warnings.push(PlanWarning::FewBootPairs {
                    nu,
                    suggestion: design_with_three_pairs(&recipe.sequence),
                });
            }
        }
        // A check has no CV to compute: one run per boot is what it asks for.
        for w in &recipe.workloads {
            if w.samples < 3 && !w.is_check() {
                warnings.push(PlanWarning::FewSamples {
                    workload: w.name.clone(),
                    samples: w.samples,
                });
            }
        }
        if !switches && points.len() > 1 {
            warnings.push(PlanWarning::SharedBoot);
        }
        let extended = recipe.analysis.extend.as_ref().map(|e| {
            let boundary = e.boundary(points.len());
            let max = boundary.points.last().copied().unwrap_or(points.len());
            let extra = saturate((max - points.len()) as u64);
            // An appended point costs what an average point of its unit does.
            let unit_len = saturate(e.unit.len().max(1) as u64);
            let (unit_runs, unit_work) = e.unit.iter().fold((0u64, Duration::ZERO), |acc, k| {
                let (r, w) = point_work(recipe, k);
                (acc.0.saturating_add(r), acc.1.saturating_add(w))
            });
            let runs_per_point = unit_runs / u64::from(unit_len);
            let per_point = (unit_work / unit_len)
                .saturating_add(recipe.settle)
                .saturating_add(steps_estimate)
                .saturating_add(if switches {
                    boot_estimate
                } else {
                    Duration::ZERO
                });
            MaxPlan {
                points: max,
                unit: e.unit.clone(),
                looks: boundary.looks(),
                boots: if switches { max } else { 0 },
                runs: runs.saturating_add(runs_per_point.saturating_mul(u64::from(extra))),
                eta: eta.saturating_add(per_point.saturating_mul(extra)),
            }
        });
        // An extended campaign may run its largest plan: that is what `--yes` must cover.
        let (worst_eta, worst_runs) = extended.as_ref().map_or((eta, runs), |m| (m.eta, m.runs));
        if worst_eta > limits::ETA_CONFIRM {
            warnings.push(PlanWarning::LongEta { eta: worst_eta });
        }
        if worst_runs > limits::RUNS_CONFIRM {
            warnings.push(PlanWarning::ManyRuns { runs: worst_runs });
        }
        Ok(Summary {
            points,
            cases,
            boots,
            runs,
            eta,
            boot_estimate,
            steps_estimate,
            warnings,
            extended,
        })
    }

    /// True when `aba run` must be confirmed with `--yes`: the estimate exceeds
    /// [`limits::ETA_CONFIRM`] or the runs [`limits::RUNS_CONFIRM`] (for an extended
    /// campaign, those of its largest plan).
    pub fn needs_confirmation(&self) -> bool {
        self.confirmation_reason().is_some()
    }

    /// Why `aba run` wants `--yes` (`the campaign is estimated to take …, more than …`), or
    /// `None` when it does not.
    #[must_use]
    pub fn confirmation_reason(&self) -> Option<String> {
        let mut reasons = Vec::new();
        let (eta, runs, when) = match &self.extended {
            Some(max) => (max.eta, max.runs, " if every look extends"),
            None => (self.eta, self.runs, ""),
        };
        if eta > limits::ETA_CONFIRM {
            reasons.push(format!(
                "the campaign is estimated to take {}{when}, more than {}",
                format_eta(eta),
                format_eta(limits::ETA_CONFIRM)
            ));
        }
        if runs > limits::RUNS_CONFIRM {
            reasons.push(format!(
                "the plan makes {runs} workload runs{when}, more than {}",
                limits::RUNS_CONFIRM
            ));
        }
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }
}

/// The workload runs (warm-ups included) at one point of `kernel` and what they and its
/// probes are expected to take: each run its `estimate`, each probe a tenth of its
/// timeout, as a setup step counts ([`crate::recipe::resolved::STEP_ESTIMATE_DIVISOR`]).
fn point_work(recipe: &Recipe, kernel: &KernelLabel) -> (u64, Duration) {
    let mut runs = 0u64;
    let mut work = Duration::ZERO;
    for workload in recipe
        .workloads
        .iter()
        .filter(|w| w.runs_on(kernel.as_str()))
    {
        let n = workload
            .case_count()
            .saturating_mul(u64::from(workload.warmup) + u64::from(workload.samples));
        runs = runs.saturating_add(n);
        work = work.saturating_add(workload.estimate.saturating_mul(saturate(n)));
    }
    for probe in recipe.probes.iter().filter(|p| p.runs_on(kernel.as_str())) {
        work = work.saturating_add(probe.timeout / crate::recipe::resolved::STEP_ESTIMATE_DIVISOR);
    }
    (runs, work)
}

/// A count as a `Duration` multiplier.
fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Plan {
    /// Builds the plan of `recipe` on `target`.
    pub fn new(recipe: &Recipe, target: &Target) -> Result<Plan, PlanError> {
        let summary = Summary::new(recipe, target)?;
        let all = planned_cases(recipe);
        let points = summary
            .points
            .into_iter()
            .map(|p| PlannedPoint {
                cases: Arc::clone(&all[&p.kernel]),
                order: p.order,
                label: p.label,
                kernel: p.kernel,
                release: p.release,
                cmdline: p.cmdline,
            })
            .collect();
        Ok(Plan {
            points,
            boots: summary.boots,
            runs: summary.runs,
            eta: summary.eta,
            boot_estimate: summary.boot_estimate,
            warnings: summary.warnings,
        })
    }
}

/// Every kernel's cases, in run order: the workloads that run on it (`kernels`), each case
/// expanded once and shared by the kernel's points.
fn planned_cases(recipe: &Recipe) -> std::collections::HashMap<KernelLabel, Arc<[PlannedCase]>> {
    let mut cases = Vec::new();
    for (w, workload) in recipe.workloads.iter().enumerate() {
        for case in workload.cases() {
            let run = case.render(&workload.run);
            let env = workload
                .env
                .iter()
                .map(|(k, v)| (k.clone(), case.render(v)))
                .collect();
            cases.push(PlannedCase {
                workload: w,
                workload_name: workload.name.clone(),
                case,
                run,
                env,
                warmup: workload.warmup,
                samples: workload.samples,
            });
        }
    }
    recipe
        .kernels
        .keys()
        .map(|k| {
            let of_kernel: Arc<[PlannedCase]> = cases
                .iter()
                .filter(|c| recipe.workloads[c.workload].runs_on(k.as_str()))
                .cloned()
                .collect();
            (k.clone(), of_kernel)
        })
        .collect()
}

impl Plan {
    /// The points of one more unit of an extended campaign (`[analysis] extend`), after the
    /// plan's: each kernel's label is its kernel with the letter of its boot (`b-b` for the
    /// second boot of `b`, `a-c` for the third of `a`), made unique against the plan's labels.
    #[must_use]
    pub fn next_unit(&self, unit: &[KernelLabel]) -> Vec<AppendedPoint> {
        let mut taken: Vec<String> = self.points.iter().map(|p| p.label.to_string()).collect();
        let mut kernels: Vec<&KernelLabel> = self.points.iter().map(|p| &p.kernel).collect();
        let mut out = Vec::with_capacity(unit.len());
        for kernel in unit {
            kernels.push(kernel);
            let nth = kernels.iter().filter(|k| **k == kernel).count();
            let mut label = if nth <= 26 {
                let letter = char::from(b'a' + u8::try_from(nth - 1).unwrap_or(25));
                format!("{kernel}-{letter}")
            } else {
                format!("{kernel}-{nth}")
            };
            while taken.contains(&label) {
                label.push_str("-x");
            }
            taken.push(label.clone());
            out.push(AppendedPoint {
                label,
                order: self.points.len() + out.len() + 1,
                kernel: kernel.to_string(),
            });
        }
        out
    }

    /// Appends the points an extended campaign's look journaled, with the cases, release and
    /// command line of their kernel, and their cost (each as much as a planned point).
    pub fn append(&mut self, recipe: &Recipe, points: &[AppendedPoint]) -> Result<(), PlanError> {
        let n = u32::try_from(self.points.len().max(1)).unwrap_or(1);
        let per_point_eta = self.eta / n;
        let per_point_boots = usize::from(self.boots > 0);
        if self.points.is_empty() {
            return Ok(());
        }
        let cases = planned_cases(recipe);
        for p in points {
            let Some(kernel) = recipe
                .kernels
                .values()
                .find(|k| k.label.as_str() == p.kernel)
            else {
                return Err(PlanError::UnknownAppended {
                    point: p.label.clone(),
                    kernel: p.kernel.clone(),
                });
            };
            self.points.push(PlannedPoint {
                order: p.order,
                label: PointLabel::new(p.label.clone()),
                kernel: kernel.label.clone(),
                release: kernel.release.clone(),
                cmdline: recipe.cmdline_for(&kernel.label),
                cases: Arc::clone(&cases[&kernel.label]),
            });
            self.eta = self.eta.saturating_add(per_point_eta);
            self.runs = self
                .runs
                .saturating_add(point_work(recipe, &kernel.label).0);
            self.boots += per_point_boots;
        }
        Ok(())
    }
}

/// `1h 02m`, `4m 10s`, `12s`: precise enough for an ETA, short enough for a progress bar.
pub fn format_eta(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{Plan, PlanError, PlanWarning, Summary, format_eta};
    use crate::{
        inventory::{Inventory, Target},
        recipe::parse,
    };

    const ABA: &str = r#"
version = 1
name = "t"
description = "d"
sequence = ["a", "b", "a"]
samples = 2
[kernels.a]
release = "6.1.0-47-cloud-amd64"
[kernels.b]
release = "6.1.0-50-cloud-amd64"
cmdline = "aba.b=1"
[boot]
cmdline = "quiet"
[[workload]]
name = "pipe"
run = "bench --level {level}"
matrix = { level = ["0", "1"] }
estimate = "2s"
metric = { number = true, better = "higher" }
"#;

    fn kexec_target() -> Target {
        let inv = Inventory::parse(
            Path::new("t.toml"),
            "[targets.lab]\nhost = \"127.0.0.1\"\nhost_key = \"SHA256:x\"\nswitch = \"kexec\"\nboot_estimate = \"10s\"\n",
        )
        .expect("valid");
        inv.target("lab").expect("defined")
    }

    #[test]
    fn a_workload_or_probe_on_chosen_kernels_is_planned_and_estimated_only_there() {
        // Default warm-up 3 + 2 samples at 2 s, two cases: 20 s of `pipe` per point; `only_b`
        // 5 runs of 1 s at b; the probe a tenth of its 60 s at b.
        let text = format!(
            "{ABA}[[workload]]\nname = \"only_b\"\nrun = \"true\"\nkernels = [\"b\"]\n\
             metric = {{ number = true, better = \"lower\" }}\n\
             [[probe]]\nname = \"p\"\nrun = \"true\"\nkernels = [\"b\"]\ntimeout = \"60s\"\n"
        );
        let recipe = parse(Path::new("r.toml"), &text).expect("valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        let names = |i: usize| -> Vec<String> {
            plan.points[i]
                .cases
                .iter()
                .map(super::PlannedCase::display_name)
                .collect()
        };
        assert_eq!(names(0), ["pipe[level=0]", "pipe[level=1]"]);
        assert_eq!(names(1), ["pipe[level=0]", "pipe[level=1]", "only_b"]);
        assert_eq!(names(2), names(0));
        assert_eq!(plan.runs, 3 * 10 + 5);
        assert_eq!(plan.eta.as_secs(), 3 * 10 + 3 * 20 + 5 + 6);
    }

    #[test]
    fn points_follow_the_sequence_with_cases_expanded() {
        let recipe = parse(Path::new("r.toml"), ABA).expect("valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        let labels: Vec<&str> = plan.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["a-a", "b", "a-b"]);
        assert_eq!(plan.points[1].cmdline, ["quiet", "aba.b=1"]);
        assert_eq!(plan.points[0].cases[1].run, "bench --level 1");
        assert_eq!(plan.points[0].cases[1].display_name(), "pipe[level=1]");
        assert_eq!(plan.boots, 3);
        assert_eq!(plan.runs, 3 * 2 * 5);
        assert_eq!(plan.eta.as_secs(), 3 * 10 + 30 * 2);
        assert_eq!(
            plan.warnings,
            [
                PlanWarning::FewBootPairs {
                    nu: 1,
                    suggestion: r#"["a", "b", "a", "b", "a"] (ν = 3)"#.to_owned()
                },
                PlanWarning::FewSamples {
                    workload: crate::recipe::ident::WorkloadName::new("pipe").expect("valid"),
                    samples: 2
                }
            ]
        );
        assert_eq!(
            plan.warnings[0].to_string(),
            "the boot-level interval rests on ν = 1 (one control pair), so its t quantile is \
             12.71: a SIGNAL needs a change far beyond the boot noise and every verdict says it \
             rests on that few boots; sequence = [\"a\", \"b\", \"a\", \"b\", \"a\"] (ν = 3) \
             reaches ν ≥ 3"
        );
        // A/B/A/B/A reaches ν = 3: no such warning.
        let src = ABA.replace(r#"["a", "b", "a"]"#, r#"["a", "b", "a", "b", "a"]"#);
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        assert!(
            !plan
                .warnings
                .iter()
                .any(|w| matches!(w, PlanWarning::FewBootPairs { .. }))
        );
    }

    #[test]
    fn bound_parameters_reach_the_planned_cmdline_and_commands() {
        // A parameter next to a matrix key: the value is in before the case expands.
        let src = ABA
            .replace(
                "cmdline = \"quiet\"",
                "cmdline = \"quiet nohz_full={params.cpus}\"",
            )
            .replace(
                "run = \"bench --level {level}\"",
                "run = \"bench --cpu {params.cpus} --level {level}\"",
            )
            .replace(
                "[[workload]]",
                "[params]\ncpus = { default = \"2-3\", means = \"isolated\" }\n[[workload]]",
            );
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        assert_eq!(plan.points[0].cmdline, ["quiet", "nohz_full=2-3"]);
        assert_eq!(plan.points[0].cases[1].run, "bench --cpu 2-3 --level 1");
        let bindings =
            [crate::recipe::params::ParamBinding::from_option("cpus=5,7").expect("valid")];
        let recipe = crate::recipe::Loader {
            params: crate::recipe::Params::Bind(&bindings),
            ..crate::recipe::Loader::default()
        }
        .parse(Path::new("r.toml"), &src)
        .expect("valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        assert_eq!(
            plan.points[1].cmdline,
            ["quiet", "nohz_full=5,7", "aba.b=1"]
        );
        assert_eq!(plan.points[1].cases[0].run, "bench --cpu 5,7 --level 0");
    }

    #[test]
    fn local_target_cannot_switch() {
        let recipe = parse(Path::new("r.toml"), ABA).expect("valid");
        let err = Plan::new(&recipe, &Target::local()).expect_err("no switch");
        assert!(matches!(err, PlanError::NoSwitch { .. }), "{err}");
    }

    #[test]
    fn plain_ab_is_warned_about() {
        let src = ABA.replace(r#"["a", "b", "a"]"#, r#"["a", "b"]"#);
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        assert!(plan.warnings.contains(&PlanWarning::NoRepeatedKernel));
    }

    #[test]
    fn setup_and_teardown_count_at_every_point_from_the_first() {
        let src = ABA.replace(
            "[[workload]]",
            "[setup]\nrun = [\"cc -o bench bench.c\"]\ntimeout = \"2m\"\n\
             [teardown]\nrun = [\"rm -f bench\"]\ntimeout = \"10s\"\n[[workload]]",
        );
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let plan = Summary::new(&recipe, &kexec_target()).expect("plannable");
        // 12 s for the compile (a tenth of 2m), 1 s for the teardown, at each of 3 points.
        assert_eq!(plan.steps_estimate.as_secs(), 13);
        assert_eq!(plan.eta.as_secs(), 3 * 10 + 30 * 2 + 3 * 13);
        // The engine's and status's ETA before the first point is done: a third of it.
        let engine = Plan::new(&recipe, &kexec_target()).expect("plannable");
        assert_eq!(engine.eta, plan.eta);
    }

    #[test]
    fn more_than_a_hundred_thousand_runs_want_yes_whatever_the_estimate() {
        let values: Vec<String> = (0..1000).map(|i| format!("\"{i}\"")).collect();
        let src = ABA
            .replace(
                r#"matrix = { level = ["0", "1"] }"#,
                &format!("matrix = {{ level = [{}] }}", values.join(", ")),
            )
            .replace("samples = 2", "samples = 40")
            .replace("estimate = \"2s\"", "estimate = \"0s\"");
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let plan = Summary::new(&recipe, &kexec_target()).expect("plannable");
        assert_eq!(plan.runs, 3 * 1000 * 43);
        assert!(plan.eta < crate::recipe::limits::ETA_CONFIRM);
        assert!(
            plan.warnings
                .contains(&PlanWarning::ManyRuns { runs: 129_000 })
        );
        assert!(plan.needs_confirmation());
        assert_eq!(
            plan.confirmation_reason().as_deref(),
            Some("the plan makes 129000 workload runs, more than 100000")
        );
        let small = parse(Path::new("r.toml"), ABA).expect("valid");
        let plan = Summary::new(&small, &kexec_target()).expect("plannable");
        assert_eq!(plan.confirmation_reason(), None);
    }

    #[test]
    fn an_extended_plan_costs_its_largest_plan_and_confirms_it() {
        let src = ABA
            .replace("samples = 2", "samples = 3\nwarmup = 0")
            .replace("estimate = \"2s\"", "estimate = \"1h\"")
            .replace(
                "[[workload]]",
                "[analysis]\nextend = { until = \"decided\", max_points = 10 }\n[[workload]]",
            );
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let plan = Summary::new(&recipe, &kexec_target()).expect("plannable");
        // 3 planned points of 2 cases x 3 runs x 1 h and a 10 s boot: 18 h 00 m 30 s.
        assert_eq!(plan.eta.as_secs(), 3 * (6 * 3600 + 10));
        let max = plan.extended.as_ref().expect("extends");
        assert_eq!((max.points, max.looks, max.boots, max.runs), (9, 4, 9, 54));
        assert_eq!(max.eta.as_secs(), 9 * (6 * 3600 + 10));
        let units: Vec<&str> = max.unit.iter().map(|k| k.as_str()).collect();
        assert_eq!(units, ["b", "a"]);
        // 18 h planned needs no --yes; 54 h if every look extends does.
        assert_eq!(
            plan.confirmation_reason().as_deref(),
            Some(
                "the campaign is estimated to take 54h 01m if every look extends, more than 24h 00m"
            )
        );
        let engine = Plan::new(&recipe, &kexec_target()).expect("plannable");
        let next = engine.next_unit(&max.unit);
        let labels: Vec<&str> = next.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["b-b", "a-c"]);
        assert_eq!(next[1].order, 5);
    }

    #[test]
    fn eta_formats() {
        assert_eq!(format_eta(std::time::Duration::from_secs(59)), "59s");
        assert_eq!(format_eta(std::time::Duration::from_secs(250)), "4m 10s");
        assert_eq!(format_eta(std::time::Duration::from_secs(3720)), "1h 02m");
    }
}
