//! Launching a new campaign: the checks that refuse it before anything exists, then its
//! results directory created, the target locked (and reserved), the engine run and the
//! campaign concluded.

use std::path::{Path, PathBuf};

use crate::{
    analysis::verdict_params,
    campaign::{
        engine::{Engine, EngineError, Job, RunOptions, Start, check_tuning_consent},
        ledger::Ledger,
        lock::{Holder, TargetLock},
        plan::{Plan, Summary},
        restore::guarded,
    },
    error::{CampaignEnd, Error},
    interrupt,
    inventory::Target,
    kernel::binding::apply,
    recipe::Recipe,
    reproduction::{check_reference, copy_reference},
    results::{
        journal::{Event, Journal},
        layout::{ResultsDir, utc_stamp},
    },
    session::observer::{InterimReports, Voice},
    target::{
        connect::{machine_key, transport_for},
        transport::{Transport, TransportError},
    },
};

pub(crate) fn engine_error(e: EngineError) -> Error {
    Error::Engine(e)
}

pub(crate) fn target_error(target: &Target) -> impl FnOnce(TransportError) -> Error + '_ {
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

/// Plans `recipe` on `target`, creates its results directory, lets `prepare` add files to it
/// and name the records journaled after the header, takes the target and runs the campaign.
pub fn start_new(
    recipe: &Recipe,
    recipe_path: &Path,
    target: &Target,
    launch: Launch<'_>,
    options: RunOptions,
    prepare: impl FnOnce(&ResultsDir) -> Result<Vec<Event>, Error>,
) -> Result<CampaignEnd, Error> {
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
        check_reference(&reference.path, &verdict_params(&recipe.analysis))?;
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
) -> Result<CampaignEnd, Error> {
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
pub(crate) fn take_lock(
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
pub(crate) fn execute(
    dir: &ResultsDir,
    target: &Target,
    mut transport: Box<dyn Transport>,
    lock: &TargetLock,
    options: RunOptions,
    start: Start,
    records: &[Event],
    voice: &Voice,
) -> Result<CampaignEnd, Error> {
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
    let mut progress = InterimReports {
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
    super::conclude::conclude(dir, outcome, voice)
}
