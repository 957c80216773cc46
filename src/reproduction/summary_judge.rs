//! A new campaign against a summary reference ([`crate::reproduction::summary`]): each
//! published change (candidate mean against baseline mean, from the published means) held
//! to the new campaign's own 95 % interval of the same change. The reference's noise is not
//! published, so nothing else can be judged, and every verdict says so.
//!
//! - INCONCLUSIVE when the new campaign has no interval for the change, or its own verdict
//!   decides nothing (INCONCLUSIVE, UNSTABLE, UNREPLICATED): its interval cannot judge
//!   anyone's figure.
//! - REPRODUCED when the published change lies inside the interval.
//! - DIFFERENT when it lies outside, the published change claims a change (at least the new
//!   campaign's gate) and the new campaign's SIGNAL has its direction: the same finding,
//!   another size.
//! - NOT_REPRODUCED otherwise: the published change is not what this campaign measures.

use serde::Serialize;

use crate::{
    reproduction::{
        evidence::{Evidence, EvidenceSeries},
        model::Counts,
        summary::{PublishedChange, PublishedKernel, SummaryReference, SummarySeries},
    },
    stats::{ReproductionLabel, VerdictLabel},
};

/// What the report says of every summary comparison: why only one side's interval judges.
pub const MEANS_ONLY: &str = "The reference publishes means only (no samples, no spread per \
     boot): each published change is judged against this campaign's 95% interval alone.";

/// The comparison of a campaign with a summary reference.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryReproduction {
    /// The new campaign's directory, as given.
    pub new: String,
    /// The reference.
    pub reference: SummaryReference,
    /// The kernel the changes are against.
    pub baseline: String,
    /// Every mapped series the new campaign has.
    pub series: Vec<SummarySeriesResult>,
    /// Mapped series the new campaign does not have (`workload[case]/metric`).
    pub only_reference: Vec<String>,
    /// Verdicts by label.
    pub counts: Counts,
}

/// One series on both sides.
#[derive(Clone, Debug, Serialize)]
pub struct SummarySeriesResult {
    /// The new campaign's series label.
    pub label: String,
    /// Its unit (empty when the recipe gives none).
    pub unit: String,
    /// The table it was read from.
    pub file: String,
    /// The published kernel means (a table of means).
    pub published: Vec<PublishedKernel>,
    /// The published changes (a table of changes).
    pub stated: Vec<PublishedChange>,
    /// Every candidate the reference publishes a mean of.
    pub candidates: Vec<SummaryCandidate>,
    /// Why a published kernel is not compared (no such kernel here, or the baseline
    /// missing on a side).
    pub not_compared: Vec<String>,
}

/// One candidate's published change against the new campaign's.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryCandidate {
    /// The candidate.
    pub candidate: String,
    /// The kernel it is against: the reference's baseline, or, for a published change of
    /// a table of changes, the kernel that change names.
    pub baseline: String,
    /// Whether the published figure is stated by the table (a table of changes) rather
    /// than derived from its means.
    pub stated: bool,
    /// Published: candidate mean / baseline mean − 1, in percent, or the change as stated.
    pub published_pct: f64,
    /// This campaign's change, percent (all samples).
    pub new_pct: f64,
    /// Its 95 % interval, percent; `None` when not estimable.
    pub interval: Option<(f64, f64)>,
    /// `boot-level` or `within-boot`.
    pub interval_kind: Option<&'static str>,
    /// This campaign's verdict label, as its report prints it.
    pub new_label: String,
    /// The reproduction verdict.
    pub verdict: ReproductionLabel,
    /// Why, in words.
    pub why: String,
}

/// Compares `new` with the summary reference `reference`.
#[must_use]
pub fn judge(new: &Evidence, reference: &SummaryReference) -> SummaryReproduction {
    let baseline = reference.baseline.clone().unwrap_or_else(|| {
        new.series
            .iter()
            .find_map(|s| s.result.comparisons.iter().find(|c| !c.declared))
            .map(|c| c.baseline.clone())
            .unwrap_or_default()
    });
    let mut counts = Counts::default();
    let mut series = Vec::new();
    let mut only_reference = Vec::new();
    for s in &reference.series {
        let found = new
            .series
            .iter()
            .find(|n| n.workload == s.workload && n.case == s.case && n.metric == s.metric);
        let Some(n) = found else {
            only_reference.push(series_name(s));
            continue;
        };
        let result = judge_series(n, s, &baseline, new.info.params.gate_pct);
        for c in &result.candidates {
            counts.add(c.verdict);
        }
        series.push(result);
    }
    SummaryReproduction {
        new: new.info.path.clone(),
        reference: reference.clone(),
        baseline,
        series,
        only_reference,
        counts,
    }
}

fn series_name(s: &SummarySeries) -> String {
    crate::analysis::series_label(&s.workload, &s.case, &s.metric)
}

/// A published change to judge: (candidate, baseline, percent, stated by the table).
struct Claim {
    candidate: String,
    baseline: String,
    pct: f64,
    stated: bool,
}

