//! The top-level error: one variant per way an `aba` command ends unsuccessfully, its exit
//! code ([`Error::exit_code`]) and the hint that fixes it ([`Error::hint`]), both decided
//! here from the variant and nowhere else, and how it is shown: `error: …`, the chain of
//! causes, and a hint naming the flag or key that fixes it.

use std::{
    error::Error as StdError,
    fmt::{self, Write as _},
    path::PathBuf,
};

use thiserror::Error;

use crate::{
    analysis::AnalysisError,
    campaign::{
        amend::AmendError,
        calibrate::CalibrateError,
        engine::{EngineError, Failure, Stop},
        lock::{Liveness, LockError},
        plan::PlanError,
        restore::RestoreError,
        tuning::TuneError,
    },
    inventory::InventoryError,
    profile::{ProfileError, build::BuildError},
    recipe::RecipeError,
    report::ReportError,
    reproduction::ReproductionError,
    results::{journal::JournalError, verify::VerifyError},
    scaffold::ScaffoldError,
    target::transport::TransportError,
};

/// Exit codes, documented in the README; scripts around overnight campaigns rely on them.
/// A multi-target run exits with the worst of its targets' codes (`session::multi`: 130, then 1,
/// 3, 4, 0).
pub mod exit_code {
    /// Everything worked (for `run`/`resume`: the campaign finished).
    pub const OK: u8 = 0;
    /// Bad input or an error before or outside a campaign.
    pub const ERROR: u8 = 1;
    /// Command-line usage error (clap's convention).
    pub const USAGE: u8 = 2;
    /// The campaign stopped on a failure (a kernel failed, the target vanished, the disk
    /// filled). The results directory is resumable.
    pub const CAMPAIGN_STOPPED: u8 = 3;
    /// A published result was not reproduced: an `[[expect]]` missed its tolerance, or a
    /// comparison with a reference (`aba compare`, a recipe's `[expect] reference`) is
    /// NOT_REPRODUCED. The reports are still written.
    pub const NOT_REPRODUCED: u8 = 4;
    /// `aba verify`: the journal and `samples.csv` disagree (a sample is lost, mislabelled or
    /// edited); `aba report` refuses such a directory with the same code.
    pub const VERIFY_FAILED: u8 = 5;
    /// Interrupted by Ctrl-C / SIGTERM; the results directory is resumable.
    pub const INTERRUPTED: u8 = 130;
}

/// How one campaign ended, read back from its exit code: what a multi-target run says of each
/// target, ordered from the best to the worst (interrupted is the worst: nothing after it
/// ran). The only mapping from exit codes back to outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CampaignEnd {
    /// [`exit_code::OK`].
    Finished,
    /// [`exit_code::NOT_REPRODUCED`]: finished, a published result not reproduced.
    NotReproduced,
    /// [`exit_code::CAMPAIGN_STOPPED`]: resumable.
    Stopped,
    /// Any other code: an error.
    Failed,
    /// [`exit_code::INTERRUPTED`]: resumable.
    Interrupted,
}

impl CampaignEnd {
    /// The outcome an exit code says.
    #[must_use]
    pub fn of(code: u8) -> CampaignEnd {
        match code {
            exit_code::OK => CampaignEnd::Finished,
            exit_code::NOT_REPRODUCED => CampaignEnd::NotReproduced,
            exit_code::CAMPAIGN_STOPPED => CampaignEnd::Stopped,
            exit_code::INTERRUPTED => CampaignEnd::Interrupted,
            _ => CampaignEnd::Failed,
        }
    }

