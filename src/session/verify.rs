//! The check of a results directory before its figures are computed: a `samples.csv` that
//! does not match its journal (`aba verify`) is refused, so no report presents an edited
//! value as measured.

use std::path::Path;

use crate::{
    error::Error,
    recipe::Recipe,
    results::{
        layout::ResultsDir,
        verify::{Checked, Scope, Verification, verify as check, verify_and_read},
    },
};

/// The check of the whole of `dir`.
pub fn check_dir(dir: &Path) -> Result<Verification, Error> {
    let results = ResultsDir::open(dir);
    if !results.journal_path().is_file() {
        return Err(Error::NoJournal {
            dir: dir.to_path_buf(),
        });
    }
    let recipe = results.load_recipe().map_err(|e| {
        Error::Recipe(crate::error::Inline {
            doing: format!(
                "cannot read the recipe copy {}",
                results.recipe_path().display()
            ),
            error: e,
        })
    })?;
    check(
        &recipe,
        &results.journal_path(),
        &results.samples_path(),
        Scope::All,
    )
    .map_err(|source| Error::Verify {
        dir: dir.to_path_buf(),
        source,
    })
}

/// `aba report`'s check of `dir`: refused when its samples.csv does not match its journal.
/// A directory that cannot be checked (samples.csv missing or unreadable among them) is left
/// to the analysis, whose errors name the file, line and field.
pub fn refuse_if_it_differs(dir: &Path) -> Result<(), Error> {
    if !ResultsDir::open(dir).samples_path().exists() {
        return Ok(());
    }
    match check_dir(dir) {
        Ok(found) => refuse_differences(dir, &found),
        Err(_) => Ok(()),
    }
}

/// `aba report`'s check of `dir` and its reading for the analysis at once (each file read
/// once, [`verify_and_read`]): refused as [`refuse_if_it_differs`] refuses it. `None` when
/// the directory cannot be read so (no samples.csv, an unreadable or damaged file): the
/// caller then checks it and analyses it apart, whose errors name the file, line and field.
pub fn checked_read(dir: &Path) -> Option<Result<(Recipe, Checked), Error>> {
    let results = ResultsDir::open(dir);
    let regular = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file());
    if !regular(&results.journal_path())
        || !regular(&results.samples_path())
        || !results.recipe_path().is_file()
    {
        return None;
    }
    let recipe = results.load_recipe().ok()?;
    let checked = verify_and_read(&recipe, &results.journal_path(), &results.samples_path())?;
    Some(refuse_differences(dir, &checked.found).map(|()| (recipe, checked)))
}

/// `aba report`'s refusal of `dir` when `found` has differences: no figure computed from a
/// samples.csv that does not match its journal is the measured one.
fn refuse_differences(dir: &Path, found: &Verification) -> Result<(), Error> {
    if found.is_clean() {
        return Ok(());
    }
    Err(Error::SamplesDisagree {
        dir: dir.to_path_buf(),
        count: found.differences.len(),
        differences: found.describe(),
    })
}
