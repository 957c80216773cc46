//! The text that runs a workload's command once its work directory and environment are set:
//! `exec taskset -c CPU sh -c 'RUN'` when the workload is pinned, `RUN` itself otherwise. The
//! engine builds what it executes with it and `aba check` shows it, so the command a reader
//! vets is the command that runs (issue 29 item 3: `taskset -c 0 i=0; t0=…` was shown for a
//! compound command, which is neither what runs nor valid shell).

use crate::target::quote::sh_quote;

/// `run`, pinned to `cpu` when given: a compound command goes to its own `sh -c`, so that
/// `taskset` pins all of it.
#[must_use]
pub fn workload_command(cpu: Option<&str>, run: &str) -> String {
    match cpu {
        Some(cpu) => format!("exec taskset -c {cpu} sh -c {}", sh_quote(run)),
        None => run.to_owned(),
    }
}
