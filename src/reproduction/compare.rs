//! The comparison itself: match the two sides' series and candidates, judge every matched
//! comparison with [`crate::stats::reproduce`] (each side under its own limits), put the
//! environments side by side and list what only one side has.

use crate::{
    reproduction::{
        environment::{KernelPair, rows},
        error::ReproductionError,
        evidence::{Evidence, EvidenceSeries},
        matching::{pair_candidates, pair_series},
        model::{CandidateReproduction, Counts, Reproduction, SeriesFigures, SeriesReproduction},
    },
    stats::{Claim, reproduce},
};

/// Compares `new` with `reference`; an error when no series is in both.
pub fn compare(new: &Evidence, reference: &Evidence) -> Result<Reproduction, ReproductionError> {
    let pairing = pair_series(&new.series, &reference.series);
    if pairing.pairs.is_empty() {
        let labels = |e: &Evidence| e.series.iter().map(|s| s.label.clone()).collect();
        return Err(ReproductionError::NothingInCommon {
            new: new.info.path.clone().into(),
            reference: reference.info.path.clone().into(),
            new_series: labels(new),
            reference_series: labels(reference),
        });
    }
    let mut counts = Counts::default();
    let mut kernels: Vec<KernelPair> = Vec::new();
    let mut series = Vec::new();
    for &(i, j, matched_by) in &pairing.pairs {
        let (n, r) = (&new.series[i], &reference.series[j]);
        let candidates = pair_candidates(&n.result.comparisons, &r.result.comparisons);
        let mut compared = Vec::new();
        for &(ci, cj, by) in &candidates.pairs {
            let (nc, rc) = (&n.result.comparisons[ci], &r.result.comparisons[cj]);
            let verdict = reproduce(
                Claim {
                    comparison: &rc.comparison,
                    verdict: &rc.verdict,
                    gate_pct: reference.info.params.gate_pct,
                },
                Claim {
                    comparison: &nc.comparison,
                    verdict: &nc.verdict,
                    gate_pct: new.info.params.gate_pct,
                },
            );
            counts.add(verdict.label);
            for (new_label, reference_label) in
                [(&nc.baseline, &rc.baseline), (&nc.candidate, &rc.candidate)]
            {
                let pair = KernelPair {
                    new: new_label.clone(),
                    reference: reference_label.clone(),
                    experiment: r.experiment.clone(),
                };
                if !kernels.contains(&pair) {
                    kernels.push(pair);
                }
            }
            compared.push(CandidateReproduction {
                published: r
                    .published
                    .iter()
                    .find(|p| p.candidate == rc.candidate && p.baseline == rc.baseline)
                    .cloned(),
                reference: rc.clone(),
                new: nc.clone(),
                matched_by: by,
                verdict,
            });
        }
        let names = |s: &EvidenceSeries, idx: &[usize]| -> Vec<String> {
            idx.iter()
                .map(|&k| s.result.comparisons[k].shown())
                .collect()
        };
        series.push(SeriesReproduction {
            label: n.label.clone(),
            reference_label: r.label.clone(),
            matched_by,
            workload: n.workload.clone(),
            case: n.case.clone(),
            metric: n.metric.clone(),
            unit: n.unit.clone().or_else(|| r.unit.clone()),
            reference_unit: r
                .unit
                .clone()
                .filter(|u| n.unit.as_ref().is_some_and(|n| n != u)),
            better: n.better.or(r.better),
            role: n.role.or(r.role),
            aux: n.aux,
            reference: figures(r),
            new: figures(n),
            only_new: names(n, &candidates.only_new),
            only_reference: names(r, &candidates.only_reference),
            candidates: compared,
        });
    }
    Ok(Reproduction {
        environment: rows(&reference.info.environment, &new.info.environment, &kernels),
        new: new.info.clone(),
        reference: reference.info.clone(),
        series,
        only_new: pairing
            .only_new
            .iter()
            .map(|&i| new.series[i].label.clone())
            .collect(),
        only_reference: pairing
            .only_reference
            .iter()
            .map(|&j| reference.series[j].label.clone())
            .collect(),
        counts,
    })
}

