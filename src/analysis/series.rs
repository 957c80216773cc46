//! The statistics of one series (one workload case and metric): point summaries → kernel
//! pooling → each candidate against the baseline → verdicts, for all samples and for
//! drop-first, through the public `stats` API only.
//!
//! The two analyses judge each other: the all-samples verdict takes drop-first as its
//! robustness check (STATISTICS.md 3.6), and the drop-first verdict takes the all-samples
//! comparison as its own, so "same conclusion" compares two verdicts reached the same way.

use crate::{
    analysis::{
        environment::EnvironmentCheck,
        model::{AnalysisKind, CandidateResult, SeriesPoint, SeriesResult},
        recovery::decompose,
    },
    recipe::resolved::Recovery,
    stats::{
        Better, BootPoint, BootPrior, Comparison, Direction, KernelSummary, Trend, VerdictInput,
        VerdictParams, compare_with, kernel_summary, kernels_in_order,
        sequential::{Look, LookIntervals},
        trend_test, verdict,
    },
};

/// What a series' analysis depends on besides its points.
#[derive(Clone, Copy, Debug)]
pub struct SeriesContext<'a> {
    /// Baseline kernel.
    pub baseline: &'a str,
    /// Candidate kernels in order of first boot.
    pub candidates: &'a [String],
    /// Declared comparisons besides each candidate against the baseline, as (candidate,
    /// baseline) pairs (`[[analysis.comparison]]`).
    pub declared: &'a [(String, String)],
    /// Verdict parameters.
    pub params: &'a VerdictParams,
    /// Which direction is an improvement.
    pub better: Better,
    /// Auxiliary workload: labels get the `AUX_` prefix.
    pub aux: bool,
    /// Recovery decompositions.
    pub recoveries: &'a [Recovery],
    /// The noise profile's boot variance for all samples, when its entry for this series
    /// holds.
    pub prior_all: Option<&'a BootPrior>,
    /// The same for drop-first.
    pub prior_drop_first: Option<&'a BootPrior>,
    /// The environment records, compared: a difference among a comparison's kernels makes
    /// it UNSTABLE.
    pub environment: &'a EnvironmentCheck,
    /// The look of an extended campaign these points make (`[analysis] extend`): its
    /// evidence is judged at the look's level, not at 95%; `None` for a fixed design.
    pub look: Option<Look>,
}

impl<'a> SeriesContext<'a> {
    /// Every comparison of the series as (candidate, baseline): each candidate against the
    /// baseline, then the declared ones.
    fn pairs(&self) -> Vec<(&'a str, &'a str)> {
        self.candidates
            .iter()
            .map(|c| (c.as_str(), self.baseline))
            .chain(self.declared.iter().map(|(c, b)| (c.as_str(), b.as_str())))
            .collect()
    }
}

/// Both analyses of a series.
#[derive(Clone, Debug)]
pub struct SeriesAnalyses {
    /// All samples; `None` without points.
    pub all: Option<SeriesResult>,
    /// Drop-first; `None` when unavailable.
    pub drop_first: Option<SeriesResult>,
    /// Why drop-first is unavailable.
    pub drop_first_unavailable: Option<String>,
}

/// Per-analysis intermediate: points, kernels and raw comparisons before verdicts.
struct Stage {
    kind: AnalysisKind,
    points: Vec<BootPoint>,
    cvs: Vec<Option<f64>>,
    kernels: Vec<KernelSummary>,
    comparisons: Vec<Option<Comparison>>,
    /// The trend test over every point of the series (`None` below ν = 3).
    trend: Option<Trend>,
}

/// Analyses `points` (a series' done points in boot order).
#[must_use]
pub fn analyze_series(points: &[SeriesPoint], ctx: &SeriesContext<'_>) -> SeriesAnalyses {
    if points.is_empty() {
        return SeriesAnalyses {
            all: None,
            drop_first: None,
            drop_first_unavailable: Some("no point has values".to_owned()),
        };
    }
    let all = stage(AnalysisKind::All, points, ctx);
    // Drop-first needs an SD (hence a CV) at every point, so n ≥ 3: with n = 2 it would run
    // on one sample per point without a CV, and its check would mean nothing.
    // Named as the reports name points (`a#1`), not by their identifiers.
    let named = |n: usize| -> Vec<String> {
        points
            .iter()
            .filter(|p| p.values_n() == n)
            .map(|p| crate::point_name::point_name(&p.label, &p.kernel))
            .collect()
    };
    let (single, pairs) = (named(1), named(2));
    let usable = single.is_empty() && pairs.is_empty();
    let drop_first = usable.then(|| stage(AnalysisKind::DropFirst, points, ctx));
    let drop_first_unavailable = (!usable).then(|| {
        let mut why = Vec::new();
        if !single.is_empty() {
            why.push(format!(
                "{} {} a single sample, nothing is left after dropping the first",
                single.join(", "),
                if single.len() == 1 { "has" } else { "have" }
            ));
        }
        if !pairs.is_empty() {
            why.push(format!(
                "{} {} 2 samples, dropping the first leaves one, with no SD or CV",
                pairs.join(", "),
                if pairs.len() == 1 { "has" } else { "have" }
            ));
        }
        format!("{}; the drop-first check could not be made", why.join("; "))
    });
    let refusal = percentages_refused(points);
    let all_result = finish(&all, drop_first.as_ref(), ctx, refusal.as_deref());
    let df_result = drop_first
        .as_ref()
        .map(|df| finish(df, Some(&all), ctx, refusal.as_deref()));
    SeriesAnalyses {
        all: Some(all_result),
        drop_first: df_result,
        drop_first_unavailable,
    }
}

