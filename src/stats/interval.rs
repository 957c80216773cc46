//! 95% confidence intervals for the change of a candidate against the baseline
//! (STATISTICS.md 3.5), as Fieller intervals of the ratio R = μ_C/μ_A reported as change %
//! = 100·(R − 1).
//!
//! Fieller, not mean ± SE, because the ratio is skewed and its denominator is uncertain:
//! E. C. Fieller, "Some problems in interval estimation", JRSS B 16 (1954); the form used
//! here is the one for independent numerator and denominator. Which variances go in decides
//! how honest the interval is, so there are two kinds: boot-level (primary) and within-only
//! (the plain A/B fallback that ignores boot-to-boot variation and is too narrow).

use serde::Serialize;
use statrs::distribution::{ChiSquared, Continuous, ContinuousCDF, Normal, StudentsT};

use crate::stats::{
    kernel::{BootPoint, kernel_boots, kernel_mean, kernels_in_order},
    summary::compensated_sum,
};

/// Above this ν the t quantile comes from the normal distribution: statrs' Student's t
/// inverse CDF was inaccurate for huge ν (STATISTICS.md 3.5, item 5), and at ν = 10⁴ the two
/// differ by 2·10⁻⁴ in t.
const MAX_STUDENT_DOF: f64 = 1e4;

/// Which variances the interval uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum IntervalKind {
    /// Pooled between-boot variance (label `ci95_boot`).
    BootLevel,
    /// Within-boot noise only, Welch–Satterthwaite ν (label `ci95_within_only`): boot-to-boot
    /// variation unmeasured, the interval is too narrow and never upgrades a verdict.
    WithinOnly,
}

/// A 95% Fieller interval of the change in percent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatioInterval {
    /// Which variances were used.
    pub kind: IntervalKind,
    /// Degrees of freedom of the t quantile (fractional for Welch–Satterthwaite).
    pub dof: f64,
    /// (low, high) change in percent, 100·(R − 1); `None` when the interval is unbounded
    /// (q ≤ 0 or D < 0), printed as "not estimable".
    pub bounds: Option<(f64, f64)>,
    /// Boot-level only: the boot variance was raised to its within-boot floor.
    pub floored: bool,
}

impl RatioInterval {
    /// Half the width of the interval in percentage points; `None` when not estimable.
    #[must_use]
    pub fn half_width(&self) -> Option<f64> {
        self.bounds.map(|(lo, hi)| (hi - lo) / 2.0)
    }

    /// Whether the interval lies entirely on one side of 0; `None` when not estimable.
    #[must_use]
    pub fn excludes_zero(&self) -> Option<bool> {
        self.bounds.map(|(lo, hi)| lo > 0.0 || hi < 0.0)
    }
}

/// The 0.975 quantile of Student's t with `dof` degrees of freedom (`dof` may be fractional).
///
/// Uses the normal quantile above ν = 10⁴. Returns NaN when `dof` is not positive.
#[must_use]
pub fn t_quantile_975(dof: f64) -> f64 {
    t_quantile(0.975, dof)
}

/// The `probability` quantile of Student's t with `dof` degrees of freedom (`dof` may be
/// fractional); the normal quantile above ν = 10⁴. NaN when `dof` is not positive.
#[must_use]
pub fn t_quantile(probability: f64, dof: f64) -> f64 {
    if dof > MAX_STUDENT_DOF {
        Normal::new(0.0, 1.0)
            .expect("invariant: the standard normal is valid")
            .inverse_cdf(probability)
    } else {
        StudentsT::new(0.0, 1.0, dof).map_or(f64::NAN, |t| t.inverse_cdf(probability))
    }
}

