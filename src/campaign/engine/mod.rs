//! The campaign engine: runs a plan point by point on a target and never loses or mislabels a
//! sample.
//!
//! A point is atomic. It starts with a switch to its kernel and a proof of the boot, then
//! tuning, the environment record, files, setup, every workload case (warm-ups, then samples),
//! teardown and the health check. Only a point whose attempt reaches `point_done` in the
//! journal counts; an attempt that fails is retried from a fresh boot, and one that a killed
//! runner left open is marked discarded on resume and redone. Every run's rows are appended to
//! `samples.csv` and journaled, both fsynced, before the next run starts.
//!
//! The engine does not know which transport or switch method it drives (it asks the
//! [`crate::kernel::switch::Method`]), and never prints: it emits events and journals.
//!
//! One concern per module:
//!
//! | module | keeps |
//! | --- | --- |
//! | `points` | the order of points and the attempt policy: retry, give up, verify the whole directory |
//! | `extend` | the looks of a campaign that extends itself: judge, journal the decision and the appended points, append them |
//! | `attempt` | one point attempt: switch, proof, the steps in order, health, the attempt's own verification |
//! | `steps` | what a point does on the target besides workloads: tuning, environment, files, setup, teardown |
//! | `run` | one workload run ([`run::RunId`]): execute, judge, write its rows and record, retry per `retries` |
//! | `reconnect` | a connection lost mid-step: reconnect, same boot (repeat the step) or not (fail the point) |
//! | `resume` | opening a campaign again: the header must match, open attempts are discarded, state replayed |
//! | `failure` | what went wrong, as typed values, what it costs, and the kernel failure report |
//! | `finish` | how a run ends: restore tuning, the last record, the lock marker |
//! | `hooks` | the inventory's notification commands |
//! | `raw` | saving a failed command's output under `raw/` |
//! | `shell` | the shell text that runs a command on the target |

mod attempt;
mod extend;
mod failure;
mod finish;
mod hooks;
mod points;
mod probes;
mod raw;
mod reconnect;
mod resume;
mod run;
mod shell;
mod steps;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use failure::{Console, Failure, KernelReport, Outcome, PastFailure, Stop};

use crate::{
    campaign::{
        eta::PointClock,
        events::{CampaignEvent, Observer, Step, Warning},
        ledger::{CampaignKey, Ledger},
        lock::TargetLock,
        plan::{Plan, PlannedPoint},
        tuning::Saved,
    },
    inventory::Target,
    recipe::{Recipe, ident::PointLabel},
    results::{
        journal::{
            AppendedPoint, CampaignState, Event, JOURNAL_FORMAT, JournalError, JournalWriter,
            PointState, now_rfc3339,
        },
        layout::ResultsDir,
        samples::SampleWriter,
    },
    stats::sequential::Decision,
    target::{cpu_set::CpuSet, transport::Transport},
};

/// How many times one run may be repeated after lost connections before the point fails.
const MAX_RECONNECTS_PER_RUN: u32 = 3;
/// How long to keep trying to reconnect after a connection dropped mid-point.
const RECONNECT_WINDOW: Duration = Duration::from_secs(120);

/// Choices the command line makes for a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Allow changing sysctls and CPU frequency settings of a target that is not rebooted
    /// between points (the local machine): they are restored at the end.
    pub allow_tuning: bool,
    /// Wait while another campaign holds the target instead of refusing.
    pub wait: bool,
    /// Decides the looks of an extended campaign instead of `[analysis] extend`'s stopping
    /// rule: `aba bisect`'s step, which stops when its commit is shown like good or like bad.
    pub look_rule: Option<LookRule>,
}

/// A stopping rule for the looks of an extended campaign (`[analysis] extend`), given the
/// analysis `aba report` would make at the look: the decision, and why in a few words (the
/// journal's and the report's text). An error stops the campaign at that look, resumably.
#[derive(Clone)]
pub struct LookRule(pub std::sync::Arc<LookFn>);

/// The function a [`LookRule`] holds.
pub type LookFn = dyn Fn(
        &crate::analysis::model::Analysis,
        &crate::stats::sequential::Look,
    ) -> Result<(crate::stats::sequential::Decision, String), String>
    + Send
    + Sync;

impl std::fmt::Debug for LookRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LookRule(..)")
    }
}

/// Why the engine could not even start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The journal could not be written or read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// `samples.csv` could not be opened.
    #[error(transparent)]
    Samples(#[from] crate::results::samples::SamplesError),
    /// The results directory does not belong to this recipe, target or plan.
    #[error("{0}")]
    Mismatch(Mismatch),
    /// Tuning a machine that is not rebooted needs consent.
    #[error(
        "the recipe changes sysctls or CPU frequency settings, and target `{0}` is not rebooted between points, so this machine's settings would change"
    )]
    TuningNotAllowed(String),
}

