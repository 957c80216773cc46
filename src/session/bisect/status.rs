//! `aba bisect status DIR`: where a bisection stands, from its journal alone (read as
//! untrusted input, nothing written): the report a finished or stopped bisection keeps, made
//! afresh from the decisions journaled so far, and the step whose campaign is under way.

use std::path::Path;

use super::{
    drive::{JOURNAL, input_of},
    failure::BisectFailure,
    journal, report,
};
use crate::{
    bisect::{Action, Bisection},
    error::Error,
};

/// The status text of the bisection in `dir`.
pub fn status(dir: &Path) -> Result<String, Error> {
    let path = dir.join(JOURNAL);
    let read = journal::read(&path).map_err(BisectFailure::from)?;
    let input = input_of(&read.commits, &read.setup);
    let bisection =
        Bisection::replay(input, &read.records).map_err(|source| BisectFailure::Core {
            journal: path.clone(),
            source,
        })?;
    let mut out = report::render(&read.commits, &bisection, &read.setup.series);
    if !matches!(bisection.next(), Action::Done(_)) {
        out.push_str(&format!(
            "\nNot finished: {} decisions journaled; the next step's campaign, if it started, is \
             steps/{:02}-… (`aba status` on it shows its points).\n",
            read.records.len(),
            read.records.len() + 1
        ));
    }
    Ok(out)
}
