//! Several targets, one campaign (issue 13): `aba run RECIPE --target a --target b …` runs
//! the recipe on every target at once, one lane per target ([`super::lanes`]), each with its
//! own transport, lock, engine, journal and samples in its own subdirectory of one parent
//! directory; and `aba resume PARENT` continues every unfinished one.
//!
//! A failure on one target ends that lane only: its directory stays resumable, the others run
//! on. What is refused for one target is refused for the whole run before anything is
//! created: an unknown name, a recipe that cannot bind or plan on it, two names for one
//! machine.
//!
//! How the run ends: the worst of the targets' ends ([`CampaignEnd`]'s order: interrupted,
//! an error, stopped, not reproduced, finished); `aba::error` says it as an exit code.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use crate::{
    analysis::{
        AnalyzeOptions, analyze_with,
        targets::{TargetInput, TargetState, TargetsAnalysis},
    },
    campaign::engine::RunOptions,
    error::{CampaignEnd, Error, worst},
    interrupt,
    inventory::Inventory,
    report::targets::write_targets_report,
    reproduction::ReferenceComparison,
    results::{
        journal::now_rfc3339,
        layout::{ResultsDir, new_stamped_dir, utc_stamp},
        manifest::{MANIFEST_FORMAT, Manifest, Member, subdirectories},
    },
    session::{
        builds::HostBuilds,
        conclude::write_analysed,
        inputs::{Bindings, Sources},
        lanes::{LaneEnd, run_lanes},
        launch::{Destination, Launch},
        observer::Voice,
        prepare::Prepared,
        resume::resume_one,
    },
    target::connect::machine_key,
};

/// What one target's thread ended with: its exit code (an error already said, prefixed).
pub fn finish(voice: &Voice, result: Result<u8, Error>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            voice.say(&crate::text::printable(&e.render()));
            e.exit_code()
        }
    }
}

/// How one target's campaign ended (an error already said, prefixed).
fn ended(voice: &Voice, result: Result<CampaignEnd, Error>) -> CampaignEnd {
    match result {
        Ok(end) => end,
        Err(e) => {
            voice.say(&crate::text::printable(&e.render()));
            CampaignEnd::of_error(&e)
        }
    }
}

/// Runs `work` for every `(target, item)` on its own lane and returns how each target's
/// campaign ended; a thread that panics counts as an error of its target alone.
fn on_each<T: Sync>(
    items: &[(String, T)],
    work: impl Fn(&T, &Voice) -> Result<CampaignEnd, Error> + Sync,
) -> Vec<(String, CampaignEnd)> {
    run_lanes("aba-", items, |target, item| {
        let voice = Voice::Member(target.to_owned());
        ended(&voice, work(item, &voice))
    })
    .into_iter()
    .map(|(target, lane)| {
        let end = match lane {
            LaneEnd::Done(end) => end,
            LaneEnd::Panicked => {
                Voice::Member(target.clone())
                    .say("error: internal error: this target's runner panicked");
                CampaignEnd::Failed
            }
            LaneEnd::NotStarted(e) => {
                Voice::Member(target.clone())
                    .say(&format!("error: cannot start a thread for the target: {e}"));
                CampaignEnd::Failed
            }
        };
        (target, end)
    })
    .collect()
}

/// What `aba run` with several `--target`s asks for.
pub struct MultiRun<'a> {
    /// The recipe file.
    pub recipe: &'a Path,
    /// The targets' names, in command-line order.
    pub targets: &'a [String],
    /// `--targets FILE`.
    pub inventory: Option<&'a Path>,
    /// Where `[files]` may come from.
    pub files: &'a Sources,
    /// This tester's kernels.
    pub kernels: &'a Bindings,
}

