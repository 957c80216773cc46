//! `aba verify DIR`: cross-check a campaign's journal against its `samples.csv` and list every
//! difference (the check the engine makes after every point and at the end).

use std::path::Path;

use crate::{
    error::{Error, exit_code},
    results::{
        layout::ResultsDir,
        verify::{Scope, Verification, verify as check},
    },
};

/// `aba verify DIR`.
pub fn verify(dir: &Path) -> Result<u8, Error> {
    let found = check_dir(dir)?;
    let tail = if found.unjournaled_tail_rows > 0 {
        format!(
            "; {} row(s) of an unfinished attempt were written just before the runner stopped, without their journal record (they never count)",
            found.unjournaled_tail_rows
        )
    } else {
        String::new()
    };
    if found.is_clean() {
        println!(
            "verified: {} journaled run(s) and {} row(s) agree{tail}",
            found.runs, found.rows
        );
        if let Some(note) = unverified_values_note(&found) {
            println!("{note}");
        }
        return Ok(exit_code::OK);
    }
    println!(
        "the journal and samples.csv of {} disagree: {} difference(s) among {} run(s) and {} row(s){tail}",
        dir.display(),
        found.differences.len(),
        found.runs,
        found.rows
    );
    println!("{}", found.describe());
    Ok(exit_code::VERIFY_FAILED)
}

/// What a clean check could not look at: runs journaled without their values and row hashes
/// were matched to their rows, but an edited value among them would not show.
pub fn unverified_values_note(found: &Verification) -> Option<String> {
    match found.runs_without_values {
        0 => None,
        n if n == found.runs => Some(
            "note: the journal records no values: samples.csv cannot be verified value by value (written by an older aba)"
            .to_owned()),
        n => Some(format!(
            "note: {n} of the {} journaled run(s) have no values in the journal: their rows cannot be verified value by value (written by an older aba)",
            found.runs
        )),
    }
}

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
