//! `aba batch FILE`, `aba batch resume DIR`, `aba batch status DIR`: a night of campaigns
//! from a plan file ([`crate::batch::plan`]), run into one batch directory.
//!
//! Every campaign of the plan runs on each of its targets as its own campaign in
//! `<batch>/<NN>-<recipe>/<target>/` (the directory a multi-target `aba run` makes, with its
//! `targets.json`, so `aba report|status|verify|resume` work on it). Each target is a lane
//! ([`super::lanes`]): one thread that runs that target's campaigns one after the other in plan order; lanes run at
//! the same time. A campaign with several targets does not wait for all of them to be free:
//! each target runs its share when its lane reaches it, and the campaign's combined report is
//! written when the batch ends. A campaign that fails, stops or is refused on a target is
//! journaled and the lane goes on with its next campaign.
//!
//! The batch journal (`aba::batch::journal`) records each start and end before and after it
//! happens, so `aba batch resume` knows which directories exist and which ended: a campaign
//! whose directory has a journal is continued with `aba resume`'s logic (never started anew),
//! one without is started. Ctrl-C stops every lane at its campaign's next safe point and
//! starts nothing more (exit 130).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Mutex,
    time::Duration,
};

use sha2::{Digest as _, Sha256};

use crate::{
    analysis::AnalyzeOptions,
    batch::{
        confine::{PLAN_COPY, campaign_dir, check_campaigns},
        journal::{BATCH_FORMAT, BatchEvent, BatchJournal, BatchWriter, CampaignEntry, Ended},
        plan::BatchPlan,
        summary::BatchSummary,
    },
    campaign::{engine::RunOptions, lock::LockError},
    error::{CampaignEnd, Error, Inline, exit_code, worst},
    interrupt,
    inventory::Inventory,
    kernel::binding::KernelBinding,
    recipe::params::ParamBinding,
    results::{
        atomic::write_atomic,
        journal::{now_rfc3339, now_rfc3339_micros},
        layout::{new_stamped_dir, path_safe, utc_stamp},
        manifest::{MANIFEST_FORMAT, Manifest, Member, subdirectories},
    },
    session::{
        inputs::{Bindings, Sources},
        lanes::{LaneEnd, run_lanes},
        launch::{Destination, Launch},
        multi::combined,
        observer::Voice,
        prepare::Prepared,
        resume::resume_one,
    },
    target::{connect::machine_key, host::run_host},
};

/// How long the batch-wide notification may take.
const HOOK_TIMEOUT: Duration = Duration::from_secs(120);

/// What the batch commands share.
pub struct BatchContext<'a> {
    /// `--targets FILE`.
    pub inventory: Option<&'a Path>,
    /// Where `[files]` may come from.
    pub files: &'a Sources,
}

/// One campaign on one target.
struct Job<'a> {
    entry: &'a CampaignEntry,
    target: String,
    /// Made ready when the batch started (`aba batch FILE`); a resume prepares at the start.
    prepared: Option<Prepared>,
}

impl Job<'_> {
    fn rel(&self) -> String {
        format!("{}/{}", self.entry.dir, path_safe(&self.target))
    }

    fn options(&self) -> RunOptions {
        RunOptions {
            allow_tuning: self.entry.allow_tuning,
            wait: self.entry.wait,
            look_rule: None,
        }
    }

    fn voice(&self) -> Voice {
        Voice::Member(format!("#{} {}", self.entry.number, self.target))
    }
}

fn bindings(entry: &CampaignEntry) -> Bindings {
    // Validated when the plan was read; a journal edited since loses what does not parse.
    Bindings {
        kernels: entry
            .kernels
            .iter()
            .filter_map(|k| KernelBinding::from_option(k).ok())
            .collect(),
        params: entry
            .params
            .iter()
            .filter_map(|p| ParamBinding::from_option(p).ok())
            .collect(),
        builds: None,
        no_build: false,
    }
}

fn launch<'a>(entry: &CampaignEntry, at: &'a Path) -> Launch<'a> {
    Launch {
        results: Destination::At(at),
        yes: entry.yes,
        no_profile: entry.no_profile,
    }
}

