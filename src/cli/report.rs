//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt` (then, when the recipe names a reference,
//! the comparison with it).

use std::path::Path;

use crate::{
    analysis::{
        AnalyzeOptions, analyze_read, analyze_with,
        targets::{TargetInput, TargetState, TargetsAnalysis},
    },
    error::Error,
    json::report::ReportDoc,
    json::targets::{LinkedMember, LinkedReportDoc, MemberReport, TargetsReportDoc},
    recipe::resolved::reference_copy,
    report::{
        targets::{render_markdown, render_text, render_tsv},
        write_reports, write_reproduction,
    },
    reproduction::{ReferenceComparison, compare_with_reference},
    results::atomic::write_atomic_no_link,
    results::layout::ResultsDir,
    results::manifest::Manifest,
    session::{
        conclude::{expects_end, reproduction_end, write_analysed},
        multi::combined,
        observer::Voice,
        verify::{checked_read, refuse_if_it_differs},
    },
};

/// `aba report DIR [--accept-edited-limits] [--no-profile] [--json]`: with `json`, the
/// reports are written all the same and the analysis is printed as JSON (docs/json.md)
/// instead of report.txt.
///
/// A directory whose `samples.csv` does not match its journal (`aba verify`) is refused
/// before any report is written: a report computed from an edited value would present it
/// as measured. (The end of `aba run` needs no second check: the engine verified the
/// directory before journaling it finished.)
pub fn report(dir: &Path, options: AnalyzeOptions, json: bool) -> Result<u8, Error> {
    let results = ResultsDir::open(dir);
    // Each file read once, for the check and the analysis; a directory that cannot be read
    // so is checked and analysed apart, and its errors named as they always were.
    let analysis = match checked_read(dir) {
        Some(checked) => {
            let (recipe, checked) = checked?;
            analyze_read(
                &results,
                options,
                &recipe,
                checked.journal,
                Some(checked.table),
            )?
        }
        None => {
            refuse_if_it_differs(dir)?;
            analyze_with(&results, options)?
        }
    };
    if json {
        print_json(&results, &analysis)
    } else {
        let written = write_analysed(&results, &analysis, &Voice::Alone)?;
        print!("{}", written.text);
        Ok(written.end.code())
    }
}

/// Writes the reports of `analysis` and prints the [`ReportDoc`] instead of the texts; the
/// same files are written and the same exit code and warnings given.
fn print_json(results: &ResultsDir, analysis: &crate::analysis::Analysis) -> Result<u8, Error> {
    write_reports(results, analysis)?;
    let mut end = expects_end(analysis, &Voice::Alone);
    let reproduction = match &analysis.campaign.reference {
        Some(written) => {
            let reproduction =
                compare_with_reference(&results.root, &reference_copy(&results.root, written))?;
            write_reproduction(results, &reproduction)?;
            end = end.max(reproduction_end(&reproduction, &Voice::Alone));
            Some(reproduction)
        }
        None => None,
    };
    let doc = ReportDoc::new(analysis, reproduction.as_ref());
    print!("{}", crate::json::render(&doc));
    Ok(end.code())
}

/// `aba report PARENT`: every target's reports rewritten, the combined report written and
/// printed; with `json`, the same files written and [`TargetsReportDoc`] printed instead.
pub fn report_parent(parent: &Path, options: AnalyzeOptions, json: bool) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    // A target whose samples.csv does not match its journal is refused as `aba report
    // DIR/<target>` refuses it; one that cannot be checked is shown by its analysis.
    for (_, dir) in manifest.members(parent) {
        refuse_if_it_differs(&dir)?;
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
    let targets = member_reports(&combined.inputs, &combined.reproductions)
        .map(|(input, report)| MemberReport {
            target: &input.target,
            report,
        })
        .collect();
    let doc = TargetsReportDoc::new(&combined.analysis, targets);
    print!("{}", crate::json::render(&doc));
    Ok(combined.code)
}

