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
    if crate::reproduction::summary::is_mapping(reference) {
        return compare_summary(new, reference, outputs);
    }
    let reproduction = compare_paths(new, reference)?;
    let rendered = render_reproduction(&reproduction, &Templates::from_env())?;
    if let Some(path) = outputs.tsv {
        write_tsv(path, &rendered.tsv)?;
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

/// `aba compare NEW MAPPING.toml`: the new campaign against a summary reference, each
/// published change held to this campaign's interval; exit 4 when one is NOT_REPRODUCED.
fn compare_summary(new: &Path, mapping: &Path, outputs: CompareOutputs<'_>) -> Result<u8, Error> {
    let new = crate::reproduction::source::open_new(new)?;
    let reference = crate::reproduction::summary::read(mapping)?;
    let judged = crate::reproduction::summary_judge::judge(&new, &reference);
    if judged.series.is_empty() {
        return Err(
            crate::reproduction::error::ReproductionError::NothingInCommon {
                new: new.info.path.clone().into(),
                reference: mapping.to_path_buf(),
                new_series: new.series.iter().map(|s| s.label.clone()).collect(),
                reference_series: judged.only_reference.clone(),
            }
            .into(),
        );
    }
    if let Some(path) = outputs.tsv {
        write_tsv(
            path,
            &crate::report::summary_reproduction::render_tsv(&judged),
        )?;
    }
    if outputs.json {
        print!(
            "{}",
            crate::json::render(&crate::json::compare::CompareSummaryDoc::new(&judged))
        );
    } else {
        let text = crate::report::summary_reproduction::render_text(&judged);
        print!("{}", crate::text::printable(&text));
    }
    if judged.counts.not_reproduced > 0 {
        eprintln!("{NOT_REPRODUCED_WARNING}");
        return Ok(CampaignEnd::NotReproduced.code());
    }
    Ok(CampaignEnd::Finished.code())
}
