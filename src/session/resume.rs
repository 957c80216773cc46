//! Resuming a campaign: its journal read, its recorded bindings said, an amended recipe
//! checked and journaled, the target locked (a hung one power-cycled) and the engine run on.

use std::path::{Path, PathBuf};

use crate::{
    campaign::{
        amend::amendment,
        engine::{Outcome, RunOptions, Start},
    },
    error::{AmendFailure, CampaignEnd, Error},
    inventory::{Inventory, Target},
    kernel::binding::apply,
    origin::Origin,
    results::{
        journal::{Event, Journal, JournalWriter},
        layout::ResultsDir,
    },
    session::{
        conclude::conclude,
        inputs::Sources,
        launch::{execute, take_lock, target_error},
        observer::Voice,
    },
    target::connect::transport_for,
};

/// Resumes the one campaign in `dir_path`.
pub fn resume_one(
    dir_path: &Path,
    targets: Option<&PathBuf>,
    amend: Option<&Path>,
    files: &Sources,
    options: RunOptions,
    voice: &Voice,
) -> Result<CampaignEnd, Error> {
    let dir = ResultsDir::open(dir_path);
    let journal = Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir_path.to_path_buf(),
        resumable: true,
        source,
    })?;
    let Some(Event::Campaign {
        target: target_name,
        ..
    }) = journal.header().cloned()
    else {
        return Err(Error::NoHeader);
    };
    if journal.state().finished {
        voice.say(&format!(
            "the campaign in {} is already finished",
            dir_path.display()
        ));
        return conclude(&dir, Outcome::Finished, voice);
    }
    let inventory = Inventory::discover(targets.map(PathBuf::as_path))?;
    let target = inventory.target(&target_name)?;
    for line in recorded_kernels(&journal, &target)
        .into_iter()
        .chain(recorded_params(&journal, &target))
    {
        voice.say(&line);
    }
    if let Some(path) = amend {
        let params = journal.params().unwrap_or_default();
        let new = files.load(path, &inventory, crate::recipe::Params::Recorded(params))?;
        let changes = amend_recipe(&dir, &journal, &new, path)?;
        for change in &changes {
            voice.say(&format!("amended: {change}"));
        }
    }
    let mut transport = transport_for(&target).map_err(target_error(&target))?;
    let lock = take_lock(&target, &dir, transport.as_mut(), &options, Some(&journal))?;
    execute(
        &dir,
        &target,
        transport,
        &lock,
        options,
        Start::Resume,
        &[],
        voice,
    )
}

/// The lines that say a resumed campaign uses the parameter values its journal recorded at
/// the start ([`ResultsDir::load_recipe`] reads the recipe with them), never the inventory's
/// of now.
fn recorded_params(journal: &Journal, target: &Target) -> Vec<String> {
    match journal.params() {
        Some(params) => params
            .iter()
            .filter(|p| p.from != Origin::Recipe)
            .map(|p| {
                format!(
                    "parameter {} = {} (recorded when the campaign started: bound by {})",
                    p.name, p.value, p.from
                )
            })
            .collect(),
        None if !target.params.is_empty() => vec![format!(
            "parameters: as the recipe says; the campaign started without the inventory's              [targets.{}.params], which resume does not apply",
            target.name
        )],
        None => Vec::new(),
    }
}

/// The lines that say a resumed campaign boots the kernels its journal recorded at the start
/// ([`ResultsDir::load_recipe`] applies them), never the inventory's of now.
fn recorded_kernels(journal: &Journal, target: &Target) -> Vec<String> {
    match journal.kernels() {
        Some(kernels) => kernels
            .iter()
            .filter(|k| k.is_bound())
            .map(|k| {
                format!(
                    "kernel {}: {} (recorded when the campaign started: {})",
                    k.label,
                    k.release,
                    k.note().unwrap_or_default()
                )
            })
            .collect(),
        None if !target.kernels.is_empty() => vec![format!(
            "kernels: as the recipe says; the campaign started without the inventory's \
             [targets.{}.kernels], which resume does not apply",
            target.name
        )],
        None => Vec::new(),
    }
}

/// Replaces the campaign's recipe copy with `new` when only unfinished points use what
/// changed, and journals the amendment; returns the changes, for the caller to say.
fn amend_recipe(
    dir: &ResultsDir,
    journal: &Journal,
    new: &crate::recipe::Recipe,
    path: &Path,
) -> Result<Vec<String>, Error> {
    let old = dir.load_recipe()?;
    // The recorded bindings stay: compared unbound, every bound kernel or parameter would
    // read as changed. `new` was read with the recorded parameters; one the amended recipe
    // adds takes its default, as `load_recipe` will read it.
    let mut new = new.clone();
    if let Some(kernels) = journal.kernels() {
        apply(&mut new, kernels);
    }
    let new = &new;
    let done: std::collections::BTreeSet<String> =
        journal.state().done_attempts().into_keys().collect();
    let failed = |source: AmendFailure| Error::Amend {
        recipe: path.to_path_buf(),
        source,
    };
    let changes = amendment(&old, new, &done).map_err(|e| failed(e.into()))?;
    dir.copy_recipe(new).map_err(|source| {
        failed(AmendFailure::Copy {
            dir: dir.root.clone(),
            source,
        })
    })?;
    JournalWriter::open(&dir.journal_path())
        .and_then(|mut writer| {
            writer.append(&Event::Amended {
                previous_sha256: old.sha256.clone(),
                sha256: new.sha256.clone(),
                recipe: path.display().to_string(),
                changes: changes.clone(),
                time: crate::results::journal::now_rfc3339(),
            })
        })
        .map_err(|e| failed(AmendFailure::Journal(e)))?;
    Ok(changes)
}
