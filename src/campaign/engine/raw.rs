//! The output a reader needs to see why a command failed (or left processes behind, or printed
//! more than `max_output`): `raw/<point>-<attempt>/<name>/` with `stdout`, `stderr` and
//! `command.txt` (the command, how it ended, what was cut, what was killed).

use std::fmt::Write as _;

use super::{AttemptId, Engine};
use crate::target::transport::CommandOutput;

impl Engine<'_> {
    /// Saves a command's output; returns its folder relative to the results directory (with
    /// why it is missing, when it could not be written: the run's record still names it).
    pub(super) fn save_raw(
        &self,
        at: AttemptId<'_>,
        name: &str,
        command: &str,
        out: &CommandOutput,
    ) -> String {
        let rel = format!("raw/{}-{}/{name}", at.point.label, at.attempt);
        let dir = self.dir.root.join(&rel);
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("stdout"), &out.stdout))
            .and_then(|()| std::fs::write(dir.join("stderr"), &out.stderr))
            .and_then(|()| std::fs::write(dir.join("command.txt"), describe(command, out)));
        match written {
            Ok(()) => format!("{rel}/"),
            Err(e) => format!("{rel}/ (not saved: {e})"),
        }
    }
}

/// `command.txt`: the command, its outcome and time, what was cut, what was left behind.
fn describe(command: &str, out: &CommandOutput) -> String {
    let mut meta = format!(
        "command: {command}\noutcome: {}\nelapsed_s: {:.6}\n",
        out.outcome,
        out.elapsed.as_secs_f64()
    );
    for (stream, dropped, kept) in [
        ("stdout", out.dropped[0], out.stdout.len()),
        ("stderr", out.dropped[1], out.stderr.len()),
    ] {
        if dropped > 0 {
            let _ = writeln!(
                meta,
                "{stream}: truncated: kept the first {kept} of {} bytes (max_output)",
                kept as u64 + dropped
            );
        }
    }
    for process in &out.leftovers {
        let _ = writeln!(meta, "left behind and killed: {process}");
    }
    meta
}