    /// The exit code that says it: the one mapping from an outcome to an exit code, so a
    /// campaign's functions return the outcome and the command line asks here for its code.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            CampaignEnd::Finished => exit_code::OK,
            CampaignEnd::NotReproduced => exit_code::NOT_REPRODUCED,
            CampaignEnd::Stopped => exit_code::CAMPAIGN_STOPPED,
            CampaignEnd::Failed => exit_code::ERROR,
            CampaignEnd::Interrupted => exit_code::INTERRUPTED,
        }
    }

    /// How a campaign that ended with `error` ended (stopped and interrupted are resumable;
    /// anything else failed).
    #[must_use]
    pub fn of_error(error: &Error) -> CampaignEnd {
        CampaignEnd::of(error.exit_code())
    }

    /// Finished, or not reproduced when `reproduced` is false: a finished campaign's outcome
    /// from its `[[expect]]`s or its comparison with a reference.
    #[must_use]
    pub fn finished(reproduced: bool) -> CampaignEnd {
        if reproduced {
            CampaignEnd::Finished
        } else {
            CampaignEnd::NotReproduced
        }
    }

    /// How a multi-target run's last line says it (`targets: a finished, b stopped`).
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            CampaignEnd::Finished => "finished",
            CampaignEnd::NotReproduced => "finished, not reproduced",
            CampaignEnd::Stopped => "stopped",
            CampaignEnd::Interrupted => "interrupted",
            CampaignEnd::Failed => "failed",
        }
    }
}

/// The worst of `codes` (by [`CampaignEnd`]: interrupted, then an error, then stopped, then
/// not reproduced, then success); success when there are none.
#[must_use]
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    codes
        .into_iter()
        .max_by_key(|c| CampaignEnd::of(*c))
        .unwrap_or(exit_code::OK)
}

/// An error shown inline after what was being done (`invalid recipe: …`), its own causes
/// following as the chain: the error's message is printed once, in the first line.
#[derive(Debug)]
pub struct Inline<E> {
    /// What was being done.
    pub doing: String,
    /// The error.
    pub error: E,
}

impl<E: fmt::Display> fmt::Display for Inline<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.doing, self.error)
    }
}

impl<E: StdError> StdError for Inline<E> {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.error.source()
    }
}

fn inline<E>(doing: impl Into<String>, error: E) -> Inline<E> {
    Inline {
        doing: doing.into(),
        error,
    }
}

