//! The campaign engine: runs a plan point by point on a target and never loses or mislabels a
//! sample.
//!
//! A point is atomic. It starts with a switch to its kernel and a proof of the boot, then
//! tuning, the environment record, files, setup, every workload case (warm-ups, then samples),
//! teardown and the audit. Only a point whose attempt reaches `point_done` in the journal
//! counts; an attempt that fails is retried from a fresh boot, and one that a killed runner
//! left open is marked discarded on resume and redone. Every run's rows are appended to
//! `samples.csv` and journaled, both fsynced, before the next run starts.
//!
//! The engine does not know which transport or switch method it drives, and never prints.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use crate::{
    campaign::{
        environment::{self, Audit},
        events::{CampaignEvent, Observer, Step},
        extract::{RunFailure, evaluate},
        plan::{Plan, PlannedCase, PlannedPoint, RUNNING_RELEASE},
        tuning::{self, Saved},
    },
    interrupt,
    inventory::{SwitchMethod, Target},
    kernel::{
        proof::{base_cmdline, prove, read_facts},
        switch::{SwitchError, SwitchPhase, SwitchRequest, switch_to},
    },
    recipe::{Recipe, Workload, ident::CpuList},
    results::{
        atomic::write_atomic,
        journal::{
            CampaignState, Event, JOURNAL_FORMAT, Journal, JournalWriter, PointState, now_rfc3339,
            now_rfc3339_micros,
        },
        layout::{ResultsDir, path_safe},
        samples::{Phase, SampleRow, SampleTable, SampleWriter, Status},
        verify::{Scope, rows_per_attempt, verify},
    },
    target::{
        host::run_host,
        quote::sh_quote,
        transport::{CommandOutput, Transport, TransportError},
    },
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
}

/// How a campaign run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every point is done.
    Finished,
    /// Stopped before the end; the directory is resumable.
    Stopped {
        /// Why, in words (kernel, point, console tail).
        reason: String,
    },
    /// Ctrl-C / SIGTERM; the directory is resumable.
    Interrupted,
}

/// Why the engine could not even start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The journal could not be written or read.
    #[error(transparent)]
    Journal(#[from] crate::results::journal::JournalError),
    /// `samples.csv` could not be opened.
    #[error(transparent)]
    Samples(#[from] crate::results::samples::SamplesError),
    /// The results directory does not belong to this recipe/target.
    #[error("{0}")]
    Mismatch(String),
    /// Tuning a machine that is not rebooted needs consent.
    #[error(
        "the recipe changes sysctls or CPU frequency settings, and target `{0}` is not rebooted between points, so this machine's settings would change"
    )]
    TuningNotAllowed(String),
}

impl EngineError {
    /// How to fix it.
    pub fn hint(&self) -> Option<String> {
        match self {
            EngineError::TuningNotAllowed(_) => Some(
                "pass --allow-tuning to apply them; previous values are restored at the end and on Ctrl-C".to_owned(),
            ),
            EngineError::Mismatch(_) => Some("start a new campaign with `aba run`".to_owned()),
            _ => None,
        }
    }
}

/// A failure inside a point.
enum PointError {
    /// The point attempt failed; retry per policy.
    Failed(String),
    /// Stop the campaign (host key, results disk, journal).
    Fatal(String),
    /// The connection dropped during a step: worth a reconnect and a `boot_id` check before
    /// the step is repeated; counts as `Failed` when it cannot be recovered.
    Lost(String),
    /// Ctrl-C.
    Interrupted,
}

impl From<crate::results::journal::JournalError> for PointError {
    fn from(e: crate::results::journal::JournalError) -> Self {
        PointError::Fatal(error_chain(&e))
    }
}

impl From<crate::results::samples::SamplesError> for PointError {
    fn from(e: crate::results::samples::SamplesError) -> Self {
        PointError::Fatal(error_chain(&e))
    }
}

/// `error: cause: cause`, one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}

/// Maps a transport error met in the middle of a point.
fn transport_failure(e: TransportError, doing: &str) -> PointError {
    match e {
        TransportError::Interrupted { .. } => PointError::Interrupted,
        TransportError::HostKey { .. } => PointError::Fatal(format!(
            "{doing}: {e}; aba stopped and sends no further command to this target"
        )),
        TransportError::ConnectionLost { .. } => {
            PointError::Lost(format!("{doing}: {}", error_chain(&e)))
        }
        other => PointError::Failed(format!("{doing}: {}", error_chain(&other))),
    }
}

/// Everything a point attempt learned about its boot.
struct Boot {
    boot_id: String,
    release: String,
}

/// What a campaign runs: the recipe (the copy in the results directory), its plan, the target
/// and the results directory.
#[derive(Clone, Copy, Debug)]
pub struct Campaign<'a> {
    /// The recipe.
    pub recipe: &'a Recipe,
    /// Its plan on `target`.
    pub plan: &'a Plan,
    /// The machine.
    pub target: &'a Target,
    /// Where everything is written.
    pub dir: &'a ResultsDir,
}

/// Runs (or resumes) one campaign.
pub struct Engine<'a> {
    recipe: &'a Recipe,
    plan: &'a Plan,
    target: &'a Target,
    dir: &'a ResultsDir,
    transport: &'a mut dyn Transport,
    observer: &'a mut dyn Observer,
    journal: JournalWriter,
    samples: SampleWriter,
    workdir: String,
    base_cmdline: Option<String>,
    last_boot_id: Option<String>,
    pinned_release: Option<String>,
    saved_tuning: Option<Saved>,
    kernel_failures: HashMap<String, Vec<String>>,
    point_times: Vec<Duration>,
    done: usize,
    /// The points' state when this run began (fresh, or replayed from the journal on resume).
    start: CampaignState,
}

