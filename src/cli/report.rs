//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt`.

use std::path::Path;

use crate::{
    analysis::{AnalyzeOptions, analyze_with},
    error::{Error, exit_code},
    report::write_reports,
    results::layout::ResultsDir,
};

/// `aba report DIR [--accept-edited-limits]`.
pub fn report(dir: &Path, options: AnalyzeOptions) -> Result<u8, Error> {
    write_and_print_with(&ResultsDir::open(dir), options)
}

/// Analyses `results`, writes its reports and prints `report.txt`; also the end of
/// `aba run` and `aba resume`. Exits with [`exit_code::NOT_REPRODUCED`] when a published
/// result in `[[expect]]` was not reproduced.
pub fn write_and_print(results: &ResultsDir) -> Result<u8, Error> {
    write_and_print_with(results, AnalyzeOptions::default())
}

/// [`write_and_print`] with analysis options.
pub fn write_and_print_with(results: &ResultsDir, options: AnalyzeOptions) -> Result<u8, Error> {
    let analysis = analyze_with(results, options)?;
    let reports = write_reports(results, &analysis)?;
    print!("{}", reports.report_txt());
    if analysis.summary.expects_reproduced == Some(false) {
        eprintln!("warning: a published result in [[expect]] was not reproduced");
        return Ok(exit_code::NOT_REPRODUCED);
    }
    Ok(exit_code::OK)
}
