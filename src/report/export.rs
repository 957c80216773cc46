//! `aba export DIR --to OUT`: a campaign in the published layout a reader of evidence bundles
//! expects (the layout of lcf0399/linux-regression-evidence, which `aba compare` reads as a
//! reference), so that the evidence can be published and re-judged by anyone:
//!
//! ```text
//! <experiment>-points.tsv      order point point_name role release boot_id commit n
//!                              mean_<metric> sd cv_pct values semantic_failures workload case unit
//! <experiment>-comparison.tsv  analysis <kernel>_mean… <candidate>_vs_<baseline>_pct…
//! run-audit.tsv                experiment point point_name kernel kernel_release boot_id samples
//!                              semantic_failures
//! source-identity.tsv          experiment kernel kernel_release git_commit config_sha256 patches
//! matched-build.tsv            baseline kernel field baseline_value kernel_value status read_from
//!                              (when kernels could be compared: the results directory's own)
//! patches/ workload/ recipe.toml samples.csv README.md
//! ```
//!
//! One experiment per series (workload, case and metric), so each points file has one metric
//! and one sample count per point. Every number is written unrounded (Rust's shortest
//! round-trip form) where a reader recomputes from it, so `aba compare` of the export against
//! the campaign reproduces every figure exactly. Pure: this renders; the CLI writes.

use std::fmt::Write as _;

use serde::Serialize;

use crate::{
    analysis::{Analysis, model::Series},
    point_name::point_name,
    recipe::model::PublishSpec,
    report::{
        matched_build_tsv,
        number::{fixed, signed_pct},
        source_identity_tsv,
    },
    reproduction::evidence::{BuildId, Evidence},
    text::printable,
};

/// One file the export writes, relative to OUT.
#[derive(Clone, Debug, Serialize)]
pub struct ExportFile {
    /// Its path inside OUT.
    pub path: String,
    /// Its content.
    #[serde(skip)]
    pub data: Vec<u8>,
}

/// A file copied from the host into OUT.
#[derive(Clone, Debug, Serialize)]
pub struct ExportCopy {
    /// Where it is on this host.
    pub from: String,
    /// Its path inside OUT.
    pub to: String,
    /// The SHA-256 the campaign recorded for it; the copy must have it.
    pub sha256: Option<String>,
}

/// Everything an export writes.
#[derive(Clone, Debug, Serialize)]
pub struct Export {
    /// Rendered files.
    pub files: Vec<ExportFile>,
    /// Files copied as they are (patches; the results directory's own files are listed by
    /// the CLI, which walks them without following links).
    pub copies: Vec<ExportCopy>,
}

/// Names of the side tables, as `aba compare` reads them.
use crate::reproduction::bundle_audit::{RUN_AUDIT, SOURCE_IDENTITY};

/// An experiment's file stem: workload, case and metric (when it is not the workload's
/// name), every character a file name should not carry replaced by `_`; unique in the export.
fn stem_of(series: &Series, taken: &mut Vec<String>) -> String {
    let mut raw = series.workload.clone();
    for part in [&series.case, &series.metric] {
        if !part.is_empty() && *part != series.workload {
            raw = format!("{raw}-{part}");
        }
    }
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.').to_owned();
    let mut stem = clean.clone();
    let mut n = 2;
    while taken.contains(&stem) {
        stem = format!("{clean}-{n}");
        n += 1;
    }
    taken.push(stem.clone());
    stem
}

/// A TSV cell: tabs and line ends cannot appear in one.
fn cell(text: &str) -> String {
    crate::text::one_line(text).replace('\t', " ")
}

