//! The `aba` binary: parse the command line, run it, render any error, exit with its code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = aba::cli::Cli::parse();
    match aba::cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // Errors quote recipes, inventories and targets' output: never raw to the terminal.
            eprintln!("{}", aba::text::printable(&err.render()));
            ExitCode::from(err.exit_code())
        }
    }
}
