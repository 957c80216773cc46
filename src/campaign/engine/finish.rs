//! How a run ends, whatever ended it: settings tuning changed on a machine that is not
//! rebooted are put back, aba's one-shot boot entries are removed, the last record (`finished`, `stopped`, `interrupted`) is journaled
//! (a run whose end could not be recorded never counts as finished), the target's lock marker
//! is removed, the lab scheduler's reservation is released, the inventory's notification
//! command runs, and the connection is dropped.

use super::{Engine, Outcome, Stop};
use crate::{
    campaign::{events::Warning, tuning},
    causes::one_line,
    interrupt,
    results::journal::{Event, JournalError, now_rfc3339},
};

impl Engine<'_> {
    pub(super) fn finish(&mut self, outcome: Outcome) -> Outcome {
        let mut unrecorded = Vec::new();
        if let Err(e) = self.restore_tuning() {
            unrecorded.push(e);
        }
        // aba's one-shot boot entries go whatever ended the run; a target that cannot be
        // reached keeps them until the next run on it, which removes them first.
        if let Err(e) = self.clean_boot_loader(None, None) {
            unrecorded.push(e);
        }
        let record = match &outcome {
            Outcome::Finished => Event::Finished {
                time: now_rfc3339(),
            },
            Outcome::Stopped(stop) => Event::Stopped {
                reason: stop.to_string(),
                time: now_rfc3339(),
            },
            Outcome::Interrupted => Event::Interrupted {
                time: now_rfc3339(),
            },
        };
        if let Err(e) = self.journal.append(&record) {
            unrecorded.push(e);
        }
        // The journal could not say how the run ended: never report success then.
        let outcome = if unrecorded.is_empty() {
            outcome
        } else {
            Outcome::Stopped(Stop::Unrecorded {
                outcome: Box::new(outcome),
                errors: unrecorded,
            })
        };
        self.release_marker();
        self.release_reservation();
        self.notify(&outcome);
        self.transport.disconnect();
        outcome
    }

    /// Puts back what tuning changed on a machine that is not rebooted between points.
    fn restore_tuning(&mut self) -> Result<(), JournalError> {
        let Some(saved) = self.saved_tuning.take() else {
            return Ok(());
        };
        // An interrupt already stopped the workload; restoring must still run.
        let restored = interrupt::set_aside(|| tuning::restore(self.transport, &saved));
        match restored {
            Err(e) => self.warn(None, Warning::NotRestored(one_line(&e))),
            Ok(()) => {
                self.info("previous settings restored");
                self.journal.append(&Event::TuningRestored {
                    time: now_rfc3339(),
                    note: None,
                })?;
                let Some(boot) = self.tuning_saved_boot.clone() else {
                    return Ok(());
                };
                let forgotten = interrupt::set_aside(|| {
                    self.ledger
                        .forget_tuning(self.transport, &self.campaign, &boot)
                });
                match forgotten {
                    Ok(()) => Ok(()),
                    Err(e) => self.warn(None, Warning::NotRestored(one_line(&e))),
                }
            }
        }
    }

    fn release_marker(&mut self) {
        let Some(lock) = self.lock else { return };
        // After a Ctrl-C too: a marker left behind makes the next campaign on the target
        // refuse it as held by a killed one. A second Ctrl-C stops the removal.
        let transport = &mut *self.transport;
        if let Err(e) = interrupt::set_aside(|| lock.release_marker(transport))
            && let Err(j) = self.warn(None, Warning::MarkerKept(one_line(&e)))
        {
            self.notice(Warning::NotJournaled(one_line(&j)));
        }
    }
}
