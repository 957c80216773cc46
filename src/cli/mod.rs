//! The command line: clap definitions, turned into typed requests, dispatched to one module per
//! subcommand. Only this layer prints; everything below returns values or emits events.

mod check;
mod report;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{
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
    /// Target name from the inventory; `local` (this machine, no kernel switch) is built in.
    #[arg(short, long, default_value = LOCAL, help_heading = "Target")]
    pub target: String,
    /// Target inventory file [default: $ABA_TARGETS, ./targets.toml, ~/.config/aba/targets.toml].
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub targets: Option<PathBuf>,
}

impl TargetArgs {
    /// Resolves the target from the inventory.
    pub fn resolve(&self) -> Result<Target, Error> {
        let inventory = Inventory::discover(self.targets.as_deref())?;
        Ok(inventory.target(&self.target)?)
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
    /// Recompute a campaign's figures from its raw files, write the report files into the
    /// results directory and print report.txt.
    Report {
        /// The results directory (`results/<name>-<time>/`).
        dir: PathBuf,
    },
}

/// Runs the parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::Check { recipe, target } => check::check(&recipe, &target),
        Command::Report { dir } => report::report(&dir),
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