/// Why percentages of this series do not exist: a point mean ≤ 0 (a percentage of it would
/// turn a regression into "10% faster", and a CV of it is not a CV) or a negative value (the
/// metric is not a magnitude); `None` when every value is ≥ 0 and every mean > 0.
pub(crate) fn percentages_refused(points: &[SeriesPoint]) -> Option<String> {
    if let Some(p) = points.iter().find(|p| p.all.mean <= 0.0) {
        return Some(format!(
            "{} has mean {}, and a percentage of a mean ≤ 0 does not exist, so no change, CV \
             limit or verdict is computed",
            p.label, p.all.mean
        ));
    }
    points.iter().find(|p| p.all.min < 0.0).map(|p| {
        format!(
            "the metric has negative values ({} has {}): percentages of it are not defined, so \
             no change, CV limit or verdict is computed",
            p.label, p.all.min
        )
    })
}

fn stage(kind: AnalysisKind, points: &[SeriesPoint], ctx: &SeriesContext<'_>) -> Stage {
    let summaries: Vec<_> = points
        .iter()
        .map(|p| match kind {
            AnalysisKind::All => &p.all,
            AnalysisKind::DropFirst => p
                .drop_first
                .as_ref()
                .expect("invariant: drop-first is staged only when every point has it"),
        })
        .collect();
    let boot_points: Vec<BootPoint> = points
        .iter()
        .zip(&summaries)
        .map(|(p, s)| BootPoint::from_summary(&p.label, &p.kernel, s))
        .collect();
    let kernels = kernels_in_order(&boot_points)
        .iter()
        .filter_map(|k| kernel_summary(&boot_points, k))
        .collect();
    let prior = match kind {
        AnalysisKind::All => ctx.prior_all,
        AnalysisKind::DropFirst => ctx.prior_drop_first,
    };
    let comparisons = ctx
        .pairs()
        .into_iter()
        .map(|(c, baseline)| {
            let mut cmp = compare_with(&boot_points, c, baseline, prior)?;
            cmp.look = ctx.look.map(|look| {
                LookIntervals::new(&boot_points, c, baseline, cmp.boot_variance.as_ref(), look)
            });
            Some(cmp)
        })
        .collect();
    Stage {
        kind,
        trend: trend_test(&boot_points),
        cvs: summaries.iter().map(|s| s.cv_pct).collect(),
        points: boot_points,
        kernels,
        comparisons,
    }
}

fn finish(
    own: &Stage,
    other: Option<&Stage>,
    ctx: &SeriesContext<'_>,
    refusal: Option<&str>,
) -> SeriesResult {
    let mut comparisons = Vec::new();
    let mut not_compared = Vec::new();
    for (i, (candidate, baseline)) in ctx.pairs().into_iter().enumerate() {
        // A declared comparison is named with its baseline wherever it is listed.
        let name = if baseline == ctx.baseline {
            candidate.to_owned()
        } else {
            format!("{candidate} vs {baseline}")
        };
        if let Some(why) = refusal {
            if own.points.iter().any(|p| p.kernel == candidate) {
                not_compared.push(format!("{name}: {why}"));
            } else {
                not_compared.push(why_not_compared(&own.points, &name, candidate, baseline));
            }
            continue;
        }
        let Some(cmp) = &own.comparisons[i] else {
            not_compared.push(why_not_compared(&own.points, &name, candidate, baseline));
            continue;
        };
        let other_cmp = other.and_then(|o| o.comparisons[i].as_ref());
        let own_verdict = judge(own, cmp, other_cmp, ctx);
        let same_conclusion = other
            .zip(other_cmp)
            .map(|(o, other_cmp)| judge(o, other_cmp, Some(cmp), ctx).label == own_verdict.label);
        let label = if ctx.aux {
            format!("AUX_{}", own_verdict.label)
        } else {
            own_verdict.label.to_string()
        };
        let borrowed_from = if cmp.ci_boot.is_some() && cmp.candidate_boots == 1 {
            own.kernels
                .iter()
                .filter(|k| k.boots.len() >= 2)
                .map(|k| k.kernel.clone())
                .collect()
        } else {
            Vec::new()
        };
        comparisons.push(CandidateResult {
            candidate: candidate.to_owned(),
            baseline: baseline.to_owned(),
            declared: baseline != ctx.baseline,
            comparison: cmp.clone(),
            max_cv_pct: max_cv(own, &[candidate, baseline]),
            direction: own_verdict.direction.map(|d| {
                match d {
                    Direction::Worse => "slower",
                    Direction::Better => "faster",
                }
                .to_owned()
            }),
            verdict: own_verdict,
            label,
            borrowed_from,
            same_conclusion,
        });
    }
    SeriesResult {
        kind: own.kind,
        max_cv_pct: own.cvs.iter().flatten().copied().reduce(f64::max),
        points: own.points.clone(),
        kernels: own.kernels.clone(),
        comparisons,
        not_compared,
        recoveries: ctx
            .recoveries
            .iter()
            .map(|r| decompose(&own.points, r))
            .collect(),
    }
}

