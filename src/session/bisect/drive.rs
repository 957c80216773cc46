//! `aba bisect run`: the loop that drives the decision core ([`crate::bisect`]) with real
//! builds and boots. Each commit is checked out in the tester's tree and built there by the
//! builds file's command (incremental: one tree), its image and configuration stored under
//! the bisect directory by hash; each step is an ordinary campaign in `steps/NN-LABEL/` whose
//! looks are decided by the core (the engine's [`LookRule`]); each decision is journaled
//! before the next step starts. Running the same command again with `--dir` continues after
//! any kill, reboot or lost connection: the journal is replayed, a step's campaign is resumed
//! like `aba resume`, a commit already built is not built again.
//!
//! Nothing is taken from the bisect directory but decisions: the recipe, the builds file and
//! the target come from the command line every time, and must be the ones the journal
//! recorded (by SHA-256), so an edited journal cannot make aba run another command.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use sha2::{Digest as _, Sha256};

use super::{
    failure::BisectFailure,
    journal::{self, BISECT_JOURNAL_FORMAT, CONFIG, Entry, IMAGE, Setup, stored},
    range::{self, RangeCommit},
    report::{self, short},
    step_recipe::{GOOD, StepSpec, commit_label, step_recipe},
};
use crate::{
    analysis::{
        analyze,
        model::{Analysis, SeriesPoint},
        series_label as analyze_series_label, verdict_params,
    },
    bisect::{Action, BisectInput, Bisection, Judged, Record, StepVerdict, Strategy},
    build::{
        file::{BuildSpec, BuildsFile},
        prepare::{self, Steps},
    },
    campaign::engine::{LookRule, RunOptions},
    error::{CampaignEnd, Error},
    inventory::{Inventory, Target},
    recipe::{Recipe, model::Role, scoped_limits::SeriesLimits},
    results::{
        journal::{Event, Journal},
        layout::{ResultsDir, utc_stamp},
    },
    session::{
        builds::HostBuilds,
        inputs::{Bindings, Sources},
        launch::{Destination, Launch, start_new},
        observer::Voice,
        prepare::{kernels_record, params_record},
        resume::resume_one,
    },
    stats::{Better, sequential::Decision},
};

/// What `aba bisect run` was given.
#[derive(Debug)]
pub struct BisectRun<'a> {
    /// The recipe: its workloads, boot, tuning and limits; its kernels are replaced.
    pub recipe: &'a Path,
    /// The inventory, and its file when `--targets` named one (a step's resume reads it).
    pub inventory: &'a Inventory,
    /// `--targets`.
    pub targets_file: Option<&'a PathBuf>,
    /// The target.
    pub target: &'a Target,
    /// `[files]` folders.
    pub sources: &'a Sources,
    /// Parameter values and `--builds` (the tree's build).
    pub bindings: &'a Bindings,
    /// `--good`.
    pub good: &'a str,
    /// `--bad`.
    pub bad: &'a str,
    /// `--dir`: continue this bisection, or start it here.
    pub dir: Option<&'a Path>,
    /// `--results`: where a new bisection's directory is made without `--dir`.
    pub results: &'a Path,
    /// `--series`: which series to bisect (default: the recipe's first measured one).
    pub series: Option<&'a str>,
    /// `--strategy`.
    pub strategy: Strategy,
    /// `--yes`: steps estimated to take more than a day are started.
    pub yes: bool,
    /// Tuning consent and `--wait`.
    pub options: RunOptions,
}

/// The series a bisection follows, with its limits.
#[derive(Clone, Debug)]
struct Followed {
    workload: String,
    case: String,
    metric: String,
    label: String,
    better: Better,
    params: crate::stats::VerdictParams,
}

