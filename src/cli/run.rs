//! `aba run` and `aba resume`: execute a campaign and finish with its reports.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use sha2::{Digest as _, Sha256};

use crate::{
    analysis::{analyze, verdict_params},
    campaign::{
        amend::amendment,
        engine::{Engine, EngineError, Job, Outcome, RunOptions, Start, check_tuning_consent},
        events::{CampaignEvent, Observer, Warning},
        ledger::Ledger,
        lock::{Holder, TargetLock},
        plan::{Plan, Summary},
        restore::guarded,
    },
    cli::{FilesArgs, KernelArgs, TargetArgs, builds::HostBuilds},
    error::{AmendFailure, Error},
    interrupt,
    inventory::{Inventory, Target},
    kernel::binding::{BoundKernel, apply},
    origin::Origin,
    profile::select::{Choice, choose},
    recipe::Recipe,
    recipe::params::BoundParam,
    report::write_reports,
    reproduction::{copy_reference, open_reference},
    results::{
        atomic::write_atomic,
        journal::{Event, Journal, JournalWriter},
        layout::{ResultsDir, utc_stamp},
    },
    target::{
        connect::{machine_key, transport_for},
        transport::{Transport, TransportError},
    },
    ui::progress::Progress,
};

/// Who a campaign's runner speaks as: the only campaign of this `aba` (its progress may
/// draw bars, its report.txt is printed at the end), or one target of a multi-target run
/// (`aba::cli::multi`), whose lines on stderr carry `[target] ` and whose report.txt stays
/// in its directory: the parent's combined report is what is printed.
#[derive(Clone, Debug)]
pub enum Voice {
    /// A single campaign.
    Alone,
    /// One target of several.
    Member(String),
}

impl Voice {
    /// Says `text` on stderr, prefixed in a multi-target run.
    pub fn say(&self, text: &str) {
        match self {
            Voice::Alone => eprintln!("{text}"),
            Voice::Member(target) => {
                for line in text.lines() {
                    crate::ui::progress::say_line(&format!("[{target}] {line}"));
                }
            }
        }
    }

    fn progress(&self) -> Progress {
        match self {
            Voice::Alone => Progress::for_stderr(),
            Voice::Member(target) => Progress::for_target(target),
        }
    }
}

/// Shows progress and rewrites the reports after every finished point, so a long campaign
/// can be read (and mailed) before it ends. Reports are replaced atomically.
struct ProgressAndReports<'a> {
    progress: Progress,
    dir: &'a ResultsDir,
}

impl Observer for ProgressAndReports<'_> {
    fn event(&mut self, event: &CampaignEvent) {
        self.progress.event(event);
        if let CampaignEvent::PointDone { .. } = event {
            let written = analyze(self.dir)
                .map_err(|e| crate::causes::one_line(&e))
                .and_then(|a| {
                    write_reports(self.dir, &a)
                        .map(|_| ())
                        .map_err(|e| crate::causes::one_line(&e))
                });
            if let Err(e) = written {
                self.progress
                    .event(&CampaignEvent::Warning(Warning::InterimReports(e)));
            }
        }
    }
}

fn engine_error(e: EngineError) -> Error {
    Error::Engine(e)
}

fn target_error(target: &Target) -> impl FnOnce(TransportError) -> Error + '_ {
    |source| Error::Target {
        target: target.name.clone(),
        source,
    }
}

/// Where a new campaign's results directory is made.
#[derive(Clone, Copy, Debug)]
pub enum Destination<'a> {
    /// `<dir>/<name>-<UTC stamp>/`: `--results`.
    Under(&'a Path),
    /// Exactly this path: one target's subdirectory of a multi-target parent.
    At(&'a Path),
}

impl Destination<'_> {
    /// The directory the results directory is created in, for messages.
    pub fn parent(&self) -> PathBuf {
        match self {
            Destination::Under(base) => base.to_path_buf(),
            Destination::At(path) => path.parent().unwrap_or(path).to_path_buf(),
        }
    }

    fn create(&self, recipe: &Recipe) -> std::io::Result<ResultsDir> {
        match self {
            Destination::Under(base) => ResultsDir::create(base, recipe, &utc_stamp()),
            Destination::At(path) => ResultsDir::create_at(path, recipe),
        }
    }
}

