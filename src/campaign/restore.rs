//! Putting back the settings a campaign changed, from aba's ledger on the machine.
//!
//! Tuning records the machine's own values in the target's ledger
//! ([`crate::campaign::ledger`]) and journals them (`tuning_saved`) before its first write, so
//! they survive whatever happens to the runner: `aba restore DIR` writes them back after a
//! crash, [`guarded`] does it when aba panics mid-campaign (the panic then continues: exit
//! 101) and when a run on a machine that is not rebooted ends with values still pending. A
//! `tuning_restored` record closes them; a boot other than the one they were saved in needs
//! nothing (a reboot reset them) and is recorded the same way.
//!
//! The journal only says that something is pending; what is written comes from the ledger,
//! each file checked against the recipe copy ([`tuning::check_restorable`]). A value the
//! journal names that the ledger does not hold is never written: a results directory is
//! input from a stranger, and these writes run as root.

use std::{
    any::Any,
    fmt,
    panic::{AssertUnwindSafe, catch_unwind, resume_unwind},
    path::PathBuf,
    time::{Duration, Instant},
};

use crate::{
    campaign::{
        ledger::{CampaignKey, Ledger, LedgerError},
        tuning::{self, Saved, TuneError},
    },
    kernel::proof::{FactsError, read_facts},
    recipe::{Recipe, RecipeError},
    results::{
        journal::{Event, Journal, JournalError, JournalWriter, first_line_of, now_rfc3339},
        layout::ResultsDir,
    },
    target::transport::{Transport, TransportError},
};

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restored {
    /// The journal holds no value that still needs putting back.
    Nothing,
    /// These many files were written back, from the ledger.
    Written {
        /// How many.
        count: usize,
        /// What the journal names besides, which the ledger does not hold: not written.
        unbacked: Vec<Unbacked>,
    },
    /// The target booted again since the values were saved, which reset them.
    Rebooted {
        /// The boot the values were saved in.
        saved_in: String,
        /// The boot running now.
        now: String,
    },
}

/// A file a `tuning_saved` record names that aba's ledger does not hold: never written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unbacked {
    /// The journal.
    pub journal: PathBuf,
    /// The record's line.
    pub line: usize,
    /// Its place in the record's `values`.
    pub index: usize,
    /// The file it names.
    pub path: String,
}

impl fmt::Display for Unbacked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: field `values[{}].path`: `{}` is not in aba's ledger for this campaign and boot, so it was not written",
            self.journal.display(),
            self.line,
            self.index,
            crate::text::quoted(&self.path)
        )
    }
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
    /// The ledger could not be used.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The recipe copy, which says which sysctls may be put back, cannot be read.
    #[error("cannot read the campaign's recipe copy, which says which sysctls may be put back")]
    Recipe(#[source] RecipeError),
    /// The journal names values to put back on this boot; the ledger holds none.
    #[error(
        "{}:{line}: field `values`: the journal names {count} setting(s) to put back on this boot, but aba's ledger on the target ({ledger}) holds none for this campaign, so nothing was written. aba writes back only what it recorded itself on the machine (docs/security.md): this results directory comes from elsewhere, or an aba older than the ledger ran the campaign. Reboot the target, which resets every setting, or put back by hand those of the values below you know to be the machine's own (`sysctl -w NAME=VALUE`, or `echo VALUE > FILE`):\n{by_hand}",
        journal.display()
    )]
    NotInLedger {
        /// The journal.
        journal: PathBuf,
        /// The `tuning_saved` record's line.
        line: usize,
        /// How many values it names.
        count: usize,
        /// The ledger folder.
        ledger: String,
        /// The values it names, escaped, one per line.
        by_hand: String,
    },
    /// A ledger entry names a file aba never tunes for this recipe.
    #[error(
        "{entry}: `{}` is not written back: {reason}",
        crate::text::quoted(path)
    )]
    NotAllowed {
        /// The ledger file.
        entry: String,
        /// The file it names.
        path: String,
        /// Why it is refused.
        reason: String,
    },
}

/// At most this many values listed for a hand restore.
const LISTED: usize = 20;

/// The machine's own values that `campaign` recorded on boot `boot_id`, from the ledger,
/// each checked against `recipe` (the copy in the results directory); `None` when the ledger
/// holds none.
pub fn ledger_values(
    ledger: &Ledger,
    transport: &mut dyn Transport,
    campaign: &CampaignKey,
    boot_id: &str,
    recipe: &Recipe,
) -> Result<Option<Saved>, RestoreError> {
    let Some(entry) = ledger.tuning(transport, campaign, boot_id)? else {
        return Ok(None);
    };
    let entry_path = ledger.tuning_path(campaign, boot_id);
    let mut saved = Vec::new();
    for v in entry.values {
        tuning::check_restorable(&v.path, &v.value, recipe).map_err(|reason| {
            RestoreError::NotAllowed {
                entry: entry_path.clone(),
                path: v.path.clone(),
                reason,
            }
        })?;
        saved.push((v.path, v.value));
    }
    Ok(Some(saved))
}