/// Runs (or continues) a bisection to its end or to the first stop; the exit code.
pub fn run(args: &BisectRun<'_>) -> Result<u8, Error> {
    let voice = Voice::Alone;
    let recipe =
        args.bindings
            .load(args.sources, args.recipe, args.inventory, Some(args.target))?;
    let followed = follow(&recipe, args.series)?;
    let builds_path = args.bindings.builds.as_deref().ok_or_else(|| {
        BisectFailure::Series(
            "aba bisect needs --builds FILE: how a commit of the tree is built".into(),
        )
    })?;
    let tree = tree_build(builds_path)?;
    let builds_sha256 = sha256_of(builds_path)?;
    let commits = range::resolve(&tree.dir, args.good, args.bad).map_err(BisectFailure::from)?;
    let setup = Setup {
        recipe: args.recipe.display().to_string(),
        recipe_sha256: recipe.sha256.clone(),
        builds: builds_path.display().to_string(),
        builds_sha256,
        target: args.target.name.clone(),
        series: followed.label.clone(),
        strategy: args.strategy,
        params: followed.params.clone(),
        better: followed.better,
    };
    let dir = open_dir(args, &recipe, &tree, &commits, &setup)?;
    let journal_path = dir.join(JOURNAL);
    voice.say(&format!(
        "bisect: {} commits after good on the first-parent line of {}, series {} (gate {} %), in {}",
        commits.len() - 1,
        tree.dir.display(),
        followed.label,
        followed.params.gate_pct,
        dir.display()
    ));
    voice.say(&format!(
        "to continue after a stop: {}",
        continue_command(args, &dir)
    ));
    let input = input_of(&commits, &setup);
    let read = journal::read(&journal_path).map_err(BisectFailure::from)?;
    let mut bisection =
        Bisection::replay(input, &read.records).map_err(|source| BisectFailure::Core {
            journal: journal_path.clone(),
            source,
        })?;
    let mut built = read.built;
    loop {
        report::write_all(&dir, &commits, &built, &bisection, &followed.label)?;
        let (commit, confirm) = match bisection.next().clone() {
            Action::Done(outcome) => {
                voice.say(&format!(
                    "bisect: {}",
                    crate::text::untrusted(&outcome.sentence(&hashes(&commits)), 4000)
                ));
                voice.say(&format!("wrote {}", dir.join(report::REPORT).display()));
                return Ok(crate::error::exit_code::OK);
            }
            Action::Confirm { bad } => (bad, true),
            Action::Test { commit } => (commit, false),
        };
        for index in [0, commit] {
            if built.iter().any(|e| built_index(e) == Some(index)) {
                continue;
            }
            match build_commit(&tree, &dir, index, &commits[index], &voice) {
                Ok(entry) => {
                    journal::append(&journal_path, &entry).map_err(BisectFailure::from)?;
                    built.push(entry);
                }
                Err(Unbuilt::Fails(why)) if index != 0 && !confirm => {
                    voice.say(&format!(
                        "bisect: commit {} does not build, skipped: {why}",
                        short(&commits[index].hash)
                    ));
                    decide(
                        &journal_path,
                        &mut bisection,
                        Record::Skip { commit: index, why },
                    )?;
                    break;
                }
                Err(Unbuilt::Fails(why)) => {
                    return Err(BisectFailure::Endpoint {
                        which: if index == 0 { "good" } else { "bad" },
                        hash: commits[index].hash.clone(),
                        why,
                    }
                    .into());
                }
                Err(Unbuilt::Error(e)) => return Err(e),
            }
        }
        // A skip moved the bisection on: choose again.
        if bisection.next() != &action_of(commit, confirm) {
            continue;
        }
        let step = StepRun {
            args,
            recipe: &recipe,
            followed: &followed,
            dir: &dir,
            commits: &commits,
            commit,
            confirm,
            number: bisection.records().len() + 1,
        };
        match step.run(&bisection, &voice)? {
            StepEnd::Decided(record) | StepEnd::Skipped(record) => {
                decide(&journal_path, &mut bisection, record)?;
            }
            StepEnd::Stopped(end) => {
                voice.say(&format!(
                    "bisect: stopped during step {}; to continue: {}",
                    step.number,
                    continue_command(args, &dir)
                ));
                return Ok(end.code());
            }
        }
    }
}

/// The core's input for the line `commits` and the recorded `setup`.
#[must_use]
pub fn input_of(commits: &[RangeCommit], setup: &Setup) -> BisectInput {
    let mut input = BisectInput::new(
        commits.iter().map(|c| c.hash.clone()).collect(),
        setup.params.clone(),
        setup.better,
    );
    input.strategy = setup.strategy;
    input
}

