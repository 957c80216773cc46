//! Comparisons between kernels (STATISTICS.md 3.4): change against the baseline's boot-weighted
//! mean, per-boot brackets, point-to-point changes and decomposition (recovery) percentages.
//!
//! Sign convention everywhere: a positive change means the metric went up. Whether that is
//! "slower" or "faster" is decided by the metric's `better`, in the verdict and the report,
//! never here. Percentages are relative to the signed baseline (never to |baseline|).

use serde::Serialize;

use crate::stats::{
    interval::{BootVariance, RatioInterval, boot_variance, ci_boot_from, ci_within},
    kernel::{BootPoint, kernel_boots, kernel_mean},
    pooling::{BootPrior, Pooling, pooled_boot_variance},
    sequential::LookIntervals,
};

/// Change of the candidate against one boot of the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bracket {
    /// Label of the baseline point.
    pub baseline_point: String,
    /// 100·(kernel_mean(candidate) − x̄_point)/x̄_point.
    pub pct: f64,
}

/// One candidate kernel against the baseline kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Candidate kernel label.
    pub candidate: String,
    /// Baseline kernel label.
    pub baseline: String,
    /// Boot-weighted mean of the candidate.
    pub candidate_mean: f64,
    /// Boot-weighted mean of the baseline (A/B/A: the midpoint).
    pub baseline_mean: f64,
    /// candidate_mean − baseline_mean.
    pub diff: f64,
    /// 100·diff/baseline_mean.
    pub change_pct: f64,
    /// The candidate against each baseline boot, in boot order.
    pub brackets: Vec<Bracket>,
    /// The boot variance behind `ci_boot`: pooled S_B², ν, the within-boot floor.
    pub boot_variance: Option<BootVariance>,
    /// How a noise profile was used (pooled, or refused as noisier than its calibration);
    /// `None` without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooling: Option<Pooling>,
    /// Fieller 95% interval with the pooled between-boot variance; `None` when no kernel in
    /// the points was booted twice.
    pub ci_boot: Option<RatioInterval>,
    /// Fieller 95% interval from within-boot noise only; `None` when SDs are unknown.
    pub ci_within: Option<RatioInterval>,
    /// At a look of an extended campaign, the intervals at the look's level that the verdict
    /// judges the evidence with instead of the 95% ones; `None` for a fixed design.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub look: Option<LookIntervals>,
    /// Number of boots of the candidate.
    pub candidate_boots: usize,
    /// Number of boots of the baseline.
    pub baseline_boots: usize,
}

/// 100·(kernel_mean(candidate) − kernel_mean(baseline))/kernel_mean(baseline); `None` when a
/// kernel is absent or the baseline mean is 0.
#[must_use]
pub fn change_pct(points: &[BootPoint], candidate: &str, baseline: &str) -> Option<f64> {
    let c = kernel_mean(points, candidate)?;
    let a = kernel_mean(points, baseline)?;
    percent_change(c, a)
}

/// kernel_mean(candidate) − kernel_mean(baseline); `None` when a kernel is absent.
#[must_use]
pub fn diff(points: &[BootPoint], candidate: &str, baseline: &str) -> Option<f64> {
    Some(kernel_mean(points, candidate)? - kernel_mean(points, baseline)?)
}

/// 100·(x̄_p − x̄_q)/x̄_q between two points, by point label (fsnotify compares the child with
/// each parent boot separately); `None` when a label is absent or x̄_q = 0.
#[must_use]
pub fn point_change_pct(points: &[BootPoint], p_label: &str, q_label: &str) -> Option<f64> {
    let mean_of = |label: &str| points.iter().find(|p| p.label == label).map(|p| p.mean);
    percent_change(mean_of(p_label)?, mean_of(q_label)?)
}

/// Share of the gap from → to that the step x → y accounts for, in percent:
/// 100·(kernel_mean(x) − kernel_mean(y))/(kernel_mean(from) − kernel_mean(to)).
///
/// With a recipe's `gap = [child, parent]`, the steps of a decomposition sequence add up to
/// 100% including the residual. `None` when a kernel is absent or the gap is 0.
#[must_use]
pub fn recovery_pct(points: &[BootPoint], x: &str, y: &str, from: &str, to: &str) -> Option<f64> {
    let gap = kernel_mean(points, from)? - kernel_mean(points, to)?;
    let step = kernel_mean(points, x)? - kernel_mean(points, y)?;
    (gap != 0.0).then(|| 100.0 * step / gap)
}