/// The refusal for values `claimed` (by the `tuning_saved` record of `boot_id` in `dir`'s
/// journal) that the ledger does not hold.
pub fn not_in_ledger(
    dir: &ResultsDir,
    ledger: &Ledger,
    boot_id: &str,
    claimed: &Saved,
) -> RestoreError {
    let journal = dir.journal_path();
    let by_hand: Vec<String> = claimed
        .iter()
        .take(LISTED)
        .map(|(path, value)| {
            format!(
                "  {} = {}",
                crate::text::quoted(path),
                crate::text::quoted(value)
            )
        })
        .chain((claimed.len() > LISTED).then(|| format!("  … and {} more", claimed.len() - LISTED)))
        .collect();
    RestoreError::NotInLedger {
        line: saved_line(&journal, boot_id),
        journal,
        count: claimed.len(),
        ledger: ledger.dir().to_owned(),
        by_hand: by_hand.join("\n"),
    }
}

/// The line of the `tuning_saved` record of `boot_id` that the journal's state keeps (the
/// first of that boot); 0 when it cannot be found again.
fn saved_line(journal: &std::path::Path, boot_id: &str) -> usize {
    first_line_of(
        journal,
        "\"tuning_saved\"",
        |e| matches!(e, Event::TuningSaved { boot_id: b, .. } if b == boot_id),
    )
    .ok()
    .flatten()
    .unwrap_or(0)
}