/// The journal's file name in the bisect directory.
pub const JOURNAL: &str = "bisect.jsonl";

fn action_of(commit: usize, confirm: bool) -> Action {
    if confirm {
        Action::Confirm { bad: commit }
    } else {
        Action::Test { commit }
    }
}

fn built_index(entry: &Entry) -> Option<usize> {
    match entry {
        Entry::Built { commit, .. } => Some(*commit),
        _ => None,
    }
}

fn hashes(commits: &[RangeCommit]) -> Vec<String> {
    commits.iter().map(|c| c.hash.clone()).collect()
}

/// Journals `record` (flushed) and hands it to the core.
fn decide(journal_path: &Path, bisection: &mut Bisection, record: Record) -> Result<(), Error> {
    journal::append(
        journal_path,
        &Entry::Decided {
            record: record.clone(),
        },
    )
    .map_err(BisectFailure::from)?;
    bisection
        .push(record)
        .map_err(|source| BisectFailure::Core {
            journal: journal_path.to_path_buf(),
            source,
        })?;
    Ok(())
}

/// The command that continues this bisection: the one that ran, with `--dir`.
fn continue_command(args: &BisectRun<'_>, dir: &Path) -> String {
    let quote = |p: &dyn std::fmt::Display| crate::target::quote::sh_quote(&p.to_string());
    let mut words = vec![
        "aba".to_owned(),
        "bisect".to_owned(),
        quote(&args.recipe.display()),
    ];
    if let Some(b) = &args.bindings.builds {
        words.push(format!("--builds {}", quote(&b.display())));
    }
    words.push(format!("--good {}", quote(&args.good)));
    words.push(format!("--bad {}", quote(&args.bad)));
    if let Some(t) = args.targets_file {
        words.push(format!("--targets {}", quote(&t.display())));
    }
    words.push(format!("--target {}", quote(&args.target.name)));
    for p in &args.bindings.params {
        words.push(format!(
            "--param {}",
            quote(&format!("{}={}", p.name, p.value))
        ));
    }
    if let Some(s) = args.series {
        words.push(format!("--series {}", quote(&s)));
    }
    if args.strategy != crate::bisect::input::DEFAULT_STRATEGY {
        words.push("--strategy plain".to_owned());
    }
    if args.yes {
        words.push("--yes".to_owned());
    }
    if args.options.allow_tuning {
        words.push("--allow-tuning".to_owned());
    }
    words.push(format!("--dir {}", quote(&dir.display())));
    words.join(" ")
}

/// The recipe's series to follow: `--series`, or its first measured series.
fn follow(recipe: &Recipe, series: Option<&str>) -> Result<Followed, Error> {
    let mut labels = Vec::new();
    for workload in recipe.workloads.iter().filter(|w| w.role == Role::Measured) {
        for case in workload.cases() {
            for metric in &workload.metrics {
                let label =
                    analyze_series_label(workload.name.as_str(), &case.name, metric.name.as_str());
                if series.is_none_or(|s| s == label) {
                    let limits = SeriesLimits::of(&recipe.analysis, workload, metric);
                    return Ok(Followed {
                        workload: workload.name.to_string(),
                        case: case.name.clone(),
                        metric: metric.name.to_string(),
                        label,
                        better: match metric.better {
                            crate::recipe::model::BetterSpec::Lower => Better::Lower,
                            crate::recipe::model::BetterSpec::Higher => Better::Higher,
                        },
                        params: crate::stats::VerdictParams {
                            gate_pct: limits.gate_pct.value,
                            max_drift_pct: limits.max_drift_pct.map(|l| l.value),
                            max_cv_pct: limits.max_cv_pct.value,
                            ..verdict_params(&recipe.analysis)
                        },
                    });
                }
                labels.push(label);
            }
        }
    }
    Err(BisectFailure::Series(match series {
        Some(s) => format!(
            "recipe {} has no measured series `{s}`; it has: {}",
            recipe.path.display(),
            labels.join(", ")
        ),
        None => format!(
            "recipe {} has no measured workload to bisect",
            recipe.path.display()
        ),
    })
    .into())
}

