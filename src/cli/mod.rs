//! The command line: clap definitions, turned into typed requests, dispatched to one module per
//! subcommand. Only this layer prints; everything below returns values or emits events.

mod check;
mod preflight;
mod report;
mod run;
mod status;
mod verify;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{
    analysis::AnalyzeOptions,
    campaign::engine::RunOptions,
    error::Error,
    inventory::{Inventory, LOCAL, Target},
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
    /// Resolves the target from the inventory; `local` when none was named.
    pub fn resolve(&self) -> Result<Target, Error> {
        let inventory = Inventory::discover(self.targets.as_deref())?;
        Ok(inventory.target(self.target.as_deref().unwrap_or(LOCAL))?)
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a recipe without any network, print the plan and its ETA.
    Check {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Check a target against a recipe without rebooting it: connection and host key, the
    /// switch method, kernel images, sysctls and tuning knobs, files and setup.
    Preflight {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Run a campaign: boot each point's kernel, prove it, tune, measure, write every sample
    /// as it comes, then the reports.
    Run {
        /// The recipe file.
        recipe: PathBuf,
        /// Target selection.
        #[command(flatten)]
        target: TargetArgs,
        /// Directory under which `<name>-<UTC stamp>/` is created.
        #[arg(
            long,
            value_name = "DIR",
            default_value = "results",
            env = "ABA_RESULTS",
            help_heading = "Campaign"
        )]
        results: PathBuf,
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
        /// Campaign options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Show where a campaign stands.
    Status {
        /// The results directory.
        dir: PathBuf,
    },
    /// Cross-check a campaign's journal against its samples.csv: every journaled run has its
    /// rows, no row lacks a run, every finished point has exactly its samples, every valid row
    /// carries its proven boot.
    Verify {
        /// The results directory.
        dir: PathBuf,
    },
    /// Recompute a campaign's figures from its raw files, write the report files into the
    /// results directory and print report.txt.
    Report {
        /// The results directory (`results/<name>-<time>/`).
        dir: PathBuf,
        /// Judge with verdict limits edited in recipe.toml after the run instead of refusing;
        /// every report then says at the top which limits changed, from what to what.
        #[arg(long)]
        accept_edited_limits: bool,
    },
}

/// Options shared by `run` and `resume`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Allow changing sysctls and CPU frequency settings of a machine that is not rebooted
    /// between points (the local target); previous values are restored at the end and on Ctrl-C.
    #[arg(long, help_heading = "Campaign")]
    pub allow_tuning: bool,
}

impl RunArgs {
    fn options(&self) -> RunOptions {
        RunOptions {
            allow_tuning: self.allow_tuning,
        }
    }
}

/// Runs the parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::Check { recipe, target } => check::check(&recipe, &target),
        Command::Preflight { recipe, target } => preflight::preflight(&recipe, &target),
        Command::Run {
            recipe,
            target,
            results,
            run,
        } => run::run(&recipe, &target, &results, run.options()),
        Command::Resume { dir, targets, run } => run::resume(&dir, targets.as_ref(), run.options()),
        Command::Status { dir } => status::status(&dir),
        Command::Verify { dir } => verify::verify(&dir),
        Command::Report {
            dir,
            accept_edited_limits,
        } => report::report(
            &dir,
            AnalyzeOptions {
                accept_edited_limits,
            },
        ),
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
