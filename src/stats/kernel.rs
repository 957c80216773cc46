//! Per-kernel pooling over the boots of one kernel (STATISTICS.md 3.3): boot-weighted kernel
//! mean, within- and between-boot variance, the Kalibera–Jones boot-level variance component,
//! drift, range and a boot-effect test.
//!
//! A [`BootPoint`] is one fresh boot; `points` slices are always in boot order, so "first" and
//! "last" boot of a kernel are positions in that slice. Nothing here looks at raw samples: a
//! point carries its mean and, when known, its n and SD.
//!
//! References: T. Kalibera and R. Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013
//! (S₂², T₂² for a two-level design); B. L. Welch, Biometrika 34 (1947) for the two-boot test.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, FisherSnedecor, StudentsT};

use crate::stats::summary::{Summary, compensated_mean, compensated_sum};

/// p-value below which a boot-effect test says "boot-to-boot variation dominates".
///
/// 0.05 is the conventional level and matches the 95% intervals reported next to it; the test
/// only annotates the report and never changes a verdict, so no multiplicity correction.
pub const BOOT_EFFECT_ALPHA: f64 = 0.05;

/// One point: one fresh boot of one kernel, summarized.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BootPoint {
    /// Point label as in the recipe or source (`parent-a`).
    pub label: String,
    /// Kernel booted at this point (`parent`); several points may share it.
    pub kernel: String,
    /// Point statistic (the mean of the measured samples, or a published value).
    pub mean: f64,
    /// Number of measured samples behind `mean`; 0 when unknown (a published, rounded mean).
    pub n: usize,
    /// Sample SD of those samples; `None` when undefined (n < 2) or unknown.
    pub sd: Option<f64>,
}

impl BootPoint {
    /// Builds a point from the summary of its measured samples.
    #[must_use]
    pub fn from_summary(label: &str, kernel: &str, summary: &Summary) -> Self {
        Self {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean: summary.mean,
            n: summary.n,
            sd: summary.sd,
        }
    }
}

/// Which test [`BootEffect`] ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BootEffectTest {
    /// Welch's t between the two boots (m = 2).
    Welch,
    /// One-way ANOVA F over all boots (m ≥ 3).
    Anova,
}

/// Do the boots of one kernel differ more than their within-boot noise explains?
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BootEffect {
    /// Welch or ANOVA.
    pub test: BootEffectTest,
    /// t (signed, last boot minus first) or F.
    pub statistic: f64,
    /// Two-sided p-value for t, upper tail for F.
    pub p_value: f64,
    /// p < [`BOOT_EFFECT_ALPHA`]: the report says "boot-to-boot variation dominates".
    pub dominates: bool,
}

/// Everything about one kernel across its boots.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSummary {
    /// Kernel label.
    pub kernel: String,
    /// Indices into `points` of this kernel's boots, in boot order (m = `boots.len()`).
    pub boots: Vec<usize>,
    /// Boot-weighted mean: the mean of the point means (A/B/A: the midpoint).
    pub mean: f64,
    /// Pooled within-boot variance s_W² = Σ(n_j−1)s_j² / Σ(n_j−1); `None` when some boot with
    /// n ≥ 2 has no SD or no boot has n ≥ 2.
    pub within_var: Option<f64>,
    /// Between-boot variance of the point means S_B² = Σ(x̄_j − mean)²/(m−1); m ≥ 2.
    pub between_var: Option<f64>,
    /// Boot-level variance component T² = max(0, S_B² − s_W²/n̄), n̄ the harmonic mean of n_j.
    pub boot_var: Option<f64>,
    /// 100·(x̄_last − x̄_first)/x̄_first, signed, relative to the first boot; m ≥ 2.
    pub drift_pct: Option<f64>,
    /// 100·|x̄_last − x̄_first|/mean (fsnotify's "parent drift"); m ≥ 2.
    pub drift_abs_mid_pct: Option<f64>,
    /// 100·(max_j x̄_j − min_j x̄_j)/mean; equals `drift_abs_mid_pct` for m = 2; m ≥ 2.
    pub range_pct: Option<f64>,
    /// Welch (m = 2) or ANOVA (m ≥ 3) over the boots; needs n ≥ 2 and an SD at every boot.
    pub boot_effect: Option<BootEffect>,
}

/// Kernel labels in order of first appearance.
#[must_use]
pub fn kernels_in_order(points: &[BootPoint]) -> Vec<String> {
    let mut kernels: Vec<String> = Vec::new();
    for point in points {
        if !kernels.contains(&point.kernel) {
            kernels.push(point.kernel.clone());
        }
    }
    kernels
}