/// How `aba run` starts a campaign.
#[derive(Clone, Copy, Debug)]
pub struct Launch<'a> {
    /// Where the results directory is created.
    pub results: Destination<'a>,
    /// Start even when the plan is estimated to take more than a day.
    pub yes: bool,
    /// `--no-profile`: use no noise profile.
    pub no_profile: bool,
}

/// `aba run RECIPE`.
pub fn run(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    kernel_args: &KernelArgs,
    launch: Launch<'_>,
    options: RunOptions,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    let target = target_args.resolve_in(&inventory)?;
    let host = HostBuilds::for_run(
        recipe_path,
        &inventory,
        files_args,
        kernel_args,
        &[&target],
        &Voice::Alone,
    )?;
    let prepared = Prepared::new(
        recipe_path,
        &inventory,
        target,
        files_args,
        kernel_args,
        host,
        launch.no_profile,
        &Voice::Alone,
    )?;
    prepared.start(recipe_path, launch, options, &Voice::Alone)
}

/// A new campaign of `aba run` on one target, made ready before anything is created: the
/// recipe loaded and its kernels bound for the target, the noise profile chosen, the records
/// its journal starts with.
pub struct Prepared {
    /// The recipe, bound for the target.
    pub recipe: Recipe,
    /// The target.
    pub target: Target,
    records: Vec<Event>,
    profile: Option<Vec<u8>>,
    /// The kernels built on this host, whose logs the results directory keeps.
    host: Option<Arc<HostBuilds>>,
}

impl Prepared {
    /// Loads the recipe for `target`, binds its kernels and chooses its noise profile,
    /// saying each choice.
    #[expect(
        clippy::too_many_arguments,
        reason = "one campaign's parts, each from a different place; a struct would only rename them"
    )]
    pub fn new(
        recipe_path: &Path,
        inventory: &Inventory,
        target: Target,
        files_args: &FilesArgs,
        kernel_args: &KernelArgs,
        host: Option<Arc<HostBuilds>>,
        no_profile: bool,
        voice: &Voice,
    ) -> Result<Prepared, Error> {
        let mut recipe = files_args.load(recipe_path, inventory)?;
        let mut kernels = kernel_args.bind(&mut recipe, &target)?;
        if let Some(host) = &host {
            host.bind(&mut recipe, &mut kernels, &target)?;
        }
        let choice = if no_profile {
            None
        } else {
            Some(choose(&target.profiles, &recipe, &target.name).map_err(Error::Profile)?)
        };
        let record = profile_record(&target, choice.as_ref(), voice);
        let profile = choice.and_then(|c| c.chosen).map(|c| c.bytes);
        let records = std::iter::once(record)
            .chain(params_record(&recipe, voice))
            .chain(kernels_record(&kernels, voice))
            .collect();
        Ok(Prepared {
            recipe,
            target,
            records,
            profile,
            host,
        })
    }

    /// Checks the plan as [`check_new`] does.
    pub fn check(
        &self,
        recipe_path: &Path,
        launch: Launch<'_>,
        options: &RunOptions,
        voice: &Voice,
    ) -> Result<(), Error> {
        check_new(
            &self.recipe,
            recipe_path,
            &self.target,
            launch,
            options,
            voice,
        )
    }

    /// Checks, creates the results directory and runs the campaign.
    pub fn start(
        &self,
        recipe_path: &Path,
        launch: Launch<'_>,
        options: RunOptions,
        voice: &Voice,
    ) -> Result<u8, Error> {
        self.check(recipe_path, launch, &options, voice)?;
        self.begin(launch, options, voice)
    }

    /// Creates the results directory and runs the campaign (checked already).
    pub fn begin(
        &self,
        launch: Launch<'_>,
        options: RunOptions,
        voice: &Voice,
    ) -> Result<u8, Error> {
        begin_new(&self.recipe, &self.target, launch, options, voice, |dir| {
            if let Some(host) = &self.host {
                host.keep_logs(dir)?;
            }
            if let Some(bytes) = &self.profile {
                write_atomic(&dir.profile_path(), bytes).map_err(|source| Error::ResultsDir {
                    parent: dir.root.clone(),
                    source,
                })?;
            }
            Ok(self.records.clone())
        })
    }
}

