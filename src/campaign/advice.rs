//! Design advice before the night (issue 10 §3): per workload, case and metric, the minimal
//! detectable change of the recipe's design on the target, from the target's noise profile;
//! and, with `[analysis] detect_pct`, the shortest sequence and sample count that resolve it.
//!
//! Pure: the profile was read by the caller, the ETA comes from the plan's own estimate. The
//! arithmetic is `stats::detect`'s; bench/profiles.rs checks by simulation, through aba's
//! analysis, that a change of the printed size is resolved about 80% of the time.

use std::time::Duration;

use crate::{
    analysis::series_label,
    campaign::plan::{PlanError, Summary, boot_dof},
    inventory::Target,
    profile::{
        matching::series_match,
        model::{Profile, SeriesProfile},
    },
    recipe::{Recipe, ident::KernelLabel, limits},
    stats::{boot_mean_rel_var, minimal_detectable_pct},
};

/// Sample counts the advice tries besides the recipe's own.
const SAMPLE_COUNTS: [u32; 10] = [3, 5, 9, 15, 25, 50, 100, 200, 500, 1000];

/// The detectable change of one series against one candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Detectable {
    /// The candidate kernel.
    pub candidate: KernelLabel,
    /// The change in percent; `None` when the design cannot resolve any (ν = 0).
    pub pct: Option<f64>,
}

/// What the profile says of one series.
#[derive(Clone, Debug, PartialEq)]
pub enum SeriesNoise {
    /// The profile's entry holds: the detectable change per candidate.
    Known {
        /// Per candidate, in order of first boot.
        detectable: Vec<Detectable>,
        /// ν of the boot variance: the profile's plus the design's own.
        dof: f64,
        /// The profile's boot-level SD and within-boot CV, percent.
        boot_sd_pct: f64,
        /// Within-boot CV, percent.
        within_cv_pct: f64,
    },
    /// No entry holds, and why.
    Unknown(String),
}

/// One series' advice.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesAdvice {
    /// `workload`, `workload[case]`, `/metric` when the metric is not named after it.
    pub label: String,
    /// What the profile says.
    pub noise: SeriesNoise,
}

/// A design that resolves `detect_pct`.
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// The boot sequence.
    pub sequence: Vec<KernelLabel>,
    /// Measured samples per point, for every workload.
    pub samples: u32,
    /// The largest detectable change over the profiled series and candidates.
    pub pct: f64,
    /// Its ETA.
    pub eta: Duration,
    /// The profile is pooled (its sample count is this one); otherwise the campaign's own
    /// boots alone give the boot variance.
    pub pooled: bool,
}

/// The advice for a recipe on a target with a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    /// Per series.
    pub series: Vec<SeriesAdvice>,
    /// The recipe's design: the largest detectable change over the profiled series.
    pub design_pct: Option<f64>,
    /// With `detect_pct`: the shortest design that resolves it; `None` when none of at most
    /// [`limits::POINTS`] points does.
    pub recommendation: Option<Recommendation>,
}

/// The recipe's unit of repetition: after its first point when it starts and ends with the
/// baseline (A-B-A repeats B-A), else the whole sequence.
#[must_use]
pub fn repeated(
    sequence: &[KernelLabel],
    baseline: &KernelLabel,
    times: usize,
) -> Vec<KernelLabel> {
    let bracketed = sequence.len() >= 3
        && sequence.first() == Some(baseline)
        && sequence.last() == Some(baseline);
    if bracketed {
        let mut out = vec![sequence[0].clone()];
        for _ in 0..times {
            out.extend(sequence[1..].iter().cloned());
        }
        out
    } else {
        (0..times).flat_map(|_| sequence.iter().cloned()).collect()
    }
}

/// ν of the design's own boots, as a float.
fn own_dof(sequence: &[KernelLabel]) -> f64 {
    boot_dof(sequence) as f64
}

/// Candidates in order of first boot.
fn candidates(recipe: &Recipe) -> Vec<KernelLabel> {
    let mut out: Vec<KernelLabel> = Vec::new();
    for k in &recipe.sequence {
        if *k != recipe.analysis.baseline && !out.contains(k) {
            out.push(k.clone());
        }
    }
    out
}