/// Indices of the boots of `kernel`, in boot order (empty when it was never booted).
#[must_use]
pub fn kernel_boots(points: &[BootPoint], kernel: &str) -> Vec<usize> {
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kernel == kernel)
        .map(|(i, _)| i)
        .collect()
}

/// Boot-weighted kernel mean: (1/m)·Σ x̄_j over the m boots of `kernel`; `None` when absent.
///
/// Each boot gets equal weight whatever its n, because the boot, not the sample, is the unit
/// of replication; with unequal n this deliberately differs from the pooled-sample mean.
#[must_use]
pub fn kernel_mean(points: &[BootPoint], kernel: &str) -> Option<f64> {
    compensated_mean(points.iter().filter(|p| p.kernel == kernel).map(|p| p.mean))
}

/// Pools the boots of `kernel`; `None` when the kernel has no boot in `points`.
#[must_use]
pub fn kernel_summary(points: &[BootPoint], kernel: &str) -> Option<KernelSummary> {
    let boots = kernel_boots(points, kernel);
    let boot_points: Vec<&BootPoint> = boots.iter().map(|&i| &points[i]).collect();
    let mean = compensated_mean(boot_points.iter().map(|p| p.mean))?;
    let m = boot_points.len();
    let within_var = within_variance(&boot_points);
    let between_var = (m >= 2).then(|| {
        compensated_sum(boot_points.iter().map(|p| (p.mean - mean).powi(2))) / (m - 1) as f64
    });
    let boot_var = match (between_var, within_var, harmonic_mean_n(&boot_points)) {
        (Some(between), Some(within), Some(n_bar)) => Some((between - within / n_bar).max(0.0)),
        _ => None,
    };
    let (first, last) = (boot_points[0].mean, boot_points[m - 1].mean);
    let multi = m >= 2;
    let drift_pct = (multi && first != 0.0).then(|| 100.0 * (last - first) / first);
    let drift_abs_mid_pct = (multi && mean != 0.0).then(|| 100.0 * (last - first).abs() / mean);
    let range_pct = (multi && mean != 0.0).then(|| {
        let max = boot_points
            .iter()
            .map(|p| p.mean)
            .fold(f64::NEG_INFINITY, f64::max);
        let min = boot_points
            .iter()
            .map(|p| p.mean)
            .fold(f64::INFINITY, f64::min);
        100.0 * (max - min) / mean
    });
    Some(KernelSummary {
        kernel: kernel.to_owned(),
        boot_effect: boot_effect(&boot_points),
        boots,
        mean,
        within_var,
        between_var,
        boot_var,
        drift_pct,
        drift_abs_mid_pct,
        range_pct,
    })
}

/// s_W² = Σ(n_j−1)s_j² / Σ(n_j−1). Boots with n ≤ 1 carry no within-boot information and are
/// skipped; a boot with n ≥ 2 but no SD makes the pooled value unknown.
fn within_variance(boots: &[&BootPoint]) -> Option<f64> {
    let mut squares = Vec::with_capacity(boots.len());
    let mut dof = 0_usize;
    for boot in boots.iter().filter(|b| b.n >= 2) {
        let sd = boot.sd?;
        squares.push((boot.n - 1) as f64 * sd * sd);
        dof += boot.n - 1;
    }
    (dof > 0).then(|| compensated_sum(squares) / dof as f64)
}

/// Harmonic mean of the boots' n; `None` when some n is unknown (0).
fn harmonic_mean_n(boots: &[&BootPoint]) -> Option<f64> {
    if boots.is_empty() || boots.iter().any(|b| b.n == 0) {
        return None;
    }
    let reciprocal = compensated_sum(boots.iter().map(|b| 1.0 / b.n as f64));
    Some(boots.len() as f64 / reciprocal)
}

