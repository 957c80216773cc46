//! The command line: clap definitions, turned into typed requests, dispatched to one module per
//! subcommand; a module imports from the library and from this one, never from another
//! command's. Only this layer prints, besides a running campaign's progress, which speaks
//! through its [`Voice`](crate::session::Voice) (`aba::session`); everything else below
//! returns values or emits events.

mod batch;
mod bisect;
mod builds;
mod calibrate;
mod check;
mod compare;
mod completions;
mod export;
mod man;
mod new;
mod preflight;
mod report;
mod restore;
mod run;
mod schema;
pub(crate) mod status;
mod unlock;
mod verify;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{
    analysis::AnalyzeOptions,
    campaign::engine::RunOptions,
    error::Error,
    inventory::{Inventory, LOCAL, Target},
    kernel::binding::KernelBinding,
    recipe::{Recipe, params::ParamBinding},
    results::manifest::Manifest,
    session::{
        Bindings, Sources,
        launch::{Destination, Launch},
    },
};

/// Run Linux kernel A-B-A performance experiments and report them.
#[derive(Debug, Parser)]
#[command(name = "aba", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Target selection shared by the commands that need a machine.
#[derive(Debug, clap::Args)]
pub struct TargetArgs {
    /// Target name from the inventory; `local` (this machine, no kernel switch) is built in
    /// and is the default of `run` and `preflight`.
    #[arg(short, long, help_heading = "Target")]
    pub target: Option<String>,
    /// Target inventory file [default: $ABA_TARGETS, ./targets.toml, ~/.config/aba/targets.toml].
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub targets: Option<PathBuf>,
}

impl TargetArgs {
    /// The target inventory (none found is an empty one: `local` still exists).
    pub fn inventory(&self) -> Result<Inventory, Error> {
        Ok(Inventory::discover(self.targets.as_deref())?)
    }

    /// Resolves the target from `inventory`; `local` when none was named.
    pub fn resolve_in(&self, inventory: &Inventory) -> Result<Target, Error> {
        Ok(inventory.target(self.target.as_deref().unwrap_or(LOCAL))?)
    }

    /// Resolves the target from the inventory; `local` when none was named.
    pub fn resolve(&self) -> Result<Target, Error> {
        self.resolve_in(&self.inventory()?)
    }
}

/// Target selection of `run`: one target, or several at once.
#[derive(Debug, clap::Args)]
pub struct RunTargetArgs {
    /// Target name from the inventory; `local` (this machine, no kernel switch) is built in
    /// and is the default. Repeat it to run the recipe on several targets at once, each in
    /// its own subdirectory of one results directory (docs/multi-target.md).
    #[arg(short, long, help_heading = "Target")]
    pub target: Vec<String>,
    /// Target inventory file [default: $ABA_TARGETS, ./targets.toml, ~/.config/aba/targets.toml].
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub targets: Option<PathBuf>,
}

impl RunTargetArgs {
    /// The one target's selection, when at most one was named.
    fn single(&self) -> Option<TargetArgs> {
        match self.target.as_slice() {
            [] | [_] => Some(TargetArgs {
                target: self.target.first().cloned(),
                targets: self.targets.clone(),
            }),
            _ => None,
        }
    }
}

/// This tester's kernels for a shared recipe's labels, over the inventory's
/// `[targets.NAME.kernels]` (`aba::kernel::binding`), and this machine's values for its
/// `[params]`, over the inventory's `[targets.NAME.params]` (`aba::recipe::params`): the
/// facts a shared recipe leaves to whoever runs it.
#[derive(Debug, Default, clap::Args)]
pub struct KernelArgs {
    /// Boot RELEASE (image /boot/vmlinuz-RELEASE, initrd /boot/initrd.img-RELEASE) for the
    /// recipe's kernel LABEL, over the inventory's and the recipe's (repeatable).
    #[arg(
        long = "kernel",
        value_name = "LABEL=RELEASE",
        value_parser = KernelBinding::from_option,
        help_heading = "Recipe"
    )]
    pub bindings: Vec<KernelBinding>,
    /// Use VALUE for the recipe's parameter NAME (`{params.NAME}`), over the inventory's
    /// `[targets.NAME.params]` and the recipe's default (repeatable).
    #[arg(
        long = "param",
        value_name = "NAME=VALUE",
        value_parser = ParamBinding::from_option,
        help_heading = "Recipe"
    )]
    pub params: Vec<ParamBinding>,
    /// This tester's kernel builds on this host (a builds file, docs/recipes.md "Kernels
    /// built on this host"): each named kernel is built, installed on the target and proven
    /// by its build, not only its release.
    #[arg(long = "builds", value_name = "FILE", help_heading = "Recipe")]
    pub builds: Option<PathBuf>,
    /// With `--builds`: use the built files as they are; do not run the build commands.
    #[arg(long = "no-build", requires = "builds", help_heading = "Recipe")]
    pub no_build: bool,
}