/// The journal's record of the kernels a new campaign boots, when something bound one (none
/// means "as the recipe said"); each bound kernel is said before the campaign starts.
pub fn kernels_record(kernels: &[BoundKernel], voice: &Voice) -> Option<Event> {
    let bound: Vec<&BoundKernel> = kernels.iter().filter(|k| k.is_bound()).collect();
    for k in &bound {
        voice.say(&format!(
            "kernel {}: {} ({})",
            k.label,
            k.release,
            k.note().unwrap_or_default()
        ));
    }
    (!bound.is_empty()).then(|| Event::Kernels {
        kernels: kernels.to_vec(),
    })
}

/// The journal's record of the parameter values a new campaign uses, when the recipe declares
/// any; each bound one is said before the campaign starts.
pub fn params_record(recipe: &Recipe, voice: &Voice) -> Option<Event> {
    for p in recipe.params.iter().filter(|p| p.from != Origin::Recipe) {
        voice.say(&format!("parameter {}", p.line()));
    }
    (!recipe.params.is_empty()).then(|| Event::Params {
        params: recipe.params.iter().map(BoundParam::from).collect(),
    })
}

/// The journal's record of which noise profile a new campaign uses, and the line that says
/// it before the campaign starts.
fn profile_record(target: &Target, choice: Option<&Choice>, voice: &Voice) -> Event {
    let dir = target.profiles.display().to_string();
    let Some(choice) = choice else {
        voice.say("noise profile: none (--no-profile)");
        return Event::Profile {
            dir,
            file: None,
            sha256: None,
            not_used: Vec::new(),
            disabled: true,
        };
    };
    match &choice.chosen {
        Some(c) => voice.say(&format!(
            "noise profile: {} (created {}, {} boots)",
            c.path.display(),
            c.profile.created,
            c.profile.boots
        )),
        None if choice.not_used.is_empty() => {
            voice.say(&format!(
                "noise profile: none in {dir} (`aba calibrate` makes one)"
            ));
        }
        None => voice.say(&format!(
            "noise profile: none of {dir} matches this campaign"
        )),
    }
    for why in &choice.not_used {
        voice.say(&format!("  not used: {why}"));
    }
    Event::Profile {
        dir,
        file: choice.chosen.as_ref().map(|c| c.path.display().to_string()),
        sha256: choice
            .chosen
            .as_ref()
            .map(|c| hex::encode(Sha256::digest(&c.bytes))),
        not_used: choice.not_used.clone(),
        disabled: false,
    }
}

/// Plans `recipe` on `target`, creates its results directory, lets `prepare` add files to it
/// and name the records journaled after the header, takes the target and runs the campaign.
pub fn start_new(
    recipe: &Recipe,
    recipe_path: &Path,
    target: &Target,
    launch: Launch<'_>,
    options: RunOptions,
    prepare: impl FnOnce(&ResultsDir) -> Result<Vec<Event>, Error>,
) -> Result<u8, Error> {
    check_new(recipe, recipe_path, target, launch, &options, &Voice::Alone)?;
    begin_new(recipe, target, launch, options, &Voice::Alone, prepare)
}

/// What is refused before a new campaign creates anything: a plan too long without `--yes`,
/// a plan the target cannot run, tuning without consent, a reference that cannot be read.
/// The plan's warnings are said here.
pub fn check_new(
    recipe: &Recipe,
    recipe_path: &Path,
    target: &Target,
    launch: Launch<'_>,
    options: &RunOptions,
    voice: &Voice,
) -> Result<(), Error> {
    let summary = Summary::new(recipe, target)?;
    if let Some(reason) = summary.confirmation_reason()
        && !launch.yes
    {
        return Err(Error::TooLong {
            reason,
            recipe: recipe_path.to_path_buf(),
        });
    }
    let plan = Plan::new(recipe, target)?;
    check_tuning_consent(recipe, target, options).map_err(engine_error)?;
    for warning in &plan.warnings {
        voice.say(&format!("warning: {warning}"));
    }
    // A reference that cannot be read fails now, not after an overnight run.
    if let Some(reference) = &recipe.reference {
        open_reference(&reference.path, &verdict_params(&recipe.analysis))?;
    }
    Ok(())
}

