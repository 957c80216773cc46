//! The shell text aba runs on the target for workloads, setup and teardown: the work
//! directory, the `ABA_*` variables and the case's environment, every value quoted.

use super::{AttemptId, Engine};
use crate::{campaign::plan::PlannedCase, target::quote::sh_quote};

impl Engine<'_> {
    /// `export ABA_POINT=… ABA_KERNEL=… …` for a command of attempt `at` in `phase`
    /// (`warmup`, `sample`, `setup`, `teardown`); a workload run adds its case and index.
    pub(super) fn aba_env(
        &self,
        at: AttemptId<'_>,
        phase: &str,
        run: Option<(&PlannedCase, u32)>,
    ) -> String {
        let point = at.point;
        let mut vars = vec![
            ("ABA_POINT", point.label.to_string()),
            ("ABA_ORDER", point.order.to_string()),
            ("ABA_ATTEMPT", at.attempt.to_string()),
            ("ABA_KERNEL", point.kernel.to_string()),
            ("ABA_RELEASE", point.release.to_string()),
            ("ABA_PHASE", phase.to_owned()),
            ("ABA_WORKDIR", self.workdir.clone()),
        ];
        if let Some((case, index)) = run {
            vars.push(("ABA_WORKLOAD", case.workload_name.to_string()));
            vars.push(("ABA_CASE", case.case.name.clone()));
            vars.push(("ABA_SAMPLE", index.to_string()));
        }
        let mut words = vec!["export".to_owned()];
        words.extend(vars.into_iter().map(|(k, v)| sh_quote(&format!("{k}={v}"))));
        if let Some((case, _)) = run {
            words.extend(case.env.iter().map(|(k, v)| sh_quote(&format!("{k}={v}"))));
        }
        words.join(" ")
    }
}

/// The shell text that runs `run` on the target: in `workdir`, with `exports` (an `export …`
/// command) in its environment, pinned by `taskset -c CPU` when `cpu` is set.
///
/// Unpinned, `run` is read by the very shell that changed directory and exported the variables:
/// that is the `sh` process `exec sh -c RUN` would have become, with the same directory,
/// environment, standard input, process group and exit status, but without two more `exec`s
/// (`env` and `sh`) per run: about 1 ms of a trivial sample on a fast machine. A failed `cd`
/// ends the shell before `run` is read.
pub(super) fn run_command(workdir: &str, exports: &str, cpu: Option<&str>, run: &str) -> String {
    let setup = format!("cd {} && {exports}", sh_quote(workdir));
    match cpu {
        Some(cpu) => format!("{setup} && exec taskset -c {cpu} sh -c {}", sh_quote(run)),
        None => format!("{setup} || exit\n{run}"),
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::run_command;
    use crate::target::quote::sh_quote;

    fn sh(text: &str) -> (i32, String, String) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(text)
            .output()
            .expect("sh runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The run text sees the work directory and the exported variables, its exit status is
    /// the command's, and a missing work directory stops the shell before the run text.
    #[test]
    fn run_command_sets_directory_and_environment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let work = dir.path().join("it's here");
        std::fs::create_dir(&work).expect("mkdir");
        let workdir = work.to_string_lossy().into_owned();
        let exports = format!(
            "export {} {}",
            sh_quote("ABA_POINT=a b"),
            sh_quote("CASE_ENV=$(not expanded)")
        );
        let run = "echo \"$PWD|$ABA_POINT|$CASE_ENV\"\nexit 3";
        let (code, out, _) = sh(&run_command(&workdir, &exports, None, run));
        assert_eq!(code, 3);
        assert_eq!(out, format!("{workdir}|a b|$(not expanded)\n"));

        let missing = format!("{workdir}/missing");
        let (code, out, _) = sh(&run_command(&missing, &exports, None, "echo ran"));
        assert_ne!(code, 0);
        assert_eq!(out, "");

        if crate::test_skip::need("taskset") {
            let (code, out, err) = sh(&run_command(&workdir, &exports, Some("0"), run));
            assert_eq!(
                (code, out.as_str()),
                (3, format!("{workdir}|a b|$(not expanded)\n").as_str()),
                "{err}"
            );
        }
    }
}
