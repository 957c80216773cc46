//! `[[expect]]`: was a published change reproduced? Reproduced means
//! |change − expected| ≤ tolerance, with the all-samples change against the baseline,
//! unrounded.

use crate::{
    analysis::model::{ExpectCheck, Series},
    recipe::resolved::Expect,
};

/// Checks one expectation against the analysed series.
#[must_use]
pub fn check(expect: &Expect, series: &[Series]) -> ExpectCheck {
    let found = series.iter().find(|s| {
        s.workload == expect.workload.as_str()
            && s.case == expect.case
            && s.metric == expect.metric.as_str()
    });
    let got_pct = found
        .and_then(|s| s.all.as_ref())
        .and_then(|all| {
            all.comparisons
                .iter()
                .find(|c| c.candidate == expect.kernel.as_str())
        })
        .map(|c| c.comparison.change_pct);
    ExpectCheck {
        series: found.map_or_else(|| expect.workload.to_string(), |s| s.label.clone()),
        kernel: expect.kernel.to_string(),
        expected_pct: expect.change_pct,
        tolerance: expect.tolerance,
        got_pct,
        reproduced: got_pct.is_some_and(|got| (got - expect.change_pct).abs() <= expect.tolerance),
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
            resolved::Expect,
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
            change_pct,
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

    #[test]
    fn a_missing_comparison_is_not_reproduced() {
        let s = series(&[("a-a", "a", 100.0), ("a-b", "a", 100.0)]);
        let c = check(&expect(0.0, 100.0), std::slice::from_ref(&s));
        assert_eq!(c.got_pct, None);
        assert!(!c.reproduced);
    }
}
