//! The target of a campaign that ended or was killed, taken for a command that acts on it
//! afterwards (`aba restore`, `aba clean`): the journal's header names the target (which must
//! be in the inventory), the target is locked as a campaign would lock it (refused while a
//! live campaign holds it; a killed campaign's own marker is kept as it was) and connected.

use std::{
    path::{Path, PathBuf},
    time::Instant,
};

use crate::{
    campaign::lock::{Holder, TargetLock},
    error::Error,
    inventory::{Inventory, Target},
    results::{
        journal::{Event, Journal},
        layout::ResultsDir,
    },
    target::{
        connect::{machine_key, transport_for},
        transport::Transport,
    },
};

/// The target's name and the recipe's, from a journal's header.
pub(crate) fn header_of(journal: &Journal) -> Result<(String, String), Error> {
    match journal.header() {
        Some(Event::Campaign { target, name, .. }) => Ok((target.clone(), name.clone())),
        _ => Err(Error::NoHeader),
    }
}

/// A journal as a results directory's, or the error that says `dir_path` is none.
pub(crate) fn journal_of(
    dir_path: &Path,
    read: impl FnOnce(&Path) -> Result<Journal, crate::results::journal::JournalError>,
) -> Result<Journal, Error> {
    read(&ResultsDir::open(dir_path).journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir_path.to_path_buf(),
        resumable: false,
        source,
    })
}

/// A campaign's target, locked and connected.
pub(crate) struct Taken {
    /// The target, from the inventory.
    pub(crate) target: Target,
    /// Connected.
    pub(crate) transport: Box<dyn Transport>,
    /// Held until dropped.
    pub(crate) lock: TargetLock,
}

impl Taken {
    /// Takes the target `name` of the campaign in `dir` (recipe `recipe`).
    pub(crate) fn take(
        dir: &ResultsDir,
        name: &str,
        recipe: &str,
        targets: Option<&PathBuf>,
    ) -> Result<Taken, Error> {
        let target = Inventory::discover(targets.map(PathBuf::as_path))?.target(name)?;
        let unusable = |source| Error::Target {
            target: name.to_owned(),
            source,
        };
        let mut transport = transport_for(&target).map_err(unusable)?;
        let key = machine_key(&target).map_err(unusable)?;
        let holder = Holder::this_process(&dir.root, recipe, name);
        let lock = TargetLock::acquire_for_restore(&target, &key, holder, transport.as_mut())
            .map_err(|e| Error::lock(format!("cannot take target `{name}`"), e))?;
        transport
            .reconnect(Instant::now() + target.connect_window())
            .map_err(|source| Error::Connect {
                target: name.to_owned(),
                source,
            })?;
        Ok(Taken {
            target,
            transport,
            lock,
        })
    }
}