/// Loads and checks the campaign of `entry` for `target` as `aba run` would.
fn prepare(
    entry: &CampaignEntry,
    target: &str,
    inventory: &Inventory,
    files: &Sources,
    at: &Path,
    voice: Voice,
) -> Result<Prepared, Error> {
    let recipe = Path::new(&entry.recipe);
    let ready = Prepared::new(
        recipe,
        inventory,
        inventory.target(target)?,
        files,
        &bindings(entry),
        None,
        entry.no_profile,
        voice,
    )?;
    let options = RunOptions {
        allow_tuning: entry.allow_tuning,
        wait: entry.wait,
        look_rule: None,
    };
    ready.check(recipe, launch(entry, at), &options)?;
    Ok(ready)
}

/// `aba batch FILE`.
pub fn run(plan_path: &Path, results: &Path, ctx: &BatchContext<'_>) -> Result<u8, Error> {
    let inventory = Inventory::discover(ctx.inventory)?;
    let plan = BatchPlan::load(plan_path, &inventory)?;
    // Two names for one machine would put two lanes on one machine.
    let mut machines: BTreeMap<String, String> = BTreeMap::new();
    for name in plan.targets() {
        let target = inventory.target(&name)?;
        let key = machine_key(&target).map_err(|source| Error::Target {
            target: name.clone(),
            source,
        })?;
        if let Some(first) = machines.insert(key.clone(), name.clone()) {
            return Err(Error::SameMachine {
                first,
                second: name,
                machine: key,
            });
        }
    }
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    // Everything that would refuse a campaign refuses the batch before anything exists.
    let mut entries = Vec::new();
    let mut ready: Vec<Vec<Prepared>> = Vec::new();
    for c in &plan.campaigns {
        let dirs = subdirectories(&c.targets).ok_or_else(|| Error::TargetDirs {
            targets: c.targets.join(", "),
        })?;
        let mut entry = CampaignEntry {
            number: c.number,
            recipe: absolute(&c.recipe).display().to_string(),
            name: String::new(),
            dir: String::new(),
            targets: c.targets.clone(),
            allow_tuning: c.options.allow_tuning,
            wait: c.options.wait,
            yes: c.options.yes,
            no_profile: c.options.no_profile,
            kernels: c.options.kernel_options.clone(),
            params: c.options.params.clone(),
        };
        let mut prepared = Vec::new();
        for (target, dir) in c.targets.iter().zip(&dirs) {
            let voice = Voice::Member(format!("#{} {target}", c.number));
            let p = prepare(&entry, target, &inventory, ctx.files, Path::new(dir), voice)?;
            prepared.push(p);
        }
        entry.name = prepared[0].recipe.name.to_string();
        entry.dir = format!("{:02}-{}", c.number, entry.name);
        entries.push(entry);
        ready.push(prepared);
    }
    let batch = new_stamped_dir(results, &plan.name, &utc_stamp())
        .and_then(|d| std::fs::canonicalize(&d))
        .map_err(|source| Error::ResultsDir {
            parent: results.to_path_buf(),
            source,
        })?;
    let created = now_rfc3339();
    let io = |source| Error::ResultsDir {
        parent: batch.clone(),
        source,
    };
    write_atomic(&batch.join(PLAN_COPY), plan.text.as_bytes()).map_err(io)?;
    for entry in &entries {
        std::fs::create_dir(batch.join(&entry.dir)).map_err(io)?;
        Manifest {
            format: MANIFEST_FORMAT,
            recipe: entry.name.clone(),
            created: created.clone(),
            aba_version: env!("CARGO_PKG_VERSION").to_owned(),
            targets: entry
                .targets
                .iter()
                .map(|t| Member {
                    target: t.clone(),
                    dir: path_safe(t),
                })
                .collect(),
        }
        .write(&batch.join(&entry.dir))?;
    }
    let writer = BatchWriter::create(
        &batch,
        &BatchEvent::Batch {
            format: BATCH_FORMAT,
            name: plan.name.clone(),
            plan: absolute(plan_path).display().to_string(),
            plan_sha256: hex::encode(Sha256::digest(plan.text.as_bytes())),
            aba_version: env!("CARGO_PKG_VERSION").to_owned(),
            time: created,
            campaigns: entries.clone(),
        },
    )?;
    eprintln!(
        "batch: {} ({} campaigns on {})",
        batch.display(),
        entries.len(),
        plan.targets().join(", ")
    );
    let mut jobs = Vec::new();
    for (entry, prepared) in entries.iter().zip(ready) {
        for (target, p) in entry.targets.iter().zip(prepared) {
            jobs.push(Job {
                entry,
                target: target.clone(),
                prepared: Some(p),
            });
        }
    }
    drive(&batch, jobs, writer, &inventory, ctx)
}