/// The verdict of `cmp` (from `own`), with `robust_against` as its drop-first check.
fn judge(
    own: &Stage,
    cmp: &Comparison,
    robust_against: Option<&Comparison>,
    ctx: &SeriesContext<'_>,
) -> crate::stats::Verdict {
    let input = VerdictInput {
        all: cmp,
        drop_first: robust_against,
        kernels: &own.kernels,
        max_cv_pct: max_cv(own, &[&cmp.candidate, &cmp.baseline]),
        cv_basis: cv_basis(own, &[&cmp.candidate, &cmp.baseline]),
        better: ctx.better,
        environment: &ctx.environment.affecting(&cmp.candidate, &cmp.baseline),
        trend: own.trend.as_ref(),
    };
    verdict(ctx.params, &input)
}

/// Largest CV over the points of `kernels`; `None` when no such point has a CV.
fn max_cv(stage: &Stage, kernels: &[&str]) -> Option<f64> {
    stage
        .points
        .iter()
        .zip(&stage.cvs)
        .filter(|(p, _)| kernels.contains(&p.kernel.as_str()))
        .filter_map(|(_, cv)| *cv)
        .reduce(f64::max)
}

/// What the largest CV over the points of `kernels` was measured from: its point's sample
/// count and how many such points have a CV; `None` when no point has one.
fn cv_basis(stage: &Stage, kernels: &[&str]) -> Option<crate::stats::CvBasis> {
    let with_cv: Vec<(usize, f64)> = stage
        .points
        .iter()
        .zip(&stage.cvs)
        .filter(|(p, _)| kernels.contains(&p.kernel.as_str()))
        .filter_map(|(p, cv)| Some((p.n, (*cv)?)))
        .collect();
    let (samples, _) = with_cv
        .iter()
        .copied()
        .reduce(|a, b| if b.1 > a.1 { b } else { a })?;
    Some(crate::stats::CvBasis {
        samples,
        points: with_cv.len(),
    })
}

/// Why `candidate` against `baseline` has no comparison, led by its `name` in the report.
fn why_not_compared(points: &[BootPoint], name: &str, candidate: &str, baseline: &str) -> String {
    let has = |k: &str| points.iter().any(|p| p.kernel == k);
    if !has(baseline) {
        format!("{name}: the baseline {baseline} has no done point with values")
    } else if !has(candidate) {
        format!("{name}: no done point with values")
    } else {
        format!("{name}: the baseline mean is 0, a percentage does not exist")
    }
}

#[cfg(test)]
mod tests {
    use super::{SeriesContext, analyze_series};
    use crate::{
        analysis::{environment::EnvironmentCheck, model::SeriesPoint},
        stats::{Better, VerdictParams, summarize},
    };

    fn point(order: usize, label: &str, kernel: &str, values: &[f64]) -> SeriesPoint {
        SeriesPoint {
            order,
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            values: values.to_vec(),
            warmups: Vec::new(),
            all: summarize(values).expect("not empty"),
            drop_first: summarize(&values[1..]),
        }
    }

    static NO_DIFFERENCES: std::sync::LazyLock<EnvironmentCheck> =
        std::sync::LazyLock::new(EnvironmentCheck::default);

