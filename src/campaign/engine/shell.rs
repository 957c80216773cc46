//! The shell text aba runs on the target for workloads, setup and teardown: the work
//! directory, the `ABA_*` variables and the case's environment, every value quoted.

use super::{AttemptId, Engine};
use crate::{
    campaign::{plan::PlannedCase, workload_command::workload_command},
    target::quote::sh_quote,
};

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
    let command = workload_command(cpu, run);
    match cpu {
        Some(_) => format!("{setup} && {command}"),
        None => format!("{setup} || exit\n{command}"),
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

    /// Issue 29 item 3: `aba check` shows a workload's command as the engine runs it. A pinned
    /// compound command is shown as `exec taskset -c 0 sh -c '…'`, the tail of the text the
    /// engine executes, and it runs as shown, pinned, with the case's variables; an unpinned
    /// one is the executed text's last line.
    #[test]
    fn check_shows_the_command_that_runs() {
        use crate::campaign::footprint::CaseCommand;
        let dir = tempfile::tempdir().expect("temp dir");
        let workdir = dir.path().to_str().expect("utf-8").to_owned();
        let run = r#"i=0; t0=$(date +%s); echo "$i $LEVEL $(taskset -cp $$ | sed 's/.*: //')""#;
        let case = |cpu: Option<&str>, env: &[(&str, &str)]| CaseCommand {
            name: "w".to_owned(),
            run: run.to_owned(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            cpu: cpu.map(str::to_owned),
            warmup: 0,
            samples: 1,
            check: false,
            kernels: None,
        };
        let pinned = case(Some("0"), &[]);
        let shown = pinned.command_line();
        assert_eq!(
            shown,
            format!("exec taskset -c 0 sh -c {}", sh_quote(run)),
            "not `taskset -c 0 i=0; …`"
        );
        let executed = run_command(&workdir, "export 'LEVEL=x'", Some("0"), run);
        assert!(executed.ends_with(&format!(" && {shown}")), "{executed}");
        let unpinned = case(None, &[]).command_line();
        let executed = run_command(&workdir, "export 'LEVEL=x'", None, run);
        assert!(executed.ends_with(&format!("\n{unpinned}")), "{executed}");
        // As shown, with the case's variables, it is valid shell and runs pinned.
        let (code, out, err) = sh(&case(Some("0"), &[("LEVEL", "1 deep")]).command_line());
        assert_eq!((code, out.as_str()), (0, "0 1 deep 0\n"), "{err}");
        let (code, out, err) = sh(&case(None, &[("LEVEL", "1 deep")]).command_line());
        assert_eq!(code, 0, "{err}");
        assert!(out.starts_with("0 1 deep "), "{out}");
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
