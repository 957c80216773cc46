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

use std::{
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::{
    inventory::Target,
    labgrid::{
        Place,
        console::{self, ConsoleLogger},
        resources, shown, token_of,
    },
    results::journal::{Event, Journal, ReservationAction, now_rfc3339},
    target::host::{HostCommandError, run_host},
    text::{cut, last_lines},
};

/// How long one labgrid client command but `wait` may take.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// The labgrid place and the token of the reservation that holds it.
    labgrid: Option<(Place, Mutex<Option<String>>)>,
    vars: Vec<(&'static str, String)>,
    base_dir: PathBuf,
    /// The `reserve` run, journaled once by the engine; then `None`.
    reserved: Mutex<Option<HookRun>>,
    /// Whether `release` still has to run.
    held: Mutex<bool>,
    /// The campaign's results directory.
    campaign: PathBuf,
    /// The labgrid place's console being logged into the campaign's `console.log`.
    console: Mutex<Option<ConsoleLogger>>,
}

impl Reservation {
    /// Runs the target's `reserve` for the campaign in `campaign`; `None` when the inventory
    /// names neither command.
    pub fn take(target: &Target, campaign: &str) -> Result<Option<Reservation>, HostCommandError> {
        if target.reserve.is_none() && target.release.is_none() && target.labgrid.is_none() {
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
            labgrid: target.labgrid.clone().map(|p| (p, Mutex::new(None))),
            vars,
            base_dir: target.base_dir.clone(),
            reserved: Mutex::new(None),
            held: Mutex::new(false),
            campaign: PathBuf::from(campaign),
            console: Mutex::new(None),
        };
        if let Some(command) = &target.reserve {
            let run = reservation.run(ReservationAction::Reserve, command, target.reserve_timeout);
            if let Some(error) = run.error {
                return Err(error);
            }
            *lock(&reservation.reserved) = Some(run.record);
        }
        if let Some((place, token)) = &reservation.labgrid {
            let previous = own_token(Path::new(campaign));
            let steps =
                reservation.labgrid_take(place, previous.as_deref(), target.reserve_timeout);
            // A refusal is the command's error (the engine has no journal yet to record it).
            let (ran, got) = steps?;
            *lock(token) = Some(got);
            *lock(&reservation.reserved) = Some(ran);
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
        // Giving the machine back runs after a Ctrl-C too (that is when it matters most); a
        // second Ctrl-C stops it.
        if let Some(mut logger) = lock(&self.console).take() {
            logger.stop();
        }
        if let Some((place, token)) = &self.labgrid {
            let token = lock(token).take();
            return Some(crate::interrupt::set_aside(|| {
                self.labgrid_release(place, token.as_deref())
            }));
        }
        let command = self.release.as_ref()?;
        Some(crate::interrupt::set_aside(|| {
            self.run(ReservationAction::Release, command, RELEASE_TIMEOUT)
                .record
        }))
    }

    /// Takes the labgrid place: the place this campaign's own reservation `previous` still
    /// holds (a run that was killed), or a new reservation queued, waited for and acquired.
    /// One record of every step; on failure the error, after the reservation was cancelled
    /// so it does not hold the place from the next in the queue.
    fn labgrid_take(
        &self,
        place: &Place,
        previous: Option<&str>,
        timeout: Duration,
    ) -> Result<(HookRun, String), HostCommandError> {
        let mut steps = Steps::new(ReservationAction::Reserve);
        let show = steps.run(self, place.show(), CLIENT_TIMEOUT)?;
        let now = shown(&show);
        if let Some(previous) = previous
            && now.acquired.is_some()
            && now.reservation.as_deref() == Some(previous)
        {
            steps.note(format!(
                "place {} is still held by this campaign's reservation {previous}",
                place.place
            ));
            self.start_console(&mut steps, place)?;
            return Ok((steps.done(), previous.to_owned()));
        }
        if let Some(holder) = &now.acquired {
            // Who the campaign queues behind, for the batch's morning summary.
            steps.note(format!(
                "place {} was held by {} when the reservation was queued",
                place.place,
                crate::text::untrusted(holder, 100)
            ));
        }
        let answer = steps.run(self, place.reserve(), CLIENT_TIMEOUT)?;
        let Some(token) = token_of(&answer) else {
            return Err(HostCommandError::Answer {
                command: place.reserve().unwrap_or_default(),
                why: format!(
                    "there is no reservation token in it: {}",
                    crate::text::untrusted(&answer, 200)
                ),
            });
        };
        // The answer's `export LG_TOKEN=…` stays in the record: resume reads it back.
        let queued = Instant::now();
        let waited = steps.run(self, place.wait(&token), timeout).map(|_| ());
        let acquired = waited.and_then(|()| {
            steps.note(format!(
                "reservation {token} allocated after {} s",
                queued.elapsed().as_secs()
            ));
            steps
                .run(self, place.acquire(&token), CLIENT_TIMEOUT)
                .map(|_| ())
        });
        let acquired = acquired.and_then(|()| {
            steps.note(format!("acquired place {}", place.place));
            self.start_console(&mut steps, place)
        });
        if let Err(error) = acquired {
            // Leave the queue: an abandoned reservation would keep the place from the next.
            let _ = steps.run(self, place.release(), CLIENT_TIMEOUT);
            let _ = steps.run(self, place.cancel(&token), CLIENT_TIMEOUT);
            return Err(error);
        }
        Ok((steps.done(), token))
    }

    /// Starts logging the place's console into the campaign's `console.log` when the
    /// inventory asks for it (`console = true`): the coordinator's `show` names the acquired
    /// `NetworkSerialPort`.
    fn start_console(&self, steps: &mut Steps, place: &Place) -> Result<(), HostCommandError> {
        if !place.console {
            return Ok(());
        }
        let answer = steps.run(self, place.show(), CLIENT_TIMEOUT)?;
        let refused = |why: String| HostCommandError::Answer {
            command: place.show().unwrap_or_default(),
            why,
        };
        let port =
            resources::serial_port(&place.place, &answer).map_err(|e| refused(e.to_string()))?;
        let file = self.campaign.join(console::CONSOLE_FILE);
        let logger = ConsoleLogger::start(port, &file).map_err(|e| {
            refused(format!(
                "the console log {} cannot be written: {e}",
                file.display()
            ))
        })?;
        steps.note(format!(
            "console {} at {}:{} ({}) logged to {}",
            logger.port.path,
            logger.port.host,
            logger.port.port,
            logger.port.protocol,
            console::CONSOLE_FILE
        ));
        *lock(&self.console) = Some(logger);
        Ok(())
    }

    /// Releases the labgrid place and cancels the reservation (`token`, or the one `show`
    /// says is allocated to the place when the campaign never learnt it).
    fn labgrid_release(&self, place: &Place, token: Option<&str>) -> HookRun {
        let mut steps = Steps::new(ReservationAction::Release);
        let token = token.map(str::to_owned).or_else(|| {
            let show = steps.run(self, place.show(), CLIENT_TIMEOUT).ok()?;
            shown(&show).reservation
        });
        let released = steps.run(self, place.release(), CLIENT_TIMEOUT);
        let cancelled = match &token {
            Some(t) => steps.run(self, place.cancel(t), CLIENT_TIMEOUT).map(|_| ()),
            None => Ok(()),
        };
        match released.map(|_| ()).and(cancelled) {
            Ok(()) => steps.done(),
            Err(e) => steps.failed(&e),
        }
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

/// The labgrid client commands of one reservation action, journaled as one record: the
/// commands joined by `; `, each one's last lines and aba's own notes.
struct Steps {
    action: ReservationAction,
    commands: Vec<String>,
    output: Vec<String>,
}

impl Steps {
    fn new(action: ReservationAction) -> Steps {
        Steps {
            action,
            commands: Vec::new(),
            output: Vec::new(),
        }
    }

    /// Runs `command` (already expanded) and returns its stdout.
    fn run(
        &mut self,
        reservation: &Reservation,
        command: Result<String, HostCommandError>,
        timeout: Duration,
    ) -> Result<String, HostCommandError> {
        let command = command?;
        self.commands.push(command.clone());
        let out = run_host(&command, &[], &reservation.base_dir, timeout)?;
        let text = out.stdout_text();
        // `wait` prints the reservation once a second: its last lines are enough.
        let kept = tail(&last_lines(&text, 3).join("\n"), "");
        if !kept.is_empty() {
            self.output.push(kept);
        }
        Ok(text)
    }

    fn note(&mut self, line: String) {
        self.output.push(line);
    }

    fn record(&self, error: Option<String>) -> HookRun {
        HookRun {
            action: self.action,
            command: self.commands.join("; "),
            output: last_lines(&self.output.join("\n"), 2 * OUTPUT_LINES).join("\n"),
            error,
            time: now_rfc3339(),
        }
    }

    fn done(&self) -> HookRun {
        self.record(None)
    }

    fn failed(&self, error: &HostCommandError) -> HookRun {
        let text = cut(&crate::causes::one_line(error), 20 * LINE_CHARS).into_owned();
        self.record(Some(text))
    }
}

/// The token of the labgrid reservation this campaign's journal says it took last and did
/// not give back (a resumed run); `None` for a new campaign or a journal that cannot be read.
fn own_token(campaign: &Path) -> Option<String> {
    let journal = Journal::read(&campaign.join("journal.jsonl")).ok()?;
    let mut token = None;
    for event in &journal.events {
        if let Event::Reservation { action, output, .. } = event {
            token = match action {
                ReservationAction::Reserve => token_of(output),
                ReservationAction::Release => None,
            };
        }
    }
    token
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