/// The builds file's one table: the tree (`dir`), its build `command`, where the `image` and
/// the `config` appear after a build.
fn tree_build(path: &Path) -> Result<BuildSpec, Error> {
    let file = BuildsFile::load(path)?;
    let refuse = |why: &str| BisectFailure::Builds {
        path: path.to_path_buf(),
        why: why.to_owned(),
    };
    let [spec] = file.kernels.as_slice() else {
        return Err(refuse(&format!(
            "a bisection's builds file has exactly one [kernels.LABEL] table (the tree, its command, image and config), not {}",
            file.kernels.len()
        ))
        .into());
    };
    if !spec.dir_given {
        return Err(refuse(&format!(
            "{}: `dir`, the git tree to bisect, is missing",
            spec.at
        ))
        .into());
    }
    if spec.command.is_none() {
        return Err(refuse(&format!(
            "{}: `command`, how a checked-out commit is built, is missing",
            spec.at
        ))
        .into());
    }
    if spec.config.is_none() {
        return Err(refuse(&format!(
            "{}: `config`, the build's .config (proven at every boot), is missing",
            spec.at
        ))
        .into());
    }
    if !spec.patches.is_empty() || spec.modules.is_some() {
        return Err(refuse(&format!(
            "{}: `patches` and `modules` are not supported by aba bisect (each commit is built as it is, into the image)",
            spec.at
        ))
        .into());
    }
    Ok(spec.clone())
}

fn sha256_of(path: &Path) -> Result<String, Error> {
    let bytes = crate::input::read_text(path, crate::input::CONFIG_LIMIT, "builds file").map_err(
        |source| BisectFailure::Io {
            path: path.to_path_buf(),
            source,
        },
    )?;
    Ok(hex::encode(Sha256::digest(bytes.as_bytes())))
}

/// The bisect directory: `--dir` continued (its journal must match) or created, or a new one
/// under `--results`.
fn open_dir(
    args: &BisectRun<'_>,
    recipe: &Recipe,
    tree: &BuildSpec,
    commits: &[RangeCommit],
    setup: &Setup,
) -> Result<PathBuf, Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BisectFailure::Io { path, source }
    };
    let start = Entry::Start {
        format: BISECT_JOURNAL_FORMAT,
        tree: tree.dir.display().to_string(),
        good: args.good.to_owned(),
        bad: args.bad.to_owned(),
        commits: commits.to_vec(),
        setup: setup.clone(),
    };
    let dir = match args.dir {
        Some(dir) if dir.join(JOURNAL).exists() => {
            let path = dir.join(JOURNAL);
            let had = journal::read(&path).map_err(BisectFailure::from)?;
            if let Some(why) = journal::differs(&had, &start) {
                return Err(BisectFailure::Mismatch {
                    journal: path,
                    why: format!(
                        "this bisection was started with other inputs ({why}); give the same ones, or another --dir"
                    ),
                }
                .into());
            }
            return Ok(dir.to_path_buf());
        }
        Some(dir) => {
            std::fs::create_dir(dir).map_err(io(dir))?;
            dir.to_path_buf()
        }
        None => {
            std::fs::create_dir_all(args.results).map_err(io(args.results))?;
            let dir = args
                .results
                .join(format!("{}-bisect-{}", recipe.name, utc_stamp()));
            std::fs::create_dir(&dir).map_err(io(&dir))?;
            dir
        }
    };
    journal::append(&dir.join(JOURNAL), &start).map_err(BisectFailure::from)?;
    Ok(dir)
}

/// Why a commit has no build.
enum Unbuilt {
    /// Its build failed (a skip, unless it is an endpoint).
    Fails(String),
    /// Something else: the checkout, the bisect directory.
    Error(Error),
}

