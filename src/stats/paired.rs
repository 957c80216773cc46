//! Two cases measured in the same boots (`[[analysis.case_comparison]]`): the treatment case
//! against the control case within one kernel, paired point by point.
//!
//! Both cases of a point share that boot's effect, so what varies from boot to boot is the
//! per-point difference t̄_j − R·c̄_j, not each case mean: the boot-level interval is built
//! from those differences (docs/statistics.md §13), which is what the verdict simulator
//! calibrates (`cargo bench --bench verdicts -- --cases`). A kernel comparison, whose two
//! sides come from different boots, uses [`crate::stats::compare_with`] instead.

use crate::stats::{
    compare::{Bracket, Comparison},
    interval::{BootVariance, IntervalKind, RatioInterval, ci_within, t_quantile_975},
    kernel::BootPoint,
    summary::compensated_sum,
};

/// One done point at which both cases have values.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedPoint {
    /// The control case's statistics at this point (`kernel` is the point's kernel).
    pub control: BootPoint,
    /// The treatment case's statistics at the same point.
    pub treatment: BootPoint,
}

impl PairedPoint {
    fn kernel(&self) -> &str {
        &self.control.kernel
    }
}

/// The covariance of the two case means of one point, pooled over every kernel with two
/// paired points or more (deviations from each kernel's own means, as S_B² pools a kernel
/// comparison's boots), with its within-boot floor terms.
#[derive(Clone, Debug, PartialEq)]
struct PairedVariance {
    /// Var(t̄_j), Cov(t̄_j, c̄_j), Var(c̄_j) per point.
    tt: f64,
    tc: f64,
    cc: f64,
    /// ν = Σ_k (m_k − 1).
    dof: f64,
    /// What within-boot noise alone makes `tt` and `cc` on average (L of
    /// [`BootVariance`]); `None` when a pooled point has no SD.
    within: Option<(f64, f64)>,
}

fn paired_variance(points: &[PairedPoint]) -> Option<PairedVariance> {
    let mut kernels: Vec<&str> = Vec::new();
    for p in points {
        if !kernels.contains(&p.kernel()) {
            kernels.push(p.kernel());
        }
    }
    let (mut tt, mut tc, mut cc) = (Vec::new(), Vec::new(), Vec::new());
    let (mut lt, mut lc) = (Vec::new(), Vec::new());
    let mut within_known = true;
    let mut dof = 0_usize;
    for kernel in kernels {
        let mine: Vec<&PairedPoint> = points.iter().filter(|p| p.kernel() == kernel).collect();
        let m = mine.len();
        if m < 2 {
            continue;
        }
        let mean =
            |f: fn(&PairedPoint) -> f64| compensated_sum(mine.iter().map(|p| f(p))) / m as f64;
        let t_mean = mean(|p| p.treatment.mean);
        let c_mean = mean(|p| p.control.mean);
        let share = 1.0 - 1.0 / m as f64;
        for p in &mine {
            let (dt, dc) = (p.treatment.mean - t_mean, p.control.mean - c_mean);
            tt.push(dt * dt);
            tc.push(dt * dc);
            cc.push(dc * dc);
            let sq = |b: &BootPoint| b.sd.filter(|_| b.n >= 2).map(|sd| sd * sd / b.n as f64);
            match (sq(&p.treatment), sq(&p.control)) {
                (Some(t), Some(c)) => {
                    lt.push(share * t);
                    lc.push(share * c);
                }
                _ => within_known = false,
            }
        }
        dof += m - 1;
    }
    if dof == 0 {
        return None;
    }
    let nu = dof as f64;
    Some(PairedVariance {
        tt: compensated_sum(tt) / nu,
        tc: compensated_sum(tc) / nu,
        cc: compensated_sum(cc) / nu,
        dof: nu,
        within: within_known.then(|| (compensated_sum(lt) / nu, compensated_sum(lc) / nu)),
    })
}