/// The published changes of `s`: stated by a table of changes, or each kernel's mean
/// against the baseline's; with why a published kernel cannot give one.
fn claims(s: &SummarySeries, baseline: &str) -> (Vec<Claim>, Vec<String>) {
    let mut claims: Vec<Claim> = s
        .changes
        .iter()
        .map(|c| Claim {
            candidate: c.candidate.clone(),
            baseline: c.baseline.clone(),
            pct: c.pct,
            stated: true,
        })
        .collect();
    let mut not_compared = Vec::new();
    let published_base = s.kernels.iter().find(|k| k.kernel == baseline);
    for k in s.kernels.iter().filter(|k| k.kernel != baseline) {
        match published_base {
            None => not_compared.push(format!(
                "{}: the reference publishes no mean of the baseline {baseline}",
                k.kernel
            )),
            Some(base) if base.mean <= 0.0 => not_compared.push(format!(
                "{}: the published baseline mean is {}, and a percentage of it does not exist",
                k.kernel, base.mean
            )),
            Some(base) => claims.push(Claim {
                candidate: k.kernel.clone(),
                baseline: baseline.to_owned(),
                pct: 100.0 * (k.mean / base.mean - 1.0),
                stated: false,
            }),
        }
    }
    (claims, not_compared)
}

fn judge_series(
    n: &EvidenceSeries,
    s: &SummarySeries,
    baseline: &str,
    gate_pct: f64,
) -> SummarySeriesResult {
    let mut candidates = Vec::new();
    let (claims, mut not_compared) = claims(s, baseline);
    for claim in claims {
        let Some(c) = n
            .result
            .comparisons
            .iter()
            .find(|c| c.candidate == claim.candidate && c.baseline == claim.baseline)
        else {
            not_compared.push(format!(
                "{}: this campaign has no comparison of it against {}",
                claim.candidate, claim.baseline
            ));
            continue;
        };
        let published_pct = claim.pct;
        let (interval, interval_kind) = match (&c.comparison.ci_boot, &c.comparison.ci_within) {
            (Some(ci), _) if ci.bounds.is_some() => (ci.bounds, Some("boot-level")),
            (_, Some(ci)) if ci.bounds.is_some() => (ci.bounds, Some("within-boot")),
            _ => (None, None),
        };
        let new_pct = c.comparison.change_pct;
        let decided = matches!(
            c.verdict.label,
            VerdictLabel::Signal | VerdictLabel::BelowGate | VerdictLabel::NoMaterialSignal
        );
        let (verdict, why) = match interval {
            None => (
                ReproductionLabel::Inconclusive,
                "this campaign has no interval for the change".to_owned(),
            ),
            Some(_) if !decided => (
                ReproductionLabel::Inconclusive,
                format!(
                    "this campaign's own verdict is {}: its interval judges no one's figure",
                    c.label
                ),
            ),
            Some((lo, hi)) if (lo..=hi).contains(&published_pct) => (
                ReproductionLabel::Reproduced,
                "the published change lies inside this campaign's interval".to_owned(),
            ),
            Some(_) => {
                let same_finding = published_pct.abs() >= gate_pct
                    && c.verdict.label == VerdictLabel::Signal
                    && published_pct.signum() == new_pct.signum();
                if same_finding {
                    (
                        ReproductionLabel::Different,
                        "the published change lies outside this campaign's interval, in the \
                         direction of its SIGNAL: the same finding, another size"
                            .to_owned(),
                    )
                } else {
                    (
                        ReproductionLabel::NotReproduced,
                        "the published change lies outside this campaign's interval".to_owned(),
                    )
                }
            }
        };
        candidates.push(SummaryCandidate {
            candidate: claim.candidate,
            baseline: claim.baseline,
            stated: claim.stated,
            published_pct,
            new_pct,
            interval,
            interval_kind,
            new_label: c.label.clone(),
            verdict,
            why,
        });
    }
    SummarySeriesResult {
        label: n.label.clone(),
        unit: n.unit.clone().unwrap_or_default(),
        file: s.file.clone(),
        published: s.kernels.clone(),
        stated: s.changes.clone(),
        candidates,
        not_compared,
    }
}

#[cfg(test)]
mod tests {
    use super::judge;
    use crate::{
        analysis::testkit::campaign,
        reproduction::{
            campaign::from_analysis,
            summary::{PublishedChange, PublishedKernel, SummaryReference, SummarySeries},
        },
        stats::ReproductionLabel,
    };

    const RECIPE: &str = "version = 1\nname = \"r\"\ndescription = \"unit\"\n\
        sequence = [\"a\", \"b\", \"a\", \"b\", \"a\"]\nwarmup = 0\nsamples = 3\n\
        [kernels.a]\nrelease = \"6.1.0-a\"\n[kernels.b]\nrelease = \"6.1.0-b\"\n\
        [[workload]]\nname = \"w\"\nrun = \"true\"\n\
        metric = { number = true, unit = \"ns\", better = \"lower\" }\n";

