//! Markdown tables for the evidence bundle's `README.md`: kernels, points with their proven
//! boots, verdicts, and the files of the bundle. Cells are escaped (`|`), numbers rounded
//! as in the mail report.

use std::path::Path;

use crate::{
    analysis::{Analysis, CandidateResult},
    kernel::binding::BoundKernel,
    point_name::point_name,
    report::{
        number::{nu, signed_pct},
        verdict_text::{label_with_boots, level},
    },
    stats::{Confidence, RatioInterval, VerdictLabel},
};

/// A Markdown table: header, separator, rows (cells escaped).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(header.iter().map(|h| (*h).to_owned()).collect());
    out.push_str(&line(header.iter().map(|_| "---".to_owned()).collect()));
    for row in rows {
        out.push_str(&line(row.iter().map(|c| escape(c)).collect()));
    }
    out
}

/// Escapes what would break a table cell.
fn escape(cell: &str) -> String {
    if cell.is_empty() {
        return "-".to_owned();
    }
    cell.replace('|', "\\|").replace('\n', " ")
}

fn code(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("`{text}`")
    }
}

/// Kernels: label, release, boots done (points done when they shared one boot), points,
/// requested command line.
#[must_use]
pub fn kernels(analysis: &Analysis) -> String {
    let rows: Vec<Vec<String>> = analysis
        .kernels
        .iter()
        .map(|k| {
            vec![
                k.label.clone(),
                match k.bound.as_ref().and_then(BoundKernel::note) {
                    Some(note) => format!("{} ({note})", code(&k.release)),
                    None => code(&k.release),
                },
                format!("{} of {}", k.booted.len(), k.planned),
                k.booted
                    .iter()
                    .map(|p| point_name(p, &k.label))
                    .collect::<Vec<_>>()
                    .join(", "),
                code(&k.cmdline.join(" ")),
            ]
        })
        .collect();
    // Points that shared one boot (the `local` target) are not boots.
    let done = if analysis.audit.shared_boot.is_some() {
        "done"
    } else {
        "boots"
    };
    table(
        &["kernel", "release", done, "points", "requested cmdline"],
        &rows,
    )
}