fn figures(s: &EvidenceSeries) -> SeriesFigures {
    SeriesFigures {
        points: s.result.points.clone(),
        kernels: s.result.kernels.clone(),
        max_cv_pct: s.result.max_cv_pct,
        not_compared: s.result.not_compared.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::compare;
    use crate::{
        analysis::testkit::campaign,
        reproduction::{campaign::from_analysis, error::ReproductionError, model::KernelMatch},
        stats::ReproductionLabel,
    };

    fn recipe(candidate: &str, workloads: &[&str]) -> String {
        let mut text = format!(
            "version = 1\nname = \"r\"\ndescription = \"unit\"\n\
             sequence = [\"a\", \"{candidate}\", \"a\", \"{candidate}\", \"a\"]\n\
             warmup = 0\nsamples = 3\n[kernels.a]\nrelease = \"6.1.0-a\"\n\
             [kernels.{candidate}]\nrelease = \"6.1.0-b\"\n"
        );
        for w in workloads {
            text.push_str(&format!(
                "[[workload]]\nname = \"{w}\"\nrun = \"true\"\n\
                 metric = {{ number = true, unit = \"ns\", better = \"lower\" }}\n"
            ));
        }
        text
    }

    /// A/B/A/B/A of `workload` with the candidate `factor` times the baseline.
    fn evidence(
        candidate: &str,
        workloads: &[&str],
        factor: f64,
    ) -> crate::reproduction::evidence::Evidence {
        let labels = [
            "a-a".to_owned(),
            format!("{candidate}-a"),
            "a-b".to_owned(),
            format!("{candidate}-b"),
            "a-c".to_owned(),
        ];
        let mut values: Vec<(String, String, Vec<f64>)> = Vec::new();
        for w in workloads {
            // Boot-to-boot scatter without a trend over the campaign (a perfectly linear
            // one is what the trend test makes UNSTABLE).
            let scatter = [0.0, 0.1, -0.05, 0.05, 0.02];
            for (i, label) in labels.iter().enumerate() {
                let base = 100.0 + scatter[i];
                let mean = if i % 2 == 1 { base * factor } else { base };
                values.push((
                    label.clone(),
                    (*w).to_owned(),
                    vec![mean - 0.1, mean, mean + 0.1],
                ));
            }
        }
        let borrowed: Vec<(&str, &str, &[f64])> = values
            .iter()
            .map(|(p, w, v)| (p.as_str(), w.as_str(), v.as_slice()))
            .collect();
        let analysis = campaign(&recipe(candidate, workloads), &borrowed);
        from_analysis(&analysis, "results/r", &[], Vec::new())
    }

    #[test]
    fn matched_series_and_candidates_are_judged_the_rest_listed() {
        let reference = evidence("child", &["w", "old"], 1.2);
        let new = evidence("patched", &["w", "added"], 1.2);
        let r = compare(&new, &reference).expect("w is in both");
        assert_eq!(r.series.len(), 1);
        assert_eq!(
            (r.only_new.as_slice(), r.only_reference.as_slice()),
            (&["added".to_owned()][..], &["old".to_owned()][..])
        );
        let c = &r.series[0].candidates[0];
        assert_eq!(c.matched_by, KernelMatch::OnlyCandidate);
        assert_eq!(
            c.verdict.label,
            ReproductionLabel::Reproduced,
            "{:?}",
            c.verdict
        );
        assert_eq!(r.counts.reproduced, 1);
        // The kernels are paired for the environment: a ↔ a, patched ↔ child.
        let what: Vec<&str> = r.environment.iter().map(|e| e.what.as_str()).collect();
        assert!(what.contains(&"patched (child) release"), "{what:?}");
        let gone = evidence("patched", &["w"], 1.0);
        let r = compare(&gone, &reference).expect("w is in both");
        assert_eq!(r.counts.not_reproduced, 1);
    }

    /// A campaign with a declared comparison (fix against child, besides each against the
    /// parent) exported and read back as a bundle: the declared comparison is read from its
    /// `fix_vs_child_pct` column, matched to the campaign's by its pair, and REPRODUCED with
    /// its published change; against a bundle without it, it is only in the new campaign
    /// and the baseline comparisons still match loosely.
    #[test]
    fn a_declared_comparison_survives_export_and_matches_only_its_pair() {
        let text = "version = 1\nname = \"r\"\ndescription = \"unit\"\n\
             sequence = [\"parent\", \"child\", \"fix\", \"parent\", \"child\", \"fix\", \"parent\"]\n\
             warmup = 0\nsamples = 3\n[kernels.parent]\nrelease = \"6.1.0-a\"\n\
             [kernels.child]\nrelease = \"6.1.0-b\"\n[kernels.fix]\nrelease = \"6.1.0-c\"\n\
             [[workload]]\nname = \"w\"\nrun = \"true\"\n\
             metric = { number = true, unit = \"ns\", better = \"lower\" }\n\
             [[analysis.comparison]]\ncandidate = \"fix\"\nbaseline = \"child\"\n";
        let recipe = crate::recipe::parse(std::path::Path::new("r.toml"), text).expect("valid");
        let labels = crate::recipe::resolved::point_labels(&recipe.sequence);
        let scatter = [0.0, 0.1, -0.05, 0.05, 0.02, -0.03, 0.04];
        let values: Vec<Vec<f64>> = labels
            .iter()
            .zip(&recipe.sequence)
            .zip(scatter)
            .map(|((_, k), s)| {
                let mean = s + match k.as_str() {
                    "parent" => 100.0,
                    "child" => 150.0,
                    _ => 120.0,
                };
                vec![mean - 0.1, mean, mean + 0.1]
            })
            .collect();
        let rows: Vec<crate::analysis::testkit::Row<'_>> = labels
            .iter()
            .zip(&values)
            .map(|(point, v)| crate::analysis::testkit::Row {
                point,
                workload: "w",
                case: "",
                metric: "w",
                values: v,
            })
            .collect();
        let analysis = crate::analysis::testkit::campaign_of(&recipe, &rows, "lab");
        let new = from_analysis(&analysis, "results/r", &[], Vec::new());
        let export = crate::report::export::render(
            &analysis,
            &new,
            &crate::recipe::model::PublishSpec::default(),
            &[],
        );
        let dir = tempfile::tempdir().expect("tempdir");
        for f in &export.files {
            std::fs::write(dir.path().join(&f.path), &f.data).expect("write");
        }
        let comparison = std::fs::read_to_string(dir.path().join("w-comparison.tsv")).expect("tsv");
        assert!(comparison.contains("fix_vs_child_pct"), "{comparison}");
        let bundle =
            crate::reproduction::bundle::from_bundle(dir.path(), "published", &analysis.params)
                .expect("reads");
        let declared: Vec<(&str, &str)> = bundle.series[0]
            .result
            .comparisons
            .iter()
            .map(|c| (c.candidate.as_str(), c.baseline.as_str()))
            .collect();
        assert_eq!(
            declared,
            [("child", "parent"), ("fix", "parent"), ("fix", "child")]
        );
        let r = compare(&new, &bundle).expect("w is in both");
        let pairs: Vec<(&str, &str, bool)> = r.series[0]
            .candidates
            .iter()
            .map(|c| {
                (
                    c.new.candidate.as_str(),
                    c.new.baseline.as_str(),
                    c.published.as_ref().is_some_and(|p| p.agrees),
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("child", "parent", true),
                ("fix", "parent", true),
                ("fix", "child", true)
            ]
        );
        assert_eq!(r.counts.reproduced, 3, "{:?}", r.counts);
        // A reference without the declared comparison: the two against the baseline match
        // by label, the declared one is the new campaign's alone.
        let plain = evidence("child", &["w"], 1.5);
        let r = compare(&new, &plain).expect("w is in both");
        assert_eq!(r.series[0].candidates.len(), 1, "child by label");
        assert_eq!(r.series[0].only_new, ["fix", "fix vs child"]);
    }

    #[test]
    fn nothing_in_common_is_an_error_listing_both_sides() {
        let err = compare(&evidence("b", &["x"], 1.0), &evidence("b", &["y"], 1.0))
            .expect_err("nothing in common");
        let ReproductionError::NothingInCommon {
            new_series,
            reference_series,
            ..
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(
            (new_series.as_slice(), reference_series.as_slice()),
            (&["x".to_owned()][..], &["y".to_owned()][..])
        );
        assert!(
            crate::error::compare_hint(&err)
                .expect("hint")
                .contains("the new campaign has x; the reference has y")
        );
    }
}