impl<'a> Engine<'a> {
    /// Starts a new campaign in an empty results directory: writes the journal header.
    pub fn create(
        campaign: Campaign<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        options: &RunOptions,
    ) -> Result<Engine<'a>, EngineError> {
        check_tuning_consent(campaign.recipe, campaign.target, options)?;
        let labels: Vec<String> = campaign
            .plan
            .points
            .iter()
            .map(|p| p.label.clone())
            .collect();
        let mut journal = JournalWriter::open(&campaign.dir.journal_path())?;
        journal.append(&Event::Campaign {
            format: JOURNAL_FORMAT,
            aba: env!("CARGO_PKG_VERSION").to_owned(),
            name: campaign.recipe.name.to_string(),
            recipe_sha256: campaign.recipe.sha256.clone(),
            target: campaign.target.name.clone(),
            points: labels.clone(),
            time: now_rfc3339(),
            limits: Some((&campaign.recipe.analysis).into()),
        })?;
        let samples = SampleWriter::open(&campaign.dir.samples_path())?;
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
            campaign, transport, observer, journal, samples, start,
        ))
    }

    /// Opens an existing campaign: checks that the recipe and target match, marks the rows of
    /// any attempt the last runner left open as discarded, and journals the resumption.
    pub fn resume(
        campaign: Campaign<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        options: &RunOptions,
    ) -> Result<Engine<'a>, EngineError> {
        let Campaign {
            recipe,
            plan,
            target,
            dir,
        } = campaign;
        check_tuning_consent(recipe, target, options)?;
        let past = Journal::read(&dir.journal_path())?;
        if let Some(Event::Campaign {
            recipe_sha256,
            target: t,
            points,
            ..
        }) = past.header()
        {
            if *recipe_sha256 != recipe.sha256 {
                return Err(EngineError::Mismatch(format!(
                    "the recipe or its files changed since the campaign started (sha256 {} now, {} then)",
                    recipe.sha256, recipe_sha256
                )));
            }
            if *t != target.name {
                return Err(EngineError::Mismatch(format!(
                    "the campaign ran on target `{t}`, not `{}`",
                    target.name
                )));
            }
            let labels: Vec<&String> = plan.points.iter().map(|p| &p.label).collect();
            if points.iter().collect::<Vec<_>>() != labels {
                return Err(EngineError::Mismatch(
                    "the plan's points differ from the journal's".to_owned(),
                ));
            }
        }
        let state = past.state();
        let mut journal = JournalWriter::open(&dir.journal_path())?;
        journal.append(&Event::Resumed {
            time: now_rfc3339(),
        })?;
        if state.points.iter().any(|p| p.open.is_some()) {
            // samples.csv is never rewritten: the journal says these rows do not count.
            let rows = if dir.samples_path().is_file() {
                rows_per_attempt(&SampleTable::read(&dir.samples_path())?)
            } else {
                std::collections::BTreeMap::new()
            };
            for point in &state.points {
                if let Some(attempt) = point.open {
                    journal.append(&Event::PointDiscarded {
                        point: point.label.clone(),
                        attempt,
                        rows: rows
                            .get(&(point.label.clone(), attempt))
                            .copied()
                            .unwrap_or(0),
                    })?;
                }
            }
        }
        let samples = SampleWriter::open(&dir.samples_path())?;
        let mut engine = Engine::assemble(
            campaign,
            transport,
            observer,
            journal,
            samples,
            state.clone(),
        );
        engine.base_cmdline = state.base_cmdline.clone();
        engine.last_boot_id = state
            .points
            .iter()
            .flat_map(|p| p.boots.iter())
            .last()
            .map(|(_, id, _)| id.clone());
        if engine
            .recipe
            .kernels
            .values()
            .any(|k| k.release.as_str() == RUNNING_RELEASE)
        {
            engine.pinned_release = state
                .points
                .iter()
                .flat_map(|p| p.boots.iter())
                .next()
                .map(|(_, _, r)| r.clone());
        }
        for point in &state.points {
            for (_, reason) in &point.failures {
                if let Some(p) = plan.points.iter().find(|p| p.label == point.label) {
                    engine
                        .kernel_failures
                        .entry(p.kernel.to_string())
                        .or_default()
                        .push(format!("point {} : {reason}", p.label));
                }
            }
        }
        engine.done = state.points.iter().filter(|p| p.done.is_some()).count();
        Ok(engine)
    }

    fn assemble(
        campaign: Campaign<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        journal: JournalWriter,
        samples: SampleWriter,
        start: CampaignState,
    ) -> Engine<'a> {
        let Campaign {
            recipe,
            plan,
            target,
            dir,
        } = campaign;
        let workdir = match &target.workdir {
            Some(base) => format!(
                "{}/{}",
                base.trim_end_matches('/'),
                dir.root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
            None => dir.work_dir().to_string_lossy().into_owned(),
        };
        Engine {
            recipe,
            plan,
            target,
            dir,
            transport,
            observer,
            journal,
            samples,
            workdir,
            base_cmdline: None,
            last_boot_id: None,
            pinned_release: None,
            saved_tuning: None,
            kernel_failures: HashMap::new(),
            point_times: Vec::new(),
            done: 0,
            start,
        }
    }

    fn switches(&self) -> bool {
        self.target.switch.method() != SwitchMethod::None
    }

    fn step(&mut self, step: Step) {
        self.observer.event(&CampaignEvent::Step(step));
    }

    fn remaining_eta(&self, remaining: usize) -> Duration {
        let per_point = if self.point_times.is_empty() {
            let n = u32::try_from(self.plan.points.len().max(1)).unwrap_or(1);
            self.plan.eta / n
        } else {
            let total: Duration = self.point_times.iter().sum();
            total / u32::try_from(self.point_times.len()).unwrap_or(1)
        };
        per_point * u32::try_from(remaining).unwrap_or(u32::MAX)
    }

    /// Runs every point that is not done yet.
    pub fn run(mut self) -> Result<Outcome, EngineError> {
        let state = std::mem::take(&mut self.start);
        let remaining = self.plan.points.len() - self.done;
        self.observer.event(&CampaignEvent::Started {
            points: self.plan.points.len(),
            done: self.done,
            eta: self.remaining_eta(remaining),
            dir: self.dir.root.display().to_string(),
        });
        let outcome = self.run_points(&state);
        let outcome = self.finish(outcome);
        Ok(outcome)
    }

    fn run_points(&mut self, state: &CampaignState) -> Outcome {
        if let Err(e) = self.connect_first() {
            return match e {
                PointError::Interrupted => Outcome::Interrupted,
                PointError::Failed(r) | PointError::Fatal(r) | PointError::Lost(r) => {
                    Outcome::Stopped { reason: r }
                }
            };
        }
        let plan = self.plan;
        for point in &plan.points {
            let Some(ps) = state.point(&point.label) else {
                continue;
            };
            if ps.done.is_some() {
                continue;
            }
            let mut attempt = ps.attempts;
            loop {
                attempt += 1;
                let started = Instant::now();
                match self.run_point(point, attempt) {
                    Ok(()) => {
                        self.done += 1;
                        self.point_times.push(started.elapsed());
                        let remaining = plan.points.len() - self.done;
                        self.observer.event(&CampaignEvent::PointDone {
                            label: point.label.clone(),
                            elapsed: started.elapsed(),
                            eta: self.remaining_eta(remaining),
                        });
                        break;
                    }
                    Err(PointError::Interrupted) => return Outcome::Interrupted,
                    Err(PointError::Fatal(reason)) => {
                        return Outcome::Stopped {
                            reason: format!("point `{}` attempt {attempt}: {reason}", point.label),
                        };
                    }
                    Err(PointError::Failed(reason) | PointError::Lost(reason)) => {
                        let failures = {
                            let list = self
                                .kernel_failures
                                .entry(point.kernel.to_string())
                                .or_default();
                            list.push(format!(
                                "point `{}` attempt {attempt}: {reason}",
                                point.label
                            ));
                            list.clone()
                        };
                        let give_up = failures.len() > self.recipe.point_retries as usize;
                        if let Err(e) = self.journal.append(&Event::PointFailed {
                            point: point.label.clone(),
                            attempt,
                            kernel: point.kernel.to_string(),
                            reason: reason.clone(),
                            time: now_rfc3339(),
                        }) {
                            return Outcome::Stopped {
                                reason: error_chain(&e),
                            };
                        }
                        self.observer.event(&CampaignEvent::PointFailed {
                            label: point.label.clone(),
                            reason: reason.clone(),
                            retry: !give_up,
                        });
                        if give_up {
                            return Outcome::Stopped {
                                reason: self.kernel_failure_report(point, &failures),
                            };
                        }
                    }
                }
            }
        }
        self.verify_all()
    }

    /// The whole directory's journal against its samples, after the last point: a difference
    /// means a sample was lost or mislabelled, and the campaign must not say it finished.
    fn verify_all(&mut self) -> Outcome {
        match verify(
            self.recipe,
            &self.dir.journal_path(),
            &self.dir.samples_path(),
            Scope::All,
        ) {
            Ok(v) if v.is_clean() => Outcome::Finished,
            Ok(v) => Outcome::Stopped {
                reason: format!(
                    "the journal and samples.csv disagree ({} difference(s)); the results cannot be trusted as they are:\n{}\n(`aba verify {}` lists them again)",
                    v.differences.len(),
                    v.describe(),
                    self.dir.root.display()
                ),
            },
            Err(e) => Outcome::Stopped {
                reason: format!(
                    "cannot verify the journal against samples.csv: {}",
                    error_chain(&e)
                ),
            },
        }
    }

    fn kernel_failure_report(&self, point: &PlannedPoint, failures: &[String]) -> String {
        let mut text = format!(
            "kernel `{}` ({}) failed {} time{}, at point `{}`:\n  - {}",
            point.kernel,
            point.release,
            failures.len(),
            if failures.len() == 1 { "" } else { "s" },
            point.label,
            failures.join("\n  - ")
        );
        if let Some(log) = &self.target.console_log {
            match std::fs::read(log) {
                Ok(bytes) => {
                    let text_log = String::from_utf8_lossy(&bytes);
                    let lines: Vec<&str> = text_log.lines().collect();
                    let tail = &lines[lines.len().saturating_sub(40)..];
                    text.push_str(&format!(
                        "\nlast {} lines of the console log {}:\n    {}",
                        tail.len(),
                        log.display(),
                        tail.join("\n    ")
                    ));
                }
                Err(e) => text.push_str(&format!(
                    "\n(console log {} unreadable: {e})",
                    log.display()
                )),
            }
        }
        text
    }

    /// Connects before the first point and, for kexec, captures the default command line.
    fn connect_first(&mut self) -> Result<(), PointError> {
        self.step(Step::Connecting);
        let deadline = Instant::now() + self.target.boot_timeout.max(Duration::from_secs(30));
        self.transport.reconnect(deadline).map_err(|e| match e {
            TransportError::Interrupted { .. } => PointError::Interrupted,
            other => PointError::Fatal(format!(
                "cannot connect to target `{}`: {}",
                self.target.name,
                error_chain(&other)
            )),
        })?;
        let builds_cmdline = matches!(
            self.target.switch.method(),
            SwitchMethod::Kexec | SwitchMethod::Bls
        );
        if builds_cmdline && self.base_cmdline.is_none() {
            let captured = match &self.target.base_cmdline {
                Some(pinned) => pinned.clone(),
                None => {
                    read_facts(self.transport)
                        .map_err(|e| PointError::Fatal(error_chain(&e)))?
                        .cmdline
                }
            };
            let ours: Vec<String> = self
                .recipe
                .kernels
                .keys()
                .flat_map(|k| self.recipe.cmdline_for(k))
                .collect();
            let base = base_cmdline(&captured, &ours);
            self.journal.append(&Event::BaseCmdline {
                cmdline: base.clone(),
            })?;
            self.observer.event(&CampaignEvent::Info(format!(
                "base kernel command line: {base}"
            )));
            self.base_cmdline = Some(base);
        }
        Ok(())
    }

    fn finish(&mut self, mut outcome: Outcome) -> Outcome {
        let mut unrecorded = Vec::new();
        if let Some(saved) = self.saved_tuning.take() {
            // An interrupt already stopped the workload; restoring must still run.
            interrupt::reset();
            if let Err(e) = tuning::restore(self.transport, &saved) {
                let text = format!("could not restore settings: {e}");
                self.observer.event(&CampaignEvent::Warning(text.clone()));
                if let Err(j) = self.journal.append(&Event::Warning { point: None, text }) {
                    unrecorded.push(error_chain(&j));
                }
            } else {
                self.observer.event(&CampaignEvent::Info(
                    "previous settings restored".to_owned(),
                ));
            }
        }
        let record = match &outcome {
            Outcome::Finished => Event::Finished {
                time: now_rfc3339(),
            },
            Outcome::Stopped { reason } => Event::Stopped {
                reason: reason.clone(),
                time: now_rfc3339(),
            },
            Outcome::Interrupted => Event::Interrupted {
                time: now_rfc3339(),
            },
        };
        if let Err(e) = self.journal.append(&record) {
            unrecorded.push(error_chain(&e));
        }
        if !unrecorded.is_empty() {
            // The journal could not say how the run ended: never report success then.
            let how = match &outcome {
                Outcome::Finished => "every point is done".to_owned(),
                Outcome::Stopped { reason } => reason.clone(),
                Outcome::Interrupted => "interrupted".to_owned(),
            };
            outcome = Outcome::Stopped {
                reason: format!(
                    "{how}; but the journal could not record it: {}",
                    unrecorded.join("; ")
                ),
            };
        }
        let dir = self.dir.root.display().to_string();
        let hook = match &outcome {
            Outcome::Finished => self
                .target
                .on_finish
                .as_ref()
                .map(|c| (c, "finished".to_owned())),
            Outcome::Stopped { reason } => {
                self.target.on_failure.as_ref().map(|c| (c, reason.clone()))
            }
            Outcome::Interrupted => None,
        };
        if let Some((cmd, reason)) = hook {
            let vars = [
                ("dir", dir.as_str()),
                ("reason", reason.as_str()),
                ("target", self.target.name.as_str()),
            ];
            match run_host(cmd, &vars, &self.target.base_dir, Duration::from_secs(120)) {
                Ok(_) => self.observer.event(&CampaignEvent::Info(format!(
                    "ran notification command `{cmd}`"
                ))),
                Err(e) => self.observer.event(&CampaignEvent::Warning(format!(
                    "notification command failed: {e}"
                ))),
            }
        }
        self.transport.disconnect();
        outcome
    }

    fn run_point(&mut self, point: &PlannedPoint, attempt: u32) -> Result<(), PointError> {
        // Where this attempt's records and rows begin: the check before `point_done` reads
        // both files from here, by path.
        let journal_offset = std::fs::metadata(self.dir.journal_path())
            .map_err(|e| {
                PointError::Fatal(format!(
                    "cannot read the length of {}: {e}",
                    self.dir.journal_path().display()
                ))
            })?
            .len();
        let (samples_offset, samples_lines) = self.samples.position();
        self.observer.event(&CampaignEvent::PointStarted {
            order: point.order,
            label: point.label.clone(),
            kernel: point.kernel.to_string(),
            attempt,
        });
        self.journal.append(&Event::PointStarted {
            point: point.label.clone(),
            attempt,
            time: now_rfc3339(),
        })?;

        let boot = self.switch_and_prove(point, attempt)?;
        self.settle()?;
        // Every step below is safe to repeat, so a dropped connection costs a reconnect and
        // a boot_id check, not the point.
        self.with_reconnect(point, attempt, &boot, |e| e.tune(point, attempt))?;
        self.with_reconnect(point, attempt, &boot, |e| e.snapshot(point, attempt))?;
        self.with_reconnect(point, attempt, &boot, |e| e.prepare_workdir(point, attempt))?;
        let before = self.with_reconnect(point, attempt, &boot, Self::audit)?;

        let total = point.cases.len();
        for (i, case) in point.cases.iter().enumerate() {
            self.step(Step::Workload {
                index: i + 1,
                total,
                name: case.display_name(),
            });
            let workload = &self.recipe.workloads[case.workload];
            self.run_case(point, attempt, &boot, workload, case)?;
        }

        if !self.recipe.teardown.commands.is_empty() {
            self.step(Step::Teardown);
            let teardown = self.recipe.teardown.clone();
            self.with_reconnect(point, attempt, &boot, |e| {
                e.run_steps(
                    point,
                    attempt,
                    "teardown",
                    &teardown.commands,
                    teardown.timeout,
                )
            })?;
        }
        self.step(Step::Audit);
        let after = self.with_reconnect(point, attempt, &boot, Self::audit)?;
        let new_warnings = after.dmesg_warnings.saturating_sub(before.dmesg_warnings);
        if new_warnings > 0 {
            let text = format!(
                "{new_warnings} new kernel warning line(s) in dmesg during point {}: {}",
                point.label,
                after.dmesg_tail.join(" | ")
            );
            self.observer.event(&CampaignEvent::Warning(text.clone()));
            self.journal.append(&Event::Warning {
                point: Some(point.label.clone()),
                text,
            })?;
        }
        self.verify_attempt(
            point,
            attempt,
            journal_offset,
            samples_offset,
            samples_lines,
        )?;
        self.journal.append(&Event::PointDone {
            point: point.label.clone(),
            attempt,
            dmesg_warnings: new_warnings,
            failed_units: after.failed_units,
            time: now_rfc3339(),
        })?;
        Ok(())
    }

    /// Checks what the attempt appended to the journal and samples.csv before it is journaled
    /// done; a difference stops the campaign (the attempt stays open, so resume redoes it).
    fn verify_attempt(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        journal_offset: u64,
        samples_offset: u64,
        samples_lines: u64,
    ) -> Result<(), PointError> {
        let scope = Scope::Attempt {
            point: &point.label,
            attempt,
            journal_offset,
            samples_offset,
            samples_lines,
        };
        let found = verify(
            self.recipe,
            &self.dir.journal_path(),
            &self.dir.samples_path(),
            scope,
        )
        .map_err(|e| {
            PointError::Fatal(format!(
                "cannot verify the attempt's rows against the journal: {}",
                error_chain(&e)
            ))
        })?;
        if found.is_clean() {
            return Ok(());
        }
        Err(PointError::Fatal(format!(
            "the journal and samples.csv disagree about this attempt ({} difference(s)), so it is not counted:\n{}",
            found.differences.len(),
            found.describe()
        )))
    }

    fn switch_and_prove(&mut self, point: &PlannedPoint, attempt: u32) -> Result<Boot, PointError> {
        let kernel = &self.recipe.kernels[&point.kernel];
        let switches = self.switches();
        let base = self.base_cmdline.clone().unwrap_or_default();
        let previous = self.last_boot_id.clone();
        if switches {
            self.step(Step::Switching);
            self.journal.append(&Event::Switching {
                point: point.label.clone(),
                attempt,
                method: format!("{:?}", self.target.switch.method()).to_lowercase(),
                previous_boot_id: previous.clone(),
            })?;
        }
        let req = SwitchRequest {
            kernel,
            params: &point.cmdline,
            base_cmdline: &base,
            previous_boot_id: previous.as_deref(),
        };
        let started = Instant::now();
        let observer = &mut *self.observer;
        let switched = switch_to(self.target, self.transport, &req, &mut |phase| {
            let step = match phase {
                SwitchPhase::Preparing | SwitchPhase::Triggered => Step::Switching,
                SwitchPhase::Waiting => Step::Booting,
                SwitchPhase::PowerCycling => Step::PowerCycling,
            };
            observer.event(&CampaignEvent::Step(step));
        })
        .map_err(|e| match e {
            SwitchError::Interrupted => PointError::Interrupted,
            SwitchError::HostKey(t) => PointError::Fatal(format!(
                "{t}; aba stopped and sends no further command to this target"
            )),
            other => PointError::Failed(format!(
                "switch to kernel `{}` failed: {}",
                point.kernel,
                error_chain(&other)
            )),
        })?;
        if switched.power_cycled {
            let text = format!(
                "point {}: the boot did not come back; the power-cycle command was used",
                point.label
            );
            self.observer.event(&CampaignEvent::Warning(text.clone()));
            self.journal.append(&Event::Warning {
                point: Some(point.label.clone()),
                text,
            })?;
        }

        self.step(Step::Proving);
        let facts = switched.facts;
        let expected = if point.release.as_str() == RUNNING_RELEASE {
            self.pinned_release
                .get_or_insert_with(|| facts.release.clone())
                .clone()
        } else {
            point.release.to_string()
        };
        let left = switched.previous_boot_id.clone().or(previous);
        let fresh = if switches { left.as_deref() } else { None };
        prove(&facts, &expected, &point.cmdline, fresh).map_err(|e| {
            PointError::Failed(format!(
                "boot not proven for kernel `{}`{}: {e}",
                point.kernel,
                if switched.power_cycled {
                    " after a power cycle"
                } else {
                    ""
                }
            ))
        })?;
        self.journal.append(&Event::BootProven {
            point: point.label.clone(),
            attempt,
            boot_id: facts.boot_id.clone(),
            release: facts.release.clone(),
            cmdline: facts.cmdline.clone(),
            switch_s: if switches {
                started.elapsed().as_secs_f64()
            } else {
                0.0
            },
            login_s: switched.login_s,
            proof_s: switches.then_some(switched.proof_s),
            proven_at: Some(now_rfc3339_micros()),
        })?;
        self.last_boot_id = Some(facts.boot_id.clone());
        Ok(Boot {
            boot_id: facts.boot_id,
            release: facts.release,
        })
    }

    fn settle(&mut self) -> Result<(), PointError> {
        if self.recipe.settle.is_zero() {
            return Ok(());
        }
        self.step(Step::Settling);
        let until = Instant::now() + self.recipe.settle;
        while Instant::now() < until {
            if interrupt::requested() {
                return Err(PointError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(100).min(until - Instant::now()));
        }
        Ok(())
    }

    fn tune(&mut self, point: &PlannedPoint, attempt: u32) -> Result<(), PointError> {
        if self.recipe.sysctls.is_empty() && self.recipe.tuning.is_empty() {
            return Ok(());
        }
        self.step(Step::Tuning);
        let tuned = tuning::apply(self.transport, self.recipe).map_err(|e| match e {
            tuning::TuneError::Transport(t) => transport_failure(t, "tuning"),
            other => {
                let hint = other
                    .hint()
                    .map(|h| format!(" (hint: {h})"))
                    .unwrap_or_default();
                PointError::Failed(format!("tuning failed before any sample: {other}{hint}"))
            }
        })?;
        if !self.switches() && self.saved_tuning.is_none() {
            // The first point holds the machine's own values; later points hold ours.
            self.saved_tuning = Some(tuned.saved.clone());
        }
        for knob in &tuned.skipped {
            let text = format!("optional knob `{knob}` is absent on this machine; not set");
            self.observer.event(&CampaignEvent::Info(text));
        }
        self.journal.append(&Event::Tuned {
            point: point.label.clone(),
            attempt,
            settings: tuned.settings,
            skipped: tuned.skipped,
        })?;
        Ok(())
    }

    fn snapshot(&mut self, point: &PlannedPoint, attempt: u32) -> Result<(), PointError> {
        self.step(Step::Snapshot);
        let names: Vec<String> = self
            .recipe
            .sysctls
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        let facts = environment::snapshot(self.transport, &names)
            .map_err(|e| transport_failure(e, "recording the environment"))?;
        let json = serde_json::to_vec_pretty(&facts).expect("invariant: a string map serialises");
        write_atomic(&self.dir.env_path(&point.label, attempt), &json).map_err(|e| {
            PointError::Fatal(format!(
                "cannot write {}: {e}",
                self.dir.env_path(&point.label, attempt).display()
            ))
        })
    }

    fn prepare_workdir(&mut self, point: &PlannedPoint, attempt: u32) -> Result<(), PointError> {
        let mkdir = format!("mkdir -p {}", sh_quote(&self.workdir));
        let out = self
            .transport
            .exec(&mkdir, Duration::from_secs(60))
            .map_err(|e| transport_failure(e, "creating the work directory"))?;
        if !out.outcome.success() {
            return Err(PointError::Failed(format!(
                "cannot create work directory {}: {}",
                self.workdir,
                out.stderr_text().trim()
            )));
        }
        if !self.recipe.files.is_empty() {
            self.step(Step::Uploading);
            for file in &self.recipe.files {
                let data = std::fs::read(&file.local).map_err(|e| {
                    PointError::Fatal(format!("cannot read {}: {e}", file.local.display()))
                })?;
                let mode = file_mode(&file.local);
                let remote = format!("{}/{}", self.workdir, file.remote);
                if let Some(parent) = remote.rsplit_once('/').map(|(p, _)| p.to_owned()) {
                    let _ = self.transport.exec(
                        &format!("mkdir -p {}", sh_quote(&parent)),
                        Duration::from_secs(60),
                    );
                }
                self.transport
                    .upload(&data, &remote, mode)
                    .map_err(|e| transport_failure(e, &format!("copying {}", file.remote)))?;
            }
        }
        if !self.recipe.setup.commands.is_empty() {
            self.step(Step::Setup);
            let commands = self.recipe.setup.commands.clone();
            self.run_steps(
                point,
                attempt,
                "setup",
                &commands,
                self.recipe.setup.timeout,
            )?;
        }
        Ok(())
    }

    fn run_steps(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        what: &str,
        commands: &[String],
        timeout: Duration,
    ) -> Result<(), PointError> {
        for (i, command) in commands.iter().enumerate() {
            let full = run_command(
                &self.workdir,
                &self.aba_env(point, attempt, what, None, 0),
                None,
                command,
            );
            let out = self
                .transport
                .exec(&full, timeout)
                .map_err(|e| transport_failure(e, &format!("{what} command `{command}`")))?;
            if !out.outcome.success() {
                let raw = self.save_raw(point, attempt, &format!("{what}-{}", i + 1), &full, &out);
                return Err(PointError::Failed(format!(
                    "{what} command `{command}` failed: {}{}; raw output saved in {}",
                    out.outcome,
                    stderr_tail(&out),
                    self.dir.root.join(raw).display()
                )));
            }
        }
        Ok(())
    }

    fn audit(&mut self) -> Result<Audit, PointError> {
        environment::audit(self.transport).map_err(|e| transport_failure(e, "the audit"))
    }

    /// `export ABA_POINT=… ABA_KERNEL=… …` for commands aba runs on the target.
    fn aba_env(
        &self,
        point: &PlannedPoint,
        attempt: u32,
        phase: &str,
        case: Option<&PlannedCase>,
        index: u32,
    ) -> String {
        let mut vars = vec![
            ("ABA_POINT", point.label.clone()),
            ("ABA_ORDER", point.order.to_string()),
            ("ABA_ATTEMPT", attempt.to_string()),
            ("ABA_KERNEL", point.kernel.to_string()),
            ("ABA_RELEASE", point.release.to_string()),
            ("ABA_PHASE", phase.to_owned()),
            ("ABA_WORKDIR", self.workdir.clone()),
        ];
        if let Some(case) = case {
            vars.push(("ABA_WORKLOAD", case.workload_name.to_string()));
            vars.push(("ABA_CASE", case.case.name.clone()));
            vars.push(("ABA_SAMPLE", index.to_string()));
        }
        let mut words = vec!["export".to_owned()];
        words.extend(vars.into_iter().map(|(k, v)| sh_quote(&format!("{k}={v}"))));
        if let Some(case) = case {
            words.extend(case.env.iter().map(|(k, v)| sh_quote(&format!("{k}={v}"))));
        }
        words.join(" ")
    }

    fn run_case(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        boot: &Boot,
        workload: &Workload,
        case: &PlannedCase,
    ) -> Result<(), PointError> {
        for (phase, count) in [(Phase::Warmup, case.warmup), (Phase::Sample, case.samples)] {
            for index in 1..=count {
                self.run_one(point, attempt, boot, workload, case, phase, index, count)?;
            }
        }
        Ok(())
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one run is identified by all of these"
    )]
    fn run_one(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        boot: &Boot,
        workload: &Workload,
        case: &PlannedCase,
        phase: Phase,
        index: u32,
        of: u32,
    ) -> Result<(), PointError> {
        let mut retry = 0;
        let mut reconnects = 0;
        loop {
            if interrupt::requested() {
                return Err(PointError::Interrupted);
            }
            let command = run_command(
                &self.workdir,
                &self.aba_env(point, attempt, phase.as_str(), Some(case), index),
                workload.cpu.as_ref().map(CpuList::as_str),
                &case.run,
            );
            let output = match self.transport.exec(&command, workload.timeout) {
                Ok(out) => out,
                Err(TransportError::ConnectionLost { reason, .. })
                    if reconnects < MAX_RECONNECTS_PER_RUN =>
                {
                    reconnects += 1;
                    self.recover_connection(point, attempt, boot, &reason)?;
                    continue;
                }
                Err(e) => {
                    return Err(transport_failure(
                        e,
                        &format!(
                            "workload `{}` at point `{}`",
                            case.display_name(),
                            point.label
                        ),
                    ));
                }
            };
            let time = now_rfc3339();
            let result = evaluate(&output, &workload.check, &workload.metrics);
            let (status, values, error, raw) = match result {
                Ok(values) => (
                    Status::Ok,
                    values.into_iter().map(Some).collect::<Vec<_>>(),
                    None,
                    None,
                ),
                Err(failure) => {
                    let name = format!(
                        "{}{}-{}{}-try{}",
                        case.workload_name,
                        if case.case.name.is_empty() {
                            String::new()
                        } else {
                            format!("-{}", path_safe(&case.case.name))
                        },
                        phase.as_str(),
                        index,
                        retry
                    );
                    let raw = self.save_raw(point, attempt, &name, &command, &output);
                    (
                        Status::Failed,
                        vec![None; workload.metrics.len()],
                        Some(failure),
                        Some(raw),
                    )
                }
            };
            let rows: Vec<SampleRow<'_>> = workload
                .metrics
                .iter()
                .zip(&values)
                .map(|(metric, value)| SampleRow {
                    point: &point.label,
                    order: point.order,
                    attempt,
                    kernel: point.kernel.as_str(),
                    release: &boot.release,
                    boot_id: &boot.boot_id,
                    workload: case.workload_name.as_str(),
                    case: &case.case.name,
                    metric: metric.name.as_str(),
                    phase,
                    index,
                    retry,
                    status,
                    value: *value,
                    unit: &metric.unit,
                    time: &time,
                })
                .collect();
            self.samples.append(&rows)?;
            self.journal.append(&Event::Sample {
                point: point.label.clone(),
                attempt,
                workload: case.workload_name.to_string(),
                case: case.case.name.clone(),
                phase: phase.as_str().to_owned(),
                index,
                retry,
                status: status.as_str().to_owned(),
                elapsed_s: output.elapsed.as_secs_f64(),
                error: error.as_ref().map(ToString::to_string),
                raw: raw.clone(),
            })?;
            self.observer.event(&CampaignEvent::Run {
                phase: phase.as_str(),
                index,
                of,
                ok: status == Status::Ok,
                elapsed: output.elapsed,
            });
            let Some(failure) = error else { return Ok(()) };
            let shown = self.dir.root.join(raw.as_deref().unwrap_or_default());
            let message = run_failure_message(
                case,
                point,
                phase,
                index,
                &failure,
                &shown.display().to_string(),
            );
            if retry < workload.retries {
                retry += 1;
                self.observer.event(&CampaignEvent::Warning(format!(
                    "{message}; retrying ({retry}/{})",
                    workload.retries
                )));
                continue;
            }
            return Err(PointError::Failed(message));
        }
    }

    /// Runs `step`, and after a dropped connection reconnects, checks that the machine did
    /// not reboot and runs it again (a few times at most).
    fn with_reconnect<T>(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        boot: &Boot,
        mut step: impl FnMut(&mut Self) -> Result<T, PointError>,
    ) -> Result<T, PointError> {
        let mut reconnects = 0;
        loop {
            match step(self) {
                Err(PointError::Lost(reason)) if reconnects < MAX_RECONNECTS_PER_RUN => {
                    reconnects += 1;
                    self.recover_connection(point, attempt, boot, &reason)?;
                }
                other => return other,
            }
        }
    }

    /// After a dropped connection: reconnect, and carry on only if the machine did not reboot.
    fn recover_connection(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        boot: &Boot,
        reason: &str,
    ) -> Result<(), PointError> {
        self.observer.event(&CampaignEvent::Warning(format!(
            "connection lost during point {} ({reason}); reconnecting",
            point.label
        )));
        self.transport.disconnect();
        let deadline = Instant::now()
            + RECONNECT_WINDOW.min(self.target.boot_timeout.max(Duration::from_secs(30)));
        let outcome = self
            .transport
            .reconnect(deadline)
            .map_err(|e| transport_failure(e, "reconnecting"));
        let same_boot = match outcome {
            Ok(()) => match read_facts(self.transport) {
                Ok(facts) => Some(facts.boot_id == boot.boot_id),
                Err(_) => None,
            },
            Err(PointError::Failed(_) | PointError::Lost(_)) => None,
            Err(other) => return Err(other),
        };
        self.journal.append(&Event::ConnectionLost {
            point: point.label.clone(),
            attempt,
            reason: reason.to_owned(),
            same_boot,
        })?;
        match same_boot {
            Some(true) => {
                self.observer.event(&CampaignEvent::Info(
                    "reconnected to the same boot; repeating the interrupted run".to_owned(),
                ));
                Ok(())
            }
            Some(false) => Err(PointError::Failed(format!(
                "the target rebooted on its own during point {} (boot_id changed); the point is redone from a fresh boot",
                point.label
            ))),
            None => Err(PointError::Failed(format!(
                "lost the target during point {} ({reason}) and could not reconnect",
                point.label
            ))),
        }
    }

    /// Saves a failed command's output under `raw/<point>-<attempt>/`; returns the path
    /// relative to the results directory.
    fn save_raw(
        &self,
        point: &PlannedPoint,
        attempt: u32,
        name: &str,
        command: &str,
        out: &CommandOutput,
    ) -> String {
        let rel = format!("raw/{}-{attempt}/{name}", point.label);
        let dir = self.dir.root.join(&rel);
        let meta = format!(
            "command: {command}\noutcome: {}\nelapsed_s: {:.6}\n",
            out.outcome,
            out.elapsed.as_secs_f64()
        );
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("stdout"), &out.stdout))
            .and_then(|()| std::fs::write(dir.join("stderr"), &out.stderr))
            .and_then(|()| std::fs::write(dir.join("command.txt"), meta));
        match written {
            Ok(()) => format!("{rel}/"),
            Err(e) => format!("{rel}/ (not saved: {e})"),
        }
    }
}

