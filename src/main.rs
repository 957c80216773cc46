//! The `aba` binary: parse the command line, run it, render any error, exit with its code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match aba::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go out as clap writes them; an error quotes the bad argument,
        // which may be 100 KB of escape sequences: each line escaped and cut.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            for line in text.lines() {
                eprintln!("{}", aba::text::untrusted(line, aba::text::UNTRUSTED_CHARS));
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match aba::cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // Errors quote recipes, inventories and targets' output: never raw to the terminal.
            eprintln!("{}", aba::text::printable(&err.render()));
            ExitCode::from(err.exit_code())
        }
    }
}