/// Welch t for two boots, one-way ANOVA F for three or more, from each boot's (x̄, s, n).
///
/// BootPoint carries only sufficient statistics, so F is computed from them by hand; it is the
/// same F that `statrs::stats_tests::f_oneway` would give on the raw samples. `None` when m < 2,
/// a boot lacks n ≥ 2 or an SD, or there is no within-boot noise at all (the test is undefined).
fn boot_effect(boots: &[&BootPoint]) -> Option<BootEffect> {
    if boots.len() < 2 {
        return None;
    }
    let stats = boots
        .iter()
        .map(|b| Some((b.mean, b.sd.filter(|_| b.n >= 2)?, b.n as f64)))
        .collect::<Option<Vec<(f64, f64, f64)>>>()?;
    let (test, statistic, p_value) = if let [(m1, s1, n1), (m2, s2, n2)] = stats[..] {
        let (v1, v2) = (s1 * s1 / n1, s2 * s2 / n2);
        let se2 = v1 + v2;
        if se2 <= 0.0 {
            return None;
        }
        let t = (m2 - m1) / se2.sqrt();
        let dof = se2 * se2 / (v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0));
        let dist = StudentsT::new(0.0, 1.0, dof).ok()?;
        (BootEffectTest::Welch, t, (2.0 * dist.sf(t.abs())).min(1.0))
    } else {
        let total_n: f64 = stats.iter().map(|s| s.2).sum();
        let grand = compensated_sum(stats.iter().map(|(m, _, n)| n * m)) / total_n;
        let between = compensated_sum(stats.iter().map(|(m, _, n)| n * (m - grand).powi(2)));
        let within = compensated_sum(stats.iter().map(|(_, s, n)| (n - 1.0) * s * s));
        let df1 = (stats.len() - 1) as f64;
        let df2 = total_n - stats.len() as f64;
        if within <= 0.0 {
            return None;
        }
        let f = (between / df1) / (within / df2);
        let dist = FisherSnedecor::new(df1, df2).ok()?;
        (BootEffectTest::Anova, f, dist.sf(f))
    };
    Some(BootEffect {
        test,
        statistic,
        p_value,
        dominates: p_value < BOOT_EFFECT_ALPHA,
    })
}

#[cfg(test)]
mod tests {
    use super::{BootEffectTest, BootPoint, kernel_mean, kernel_summary, kernels_in_order};
    use crate::stats::{
        summary::summarize,
        testdata::{PEDRO_V3, points},
    };

    fn point(label: &str, kernel: &str, values: &[f64]) -> BootPoint {
        BootPoint::from_summary(label, kernel, &summarize(values).expect("not empty"))
    }

    fn bare(label: &str, kernel: &str, mean: f64) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 0,
            sd: None,
        }
    }

    fn pedro() -> Vec<BootPoint> {
        points(&PEDRO_V3, false)
    }

    #[test]
    fn pedro_boot_effect_dominates() {
        // STATISTICS.md 3.3: A1 vs A2 differ by 1.07 ns, SE 0.22, t ≈ 4.8.
        let parent = kernel_summary(&pedro(), "parent").expect("booted");
        let effect = parent.boot_effect.expect("sd and n known");
        assert_eq!(effect.test, BootEffectTest::Welch);
        assert_eq!(format!("{:.1}", effect.statistic), "-4.8");
        assert!(effect.dominates && effect.p_value < 1e-3);
        assert_eq!(format!("{:.2}", parent.drift_pct.expect("m = 2")), "-1.93");
        assert_eq!(parent.boots, vec![0, 2]);
        // T² is S_B² minus the part of it that within-boot noise explains.
        let within = parent.within_var.expect("sd known");
        let between = parent.between_var.expect("m = 2");
        assert!((parent.boot_var.expect("known") - (between - within / 15.0)).abs() < 1e-12);
    }

    #[test]
    fn single_boot_has_no_spread() {
        let child = kernel_summary(&pedro(), "child").expect("booted");
        assert_eq!(child.boots, vec![1]);
        assert_eq!(
            (child.drift_pct, child.between_var, child.boot_effect),
            (None, None, None)
        );
        assert!(child.within_var.is_some());
        assert!(kernel_summary(&pedro(), "absent").is_none());
    }

    #[test]
    fn five_boots_use_anova_and_range() {
        let points = vec![
            point("a1", "a", &[10.0, 10.2, 9.8]),
            point("b1", "b", &[12.0, 12.1, 11.9]),
            point("a2", "a", &[10.1, 10.3, 9.9]),
            point("b2", "b", &[12.0, 12.2, 11.8]),
            point("a3", "a", &[10.0, 10.1, 9.9]),
        ];
        let a = kernel_summary(&points, "a").expect("booted");
        let effect = a.boot_effect.expect("sd and n known");
        assert_eq!(effect.test, BootEffectTest::Anova);
        assert!(!effect.dominates);
        assert!((a.range_pct.expect("m = 3") - 100.0 * 0.1 / a.mean).abs() < 1e-9);
        assert!((a.drift_pct.expect("m = 3")).abs() < 1e-12);
        assert_eq!(kernels_in_order(&points), vec!["a", "b"]);
    }

    #[test]
    fn rounded_means_only() {
        let points = vec![
            bare("original-a", "original", 253.400),
            bare("patched", "patched", 250.268),
            bare("original-b", "original", 251.304),
        ];
        let original = kernel_summary(&points, "original").expect("booted");
        assert!((original.mean - 252.352).abs() < 1e-9);
        assert_eq!((original.within_var, original.boot_var), (None, None));
        assert_eq!(original.boot_effect, None);
        assert_eq!(
            format!("{:.3}", original.drift_pct.expect("m = 2")),
            "-0.827"
        );
        assert_eq!(kernel_mean(&points, "patched"), Some(250.268));
    }
}
