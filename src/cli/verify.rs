//! `aba verify DIR`: cross-check a campaign's journal against its `samples.csv` and list every
//! difference (the check the engine makes after every point and at the end).

use std::path::Path;

use crate::{
    analysis::targets::TargetState,
    error::{Error, exit_code, worst},
    results::{manifest::Manifest, verify::Verification},
    session::{multi::finish, observer::Voice, verify::check_dir},
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

/// `aba verify PARENT`: every started target's directory verified.
pub fn verify_parent(parent: &Path) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    let mut codes = Vec::new();
    for (member, dir) in manifest.members(parent) {
        print!("{}: ", member.target);
        let code = match TargetState::of(&dir) {
            TargetState::NotStarted { why } => {
                println!("not started ({why}), nothing to verify");
                exit_code::OK
            }
            _ => finish(&Voice::Member(member.target.clone()), verify(&dir)),
        };
        codes.push(code);
    }
    Ok(worst(codes))
}