impl KernelArgs {
    /// These options as the library takes them.
    pub fn bindings(&self) -> Bindings {
        Bindings {
            kernels: self.bindings.clone(),
            params: self.params.clone(),
            builds: self.builds.clone(),
            no_build: self.no_build,
        }
    }
}

/// Where a recipe's `[files]` may come from besides its own folder: the tester's choice, on
/// the command line or in their inventory, never the recipe's.
#[derive(Debug, Default, clap::Args)]
pub struct FilesArgs {
    /// Also let `[files]` copy from DIR (repeatable). Without it, every source must resolve,
    /// symlinks followed, inside the recipe's folder; `allow_files_outside` in targets.toml
    /// does the same for every run.
    #[arg(long, value_name = "DIR", help_heading = "Recipe")]
    pub allow_files_outside: Vec<PathBuf>,
}

impl FilesArgs {
    /// These options as the library takes them.
    pub fn sources(&self) -> Sources {
        Sources {
            allow_files_outside: self.allow_files_outside.clone(),
        }
    }

    /// Loads the recipe at `path` with the folders this tester allows and its parameters'
    /// defaults ([`Sources::load`]).
    pub fn load(&self, path: &std::path::Path, inventory: &Inventory) -> Result<Recipe, Error> {
        self.sources()
            .load(path, inventory, crate::recipe::Params::Defaults)
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a first recipe, NAME.toml, from a template whose comments say what to edit (and
    /// a target inventory stub, targets.toml, beside it when there is none); never overwrites.
    New {
        /// The recipe's name: NAME.toml in the current directory, and its `name`.
        name: String,
        /// The template: `quickstart` runs here at once (local, a null A-A-A); the others
        /// compare two kernels and need a target that switches kernels.
        #[arg(
            long,
            value_name = "TEMPLATE",
            value_enum,
            default_value = "quickstart"
        )]
        from: crate::scaffold::Template,
    },
    /// Validate a recipe without any network, print the plan, its ETA and the change it can
    /// detect on the target (from the target's noise profile).
    Check {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// This tester's kernels for the recipe's labels.
        #[command(flatten)]
        kernels: KernelArgs,
        /// Plan as if the target had no noise profile.
        #[arg(long)]
        no_profile: bool,
        /// Print the result as JSON (docs/json.md) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Check a target against a recipe without rebooting it: connection and host key, the
    /// switch method, kernel images, sysctls and tuning knobs, files and setup.
    Preflight {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// This tester's kernels for the recipe's labels.
        #[command(flatten)]
        kernels: KernelArgs,
        /// Print the result as JSON (docs/json.md) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Run a campaign: boot each point's kernel, prove it, tune, measure, write every sample
    /// as it comes, then the reports.
    Run {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: RunTargetArgs,
        /// Where and how the campaign starts.
        #[command(flatten)]
        launch: LaunchArgs,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// This tester's kernels for the recipe's labels.
        #[command(flatten)]
        kernels: KernelArgs,
        /// Campaign options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Measure a target's noise for a recipe: its baseline booted N times, every workload,
    /// case and metric as the recipe says, then write the noise profile later campaigns of
    /// the recipe on the target pool their boot variance with.
    Calibrate {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
        /// How many times the baseline is booted (ν = N − 1).
        #[arg(
            long,
            value_name = "N",
            default_value_t = crate::campaign::calibrate::DEFAULT_BOOTS,
            value_parser = clap::value_parser!(u32).range(2..=100),
            help_heading = "Campaign"
        )]
        boots: u32,
        /// Where and how the campaign starts.
        #[command(flatten)]
        launch: LaunchArgs,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// This tester's kernels for the recipe's labels.
        #[command(flatten)]
        kernels: KernelArgs,
        /// Campaign options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Continue a stopped, interrupted or killed campaign: finished points are kept, an
    /// unfinished point is redone from a fresh boot.
    Resume {
        /// The results directory.
        dir: PathBuf,
        /// Target inventory file (the target's name comes from the journal).
        #[arg(long, value_name = "FILE", help_heading = "Target")]
        targets: Option<PathBuf>,
        /// Continue with this fixed recipe instead of the campaign's copy: only what no
        /// finished point used may differ (a kernel's command line, release or image); the
        /// analysis and the sequence may not. Journaled and shown at the top of every report.
        #[arg(long, value_name = "RECIPE", help_heading = "Campaign")]
        amend: Option<PathBuf>,
        /// Where the amended recipe's `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// Campaign options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Run a night of campaigns from a plan file (docs/queue.md): each target's campaigns in
    /// the plan's order, targets at the same time, into one batch directory with its own
    /// journal, then a morning summary; `aba batch resume DIR` continues a stopped or killed
    /// batch, `aba batch status DIR` says where it stands.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Batch {
        /// `resume DIR` or `status DIR`; without one, run the plan FILE.
        #[command(subcommand)]
        action: Option<BatchAction>,
        /// The batch plan (TOML, docs/queue.md).
        #[arg(value_name = "FILE", required = true)]
        plan: Option<PathBuf>,
        /// Directory under which `<name>-<UTC stamp>/` is created.
        #[arg(
            long,
            value_name = "DIR",
            default_value = "results",
            env = "ABA_RESULTS",
            help_heading = "Campaign"
        )]
        results: PathBuf,
        /// Target inventory file [default: $ABA_TARGETS, ./targets.toml, ~/.config/aba/targets.toml].
        #[arg(long, value_name = "FILE", help_heading = "Target")]
        targets: Option<PathBuf>,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
    },
    /// Find the commit of a git range that changed a recipe's workload: each commit chosen is
    /// built from the tester's tree, booted in a sandwich against good and decided like good
    /// or like bad by aba's verdict with a stated error rate (docs/bisect.md). The same
    /// command with `--dir` continues a bisection after any stop; `aba bisect status DIR`
    /// says where it stands.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Bisect {
        /// `status DIR`; without it, bisect.
        #[command(subcommand)]
        action: Option<BisectAction>,
        /// The recipe: its first measured series (or `--series`), boot, tuning and gate; its
        /// kernels and sequence are replaced by each step's good/commit/good.
        #[arg(value_name = "RECIPE", required = true)]
        recipe: Option<PathBuf>,
        /// The builds file with one table: the git tree (`dir`), its build `command`, the
        /// `image` and the `config` it makes (docs/bisect.md).
        #[arg(long, value_name = "FILE", required = true, help_heading = "Bisect")]
        builds: Option<PathBuf>,
        /// The good commit (a ref or hash of the tree).
        #[arg(long, value_name = "REF", required = true, help_heading = "Bisect")]
        good: Option<String>,
        /// The bad commit (a descendant of good on the first-parent line).
        #[arg(long, value_name = "REF", required = true, help_heading = "Bisect")]
        bad: Option<String>,
        /// The bisection's directory: continued when it holds one, made otherwise [default:
        /// RESULTS/<name>-bisect-<UTC stamp>/].
        #[arg(long, value_name = "DIR", help_heading = "Bisect")]
        dir: Option<PathBuf>,
        /// The series to bisect (`workload`, `workload[case]`, plus `/metric`), as `aba
        /// report` labels it [default: the recipe's first measured one].
        #[arg(long, value_name = "LABEL", help_heading = "Bisect")]
        series: Option<String>,
        /// How the next commit is chosen.
        #[arg(long, value_enum, default_value = "bayesian", help_heading = "Bisect")]
        strategy: StrategyArg,
        /// Use VALUE for the recipe's parameter NAME (repeatable).
        #[arg(
            long = "param",
            value_name = "NAME=VALUE",
            value_parser = ParamBinding::from_option,
            help_heading = "Recipe"
        )]
        params: Vec<ParamBinding>,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
        /// Directory under which a new bisection's directory is made.
        #[arg(
            long,
            value_name = "DIR",
            default_value = "results",
            env = "ABA_RESULTS",
            help_heading = "Campaign"
        )]
        results: PathBuf,
        /// Start steps even when one is estimated to take more than a day.
        #[arg(long, help_heading = "Campaign")]
        yes: bool,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// Campaign options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Run the build steps of the kernels a builds file names for a recipe and print each
    /// build's identity (version string, SHA-256 of image and config, git tree, patches);
    /// touches no target.
    Build {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection (checks that the target can boot kernels aba installs).
        #[command(flatten)]
        target: TargetArgs,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
        /// This tester's kernel builds on this host (a builds file).
        #[arg(long, value_name = "FILE")]
        builds: PathBuf,
        /// Use the built files as they are; do not run the build commands.
        #[arg(long = "no-build")]
        no_build: bool,
        /// Where the build logs go (one `<label>.log` per kernel).
        #[arg(long, value_name = "DIR", default_value = "aba-build-logs")]
        logs: PathBuf,
    },
    /// Remove from the target every trace a campaign left there, finished or killed: aba's
    /// one-shot boot entries, the kernels it installed (what aba's ledger recorded and is
    /// still aba's), its work directory and its lock marker.
    Clean {
        /// The results directory.
        dir: PathBuf,
        /// Target inventory file (the target's name comes from the journal).
        #[arg(long, value_name = "FILE", help_heading = "Target")]
        targets: Option<PathBuf>,
    },
    /// Put back the sysctls and CPU frequency settings a campaign changed on a machine that
    /// was not rebooted since (after a crash or a kill), from the values aba's ledger on the
    /// machine recorded before changing them, without resuming it.
    Restore {
        /// The results directory.
        dir: PathBuf,
        /// Target inventory file (the target's name comes from the journal).
        #[arg(long, value_name = "FILE", help_heading = "Target")]
        targets: Option<PathBuf>,
    },
    /// Show where a campaign stands.
    Status {
        /// The results directory.
        dir: PathBuf,
        /// Print the result as JSON (docs/json.md) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Release a target whose lock a killed campaign left behind (refused while a campaign on
    /// this host still runs on it).
    Unlock {
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Cross-check a campaign's journal against its samples.csv: every journaled run has its
    /// rows, no row lacks a run, every finished point has exactly its samples, every valid row
    /// carries its proven boot, every value and the hash chain of the rows are the journaled
    /// ones.
    Verify {
        /// The results directory.
        dir: PathBuf,
    },
    /// Compare a new campaign with a reference (another campaign's results directory, or a
    /// published bundle): point means, changes and verdicts side by side, a reproduction
    /// verdict per comparison (REPRODUCED, DIFFERENT, NOT_REPRODUCED, INCONCLUSIVE), the
    /// environments with their differences; prints a mail-ready text (exit 4 when a
    /// comparison is NOT_REPRODUCED).
    Compare {
        /// The new campaign's results directory.
        new: PathBuf,
        /// The reference: an aba results directory, or a published bundle's folder or one of
        /// its `<name>-points.tsv` files.
        reference: PathBuf,
        /// Also write every figure, one per row, to FILE as TSV.
        #[arg(long, value_name = "FILE")]
        tsv: Option<PathBuf>,
        /// Print the comparison as JSON (every number unrounded) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Write a results directory in the published layout (per-experiment points and
    /// comparison tables, run audit, source identity, patches, workload sources, README) into a
    /// new folder that `aba compare` reads as a reference.
    Export {
        /// The results directory (`results/<name>-<time>/`).
        dir: PathBuf,
        /// The folder to write: it must not exist (its parent must) or be empty.
        #[arg(long, value_name = "OUT")]
        to: PathBuf,
        /// Print the files written as JSON instead of the sentence.
        #[arg(long)]
        json: bool,
    },
    /// Recompute a campaign's figures from its raw files, write the report files into the
    /// results directory and print report.txt (refused, exit 5, when samples.csv does not
    /// match the journal: `aba verify`).
    Report {
        /// The results directory (`results/<name>-<time>/`); with `--together`, two or more.
        #[arg(required = true, num_args = 1..)]
        dirs: Vec<PathBuf>,
        /// Link two or more campaigns of one question (the production and the exact config
        /// of one A/B): each directory's reports are rewritten, and one report puts them side
        /// by side, each with its own verdicts and whether they agree.
        #[arg(long)]
        together: bool,
        /// With `--together`: also write that report (report.txt, README.md, linked.tsv) into
        /// this folder, which must not exist (its parent must) or be empty.
        #[arg(long, value_name = "OUT", requires = "together")]
        to: Option<PathBuf>,
        /// Judge with verdict limits edited in recipe.toml after the run instead of refusing;
        /// every report then says at the top which limits changed, from what to what.
        #[arg(long)]
        accept_edited_limits: bool,
        /// Judge without the noise profile the campaign used (every report says so).
        #[arg(long)]
        no_profile: bool,
        /// Print the result as JSON (docs/json.md) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script: `source <(aba completions bash)`; zsh: save it as
    /// `_aba` in `$fpath`; fish: as `~/.config/fish/completions/aba.fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: completions::CompletionShell,
    },
    /// Print the manual page aba(1) (roff: `aba man | man -l -`), or write aba.1 and one
    /// aba-COMMAND.1 per command into `--out DIR`.
    Man {
        /// Write the pages into this existing directory instead of printing aba(1).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Print the JSON Schema of recipes, of target inventories or of batch plans, for editors (a
    /// `#:schema` first line; docs/recipes.md) and other tools.
    Schema {
        /// Which file format.
        #[arg(value_enum)]
        of: schema::SchemaOf,
    },
    /// The inventory's target names, one per line, `local` first (for completion scripts).
    #[command(hide = true)]
    Targets {
        /// Print the names (the only form there is).
        #[arg(long, required = true)]
        names: bool,
        /// Target inventory file [default: $ABA_TARGETS, ./targets.toml, ~/.config/aba/targets.toml].
        #[arg(long, value_name = "FILE")]
        targets: Option<PathBuf>,
    },
}

/// What `aba batch` does besides running a plan.
#[derive(Debug, Subcommand)]
pub enum BatchAction {
    /// Continue a stopped, interrupted or killed batch: unfinished campaigns are resumed in
    /// their directories, campaigns never started are started, finished ones left alone.
    Resume {
        /// The batch directory.
        dir: PathBuf,
        /// Target inventory file (the targets' names come from the batch journal).
        #[arg(long, value_name = "FILE", help_heading = "Target")]
        targets: Option<PathBuf>,
        /// Where `[files]` may come from.
        #[command(flatten)]
        files: FilesArgs,
    },
    /// Print the morning summary of a batch as it stands now (writes nothing).
    Status {
        /// The batch directory.
        dir: PathBuf,
    },
}

/// What `aba bisect` does besides bisecting.
#[derive(Debug, Subcommand)]
pub enum BisectAction {
    /// Print where a bisection stands: its steps and its outcome (writes nothing).
    Status {
        /// The bisection's directory.
        dir: PathBuf,
    },
}

/// `--strategy` of `aba bisect`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum StrategyArg {
    /// A posterior over the first bad commit (the default: fewer wrong commits).
    Bayesian,
    /// git bisect's halving.
    Plain,
}

/// How a new campaign starts (`run`, `calibrate`).
#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// Directory under which `<name>-<UTC stamp>/` is created.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "results",
        env = "ABA_RESULTS",
        help_heading = "Campaign"
    )]
    pub results: PathBuf,
    /// Start even when the plan is estimated to take more than a day.
    #[arg(long, help_heading = "Campaign")]
    pub yes: bool,
    /// Use no noise profile of the target (`run`; `calibrate` never uses one).
    #[arg(long, help_heading = "Campaign")]
    pub no_profile: bool,
}

