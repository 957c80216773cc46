//! Verdict limits set on a `[[workload]]` or one of its metrics, and which one applies to a
//! series.
//!
//! One `[analysis] max_cv_pct` for every metric makes a tick count or a small-count metric
//! trip a limit meant for nanosecond timings (issue 20). A workload or a metric may set its
//! own `gate_pct`, `max_drift_pct` and `max_cv_pct`; the most specific table wins: the
//! metric's, else the workload's, else `[analysis]`'s.

use serde::Serialize;

/// The limits one table sets: the resolved recipe's type, named here too because this is
/// where readers of limits look for it.
pub use crate::recipe::resolved::LimitOverrides;
use crate::recipe::resolved::{AnalysisSettings, Metric, Workload};

/// Which table a limit comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitScope {
    /// `[analysis]` (or its default).
    Analysis,
    /// The series' `[[workload]]`.
    Workload,
    /// The series' `[[workload.metric]]`.
    Metric,
}

/// One limit's value and where it was set.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ScopedLimit {
    /// The value, percent.
    pub value: f64,
    /// The table that set it.
    pub scope: LimitScope,
}

impl ScopedLimit {
    /// `, set on the metric`, `, set on the workload`, or nothing for `[analysis]`: what a
    /// report adds after a limit's value so that a reader knows which table to look at.
    pub fn origin(&self) -> &'static str {
        match self.scope {
            LimitScope::Analysis => "",
            LimitScope::Workload => ", set on the workload",
            LimitScope::Metric => ", set on the metric",
        }
    }
}

/// The limits that judge one series (one workload's metric, every case).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SeriesLimits {
    /// Materiality gate.
    pub gate_pct: ScopedLimit,
    /// The recipe's own drift gate; `None` when no table sets one (aba's rules need none:
    /// docs/statistics.md §5.2).
    pub max_drift_pct: Option<ScopedLimit>,
    /// CV limit.
    pub max_cv_pct: ScopedLimit,
}

impl SeriesLimits {
    /// The limits of `metric` of `workload`: the metric's, else the workload's, else
    /// `analysis`'s.
    #[must_use]
    pub fn of(analysis: &AnalysisSettings, workload: &Workload, metric: &Metric) -> SeriesLimits {
        SeriesLimits::resolve(
            analysis.gate_pct,
            analysis.max_drift_pct,
            analysis.max_cv_pct,
            &workload.limits,
            &metric.limits,
        )
    }

    /// The same from the values themselves (the journal records them apart from a recipe).
    #[must_use]
    pub fn resolve(
        gate_pct: f64,
        max_drift_pct: Option<f64>,
        max_cv_pct: f64,
        workload: &LimitOverrides,
        metric: &LimitOverrides,
    ) -> SeriesLimits {
        let pick = |global: f64, w: Option<f64>, m: Option<f64>| match (m, w) {
            (Some(value), _) => ScopedLimit {
                value,
                scope: LimitScope::Metric,
            },
            (None, Some(value)) => ScopedLimit {
                value,
                scope: LimitScope::Workload,
            },
            (None, None) => ScopedLimit {
                value: global,
                scope: LimitScope::Analysis,
            },
        };
        SeriesLimits {
            gate_pct: pick(gate_pct, workload.gate_pct, metric.gate_pct),
            max_drift_pct: match (metric.max_drift_pct, workload.max_drift_pct, max_drift_pct) {
                (None, None, None) => None,
                (m, w, global) => Some(pick(global.unwrap_or(f64::NAN), w, m)),
            },
            max_cv_pct: pick(max_cv_pct, workload.max_cv_pct, metric.max_cv_pct),
        }
    }

    /// True when every limit is `[analysis]`'s.
    pub fn all_from_analysis(&self) -> bool {
        [
            Some(self.gate_pct),
            self.max_drift_pct,
            Some(self.max_cv_pct),
        ]
        .iter()
        .flatten()
        .all(|l| l.scope == LimitScope::Analysis)
    }
}

#[cfg(test)]
mod tests {
    use super::{LimitOverrides, LimitScope, SeriesLimits};

    #[test]
    fn the_most_specific_table_wins() {
        let workload = LimitOverrides {
            max_cv_pct: Some(4.0),
            max_drift_pct: Some(3.0),
            ..LimitOverrides::default()
        };
        let metric = LimitOverrides {
            max_cv_pct: Some(10.0),
            ..LimitOverrides::default()
        };
        let l = SeriesLimits::resolve(5.0, Some(1.0), 2.0, &workload, &metric);
        assert_eq!(l.max_cv_pct.value, 10.0);
        assert_eq!(l.max_cv_pct.scope, LimitScope::Metric);
        let drift = l.max_drift_pct.expect("the workload sets it");
        assert_eq!(drift.value, 3.0);
        assert_eq!(drift.scope, LimitScope::Workload);
        assert_eq!(l.gate_pct.value, 5.0);
        assert_eq!(l.gate_pct.scope, LimitScope::Analysis);
        assert!(!l.all_from_analysis());
        let none = LimitOverrides::default();
        assert!(none.is_empty());
        assert!(SeriesLimits::resolve(5.0, Some(1.0), 2.0, &none, &none).all_from_analysis());
    }
}
