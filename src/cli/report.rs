//! `aba report DIR`: recompute a campaign's analysis from its raw files, rewrite the report
//! files in the directory, and print `report.txt` (then, when the recipe names a reference,
//! the comparison with it).

use std::path::Path;

use crate::{
    analysis::{AnalyzeOptions, analyze_with},
    cli::compare,
    error::{Error, exit_code},
    report::{write_reports, write_reproduction},
    reproduction::compare_paths,
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

/// [`write_and_print`] with analysis options. When the recipe names a reference
/// (`[expect] reference`), the campaign is then compared with its copy in the results
/// directory: `reproduction.txt` and `reproduction.tsv` are written and the text printed.
pub fn write_and_print_with(results: &ResultsDir, options: AnalyzeOptions) -> Result<u8, Error> {
    let analysis = analyze_with(results, options)?;
    let reports = write_reports(results, &analysis)?;
    print!("{}", reports.report_txt());
    let mut code = exit_code::OK;
    if analysis.summary.expects_reproduced == Some(false) {
        eprintln!("warning: a published result in [[expect]] was not reproduced");
        code = exit_code::NOT_REPRODUCED;
    }
    if analysis.campaign.reference.is_some() {
        let reproduction = compare_paths(&results.root, &results.reference_dir())?;
        let rendered = write_reproduction(results, &reproduction)?;
        print!("\n{}", rendered.text);
        if compare::exit_code_of(&reproduction) == exit_code::NOT_REPRODUCED {
            eprintln!("{}", compare::NOT_REPRODUCED_WARNING);
            code = exit_code::NOT_REPRODUCED;
        }
    }
    Ok(code)
}