/// `aba run RECIPE --target a --target b …`.
pub fn run(
    request: &MultiRun<'_>,
    launch: Launch<'_>,
    options: RunOptions,
) -> Result<CampaignEnd, Error> {
    let inventory = Inventory::discover(request.inventory)?;
    let targets = request
        .targets
        .iter()
        .map(|name| inventory.target(name))
        .collect::<Result<Vec<_>, _>>()?;
    // One campaign per machine: two names for one machine are refused before anything starts.
    let mut machines: BTreeMap<String, String> = BTreeMap::new();
    for target in &targets {
        let key = machine_key(target).map_err(|source| Error::Target {
            target: target.name.clone(),
            source,
        })?;
        if let Some(first) = machines.insert(key.clone(), target.name.clone()) {
            return Err(Error::SameMachine {
                first,
                second: target.name.clone(),
                machine: key,
            });
        }
    }
    let dirs = subdirectories(request.targets).ok_or_else(|| Error::TargetDirs {
        targets: request.targets.join(", "),
    })?;
    // The builds run once, for every target: their records are the same build.
    let host = HostBuilds::for_run(
        request.recipe,
        &inventory,
        request.files,
        request.kernels,
        &targets.iter().collect::<Vec<_>>(),
    )?;
    let mut prepared: Vec<(String, (Prepared, String))> = Vec::new();
    for (target, dir) in targets.into_iter().zip(dirs) {
        let name = target.name.clone();
        let ready = Prepared::new(
            request.recipe,
            &inventory,
            target,
            request.files,
            request.kernels,
            host.clone(),
            launch.no_profile,
            Voice::Member(name.clone()),
        )?;
        ready.check(request.recipe, launch, &options)?;
        prepared.push((name, (ready, dir)));
    }
    let recipe_name = prepared[0].1.0.recipe.name.to_string();
    let parent = match launch.results {
        Destination::Under(base) => new_stamped_dir(base, &recipe_name, &utc_stamp()),
        Destination::At(path) => std::fs::create_dir(path).map(|()| path.to_path_buf()),
    }
    .map_err(|source| Error::ResultsDir {
        parent: launch.results.parent(),
        source,
    })?;
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        recipe: recipe_name,
        created: now_rfc3339(),
        aba_version: env!("CARGO_PKG_VERSION").to_owned(),
        targets: prepared
            .iter()
            .map(|(name, (_, dir))| Member {
                target: name.clone(),
                dir: dir.clone(),
            })
            .collect(),
    };
    manifest.write(&parent)?;
    eprintln!(
        "results: {} ({} targets: {})",
        parent.display(),
        request.targets.len(),
        request.targets.join(", ")
    );
    interrupt::install();
    let ends = on_each(&prepared, |(ready, dir), _| {
        let at = parent.join(dir);
        let member = Launch {
            results: Destination::At(&at),
            ..launch
        };
        ready.begin(member, options.clone())
    });
    Ok(conclude(&parent, &manifest, &ends))
}

/// `aba resume PARENT`: every unfinished target's campaign, concurrently.
pub fn resume(
    parent: &Path,
    targets: Option<&PathBuf>,
    amend: Option<&Path>,
    files: &Sources,
    options: RunOptions,
) -> Result<CampaignEnd, Error> {
    let manifest = Manifest::read(parent)?;
    let mut todo: Vec<(String, PathBuf)> = Vec::new();
    let mut ends: Vec<(String, CampaignEnd)> = Vec::new();
    for (member, dir) in manifest.members(parent) {
        let voice = Voice::Member(member.target.clone());
        match TargetState::of(&dir) {
            TargetState::Finished { .. } => {
                voice.say("already finished");
                ends.push((member.target.clone(), CampaignEnd::Finished));
            }
            TargetState::NotStarted { why } => {
                voice.say(&format!(
                    "error: never started, nothing to resume ({why}); start it again with \
                     `aba run RECIPE --target {}`",
                    member.target
                ));
                ends.push((member.target.clone(), CampaignEnd::Failed));
            }
            TargetState::Stopped { .. } | TargetState::Unfinished { .. } => {
                todo.push((member.target.clone(), dir));
            }
        }
    }
    interrupt::install();
    ends.extend(on_each(&todo, |dir, voice| {
        resume_one(dir, targets, amend, files, options.clone(), voice)
    }));
    let order = |t: &str| manifest.targets.iter().position(|m| m.target == t);
    ends.sort_by_key(|(t, _)| order(t));
    Ok(conclude(parent, &manifest, &ends))
}

