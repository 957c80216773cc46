//! `[[expect]]`: was a published result reproduced? Reproduced means
//! |got − expected| ≤ tolerance, unrounded, with all samples: for `change_pct` the change of
//! the candidate against the baseline (percent, tolerance in percentage points); for `mean`
//! the kernel's boot-weighted mean or a point's mean (the metric's unit).

use crate::{
    analysis::model::{ExpectCheck, ExpectedQuantity, Series},
    recipe::resolved::{Expect, Expected},
};

/// Checks one expectation against the analysed series.
#[must_use]
pub fn check(expect: &Expect, series: &[Series]) -> ExpectCheck {
    let found = series.iter().find(|s| {
        s.workload == expect.workload.as_str()
            && s.case == expect.case
            && s.metric == expect.metric.as_str()
    });
    let kernel = expect.kernel.as_str();
    let (quantity, expected, point, got) = match &expect.value {
        Expected::ChangePct(change) => (
            ExpectedQuantity::ChangePct,
            *change,
            None,
            found
                .and_then(|s| s.all.as_ref())
                .and_then(|all| {
                    all.comparisons.iter().find(|c| {
                        c.candidate == kernel && c.baseline == expect.baseline.as_str()
                    })
                })
                .map(|c| c.comparison.change_pct),
        ),
        Expected::Mean { value, point: None } => (
            ExpectedQuantity::Mean,
            *value,
            None,
            found
                .and_then(|s| s.all.as_ref())
                .and_then(|all| all.kernels.iter().find(|k| k.kernel == kernel))
                .map(|k| k.mean),
        ),
        Expected::Mean {
            value,
            point: Some(point),
        } => (
            ExpectedQuantity::Mean,
            *value,
            Some(point.clone()),
            found
                .and_then(|s| s.points.iter().find(|p| p.label == *point))
                .map(|p| p.all.mean),
        ),
    };
    let change = quantity == ExpectedQuantity::ChangePct;
    ExpectCheck {
        series: found.map_or_else(|| expect.workload.to_string(), |s| s.label.clone()),
        kernel: kernel.to_owned(),
        baseline: change.then(|| expect.baseline.to_string()),
        quantity,
        point,
        expected,
        got,
        unit: if change {
            "%".to_owned()
        } else {
            found.map_or_else(String::new, |s| s.unit.clone())
        },
        expected_pct: change.then_some(expected),
        tolerance: expect.tolerance,
        got_pct: if change { got } else { None },
        reproduced: got.is_some_and(|got| (got - expected).abs() <= expect.tolerance),
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::{
        analysis::{
            model::{AnalysisKind, CandidateResult, Series, SeriesResult},
            series::{SeriesContext, analyze_series},
        },
        recipe::{
            ident::{KernelLabel, MetricName, WorkloadName},
            model::Role,
            resolved::{Expect, Expected},
        },
        stats::{Better, VerdictParams, summarize},
    };

    fn series(change_points: &[(&str, &str, f64)]) -> Series {
        let points: Vec<_> = change_points
            .iter()
            .enumerate()
            .map(
                |(i, (label, kernel, v))| crate::analysis::model::SeriesPoint {
                    order: i + 1,
                    label: (*label).to_owned(),
                    kernel: (*kernel).to_owned(),
                    values: vec![*v, *v],
                    warmups: Vec::new(),
                    all: summarize(&[*v, *v]).expect("not empty"),
                    drop_first: summarize(&[*v]),
                },
            )
            .collect();
        let candidates = ["b".to_owned()];
        let params = VerdictParams::default();
        let ctx = SeriesContext {
            baseline: "a",
            candidates: &candidates,
            declared: &[],
            params: &params,
            better: Better::Lower,
            aux: false,
            recoveries: &[],
            prior_all: None,
            prior_drop_first: None,
            environment: &crate::analysis::environment::EnvironmentCheck::default(),
            look: None,
        };
        let analyses = analyze_series(&points, &ctx);
        Series {
            workload: "w".to_owned(),
            case: String::new(),
            metric: "w".to_owned(),
            label: "w".to_owned(),
            unit: "ns".to_owned(),
            better: Better::Lower,
            role: Role::Measured,
            aux: false,
            warmup: 0,
            samples: 2,
            points,
            missing: Vec::new(),
            all: analyses.all,
            drop_first: analyses.drop_first,
            drop_first_unavailable: analyses.drop_first_unavailable,
            calibration: None,
            limits: crate::recipe::scoped_limits::SeriesLimits::resolve(
                params.gate_pct,
                params.max_drift_pct,
                params.max_cv_pct,
                &Default::default(),
                &Default::default(),
            ),
        }
    }

    fn expect(change_pct: f64, tolerance: f64) -> Expect {
        Expect {
            workload: WorkloadName::new("w").expect("valid"),
            case: String::new(),
            metric: MetricName::new("w").expect("valid"),
            kernel: KernelLabel::new("b").expect("valid"),
            baseline: KernelLabel::new("a").expect("valid"),
            value: Expected::ChangePct(change_pct),
            tolerance,
        }
    }

    #[test]
    fn reproduced_within_tolerance_inclusive() {
        // a = 100, b = 110: +10%.
        let s = series(&[("a-a", "a", 100.0), ("b", "b", 110.0), ("a-b", "a", 100.0)]);
        let all: &SeriesResult = s.all.as_ref().expect("points");
        assert_eq!(all.kind, AnalysisKind::All);
        let c: &CandidateResult = &all.comparisons[0];
        assert!((c.comparison.change_pct - 10.0).abs() < 1e-12);
        let hit = check(&expect(9.5, 0.5), std::slice::from_ref(&s));
        assert!(hit.reproduced, "{hit:?}");
        let miss = check(&expect(9.4, 0.5), std::slice::from_ref(&s));
        assert!(!miss.reproduced);
        assert_eq!(miss.series, "w");
    }

    /// A published absolute value: the kernel's boot-weighted mean, or one point's mean, in
    /// the metric's unit, with the tolerance in that unit.
    #[test]
    fn a_mean_is_checked_in_the_metrics_unit() {
        // a = 100 and 102 (midpoint 101), b = 110.
        let s = series(&[("a-a", "a", 100.0), ("b", "b", 110.0), ("a-b", "a", 102.0)]);
        let mean = |kernel: &str, value: f64, point: Option<&str>, tolerance: f64| Expect {
            kernel: KernelLabel::new(kernel).expect("valid"),
            value: Expected::Mean {
                value,
                point: point.map(str::to_owned),
            },
            tolerance,
            ..expect(0.0, 0.0)
        };
        let hit = check(&mean("a", 101.5, None, 0.5), std::slice::from_ref(&s));
        assert_eq!(hit.got, Some(101.0));
        assert!(hit.reproduced, "{hit:?}");
        assert_eq!(hit.unit, "ns");
        assert_eq!(hit.expected_pct, None);
        assert_eq!(hit.got_pct, None);
        let miss = check(&mean("a", 101.6, None, 0.5), std::slice::from_ref(&s));
        assert!(!miss.reproduced);
        let point = check(
            &mean("a", 102.0, Some("a-b"), 0.0),
            std::slice::from_ref(&s),
        );
        assert_eq!(point.got, Some(102.0));
        assert!(point.reproduced);
        assert_eq!(point.point.as_deref(), Some("a-b"));
        let gone = check(
            &mean("a", 102.0, Some("a-c"), 9.0),
            std::slice::from_ref(&s),
        );
        assert_eq!(gone.got, None);
        assert!(!gone.reproduced);
    }

    #[test]
    fn a_missing_comparison_is_not_reproduced() {
        let s = series(&[("a-a", "a", 100.0), ("a-b", "a", 100.0)]);
        let c = check(&expect(0.0, 100.0), std::slice::from_ref(&s));
        assert_eq!(c.got_pct, None);
        assert!(!c.reproduced);
    }
}