/// The export of `analysis`, whose evidence (environment, build identities) is `evidence`;
/// `publish` is the recipe's `[publish]`, `copied` the paths (inside OUT) of the results
/// directory's own files the CLI copies beside (`recipe.toml`, `samples.csv`, `workload/…`).
#[must_use]
pub fn render(
    analysis: &Analysis,
    evidence: &Evidence,
    publish: &PublishSpec,
    copied: &[String],
) -> Export {
    let mut files = Vec::new();
    let mut taken = Vec::new();
    let mut audit = String::from(
        "experiment\tpoint\tpoint_name\tkernel\tkernel_release\tboot_id\tsamples\tsemantic_failures\n",
    );
    let mut identity =
        String::from("experiment\tkernel\tkernel_release\tgit_commit\tconfig_sha256\tpatches\n");
    let mut experiments = Vec::new();
    let kernel_build = |label: &str, kind: fn(&BuildId) -> Option<&String>| -> String {
        evidence
            .info
            .environment
            .kernels
            .iter()
            .find(|k| k.label == label)
            .and_then(|k| k.builds.iter().find_map(kind))
            .cloned()
            .unwrap_or_default()
    };
    let commit: fn(&BuildId) -> Option<&String> = |b| match b {
        BuildId::GitCommit(c) => Some(c),
        _ => None,
    };
    let config: fn(&BuildId) -> Option<&String> = |b| match b {
        BuildId::ConfigSha256(c) => Some(c),
        _ => None,
    };
    let builds = source_identity_tsv::builds(analysis);
    for s in &analysis.series {
        let Some(all) = &s.all else { continue };
        let stem = stem_of(s, &mut taken);
        experiments.push((stem.clone(), s.label.clone()));
        let mut points = format!(
            "order\tpoint\tpoint_name\trole\trelease\tboot_id\tcommit\tn\tmean_{m}\tsd\tcv_pct\t\
             values\tsemantic_failures\tworkload\tcase\tunit\n",
            m = s.metric
        );
        for (i, p) in s.points.iter().enumerate() {
            let info = analysis.points.iter().find(|q| q.label == p.label);
            let release = info.and_then(|q| q.release.clone()).unwrap_or_default();
            let boot = info.and_then(|q| q.boot_id.clone()).unwrap_or_default();
            let values: Vec<String> = p.values.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                points,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t0\t{}\t{}\t{}",
                i + 1,
                p.label,
                point_name(&p.label, &p.kernel),
                p.kernel,
                cell(&release),
                cell(&boot),
                cell(&kernel_build(&p.kernel, commit)),
                p.all.n,
                p.all.mean,
                p.all.sd.map_or_else(String::new, |v| v.to_string()),
                p.all.cv_pct.map_or_else(String::new, |v| v.to_string()),
                values.join(" "),
                s.workload,
                cell(&s.case),
                cell(&s.unit)
            );
            let _ = writeln!(
                audit,
                "{stem}\t{}\t{}\t{}\t{}\t{}\t{}\t0",
                p.label,
                point_name(&p.label, &p.kernel),
                p.kernel,
                cell(&release),
                cell(&boot),
                p.values.len()
            );
        }
        files.push(ExportFile {
            path: format!("{stem}-points.tsv"),
            data: points.into_bytes(),
        });
        let mut header = vec!["analysis".to_owned()];
        header.extend(all.kernels.iter().map(|k| format!("{}_mean", k.kernel)));
        header.extend(
            all.comparisons
                .iter()
                .map(|c| format!("{}_vs_{}_pct", c.candidate, c.baseline)),
        );
        let mut comparison = header.join("\t");
        comparison.push('\n');
        for (name, result) in [
            ("all_rounds", Some(all)),
            ("drop_first_round", s.drop_first.as_ref()),
        ] {
            let Some(r) = result else { continue };
            let mut row = vec![name.to_owned()];
            for k in &all.kernels {
                row.push(
                    r.kernels
                        .iter()
                        .find(|x| x.kernel == k.kernel)
                        .map_or_else(|| "-".to_owned(), |x| fixed(x.mean, 6)),
                );
            }
            for c in &all.comparisons {
                row.push(
                    r.comparisons
                        .iter()
                        .find(|x| x.same_pair(c))
                        .map_or_else(|| "-".to_owned(), |x| fixed(x.comparison.change_pct, 6)),
                );
            }
            comparison.push_str(&row.join("\t"));
            comparison.push('\n');
        }
        files.push(ExportFile {
            path: format!("{stem}-comparison.tsv"),
            data: comparison.into_bytes(),
        });
        for k in &all.kernels {
            let patches: Vec<String> = builds
                .iter()
                .find(|(label, _)| *label == k.kernel)
                .map(|(_, b)| {
                    b.patches
                        .iter()
                        .map(|p| format!("patches/{}", base_name(&p.path)))
                        .collect()
                })
                .unwrap_or_default();
            let release = evidence
                .info
                .environment
                .kernels
                .iter()
                .find(|x| x.label == k.kernel)
                .map(|x| x.releases.join(" "))
                .unwrap_or_default();
            let _ = writeln!(
                identity,
                "{stem}\t{}\t{}\t{}\t{}\t{}",
                k.kernel,
                cell(&release),
                cell(&kernel_build(&k.kernel, commit)),
                cell(&kernel_build(&k.kernel, config)),
                cell(&patches.join(" "))
            );
        }
    }
    files.push(ExportFile {
        path: RUN_AUDIT.to_owned(),
        data: audit.into_bytes(),
    });
    files.push(ExportFile {
        path: SOURCE_IDENTITY.to_owned(),
        data: identity.into_bytes(),
    });
    let mut copies = Vec::new();
    // The probes' values: attribution beside the timed tables, never in a verdict.
    if let Some(probed) = crate::report::probes::render_tsv(analysis) {
        files.push(ExportFile {
            path: crate::report::probes::FILE.to_owned(),
            data: probed,
        });
    }
    if let Some(matched) = matched_build_tsv::render(&analysis.matched_builds) {
        files.push(ExportFile {
            path: matched_build_tsv::FILE.to_owned(),
            data: matched,
        });
    }
    if !builds.is_empty() {
        for (_, b) in &builds {
            for p in &b.patches {
                let to = format!("patches/{}", base_name(&p.path));
                if !copies.iter().any(|c: &ExportCopy| c.to == to) {
                    copies.push(ExportCopy {
                        from: p.path.clone(),
                        to,
                        sha256: Some(p.sha256.clone()),
                    });
                }
            }
        }
    }
    // The README names what is in the folder: each top-level file or folder once.
    let mut listed: Vec<String> = Vec::new();
    for path in files
        .iter()
        .map(|f| f.path.as_str())
        .chain(copies.iter().map(|c| c.to.as_str()))
        .chain(copied.iter().map(String::as_str))
    {
        let top = match path.split_once('/') {
            Some((folder, _)) => format!("{folder}/"),
            None => path.to_owned(),
        };
        if !listed.contains(&top) {
            listed.push(top);
        }
    }
    files.push(ExportFile {
        path: "README.md".to_owned(),
        data: readme(analysis, evidence, publish, &experiments, &listed).into_bytes(),
    });
    Export { files, copies }
}

