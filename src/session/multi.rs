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
//! Exit code: the worst of the targets', worst first 130 (interrupted), 1 (an error), 3
//! (stopped), 4 (not reproduced), 0.

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
    error::{CampaignEnd, Error, exit_code, worst},
    interrupt,
    inventory::Inventory,
    report::targets::write_targets_report,
    reproduction::Reproduction,
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

/// Runs `work` for every `(target, item)` on its own lane and returns each target's exit
/// code; a thread that panics counts as an error of its target alone.
fn on_each<T: Sync>(
    items: &[(String, T)],
    work: impl Fn(&T, &Voice) -> Result<u8, Error> + Sync,
) -> Vec<(String, u8)> {
    run_lanes("aba-", items, |target, item| {
        let voice = Voice::Member(target.to_owned());
        finish(&voice, work(item, &voice))
    })
    .into_iter()
    .map(|(target, end)| {
        let code = match end {
            LaneEnd::Done(code) => code,
            LaneEnd::Panicked => {
                Voice::Member(target.clone())
                    .say("error: internal error: this target's runner panicked");
                exit_code::ERROR
            }
            LaneEnd::NotStarted(e) => {
                Voice::Member(target.clone())
                    .say(&format!("error: cannot start a thread for the target: {e}"));
                exit_code::ERROR
            }
        };
        (target, code)
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
pub fn run(request: &MultiRun<'_>, launch: Launch<'_>, options: RunOptions) -> Result<u8, Error> {
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
    let codes = on_each(&prepared, |(ready, dir), _| {
        let at = parent.join(dir);
        let member = Launch {
            results: Destination::At(&at),
            ..launch
        };
        ready.begin(member, options.clone())
    });
    conclude(&parent, &manifest, &codes)
}

/// `aba resume PARENT`: every unfinished target's campaign, concurrently.
pub fn resume(
    parent: &Path,
    targets: Option<&PathBuf>,
    amend: Option<&Path>,
    files: &Sources,
    options: RunOptions,
) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    let mut todo: Vec<(String, PathBuf)> = Vec::new();
    let mut codes: Vec<(String, u8)> = Vec::new();
    for (member, dir) in manifest.members(parent) {
        let voice = Voice::Member(member.target.clone());
        match TargetState::of(&dir) {
            TargetState::Finished { .. } => {
                voice.say("already finished");
                codes.push((member.target.clone(), exit_code::OK));
            }
            TargetState::NotStarted { why } => {
                voice.say(&format!(
                    "error: never started, nothing to resume ({why}); start it again with \
                     `aba run RECIPE --target {}`",
                    member.target
                ));
                codes.push((member.target.clone(), exit_code::ERROR));
            }
            TargetState::Stopped { .. } | TargetState::Unfinished { .. } => {
                todo.push((member.target.clone(), dir));
            }
        }
    }
    interrupt::install();
    codes.extend(on_each(&todo, |dir, voice| {
        resume_one(dir, targets, amend, files, options.clone(), voice)
    }));
    let order = |t: &str| manifest.targets.iter().position(|m| m.target == t);
    codes.sort_by_key(|(t, _)| order(t));
    conclude(parent, &manifest, &codes)
}

/// The end of a multi-target run or resume: the combined report written and printed, each
/// target's outcome said, and the worst exit code.
fn conclude(parent: &Path, manifest: &Manifest, codes: &[(String, u8)]) -> Result<u8, Error> {
    // Each target's outcome is said even when the combined report cannot be written.
    let report = match combined(parent, manifest, AnalyzeOptions::default(), false) {
        Ok(combined) => {
            print!("{}", combined.text);
            exit_code::OK
        }
        Err(e) => {
            eprintln!("{}", crate::text::printable(&e.render()));
            e.exit_code()
        }
    };
    let said: Vec<String> = codes
        .iter()
        .map(|(target, code)| format!("{target} {}", CampaignEnd::of(*code).word()))
        .collect();
    eprintln!("targets: {}", said.join(", "));
    let code = worst(codes.iter().map(|(_, c)| *c).chain([report]));
    if codes
        .iter()
        .any(|(_, c)| matches!(*c, exit_code::CAMPAIGN_STOPPED | exit_code::INTERRUPTED))
    {
        eprintln!(
            "(resume the unfinished targets with `aba resume {}`)",
            parent.display()
        );
    }
    Ok(code)
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
    pub reproductions: Vec<Option<Reproduction>>,
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
                        written.code
                    }),
                ),
                // Said in the combined report; a target that never ran has nothing to analyse.
                Err(_) if matches!(state, TargetState::NotStarted { .. }) => exit_code::OK,
                Err(why) => {
                    voice.say(&format!("error: no analysis: {why}"));
                    exit_code::ERROR
                }
            };
            codes.push(code);
        } else if let Ok(a) = &analysis
            && a.summary.expects_reproduced == Some(false)
        {
            codes.push(exit_code::NOT_REPRODUCED);
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