/// What the boot-level interval knows about the variance of one boot mean: the single,
/// replaceable input of [`ci_boot_from`].
///
/// Today it comes from the campaign's own boots ([`boot_variance`]); a noise profile of many
/// boots of the baseline (issue 10) pools into it: `between` becomes the dof-weighted mean of
/// the two estimates and `dof` their sum.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BootVariance {
    /// S_B²: the between-boot variance of the point means, pooled over every kernel booted at
    /// least twice, Σ_k Σ_j (x̄_kj − mean_k)² / Σ_k (m_k − 1).
    pub between: f64,
    /// ν = Σ_k (m_k − 1).
    pub dof: f64,
    /// What within-boot noise alone would make S_B² on average, L = Σ_k (1 − 1/m_k)·Σ_j
    /// s_j²/n_j / ν (a boot mean is never steadier than its own samples); `None` when a boot
    /// of a pooled kernel has no SD.
    pub within: Option<f64>,
    /// f_ν of [`floor_factor`]: the share of `within` below which the variance is floored.
    pub floor_factor: f64,
    /// The variance the interval uses: max(S_B², f_ν·L), or S_B² without L.
    pub used: f64,
    /// S_B² was below f_ν·L and was raised to it.
    pub floored: bool,
}

impl BootVariance {
    /// The variance of `between` (S_B², ν = `dof`) floored at f_ν·L for the within-boot
    /// share L (`within`; no floor without it).
    #[must_use]
    pub fn floored_at(between: f64, dof: f64, within: Option<f64>) -> BootVariance {
        let floor_factor = floor_factor(dof);
        let floor = within.map_or(0.0, |l| floor_factor * l);
        BootVariance {
            between,
            dof,
            within,
            floor_factor,
            used: between.max(floor),
            floored: floor > between,
        }
    }
}

/// How much the floor may raise the interval's coverage above 95% in the normal model (at
/// worst, when there is no boot effect): 0.4 percentage points.
pub const FLOOR_COVERAGE_EXCESS: f64 = 0.004;