/// `aba batch resume DIR`: every campaign that did not run to its end, continued where its
/// directory stands or started when it has none, each target's in plan order.
pub fn resume(dir: &Path, ctx: &BatchContext<'_>) -> Result<u8, Error> {
    let journal = BatchJournal::read(dir)?;
    let batch = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let inventory = Inventory::discover(ctx.inventory)?;
    // The journal may come from someone else: it runs only what the plan copy names, and
    // only in the batch directory's own subdirectories.
    check_campaigns(&batch, &journal, &inventory)?;
    let records = journal.jobs();
    let mut jobs = Vec::new();
    for entry in journal.campaigns() {
        for target in &entry.targets {
            let done = records
                .get(&(entry.number, target.clone()))
                .and_then(|r| r.ended.as_ref())
                .is_some_and(|e| e.0.complete());
            if done {
                eprintln!("[#{} {target}] already finished", entry.number);
                continue;
            }
            jobs.push(Job {
                entry,
                target: target.clone(),
                prepared: None,
            });
        }
    }
    let writer = BatchWriter::open(&batch)?;
    if jobs.is_empty() {
        // Nothing ran, so nothing is notified again: the summary is said as it stands.
        eprintln!("the batch in {} is already finished", batch.display());
        print!("{}", BatchSummary::of(&batch, &journal).text());
        return Ok(worst(
            records
                .values()
                .filter_map(|r| r.ended.as_ref().map(|e| e.1)),
        ));
    }
    drive(&batch, jobs, writer, &inventory, ctx)
}

/// `aba batch status DIR`: the summary as the batch stands, written nowhere.
pub fn status(dir: &Path) -> Result<u8, Error> {
    let journal = BatchJournal::read(dir)?;
    print!("{}", BatchSummary::of(dir, &journal).text());
    Ok(exit_code::OK)
}