/// The treatment case against the control case on `kernel`, from the paired points of every
/// kernel (`points`; the other kernels only lend the pooled variance of the per-point
/// differences, like a kernel booted once borrows S_B²). `None` when `kernel` has no paired
/// point or the control's mean is 0.
///
/// The [`Comparison`] reads as a kernel comparison's: `baseline_mean` is the control case's
/// mean over the kernel's points (its midpoint), `brackets` the change at each point (the
/// sandwich check becomes "the treatment beats the control at every boot"), `ci_boot` the
/// paired Fieller interval below, `ci_within` the within-only one of the two cases' samples,
/// and `boot_variance` the variance of one point's difference t̄_j − R̂·c̄_j (floored at
/// f_ν·L like S_B²).
#[must_use]
pub fn compare_paired(
    points: &[PairedPoint],
    kernel: &str,
    treatment: &str,
    control: &str,
) -> Option<Comparison> {
    let mine: Vec<&PairedPoint> = points.iter().filter(|p| p.kernel() == kernel).collect();
    if mine.is_empty() {
        return None;
    }
    let m = mine.len() as f64;
    let c = compensated_sum(mine.iter().map(|p| p.control.mean)) / m;
    let t = compensated_sum(mine.iter().map(|p| p.treatment.mean)) / m;
    if c == 0.0 {
        return None;
    }
    let ratio = t / c;
    let brackets = mine
        .iter()
        .filter(|p| p.control.mean != 0.0)
        .map(|p| Bracket {
            baseline_point: p.control.label.clone(),
            pct: 100.0 * (p.treatment.mean - p.control.mean) / p.control.mean,
        })
        .collect();
    let variance = paired_variance(points).map(|v| floored(v, ratio));
    let ci_boot = variance.as_ref().map(|(v, boot)| RatioInterval {
        kind: IntervalKind::BootLevel,
        dof: v.dof,
        bounds: paired_fieller(t, c, v, m),
        floored: boot.floored,
    });
    // The within-only interval treats the two cases as independent samples of one kernel
    // each: `ci_within` over the points relabelled by case.
    let relabelled: Vec<BootPoint> = mine
        .iter()
        .flat_map(|p| {
            [
                BootPoint {
                    kernel: control.to_owned(),
                    ..p.control.clone()
                },
                BootPoint {
                    kernel: treatment.to_owned(),
                    ..p.treatment.clone()
                },
            ]
        })
        .collect();
    Some(Comparison {
        candidate: treatment.to_owned(),
        baseline: control.to_owned(),
        candidate_mean: t,
        baseline_mean: c,
        diff: t - c,
        change_pct: 100.0 * (ratio - 1.0),
        brackets,
        boot_variance: variance.map(|(_, boot)| boot),
        pooling: None,
        ci_boot,
        ci_within: ci_within(&relabelled, treatment, control),
        candidate_boots: mine.len(),
        baseline_boots: mine.len(),
        // Case comparisons take no part in an extended campaign's stopping rule: they are
        // judged at 95 % at whatever look the campaign stopped (docs/recipes.md).
        look: None,
    })
}

/// The pooled covariance with the variance of a per-point difference at `ratio` floored at
/// f_ν·L (L = L_t + R̂²·L_c): when it is below, `tt` and `cc` are raised by the same share
/// δ of their within-boot terms, which raises the difference's variance to exactly f_ν·L.
/// The [`BootVariance`] reports the difference's variance before (`between`) and after
/// (`used`).
fn floored(mut v: PairedVariance, ratio: f64) -> (PairedVariance, BootVariance) {
    let at = |v: &PairedVariance| v.tt - 2.0 * ratio * v.tc + ratio * ratio * v.cc;
    let between = at(&v).max(0.0);
    let within = v.within.map(|(lt, lc)| lt + ratio * ratio * lc);
    let boot = BootVariance::floored_at(between, v.dof, within);
    if boot.floored
        && let (Some((lt, lc)), Some(l)) = (v.within, within)
        && l > 0.0
    {
        let delta = (boot.used - between) / l;
        v.tt += delta * lt;
        v.cc += delta * lc;
    }
    (v, boot)
}

/// Fieller's interval for R = T̄/C̄ with correlated numerator and denominator, as change %:
/// the R for which the mean per-point difference T̄ − R·C̄ is within t_ν of 0 given the
/// variance of that difference, v_tt − 2R·v_tc + R²·v_cc (v = pooled covariance / m):
/// q = C̄² − t²v_cc, b = T̄C̄ − t²v_tc, D = b² − q(T̄² − t²v_tt), R = (b ∓ √D)/q.
/// At R = 1 this is the paired t-test of the differences. `None` when q ≤ 0 or D < 0.
fn paired_fieller(t: f64, c: f64, v: &PairedVariance, m: f64) -> Option<(f64, f64)> {
    let quantile = t_quantile_975(v.dof);
    let t2 = quantile * quantile;
    let (v_tt, v_tc, v_cc) = (v.tt / m, v.tc / m, v.cc / m);
    let q = c * c - t2 * v_cc;
    if q.is_nan() || q <= 0.0 {
        return None;
    }
    let b = t * c - t2 * v_tc;
    let d = b * b - q * (t * t - t2 * v_tt);
    // Differences that agree exactly make D = 0 up to rounding: one point, not unbounded.
    let d = if d < 0.0 && d > -1e-12 * b * b {
        0.0
    } else {
        d
    };
    if d.is_nan() || d < 0.0 {
        return None;
    }
    let root = d.sqrt();
    let (r1, r2) = ((b - root) / q, (b + root) / q);
    Some((100.0 * (r1.min(r2) - 1.0), 100.0 * (r1.max(r2) - 1.0)))
}

