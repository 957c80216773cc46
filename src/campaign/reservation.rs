//! A lab scheduler's hold on the machine: the inventory's `reserve` and `release` commands.
//!
//! A team that books its lab boxes through labgrid (`labgrid-client -p {target} acquire`), a
//! LAVA device reservation or its own script must see an overnight campaign as a holder, or a
//! colleague's job boots another kernel in the middle of the night. aba runs `reserve` on the
//! host after its own host-side lock and before the marker on the target (so a second aba on
//! this host refuses without asking the scheduler, and nothing touches the machine before the
//! scheduler granted it), and `release` after the marker is removed, whatever ended the run.
//! Both commands' output goes to the journal (`reservation` records).
//!
//! A killed runner never ran `release`: `aba resume` runs `reserve` again, so the command
//! must accept a machine its user already holds (labgrid's `acquire` does, with
//! `--allow-unmatched`/`-k` as the team needs; docs/targets.md says so).

use std::{path::PathBuf, sync::Mutex, time::Duration};

use crate::{
    inventory::Target,
    results::journal::{Event, ReservationAction, now_rfc3339},
    target::host::{HostCommandError, run_host},
    text::{cut, last_lines},
};

/// Placeholders of `reserve` and `release`.
pub const RESERVATION_PLACEHOLDERS: &[&str] = &["target", "host", "port", "dir"];

/// How long `release` may take (`reserve` has the inventory's `reserve_timeout`: a scheduler
/// may make it wait for a colleague's job).
const RELEASE_TIMEOUT: Duration = Duration::from_secs(300);

/// Lines of each command's output kept in the journal.
const OUTPUT_LINES: usize = 20;

/// Characters kept of each line: a journal record stays a few KiB whatever a command prints.
const LINE_CHARS: usize = 200;

/// What one command did, as journaled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookRun {
    /// `reserve` or `release`.
    pub action: ReservationAction,
    /// The command as the inventory wrote it.
    pub command: String,
    /// The last lines of its stdout and stderr.
    pub output: String,
    /// How it failed, if it did.
    pub error: Option<String>,
    /// When it ended.
    pub time: String,
}

impl HookRun {
    /// The journal record.
    pub fn event(&self) -> Event {
        Event::Reservation {
            action: self.action,
            command: self.command.clone(),
            output: self.output.clone(),
            error: self.error.clone(),
            time: self.time.clone(),
        }
    }
}

/// A machine the scheduler holds for this campaign until [`Reservation::release`] (or drop).
#[derive(Debug)]
pub struct Reservation {
    release: Option<String>,
    vars: Vec<(&'static str, String)>,
    base_dir: PathBuf,
    /// The `reserve` run, journaled once by the engine; then `None`.
    reserved: Mutex<Option<HookRun>>,
    /// Whether `release` still has to run.
    held: Mutex<bool>,
}

impl Reservation {
    /// Runs the target's `reserve` for the campaign in `campaign`; `None` when the inventory
    /// names neither command.
    pub fn take(target: &Target, campaign: &str) -> Result<Option<Reservation>, HostCommandError> {
        if target.reserve.is_none() && target.release.is_none() {
            return Ok(None);
        }
        let ssh = target.ssh.as_ref();
        let vars = vec![
            ("target", target.name.clone()),
            ("host", ssh.map(|s| s.host.clone()).unwrap_or_default()),
            (
                "port",
                ssh.and_then(|s| s.port)
                    .map(|p| p.to_string())
                    .unwrap_or_default(),
            ),
            ("dir", campaign.to_owned()),
        ];
        let reservation = Reservation {
            release: target.release.clone(),
            vars,
            base_dir: target.base_dir.clone(),
            reserved: Mutex::new(None),
            held: Mutex::new(false),
        };
        if let Some(command) = &target.reserve {
            let run = reservation.run(ReservationAction::Reserve, command, target.reserve_timeout);
            if let Some(error) = run.error {
                return Err(error);
            }
            *lock(&reservation.reserved) = Some(run.record);
        }
        *lock(&reservation.held) = true;
        Ok(Some(reservation))
    }

    /// The `reserve` run, once, for the journal.
    pub fn take_reserved(&self) -> Option<HookRun> {
        lock(&self.reserved).take()
    }