/// The end of a multi-target run or resume: the combined report written and printed, each
/// target's outcome said, and the worst of the ends (the report's error counts as one).
fn conclude(parent: &Path, manifest: &Manifest, ends: &[(String, CampaignEnd)]) -> CampaignEnd {
    // Each target's outcome is said even when the combined report cannot be written.
    let report = match combined(parent, manifest, AnalyzeOptions::default(), false) {
        Ok(combined) => {
            print!("{}", combined.text);
            CampaignEnd::Finished
        }
        Err(e) => {
            eprintln!("{}", crate::text::printable(&e.render()));
            CampaignEnd::of_error(&e)
        }
    };
    let said: Vec<String> = ends
        .iter()
        .map(|(target, end)| format!("{target} {}", end.word()))
        .collect();
    eprintln!("targets: {}", said.join(", "));
    let end = ends
        .iter()
        .map(|(_, e)| *e)
        .chain([report])
        .max()
        .unwrap_or(CampaignEnd::Finished);
    if ends
        .iter()
        .any(|(_, e)| matches!(e, CampaignEnd::Stopped | CampaignEnd::Interrupted))
    {
        eprintln!(
            "(resume the unfinished targets with `aba resume {}`)",
            parent.display()
        );
    }
    end
}

/// The combined report of a multi-target directory, as [`combined`] wrote it.
pub struct Combined {
    /// The exit code of the analyses.
    pub code: u8,
    /// report.txt.
    pub text: String,
    /// Each target's state and analysis, in manifest order.
    pub inputs: Vec<TargetInput>,
    /// What report.txt and targets.tsv were written from.
    pub analysis: TargetsAnalysis,
    /// Each target's comparison with its recipe's reference, as its rewritten reports hold
    /// it (only with `rewrite`, and only where the recipe names a reference).
    pub reproductions: Vec<Option<ReferenceComparison>>,
}

/// Analyses every target of `parent` and writes the combined report; with `rewrite`, each
/// target's own reports are rewritten too (`aba report PARENT`; after a run each target wrote
/// its own). The exit code is the analyses' (not reproduced; with `rewrite` also an error
/// when a started target cannot be analysed).
pub fn combined(
    parent: &Path,
    manifest: &Manifest,
    options: AnalyzeOptions,
    rewrite: bool,
) -> Result<Combined, Error> {
    let mut inputs = Vec::new();
    let mut codes = Vec::new();
    let mut reproductions = Vec::new();
    for (member, dir) in manifest.members(parent) {
        let state = TargetState::of(&dir);
        let results = ResultsDir::open(&dir);
        let analysis = match &state {
            TargetState::NotStarted { why } => Err(why.clone()),
            _ => analyze_with(&results, options).map_err(|e| crate::causes::one_line(&e)),
        };
        let mut reproduction = None;
        if rewrite {
            let voice = Voice::Member(member.target.clone());
            let code = match &analysis {
                Ok(a) => finish(
                    &voice,
                    write_analysed(&results, a, &voice).map(|written| {
                        reproduction = written.reproduction;
                        written.end.code()
                    }),
                ),
                // Said in the combined report; a target that never ran has nothing to analyse.
                Err(_) if matches!(state, TargetState::NotStarted { .. }) => {
                    CampaignEnd::Finished.code()
                }
                Err(why) => {
                    voice.say(&format!("error: no analysis: {why}"));
                    CampaignEnd::Failed.code()
                }
            };
            codes.push(code);
        } else if let Ok(a) = &analysis
            && a.summary.expects_reproduced == Some(false)
        {
            codes.push(CampaignEnd::NotReproduced.code());
        }
        reproductions.push(reproduction);
        inputs.push(TargetInput {
            target: member.target.clone(),
            dir: member.dir.clone(),
            state,
            analysis,
        });
    }
    let directory = parent.file_name().map_or_else(
        || parent.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let analysis = TargetsAnalysis::new(&manifest.recipe, &directory, &inputs);
    let text = write_targets_report(parent, &analysis)?;
    Ok(Combined {
        code: worst(codes),
        text,
        inputs,
        analysis,
        reproductions,
    })
}