/// `aba report A B … --together [--to OUT] [--json]`: linked campaigns, two or more
/// campaigns of one question (the production and the exact config of one A/B). Each
/// directory is checked and its own reports rewritten as `aba report DIR` would; then one
/// report puts them side by side, each comparison with every campaign's own change,
/// interval and verdict and whether they agree. It is printed, and with `to` written into
/// that new or empty folder (report.txt, README.md, linked.tsv); nothing is written
/// anywhere else. The exit code is the worst of the campaigns' own.
pub fn report_together(
    dirs: &[std::path::PathBuf],
    options: AnalyzeOptions,
    to: Option<&Path>,
    json: bool,
) -> Result<u8, Error> {
    if dirs.len() < 2 {
        return Err(Error::ReportArgs {
            why: "--together links two or more campaigns; one was given".to_owned(),
            hint: "aba report A B --together, or aba report DIR for one campaign".to_owned(),
        });
    }
    for dir in dirs {
        if Manifest::is_parent(dir) {
            return Err(Error::ReportArgs {
                why: format!(
                    "{} is a multi-target run's parent, whose report already puts its targets side by side",
                    dir.display()
                ),
                hint: "give the targets' own directories (PARENT/<target>) to link them with other campaigns"
                    .to_owned(),
            });
        }
        refuse_if_it_differs(dir)?;
    }
    let names = linked_names(dirs);
    let mut inputs = Vec::new();
    let mut reproductions = Vec::new();
    let mut codes = Vec::new();
    for (dir, name) in dirs.iter().zip(&names) {
        let results = ResultsDir::open(dir);
        let state = TargetState::of(dir);
        let voice = Voice::Member(name.clone());
        let analysis = analyze_with(&results, options)?;
        let written = write_analysed(&results, &analysis, &voice)?;
        codes.push(written.end.code());
        reproductions.push(written.reproduction);
        inputs.push(TargetInput {
            target: name.clone(),
            dir: dir.display().to_string(),
            state,
            analysis: Ok(analysis),
        });
    }
    let combined = TargetsAnalysis::linked(&inputs);
    let text = crate::text::printable(&render_text(&combined)).into_owned();
    if let Some(out) = to {
        super::export::prepare_out(out, "a linked report")?;
        let readme = crate::text::printable(&render_markdown(&combined)).into_owned();
        let files: [(&str, Vec<u8>); 3] = [
            ("report.txt", text.clone().into_bytes()),
            ("README.md", readme.into_bytes()),
            ("linked.tsv", render_tsv(&combined)),
        ];
        for (name, bytes) in files {
            let path = out.join(name);
            write_atomic_no_link(&path, &bytes)
                .map_err(|source| crate::report::ReportError::Write { path, source })?;
        }
    }
    let code = codes.into_iter().max().unwrap_or(0);
    if json {
        let campaigns = member_reports(&inputs, &reproductions)
            .map(|(input, report)| LinkedMember {
                campaign: &input.target,
                dir: &input.dir,
                report,
            })
            .collect();
        print!(
            "{}",
            crate::json::render(&LinkedReportDoc::new(&combined, campaigns))
        );
    } else {
        print!("{text}");
    }
    Ok(code)
}

/// Each member's `aba report DIR --json` document beside it (`None` without an analysis),
/// with the comparison with its reference its rewritten reports were made from.
fn member_reports<'a>(
    inputs: &'a [TargetInput],
    reproductions: &'a [Option<ReferenceComparison>],
) -> impl Iterator<Item = (&'a TargetInput, Option<ReportDoc<'a>>)> {
    inputs
        .iter()
        .zip(reproductions)
        .map(|(input, reproduction)| {
            (
                input,
                input
                    .analysis
                    .as_ref()
                    .ok()
                    .map(|a| ReportDoc::new(a, reproduction.as_ref())),
            )
        })
}

/// Each linked campaign's name: its directory's name, with `-2`, `-3` … after a name an
/// earlier one took (two campaigns may sit in folders of one name under different parents).
fn linked_names(dirs: &[std::path::PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for dir in dirs {
        let base = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        let mut name = base.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        names.push(name);
    }
    names
}