/// The last component of a host path, never empty and never `..`.
fn base_name(path: &str) -> String {
    match path.rsplit('/').find(|c| !c.is_empty()) {
        Some(name) if name != ".." && name != "." => cell(name),
        _ => "patch".to_owned(),
    }
}

/// The README: scope, method, machine, results, caveats, files, how to reproduce.
fn readme(
    analysis: &Analysis,
    evidence: &Evidence,
    publish: &PublishSpec,
    experiments: &[(String, String)],
    listed: &[String],
) -> String {
    let c = &analysis.campaign;
    let own = |t: &Option<String>| t.as_deref().map(|t| printable(t.trim()).into_owned());
    let mut out = format!("# {}\n\n", printable(&c.name));
    let _ = writeln!(out, "## Scope\n\n{}\n", printable(c.description.trim()));
    if let Some(scope) = own(&publish.scope) {
        let _ = writeln!(out, "{scope}\n");
    }
    let sequence: Vec<String> = analysis
        .points
        .iter()
        .map(|p| point_name(&p.label, &p.kernel))
        .collect();
    let (samples, warmup) = analysis
        .series
        .first()
        .map_or((0, 0), |s| (s.samples, s.warmup));
    let _ = writeln!(
        out,
        "## Method\n\nBoots in order: {}; {samples} measured samples per workload and point after \
         {warmup} warm-up runs. Baseline kernel {}. Verdict limits: {}. Each point's samples are in \
         its `<experiment>-points.tsv`; every figure is recomputed from them by `aba compare`.\n",
        sequence.join(", "),
        c.baseline,
        crate::report::reproduction_prose::limits_words(&analysis.params)
    );
    if let Some(method) = own(&publish.method) {
        let _ = writeln!(out, "{method}\n");
    }
    let env = &evidence.info.environment;
    let _ = writeln!(
        out,
        "## Machine\n\nTarget {}; CPU {}; kernel command line `{}`.\n",
        if c.target.is_empty() {
            "not recorded"
        } else {
            &c.target
        },
        if env.cpu_models.is_empty() {
            "not recorded".to_owned()
        } else {
            env.cpu_models.join("; ")
        },
        c.boot_cmdline.join(" ")
    );
    if let Some(machine) = own(&publish.machine) {
        let _ = writeln!(out, "{machine}\n");
    }
    out.push_str("## Results\n\n| experiment | series | candidate | change | verdict |\n| --- | --- | --- | --- | --- |\n");
    for s in &analysis.series {
        let Some(all) = &s.all else { continue };
        let stem = experiments
            .iter()
            .find(|(_, l)| *l == s.label)
            .map_or("", |(st, _)| st.as_str());
        for cmp in &all.comparisons {
            let _ = writeln!(
                out,
                "| {stem} | {} | {} vs {} | {} | {} |",
                s.label,
                cmp.candidate,
                cmp.baseline,
                signed_pct(cmp.comparison.change_pct),
                cmp.label
            );
        }
    }
    out.push_str("\n## Caveats\n\n");
    let mut caveats: Vec<String> = publish
        .caveats
        .iter()
        .map(|t| printable(t.trim()).into_owned())
        .collect();
    if analysis.audit.shared_boot.is_some() {
        caveats.push(
            "Every point ran in one boot: the intervals measure run-to-run noise, not \
             boot-to-boot."
                .to_owned(),
        );
    }
    if !analysis.missing_points.is_empty() {
        caveats.push(format!(
            "Points not done: {}.",
            analysis.missing_points.join(", ")
        ));
    }
    if caveats.is_empty() {
        caveats.push("None stated.".to_owned());
    }
    for caveat in caveats {
        let _ = writeln!(out, "- {caveat}");
    }
    let names: Vec<String> = listed.iter().map(|n| format!("`{n}`")).collect();
    let _ = writeln!(
        out,
        "\n## Files\n\n{}. Each `<experiment>-points.tsv` has one row per boot with every \
         sample in `values`.{}\n\n## Reproduce\n\nRun `recipe.toml` on your machine, then \
         `aba compare <your results directory> <this folder>`. Written by aba {}.",
        names.join(", "),
        attribution_files(listed),
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// What the attribution entries among `listed` hold, one sentence each (empty when there is
/// none): the untimed evidence beside the timed tables.
fn attribution_files(listed: &[String]) -> String {
    let mut out = String::new();
    for (entry, says) in [
        (
            "probes/",
            "`probes/<point>/<probe>.out` and `.err` are what each untimed probe printed, as \
             the campaign kept it",
        ),
        (
            "checks/",
            "`checks/<point>/<check>.out` and `.err` are what each passing check printed",
        ),
        (
            "probes.tsv",
            "`probes.tsv` has the values read from the probes' output, one row per point and \
             value; they never enter a verdict",
        ),
        (
            "matched-build.tsv",
            "`matched-build.tsv` compares each kernel built for the campaign with the \
             baseline's build, field by field (PASS or DIFFERS with both values)",
        ),
    ] {
        if listed.iter().any(|l| l == entry) {
            let _ = write!(out, " {says}.");
        }
    }
    if listed.iter().any(|l| l == "probes/" || l == "checks/") {
        out.push_str(
            " Each kept file was checked against the SHA-256 the campaign's journal holds for \
             it when this folder was exported.",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::{
        recipe::model::PublishSpec, report::testdata::fixture,
        reproduction::campaign::from_analysis,
    };

    #[test]
    fn the_readme_carries_the_publish_table_and_each_series_is_an_experiment() {
        let analysis = fixture("mprotect-exact-cac1");
        let evidence = from_analysis(&analysis, "exact", &[], Vec::new());
        let publish = PublishSpec {
            scope: Some("Only the shared dirty toggle.".into()),
            method: None,
            machine: Some("A desktop \u{1b}[31mbox.".into()),
            caveats: vec!["One machine only.".into()],
        };
        let export = render(&analysis, &evidence, &publish, &[]);
        let names: Vec<&str> = export.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "mprotect-iteration_ns_per_page-points.tsv",
                "mprotect-iteration_ns_per_page-comparison.tsv",
                "run-audit.tsv",
                "source-identity.tsv",
                "README.md"
            ]
        );
        let readme = String::from_utf8(export.files[4].data.clone()).expect("utf-8");
        for part in [
            "Only the shared dirty toggle.",
            "- One machine only.",
            "`mprotect-iteration_ns_per_page-points.tsv`, `mprotect-iteration_ns_per_page-comparison.tsv`, `run-audit.tsv`, `source-identity.tsv`. Each",
            "A desktop \\u{1b}[31mbox.",
            "| mprotect-iteration_ns_per_page | mprotect/iteration_ns_per_page | child vs parent | +39.77% | SIGNAL |",
        ] {
            assert!(readme.contains(part), "{part}: {readme}");
        }
        assert!(!readme.contains('\u{1b}'));
        let comparison = String::from_utf8(export.files[1].data.clone()).expect("utf-8");
        assert!(
            comparison.starts_with(
                "analysis\tparent_mean\tchild_mean\tchild_vs_parent_pct\nall_rounds\t38.300000\t53.533333\t39.773716\n"
            ),
            "{comparison}"
        );
    }

    #[test]
    fn a_patch_keeps_its_base_name() {
        assert_eq!(super::base_name("/p/../fix.patch"), "fix.patch");
        assert_eq!(super::base_name("/p/.."), "patch");
    }
}