/// How a results directory differs from what resume was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// The recipe or one of its files changed.
    #[error(
        "the recipe or its files changed since the campaign started (sha256 {now} now, {then} then)"
    )]
    Recipe {
        /// SHA-256 now.
        now: String,
        /// SHA-256 in the journal.
        then: String,
    },
    /// Another target.
    #[error("the campaign ran on target `{then}`, not `{now}`")]
    Target {
        /// The target given now.
        now: String,
        /// The journal's target.
        then: String,
    },
    /// The plan's points differ.
    #[error("the plan's points differ from the journal's")]
    Plan,
}

/// Everything a point attempt learned about its boot.
#[derive(Clone, Debug)]
struct Boot {
    boot_id: String,
    release: String,
}

/// Which attempt of which point: what every record of the attempt names.
#[derive(Clone, Copy, Debug)]
struct AttemptId<'p> {
    point: &'p PlannedPoint,
    attempt: u32,
}

/// What a campaign runs: the recipe (the copy in the results directory), its plan, the target
/// and the results directory.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// The recipe.
    pub recipe: &'a Recipe,
    /// Its plan on `target`.
    pub plan: &'a Plan,
    /// The machine.
    pub target: &'a Target,
    /// Where everything is written.
    pub dir: &'a ResultsDir,
    /// The target's lock, held for this campaign: its marker is checked after every boot and
    /// released at the end.
    pub lock: Option<&'a TargetLock>,
    /// Records a new campaign journals right after its header (which noise profile it uses,
    /// that it is a calibration); ignored on resume, whose journal has them.
    pub records: &'a [Event],
}

/// Runs (or resumes) one campaign. Holds no global state besides the interrupt flag, so one
/// engine per target can run in its own thread.
pub struct Engine<'a> {
    recipe: &'a Recipe,
    /// The job's plan, with the points an extended campaign appended.
    plan: Plan,
    /// The points appended to the recipe's plan (`[analysis] extend`), as journaled.
    appended: Vec<AppendedPoint>,
    /// The looks taken so far and what each decided: a look is never taken twice.
    looks: Vec<(u32, Decision)>,
    /// The stopping rule that replaces `[analysis] extend`'s, when the command gives one.
    look_rule: Option<LookRule>,
    target: &'a Target,
    dir: &'a ResultsDir,
    lock: Option<&'a TargetLock>,
    transport: &'a mut dyn Transport,
    observer: &'a mut dyn Observer,
    journal: JournalWriter,
    samples: SampleWriter,
    workdir: String,
    base_cmdline: Option<String>,
    last_boot_id: Option<String>,
    pinned_release: Option<String>,
    saved_tuning: Option<Saved>,
    /// The target's record of what aba changed on it, where tuning's values are kept.
    ledger: Ledger,
    /// The campaign's name in the ledger.
    campaign: CampaignKey,
    /// The boot whose own values are journaled (`tuning_saved`): tuning it again must not
    /// journal aba's values as the machine's.
    tuning_saved_boot: Option<String>,
    kernel_failures: failure::KernelFailures,
    /// Where the console log ended when the current attempt began (0 without one).
    console_from: u64,
    /// The points' measured durations, the ETA's only source.
    clock: PointClock,
    /// This run's first environment record was checked for a loaded machine.
    load_read: bool,
    done: usize,
    /// The points' state when this run began (fresh, or replayed from the journal on resume).
    start: CampaignState,
}

/// Whether a run starts a campaign or picks one up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// A new campaign in an empty results directory: the journal header is written.
    New,
    /// An existing campaign (`aba resume`): the recipe, target and plan must match the
    /// journal's, an attempt the last runner left open is discarded, the resumption journaled.
    Resume,
}

