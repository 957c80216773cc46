//! `aba report|status|verify PARENT` on a multi-target directory (docs/multi-target.md): each
//! target's own command, then what the targets say together. Running and resuming one is
//! [`crate::session::multi`].

use std::path::Path;

use crate::{
    analysis::{AnalyzeOptions, targets::TargetState},
    cli::status::StatusInputs,
    error::{Error, exit_code},
    json::{
        report::ReportDoc,
        targets::{MemberReport, MemberStatus, TargetsReportDoc, TargetsStatusDoc},
    },
    report::targets::state_text,
    results::manifest::Manifest,
    session::{
        Voice,
        multi::{combined, finish, worst},
    },
};

/// `aba report PARENT`: every target's reports rewritten, the combined report written and
/// printed; with `json`, the same files written and [`TargetsReportDoc`] printed instead.
pub fn report(parent: &Path, options: AnalyzeOptions, json: bool) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    // A target whose samples.csv does not match its journal is refused as `aba report
    // DIR/<target>` refuses it; one that cannot be checked is shown by its analysis.
    for (_, dir) in manifest.members(parent) {
        crate::cli::verify::refuse_if_it_differs(&dir)?;
    }
    // Each target's reports are rewritten as `aba report DIR/<target>` would, then the
    // combined report is made from the same analyses' inputs.
    let combined = combined(parent, &manifest, options, true)?;
    if !json {
        print!("{}", combined.text);
        return Ok(combined.code);
    }
    // The comparison with a recipe's reference, as `aba report DIR --json` prints it: the
    // one each target's rewritten reports were made from.
    let targets = combined
        .inputs
        .iter()
        .zip(&combined.reproductions)
        .map(|(input, reproduction)| MemberReport {
            target: &input.target,
            report: input
                .analysis
                .as_ref()
                .ok()
                .map(|a| ReportDoc::new(a, reproduction.as_ref())),
        })
        .collect();
    let doc = TargetsReportDoc::new(&combined.analysis, targets);
    print!("{}", crate::json::render(&doc));
    Ok(combined.code)
}

/// `aba status PARENT`: each target's status, one after the other; with `json`,
/// [`TargetsStatusDoc`].
pub fn status(parent: &Path, json: bool) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    if json {
        return status_json(parent, &manifest);
    }
    println!(
        "{} on {} targets, started {}",
        manifest.recipe,
        manifest.targets.len(),
        manifest.created
    );
    let states: Vec<TargetState> = manifest
        .members(parent)
        .map(|(_, dir)| TargetState::of(&dir))
        .collect();
    let width = manifest
        .targets
        .iter()
        .map(|m| m.target.chars().count())
        .max()
        .unwrap_or(0);
    for (member, state) in manifest.targets.iter().zip(&states) {
        println!("  {:<width$}  {}", member.target, state_text(state));
    }
    let mut codes = Vec::new();
    for (member, dir) in manifest.members(parent) {
        println!("\n== target {} ({}/) ==", member.target, member.dir);
        let code = match TargetState::of(&dir) {
            TargetState::NotStarted { why } => {
                println!("not started: {why}");
                exit_code::OK
            }
            _ => finish(
                &Voice::Member(member.target.clone()),
                crate::cli::status::status(&dir, false),
            ),
        };
        codes.push(code);
    }
    Ok(worst(codes))
}

/// [`status`]'s JSON: each target's `aba status --json` document under its name.
fn status_json(parent: &Path, manifest: &Manifest) -> Result<u8, Error> {
    let mut members = Vec::new();
    for (member, dir) in manifest.members(parent) {
        let progress = TargetState::of(&dir);
        let inputs = match progress {
            TargetState::NotStarted { .. } => None,
            _ => Some(StatusInputs::read(&dir)?),
        };
        members.push((member, progress, inputs));
    }
    let targets = members
        .iter()
        .map(|(member, progress, inputs)| MemberStatus {
            target: &member.target,
            dir: &member.dir,
            progress,
            status: inputs.as_ref().map(StatusInputs::doc),
        })
        .collect();
    let doc = TargetsStatusDoc::new(&manifest.recipe, &manifest.created, targets);
    print!("{}", crate::json::render(&doc));
    Ok(exit_code::OK)
}

/// `aba verify PARENT`: every started target's directory verified.
pub fn verify(parent: &Path) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    let mut codes = Vec::new();
    for (member, dir) in manifest.members(parent) {
        print!("{}: ", member.target);
        let code = match TargetState::of(&dir) {
            TargetState::NotStarted { why } => {
                println!("not started ({why}), nothing to verify");
                exit_code::OK
            }
            _ => finish(
                &Voice::Member(member.target.clone()),
                crate::cli::verify::verify(&dir),
            ),
        };
        codes.push(code);
    }
    Ok(worst(codes))
}