/// The shell text that runs `run` on the target: in `workdir`, with `exports` (an `export …`
/// command) in its environment, pinned by `taskset -c CPU` when `cpu` is set.
///
/// Unpinned, `run` is read by the very shell that changed directory and exported the variables:
/// that is the `sh` process `exec sh -c RUN` would have become, with the same directory,
/// environment, standard input, process group and exit status, but without two more `exec`s
/// (`env` and `sh`) per run: about 1 ms of a trivial sample on a fast machine. A failed `cd`
/// ends the shell before `run` is read.
fn run_command(workdir: &str, exports: &str, cpu: Option<&str>, run: &str) -> String {
    let setup = format!("cd {} && {exports}", sh_quote(workdir));
    match cpu {
        Some(cpu) => format!("{setup} && exec taskset -c {cpu} sh -c {}", sh_quote(run)),
        None => format!("{setup} || exit\n{run}"),
    }
}

fn run_failure_message(
    case: &PlannedCase,
    point: &PlannedPoint,
    phase: Phase,
    index: u32,
    failure: &RunFailure,
    raw: &str,
) -> String {
    format!(
        "workload `{}` at point `{}` ({} {index}): {failure}; raw output saved in {raw}",
        case.display_name(),
        point.label,
        if phase == Phase::Warmup {
            "warm-up"
        } else {
            "sample"
        },
    )
}

