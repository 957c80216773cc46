//! `aba compare NEW REFERENCE`: a new campaign against a reference (another campaign's
//! results directory or a published bundle), printed as a mail-ready text or JSON, with the
//! TSV written where asked.

use std::path::Path;

use crate::{
    error::{CampaignEnd, Error},
    report::{ReportError, Templates, render_reproduction},
    reproduction::compare_paths,
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
/// [`crate::error::exit_code::NOT_REPRODUCED`] when a comparison is NOT_REPRODUCED.
pub fn compare(new: &Path, reference: &Path, outputs: CompareOutputs<'_>) -> Result<u8, Error> {
    let reproduction = compare_paths(new, reference)?;
    let rendered = render_reproduction(&reproduction, &Templates::from_env())?;
    if let Some(path) = outputs.tsv {
        // A bare file name is in the current folder, whose entry the atomic write syncs.
        let at = match path.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new(".").join(path),
            _ => path.to_path_buf(),
        };
        write_atomic(&at, &rendered.tsv).map_err(|source| ReportError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    if outputs.json {
        print!(
            "{}",
            crate::json::render(&crate::json::compare::CompareDoc::new(&reproduction))
        );
    } else {
        print!("{}", rendered.text);
    }
    let end = end_of(&reproduction);
    if end == CampaignEnd::NotReproduced {
        eprintln!("{NOT_REPRODUCED_WARNING}");
    }
    Ok(end.code())
}