/// Writes back the values the campaign in `dir` changed and has not restored, if the target
/// still runs the boot they were saved in, and journals that they were. What is written is
/// what `ledger` holds for the campaign and boot, never what the journal says.
pub fn restore_pending(
    dir: &ResultsDir,
    ledger: &Ledger,
    transport: &mut dyn Transport,
) -> Result<Restored, RestoreError> {
    let journal_path = dir.journal_path();
    if !journal_path.is_file() {
        return Ok(Restored::Nothing);
    }
    let journal = Journal::read_for_analysis(&journal_path)?;
    let Some(pending) = journal.state().pending_restore else {
        return Ok(Restored::Nothing);
    };
    let campaign = CampaignKey::of(journal.header());
    let facts = read_facts(transport)?;
    let (restored, note) = if facts.boot_id == pending.boot_id {
        let recipe = dir.load_recipe().map_err(RestoreError::Recipe)?;
        let Some(values) = ledger_values(ledger, transport, &campaign, &pending.boot_id, &recipe)?
        else {
            return Err(not_in_ledger(
                dir,
                ledger,
                &pending.boot_id,
                &pending.values,
            ));
        };
        tuning::restore(transport, &values)?;
        let line = saved_line(&journal_path, &pending.boot_id);
        let unbacked = pending
            .values
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| !values.iter().any(|(p, _)| p == path))
            .map(|(index, (path, _))| Unbacked {
                journal: journal_path.clone(),
                line,
                index,
                path: path.clone(),
            })
            .collect();
        (
            Restored::Written {
                count: values.len(),
                unbacked,
            },
            None,
        )
    } else {
        let note = format!(
            "nothing written: the target rebooted since (boot_id {} now, {} when saved)",
            facts.boot_id, pending.boot_id
        );
        (
            Restored::Rebooted {
                saved_in: pending.boot_id.clone(),
                now: facts.boot_id,
            },
            Some(note),
        )
    };
    JournalWriter::open(&journal_path)?.append(&Event::TuningRestored {
        time: now_rfc3339(),
        note,
    })?;
    if matches!(restored, Restored::Written { .. }) {
        ledger.forget_tuning(transport, &campaign, &pending.boot_id)?;
    }
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
    ledger: &Ledger,
    transport: &mut dyn Transport,
    restore_at_end: bool,
    run: impl FnOnce(&mut dyn Transport) -> T,
) -> T {
    match catch_unwind(AssertUnwindSafe(|| run(&mut *transport))) {
        Ok(value) => {
            if restore_at_end {
                report(dir, ledger, transport, "after the campaign");
            }
            value
        }
        Err(payload) => {
            let text = panic_text(payload.as_ref());
            crate::interrupt::reset();
            let _ = transport.reconnect(Instant::now() + Duration::from_secs(30));
            report(dir, ledger, transport, "after an internal error");
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
fn report(dir: &ResultsDir, ledger: &Ledger, transport: &mut dyn Transport, when: &str) {
    match restore_pending(dir, ledger, transport) {
        Ok(Restored::Nothing) => {}
        Ok(Restored::Written { count, unbacked }) => {
            eprintln!("aba: {when}, restored {count} setting(s) the campaign had changed");
            for u in unbacked {
                eprintln!("aba: warning: {u}");
            }
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
    use super::{RestoreError, Restored, guarded, restore_pending};
    use crate::{
        campaign::{
            ledger::{CampaignKey, Ledger},
            tuning::tests::SYSCTL_RECIPE,
        },
        kernel::proof::read_facts,
        results::{
            journal::{Event, JOURNAL_FORMAT, Journal, JournalWriter, SavedValue},
            layout::ResultsDir,
        },
        target::local::LocalTransport,
    };

    /// A results directory (with its recipe copy) whose journal saved `file`'s value "orig"
    /// on `boot_id`, and a ledger in a folder of its own.
    fn campaign_with_saved(
        file: &std::path::Path,
        boot_id: &str,
    ) -> (tempfile::TempDir, ResultsDir, Ledger) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = ResultsDir::open(&tmp.path().join("results"));
        std::fs::create_dir(&dir.root).expect("mkdir");
        std::fs::write(dir.recipe_path(), SYSCTL_RECIPE).expect("recipe copy");
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
        let ledger = Ledger::at(&tmp.path().join("ledger").display().to_string());
        (tmp, dir, ledger)
    }

    /// A panic inside a guarded campaign still unwinds and is journaled; a value the journal
    /// names that aba's ledger does not hold is not written, even then.
    #[test]
    fn a_panic_goes_on_and_never_writes_a_value_the_ledger_lacks() {
        let knob = tempfile::NamedTempFile::new().expect("file");
        let mut transport = LocalTransport::new();
        let boot = read_facts(&mut transport).expect("facts").boot_id;
        let (_tmp, dir, ledger) = campaign_with_saved(knob.path(), &boot);
        std::fs::write(knob.path(), "changed\n").expect("write");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            guarded(&dir, &ledger, &mut transport, false, |_t| -> () {
                panic!("injected");
            });
        }));
        assert!(caught.is_err(), "the panic continues");
        assert_eq!(
            std::fs::read_to_string(knob.path()).expect("read"),
            "changed\n"
        );
        let state = Journal::read(&dir.journal_path()).expect("journal").state();
        assert!(state.pending_restore.is_some(), "nothing was put back");
        assert!(state.stopped.is_some_and(|r| r.contains("injected")));
        let e = restore_pending(&dir, &ledger, &mut transport).expect_err("refused");
        assert!(
            matches!(e, RestoreError::NotInLedger { line: 2, .. }),
            "{e}"
        );
        let text = e.to_string();
        assert!(text.contains("journal.jsonl:2: field `values`"), "{text}");
        assert!(text.contains("= orig"), "{text}");
    }

    /// A ledger entry that names a file aba never tunes for the recipe is refused too.
    #[test]
    fn a_ledger_file_outside_the_recipe_and_knobs_is_not_written() {
        let knob = tempfile::NamedTempFile::new().expect("file");
        std::fs::write(knob.path(), "now\n").expect("write");
        let mut transport = LocalTransport::new();
        let boot = read_facts(&mut transport).expect("facts").boot_id;
        let (_tmp, dir, ledger) = campaign_with_saved(knob.path(), &boot);
        let campaign = CampaignKey::of(
            Journal::read(&dir.journal_path())
                .expect("journal")
                .header(),
        );
        let saved = vec![SavedValue {
            path: knob.path().display().to_string(),
            value: "orig".into(),
        }];
        ledger
            .record_tuning(&mut transport, &campaign, &boot, "r", saved)
            .expect("recorded");
        let e = restore_pending(&dir, &ledger, &mut transport).expect_err("refused");
        assert!(matches!(e, RestoreError::NotAllowed { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(knob.path()).expect("read"), "now\n");
    }

    /// Values saved in another boot are not written: that boot's reboot reset them.
    #[test]
    fn values_of_another_boot_are_left_alone() {
        let knob = tempfile::NamedTempFile::new().expect("file");
        std::fs::write(knob.path(), "now\n").expect("write");
        let (_tmp, dir, ledger) = campaign_with_saved(knob.path(), "another-boot");
        let mut transport = LocalTransport::new();
        let r = restore_pending(&dir, &ledger, &mut transport).expect("restore");
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
