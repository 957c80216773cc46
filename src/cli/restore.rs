//! `aba restore DIR`: put back the sysctls and CPU frequency settings a campaign changed,
//! without resuming it (after a crash, a SIGKILL, a lost terminal). The journal says whether
//! something is pending; what is written is what aba's ledger on the target recorded
//! (`aba::campaign::ledger`), never what the journal names.

use std::path::{Path, PathBuf};

use crate::{
    campaign::{
        ledger::Ledger,
        restore::{Restored, restore_pending},
    },
    error::{Error, exit_code},
    results::{journal::Journal, layout::ResultsDir},
    session::taken::{Taken, header_of, journal_of},
};

/// Restores what the campaign in `dir_path` changed and journaled, if the target still runs
/// that boot.
pub fn restore(dir_path: &Path, targets: Option<&PathBuf>) -> Result<u8, Error> {
    let dir = ResultsDir::open(dir_path);
    let journal = journal_of(dir_path, Journal::read_for_analysis)?;
    let (name, recipe_name) = header_of(&journal)?;
    let state = journal.state();
    if state.pending_restore.is_none() {
        println!("nothing to restore: the campaign changed no setting, or they were put back");
        return Ok(exit_code::OK);
    }
    // A campaign running on the target now would have its settings pulled from under it.
    let Taken {
        target,
        mut transport,
        lock,
    } = Taken::take(&dir, &name, &recipe_name, targets)?;
    let restored = restore_pending(&dir, &Ledger::of(&target), transport.as_mut());
    // A campaign that was killed held the target's marker, and `aba resume` takes it back:
    // that marker was left as it was (naming the killed process, never this one). A marker
    // this restore wrote (the campaign had ended, or its marker was gone) goes again.
    let killed = !state.finished && state.stopped.is_none();
    if !(killed && lock.kept_own_marker())
        && let Err(e) = lock.release_marker(transport.as_mut())
    {
        eprintln!("warning: {e}");
    }
    transport.disconnect();
    match restored {
        Ok(Restored::Nothing) => println!("nothing to restore"),
        Ok(Restored::Written { count, unbacked }) => {
            println!(
                "restored {count} setting(s) on target `{name}` to their values before the campaign"
            );
            for u in &unbacked {
                eprintln!("warning: {u}");
            }
        }
        Ok(Restored::Rebooted { saved_in, now }) => println!(
            "nothing to restore: target `{name}` rebooted since the settings were changed (boot_id {now} now, {saved_in} then), which reset them"
        ),
        Err(source) => {
            return Err(Error::Restore {
                target: name,
                source,
            });
        }
    }
    Ok(exit_code::OK)
}