    /// b at `factor` times a, a little scatter between boots, tight samples.
    fn new_campaign(factor: f64, spread: f64) -> crate::reproduction::evidence::Evidence {
        let labels = ["a-a", "b-a", "a-b", "b-b", "a-c"];
        let scatter = [0.0, 0.1, -0.05, 0.05, 0.02];
        let values: Vec<Vec<f64>> = labels
            .iter()
            .zip(scatter)
            .enumerate()
            .map(|(i, (_, s))| {
                let mean = (100.0 + s * spread) * if i % 2 == 1 { factor } else { 1.0 };
                vec![mean - 0.1, mean, mean + 0.1]
            })
            .collect();
        let rows: Vec<(&str, &str, &[f64])> = labels
            .iter()
            .zip(&values)
            .map(|(p, v)| (*p, "w", v.as_slice()))
            .collect();
        from_analysis(&campaign(RECIPE, &rows), "new", &[], Vec::new())
    }

    fn reference(b: f64) -> SummaryReference {
        let kernel = |k: &str, mean: f64| PublishedKernel {
            kernel: k.to_owned(),
            mean,
            from: vec![format!("{k} (line 2)")],
        };
        SummaryReference {
            path: "map.toml".into(),
            description: None,
            baseline: None,
            files: vec!["t.tsv".into()],
            series: vec![SummarySeries {
                workload: "w".into(),
                case: String::new(),
                metric: "w".into(),
                file: "t.tsv".into(),
                kernels: vec![kernel("a", 100.0), kernel("b", b)],
                changes: Vec::new(),
                unused: Vec::new(),
            }],
        }
    }

    /// Each rule: inside the interval, outside in the SIGNAL's direction and at least the
    /// gate, outside otherwise, and a campaign whose own verdict decides nothing.
    #[test]
    fn the_published_change_against_this_campaigns_interval() {
        let signal = new_campaign(1.2, 1.0);
        let verdict = |r: &super::SummaryReproduction| r.series[0].candidates[0].verdict;
        let r = judge(&signal, &reference(120.0));
        assert_eq!(r.baseline, "a");
        assert_eq!(verdict(&r), ReproductionLabel::Reproduced, "{r:?}");
        assert!((r.series[0].candidates[0].published_pct - 20.0).abs() < 1e-9);
        assert_eq!(
            verdict(&judge(&signal, &reference(110.0))),
            ReproductionLabel::Different
        );
        assert_eq!(
            verdict(&judge(&signal, &reference(99.0))),
            ReproductionLabel::NotReproduced
        );
        assert_eq!(judge(&signal, &reference(99.0)).counts.not_reproduced, 1);
        // Boots that scatter by 20 %: the campaign decides nothing, so nothing is judged.
        let noisy = new_campaign(1.02, 400.0);
        let r = judge(&noisy, &reference(102.0));
        let c = &r.series[0].candidates[0];
        assert_eq!(c.verdict, ReproductionLabel::Inconclusive, "{c:?}");
        assert!(
            c.why.contains("its interval judges no one's figure"),
            "{c:?}"
        );
        // A series the campaign does not have, and a kernel it does not compare.
        let mut other = reference(120.0);
        other.series[0].metric = "x".into();
        let r = judge(&signal, &other);
        assert!(r.series.is_empty() && r.only_reference == ["w/x"], "{r:?}");
        let mut extra = reference(120.0);
        extra.series[0].kernels.push(PublishedKernel {
            kernel: "c".into(),
            mean: 1.0,
            from: Vec::new(),
        });
        let r = judge(&signal, &extra);
        assert_eq!(
            r.series[0].not_compared,
            ["c: this campaign has no comparison of it against a"]
        );
    }

    /// A table of changes: each stated change judged as stated, against the pair it names;
    /// a pair this campaign does not compare is named, not guessed.
    #[test]
    fn a_stated_change_is_judged_against_the_pair_it_names() {
        let signal = new_campaign(1.2, 1.0);
        let stated = |candidate: &str, baseline: &str, pct: f64| PublishedChange {
            candidate: candidate.into(),
            baseline: baseline.into(),
            pct,
            from: format!("{candidate}_vs_{baseline} (line 2)"),
        };
        let mut r = reference(120.0);
        r.series[0].kernels.clear();
        r.series[0].changes = vec![stated("b", "a", 20.0), stated("a", "b", -16.0)];
        let judged = judge(&signal, &r);
        let c = &judged.series[0].candidates;
        assert_eq!(c.len(), 1, "{judged:?}");
        assert!(c[0].stated && c[0].baseline == "a" && c[0].published_pct == 20.0);
        assert_eq!(c[0].verdict, ReproductionLabel::Reproduced);
        assert_eq!(
            judged.series[0].not_compared,
            ["a: this campaign has no comparison of it against b"]
        );
        r.series[0].changes = vec![stated("b", "a", -5.0)];
        assert_eq!(
            judge(&signal, &r).series[0].candidates[0].verdict,
            ReproductionLabel::NotReproduced
        );
    }
}