/// Runs `jobs`, one lane per target, then concludes the batch.
fn drive(
    batch: &Path,
    jobs: Vec<Job<'_>>,
    writer: BatchWriter,
    inventory: &Inventory,
    ctx: &BatchContext<'_>,
) -> Result<u8, Error> {
    let mut lanes: Vec<(String, Vec<Job<'_>>)> = Vec::new();
    for job in jobs {
        match lanes.iter_mut().find(|(t, _)| *t == job.target) {
            Some((_, lane)) => lane.push(job),
            None => lanes.push((job.target.clone(), vec![job])),
        }
    }
    let writer = Mutex::new(writer);
    interrupt::install();
    let ends = run_lanes("aba-batch-", &lanes, |_, lane| {
        for job in lane {
            if interrupt::requested() {
                break;
            }
            run_job(batch, job, &writer, inventory, ctx);
        }
    });
    for (target, end) in ends {
        match end {
            LaneEnd::Done(()) => {}
            LaneEnd::NotStarted(e) => {
                eprintln!("[{target}] error: cannot start a thread for the target: {e}");
            }
            // As before lanes were shared: a lane's panic is the batch's, once every lane ended.
            LaneEnd::Panicked => panic!("a scoped thread panicked"),
        }
    }
    let writer = writer
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    conclude(batch, writer, inventory)
}

/// Appends `event`; a batch journal that cannot be written is said (the campaign's own
/// journal still holds every sample; the next resume reads its directory).
fn journal(writer: &Mutex<BatchWriter>, event: &BatchEvent, voice: &Voice) {
    let mut w = writer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Err(e) = w.append(event) {
        voice.say(&format!(
            "warning: not journaled in the batch journal: {}",
            crate::causes::one_line(&e)
        ));
    }
}

/// Journals that `job` failed without running, for `reason`.
fn not_run(writer: &Mutex<BatchWriter>, job: &Job<'_>, reason: String, voice: &Voice) {
    journal(
        writer,
        &BatchEvent::Ended {
            campaign: job.entry.number,
            target: job.target.clone(),
            outcome: Ended::Failed,
            code: CampaignEnd::Failed.code(),
            reason: Some(reason),
            time: now_rfc3339_micros(),
        },
        voice,
    );
}

/// Runs one campaign on one target and journals its start and end.
fn run_job(
    batch: &Path,
    job: &Job<'_>,
    writer: &Mutex<BatchWriter>,
    inventory: &Inventory,
    ctx: &BatchContext<'_>,
) {
    let voice = job.voice();
    let rel = job.rel();
    let at = match campaign_dir(batch, job.entry, &job.target) {
        Ok(at) => at,
        Err(e) => {
            let reason = crate::text::one_line(&crate::causes::one_line(&e)).into_owned();
            voice.say(&format!("error: {reason}"));
            not_run(writer, job, reason, &voice);
            return;
        }
    };
    let resumed = at.join("journal.jsonl").is_file();
    if !resumed && at.exists() {
        if at.join("samples.csv").exists() {
            // Results without their journal are not aba's to remove or to overwrite.
            voice.say(&format!(
                "error: {} has samples.csv but no journal.jsonl: left as it is, not run",
                at.display()
            ));
            let reason = format!("{rel} has samples.csv but no journal.jsonl");
            not_run(writer, job, reason, &voice);
            return;
        }
        // A directory without a journal holds only the copies a start makes before its
        // first record (a kill in between): nothing ran, so it is made again. `at` is a
        // directory of the batch's own, reached through no link ([`campaign_dir`]), and
        // remove_dir_all follows no link inside it.
        let _ = std::fs::remove_dir_all(&at);
    }
    journal(
        writer,
        &BatchEvent::Started {
            campaign: job.entry.number,
            target: job.target.clone(),
            dir: rel,
            resumed,
            time: now_rfc3339_micros(),
        },
        &voice,
    );
    let targets_file = ctx.inventory.map(Path::to_path_buf);
    let result = if resumed {
        resume_one(
            &at,
            targets_file.as_ref(),
            None,
            ctx.files,
            job.options(),
            &voice,
        )
    } else {
        match &job.prepared {
            Some(p) => p.begin(launch(job.entry, &at), job.options()),
            None => prepare(
                job.entry,
                &job.target,
                inventory,
                ctx.files,
                &at,
                voice.clone(),
            )
            .and_then(|p| p.begin(launch(job.entry, &at), job.options())),
        }
    };
    let (outcome, code, reason) = match result {
        Ok(end) => (journaled(end), end.code(), None),
        Err(e) => {
            voice.say(&crate::text::printable(&e.render()));
            let outcome = match (&e, CampaignEnd::of_error(&e)) {
                (_, CampaignEnd::Stopped) => Ended::Stopped,
                (_, CampaignEnd::Interrupted) => Ended::Interrupted,
                // Held by another campaign, or the lab scheduler said no: refused. A target
                // that cannot be reached to check its lock is a failure like any other.
                (
                    Error::Lock(Inline {
                        error:
                            LockError::Busy { .. }
                            | LockError::Starting { .. }
                            | LockError::Reserve { .. },
                        ..
                    }),
                    _,
                ) => Ended::Refused,
                (
                    Error::Lock(Inline {
                        error: LockError::Interrupted(_),
                        ..
                    }),
                    _,
                ) => Ended::Interrupted,
                _ => Ended::Failed,
            };
            let reason = crate::text::one_line(&crate::causes::one_line(&e)).into_owned();
            (outcome, e.exit_code(), Some(reason))
        }
    };
    voice.say(&format!("campaign {}", outcome.word()));
    journal(
        writer,
        &BatchEvent::Ended {
            campaign: job.entry.number,
            target: job.target.clone(),
            outcome,
            code,
            reason,
            time: now_rfc3339_micros(),
        },
        &voice,
    );
}

/// How the batch journal says a campaign that ended as `end` ended (a refusal is an error,
/// told apart where the error is).
fn journaled(end: CampaignEnd) -> Ended {
    match end {
        CampaignEnd::Finished => Ended::Finished,
        CampaignEnd::NotReproduced => Ended::NotReproduced,
        CampaignEnd::Stopped => Ended::Stopped,
        CampaignEnd::Failed => Ended::Failed,
        CampaignEnd::Interrupted => Ended::Interrupted,
    }
}

/// The end of a batch run or resume: every campaign's combined report, the morning summary
/// written and printed, the batch-wide notification, the exit code.
fn conclude(batch: &Path, mut writer: BatchWriter, inventory: &Inventory) -> Result<u8, Error> {
    let journal = BatchJournal::read(batch)?;
    for entry in journal.campaigns().iter().filter(|e| e.targets.len() > 1) {
        let parent = batch.join(&entry.dir);
        let written = Manifest::read(&parent)
            .map_err(Error::from)
            .and_then(|m| combined(&parent, &m, AnalyzeOptions::default(), false));
        if let Err(e) = written {
            eprintln!(
                "warning: no combined report for {}: {}",
                entry.dir,
                crate::causes::one_line(&e)
            );
        }
    }
    let summary = BatchSummary::of(batch, &journal);
    let text = summary.text();
    let io = |source| Error::ResultsDir {
        parent: batch.to_path_buf(),
        source,
    };
    write_atomic(&batch.join("summary.txt"), text.as_bytes()).map_err(io)?;
    write_atomic(&batch.join("summary.tsv"), summary.tsv().as_bytes()).map_err(io)?;
    print!("{text}");
    let records = journal.jobs();
    let mut codes: Vec<u8> = records
        .values()
        .filter_map(|r| r.ended.as_ref().map(|e| e.1))
        .collect();
    if interrupt::requested() {
        codes.push(CampaignEnd::Interrupted.code());
    } else {
        notify(batch, &summary, &mut writer, inventory);
    }
    Ok(worst(codes))
}

/// Runs every distinct `on_finish` (every campaign ran to its end) or `on_failure` (any did
/// not) of the batch's targets once, with `{dir}` the batch directory, `{reason}` the outcome
/// and `{target}` the targets that share the command.
fn notify(batch: &Path, summary: &BatchSummary, writer: &mut BatchWriter, inventory: &Inventory) {
    let complete = summary.complete();
    let mut commands: Vec<(String, Vec<String>, PathBuf)> = Vec::new();
    let mut names: Vec<&str> = summary.jobs.iter().map(|j| j.target.as_str()).collect();
    names.dedup();
    for name in names {
        let Ok(target) = inventory.target(name) else {
            continue;
        };
        let command = if complete {
            target.on_finish.clone()
        } else {
            target.on_failure.clone()
        };
        let Some(command) = command else { continue };
        match commands.iter_mut().find(|(c, ..)| *c == command) {
            Some((_, targets, _)) if !targets.iter().any(|t| t == name) => {
                targets.push(name.to_owned());
            }
            Some(_) => {}
            None => commands.push((command, vec![name.to_owned()], target.base_dir.clone())),
        }
    }
    let reason = format!("batch {}: {}", summary.name, summary.outcome());
    let dir = batch.display().to_string();
    for (command, targets, cwd) in commands {
        let targets = targets.join(",");
        let vars = [
            ("dir", dir.as_str()),
            ("reason", reason.as_str()),
            ("target", targets.as_str()),
        ];
        let error = run_host(&command, &vars, &cwd, HOOK_TIMEOUT)
            .err()
            .map(|e| crate::causes::one_line(&e));
        match &error {
            None => eprintln!("ran the batch's notification command `{command}`"),
            Some(e) => eprintln!("warning: the batch's notification failed: {e}"),
        }
        let _ = writer.append(&BatchEvent::Notified {
            command,
            error,
            time: now_rfc3339(),
        });
    }
}
