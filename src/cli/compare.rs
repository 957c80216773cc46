//! `aba compare NEW REFERENCE`: a new campaign against a reference (another campaign's
//! results directory, a published bundle, or a summary reference's mapping file), printed as a mail-ready text or JSON, with the
//! TSV written where asked.

use std::path::Path;

use crate::{
    error::{CampaignEnd, Error},
    report::{ReportError, write::render_reference_comparison},
    reproduction::{ReferenceComparison, compare_with_reference},
    results::atomic::write_atomic,
    session::conclude::{NOT_REPRODUCED_WARNING, end_of},
};

/// What `aba compare` writes besides its text.
#[derive(Clone, Copy, Debug, Default)]
pub struct CompareOutputs<'a> {
    /// Write the TSV here.
    pub tsv: Option<&'a Path>,
    /// Print JSON instead of the text.
    pub json: bool,
}

/// `aba compare NEW REFERENCE [--tsv FILE] [--json]`; exits with
/// [`crate::error::exit_code::NOT_REPRODUCED`] when a comparison is NOT_REPRODUCED. The
/// reference is evidence with samples (a results directory or a bundle) or a summary
/// reference (a mapping file of a table of means).
pub fn compare(new: &Path, reference: &Path, outputs: CompareOutputs<'_>) -> Result<u8, Error> {
    let compared = compare_with_reference(new, reference)?;
    let rendered = render_reference_comparison(&compared)?;
    if let Some(path) = outputs.tsv {
        write_tsv(path, &rendered.tsv)?;
    }
    if outputs.json {
        let doc = match &compared {
            ReferenceComparison::Evidence(r) => {
                crate::json::render(&crate::json::compare::CompareDoc::new(r))
            }
            ReferenceComparison::Summary(s) => {
                crate::json::render(&crate::json::compare::CompareSummaryDoc::new(s))
            }
        };
        print!("{doc}");
    } else {
        print!("{}", rendered.text);
    }
    let end = end_of(&compared);
    if end == CampaignEnd::NotReproduced {
        eprintln!("{NOT_REPRODUCED_WARNING}");
    }
    Ok(end.code())
}

/// Writes the TSV at `path` (a bare file name is in the current folder, whose entry the
/// atomic write syncs).
fn write_tsv(path: &Path, data: &[u8]) -> Result<(), Error> {
    let at = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new(".").join(path),
        _ => path.to_path_buf(),
    };
    write_atomic(&at, data).map_err(|source| {
        ReportError::Write {
            path: path.to_path_buf(),
            source,
        }
        .into()
    })
}