#[cfg(test)]
mod tests {
    use super::{PairedPoint, compare_paired};
    use crate::stats::{interval::t_quantile_975, kernel::BootPoint};

    fn point(label: &str, kernel: &str, mean: f64, sd: Option<f64>) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 10,
            sd,
        }
    }

    fn pair(label: &str, kernel: &str, control: f64, treatment: f64) -> PairedPoint {
        PairedPoint {
            control: point(label, kernel, control, None),
            treatment: point(label, kernel, treatment, None),
        }
    }

    #[test]
    fn a_shared_boot_effect_cancels_in_the_paired_interval() {
        // Boots 100 and 110 (a 10% boot effect) with the treatment 5% above the control at
        // both: the case means differ by boot, their ratio does not.
        let points = [
            pair("a-a", "a", 100.0, 105.0),
            pair("b", "b", 90.0, 94.5),
            pair("a-b", "a", 110.0, 115.5),
        ];
        let cmp = compare_paired(&points, "a", "on", "off").expect("paired");
        assert_eq!((cmp.baseline_mean, cmp.candidate_mean), (105.0, 110.25));
        assert!((cmp.change_pct - 5.0).abs() < 1e-9);
        let ci = cmp.ci_boot.expect("ν = 1");
        assert_eq!(ci.dof, 1.0);
        let (lo, hi) = ci.bounds.expect("bounded");
        // Every point's difference is exactly 5%: the interval collapses onto it, where an
        // unpaired one (the 10% boot effect in each case mean) would span tens of percent.
        assert!(
            (lo - 5.0).abs() < 1e-4 && (hi - 5.0).abs() < 1e-4,
            "{lo} {hi}"
        );
        let brackets: Vec<f64> = cmp.brackets.iter().map(|b| b.pct).collect();
        assert!(
            brackets.iter().all(|b| (b - 5.0).abs() < 1e-9),
            "{brackets:?}"
        );
        // Kernel b, booted once, borrows a's ν = 1.
        let b = compare_paired(&points, "b", "on", "off").expect("paired");
        assert_eq!(b.ci_boot.expect("borrowed").dof, 1.0);
        assert_eq!(compare_paired(&points, "c", "on", "off"), None);
    }

    #[test]
    fn the_interval_is_the_paired_t_interval_of_the_differences() {
        // Control equal at every boot (no boot effect, no covariance): the interval of R is
        // then T̄/C̄ ± t·SE(T̄)/C̄ solved exactly; checked at its bounds, where the paired
        // t statistic of t_j − R·c_j equals t_ν.
        let points = [
            pair("a-a", "a", 100.0, 104.0),
            pair("a-b", "a", 100.0, 106.0),
            pair("a-c", "a", 100.0, 105.5),
        ];
        let cmp = compare_paired(&points, "a", "on", "off").expect("paired");
        let (lo, hi) = cmp.ci_boot.expect("ν = 2").bounds.expect("bounded");
        let t = t_quantile_975(2.0);
        let diffs = |r: f64| -> Vec<f64> {
            points
                .iter()
                .map(|p| p.treatment.mean - r * p.control.mean)
                .collect()
        };
        for bound in [lo, hi] {
            let d = diffs(1.0 + bound / 100.0);
            let mean = d.iter().sum::<f64>() / 3.0;
            let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0;
            let stat = mean.abs() / (var / 3.0).sqrt();
            assert!((stat - t).abs() < 1e-6, "t at {bound} is {stat}, want {t}");
        }
        assert!(lo < cmp.change_pct && cmp.change_pct < hi);
    }

    #[test]
    fn equal_differences_with_known_sds_are_floored_not_zero_width() {
        let with_sd = |label: &str, c: f64, t: f64| PairedPoint {
            control: point(label, "a", c, Some(1.0)),
            treatment: point(label, "a", t, Some(1.0)),
        };
        let points = [with_sd("a-a", 100.0, 103.0), with_sd("a-b", 101.0, 104.03)];
        let cmp = compare_paired(&points, "a", "on", "off").expect("paired");
        let ci = cmp.ci_boot.expect("ν = 1");
        let (lo, hi) = ci.bounds.expect("bounded");
        assert!(ci.floored && hi - lo > 0.01, "{lo} {hi}");
        let v = cmp.boot_variance.expect("variance");
        assert!(v.floored && v.used > v.between);
    }
}
