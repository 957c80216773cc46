//! An aba results directory as [`Evidence`]: its analysis, recomputed from the raw files
//! exactly as `aba report` does (so every format version `aba report` reads works here), and
//! the environment its points recorded (`env/<point>-<attempt>.json`).

use std::path::Path;

use crate::{
    analysis::{Analysis, analyze},
    input::read_text,
    reproduction::{
        error::ReproductionError,
        evidence::{
            BuildId, Environment, Evidence, EvidenceInfo, EvidenceSeries, KernelIdentity,
            LimitsOrigin, Source, foreign_label,
        },
    },
    results::{journal::Facts, layout::ResultsDir},
};

/// An environment record is a few KiB; anything beyond this is not one.
const ENV_RECORD_LIMIT: u64 = 1 << 20;

/// Reads and analyses the results directory `dir`; `shown` is how the user named it.
pub fn from_results(dir: &Path, shown: &str) -> Result<Evidence, ReproductionError> {
    read_results(dir, shown).map(|(_, evidence)| evidence)
}

/// [`from_results`] with the analysis it comes from (`aba export` writes both).
pub fn read_results(dir: &Path, shown: &str) -> Result<(Analysis, Evidence), ReproductionError> {
    let results = ResultsDir::open(dir);
    let analysis = analyze(&results).map_err(|source| ReproductionError::Analysis {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut notes = Vec::new();
    let records = env_records(&results, &analysis, &mut notes);
    let evidence = from_analysis(&analysis, shown, &records, notes);
    Ok((analysis, evidence))
}

/// The environment record of each done point, in boot order, with its point's kernel;
/// records that are missing are skipped, unreadable ones are named in `notes`.
fn env_records(
    results: &ResultsDir,
    analysis: &Analysis,
    notes: &mut Vec<String>,
) -> Vec<(String, Facts)> {
    let mut records = Vec::new();
    for point in &analysis.points {
        let Some(attempt) = point.done_attempt else {
            continue;
        };
        let path = results.env_path(&point.label, attempt);
        if !path.exists() {
            continue;
        }
        let read = read_text(&path, ENV_RECORD_LIMIT, "environment record")
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Facts>(&text).map_err(|e| e.to_string()));
        match read {
            Ok(facts) => records.push((point.kernel.clone(), facts)),
            Err(e) => notes.push(format!(
                "environment record env/{}-{attempt}.json is unreadable: {e}",
                point.label
            )),
        }
    }
    records
}

/// The evidence of an analysed campaign; `records` are its environment records with their
/// kernels, in boot order.
#[must_use]
pub fn from_analysis(
    analysis: &Analysis,
    shown: &str,
    records: &[(String, Facts)],
    mut notes: Vec<String>,
) -> Evidence {
    let mut series = Vec::new();
    for s in &analysis.series {
        let Some(all) = &s.all else {
            notes.push(format!("{} has no done point with values", s.label));
            continue;
        };
        series.push(EvidenceSeries {
            workload: s.workload.clone(),
            case: s.case.clone(),
            metric: s.metric.clone(),
            label: s.label.clone(),
            unit: Some(s.unit.clone()).filter(|u| !u.is_empty()),
            better: Some(s.better),
            role: Some(s.role),
            aux: s.aux,
            experiment: None,
            result: all.clone(),
            published: Vec::new(),
        });
    }
    let campaign = &analysis.campaign;
    Evidence {
        info: EvidenceInfo {
            path: shown.to_owned(),
            name: campaign.name.clone(),
            source: Source::Campaign {
                aba_version: campaign.aba_version.clone(),
                finished: campaign.finished,
                missing_points: analysis.missing_points.clone(),
            },
            params: analysis.params.clone(),
            limits: LimitsOrigin::Preregistered,
            shared_boot: analysis.audit.shared_boot.is_some(),
            environment: environment(analysis, records),
            notes,
        },
        series,
    }
}

fn environment(analysis: &Analysis, records: &[(String, Facts)]) -> Environment {
    let campaign = &analysis.campaign;
    let fact = |kernel: Option<&str>, key: &str| -> Vec<String> {
        distinct(
            records
                .iter()
                .filter(|(k, _)| kernel.is_none_or(|want| want == k))
                .filter_map(|(_, facts)| facts.get(key))
                .map(|v| foreign_label(v.trim()))
                .filter(|v| !v.is_empty()),
        )
    };
    let kernels = analysis
        .kernels
        .iter()
        .map(|k| {
            let proven = distinct(
                analysis
                    .points
                    .iter()
                    .filter(|p| p.kernel == k.label && p.done_attempt.is_some())
                    .filter_map(|p| p.release.as_deref().map(foreign_label)),
            );
            let commit = k
                .bound
                .as_ref()
                .and_then(|b| b.build.as_deref())
                .and_then(|b| b.source.as_ref())
                .map(|s| BuildId::GitCommit(foreign_label(&s.commit)));
            KernelIdentity {
                label: k.label.clone(),
                experiment: None,
                releases: if proven.is_empty() {
                    vec![k.release.clone()]
                } else {
                    proven
                },
                builds: commit
                    .into_iter()
                    .chain(
                        fact(Some(&k.label), "config_sha256")
                            .into_iter()
                            .map(BuildId::ConfigSha256),
                    )
                    .collect(),
                preemption: Vec::new(),
                compilers: Vec::new(),
                versions: fact(Some(&k.label), "version"),
                cmdline: k
                    .cmdline
                    .iter()
                    .filter(|p| !campaign.boot_cmdline.contains(p))
                    .cloned()
                    .collect(),
            }
        })
        .collect();
    Environment {
        target: Some(foreign_label(&campaign.target)).filter(|t| !t.is_empty()),
        cpu_models: fact(None, "cpu_model"),
        kernels,
        cmdline: Some(campaign.boot_cmdline.clone()),
        sysctls: Some(campaign.sysctls.clone()),
        tuning: Some(campaign.tuning.clone()),
    }
}

/// `items` without repeats, first occurrence first.
pub fn distinct(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::from_analysis;
    use crate::{
        analysis::testkit::campaign, reproduction::evidence::Source, results::journal::Facts,
    };

    const RECIPE: &str = r#"
version = 1
name = "rt"
description = "unit"
sequence = ["a", "b", "a"]
warmup = 0
samples = 3
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
cmdline = "mitigations=off"
[boot]
cmdline = "quiet"
[tuning]
governor = "performance"
[[workload]]
name = "w"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
[[workload]]
name = "idle"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
"#;

    #[test]
    fn a_campaign_reads_its_series_limits_and_environment() {
        let analysis = campaign(
            RECIPE,
            &[
                ("a-a", "w", &[10.0, 10.1, 9.9]),
                ("b", "w", &[12.0, 12.1, 11.9]),
                ("a-b", "w", &[10.0, 10.2, 9.8]),
            ],
        );
        let facts = |cpu: &str, sha: &str| -> Facts {
            [
                ("cpu_model", cpu),
                ("config_sha256", sha),
                ("version", " v "),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
        };
        let records = [
            ("a".to_owned(), facts(" Xeon ", "aa")),
            ("b".to_owned(), facts("Xeon", "bb")),
            ("a".to_owned(), facts("Xeon", "aa")),
        ];
        let evidence = from_analysis(&analysis, "results/rt-1", &records, Vec::new());
        assert_eq!(evidence.info.name, "rt");
        assert!(matches!(
            evidence.info.source,
            Source::Campaign { finished: true, .. }
        ));
        // `idle` has no values: named, not compared.
        assert_eq!(evidence.series.len(), 1);
        assert_eq!(evidence.info.notes, ["idle has no done point with values"]);
        let w = &evidence.series[0];
        assert_eq!(
            (w.unit.as_deref(), w.result.comparisons.len()),
            (Some("ns"), 1)
        );
        let env = &evidence.info.environment;
        assert_eq!(env.cpu_models, ["Xeon"]);
        assert_eq!(env.target.as_deref(), Some("lab"));
        assert_eq!(env.cmdline.as_deref(), Some(&["quiet".to_owned()][..]));
        assert_eq!(
            env.tuning.as_deref(),
            Some(&["governor=performance".to_owned()][..])
        );
        let b = &env.kernels[1];
        assert_eq!(
            (b.label.as_str(), b.builds.as_slice()),
            ("b", &[super::BuildId::ConfigSha256("bb".to_owned())][..])
        );
        assert_eq!(b.cmdline, ["mitigations=off"]);
        assert_eq!(b.versions, ["v"]);
        // The testkit's boots all proved release `r`.
        assert_eq!(b.releases, ["r"]);
    }
}