    /// Runs `release` if it has not run yet; `None` when there is nothing to run. A pending
    /// Ctrl-C is set aside while it runs ([`crate::interrupt::set_aside`]).
    pub fn release(&self) -> Option<HookRun> {
        let mut held = lock(&self.held);
        if !std::mem::replace(&mut *held, false) {
            return None;
        }
        let command = self.release.as_ref()?;
        // Giving the machine back runs after a Ctrl-C too (that is when it matters most); a
        // second Ctrl-C stops it.
        Some(crate::interrupt::set_aside(|| {
            self.run(ReservationAction::Release, command, RELEASE_TIMEOUT)
                .record
        }))
    }

    fn run(&self, action: ReservationAction, command: &str, timeout: Duration) -> Ran {
        let vars: Vec<(&str, &str)> = self.vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let result = run_host(command, &vars, &self.base_dir, timeout);
        let (output, error) = match &result {
            Ok(out) => (tail(&out.stdout_text(), &out.stderr_text()), None),
            Err(e) => (
                String::new(),
                Some(cut(&crate::causes::one_line(e), 20 * LINE_CHARS).into_owned()),
            ),
        };
        Ran {
            record: HookRun {
                action,
                command: command.to_owned(),
                output,
                error,
                time: now_rfc3339(),
            },
            error: result.err(),
        }
    }
}

impl Drop for Reservation {
    /// A campaign that ends before its engine ran (a refused marker, an error) still gives the
    /// machine back; with nowhere to journal it, the output goes to stderr.
    fn drop(&mut self) {
        if let Some(run) = self.release() {
            match &run.error {
                None => eprintln!("ran release command `{}`", run.command),
                Some(e) => eprintln!("warning: release command failed: {e}"),
            }
        }
    }
}

/// One command's record and, when it failed, the error itself (for `reserve`'s refusal).
struct Ran {
    record: HookRun,
    error: Option<HostCommandError>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The last lines of a command's stdout and stderr, stderr marked.
fn tail(stdout: &str, stderr: &str) -> String {
    let mut lines: Vec<String> = last_lines(stdout, OUTPUT_LINES)
        .into_iter()
        .map(|l| cut(l, LINE_CHARS).into_owned())
        .collect();
    lines.extend(
        last_lines(stderr, OUTPUT_LINES)
            .into_iter()
            .map(|l| format!("stderr: {}", cut(l, LINE_CHARS))),
    );
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::{Reservation, ReservationAction};
    use crate::inventory::Target;

    fn target(dir: &std::path::Path, reserve: &str, release: &str) -> Target {
        Target {
            name: "box".to_owned(),
            reserve: Some(reserve.to_owned()),
            release: Some(release.to_owned()),
            base_dir: dir.to_path_buf(),
            ..Target::local()
        }
    }

    #[test]
    fn release_runs_once_after_a_reserve_and_both_are_recorded() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = target(
            tmp.path(),
            "echo got {target} > held; echo granted",
            "rm held; echo freed {dir}",
        );
        let r = Reservation::take(&t, "/r/x y")
            .expect("reserved")
            .expect("some");
        assert!(tmp.path().join("held").exists());
        let reserved = r.take_reserved().expect("journaled once");
        assert_eq!(reserved.action, ReservationAction::Reserve);
        assert_eq!(reserved.output, "granted");
        assert!(r.take_reserved().is_none());
        let released = r.release().expect("runs");
        assert_eq!(released.output, "freed /r/x y");
        assert!(!tmp.path().join("held").exists());
        assert!(r.release().is_none(), "release runs once");
    }

    #[test]
    fn a_failing_reserve_is_an_error_and_nothing_is_released() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = target(tmp.path(), "echo busy >&2; exit 3", "touch released");
        let e = Reservation::take(&t, "/r").expect_err("refused");
        assert!(e.to_string().contains("busy"), "{e}");
        assert!(!tmp.path().join("released").exists());
    }

    #[test]
    fn a_dropped_reservation_is_released() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = target(tmp.path(), "true", "touch released");
        drop(Reservation::take(&t, "/r").expect("ok"));
        assert!(tmp.path().join("released").exists());
    }
}