/// The candidate's kernel mean against each boot of the baseline, in boot order.
///
/// This is the sandwich check "C beats each control boot", and with one candidate boot it is
/// fsnotify's per-parent column. Empty when either kernel is absent; a baseline boot with mean
/// 0 has no percentage and is left out.
#[must_use]
pub fn brackets(points: &[BootPoint], candidate: &str, baseline: &str) -> Vec<Bracket> {
    let Some(c) = kernel_mean(points, candidate) else {
        return Vec::new();
    };
    points
        .iter()
        .filter(|p| p.kernel == baseline)
        .filter_map(|p| {
            Some(Bracket {
                baseline_point: p.label.clone(),
                pct: percent_change(c, p.mean)?,
            })
        })
        .collect()
}

/// Compares `candidate` with `baseline`; `None` when either kernel is absent or the baseline
/// mean is 0 (no percentage exists).
#[must_use]
pub fn compare(points: &[BootPoint], candidate: &str, baseline: &str) -> Option<Comparison> {
    compare_with(points, candidate, baseline, None)
}

/// [`compare`] with a noise profile's boot variance: pooled with the campaign's own when the
/// two are compatible ([`pooled_boot_variance`]), which also gives a plain A/B a boot-level
/// interval.
#[must_use]
pub fn compare_with(
    points: &[BootPoint],
    candidate: &str,
    baseline: &str,
    prior: Option<&BootPrior>,
) -> Option<Comparison> {
    let candidate_mean = kernel_mean(points, candidate)?;
    let baseline_mean = kernel_mean(points, baseline)?;
    let change_pct = percent_change(candidate_mean, baseline_mean)?;
    let (boot_variance, pooling) =
        match prior.and_then(|p| pooled_boot_variance(points, baseline, p)) {
            Some((variance, pooling)) => (variance, Some(pooling)),
            None => (boot_variance(points), None),
        };
    let ci_boot = boot_variance
        .as_ref()
        .and_then(|v| ci_boot_from(points, candidate, baseline, v));
    Some(Comparison {
        candidate: candidate.to_owned(),
        baseline: baseline.to_owned(),
        candidate_mean,
        baseline_mean,
        diff: candidate_mean - baseline_mean,
        change_pct,
        brackets: brackets(points, candidate, baseline),
        boot_variance,
        pooling,
        ci_boot,
        ci_within: ci_within(points, candidate, baseline),
        look: None,
        candidate_boots: kernel_boots(points, candidate).len(),
        baseline_boots: kernel_boots(points, baseline).len(),
    })
}

/// 100·(new − old)/old, `None` when old = 0.
fn percent_change(new: f64, old: f64) -> Option<f64> {
    (old != 0.0).then(|| 100.0 * (new - old) / old)
}

#[cfg(test)]
mod tests {
    use super::{brackets, change_pct, compare, diff, point_change_pct, recovery_pct};
    use crate::stats::kernel::BootPoint;

    fn bare(label: &str, kernel: &str, mean: f64) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 0,
            sd: None,
        }
    }

    /// tmpfs fix-validation: v70-a v71 parent-a child parent-b v70-b (published means).
    fn tmpfs() -> Vec<BootPoint> {
        vec![
            bare("v70-a", "v70", 218.201800),
            bare("v71", "v71", 336.140000),
            bare("parent-a", "parent", 327.037200),
            bare("child", "child", 208.446667),
            bare("parent-b", "parent", 323.640467),
            bare("v70-b", "v70", 217.007333),
        ]
    }

    #[test]
    fn published_tmpfs_recovery() {
        let points = tmpfs();
        let recovery = recovery_pct(&points, "parent", "child", "parent", "v70").expect("gap");
        assert!((recovery - 108.500452).abs() < 1.6e-6);
        assert_eq!(recovery_pct(&points, "parent", "child", "v70", "v70"), None);
    }

    #[test]
    fn brackets_follow_baseline_boots() {
        let points = tmpfs();
        let b = brackets(&points, "child", "parent");
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].baseline_point, "parent-a");
        let first = point_change_pct(&points, "child", "parent-a").expect("present");
        assert!((b[0].pct - first).abs() < 1e-12);
        assert!(brackets(&points, "absent", "parent").is_empty());
    }

    #[test]
    fn comparison_matches_free_functions() {
        let points = tmpfs();
        let c = compare(&points, "child", "parent").expect("present");
        assert_eq!(Some(c.change_pct), change_pct(&points, "child", "parent"));
        assert_eq!(Some(c.diff), diff(&points, "child", "parent"));
        assert_eq!((c.candidate_boots, c.baseline_boots), (1, 2));
        // parent and v70 were booted twice: ν = 2.
        assert_eq!(c.ci_boot.as_ref().map(|ci| ci.dof), Some(2.0));
        assert_eq!(c.ci_within, None);
        assert!(compare(&points, "child", "absent").is_none());
        let zero = vec![bare("a", "a", 0.0), bare("b", "b", 1.0)];
        assert!(compare(&zero, "b", "a").is_none());
    }
}