/// Creates the results directory of a campaign [`check_new`] accepted, lets `prepare` add
/// files to it and name the records journaled after the header, takes the target and runs
/// the campaign.
pub fn begin_new(
    recipe: &Recipe,
    target: &Target,
    launch: Launch<'_>,
    options: RunOptions,
    voice: &Voice,
    prepare: impl FnOnce(&ResultsDir) -> Result<Vec<Event>, Error>,
) -> Result<u8, Error> {
    let dir = launch
        .results
        .create(recipe)
        .map_err(|source| Error::ResultsDir {
            parent: launch.results.parent(),
            source,
        })?;
    // Nothing ran when this fails: the directory created a moment ago holds only copies.
    let abandon = |e: Error| {
        let _ = std::fs::remove_dir_all(&dir.root);
        e
    };
    if let Some(reference) = &recipe.reference {
        copy_reference(&reference.path, &dir.reference_dir()).map_err(|e| abandon(e.into()))?;
    }
    let records = prepare(&dir).map_err(abandon)?;
    let mut transport = transport_for(target).map_err(target_error(target))?;
    let lock = take_lock(target, &dir, transport.as_mut(), &options, None).map_err(abandon)?;
    execute(
        &dir,
        target,
        transport,
        &lock,
        options,
        Start::New,
        &records,
        voice,
    )
}

/// Takes the target for the campaign in `dir` before anything changes it. A resumed
/// campaign passes its journal: a target that does not answer is then power-cycled (see
/// [`revival`]).
fn take_lock(
    target: &Target,
    dir: &ResultsDir,
    transport: &mut dyn Transport,
    options: &RunOptions,
    resumed: Option<&Journal>,
) -> Result<TargetLock, Error> {
    let key = machine_key(target).map_err(target_error(target))?;
    let recipe = dir.load_recipe()?;
    let holder = Holder::this_process(&dir.root, recipe.name.as_str(), &target.name);
    if options.wait {
        interrupt::install();
    }
    let mut revive = match resumed {
        Some(journal) => revival(target, &recipe, journal)?,
        None => None,
    };
    let revive = revive
        .as_mut()
        .map(|f| f.as_mut() as &mut dyn FnMut(&mut dyn Transport) -> Result<String, String>);
    TargetLock::acquire(target, &key, holder, transport, options.wait, revive)
        .map_err(|e| Error::lock("cannot take the target", e))
}

/// How `aba resume` brings back a target that does not answer: the runner that was killed
/// may have left it in a boot that hung (killed during a switch, the new kernel never came
/// up), which the engine would have power-cycled had it lived. The inventory's `power_cycle`
/// runs with the placeholders of the point the killed runner was switching to (the first
/// unfinished point when it was not switching). `None` when the target has no power-cycle
/// command or does not switch kernels.
fn revival<'t>(
    target: &'t Target,
    recipe: &Recipe,
    journal: &Journal,
) -> Result<Option<Revival<'t>>, Error> {
    if target.power_cycle.is_none() || !target.switch.method().switches() {
        return Ok(None);
    }
    let plan = Plan::new(recipe, target)?;
    let state = journal.state();
    let switching = journal.events.iter().rev().find_map(|e| match e {
        Event::Switching { point, .. } => Some(point.as_str()),
        _ => None,
    });
    let point = plan
        .points
        .iter()
        .find(|p| Some(p.label.as_str()) == switching)
        .or_else(|| {
            plan.points.iter().find(|p| {
                state
                    .point(p.label.as_str())
                    .is_none_or(|s| s.done.is_none())
            })
        })
        .or(plan.points.first());
    let Some(point) = point else {
        return Ok(None);
    };
    let Some(kernel) = recipe.kernels.get(&point.kernel).cloned() else {
        return Ok(None);
    };
    let params = point.cmdline.clone();
    let base = state
        .base_cmdline
        .clone()
        .or_else(|| target.base_cmdline.clone())
        .unwrap_or_default();
    Ok(Some(Box::new(move |transport: &mut dyn Transport| {
        crate::kernel::switch::power_cycle_for(target.machine(), transport, &kernel, &params, &base)
            .map_err(|e| crate::causes::one_line(&e))
            .map(Option::unwrap_or_default)
    })))
}