/// Checks out `commit` in the tree, runs the build command, stores the image and the
/// configuration under `builds/HASH/`; the journal's `built` entry.
fn build_commit(
    tree: &BuildSpec,
    dir: &Path,
    index: usize,
    commit: &RangeCommit,
    voice: &Voice,
) -> Result<Entry, Unbuilt> {
    let fail = |e: Error| Unbuilt::Error(e);
    let lock = dir.join("builds").join(BUILD_LOCK);
    wait_for_orphaned_build(&lock, &tree.dir, voice).map_err(fail)?;
    range::checkout(&tree.dir, &commit.hash).map_err(|e| fail(BisectFailure::from(e).into()))?;
    let folder = dir.join("builds").join(&commit.hash);
    std::fs::create_dir_all(&folder).map_err(|source| {
        fail(
            BisectFailure::Io {
                path: folder.clone(),
                source,
            }
            .into(),
        )
    })?;
    voice.say(&format!(
        "bisect: building {} {}",
        short(&commit.hash),
        commit.subject
    ));
    // The build holds the lock on an inherited descriptor: a build a killed aba left running
    // (it runs in its own process group, so it outlives aba) keeps it until its last process
    // ends, and the next build waits for it before the tree is checked out again.
    let command = format!(
        "exec 9>>{}; flock 9; {}",
        crate::target::quote::sh_quote(&lock.display().to_string()),
        tree.command.as_deref().unwrap_or_default()
    );
    let spec = BuildSpec {
        label: commit_label(&commit.hash),
        command: Some(command),
        ..tree.clone()
    };
    let say = |text: &str| voice.say(text);
    let built = prepare::make(
        &spec,
        &Steps::Run {
            logs: &folder,
            say: &say,
            log_name: &|label: &str| format!("builds/{}/{label}.log", commit.hash),
        },
    )
    .map_err(|e| Unbuilt::Fails(crate::causes::one_line(&e)))?;
    for (from, name) in [(Some(&spec.image), IMAGE), (spec.config.as_ref(), CONFIG)] {
        let Some(from) = from else { continue };
        let to = dir.join(stored(&commit.hash, name));
        std::fs::copy(from, &to)
            .map_err(|source| fail(BisectFailure::Io { path: to, source }.into()))?;
    }
    Ok(Entry::Built {
        commit: index,
        hash: commit.hash.clone(),
        image: stored(&commit.hash, IMAGE),
        config: stored(&commit.hash, CONFIG),
        version: Some(built.version.to_string()),
    })
}

/// The lock file of the builds, in `builds/`.
const BUILD_LOCK: &str = ".lock";

/// Waits until no build of an earlier run holds `lock` (a killed aba's build goes on in its
/// own process group), saying so when it must wait; the lock is not kept: the build command
/// takes it again, on a descriptor its processes inherit.
fn wait_for_orphaned_build(lock: &Path, tree: &Path, voice: &Voice) -> Result<(), Error> {
    use std::os::fd::AsRawFd as _;
    let io = |source| BisectFailure::Io {
        path: lock.to_path_buf(),
        source,
    };
    if let Some(parent) = lock.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(lock)
        .map_err(io)?;
    let fd = file.as_raw_fd();
    // SAFETY: flock(2) on a descriptor this function owns; it is closed (unlocked) on return.
    if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    voice.say(&format!(
        "bisect: a build that an earlier aba left running in {} still holds {}; waiting for it to end",
        tree.display(),
        lock.display()
    ));
    // SAFETY: as above, blocking.
    if unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
        return Err(io(std::io::Error::last_os_error()).into());
    }
    Ok(())
}

/// One step: its campaign created or resumed, its decision read back.
struct StepRun<'a> {
    args: &'a BisectRun<'a>,
    recipe: &'a Recipe,
    followed: &'a Followed,
    dir: &'a Path,
    commits: &'a [RangeCommit],
    commit: usize,
    confirm: bool,
    /// 1-based: the record this step will be.
    number: usize,
}

enum StepEnd {
    Decided(Record),
    Skipped(Record),
    Stopped(CampaignEnd),
}