    fn ctx<'a>(
        candidates: &'a [String],
        params: &'a VerdictParams,
        aux: bool,
    ) -> SeriesContext<'a> {
        SeriesContext {
            baseline: "a",
            candidates,
            declared: &[],
            params,
            better: Better::Lower,
            aux,
            recoveries: &[],
            prior_all: None,
            prior_drop_first: None,
            environment: &NO_DIFFERENCES,
            look: None,
        }
    }

    #[test]
    fn drop_first_removes_the_first_value_at_every_point() {
        // A slow first run at every point: all samples differ from drop-first.
        let points = [
            point(1, "a-a", "a", &[20.0, 10.0, 10.2, 9.8]),
            point(2, "b", "b", &[30.0, 15.0, 15.1, 14.9]),
            point(3, "a-b", "a", &[20.0, 10.1, 10.0, 10.2]),
        ];
        let candidates = ["b".to_owned()];
        let params = VerdictParams::default();
        let result = analyze_series(&points, &ctx(&candidates, &params, false));
        let df = result.drop_first.expect("n ≥ 2 everywhere");
        let means: Vec<f64> = df.points.iter().map(|p| p.mean).collect();
        assert!((means[0] - 10.0).abs() < 1e-12 && (means[1] - 15.0).abs() < 1e-12);
        let all = result.all.expect("points");
        assert!((all.points[0].mean - 12.5).abs() < 1e-12);
        let c = &df.comparisons[0];
        assert!((c.comparison.baseline_mean - (10.0 + 10.1) / 2.0).abs() < 1e-12);
        assert_eq!(c.candidate, "b");
        assert_eq!(c.borrowed_from, ["a"]);
    }

    #[test]
    fn aux_labels_and_single_samples() {
        let points = [
            point(1, "a-a", "a", &[10.0]),
            point(2, "b", "b", &[20.0, 20.0]),
            point(3, "a-b", "a", &[10.0, 10.0]),
        ];
        let candidates = ["b".to_owned(), "c".to_owned()];
        let params = VerdictParams::default();
        let result = analyze_series(&points, &ctx(&candidates, &params, true));
        assert!(result.drop_first.is_none());
        assert_eq!(
            result.drop_first_unavailable.as_deref(),
            Some(
                "a#1 has a single sample, nothing is left after dropping the first; b, a#2 \
                 have 2 samples, dropping the first leaves one, with no SD or CV; the \
                 drop-first check could not be made"
            )
        );
        let all = result.all.expect("points");
        // No drop-first: robustness fails, so no SIGNAL, and the label is AUX_.
        assert!(all.comparisons[0].label.starts_with("AUX_"));
        assert_ne!(all.comparisons[0].label, "AUX_SIGNAL");
        assert_eq!(all.comparisons[0].same_conclusion, None);
        assert_eq!(all.not_compared, ["c: no done point with values"]);
    }

    #[test]
    fn two_samples_per_point_say_the_drop_first_check_could_not_be_made() {
        // n = 2: drop-first would run on single samples without an SD or CV.
        let points = [
            point(1, "a-a", "a", &[10.0, 10.1]),
            point(2, "b", "b", &[20.0, 20.1]),
            point(3, "a-b", "a", &[10.0, 10.2]),
        ];
        let candidates = ["b".to_owned()];
        let params = VerdictParams::default();
        let result = analyze_series(&points, &ctx(&candidates, &params, false));
        assert!(result.drop_first.is_none());
        let why = result.drop_first_unavailable.expect("unavailable");
        assert!(
            why.ends_with("with no SD or CV; the drop-first check could not be made"),
            "{why}"
        );
        let all = result.all.expect("points");
        // Robustness cannot be checked, so no SIGNAL, and the reason says so.
        let v = &all.comparisons[0].verdict;
        assert!(!v.robust);
        assert!(
            v.reasons
                .iter()
                .any(|r| r == "drop-first comparison unavailable")
        );
    }

    #[test]
    fn a_mean_at_or_below_zero_or_a_negative_value_refuses_percentages() {
        let candidates = ["b".to_owned()];
        let params = VerdictParams::default();
        for (a2, want) in [
            (
                [0.0, 0.0, 0.0],
                "b: a-b has mean 0, and a percentage of a mean ≤ 0 does not exist",
            ),
            (
                [-5.0, -4.0, -6.0],
                "b: a-b has mean -5, and a percentage of a mean ≤ 0 does not exist",
            ),
            (
                [-1.0, 2.0, 5.0],
                "b: the metric has negative values (a-b has -1): percentages of it are not \
                 defined",
            ),
        ] {
            let points = [
                point(1, "a-a", "a", &[10.0, 10.1, 9.9]),
                point(2, "b", "b", &[9.0, 9.1, 8.9]),
                point(3, "a-b", "a", &a2),
            ];
            let result = analyze_series(&points, &ctx(&candidates, &params, false));
            let all = result.all.expect("points");
            assert!(all.comparisons.is_empty(), "{a2:?} was judged");
            assert!(
                all.not_compared[0].starts_with(want),
                "{}",
                all.not_compared[0]
            );
            assert!(all.not_compared[0].ends_with("so no change, CV limit or verdict is computed"));
        }
    }
}