/// What [`revival`] returns: runs the power-cycle command, says which.
type Revival<'t> = Box<dyn FnMut(&mut dyn Transport) -> Result<String, String> + 't>;

/// Runs the campaign in `dir` on `target` from the recipe copy it recorded (so resume and
/// report see exactly what ran), then concludes with the reports.
#[expect(
    clippy::too_many_arguments,
    reason = "one campaign's parts, each from a different place; a struct would only rename them"
)]
fn execute(
    dir: &ResultsDir,
    target: &Target,
    mut transport: Box<dyn Transport>,
    lock: &TargetLock,
    options: RunOptions,
    start: Start,
    records: &[Event],
    voice: &Voice,
) -> Result<u8, Error> {
    // A new campaign's journal has no header yet: its parameters and kernels come with its
    // first records.
    let params = records.iter().find_map(|e| match e {
        Event::Params { params } => Some(params.as_slice()),
        _ => None,
    });
    let mut recipe = dir.load_recipe_with(params)?;
    if let Some(Event::Kernels { kernels }) =
        records.iter().find(|e| matches!(e, Event::Kernels { .. }))
    {
        apply(&mut recipe, kernels);
    }
    let plan = Plan::new(&recipe, target)?;
    interrupt::install();
    let mut progress = ProgressAndReports {
        progress: voice.progress(),
        dir,
    };
    let job = Job {
        recipe: &recipe,
        plan: &plan,
        target,
        dir,
        lock: Some(lock),
        records,
    };
    // Whatever ends the run, even a panic, no setting it changed on a machine that is not
    // rebooted stays changed.
    let keeps_settings = !target.switch.method().switches();
    let ledger = Ledger::of(target);
    let outcome = guarded(
        dir,
        &ledger,
        transport.as_mut(),
        keeps_settings,
        |transport| {
            let engine = Engine::open(job, start, transport, &mut progress, &options);
            Ok::<_, Error>(engine.map_err(engine_error)?.run())
        },
    )?;
    drop(progress);
    conclude(dir, outcome, voice)
}

/// `aba resume DIR`: one campaign, or with a multi-target parent every unfinished target's
/// concurrently (`aba::cli::multi`).
pub fn resume(
    dir_path: &Path,
    targets: Option<&PathBuf>,
    amend: Option<&Path>,
    files: &FilesArgs,
    options: RunOptions,
) -> Result<u8, Error> {
    if crate::results::manifest::Manifest::is_parent(dir_path) {
        return crate::cli::multi::resume(dir_path, targets, amend, files, options);
    }
    resume_one(dir_path, targets, amend, files, options, &Voice::Alone)
}

/// Resumes the one campaign in `dir_path`.
pub fn resume_one(
    dir_path: &Path,
    targets: Option<&PathBuf>,
    amend: Option<&Path>,
    files: &FilesArgs,
    options: RunOptions,
    voice: &Voice,
) -> Result<u8, Error> {
    let dir = ResultsDir::open(dir_path);
    let journal = Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir_path.to_path_buf(),
        resumable: true,
        source,
    })?;
    let Some(Event::Campaign {
        target: target_name,
        ..
    }) = journal.header().cloned()
    else {
        return Err(Error::NoHeader);
    };
    if journal.state().finished {
        voice.say(&format!(
            "the campaign in {} is already finished",
            dir_path.display()
        ));
        return conclude(&dir, Outcome::Finished, voice);
    }
    let inventory = Inventory::discover(targets.map(PathBuf::as_path))?;
    let target = inventory.target(&target_name)?;
    say_recorded_kernels(&journal, &target, voice);
    say_recorded_params(&journal, &target, voice);
    if let Some(path) = amend {
        let params = journal.params().unwrap_or_default();
        let new = files.load_bound(path, &inventory, params)?;
        amend_recipe(&dir, &journal, &new, path, voice)?;
    }
    let mut transport = transport_for(&target).map_err(target_error(&target))?;
    let lock = take_lock(&target, &dir, transport.as_mut(), &options, Some(&journal))?;
    execute(
        &dir,
        &target,
        transport,
        &lock,
        options,
        Start::Resume,
        &[],
        voice,
    )
}