impl<'a> Engine<'a> {
    /// Opens the campaign in `job`'s results directory as `start` says; refuses to tune a
    /// machine that is not rebooted without consent, before anything is written.
    pub fn open(
        job: Job<'a>,
        start: Start,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        options: &RunOptions,
    ) -> Result<Engine<'a>, EngineError> {
        check_tuning_consent(job.recipe, job.target, options)?;
        let mut engine = match start {
            Start::New => {
                let journal = JournalWriter::open(&job.dir.journal_path())?;
                Engine::create_with(job, transport, observer, journal)
            }
            Start::Resume => Engine::resume(job, transport, observer),
        }?;
        engine.look_rule = options.look_rule.clone();
        Ok(engine)
    }

    /// A new campaign appending to `journal`.
    fn create_with(
        job: Job<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        mut journal: JournalWriter,
    ) -> Result<Engine<'a>, EngineError> {
        let labels: Vec<PointLabel> = job.plan.points.iter().map(|p| p.label.clone()).collect();
        let header = Event::Campaign {
            format: JOURNAL_FORMAT,
            aba: env!("CARGO_PKG_VERSION").to_owned(),
            name: job.recipe.name.to_string(),
            recipe_sha256: job.recipe.sha256.clone(),
            target: job.target.name.clone(),
            points: labels.iter().map(ToString::to_string).collect(),
            time: now_rfc3339(),
            limits: Some(crate::results::journal::Limits::of(job.recipe)),
        };
        journal.append(&header)?;
        let campaign = CampaignKey::of(Some(&header));
        for record in job.records {
            journal.append(record)?;
        }
        let samples = SampleWriter::open(&job.dir.samples_path())?;
        let start = CampaignState {
            points: labels
                .into_iter()
                .map(|label| PointState {
                    label,
                    ..PointState::default()
                })
                .collect(),
            ..CampaignState::default()
        };
        Ok(Engine::assemble(
            job, transport, observer, journal, samples, start, campaign,
        ))
    }

    fn assemble(
        job: Job<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        journal: JournalWriter,
        samples: SampleWriter,
        start: CampaignState,
        campaign: CampaignKey,
    ) -> Engine<'a> {
        let Job {
            recipe,
            plan,
            target,
            dir,
            lock,
            records: _,
        } = job;
        transport.keep_off_cpus(&pinned_cpus(recipe));
        let workdir = dir
            .target_workdir(target.workdir.as_deref())
            .unwrap_or_else(|| dir.work_dir().to_string_lossy().into_owned());
        Engine {
            recipe,
            plan: plan.clone(),
            appended: Vec::new(),
            looks: Vec::new(),
            look_rule: None,
            target,
            dir,
            lock,
            transport,
            observer,
            journal,
            samples,
            workdir,
            base_cmdline: None,
            last_boot_id: None,
            pinned_release: None,
            saved_tuning: None,
            ledger: Ledger::of(target),
            campaign,
            tuning_saved_boot: None,
            kernel_failures: failure::KernelFailures::default(),
            console_from: 0,
            clock: PointClock::default(),
            load_read: false,
            done: 0,
            start,
        }
    }

    /// Runs every point that is not done yet.
    pub fn run(mut self) -> Outcome {
        if let Err(e) = self.journal_reserved() {
            return self.finish(Outcome::Stopped(Stop::Journal(e)));
        }
        let state = std::mem::take(&mut self.start);
        self.observer.event(&CampaignEvent::Started {
            points: self.plan.points.len(),
            done: self.done,
            eta: self.remaining_eta(),
            dir: self.dir.root.display().to_string(),
        });
        let outcome = self.run_points(&state);
        self.finish(outcome)
    }

    fn switches(&self) -> bool {
        self.target.switch.method().switches()
    }

    fn step(&mut self, step: Step) {
        self.observer.event(&CampaignEvent::Step(step));
    }

    fn info(&mut self, text: impl Into<String>) {
        self.observer.event(&CampaignEvent::Info(text.into()));
    }

    /// Shows a warning that needs no record of its own.
    fn notice(&mut self, warning: Warning) {
        self.observer.event(&CampaignEvent::Warning(warning));
    }

    /// Removes aba's one-shot boot-loader leftovers on the target (see [`Method::clean`]) and
    /// journals what went; a failure to remove them is a journaled warning, not a stop.
    ///
    /// [`Method::clean`]: crate::kernel::switch::Method::clean
    fn clean_boot_loader(
        &mut self,
        point: Option<&PointLabel>,
        attempt: Option<u32>,
    ) -> Result<(), JournalError> {
        match self.target.switch.method().clean(self.transport) {
            Ok(removed) if removed.is_empty() => Ok(()),
            Ok(removed) => {
                self.info(format!("boot loader: {}", removed.join("; ")));
                self.journal.append(&Event::BootEntriesRemoved {
                    point: point.map(ToString::to_string),
                    attempt,
                    removed,
                    time: now_rfc3339(),
                })
            }
            Err(e) => self.warn(point, Warning::BootEntriesKept(crate::causes::one_line(&e))),
        }
    }

    /// Shows a warning and journals it.
    fn warn(&mut self, point: Option<&PointLabel>, warning: Warning) -> Result<(), JournalError> {
        let text = warning.to_string();
        self.notice(warning);
        self.journal.append(&Event::Warning {
            point: point.map(ToString::to_string),
            text,
        })
    }
}

/// Refuses, before anything is created, to change the settings of a machine that is not
/// rebooted between points unless the user said so.
pub fn check_tuning_consent(
    recipe: &Recipe,
    target: &Target,
    options: &RunOptions,
) -> Result<(), EngineError> {
    let changes = !recipe.sysctls.is_empty() || !recipe.tuning.is_empty();
    if changes && !target.switch.method().switches() && !options.allow_tuning {
        return Err(EngineError::TuningNotAllowed(target.name.clone()));
    }
    Ok(())
}

/// Every CPU some workload of `recipe` is pinned to: aba keeps its own processes on the target
/// off them (the inventory's `runner_cpus`).
fn pinned_cpus(recipe: &Recipe) -> CpuSet {
    recipe
        .workloads
        .iter()
        .filter_map(|w| w.cpu.as_ref())
        .filter_map(|cpu| CpuSet::parse(cpu.as_str()).ok())
        .fold(CpuSet::default(), |all, cpus| all.union(&cpus))
}