/// The largest detectable change of `sequence` with `samples` over every candidate, for one
/// profiled series: pooled with the profile when `samples` is the profile's, else from the
/// design's own boots with the profile's variance components predicting the noise.
fn worst(
    entry: &SeriesProfile,
    sequence: &[KernelLabel],
    baseline: &KernelLabel,
    samples: u32,
    candidates: &[KernelLabel],
) -> Option<(f64, bool)> {
    let pooled = samples == entry.samples;
    let (var, dof) = if pooled {
        (
            entry.all.rel_between(),
            entry.all.between_dof + own_dof(sequence),
        )
    } else {
        (
            boot_mean_rel_var(entry.all.rel_boot(), entry.all.rel_within(), samples),
            own_dof(sequence),
        )
    };
    let m_a = sequence.iter().filter(|k| *k == baseline).count();
    candidates
        .iter()
        .map(|c| {
            let m_c = sequence.iter().filter(|k| *k == c).count();
            minimal_detectable_pct(var, m_a, m_c, dof)
        })
        .try_fold(0.0_f64, |acc, pct| pct.map(|p| acc.max(p)))
        .map(|pct| (pct, pooled))
}

/// The advice for `recipe` on `target` from `profile`.
pub fn advise(recipe: &Recipe, target: &Target, profile: &Profile) -> Result<Advice, PlanError> {
    let candidates = candidates(recipe);
    let baseline = &recipe.analysis.baseline;
    let mut series = Vec::new();
    let mut entries: Vec<&SeriesProfile> = Vec::new();
    for w in &recipe.workloads {
        for case in w.cases() {
            for metric in &w.metrics {
                let label = series_label(w.name.as_str(), &case.name, metric.name.as_str());
                let noise = match series_match(profile, recipe, w, &case, metric) {
                    Ok(entry) => {
                        entries.push(entry);
                        let dof = entry.all.between_dof + own_dof(&recipe.sequence);
                        let m_a = recipe.sequence.iter().filter(|k| *k == baseline).count();
                        SeriesNoise::Known {
                            detectable: candidates
                                .iter()
                                .map(|c| Detectable {
                                    candidate: c.clone(),
                                    pct: minimal_detectable_pct(
                                        entry.all.rel_between(),
                                        m_a,
                                        recipe.sequence.iter().filter(|k| *k == c).count(),
                                        dof,
                                    ),
                                })
                                .collect(),
                            dof,
                            boot_sd_pct: entry.all.boot_sd_pct,
                            within_cv_pct: entry.all.within_cv_pct,
                        }
                    }
                    Err(why) => SeriesNoise::Unknown(why),
                };
                series.push(SeriesAdvice { label, noise });
            }
        }
    }
    let samples = recipe.workloads.first().map_or(0, |w| w.samples);
    let design_pct = entries
        .iter()
        .map(|e| worst(e, &recipe.sequence, baseline, e.samples, &candidates).map(|w| w.0))
        .try_fold(None, |acc: Option<f64>, pct| {
            pct.map(|p| Some(acc.map_or(p, |a: f64| a.max(p))))
        })
        .flatten();
    let recommendation = match recipe.analysis.detect_pct {
        Some(goal) if !entries.is_empty() && !candidates.is_empty() => {
            recommend(recipe, target, &entries, &candidates, goal, samples)?
        }
        _ => None,
    };
    Ok(Advice {
        series,
        design_pct,
        recommendation,
    })
}

