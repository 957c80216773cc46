//! `aba clean DIR`: every trace a campaign left on its target, whether it finished or was
//! killed: aba's one-shot boot-loader entries and their copies (a killed switch leaves them),
//! the kernels it installed, its work directory there and its lock marker.
//!
//! A results directory is input from a stranger, so nothing here follows a path the journal
//! names: the journal gives only the target's name (which must be in the inventory) and
//! whether anything was installed. What is removed comes from places aba owns on that target:
//! the switch method's own entries (each carries aba's marker), the ledger's items, the
//! inventory's work directory with this directory's name in it, the marker if it is this
//! campaign's.

use std::path::{Path, PathBuf};

use crate::{
    build::install::{InstallError, remove},
    campaign::ledger::{CampaignKey, Ledger},
    error::Error,
    inventory::Target,
    results::{
        journal::{Event, Journal, first_line_of},
        layout::ResultsDir,
    },
    session::taken::{Taken, header_of, journal_of},
    target::{quote::sh_quote, transport::Transport},
};

/// What `aba clean` did on the target.
#[derive(Debug, Default)]
pub struct Cleaned {
    /// The target's name.
    pub target: String,
    /// What went, one item a line (`removed /boot/grub/custom.cfg`).
    pub removed: Vec<String>,
    /// What the ledger lists that is no longer aba's and so stayed, one reason each.
    pub refused: Vec<String>,
    /// The campaign changed settings that were never put back: `aba restore DIR` does that.
    pub settings_pending: bool,
}

/// Removes every trace of the campaign in `dir_path` from its target (see the module's words).
/// Refuses while a campaign holds the target, as `aba restore` does.
pub fn clean(dir_path: &Path, targets: Option<&PathBuf>) -> Result<Cleaned, Error> {
    let dir = ResultsDir::open(dir_path);
    let journal = journal_of(dir_path, Journal::read)?;
    let (name, recipe_name) = header_of(&journal)?;
    let claimed: usize = journal
        .events
        .iter()
        .map(|e| match e {
            Event::Installed { installed, .. } => installed.len(),
            _ => 0,
        })
        .sum();
    // A campaign running now would lose its entries and marker from under it: the target
    // is taken first, which refuses while a live campaign holds it (and waits for a killed
    // switch's reboot to answer).
    let Taken {
        target,
        mut transport,
        lock,
    } = Taken::take(&dir, &name, &recipe_name, targets)?;
    let mut cleaned = Cleaned {
        target: name.clone(),
        settings_pending: journal.state().pending_restore.is_some(),
        ..Cleaned::default()
    };
    let removal = remove_traces(&target, &dir, &journal, claimed, transport.as_mut());
    // The marker goes whether it was the killed run's (kept) or this command's own.
    let marker = lock.release_marker(transport.as_mut());
    transport.disconnect();
    let (removed, refused) = removal?;
    cleaned.removed = removed;
    cleaned.refused = refused;
    if let Err(e) = marker {
        return Err(Error::lock(
            format!("cannot remove the marker on `{name}`"),
            e,
        ));
    }
    Ok(cleaned)
}

/// The boot loader's one-shot leftovers, the installed kernels, the work directory.
fn remove_traces(
    target: &Target,
    dir: &ResultsDir,
    journal: &Journal,
    claimed: usize,
    transport: &mut dyn Transport,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let name = &target.name;
    let mut removed =
        target
            .switch
            .method()
            .clean(transport)
            .map_err(|source| Error::CleanBootLoader {
                target: name.clone(),
                source: Box::new(source),
            })?;
    let mut refused = Vec::new();
    if claimed > 0 {
        let failed = |source: InstallError| Error::Clean {
            target: name.clone(),
            source,
        };
        let ledger = Ledger::of(target);
        let campaign = CampaignKey::of(journal.header());
        let Some(entry) = ledger
            .installed(transport, &campaign)
            .map_err(|e| failed(e.into()))?
        else {
            let journal_path = dir.journal_path();
            let line = first_line_of(&journal_path, "\"installed\"", |e| {
                matches!(e, Event::Installed { .. })
            })
            .ok()
            .flatten()
            .unwrap_or(0);
            return Err(failed(InstallError::NotInLedger {
                journal: journal_path,
                line,
                count: claimed,
                ledger: ledger.dir().to_owned(),
            }));
        };
        let (gone, kept) = remove(transport, &entry).map_err(failed)?;
        let at = ledger.installed_path(&campaign);
        refused.extend(kept.iter().map(|reason| format!("{at}: {reason}")));
        if kept.is_empty() {
            // Everything the ledger listed is gone or was never there.
            ledger
                .set_installed(transport, &campaign, None)
                .map_err(|e| failed(e.into()))?;
        }
        removed.extend(gone);
    }
    if let Some(workdir) = dir.target_workdir(target.workdir.as_deref()) {
        // Only a directory (never a link) at the path the engine made for this campaign.
        let w = sh_quote(&workdir);
        let out = transport
            .exec(
                &format!(
                    "if [ -d {w} ] && [ ! -L {w} ]; then rm -rf -- {w} && echo removed {w}; fi"
                ),
                std::time::Duration::from_secs(120),
            )
            .map_err(|source| Error::Connect {
                target: name.clone(),
                source,
            })?;
        removed.extend(
            out.stdout_text()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned),
        );
    }
    Ok((removed, refused))
}
