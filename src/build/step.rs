//! The build step: a kernel's build command run on this host, in its source tree, before any
//! target is touched. Its whole output goes to a log file (a kernel build prints thousands of
//! lines: none of them is kept in memory); a failure is reported with the log's last lines.

use std::{
    os::unix::process::CommandExt as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use thiserror::Error;

use crate::interrupt;

/// How often a running build is looked at (its end, its deadline, Ctrl-C).
const POLL: Duration = Duration::from_millis(100);

/// Lines of the log a failure shows.
const TAIL_LINES: usize = 15;

/// A build step that did not succeed.
#[derive(Debug, Error)]
pub enum StepError {
    /// It could not start (no such directory, no log file).
    #[error("cannot start the build of kernel `{label}` (`{command}` in {})", dir.display())]
    Start {
        /// The kernel.
        label: String,
        /// The command.
        command: String,
        /// Its folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It failed or ran out of time.
    #[error("the build of {what} {how}; the end of its log {}:\n{tail}", log.display())]
    Failed {
        /// "kernel `b` (`make …` in DIR)".
        what: String,
        /// "failed (exit status 2) after 3m 2s", "timed out (limit 2h)".
        how: String,
        /// The log.
        log: PathBuf,
        /// Its last lines.
        tail: String,
    },
    /// Ctrl-C.
    #[error("interrupted while building kernel `{0}`")]
    Interrupted(String),
}

/// Runs `command` for kernel `label` with `sh -c` in `dir`, its stdout and stderr into
/// `log`, killed (with everything it started) after `timeout` or on Ctrl-C. Returns how long
/// it took.
pub fn run(
    label: &str,
    command: &str,
    dir: &Path,
    timeout: Duration,
    log: &Path,
) -> Result<Duration, StepError> {
    let start_error = |source| StepError::Start {
        label: label.to_owned(),
        command: command.to_owned(),
        dir: dir.to_path_buf(),
        source,
    };
    let out = crate::results::atomic::create_log(log).map_err(start_error)?;
    let err = out.try_clone().map_err(start_error)?;
    let started = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(start_error)?;
    let group = i32::try_from(child.id()).unwrap_or(0);
    let kill = || {
        if group > 0 {
            // SAFETY: kill(2) on the build's own process group, which it was started in.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    };
    let status = loop {
        match child.try_wait().map_err(start_error)? {
            Some(status) => break status,
            None if interrupt::requested() => {
                kill();
                let _ = child.wait();
                return Err(StepError::Interrupted(label.to_owned()));
            }
            None if started.elapsed() >= timeout => {
                kill();
                let _ = child.wait();
                return Err(failed(
                    label,
                    command,
                    dir,
                    log,
                    started,
                    format!("timed out (limit {})", humantime::format_duration(timeout)),
                ));
            }
            None => std::thread::sleep(POLL),
        }
    };
    // Whatever it left running in its group (a make job server's children) goes with it.
    kill();
    if status.success() {
        Ok(started.elapsed())
    } else {
        Err(failed(
            label,
            command,
            dir,
            log,
            started,
            format!("failed ({status})"),
        ))
    }
}

fn failed(
    label: &str,
    command: &str,
    dir: &Path,
    log: &Path,
    started: Instant,
    how: String,
) -> StepError {
    let text = std::fs::read(log).unwrap_or_default();
    let start = text.len().saturating_sub(64 * 1024);
    let text = String::from_utf8_lossy(&text[start..]);
    StepError::Failed {
        what: format!("kernel `{label}` (`{command}` in {})", dir.display()),
        how: format!(
            "{how} after {}",
            humantime::format_duration(Duration::from_secs(started.elapsed().as_secs()))
        ),
        log: log.to_path_buf(),
        tail: crate::text::last_lines(&text, TAIL_LINES)
            .iter()
            .map(|l| format!("  {}", crate::text::one_line(l)))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{StepError, run};

    #[test]
    fn a_build_writes_its_log_and_a_failure_shows_its_tail() {
        let tmp = tempfile::tempdir().expect("tmp");
        let log = tmp.path().join("ok.log");
        run(
            "a",
            "echo compiling; echo done >&2",
            tmp.path(),
            Duration::from_secs(30),
            &log,
        )
        .expect("succeeds");
        assert_eq!(
            std::fs::read_to_string(&log).expect("log"),
            "compiling\ndone\n"
        );
        let log = tmp.path().join("bad.log");
        let err = run(
            "b",
            "for i in $(seq 40); do echo line $i; done; echo 'error: no rule' >&2; exit 2",
            tmp.path(),
            Duration::from_secs(30),
            &log,
        )
        .expect_err("fails");
        let text = err.to_string();
        assert!(
            text.contains("the build of kernel `b` (`for i in"),
            "{text}"
        );
        assert!(text.contains("failed (exit status: 2) after 0s"), "{text}");
        assert!(text.contains("  error: no rule"), "{text}");
        assert!(text.contains("  line 40"), "{text}");
        assert!(!text.contains("line 20\n"), "only the tail: {text}");
    }

    #[test]
    fn a_build_that_outlives_its_timeout_is_killed_with_its_children() {
        let tmp = tempfile::tempdir().expect("tmp");
        let log = tmp.path().join("slow.log");
        let marker = tmp.path().join("survived");
        let err = run(
            "slow",
            &format!("(sleep 3; touch {}) & sleep 30", marker.display()),
            tmp.path(),
            Duration::from_millis(500),
            &log,
        )
        .expect_err("times out");
        assert!(matches!(err, StepError::Failed { .. }), "{err}");
        assert!(err.to_string().contains("timed out"), "{err}");
        std::thread::sleep(Duration::from_secs(4));
        assert!(!marker.exists(), "the background child was killed too");
    }
}
