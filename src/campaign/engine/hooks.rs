//! The inventory's host-side commands around a run: `on_finish` when a campaign finishes,
//! `on_failure` when it stops (not on Ctrl-C), run on the host with `{dir}`, `{reason}` and
//! `{target}`; and the journal records of the lab scheduler's `reserve` and `release`
//! ([`crate::campaign::reservation`]), which the target's lock runs.

use std::time::Duration;

use super::{Engine, Outcome};
use crate::{
    campaign::events::Warning, causes::one_line, results::journal::JournalError,
    target::host::run_host,
};

/// How long a notification command may take.
const HOOK_TIMEOUT: Duration = Duration::from_secs(120);

impl Engine<'_> {
    /// Journals the `reserve` the lock ran before this run (new or resumed), and the
    /// power-cycle it needed to reach a resumed campaign's target.
    pub(super) fn journal_reserved(&mut self) -> Result<(), JournalError> {
        if let Some(command) = self.lock.and_then(|l| l.revived()) {
            self.warn(
                None,
                Warning::RevivedOnResume {
                    command: command.to_owned(),
                },
            )?;
        }
        match self.lock.and_then(|l| l.take_reserved()) {
            Some(run) => {
                self.info(format!("ran reserve command `{}`", run.command));
                self.journal.append(&run.event())
            }
            None => Ok(()),
        }
    }

    /// Runs the inventory's `release` once the marker is gone, and journals it; a failure is
    /// a journaled warning (the run's outcome stays what it was).
    pub(super) fn release_reservation(&mut self) {
        let Some(run) = self.lock.and_then(|l| l.release_reservation()) else {
            return;
        };
        let journaled = match &run.error {
            None => {
                self.info(format!("ran release command `{}`", run.command));
                self.journal.append(&run.event())
            }
            Some(e) => {
                let warning = Warning::ReleaseFailed(e.clone());
                self.journal
                    .append(&run.event())
                    .and_then(|()| self.warn(None, warning))
            }
        };
        if let Err(j) = journaled {
            self.notice(Warning::NotJournaled(one_line(&j)));
        }
    }

    pub(super) fn notify(&mut self, outcome: &Outcome) {
        let target = self.target;
        let (command, reason) = match outcome {
            Outcome::Finished => (target.on_finish.as_ref(), "finished".to_owned()),
            Outcome::Stopped(stop) => (target.on_failure.as_ref(), stop.to_string()),
            Outcome::Interrupted => (None, String::new()),
        };
        let Some(command) = command else { return };
        let dir = self.dir.root.display().to_string();
        let vars = [
            ("dir", dir.as_str()),
            ("reason", reason.as_str()),
            ("target", target.name.as_str()),
        ];
        match run_host(command, &vars, &target.base_dir, HOOK_TIMEOUT) {
            Ok(_) => self.info(format!("ran notification command `{command}`")),
            Err(e) => self.notice(Warning::Notification(one_line(&e))),
        }
    }
}