/// Where each kernel built on the host came from (empty when none was): its version string,
/// image SHA-256, config, git tree and patches, as `source-identity.tsv` has them.
#[must_use]
pub fn sources(analysis: &Analysis) -> String {
    let builds = super::source_identity_tsv::builds(analysis);
    if builds.is_empty() {
        return String::new();
    }
    let short = |sha: &str| code(&sha[..sha.len().min(16)]);
    let rows: Vec<Vec<String>> = builds
        .into_iter()
        .map(|(label, b)| {
            vec![
                label.to_owned(),
                code(&b.version.to_string()),
                short(&b.image.sha256),
                b.config
                    .as_ref()
                    .map(|c| short(&c.sha256))
                    .unwrap_or_default(),
                b.source
                    .as_ref()
                    .map(|s| {
                        format!(
                            "{} ({}{})",
                            code(&s.describe),
                            &s.commit[..s.commit.len().min(12)],
                            if s.dirty { ", dirty" } else { "" }
                        )
                    })
                    .unwrap_or_default(),
                b.patches
                    .iter()
                    .map(|p| {
                        let name = std::path::Path::new(&p.path)
                            .file_name()
                            .map_or_else(|| p.path.clone(), |n| n.to_string_lossy().into_owned());
                        format!("{} {}", code(&name), short(&p.sha256))
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                proven_boots(analysis, label),
            ]
        })
        .collect();
    table(
        &[
            "kernel",
            "version string",
            "image sha256",
            "config sha256",
            "git",
            "patches",
            "build proven at",
        ],
        &rows,
    )
}

/// The counted boots of kernel `label` whose build was proven, with how its config compared.
fn proven_boots(analysis: &Analysis, label: &str) -> String {
    analysis
        .audit
        .attempts
        .iter()
        .filter(|a| a.kernel == label && a.outcome == crate::analysis::AttemptOutcome::Done)
        .map(|a| match &a.build {
            Some(proof) => format!("{} ({})", point_name(&a.point, &a.kernel), proof.config),
            None => format!("{} (NOT PROVEN)", point_name(&a.point, &a.kernel)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Points in boot order, by name (`a#1`) with the identifier that names their files in
/// `env/` and `raw/`, and the proven boot of their done attempt.
#[must_use]
pub fn points(analysis: &Analysis) -> String {
    let rows: Vec<Vec<String>> = analysis
        .points
        .iter()
        .map(|p| {
            vec![
                p.order.to_string(),
                point_name(&p.label, &p.kernel),
                code(&p.label),
                p.kernel.clone(),
                p.done_attempt
                    .map_or_else(|| "not done".to_owned(), |a| a.to_string()),
                code(p.boot_id.as_deref().unwrap_or("")),
                code(p.release.as_deref().unwrap_or("")),
                code(p.cmdline.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    table(
        &[
            "#",
            "point",
            "id",
            "kernel",
            "attempt",
            "boot_id",
            "release",
            "/proc/cmdline",
        ],
        &rows,
    )
}

fn interval(ci: Option<&RatioInterval>) -> String {
    match ci {
        Some(RatioInterval {
            bounds: Some((lo, hi)),
            dof,
            ..
        }) => format!(
            "[{}, {}] (ν = {})",
            signed_pct(*lo),
            signed_pct(*hi),
            nu(*dof)
        ),
        Some(ci) => format!("not estimable (ν = {})", nu(ci.dof)),
        None => String::new(),
    }
}

/// `**SIGNAL** (ν = 1: one control pair), slower`: the direction only for a verdict that
/// claims one.
fn verdict_cell(c: &CandidateResult, shared: bool) -> String {
    let label = format!("**{}**", c.label);
    let label = label_with_boots(&label, c.verdict.label, c.verdict.confidence.dof(), shared)
        .replace('\u{a0}', " ");
    let claim = matches!(
        c.verdict.label,
        VerdictLabel::Signal | VerdictLabel::BelowGate
    );
    match c.direction.as_deref().filter(|_| claim) {
        Some(d) => format!("{label}, {d}"),
        None => label,
    }
}

/// `boot-level CI excludes 0`, `boot-level CI includes 0 (ν = 1)`, `within-boot only`, …
fn confidence_cell(c: &CandidateResult, shared: bool) -> String {
    let level = level(shared);
    match c.verdict.confidence {
        Confidence::BootCiExcludesZero { .. } => format!("{level} CI excludes 0"),
        Confidence::BootCiIncludesZero { dof } => {
            format!("{level} CI includes 0 (ν = {})", nu(dof))
        }
        Confidence::BootCiNotEstimable { dof } => {
            format!("{level} CI not estimable (ν = {})", nu(dof))
        }
        Confidence::WithinOnly => "within-boot only".to_owned(),
        Confidence::NotEstimable => "no interval".to_owned(),
    }
}

/// One row per series and candidate: change, drop-first change, intervals, verdict and its
/// confidence statement.
#[must_use]
pub fn verdicts(analysis: &Analysis) -> String {
    let shared = analysis.audit.shared_boot.is_some();
    let mut rows = Vec::new();
    for s in &analysis.series {
        let Some(all) = &s.all else { continue };
        for c in &all.comparisons {
            let df = s
                .drop_first
                .as_ref()
                .and_then(|d| d.comparisons.iter().find(|d| d.same_pair(c)));
            rows.push(vec![
                s.label.clone(),
                c.shown(),
                signed_pct(c.comparison.change_pct),
                df.map_or_else(String::new, |d| signed_pct(d.comparison.change_pct)),
                interval(c.comparison.ci_boot.as_ref()),
                interval(c.comparison.ci_within.as_ref()),
                verdict_cell(c, shared),
                confidence_cell(c, shared),
            ]);
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    table(
        &[
            "series",
            "kernel",
            "change",
            "drop-first",
            "boot-level 95% CI",
            "within-boot 95% CI",
            "verdict",
            "confidence",
        ],
        &rows,
    )
}

/// The bundle's files that exist next to the report files, with what each holds.
#[must_use]
pub fn files(root: &Path, built_here: bool, probed: bool, matched: bool) -> String {
    const FILES: [(&str, &str); 21] = [
        (
            "recipe.toml",
            "the recipe exactly as run (its sha256 is in the journal)",
        ),
        ("files/", "copies of the recipe's `[files]`"),
        ("journal.jsonl", "every event of the campaign, append-only"),
        (
            "samples.csv",
            "every sample, warm-ups, failed and discarded rows included",
        ),
        ("env/", "environment snapshot per point attempt"),
        ("raw/", "raw output of failed runs"),
        (
            "probes/",
            "each probe's stdout (`.out`) and stderr (`.err`) per point, cut at `max_output` with the cut named",
        ),
        (
            "checks/",
            "each passing check's stdout and stderr per point: the evidence of its pass",
        ),
        ("report.txt", "the mail-ready summary (72 columns)"),
        (
            "points.tsv",
            "per-point statistics, all samples and drop-first",
        ),
        ("comparison.tsv", "every derived figure, one per row"),
        (
            "run-audit.tsv",
            "every point attempt: boot, cmdline, tuning, failures",
        ),
        ("samples.svg", "every sample in boot order"),
        (
            "probes.tsv",
            "every value a probe gave: point, kernel, probe, value name, value, unit (never in a verdict)",
        ),
        ("README.md", "this summary"),
        (
            "source-identity.tsv",
            "each kernel built on the host: image and config SHA-256, version string, git tree, patches",
        ),
        (
            "matched-build.tsv",
            "each kernel's build against the baseline's, field by field (compiler, linker, normalised config, Kbuild metadata, source, patches): PASS, or DIFFERS and whether the difference is intended",
        ),
        ("build/", "the logs of the kernels' build steps"),
        (
            "reference/",
            "the recipe's `[expect] reference`, copied when the campaign started",
        ),
        (
            "reproduction.txt",
            "the comparison with `reference/`, mail-ready (`aba compare`)",
        ),
        (
            "reproduction.tsv",
            "every figure of that comparison, one per row",
        ),
    ];
    let always = [
        "report.txt",
        "points.tsv",
        "comparison.tsv",
        "run-audit.tsv",
        "samples.svg",
        "README.md",
    ];
    // The comparison is written after this README, from the reference's copy.
    let compared = root.join(crate::recipe::resolved::REFERENCE_COPY).is_dir();
    let rows: Vec<Vec<String>> = FILES
        .iter()
        .filter(|(name, _)| {
            always.contains(name)
                || root.join(name).exists()
                || (built_here && *name == super::source_identity_tsv::FILE)
                || (probed && *name == super::probes::FILE)
                || (matched && *name == super::matched_build_tsv::FILE)
                || (compared && name.starts_with("reproduction."))
        })
        .map(|(name, what)| vec![format!("`{name}`"), (*what).to_owned()])
        .collect();
    table(&["file", "contents"], &rows)
}