/// The shortest repetition of the recipe's sequence, then the fewest samples, whose largest
/// detectable change over `entries` is at most `goal`.
fn recommend(
    recipe: &Recipe,
    target: &Target,
    entries: &[&SeriesProfile],
    candidates: &[KernelLabel],
    goal: f64,
    recipe_samples: u32,
) -> Result<Option<Recommendation>, PlanError> {
    let baseline = &recipe.analysis.baseline;
    let mut counts: Vec<u32> = SAMPLE_COUNTS.to_vec();
    counts.push(recipe_samples);
    counts.extend(entries.iter().map(|e| e.samples));
    counts.sort_unstable();
    counts.dedup();
    for times in 1.. {
        let sequence = repeated(&recipe.sequence, baseline, times);
        if sequence.len() > limits::POINTS {
            return Ok(None);
        }
        for &samples in &counts {
            let reached = entries
                .iter()
                .map(|e| worst(e, &sequence, baseline, samples, candidates))
                .try_fold((0.0_f64, true), |(acc, pooled), w| {
                    w.map(|(p, each)| (acc.max(p), pooled && each))
                });
            let Some((pct, pooled)) = reached else {
                continue;
            };
            if pct <= goal {
                let mut design = recipe.clone();
                design.sequence.clone_from(&sequence);
                for w in &mut design.workloads {
                    w.samples = samples;
                }
                let eta = Summary::new(&design, target)?.eta;
                return Ok(Some(Recommendation {
                    sequence,
                    samples,
                    pct,
                    eta,
                    pooled,
                }));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{SeriesNoise, advise, repeated};
    use crate::{
        inventory::Target,
        profile::{
            matching::definition_sha256,
            testdata::{LAB_RECIPE, profile},
        },
        recipe::{ident::KernelLabel, parse},
    };

    fn labels(names: &[&str]) -> Vec<KernelLabel> {
        names
            .iter()
            .map(|n| KernelLabel::new(n).expect("valid"))
            .collect()
    }

    #[test]
    fn the_repeat_unit_of_a_bracketed_sequence_is_after_its_first_point() {
        let a = KernelLabel::new("a").expect("valid");
        assert_eq!(
            repeated(&labels(&["a", "b", "a"]), &a, 3),
            labels(&["a", "b", "a", "b", "a", "b", "a"])
        );
        assert_eq!(
            repeated(&labels(&["a", "b"]), &a, 2),
            labels(&["a", "b", "a", "b"])
        );
    }

    #[test]
    fn the_profile_gives_the_detectable_change_and_the_design_that_reaches_the_goal() {
        let recipe = parse(Path::new("r.toml"), LAB_RECIPE).expect("valid");
        let mut p = profile();
        let w = &recipe.workloads[0];
        p.series[0].definition_sha256 = definition_sha256(&recipe, w, &w.case_at(0), &w.metrics[0]);
        let target = Target::any_switching();
        let advice = advise(&recipe, &target, &p).expect("plannable");
        let SeriesNoise::Known {
            detectable, dof, ..
        } = &advice.series[0].noise
        else {
            panic!("{advice:?}");
        };
        // Boot SD 1%, within CV 1% at 9 samples: V = 1.111e-4; ν = 5 + 1, δ = 3.367;
        // 3.367·√(1.111e-4·1.5) = 4.35%.
        assert_eq!(*dof, 6.0);
        let pct = detectable[0].pct.expect("resolvable");
        assert!((pct - 4.35).abs() < 0.01, "{pct}");
        assert_eq!(advice.design_pct, Some(pct));
        let rec = advice.recommendation.expect("reachable");
        assert!(rec.pct <= 2.0 && rec.pooled, "{rec:?}");
        // The fewest boots first: each shorter repetition misses 2% at every sample count.
        assert_eq!(rec.samples, 9);
        assert!(rec.sequence.len() > 3 && rec.sequence.len() % 2 == 1);
        let shorter = super::repeated(
            &recipe.sequence,
            &recipe.analysis.baseline,
            rec.sequence.len() / 2 - 1,
        );
        let entry = &p.series[0];
        for samples in super::SAMPLE_COUNTS {
            let w = super::worst(
                entry,
                &shorter,
                &recipe.analysis.baseline,
                samples,
                &labels(&["b"]),
            );
            assert!(w.is_none_or(|(pct, _)| pct > 2.0), "{samples}: {w:?}");
        }
        // A changed sample count: the series is not known from this profile.
        let other = parse(
            Path::new("r.toml"),
            &LAB_RECIPE.replace("samples = 9", "samples = 5"),
        )
        .expect("valid");
        let advice = advise(&other, &target, &p).expect("plannable");
        assert!(
            matches!(&advice.series[0].noise, SeriesNoise::Unknown(why) if why.contains("samples"))
        );
        assert_eq!((advice.design_pct, advice.recommendation), (None, None));
    }
}
