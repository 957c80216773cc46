//! `[[expect]]`: was a published result reproduced? Reproduced means
//! |got − expected| ≤ tolerance, unrounded, with all samples: for `change_pct` the change of
//! the candidate against its baseline (percent, tolerance in percentage points), or with
//! `control` a case's change against a control case on one kernel; for `mean` the kernel's
//! boot-weighted mean or a point's mean (the metric's unit); for `share_pct` the share of a
//! recovery's gap its step ending at the kernel recovers (percent). An expectation about
//! another target is not judged.

use crate::{
    analysis::model::{CaseSeries, ExpectCheck, ExpectedQuantity, RecoveryStepKind, Series},
    recipe::resolved::{Expect, Expected},
};

/// What the campaign being judged has: its series, its case comparisons and its target.
#[derive(Clone, Copy, Debug)]
pub struct Judged<'a> {
    /// Every series.
    pub series: &'a [Series],
    /// Every case comparison.
    pub cases: &'a [CaseSeries],
    /// The target the campaign ran on.
    pub target: &'a str,
}

/// Checks one expectation against the analysed campaign.
#[must_use]
pub fn check(expect: &Expect, judged: Judged<'_>) -> ExpectCheck {
    let found = judged.series.iter().find(|s| {
        s.workload == expect.workload.as_str()
            && s.case == expect.case
            && s.metric == expect.metric.as_str()
    });
    let kernel = expect.kernel.as_str();
    let all = found.and_then(|s| s.all.as_ref());
    let mut control = None;
    let mut recovery = None;
    let (quantity, expected, point, got) = match &expect.value {
        Expected::ChangePct(change) => (
            ExpectedQuantity::ChangePct,
            *change,
            None,
            all.and_then(|all| {
                all.comparisons
                    .iter()
                    .find(|c| c.candidate == kernel && c.baseline == expect.baseline.as_str())
            })
            .map(|c| c.comparison.change_pct),
        ),
        Expected::Mean { value, point: None } => (
            ExpectedQuantity::Mean,
            *value,
            None,
            all.and_then(|all| all.kernels.iter().find(|k| k.kernel == kernel))
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
        Expected::CaseChangePct {
            value,
            control_workload,
            control: control_case,
        } => {
            let case = judged.cases.iter().find(|c| {
                c.workload == expect.workload.as_str()
                    && c.treatment == expect.case
                    && c.control_workload == control_workload.as_str()
                    && c.control == *control_case
                    && c.metric == expect.metric.as_str()
            });
            control = Some(case.map_or_else(
                || format!("{control_workload}[{control_case}]"),
                |c| c.control_label.clone(),
            ));
            (
                ExpectedQuantity::CaseChangePct,
                *value,
                None,
                case.and_then(|c| c.all.iter().find(|r| r.kernel == kernel))
                    .map(|r| r.comparison.change_pct),
            )
        }
        Expected::RecoveryShare {
            value,
            recovery: name,
        } => {
            let step = all
                .and_then(|all| all.recoveries.iter().find(|r| r.name == *name))
                .and_then(|r| {
                    r.steps
                        .iter()
                        .find(|s| s.kind == RecoveryStepKind::Step && s.to == kernel)
                });
            recovery = Some(step.map_or_else(
                || format!("{name}, the step to {kernel}"),
                |s| format!("{name}, {} -> {}", s.from, s.to),
            ));
            (
                ExpectedQuantity::SharePct,
                *value,
                None,
                step.and_then(|s| s.pct),
            )
        }
    };
    let applies = expect.target.as_deref().is_none_or(|t| t == judged.target);
    let percent = quantity != ExpectedQuantity::Mean;
    let change = quantity == ExpectedQuantity::ChangePct;
    ExpectCheck {
        series: found.map_or_else(|| expect.workload.to_string(), |s| s.label.clone()),
        kernel: kernel.to_owned(),
        baseline: change.then(|| expect.baseline.to_string()),
        control,
        recovery,
        target: expect.target.clone(),
        applies,
        quantity,
        point,
        expected,
        got,
        unit: if percent {
            "%".to_owned()
        } else {
            found.map_or_else(String::new, |s| s.unit.clone())
        },
        expected_pct: change.then_some(expected),
        tolerance: expect.tolerance,
        got_pct: if change { got } else { None },
        reproduced: applies && got.is_some_and(|got| (got - expected).abs() <= expect.tolerance),
    }
}

#[cfg(test)]
mod tests {
    use super::{Judged, check};
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
            target: None,
        }
    }

    /// The campaign of `s` alone, on target `lab`.
    fn judged(s: &Series) -> Judged<'_> {
        Judged {
            series: std::slice::from_ref(s),
            cases: &[],
            target: "lab",
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
        let hit = check(&expect(9.5, 0.5), judged(&s));
        assert!(hit.reproduced, "{hit:?}");
        let miss = check(&expect(9.4, 0.5), judged(&s));
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
        let hit = check(&mean("a", 101.5, None, 0.5), judged(&s));
        assert_eq!(hit.got, Some(101.0));
        assert!(hit.reproduced, "{hit:?}");
        assert_eq!(hit.unit, "ns");
        assert_eq!(hit.expected_pct, None);
        assert_eq!(hit.got_pct, None);
        let miss = check(&mean("a", 101.6, None, 0.5), judged(&s));
        assert!(!miss.reproduced);
        let point = check(&mean("a", 102.0, Some("a-b"), 0.0), judged(&s));
        assert_eq!(point.got, Some(102.0));
        assert!(point.reproduced);
        assert_eq!(point.point.as_deref(), Some("a-b"));
        let gone = check(&mean("a", 102.0, Some("a-c"), 9.0), judged(&s));
        assert_eq!(gone.got, None);
        assert!(!gone.reproduced);
    }

    /// An expectation about another target: not judged, never reproduced, and it does not
    /// count against the campaign; on its own target it is judged.
    #[test]
    fn another_targets_expectation_is_not_judged() {
        let s = series(&[("a-a", "a", 100.0), ("b", "b", 110.0), ("a-b", "a", 100.0)]);
        let elsewhere = Expect {
            target: Some("machine-b".to_owned()),
            ..expect(10.0, 0.5)
        };
        let c = check(&elsewhere, judged(&s));
        assert!(!c.applies && !c.reproduced, "{c:?}");
        let here = Expect {
            target: Some("lab".to_owned()),
            ..expect(10.0, 0.5)
        };
        let c = check(&here, judged(&s));
        assert!(c.applies && c.reproduced, "{c:?}");
        let summary = crate::analysis::summary::summarize_campaign(
            std::slice::from_ref(&s),
            &[check(&elsewhere, judged(&s))],
            "a",
        );
        assert_eq!(summary.expects_reproduced, None, "nothing judged");
    }

    #[test]
    fn a_missing_comparison_is_not_reproduced() {
        let s = series(&[("a-a", "a", 100.0), ("a-b", "a", 100.0)]);
        let c = check(&expect(0.0, 100.0), judged(&s));
        assert_eq!(c.got_pct, None);
        assert!(!c.reproduced);
    }
}
