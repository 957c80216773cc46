//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt` (then, when the recipe names a reference,
//! the comparison with it).

use std::path::Path;

use crate::{
    analysis::{AnalyzeOptions, analyze_read, analyze_with},
    error::Error,
    json::report::ReportDoc,
    json::targets::{MemberReport, TargetsReportDoc},
    report::{write_reports, write_reproduction},
    reproduction::compare_paths,
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
    let reproduction = match analysis.campaign.reference {
        Some(_) => {
            let reproduction = compare_paths(&results.root, &results.reference_dir())?;
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
