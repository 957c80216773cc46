//! Putting back the settings a campaign changed, from the journal alone.
//!
//! Tuning journals the machine's own values (`tuning_saved`) before its first write, so they
//! survive whatever happens to the runner: `aba restore DIR` writes them back after a crash,
//! [`guarded`] does it when aba panics mid-campaign (the panic then continues: exit 101) and
//! when a run on a machine that is not rebooted ends with values still pending. A
//! `tuning_restored` record closes them; a boot other than the one they were saved in needs
//! nothing (a reboot reset them) and is recorded the same way.

use std::{
    any::Any,
    panic::{AssertUnwindSafe, catch_unwind, resume_unwind},
    time::{Duration, Instant},
};

use crate::{
    campaign::tuning::{self, TuneError},
    kernel::proof::{FactsError, read_facts},
    results::{
        journal::{Event, Journal, JournalError, JournalWriter, now_rfc3339},
        layout::ResultsDir,
    },
    target::transport::{Transport, TransportError},
};

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restored {
    /// The journal holds no value that still needs putting back.
    Nothing,
    /// These many files were written back.
    Written(usize),
    /// The target booted again since the values were saved, which reset them.
    Rebooted {
        /// The boot the values were saved in.
        saved_in: String,
        /// The boot running now.
        now: String,
    },
}