impl LaunchArgs {
    fn launch(&self) -> Launch<'_> {
        Launch {
            results: Destination::Under(&self.results),
            yes: self.yes,
            no_profile: self.no_profile,
        }
    }
}

/// Options shared by `run` and `resume`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Allow changing sysctls and CPU frequency settings of a machine that is not rebooted
    /// between points (the local target); previous values are restored at the end and on Ctrl-C.
    #[arg(long, help_heading = "Campaign")]
    pub allow_tuning: bool,
    /// Wait while another campaign holds the target instead of refusing at once.
    #[arg(long, help_heading = "Campaign")]
    pub wait: bool,
}

impl RunArgs {
    fn options(&self) -> RunOptions {
        RunOptions {
            allow_tuning: self.allow_tuning,
            wait: self.wait,
            look_rule: None,
        }
    }
}

/// Runs the parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::New { name, from } => new::new(&name, from),
        Command::Completions { shell } => completions::completions(shell),
        Command::Man { out } => man::man(out.as_deref()),
        Command::Schema { of } => schema::schema(of),
        Command::Targets { names: _, targets } => completions::target_names(targets.as_deref()),
        Command::Check {
            recipe,
            target,
            files,
            kernels,
            no_profile,
            json,
        } => check::check(&recipe, &target, &files, &kernels, no_profile, json),
        Command::Preflight {
            recipe,
            target,
            files,
            kernels,
            json,
        } => preflight::preflight(&recipe, &target, &files, &kernels, json),
        Command::Run {
            recipe,
            target,
            launch,
            files,
            kernels,
            run,
        } => match target.single() {
            Some(single) => run::run(
                &recipe,
                &single,
                &files,
                &kernels,
                launch.launch(),
                run.options(),
            ),
            None => crate::session::multi::run(
                &crate::session::multi::MultiRun {
                    recipe: &recipe,
                    targets: &target.target,
                    inventory: target.targets.as_deref(),
                    files: &files.sources(),
                    kernels: &kernels.bindings(),
                },
                launch.launch(),
                run.options(),
            )
            .map(crate::error::CampaignEnd::code),
        },
        Command::Calibrate {
            recipe,
            target,
            boots,
            launch,
            files,
            kernels,
            run,
        } => calibrate::calibrate(
            &recipe,
            &target,
            &files,
            &kernels,
            launch.launch(),
            boots,
            run.options(),
        ),
        Command::Resume {
            dir,
            targets,
            amend,
            files,
            run,
        } => run::resume(
            &dir,
            targets.as_ref(),
            amend.as_deref(),
            &files,
            run.options(),
        ),
        Command::Bisect {
            action,
            recipe,
            builds,
            good,
            bad,
            dir,
            series,
            strategy,
            params,
            target,
            results,
            yes,
            files,
            run,
        } => match (action, recipe, builds, good, bad) {
            (Some(BisectAction::Status { dir }), ..) => bisect::status(&dir),
            (None, Some(recipe), Some(builds), Some(good), Some(bad)) => {
                bisect::bisect(&bisect::BisectArgs {
                    recipe: &recipe,
                    builds,
                    good: &good,
                    bad: &bad,
                    dir: dir.as_deref(),
                    series: series.as_deref(),
                    strategy: match strategy {
                        StrategyArg::Bayesian => crate::bisect::Strategy::Bayesian,
                        StrategyArg::Plain => crate::bisect::Strategy::Plain,
                    },
                    params,
                    target: &target,
                    results: &results,
                    yes,
                    files: &files,
                    options: run.options(),
                })
            }
            _ => unreachable!(
                "clap requires RECIPE, --builds, --good and --bad without a subcommand"
            ),
        },
        Command::Batch {
            action,
            plan,
            results,
            targets,
            files,
        } => match (action, plan) {
            (
                Some(BatchAction::Resume {
                    dir,
                    targets,
                    files,
                }),
                _,
            ) => batch::resume(&dir, targets.as_deref(), &files),
            (Some(BatchAction::Status { dir }), _) => batch::status(&dir),
            (None, Some(plan)) => batch::run(&plan, &results, targets.as_deref(), &files),
            (None, None) => unreachable!("clap requires FILE without a subcommand"),
        },
        Command::Restore { dir, targets } => restore::restore(&dir, targets.as_ref()),
        Command::Build {
            recipe,
            target,
            files,
            builds: file,
            no_build,
            logs,
        } => builds::build(&recipe, &target, &files, &file, no_build, &logs),
        Command::Clean { dir, targets } => builds::clean(&dir, targets.as_ref()),
        Command::Status { dir, json } if Manifest::is_parent(&dir) => {
            status::status_parent(&dir, json)
        }
        Command::Status { dir, json } => status::status(&dir, json),
        Command::Verify { dir } if Manifest::is_parent(&dir) => verify::verify_parent(&dir),
        Command::Verify { dir } => verify::verify(&dir),
        Command::Unlock { target } => unlock::unlock(&target),
        Command::Compare {
            new,
            reference,
            tsv,
            json,
        } => compare::compare(
            &new,
            &reference,
            compare::CompareOutputs {
                tsv: tsv.as_deref(),
                json,
            },
        ),
        Command::Export { dir, to, json } => export::export(&dir, &to, json),
        Command::Report {
            dirs,
            together,
            to,
            accept_edited_limits,
            no_profile,
            json,
        } => {
            let options = AnalyzeOptions {
                accept_edited_limits,
                no_profile,
            };
            match dirs.as_slice() {
                _ if together => report::report_together(&dirs, options, to.as_deref(), json),
                [dir] if Manifest::is_parent(dir) => report::report_parent(dir, options, json),
                [dir] => report::report(dir, options, json),
                _ => Err(crate::error::Error::ReportArgs {
                    why: format!(
                        "{} directories were given; one report is of one campaign",
                        dirs.len()
                    ),
                    hint:
                        "link campaigns of one question with --together: aba report A B --together"
                            .to_owned(),
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