/// Anything that ends an `aba` command unsuccessfully.
#[derive(Debug, Error)]
pub enum Error {
    /// The recipe is invalid or unreadable.
    #[error(transparent)]
    Recipe(Inline<RecipeError>),
    /// The inventory is invalid or lacks the target.
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    /// A kernel binding names a label the recipe does not have.
    #[error(transparent)]
    Binding(#[from] crate::kernel::binding::BindingError),
    /// A parameter binding names a parameter the recipe does not declare.
    #[error(transparent)]
    ParamBinding(#[from] crate::recipe::params::ParamBindingError),
    /// The builds file is invalid or unreadable.
    #[error(transparent)]
    Builds(#[from] crate::build::file::BuildsError),
    /// A kernel built on this host cannot be used (its build failed, a file is missing).
    #[error(transparent)]
    Build(#[from] crate::build::prepare::BuildError),
    /// What aba installed on a target could not be removed.
    #[error("cannot remove what the campaign installed on target `{target}`")]
    Clean {
        /// The target.
        target: String,
        /// Why.
        #[source]
        source: crate::build::install::InstallError,
    },
    /// aba's one-shot boot-loader entries on a target could not be removed.
    #[error("cannot remove aba's one-shot boot-loader entries on target `{target}`")]
    CleanBootLoader {
        /// The target.
        target: String,
        /// Why.
        #[source]
        source: Box<crate::kernel::switch::SwitchError>,
    },
    /// The recipe cannot run on the target.
    #[error("cannot plan this recipe: {0}")]
    Plan(PlanError),
    /// The plan is estimated at more than a day, or makes more than 10^5 runs, and `--yes`
    /// was not given.
    #[error("{reason}")]
    TooLong {
        /// Why, as [`crate::campaign::plan::Summary::confirmation_reason`] says it.
        reason: String,
        /// The recipe.
        recipe: PathBuf,
    },
    /// The target cannot be used (its SSH settings do not resolve).
    #[error("cannot use target `{target}`")]
    Target {
        /// The target.
        target: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// The target cannot be reached.
    #[error("cannot connect to target `{target}`")]
    Connect {
        /// The target.
        target: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// The target's lock could not be taken or released.
    #[error(transparent)]
    Lock(Inline<LockError>),
    /// A results directory could not be created.
    #[error("cannot create a results directory under {}", parent.display())]
    ResultsDir {
        /// Where.
        parent: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A directory that is not a campaign's results.
    #[error("{} is not a {}results directory", dir.display(), if *resumable { "resumable " } else { "" })]
    NotResultsDir {
        /// The directory.
        dir: PathBuf,
        /// Whether a campaign to resume was asked for.
        resumable: bool,
        /// Why its journal is not one.
        #[source]
        source: JournalError,
    },
    /// Two `--target`s of one run are one machine (the lock's key: address and port).
    #[error(
        "targets `{first}` and `{second}` are one machine ({machine}): one campaign per machine"
    )]
    SameMachine {
        /// The first name.
        first: String,
        /// The second name for the same machine.
        second: String,
        /// The machine, as the lock knows it.
        machine: String,
    },
    /// Two targets' names give one subdirectory name.
    #[error(
        "targets {targets} would share a results subdirectory (their names differ only in characters a directory name cannot hold)"
    )]
    TargetDirs {
        /// The targets, listed.
        targets: String,
    },
    /// A multi-target manifest could not be read or written.
    #[error(transparent)]
    Manifest(#[from] crate::results::manifest::ManifestError),
    /// A batch plan could not be read or has problems.
    #[error(transparent)]
    BatchPlan(#[from] crate::batch::plan::PlanError),
    /// A batch directory's journal could not be read or written.
    #[error(transparent)]
    BatchJournal(#[from] crate::batch::journal::BatchJournalError),
    /// A batch directory's journal names what its plan copy does not, or a path outside it.
    #[error(transparent)]
    BatchConfine(#[from] crate::batch::confine::ConfineError),
    /// A directory without a journal.
    #[error("{} is not a results directory: it has no journal.jsonl", dir.display())]
    NoJournal {
        /// The directory.
        dir: PathBuf,
    },
    /// A results directory's samples.csv cannot be read.
    #[error("cannot read the samples of {}", dir.display())]
    Samples {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: crate::results::samples::SamplesError,
    },
    /// `aba report` was given directories it cannot report together as asked.
    #[error("aba report: {why}")]
    ReportArgs {
        /// What is wrong with the directories given.
        why: String,
        /// How to say it instead.
        hint: String,
    },
    /// A journal that does not start with a campaign record.
    #[error("the journal has no campaign header")]
    NoHeader,
    /// The engine could not start.
    #[error("cannot run the campaign")]
    Engine(#[source] EngineError),
    /// The campaign stopped before its end; the directory is resumable.
    #[error("the campaign stopped: {stop}")]
    CampaignStopped {
        /// The results directory.
        dir: PathBuf,
        /// Why, typed; its text (with every cause) is what the journal recorded.
        stop: Box<Stop>,
    },
    /// Ctrl-C or SIGTERM; the directory is resumable.
    #[error("interrupted")]
    Interrupted {
        /// The results directory.
        dir: PathBuf,
    },
    /// `aba resume --amend` refused the amended recipe or could not record it.
    #[error("cannot amend the campaign with {}", recipe.display())]
    Amend {
        /// The amended recipe.
        recipe: PathBuf,
        /// Why.
        #[source]
        source: AmendFailure,
    },
    /// `aba restore` could not put the settings back.
    #[error("cannot restore the settings on target `{target}`")]
    Restore {
        /// The target.
        target: String,
        /// Why.
        #[source]
        source: RestoreError,
    },
    /// `aba verify` could not make its check.
    #[error("cannot verify {}", dir.display())]
    Verify {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: VerifyError,
    },
    /// `aba report`: the journal and `samples.csv` disagree (a value edited, a row added or
    /// removed), so no figure computed from the file would be the measured one.
    #[error("aba report refuses {}: its samples.csv does not match its journal ({count} difference(s)):\n{differences}", dir.display())]
    SamplesDisagree {
        /// The directory.
        dir: PathBuf,
        /// How many differences.
        count: usize,
        /// The first of them, one a line.
        differences: String,
    },
    /// `aba preflight` found problems.
    #[error("preflight found {problems} problem(s) on target `{target}`")]
    Preflight {
        /// How many checks failed.
        problems: usize,
        /// The target.
        target: String,
    },
    /// A local directory for preflight could not be made.
    #[error("cannot create a private directory for preflight")]
    PrivateDir(#[source] std::io::Error),
    /// The analysis could not be made.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// The reports could not be written.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A new campaign and a reference could not be compared.
    #[error(transparent)]
    Compare(#[from] ReproductionError),
    /// A noise profile of the target is unreadable or invalid (tampered), or could not be
    /// written.
    #[error(transparent)]
    Profile(ProfileError),
    /// The recipe's calibration could not be made.
    #[error(transparent)]
    Calibrate(CalibrateError),
    /// A finished calibration gives no noise profile.
    #[error("the calibration in {} gives no noise profile", dir.display())]
    Calibration {
        /// The results directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: BuildError,
    },
    /// `aba bisect` could not start or go on.
    #[error(transparent)]
    Bisect(#[from] crate::session::bisect::failure::BisectFailure),
    /// `aba new` wrote nothing (a bad name, an existing file) or could not write a file.
    #[error(transparent)]
    New(#[from] ScaffoldError),
    /// Generated output (a man page, a schema) could not be written.
    #[error("cannot write {what}")]
    Output {
        /// What was being written.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Why `aba resume --amend` did not amend.
#[derive(Debug, Error)]
pub enum AmendFailure {
    /// The change is not one an amendment may make.
    #[error(transparent)]
    Refused(#[from] AmendError),
    /// The results directory's recipe copy could not be replaced.
    #[error("cannot replace the recipe copy in {}", dir.display())]
    Copy {
        /// The results directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The amendment could not be journaled.
    #[error("cannot journal the amendment")]
    Journal(#[source] JournalError),
}

impl From<RecipeError> for Error {
    fn from(e: RecipeError) -> Self {
        match e {
            // A tester's value for an undeclared parameter is the tester's mistake, not the
            // recipe's: said and exited on as before the loader bound parameters itself.
            RecipeError::Binding(e) => Error::ParamBinding(*e),
            e => Error::Recipe(inline("invalid recipe", e)),
        }
    }
}

impl From<PlanError> for Error {
    fn from(e: PlanError) -> Self {
        Error::Plan(e)
    }
}

impl Error {
    /// The target's lock could not be taken (or released) while `doing` something.
    pub fn lock(doing: impl Into<String>, e: LockError) -> Self {
        Error::Lock(inline(doing, e))
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::CampaignStopped { .. } => exit_code::CAMPAIGN_STOPPED,
            Error::SamplesDisagree { .. } => exit_code::VERIFY_FAILED,
            Error::Interrupted { .. } => exit_code::INTERRUPTED,
            Error::Recipe(_)
            | Error::Inventory(_)
            | Error::Binding(_)
            | Error::ParamBinding(_)
            | Error::Builds(_)
            | Error::Build(_)
            | Error::Clean { .. }
            | Error::CleanBootLoader { .. }
            | Error::Plan(_)
            | Error::TooLong { .. }
            | Error::Target { .. }
            | Error::Connect { .. }
            | Error::Lock(_)
            | Error::ResultsDir { .. }
            | Error::NotResultsDir { .. }
            | Error::SameMachine { .. }
            | Error::TargetDirs { .. }
            | Error::Manifest(_)
            | Error::BatchPlan(_)
            | Error::BatchJournal(_)
            | Error::BatchConfine(_)
            | Error::NoJournal { .. }
            | Error::Samples { .. }
            | Error::NoHeader
            | Error::ReportArgs { .. }
            | Error::Engine(_)
            | Error::Amend { .. }
            | Error::Restore { .. }
            | Error::Verify { .. }
            | Error::Preflight { .. }
            | Error::PrivateDir(_)
            | Error::Analysis(_)
            | Error::Report(_)
            | Error::Compare(_)
            | Error::Profile(_)
            | Error::Calibrate(_)
            | Error::Calibration { .. }
            | Error::Bisect(_)
            | Error::New(_)
            | Error::Output { .. } => exit_code::ERROR,
        }
    }

    /// How to fix it: the flag, key or command that does.
    pub fn hint(&self) -> Option<String> {
        const RESULTS_DIR: &str =
            "pass the directory `aba run` printed, e.g. results/<name>-<stamp>";
        match self {
            Error::Inventory(InventoryError::UnknownTarget {
                known, suggestion, ..
            }) => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`? known targets: {}", known.join(", ")),
                None => format!(
                    "known targets: {}; define others in targets.toml or pass --targets FILE",
                    known.join(", ")
                ),
            }),
            Error::ParamBinding(_) => Some(
                "bind only the names of the recipe's [params] (`aba check RECIPE` lists them)"
                    .to_owned(),
            ),
            Error::Build(crate::build::prepare::BuildError::Step(_)) => Some(
                "fix the build (its log says why) and run the command again; `aba build RECIPE --builds FILE` runs only the builds".to_owned(),
            ),
            Error::Build(crate::build::prepare::BuildError::UnknownLabel { .. }) => Some(
                "name only the recipe's kernel labels in the builds file (`aba check RECIPE` lists them)".to_owned(),
            ),
            Error::Binding(_) => Some(
                "bind only the labels of the recipe's [kernels.LABEL] tables (`aba check RECIPE` lists them)".to_owned(),
            ),
            Error::Plan(_) => Some(
                "run it on a target that switches kernels (see targets.toml), or give every kernel the same release".to_owned(),
            ),
            Error::TooLong { recipe, .. } => Some(format!(
                "`aba check {}` shows where the time goes; pass --yes to start it anyway",
                recipe.display()
            )),
            Error::Lock(Inline { error, .. }) => lock_hint(error),
            Error::NotResultsDir { dir, .. } | Error::NoJournal { dir }
                if crate::results::manifest::Manifest::is_parent(dir) =>
            {
                Some(parent_hint(dir))
            }
            Error::NotResultsDir { dir, .. } | Error::NoJournal { dir }
                if crate::batch::journal::BatchJournal::is_batch(dir) =>
            {
                Some(format!(
                    "{0} is a batch directory: `aba batch resume {0}` continues it, `aba batch \
                     status {0}` says where it stands; each campaign's directory is {1}",
                    dir.display(),
                    dir.join("NN-RECIPE").join("TARGET").display()
                ))
            }
            Error::NotResultsDir { .. } | Error::NoJournal { .. } => Some(RESULTS_DIR.to_owned()),
            Error::SameMachine { .. } => Some(
                "the lock is keyed by address and port, so two inventory names for one machine \
                 collide: name each machine once"
                    .to_owned(),
            ),
            Error::TargetDirs { .. } => {
                Some("rename one of them in targets.toml, or run them separately".to_owned())
            }
            Error::Engine(EngineError::TuningNotAllowed(_)) => Some(
                "pass --allow-tuning to apply them; previous values are restored at the end and on Ctrl-C".to_owned(),
            ),
            Error::Engine(EngineError::Mismatch(_)) => Some(
                "start a new campaign with `aba run`, or, if only unfinished points are affected, fix the recipe and continue with `aba resume DIR --amend RECIPE`".to_owned(),
            ),
            Error::Amend {
                source: AmendFailure::Refused(_),
                ..
            } => Some(
                "an amendment may only change what no finished point used; start a new campaign for anything else".to_owned(),
            ),
            Error::CampaignStopped { dir, stop } => Some(format!(
                "{}, then continue with `aba resume {}`; finished points are kept",
                stop.failure().and_then(failure_fix).unwrap_or("fix the cause"),
                dir.display()
            )),
            Error::Interrupted { dir } => {
                Some(format!("continue with `aba resume {}`", dir.display()))
            }
            Error::Restore { .. } => Some(
                "the values to write back are the `tuning_saved` record in journal.jsonl"
                    .to_owned(),
            ),
            Error::Profile(ProfileError::Write { .. }) => Some(
                "the target's profile directory is its `profiles` in targets.toml (docs/targets.md)"
                    .to_owned(),
            ),
            Error::Profile(e) => {
                let file = e
                    .path()
                    .map_or_else(|| "the file".to_owned(), |p| p.display().to_string());
                let why = match e {
                    ProfileError::Value { field, .. } if field == "checksum" => {
                        "a noise profile's values are covered by its checksum: "
                    }
                    _ => "a noise profile is written by aba, not by hand: ",
                };
                Some(format!(
                    "{why}delete {file} or make it again with `aba calibrate RECIPE --target \
                     TARGET`; `--no-profile` runs without any"
                ))
            }
            Error::Calibration { dir, .. } => Some(format!(
                "the campaign's own report is in {}; fix the cause and calibrate again",
                dir.display()
            )),
            Error::New(ScaffoldError::InvalidName { .. }) => Some(
                "NAME becomes NAME.toml in the current directory and the recipe's `name`, e.g. `aba new sched-fix`".to_owned(),
            ),
            Error::New(ScaffoldError::Exists { .. }) => Some(
                "choose another NAME, or move the existing file away first".to_owned(),
            ),
            Error::Analysis(e) => analysis_hint(e),
            Error::Report(e) => report_hint(e),
            Error::SamplesDisagree { dir, .. } => Some(format!(
                "`aba verify {}` lists every difference; the journal records the values as measured",
                dir.display()
            )),
            Error::Compare(e) => compare_hint(e),
            Error::ReportArgs { hint, .. } => Some(hint.clone()),
            Error::Recipe(_)
            | Error::Builds(_)
            | Error::Build(_)
            | Error::Clean { .. }
            | Error::CleanBootLoader { .. }
            | Error::Amend { .. }
            | Error::Inventory(_)
            | Error::Target { .. }
            | Error::Connect { .. }
            | Error::ResultsDir { .. }
            | Error::Samples { .. }
            | Error::NoHeader
            | Error::Engine(_)
            | Error::Verify { .. }
            | Error::Preflight { .. }
            | Error::PrivateDir(_)
            | Error::Calibrate(_)
            | Error::Bisect(_)
            | Error::New(ScaffoldError::Write { .. })
            | Error::Manifest(_)
            | Error::BatchPlan(_)
            | Error::BatchJournal(_)
            | Error::BatchConfine(_)
            | Error::Output { .. } => None,
        }
    }

    /// Renders the error, its causes and the hint, for stderr.
    pub fn render(&self) -> String {
        let mut out = format!("error: {self}");
        for (i, cause) in crate::causes::causes(self).enumerate() {
            if i == 0 {
                out.push_str("\ncaused by:");
            }
            let _ = write!(out, "\n  - {cause}");
        }
        if let Some(hint) = self.hint() {
            let _ = write!(out, "\n(hint: {hint})");
        }
        out
    }
}

/// What to pass instead of a multi-target parent to a command that reads one campaign.
fn parent_hint(dir: &std::path::Path) -> String {
    let example = crate::results::manifest::Manifest::read(dir)
        .ok()
        .and_then(|m| m.targets.first().map(|t| dir.join(&t.dir)))
        .unwrap_or_else(|| dir.join("<target>"));
    format!(
        "it holds one campaign directory per target (targets.json): pass one, e.g. {}",
        example.display()
    )
}

/// How to get past a lock.
fn lock_hint(error: &LockError) -> Option<String> {
    match error {
        LockError::Busy {
            target,
            holder,
            live,
        } => Some(match (live, holder.stoppable_pid()) {
            (Liveness::Running, Some(pid)) => format!(
                "wait for it with `--wait`, or stop it (kill {pid}) and resume it later with `aba resume {}`",
                holder.campaign
            ),
            (Liveness::Running, None) => format!(
                "wait for it with `--wait`; its record names no process aba would tell you to stop (pid {}), so find the aba that runs `{}` yourself before you stop anything",
                holder.pid, holder.campaign
            ),
            (Liveness::Gone | Liveness::Unknown, _) => format!(
                "if that campaign should go on, resume it with `aba resume {}`; if it is abandoned and nothing runs on the target, release it with `aba unlock --target {target}`",
                holder.campaign
            ),
        }),
        LockError::Starting { .. } => Some(
            "wait for it with `--wait`, or try again in a moment: once it has started, its record names the campaign and its process".to_owned(),
        ),
        LockError::Marker { .. } => Some(
            "the marker lives at the inventory's `lock_file` (default /var/lib/aba/lock); point it at a writable place on the target".to_owned(),
        ),
        LockError::Reserve { .. } => Some(
            "the inventory's `reserve` command for this target failed (its output is above); nothing on the target was changed".to_owned(),
        ),
        LockError::Host { .. } | LockError::ConnectionLost { .. } | LockError::Interrupted(_) => None,
    }
}

/// What fixes the failure that stopped a campaign, when aba knows it better than "the cause".
fn failure_fix(failure: &Failure) -> Option<&str> {
    match failure {
        Failure::Tuning(TuneError::Missing { hint, .. }) => Some(hint),
        _ => None,
    }
}

/// How to fix an analysis error, naming the file or command that does (the hint of
/// [`Error::Analysis`], and of a comparison whose side could not be analysed).
pub(crate) fn analysis_hint(error: &AnalysisError) -> Option<String> {
    match error {
        AnalysisError::NotResultsDir { .. } => Some(
            "pass the directory `aba run` created (results/<name>-<time>/); it holds \
             journal.jsonl, samples.csv and recipe.toml"
                .to_owned(),
        ),
        AnalysisError::Recipe { .. } => Some(
            "the results directory keeps its own copy of the recipe; restore it from the \
             original recipe file the campaign was started with"
                .to_owned(),
        ),
        AnalysisError::PlanMismatch { .. } => Some(
            "recipe.toml in the results directory was edited after the campaign started; \
             restore the copy the campaign ran with"
                .to_owned(),
        ),
        AnalysisError::LimitsEdited { .. } => Some(
            "a verdict's limits are preregistered: restore the recipe copy the campaign \
             ran with, or rerun `aba report --accept-edited-limits DIR` to judge with the \
             edited limits; every report then says at the top which limits changed"
                .to_owned(),
        ),
        AnalysisError::Profile(_) | AnalysisError::ProfileChanged { .. } => Some(
            "profile.toml is the noise profile the campaign ran with; restore it from the \
             profile file the journal names, or judge without it: `aba report --no-profile \
             DIR`"
                .to_owned(),
        ),
        AnalysisError::Journal(_) | AnalysisError::Samples(_) => None,
    }
}

/// How to fix a report error (the hint of [`Error::Report`]).
pub(crate) fn report_hint(error: &ReportError) -> Option<String> {
    match error {
        ReportError::TemplateRead { .. } | ReportError::Template { .. } => Some(
            "fix the template, or unset ABA_TEMPLATES to use the built-in templates".to_owned(),
        ),
        ReportError::ExportDestination { .. } => Some(
            "name a folder that does not exist yet (its parent must), or an empty one".to_owned(),
        ),
        ReportError::ExportCopy { .. } => Some(
            "restore the file the campaign used at that path (its SHA-256 is in the results \
             directory's source-identity.tsv), then export again: an export publishes \
             exactly what was measured"
                .to_owned(),
        ),
        ReportError::Write { .. } | ReportError::ExportRecipe { .. } => None,
    }
}

/// `a, b and 3 more`, or `no series`.
fn series_list(items: &[String]) -> String {
    const SHOWN: usize = 6;
    match items.len() {
        0 => "no series".to_owned(),
        n if n <= SHOWN => items.join(", "),
        n => format!("{} and {} more", items[..SHOWN].join(", "), n - SHOWN),
    }
}

/// How to fix an `aba compare` error, naming the file or command that does (the hint
/// of [`Error::Compare`]).
pub(crate) fn compare_hint(error: &ReproductionError) -> Option<String> {
    match error {
        ReproductionError::NotEvidence { .. } => Some(
            "pass a directory `aba run` created (results/<name>-<time>/, with journal.jsonl, \
             samples.csv and recipe.toml), a published bundle's folder or one of its \
             <name>-points.tsv files, or, as the reference, a mapping file (*.toml) that \
             reads a published table of means or changes (docs/report.md, \"Summary \
             references\")"
                .to_owned(),
        ),
        ReproductionError::BundleAsNew { .. } => {
            Some("the order is `aba compare NEW REFERENCE`: the new campaign first".to_owned())
        }
        ReproductionError::Analysis { source, .. } => analysis_hint(source),
        ReproductionError::NothingInCommon {
            new_series,
            reference_series,
            ..
        } => Some(format!(
            "the new campaign has {}; the reference has {}; a series is matched by workload, \
             case and metric, or by case and metric when that is unique on both sides (name \
             one <name>-points.tsv of a bundle to pick its experiment)",
            series_list(new_series),
            series_list(reference_series)
        )),
        ReproductionError::Link { .. } => Some(
            "replace the link with the file or folder it names (`cp -L`), if you trust it"
                .to_owned(),
        ),
        ReproductionError::SeveralBundles { path, folders } => Some(format!(
            "name one of them: {}",
            folders
                .iter()
                .map(|f| path.join(f).display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        ReproductionError::SummaryMapping(_) => Some(
            "a summary reference is a TOML file of [[series]], each naming the new campaign's \
             workload (case, metric), its table's `file`, and how to read it: docs/report.md, \
             \"Summary references\""
                .to_owned(),
        ),
        ReproductionError::Unreadable { .. }
        | ReproductionError::Bundle { .. }
        | ReproductionError::SummaryNotHere { .. }
        | ReproductionError::Copy { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::{Error, exit_code};
    use crate::{
        campaign::engine::{Failure, Stop},
        recipe::ident::PointLabel,
        results::journal::JournalError,
    };

    #[test]
    fn renders_chain_and_hint() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = Error::NotResultsDir {
            dir: PathBuf::from("results/x"),
            resumable: true,
            source: JournalError::Io {
                action: "read",
                path: PathBuf::from("results/x/journal.jsonl"),
                source: io,
            },
        };
        assert_eq!(
            err.render(),
            "error: results/x is not a resumable results directory\ncaused by:\n  - cannot read journal results/x/journal.jsonl\n  - no such file\n(hint: pass the directory `aba run` printed, e.g. results/<name>-<stamp>)"
        );
        assert_eq!(err.exit_code(), exit_code::ERROR);
    }

    /// A stop's reason is shown once, on the first line, with its causes; the exit code says
    /// the directory is resumable.
    #[test]
    fn a_stopped_campaign_exits_3_with_its_reason_and_how_to_resume() {
        let err = Error::CampaignStopped {
            dir: PathBuf::from("results/r-1"),
            stop: Box::new(Stop::Point {
                point: PointLabel::new("b"),
                attempt: 1,
                cause: Failure::File {
                    action: "write",
                    path: PathBuf::from("results/r-1/env/b-1.json"),
                    source: std::io::Error::from_raw_os_error(libc::ENOSPC),
                },
            }),
        };
        assert_eq!(err.exit_code(), exit_code::CAMPAIGN_STOPPED);
        let text = err.render();
        assert!(
            text.starts_with("error: the campaign stopped: point `b` attempt 1: cannot write results/r-1/env/b-1.json: No space left on device"),
            "{text}"
        );
        assert_eq!(text.matches("No space left").count(), 1, "{text}");
        assert!(text.ends_with("(hint: fix the cause, then continue with `aba resume results/r-1`; finished points are kept)"), "{text}");
        assert_eq!(
            Error::Interrupted {
                dir: PathBuf::from("d")
            }
            .exit_code(),
            exit_code::INTERRUPTED
        );
    }
}

#[cfg(test)]
mod worst_tests {
    use super::{CampaignEnd, exit_code, worst};

    /// Every outcome's code reads back as the outcome: the two mappings agree.
    #[test]
    fn an_outcome_and_its_code_map_both_ways() {
        for end in [
            CampaignEnd::Finished,
            CampaignEnd::NotReproduced,
            CampaignEnd::Stopped,
            CampaignEnd::Failed,
            CampaignEnd::Interrupted,
        ] {
            assert_eq!(CampaignEnd::of(end.code()), end);
        }
        assert_eq!(CampaignEnd::Finished.code(), exit_code::OK);
        assert_eq!(
            CampaignEnd::finished(false).code(),
            exit_code::NOT_REPRODUCED
        );
        assert_eq!(CampaignEnd::Interrupted.code(), exit_code::INTERRUPTED);
    }

    #[test]
    fn the_worst_code_wins_interrupted_first() {
        assert_eq!(worst([]), exit_code::OK);
        assert_eq!(worst([0, 4, 0]), exit_code::NOT_REPRODUCED);
        assert_eq!(worst([4, 3]), exit_code::CAMPAIGN_STOPPED);
        assert_eq!(worst([3, 1, 4]), exit_code::ERROR);
        assert_eq!(worst([1, 130, 3]), exit_code::INTERRUPTED);
    }
}