impl StepRun<'_> {
    fn label(&self) -> String {
        commit_label(&self.commits[self.commit].hash)
    }

    fn results(&self) -> PathBuf {
        self.dir
            .join("steps")
            .join(format!("{:02}-{}", self.number, self.label()))
    }

    fn run(&self, bisection: &Bisection, voice: &Voice) -> Result<StepEnd, Error> {
        let results = self.results();
        let label = self.label();
        let c = &self.commits[self.commit];
        voice.say(&format!(
            "bisect: step {}: {} {} ({}), {}/{}/{} judged at {:.2} %, in {}",
            self.number,
            if self.confirm {
                "the endpoints: bad"
            } else {
                "commit"
            },
            short(&c.hash),
            c.subject,
            GOOD,
            label,
            GOOD,
            if self.confirm {
                self.followed.params.gate_pct
            } else {
                bisection.step_gate()
            },
            results.display()
        ));
        let mut options = self.args.options.clone();
        options.look_rule = Some(look_rule(
            bisection.clone(),
            self.followed.clone(),
            label.clone(),
            results.clone(),
        ));
        if results.join("journal.jsonl").is_file() {
            let end = resume_one(
                &results,
                self.args.targets_file,
                None,
                self.args.sources,
                options,
                voice,
            )?;
            return self.ended(end, bisection);
        }
        if results.exists() {
            // Killed while the step's directory was being made: nothing ran in it.
            std::fs::remove_dir_all(&results).map_err(|source| BisectFailure::Io {
                path: results.clone(),
                source,
            })?;
        }
        std::fs::create_dir_all(self.dir.join("steps")).map_err(|source| BisectFailure::Io {
            path: self.dir.join("steps"),
            source,
        })?;
        let mut recipe = self.step_recipe(bisection)?;
        let builds = self.step_builds(&label)?;
        let bindings = Bindings {
            kernels: Vec::new(),
            params: Vec::new(),
            builds: Some(builds),
            no_build: true,
        };
        let host = HostBuilds::prepare(&bindings, &recipe, &[self.args.target])?
            .expect("invariant: the step has a builds file");
        let mut kernels = crate::kernel::binding::bind(&mut recipe, &[])?;
        host.bind(&mut recipe, &mut kernels, self.args.target)?;
        let launch = Launch {
            results: Destination::At(&results),
            yes: self.args.yes,
            no_profile: true,
        };
        let end = start_new(
            &recipe,
            self.args.recipe,
            self.args.target,
            launch,
            options,
            |_| {
                Ok(params_record(&recipe)
                    .say(voice)
                    .into_iter()
                    .chain(kernels_record(&kernels).say(voice))
                    .collect())
            },
        );
        match end {
            Ok(end) => self.ended(end, bisection),
            Err(e) if results.join("journal.jsonl").is_file() => {
                voice.say(&format!("bisect: step {}: {}", self.number, e.render()));
                self.ended(CampaignEnd::of_error(&e), bisection)
            }
            Err(e) => Err(e),
        }
    }

    fn step_recipe(&self, bisection: &Bisection) -> Result<Recipe, Error> {
        let c = &self.commits[self.commit];
        let what = format!(
            "step {}, {} {} ({}) against good {}",
            self.number,
            if self.confirm {
                "the endpoints' confirmation: bad"
            } else {
                "commit"
            },
            c.hash,
            c.subject,
            self.commits[0].hash
        );
        let mut allowed = self.args.sources.allow_files_outside.clone();
        allowed.extend(self.args.inventory.allow_files_outside.iter().cloned());
        let b = &bisection.input().budget;
        step_recipe(
            self.recipe,
            &StepSpec {
                label: &self.label(),
                what: &what,
                gate_pct: if self.confirm {
                    self.followed.params.gate_pct
                } else {
                    bisection.step_gate()
                },
                max_points: if self.confirm {
                    b.confirm_max_points
                } else {
                    b.max_points
                },
            },
            &allowed,
        )
        .map_err(|e| {
            BisectFailure::StepRecipe {
                why: crate::causes::one_line(&e),
            }
            .into()
        })
    }

    /// A builds file for the step's two stored builds (no command: they are built).
    fn step_builds(&self, label: &str) -> Result<PathBuf, Error> {
        let path = self
            .dir
            .join("steps")
            .join(format!("{:02}-{label}.builds.toml", self.number));
        let table = |kernel: &str, hash: &str| {
            format!(
                "[kernels.{kernel}]\nimage = \"../{}\"\nconfig = \"../{}\"\n",
                stored(hash, IMAGE),
                stored(hash, CONFIG)
            )
        };
        let text = format!(
            "# The two builds of step {} of aba bisect (stored by hash under builds/).\nversion = 1\n{}{}",
            self.number,
            table(GOOD, &self.commits[0].hash),
            table(label, &self.commits[self.commit].hash)
        );
        crate::results::atomic::write_atomic(&path, text.as_bytes()).map_err(|source| {
            BisectFailure::Io {
                path: path.clone(),
                source,
            }
        })?;
        Ok(path)
    }

    /// What the step's campaign ended with, as a record: the core's decision on its last
    /// look, a skip when the commit's kernel never completed a point, or a stop.
    fn ended(&self, end: CampaignEnd, bisection: &Bisection) -> Result<StepEnd, Error> {
        let results = self.results();
        let label = self.label();
        match end {
            CampaignEnd::Finished | CampaignEnd::NotReproduced => {}
            CampaignEnd::Interrupted => return Ok(StepEnd::Stopped(end)),
            CampaignEnd::Stopped | CampaignEnd::Failed => {
                if let Some(why) = never_booted(&results, &label) {
                    if self.confirm {
                        return Err(BisectFailure::Step {
                            dir: results,
                            why: format!("the bad commit's kernel completed no point: {why}"),
                        }
                        .into());
                    }
                    return Ok(StepEnd::Skipped(Record::Skip {
                        commit: self.commit,
                        why: format!("its kernel completed no point: {why}"),
                    }));
                }
                return Ok(StepEnd::Stopped(end));
            }
        }
        let analysis = analyze(&ResultsDir::open(&results)).map_err(Error::Analysis)?;
        match judge(bisection, self.followed, &label, &analysis, &results)? {
            Judged::Decided(result) => Ok(StepEnd::Decided(Record::Step(result))),
            Judged::Extend { to_points } => Err(BisectFailure::Step {
                dir: results,
                why: format!(
                    "its campaign finished, but the step is undecided and would extend to {to_points} points"
                ),
            }
            .into()),
        }
    }
}

