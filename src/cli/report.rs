//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt`.

use std::path::Path;

use crate::{
    analysis::analyze,
    error::{Error, exit_code},
    report::write_reports,
    results::layout::ResultsDir,
};

/// `aba report DIR`.
pub fn report(dir: &Path) -> Result<u8, Error> {
    write_and_print(&ResultsDir::open(dir))
}

/// Analyses `results`, writes its reports and prints `report.txt`; also the end of
/// `aba run` and `aba resume`. Exits with [`exit_code::EXPECT_MISSED`] when a published
/// result in `[[expect]]` was not reproduced.
pub fn write_and_print(results: &ResultsDir) -> Result<u8, Error> {
    let analysis = analyze(results)?;
    let reports = write_reports(results, &analysis)?;
    print!("{}", reports.report_txt());
    if analysis.summary.expects_reproduced == Some(false) {
        eprintln!("warning: a published result in [[expect]] was not reproduced");
        return Ok(exit_code::EXPECT_MISSED);
    }
    Ok(exit_code::OK)
}
