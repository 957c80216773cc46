//! Renders all six report files and writes them into the results directory, each atomically
//! (a reader sees the old file or the new one, never half of one); likewise the two files of
//! a comparison with the recipe's reference.

use std::path::{Path, PathBuf};

use crate::{
    analysis::Analysis,
    report::{
        audit_tsv, comparison_tsv,
        context::Context,
        error::ReportError,
        layout::{WIDTH, fit_width},
        matched_build_tsv, points_tsv,
        reproduction_text::{RenderedReproduction, render_reproduction},
        source_identity_tsv, svg,
        template::{README_MD, REPORT_TXT, Templates},
    },
    reproduction::ReferenceComparison,
    results::{atomic::write_atomic, layout::ResultsDir},
};

/// The report files every campaign has, in the order they are written (a campaign that
/// booted kernels built on the host also has `source-identity.tsv`, one whose probes ran
/// `probes.tsv`, one whose kernels' builds could be compared `matched-build.tsv`).
pub const FILES: [&str; 6] = [
    "points.tsv",
    "comparison.tsv",
    "run-audit.tsv",
    "samples.svg",
    "report.txt",
    "README.md",
];

/// The rendered report files.
#[derive(Clone, Debug)]
pub struct Reports {
    /// (file name, content), in [`FILES`] order.
    pub files: Vec<(&'static str, Vec<u8>)>,
}

impl Reports {
    /// The content of `name`, if it was rendered.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.as_slice())
    }

    /// `report.txt` as text.
    #[must_use]
    pub fn report_txt(&self) -> String {
        String::from_utf8_lossy(self.get("report.txt").unwrap_or_default()).into_owned()
    }
}

/// Renders every report file of `analysis` in memory; `root` is the results directory (the
/// README lists the files present there).
pub fn render_reports(
    analysis: &Analysis,
    root: &Path,
    templates: &Templates,
) -> Result<Reports, ReportError> {
    // The two big files (every value in points.tsv, every dot in samples.svg) render on
    // threads of their own while the templates render here.
    std::thread::scope(|scope| {
        let points = scope.spawn(|| points_tsv::render(analysis));
        let tables = scope.spawn(|| {
            (
                comparison_tsv::render(analysis),
                audit_tsv::render(analysis),
                svg::render(analysis),
            )
        });
        let mut context = Context::new(analysis, root);
        // Whatever a user's template does, no line of the mail report exceeds 72 columns, and
        // limits edited after the run are said at the top of every report.
        let notice = context.text.preregistration.clone();
        let key = notice
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>()
            .join(" ");
        let at_top = |rendered: String, quote: &str| {
            let flat = rendered.split_whitespace().collect::<Vec<_>>().join(" ");
            if notice.is_empty() || flat.contains(&key) {
                rendered
            } else {
                let lines: Vec<String> = notice.lines().map(|l| format!("{quote}{l}")).collect();
                format!("{}\n\n{rendered}", lines.join("\n"))
            }
        };
        let text = templates
            .render(REPORT_TXT, &context)
            .map(|t| fit_width(&at_top(t, ""), WIDTH));
        let readme = text.as_ref().ok().map(|t| {
            context.report_txt = Some(t.clone());
            templates.render(README_MD, &context)
        });
        let readme = readme.map(|r| r.map(|r| at_top(r, "> ")));
        let (comparison, audit, samples) = tables
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let points = points
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let report_txt = text?;
        let readme = readme.expect("invariant: rendered when report.txt was")?;
        let mut files = vec![
            ("points.tsv", points),
            ("comparison.tsv", comparison),
            ("run-audit.tsv", audit),
            ("samples.svg", samples),
            ("report.txt", report_txt.into_bytes()),
            ("README.md", readme.into_bytes()),
        ];
        if let Some(sources) = source_identity_tsv::render(analysis) {
            files.push((source_identity_tsv::FILE, sources));
        }
        if let Some(probes) = crate::report::probes::render_tsv(analysis) {
            files.push((crate::report::probes::FILE, probes));
        }
        if let Some(matched) = matched_build_tsv::render(&analysis.matched_builds) {
            files.push((matched_build_tsv::FILE, matched));
        }
        Ok(Reports { files })
    })
}

/// Renders the reports with the templates of [`Templates::from_env`] and writes them into
/// `results`, each file atomically. Returns what was written.
pub fn write_reports(results: &ResultsDir, analysis: &Analysis) -> Result<Reports, ReportError> {
    write_reports_with(results, analysis, &Templates::from_env())
}

/// [`write_reports`] with explicit templates.
pub fn write_reports_with(
    results: &ResultsDir,
    analysis: &Analysis,
    templates: &Templates,
) -> Result<Reports, ReportError> {
    // Read before the rewrite: the comparison.tsv in the directory is the one last written.
    let moved = crate::report::rules_moved::moved(&results.root, analysis);
    let mut reports = render_reports(analysis, &results.root, templates)?;
    let notice = crate::report::rules_moved::notice(&moved);
    if !notice.is_empty() {
        let text = crate::report::layout::wrap(&notice, WIDTH, "");
        for (name, content) in &mut reports.files {
            let quote = match *name {
                "report.txt" => "",
                "README.md" => "> ",
                _ => continue,
            };
            let lines: Vec<String> = text.lines().map(|l| format!("{quote}{l}")).collect();
            let mut top = lines.join("\n").into_bytes();
            top.extend_from_slice(b"\n\n");
            top.append(content);
            *content = top;
        }
    }
    for (name, content) in &reports.files {
        let path: PathBuf = results.root.join(name);
        write_atomic(&path, content).map_err(|source| ReportError::Write { path, source })?;
    }
    Ok(reports)
}

/// The files of a campaign's comparison with its recipe's reference.
pub const REPRODUCTION_FILES: [&str; 2] = ["reproduction.txt", "reproduction.tsv"];

/// The text and TSV of a comparison with a reference, whichever kind it is.
pub fn render_reference_comparison(
    compared: &ReferenceComparison,
) -> Result<RenderedReproduction, ReportError> {
    match compared {
        ReferenceComparison::Evidence(r) => render_reproduction(r, &Templates::from_env()),
        ReferenceComparison::Summary(s) => Ok(RenderedReproduction {
            text: crate::text::printable(&crate::report::summary_reproduction::render_text(s))
                .into_owned(),
            tsv: crate::report::summary_reproduction::render_tsv(s),
        }),
    }
}

/// Renders `compared` (the campaign in `results` against its recipe's reference) and
/// writes `reproduction.txt` and `reproduction.tsv` into `results`, each atomically.
pub fn write_reproduction(
    results: &ResultsDir,
    compared: &ReferenceComparison,
) -> Result<RenderedReproduction, ReportError> {
    let rendered = render_reference_comparison(compared)?;
    for (name, content) in REPRODUCTION_FILES
        .iter()
        .zip([rendered.text.as_bytes(), &rendered.tsv])
    {
        let path: PathBuf = results.root.join(name);
        write_atomic(&path, content).map_err(|source| ReportError::Write { path, source })?;
    }
    Ok(rendered)
}