/// Says that a resumed campaign uses the parameter values its journal recorded at the start
/// ([`ResultsDir::load_recipe`] reads the recipe with them), never the inventory's of now.
fn say_recorded_params(journal: &Journal, target: &Target, voice: &Voice) {
    match journal.params() {
        Some(params) => {
            for p in params.iter().filter(|p| p.from != Origin::Recipe) {
                voice.say(&format!(
                    "parameter {} = {} (recorded when the campaign started: bound by {})",
                    p.name, p.value, p.from
                ));
            }
        }
        None if !target.params.is_empty() => voice.say(&format!(
            "parameters: as the recipe says; the campaign started without the inventory's              [targets.{}.params], which resume does not apply",
            target.name
        )),
        None => {}
    }
}

/// Says that a resumed campaign boots the kernels its journal recorded at the start
/// ([`ResultsDir::load_recipe`] applies them), never the inventory's of now.
fn say_recorded_kernels(journal: &Journal, target: &Target, voice: &Voice) {
    match journal.kernels() {
        Some(kernels) => {
            for k in kernels.iter().filter(|k| k.is_bound()) {
                voice.say(&format!(
                    "kernel {}: {} (recorded when the campaign started: {})",
                    k.label,
                    k.release,
                    k.note().unwrap_or_default()
                ));
            }
        }
        None if !target.kernels.is_empty() => voice.say(&format!(
            "kernels: as the recipe says; the campaign started without the inventory's \
             [targets.{}.kernels], which resume does not apply",
            target.name
        )),
        None => {}
    }
}

/// Replaces the campaign's recipe copy with `new` when only unfinished points use what
/// changed, and journals the amendment.
fn amend_recipe(
    dir: &ResultsDir,
    journal: &Journal,
    new: &crate::recipe::Recipe,
    path: &Path,
    voice: &Voice,
) -> Result<(), Error> {
    let old = dir.load_recipe()?;
    // The recorded bindings stay: compared unbound, every bound kernel or parameter would
    // read as changed. `new` was read with the recorded parameters; one the amended recipe
    // adds takes its default, as `load_recipe` will read it.
    let mut new = new.clone();
    if let Some(kernels) = journal.kernels() {
        apply(&mut new, kernels);
    }
    let new = &new;
    let done: std::collections::BTreeSet<String> =
        journal.state().done_attempts().into_keys().collect();
    let failed = |source: AmendFailure| Error::Amend {
        recipe: path.to_path_buf(),
        source,
    };
    let changes = amendment(&old, new, &done).map_err(|e| failed(e.into()))?;
    dir.copy_recipe(new).map_err(|source| {
        failed(AmendFailure::Copy {
            dir: dir.root.clone(),
            source,
        })
    })?;
    JournalWriter::open(&dir.journal_path())
        .and_then(|mut writer| {
            writer.append(&Event::Amended {
                previous_sha256: old.sha256.clone(),
                sha256: new.sha256.clone(),
                recipe: path.display().to_string(),
                changes: changes.clone(),
                time: crate::results::journal::now_rfc3339(),
            })
        })
        .map_err(|e| failed(AmendFailure::Journal(e)))?;
    for change in &changes {
        voice.say(&format!("amended: {change}"));
    }
    Ok(())
}

/// Writes the reports, prints the mail table (a campaign alone; a multi-target member's
/// stays in its directory), and maps the outcome to an exit code; a finished calibration
/// also writes its noise profile.
fn conclude(dir: &ResultsDir, outcome: Outcome, voice: &Voice) -> Result<u8, Error> {
    let printed = match voice {
        Voice::Alone => crate::cli::report::write_and_print(dir),
        Voice::Member(_) => crate::cli::report::write_quietly(dir, voice),
    };
    match outcome {
        Outcome::Finished => {
            let code = printed?;
            voice.say(&format!("campaign finished: {}", dir.root.display()));
            crate::cli::calibrate::write_profile(dir)?;
            Ok(code)
        }
        Outcome::Stopped(stop) => {
            if let Err(e) = printed {
                voice.say(&e.render());
            }
            Err(Error::CampaignStopped {
                dir: dir.root.clone(),
                stop: Box::new(stop),
            })
        }
        Outcome::Interrupted => {
            if let Err(e) = printed {
                voice.say(&e.render());
            }
            Err(Error::Interrupted {
                dir: dir.root.clone(),
            })
        }
    }
}
