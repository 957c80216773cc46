//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt`.

use std::path::Path;

use crate::{
    analysis::{AnalysisError, AnalyzeOptions, analyze_with},
    error::{Error, exit_code},
    report::{ReportError, write_reports},
    results::layout::ResultsDir,
};

/// `aba report DIR [--accept-edited-limits]`.
pub fn report(dir: &Path, options: AnalyzeOptions) -> Result<u8, Error> {
    write_and_print_with(&ResultsDir::open(dir), options)
}

/// Analyses `results`, writes its reports and prints `report.txt`; also the end of
/// `aba run` and `aba resume`. Exits with [`exit_code::EXPECT_MISSED`] when a published
/// result in `[[expect]]` was not reproduced.
pub fn write_and_print(results: &ResultsDir) -> Result<u8, Error> {
    write_and_print_with(results, AnalyzeOptions::default())
}

/// [`write_and_print`] with analysis options.
pub fn write_and_print_with(results: &ResultsDir, options: AnalyzeOptions) -> Result<u8, Error> {
    let analysis = analyze_with(results, options).map_err(analysis_error)?;
    let reports = write_reports(results, &analysis).map_err(report_error)?;
    print!("{}", reports.report_txt());
    if analysis.summary.expects_reproduced == Some(false) {
        eprintln!("warning: a published result in [[expect]] was not reproduced");
        return Ok(exit_code::EXPECT_MISSED);
    }
    Ok(exit_code::OK)
}

fn analysis_error(err: AnalysisError) -> Error {
    let hint = err.hint();
    with_hint(Error::context(err.to_string(), err), hint)
}

fn report_error(err: ReportError) -> Error {
    let hint = err.hint();
    with_hint(Error::context(err.to_string(), err), hint)
}

fn with_hint(error: Error, hint: Option<String>) -> Error {
    match hint {
        Some(h) => error.with_hint(h),
        None => error,
    }
}
