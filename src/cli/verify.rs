//! `aba verify DIR`: cross-check a campaign's journal against its `samples.csv` and list every
//! difference (the check the engine makes after every point and at the end).

use std::path::Path;

use crate::{
    error::{Error, exit_code},
    results::{
        layout::ResultsDir,
        verify::{Scope, verify as check},
    },
};

/// `aba verify DIR`.
pub fn verify(dir: &Path) -> Result<u8, Error> {
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
    let found = check(
        &recipe,
        &results.journal_path(),
        &results.samples_path(),
        Scope::All,
    )
    .map_err(|source| Error::Verify {
        dir: dir.to_path_buf(),
        source,
    })?;
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