/// Why settings could not be put back.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The journal could not be read or appended to.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The target could not be reached.
    #[error("cannot reach the target")]
    Transport(#[from] TransportError),
    /// The target's boot could not be read.
    #[error("cannot read the target's boot_id")]
    Facts(#[from] FactsError),
    /// Writing the values back failed.
    #[error(transparent)]
    Tune(#[from] TuneError),
}

/// Writes back the values the campaign in `dir` changed and has not restored, if the target
/// still runs the boot they were saved in, and journals that they were.
pub fn restore_pending(
    dir: &ResultsDir,
    transport: &mut dyn Transport,
) -> Result<Restored, RestoreError> {
    let journal_path = dir.journal_path();
    if !journal_path.is_file() {
        return Ok(Restored::Nothing);
    }
    let state = Journal::read_for_analysis(&journal_path)?.state();
    let Some(pending) = state.pending_restore else {
        return Ok(Restored::Nothing);
    };
    let facts = read_facts(transport)?;
    let (restored, note) = if facts.boot_id == pending.boot_id {
        tuning::restore(transport, &pending.values)?;
        (Restored::Written(pending.values.len()), None)
    } else {
        let note = format!(
            "nothing written: the target rebooted since (boot_id {} now, {} when saved)",
            facts.boot_id, pending.boot_id
        );
        (
            Restored::Rebooted {
                saved_in: pending.boot_id,
                now: facts.boot_id,
            },
            Some(note),
        )
    };
    JournalWriter::open(&journal_path)?.append(&Event::TuningRestored {
        time: now_rfc3339(),
        note,
    })?;
    Ok(restored)
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Runs a campaign (`run`, which drives `transport`) so that no setting it changed stays
/// changed when it ends: after a panic the journal's pending values are written back (on the
/// boot they were saved in) and the panic goes on; after a normal end on a target that is not
/// rebooted between points (`restore_at_end`), values still pending are written back too.
pub fn guarded<T>(
    dir: &ResultsDir,
    transport: &mut dyn Transport,
    restore_at_end: bool,
    run: impl FnOnce(&mut dyn Transport) -> T,
) -> T {
    match catch_unwind(AssertUnwindSafe(|| run(&mut *transport))) {
        Ok(value) => {
            if restore_at_end {
                report(dir, transport, "after the campaign");
            }
            value
        }
        Err(payload) => {
            let text = panic_text(payload.as_ref());
            crate::interrupt::reset();
            let _ = transport.reconnect(Instant::now() + Duration::from_secs(30));
            report(dir, transport, "after an internal error");
            let recorded = JournalWriter::open(&dir.journal_path()).and_then(|mut journal| {
                journal.append(&Event::Stopped {
                    reason: format!(
                        "aba stopped on an internal error (a bug, please report it): {text}"
                    ),
                    time: now_rfc3339(),
                })
            });
            if let Err(e) = recorded {
                eprintln!(
                    "aba: after an internal error, the journal could not record it: {}",
                    crate::causes::one_line(&e)
                );
            }
            resume_unwind(payload)
        }
    }
}

/// [`restore_pending`], saying on stderr what it did.
fn report(dir: &ResultsDir, transport: &mut dyn Transport, when: &str) {
    match restore_pending(dir, transport) {
        Ok(Restored::Nothing) => {}
        Ok(Restored::Written(n)) => {
            eprintln!("aba: {when}, restored {n} setting(s) the campaign had changed");
        }
        Ok(Restored::Rebooted { .. }) => {}
        Err(e) => eprintln!(
            "aba: {when}, could not restore the settings the campaign changed: {}; run `aba restore {}`",
            crate::causes::one_line(&e),
            dir.root.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{Restored, guarded, restore_pending};
    use crate::{
        kernel::proof::read_facts,
        results::{
            journal::{Event, JOURNAL_FORMAT, Journal, JournalWriter, SavedValue},
            layout::ResultsDir,
        },
        target::local::LocalTransport,
    };

    /// A results directory whose journal saved `file`'s value "orig" on this boot.
    fn campaign_with_saved(
        file: &std::path::Path,
        boot_id: &str,
    ) -> (tempfile::TempDir, ResultsDir) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = ResultsDir::open(tmp.path());
        let mut j = JournalWriter::open(&dir.journal_path()).expect("journal");
        j.append(&Event::Campaign {
            format: JOURNAL_FORMAT,
            aba: "test".into(),
            name: "t".into(),
            recipe_sha256: "x".into(),
            target: "local".into(),
            points: vec!["a".into()],
            time: "t".into(),
            limits: None,
        })
        .expect("append");
        j.append(&Event::TuningSaved {
            point: "a".into(),
            attempt: 1,
            boot_id: boot_id.into(),
            values: vec![SavedValue {
                path: file.to_string_lossy().into_owned(),
                value: "orig".into(),
            }],
            time: "t".into(),
        })
        .expect("append");
        (tmp, dir)
    }

    /// A panic inside a guarded campaign writes the journaled values back, closes them in the
    /// journal, and still unwinds.
    #[test]
    fn a_panic_restores_the_saved_values_and_goes_on() {
        let knob = tempfile::NamedTempFile::new().expect("file");
        let mut transport = LocalTransport::new();
        let boot = read_facts(&mut transport).expect("facts").boot_id;
        let (_tmp, dir) = campaign_with_saved(knob.path(), &boot);
        std::fs::write(knob.path(), "changed\n").expect("write");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            guarded(&dir, &mut transport, false, |_t| -> () {
                panic!("injected");
            });
        }));
        assert!(caught.is_err(), "the panic continues");
        assert_eq!(
            std::fs::read_to_string(knob.path()).expect("read"),
            "orig\n"
        );
        let state = Journal::read(&dir.journal_path()).expect("journal").state();
        assert_eq!(state.pending_restore, None);
        assert!(state.stopped.is_some_and(|r| r.contains("injected")));
        // Nothing is left to do the second time.
        assert_eq!(
            restore_pending(&dir, &mut transport).expect("restore"),
            Restored::Nothing
        );
    }

    /// Values saved in another boot are not written: that boot's reboot reset them.
    #[test]
    fn values_of_another_boot_are_left_alone() {
        let knob = tempfile::NamedTempFile::new().expect("file");
        std::fs::write(knob.path(), "now\n").expect("write");
        let (_tmp, dir) = campaign_with_saved(knob.path(), "another-boot");
        let mut transport = LocalTransport::new();
        let r = restore_pending(&dir, &mut transport).expect("restore");
        assert!(matches!(r, Restored::Rebooted { .. }), "{r:?}");
        assert_eq!(std::fs::read_to_string(knob.path()).expect("read"), "now\n");
        assert_eq!(
            Journal::read(&dir.journal_path())
                .expect("journal")
                .state()
                .pending_restore,
            None
        );
    }
}