/// The reason a point of `label` failed, when no point of `label` is done.
fn never_booted(results: &Path, label: &str) -> Option<String> {
    let analysis = analyze(&ResultsDir::open(results)).ok()?;
    if analysis
        .points
        .iter()
        .any(|p| p.kernel == label && p.done_attempt.is_some())
    {
        return None;
    }
    let journal = Journal::read(&results.join("journal.jsonl")).ok()?;
    journal.events.iter().rev().find_map(|e| match e {
        Event::PointFailed { kernel, reason, .. } if kernel == label => Some(reason.clone()),
        _ => None,
    })
}

/// The core's judgement of the followed series' points in `analysis`.
fn judge(
    bisection: &Bisection,
    followed: &Followed,
    label: &str,
    analysis: &Analysis,
    dir: &Path,
) -> Result<Judged, Error> {
    let points: Vec<SeriesPoint> = analysis
        .series
        .iter()
        .find(|s| {
            s.workload == followed.workload
                && s.case == followed.case
                && s.metric == followed.metric
        })
        .map(|s| s.points.clone())
        .unwrap_or_default();
    bisection
        .judge(&points, GOOD, label, &analysis.environment)
        .map_err(|e| {
            BisectFailure::Step {
                dir: dir.to_path_buf(),
                why: e.to_string(),
            }
            .into()
        })
}

/// The engine's stopping rule for a step: the core decides each look.
fn look_rule(bisection: Bisection, followed: Followed, label: String, dir: PathBuf) -> LookRule {
    LookRule(Arc::new(move |analysis, _look| {
        match judge(&bisection, &followed, &label, analysis, &dir).map_err(|e| e.to_string())? {
            Judged::Extend { to_points } => Ok((
                Decision::Extend,
                format!(
                    "aba bisect: neither like good nor like bad yet; look again at {to_points} points"
                ),
            )),
            Judged::Decided(result) => {
                let decision = match result.verdict {
                    StepVerdict::Unstable => Decision::Unstable,
                    StepVerdict::Undecided => Decision::Budget,
                    _ => Decision::Decided,
                };
                Ok((
                    decision,
                    format!(
                        "aba bisect: {} ({}, {})",
                        report::verdict_words(result.verdict),
                        result.label,
                        result.change_pct.map_or_else(
                            || "not compared".to_owned(),
                            |c| format!("{c:+.2} % against good")
                        )
                    ),
                ))
            }
        }
    }))
}