fn stderr_tail(out: &CommandOutput) -> String {
    let text = out.stderr_text();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let start = lines.len().saturating_sub(3);
    format!(" ({})", lines[start..].join(" / "))
}

fn file_mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777)
}

/// Refuses, before anything is created, to change the settings of a machine that is not
/// rebooted between points unless the user said so.
pub fn check_tuning_consent(
    recipe: &Recipe,
    target: &Target,
    options: &RunOptions,
) -> Result<(), EngineError> {
    let changes = !recipe.sysctls.is_empty() || !recipe.tuning.is_empty();
    if changes && target.switch.method() == SwitchMethod::None && !options.allow_tuning {
        return Err(EngineError::TuningNotAllowed(target.name.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::run_command;
    use crate::target::quote::sh_quote;

    fn sh(text: &str) -> (i32, String, String) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(text)
            .output()
            .expect("sh runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The run text sees the work directory and the exported variables, its exit status is
    /// the command's, and a missing work directory stops the shell before the run text.
    #[test]
    fn run_command_sets_directory_and_environment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let work = dir.path().join("it's here");
        std::fs::create_dir(&work).expect("mkdir");
        let workdir = work.to_string_lossy().into_owned();
        let exports = format!(
            "export {} {}",
            sh_quote("ABA_POINT=a b"),
            sh_quote("CASE_ENV=$(not expanded)")
        );
        let run = "echo \"$PWD|$ABA_POINT|$CASE_ENV\"\nexit 3";
        let (code, out, _) = sh(&run_command(&workdir, &exports, None, run));
        assert_eq!(code, 3);
        assert_eq!(out, format!("{workdir}|a b|$(not expanded)\n"));

        let missing = format!("{workdir}/missing");
        let (code, out, _) = sh(&run_command(&missing, &exports, None, "echo ran"));
        assert_ne!(code, 0);
        assert_eq!(out, "");

        if crate::test_skip::need("taskset") {
            let (code, out, err) = sh(&run_command(&workdir, &exports, Some("0"), run));
            assert_eq!(
                (code, out.as_str()),
                (3, format!("{workdir}|a b|$(not expanded)\n").as_str()),
                "{err}"
            );
        }
    }
}
