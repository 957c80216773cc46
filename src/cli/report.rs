//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt` (then, when the recipe names a reference,
//! the comparison with it).

use std::path::Path;

use crate::{
    analysis::{AnalyzeOptions, analyze_with},
    cli::{compare, run::Voice},
    error::{Error, exit_code},
    json::report::ReportDoc,
    report::{write_reports, write_reproduction},
    reproduction::compare_paths,
    results::layout::ResultsDir,
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
    // Checked first, so the check's memory is given back before the analysis takes its own.
    crate::cli::verify::refuse_if_it_differs(dir)?;
    let results = ResultsDir::open(dir);
    let analysis = analyze_with(&results, options)?;
    if json {
        print_json(&results, &analysis)
    } else {
        let written = write_analysed(&results, &analysis, &Voice::Alone)?;
        print!("{}", written.text);
        Ok(written.code)
    }
}

/// Writes the reports of `analysis` and prints the [`ReportDoc`] instead of the texts; the
/// same files are written and the same exit code and warnings given.
fn print_json(results: &ResultsDir, analysis: &crate::analysis::Analysis) -> Result<u8, Error> {
    write_reports(results, analysis)?;
    let mut code = expects_code(analysis, &Voice::Alone);
    let reproduction = match analysis.campaign.reference {
        Some(_) => {
            let reproduction = compare_paths(&results.root, &results.reference_dir())?;
            write_reproduction(results, &reproduction)?;
            code = code.max(reproduction_code(&reproduction, &Voice::Alone));
            Some(reproduction)
        }
        None => None,
    };
    let doc = ReportDoc::new(analysis, reproduction.as_ref());
    print!("{}", crate::json::render(&doc));
    Ok(code)
}

/// [`exit_code::NOT_REPRODUCED`] when an `[[expect]]` missed (said on stderr).
fn expects_code(analysis: &crate::analysis::Analysis, voice: &Voice) -> u8 {
    if analysis.summary.expects_reproduced == Some(false) {
        voice.say("warning: a published result in [[expect]] was not reproduced");
        exit_code::NOT_REPRODUCED
    } else {
        exit_code::OK
    }
}

/// [`exit_code::NOT_REPRODUCED`] when the comparison with the reference is (said on stderr).
fn reproduction_code(reproduction: &crate::reproduction::Reproduction, voice: &Voice) -> u8 {
    let code = compare::exit_code_of(reproduction);
    if code == exit_code::NOT_REPRODUCED {
        voice.say(compare::NOT_REPRODUCED_WARNING);
    }
    code
}

/// Analyses `results`, writes its reports and prints `report.txt`; also the end of
/// `aba run` and `aba resume`. Exits with [`exit_code::NOT_REPRODUCED`] when a published
/// result in `[[expect]]` was not reproduced.
pub fn write_and_print(results: &ResultsDir) -> Result<u8, Error> {
    write_and_print_with(results, AnalyzeOptions::default())
}

/// [`write_and_print`] with analysis options. When the recipe names a reference
/// (`[expect] reference`), the campaign is then compared with its copy in the results
/// directory: `reproduction.txt` and `reproduction.tsv` are written and the text printed.
pub fn write_and_print_with(results: &ResultsDir, options: AnalyzeOptions) -> Result<u8, Error> {
    let (code, text) = write_texts(results, options, &Voice::Alone)?;
    print!("{text}");
    Ok(code)
}

/// [`write_and_print`] for one target of a multi-target run: the same files and exit code,
/// nothing printed on stdout (the parent's combined report is), warnings prefixed.
pub fn write_quietly(results: &ResultsDir, voice: &Voice) -> Result<u8, Error> {
    write_texts(results, AnalyzeOptions::default(), voice).map(|(code, _)| code)
}

/// Writes every report of `results`; returns the exit code and the text `aba report`
/// prints (report.txt, then the comparison with the reference when there is one).
pub fn write_texts(
    results: &ResultsDir,
    options: AnalyzeOptions,
    voice: &Voice,
) -> Result<(u8, String), Error> {
    let analysis = analyze_with(results, options)?;
    write_analysed(results, &analysis, voice).map(|written| (written.code, written.text))
}

/// What [`write_analysed`] wrote.
pub(crate) struct Written {
    /// The exit code (an `[[expect]]` or the reference not reproduced).
    pub(crate) code: u8,
    /// report.txt, then the comparison with the reference when there is one.
    pub(crate) text: String,
    /// The comparison with the recipe's reference, when it names one.
    pub(crate) reproduction: Option<crate::reproduction::Reproduction>,
}

/// [`write_texts`] for an analysis already made (a multi-target report has made it for the
/// combined report).
pub(crate) fn write_analysed(
    results: &ResultsDir,
    analysis: &crate::analysis::Analysis,
    voice: &Voice,
) -> Result<Written, Error> {
    let reports = write_reports(results, analysis)?;
    let mut text = reports.report_txt();
    let mut code = expects_code(analysis, voice);
    let reproduction = match analysis.campaign.reference {
        Some(_) => {
            let reproduction = compare_paths(&results.root, &results.reference_dir())?;
            let rendered = write_reproduction(results, &reproduction)?;
            text.push('\n');
            text.push_str(&rendered.text);
            code = code.max(reproduction_code(&reproduction, voice));
            Some(reproduction)
        }
        None => None,
    };
    Ok(Written {
        code,
        text,
        reproduction,
    })
}