/// f_ν: the largest share of the within-boot floor L that keeps the boot-level interval's
/// coverage within [`FLOOR_COVERAGE_EXCESS`] of 95%.
///
/// Flooring S_B² at all of L (max(S_B², L)) removes the intervals that collapse when two
/// boots happen to agree, but it also widens every interval whose S_B² is small by chance, so
/// when boots differ by no more than their samples explain, coverage rises to 100% at ν = 1
/// and 99.5% at ν = 4 (docs/statistics.md). With S_B² = τ²·W, W ~ χ²_ν/ν, and L = ρτ²
/// (ρ ≤ 1, 1 without a boot effect), the floored interval covers with probability
/// E[2Φ(t_ν·√max(W, fρ)) − 1] = 0.95 + ∫₀^{fρ} (2Φ(t_ν√(fρ)) − 2Φ(t_ν√w)) p_ν(w) dw, which is
/// largest at ρ = 1; f_ν solves that excess = [`FLOOR_COVERAGE_EXCESS`] (f₁ = 0.00103,
/// f₂ = 0.0254, f₃ = 0.0787, f₄ = 0.141, f₁₀ = 0.428, f₁₀₀ = 0.924). The interval then never
/// has zero width while its coverage stays within 95.0–95.4% for every boot SD.
/// Memoized per ν (a campaign has one or two).
#[must_use]
pub fn floor_factor(dof: f64) -> f64 {
    thread_local! {
        static MEMO: std::cell::RefCell<Vec<(u64, f64)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if dof.is_nan() || dof <= 0.0 {
        return 0.0;
    }
    let key = dof.to_bits();
    if let Some(f) = MEMO.with(|m| m.borrow().iter().find(|(k, _)| *k == key).map(|(_, f)| *f)) {
        return f;
    }
    let f = solve_floor_factor(dof);
    MEMO.with(|m| m.borrow_mut().push((key, f)));
    f
}

/// Bisection for f_ν on the coverage excess (monotone in f).
fn solve_floor_factor(dof: f64) -> f64 {
    let t = t_quantile_975(dof);
    let Ok(chi) = ChiSquared::new(dof) else {
        return 0.0;
    };
    let normal = Normal::new(0.0, 1.0).expect("invariant: the standard normal is valid");
    // ∫₀^f (2Φ(t√f) − 2Φ(t√w)) p(w) dw with w = f·u², p(w) = ν·χ²_ν pdf(ν·w): the
    // substitution removes the w^(ν/2 − 1) singularity at 0.
    let excess = |f: f64| {
        const STEPS: usize = 2000;
        let top = 2.0 * normal.cdf(t * f.sqrt());
        let mut sum = 0.0;
        for i in 0..STEPS {
            let u = (i as f64 + 0.5) / STEPS as f64;
            let w = f * u * u;
            let density = dof * chi.pdf(dof * w);
            sum += (top - 2.0 * normal.cdf(t * w.sqrt())) * density * 2.0 * f * u;
        }
        sum / STEPS as f64
    };
    if excess(1.0) <= FLOOR_COVERAGE_EXCESS {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if excess(mid) <= FLOOR_COVERAGE_EXCESS {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The campaign's own boot variance: S_B² pooled over every kernel in `points` booted at least
/// twice, with ν = Σ_k (m_k − 1), floored at f_ν·L (see [`BootVariance`], [`floor_factor`]).
/// `None` when no kernel was booted twice (ν = 0).
#[must_use]
pub fn boot_variance(points: &[BootPoint]) -> Option<BootVariance> {
    let mut squares = Vec::with_capacity(points.len());
    let mut within_terms = Vec::with_capacity(points.len());
    let mut within_known = true;
    let mut dof = 0_usize;
    for kernel in kernels_in_order(points) {
        let boots = kernel_boots(points, &kernel);
        if boots.len() < 2 {
            continue;
        }
        let mean = kernel_mean(points, &kernel)?;
        squares.extend(boots.iter().map(|&i| (points[i].mean - mean).powi(2)));
        let share = 1.0 - 1.0 / boots.len() as f64;
        for &i in &boots {
            match points[i].sd.filter(|_| points[i].n >= 2) {
                Some(sd) => within_terms.push(share * sd * sd / points[i].n as f64),
                None => within_known = false,
            }
        }
        dof += boots.len() - 1;
    }
    if dof == 0 {
        return None;
    }
    let dof = dof as f64;
    let between = compensated_sum(squares) / dof;
    let within = within_known.then(|| compensated_sum(within_terms) / dof);
    Some(BootVariance::floored_at(between, dof, within))
}

/// Boot-level interval (`ci95_boot`) of the campaign's own boots: [`ci_boot_from`] with
/// [`boot_variance`]. `None` when a kernel is absent or ν = 0 (no kernel booted twice).
#[must_use]
pub fn ci_boot(points: &[BootPoint], candidate: &str, baseline: &str) -> Option<RatioInterval> {
    ci_boot_from(points, candidate, baseline, &boot_variance(points)?)
}

/// Boot-level interval from a given boot variance: V = `variance.used`/m for each of the two
/// kernels, t with `variance.dof`.
///
/// A kernel booted once borrows that boot variance: its single boot is one draw of the boot
/// distribution. S_B² already contains each boot mean's within-boot noise, so nothing is added.
/// `None` when a kernel is absent.
#[must_use]
pub fn ci_boot_from(
    points: &[BootPoint],
    candidate: &str,
    baseline: &str,
    variance: &BootVariance,
) -> Option<RatioInterval> {
    let a = kernel_mean(points, baseline)?;
    let c = kernel_mean(points, candidate)?;
    let v_a = variance.used / kernel_boots(points, baseline).len() as f64;
    let v_c = variance.used / kernel_boots(points, candidate).len() as f64;
    Some(RatioInterval {
        kind: IntervalKind::BootLevel,
        dof: variance.dof,
        bounds: fieller_change_pct(a, c, v_a, v_c, t_quantile_975(variance.dof)),
        floored: variance.floored,
    })
}

/// [`ci_boot_from`] at confidence 1 − `alpha` (two-sided) instead of 95%: the interval a look
/// of an extended campaign judges with ([`crate::stats::sequential`]).
#[must_use]
pub fn ci_boot_at(
    points: &[BootPoint],
    candidate: &str,
    baseline: &str,
    variance: &BootVariance,
    alpha: f64,
) -> Option<RatioInterval> {
    let a = kernel_mean(points, baseline)?;
    let c = kernel_mean(points, candidate)?;
    let v_a = variance.used / kernel_boots(points, baseline).len() as f64;
    let v_c = variance.used / kernel_boots(points, candidate).len() as f64;
    Some(RatioInterval {
        kind: IntervalKind::BootLevel,
        dof: variance.dof,
        bounds: fieller_change_pct(a, c, v_a, v_c, t_two_sided(alpha, variance.dof)),
        floored: variance.floored,
    })
}

/// The t quantile of a two-sided interval at confidence 1 − `alpha`.
#[must_use]
pub fn t_two_sided(alpha: f64, dof: f64) -> f64 {
    t_quantile(1.0 - alpha / 2.0, dof)
}

/// Within-only interval (`ci95_within_only`): V_k = (1/m_k²)·Σ_j s_j²/n_j and the
/// Welch–Satterthwaite ν = (V_A+V_C)² / Σ_k V_k²/ν_k with ν_k = Σ_j (n_j − 1).
///
/// `None` when a kernel is absent or a boot of either kernel lacks an SD or has n < 2. When
/// both variances are 0 the interval collapses to the point estimate and ν is ν_A + ν_C
/// (any ν gives the same zero-width interval; this avoids printing NaN).
#[must_use]
pub fn ci_within(points: &[BootPoint], candidate: &str, baseline: &str) -> Option<RatioInterval> {
    ci_within_with(points, candidate, baseline, t_quantile_975)
}

/// [`ci_within`] at confidence 1 − `alpha` (two-sided): the veto of a look of an extended
/// campaign ([`crate::stats::sequential`]).
#[must_use]
pub fn ci_within_at(
    points: &[BootPoint],
    candidate: &str,
    baseline: &str,
    alpha: f64,
) -> Option<RatioInterval> {
    ci_within_with(points, candidate, baseline, |dof| t_two_sided(alpha, dof))
}

/// The within-only interval with the t quantile `t(ν)`.
fn ci_within_with(
    points: &[BootPoint],
    candidate: &str,
    baseline: &str,
    t: impl Fn(f64) -> f64,
) -> Option<RatioInterval> {
    let a = kernel_mean(points, baseline)?;
    let c = kernel_mean(points, candidate)?;
    let (v_a, nu_a) = mean_variance_within(points, baseline)?;
    let (v_c, nu_c) = mean_variance_within(points, candidate)?;
    let total = v_a + v_c;
    let dof = if total > 0.0 {
        total * total / (v_a * v_a / nu_a + v_c * v_c / nu_c)
    } else {
        nu_a + nu_c
    };
    Some(RatioInterval {
        kind: IntervalKind::WithinOnly,
        dof,
        bounds: fieller_change_pct(a, c, v_a, v_c, t(dof)),
        floored: false,
    })
}

/// (V_k, ν_k) of one kernel's mean from within-boot noise only.
fn mean_variance_within(points: &[BootPoint], kernel: &str) -> Option<(f64, f64)> {
    let boots = kernel_boots(points, kernel);
    let m = boots.len() as f64;
    let mut terms = Vec::with_capacity(boots.len());
    let mut dof = 0_usize;
    for &i in &boots {
        let point = &points[i];
        let sd = point.sd.filter(|_| point.n >= 2)?;
        terms.push(sd * sd / point.n as f64);
        dof += point.n - 1;
    }
    (!boots.is_empty()).then(|| (compensated_sum(terms) / (m * m), dof as f64))
}

/// Fieller's interval for R = c/a with independent estimates, as change % = 100·(R − 1):
/// q = a² − t²V_A, D = (ac)² − q(c² − t²V_C), R = (ac ∓ √D)/q. `None` when q ≤ 0 (the
/// denominator's interval contains 0, so R is unbounded) or D < 0.
fn fieller_change_pct(a: f64, c: f64, v_a: f64, v_c: f64, t: f64) -> Option<(f64, f64)> {
    let t2 = t * t;
    let q = a * a - t2 * v_a;
    // Written so that a NaN q (from a NaN t) is rejected too.
    if q.is_nan() || q <= 0.0 {
        return None;
    }
    let ac = a * c;
    let d = ac * ac - q * (c * c - t2 * v_c);
    if d.is_nan() || d < 0.0 {
        return None;
    }
    let root = d.sqrt();
    let (r1, r2) = ((ac - root) / q, (ac + root) / q);
    Some((100.0 * (r1.min(r2) - 1.0), 100.0 * (r1.max(r2) - 1.0)))
}

#[cfg(test)]
mod tests {
    use super::{
        IntervalKind, RatioInterval, boot_variance, ci_boot, ci_within, floor_factor,
        t_quantile_975,
    };
    use crate::stats::{
        compare::change_pct,
        kernel::BootPoint,
        summary::summarize,
        testdata::{EXACT_CAC1, LOOKUP_BASE_PAGE, MECHANISM, PEDRO_V3, points},
    };

    fn pct2(x: f64) -> String {
        format!("{x:+.2}")
    }

    fn bounds2(ci: &RatioInterval) -> (String, String) {
        let (lo, hi) = ci.bounds.expect("estimable");
        (pct2(lo), pct2(hi))
    }

    /// One row of the worked-values table in STATISTICS.md 3.5.
    #[track_caller]
    fn case(
        points: &[BootPoint],
        candidate: &str,
        baseline: &str,
        change: &str,
        boot: (&str, &str, f64),
        within: Option<(&str, &str, &str)>,
    ) {
        let got = change_pct(points, candidate, baseline).expect("present");
        assert_eq!(pct2(got), change);
        let ci = ci_boot(points, candidate, baseline).expect("a kernel booted twice");
        assert_eq!(ci.kind, IntervalKind::BootLevel);
        assert_eq!(bounds2(&ci), (boot.0.to_owned(), boot.1.to_owned()));
        assert_eq!(ci.dof, boot.2);
        if let Some((lo, hi, dof)) = within {
            let ci = ci_within(points, candidate, baseline).expect("sd known");
            assert_eq!(ci.kind, IntervalKind::WithinOnly);
            assert_eq!(bounds2(&ci), (lo.to_owned(), hi.to_owned()));
            assert_eq!(format!("{:.1}", ci.dof), dof);
        }
    }

    #[test]
    fn worked_values_table() {
        let cac1 = points(&EXACT_CAC1, false);
        let within = Some(("+38.61", "+40.95", "36.0"));
        case(
            &cac1,
            "child",
            "parent",
            "+39.77",
            ("+29.18", "+51.22", 1.0),
            within,
        );
        let pedro = points(&PEDRO_V3, false);
        let within = Some(("+5.51", "+6.90", "30.0"));
        case(
            &pedro,
            "child",
            "parent",
            "+6.20",
            ("-14.25", "+29.96", 1.0),
            within,
        );
        let lookup = points(&LOOKUP_BASE_PAGE, false);
        let boot = ("-20.97", "-13.67", 1.0);
        case(&lookup, "candidate", "baseline", "-17.36", boot, None);
        let mechanism = points(&MECHANISM, false);
        let boot = ("+35.88", "+37.15", 4.0);
        case(&mechanism, "child", "parent", "+36.51", boot, None);
        let boot = ("-0.37", "+0.51", 4.0);
        case(&mechanism, "folioonly", "fastpath", "+0.07", boot, None);
        let boot = ("+3.98", "+5.30", 4.0);
        case(&mechanism, "nofolio", "parent", "+4.64", boot, None);
    }

    #[test]
    fn floor_factors_solve_the_coverage_integral() {
        // Independent values: the same integral evaluated in Python with 4,000 steps.
        for (dof, want) in [
            (1.0, 0.00103),
            (2.0, 0.02540),
            (3.0, 0.07871),
            (4.0, 0.14140),
            (10.0, 0.42828),
            (100.0, 0.92418),
        ] {
            let got = floor_factor(dof);
            assert!(
                (got - want).abs() < 0.01 * want,
                "f({dof}) = {got}, want {want}"
            );
        }
        assert_eq!(floor_factor(0.0), 0.0);
        assert!(floor_factor(1e6) > 0.99);
    }

    #[test]
    fn agreeing_control_boots_do_not_collapse_the_interval() {
        // A1 and A2 agree exactly: S_B² = 0, and unfloored the interval had zero width.
        let point = |label: &str, kernel: &str, mean: f64| BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 9,
            sd: Some(3.0),
        };
        let points = vec![
            point("a1", "a", 100.0),
            point("b", "b", 90.0),
            point("a2", "a", 100.0),
        ];
        let variance = boot_variance(&points).expect("ν = 1");
        assert_eq!((variance.between, variance.dof), (0.0, 1.0));
        // L = (1 − 1/2)·(9/9 + 9/9)/1 = 1.
        assert!((variance.within.expect("sd known") - 1.0).abs() < 1e-12);
        assert!(variance.floored && variance.used > 0.0);
        assert_eq!(variance.used, floor_factor(1.0));
        let ci = ci_boot(&points, "b", "a").expect("ν = 1");
        let (lo, hi) = ci.bounds.expect("bounded");
        assert!(
            ci.floored && lo < -10.0 && hi > -10.0 && hi - lo > 0.5,
            "{lo} {hi}"
        );
        // Published means without SDs: no floor is known, the interval is S_B²'s.
        let bare_points: Vec<BootPoint> = points
            .iter()
            .map(|p| bare(&p.label, &p.kernel, p.mean))
            .collect();
        let variance = boot_variance(&bare_points).expect("ν = 1");
        assert_eq!((variance.within, variance.floored), (None, false));
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(format!("{:.3}", t_quantile_975(1.0)), "12.706");
        assert_eq!(format!("{:.3}", super::t_quantile(0.995, 2.0)), "9.925");
        assert_eq!(format!("{:.4}", super::t_quantile(0.995, 1e6)), "2.5758");
        assert_eq!(format!("{:.3}", t_quantile_975(4.0)), "2.776");
        assert_eq!(format!("{:.4}", t_quantile_975(1e6)), "1.9600");
        assert!(t_quantile_975(0.0).is_nan());
        // Fractional ν lies between its integer neighbours.
        let t = t_quantile_975(2.5);
        assert!(t < t_quantile_975(2.0) && t > t_quantile_975(3.0));
    }

    #[test]
    fn unbounded_and_missing() {
        // Baseline boots 1 and 100: the denominator's interval contains 0 at ν = 1.
        let wild = vec![
            bare("a1", "a", 1.0),
            bare("b", "b", 50.0),
            bare("a2", "a", 100.0),
        ];
        let ci = ci_boot(&wild, "b", "a").expect("ν = 1");
        assert_eq!(
            (ci.bounds, ci.half_width(), ci.excludes_zero()),
            (None, None, None)
        );
        // Plain A/B: no boot-level interval, within-only needs SDs.
        let plain = vec![bare("a", "a", 1.0), bare("b", "b", 2.0)];
        assert_eq!(ci_boot(&plain, "b", "a"), None);
        assert_eq!(ci_within(&plain, "b", "a"), None);
    }

    #[test]
    fn zero_within_noise_collapses() {
        let flat = summarize(&[23.0; 15]).expect("not empty");
        let other = summarize(&[46.0; 15]).expect("not empty");
        let points = vec![
            BootPoint::from_summary("a", "a", &flat),
            BootPoint::from_summary("b", "b", &other),
        ];
        let ci = ci_within(&points, "b", "a").expect("sd known");
        assert_eq!(ci.dof, 28.0);
        assert_eq!(ci.bounds, Some((100.0, 100.0)));
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
}
