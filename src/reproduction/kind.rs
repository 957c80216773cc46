//! What a path on the command line is: an aba results directory (it has a journal), a
//! published bundle (a folder of `*-points.tsv`, or one of them), or neither, which is an
//! error naming the path rather than a guess.

use std::path::Path;

use crate::{
    reproduction::{bundle::locate, error::ReproductionError},
    results::layout::ResultsDir,
};

/// The two kinds of evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An aba results directory.
    Results,
    /// A published bundle.
    Bundle,
}

/// What `path` is.
pub fn kind(path: &Path) -> Result<Kind, ReproductionError> {
    if crate::reproduction::summary::is_mapping(path) {
        return Err(ReproductionError::SummaryNotHere {
            path: path.to_path_buf(),
        });
    }
    let meta = std::fs::metadata(path).map_err(|source| ReproductionError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() && ResultsDir::open(path).journal_path().is_file() {
        return Ok(Kind::Results);
    }
    if locate(path)?.is_some() {
        return Ok(Kind::Bundle);
    }
    Err(ReproductionError::NotEvidence {
        path: path.to_path_buf(),
    })
}
