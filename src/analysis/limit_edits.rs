//! Which verdict limits differ between what a campaign's journal recorded and what its recipe
//! copy says now: `[analysis]`'s and every workload's and metric's own (issue 20). A limit
//! edited after the run would let a tester move the goalposts once the numbers are known.

use crate::{
    analysis::model::LimitEdit,
    recipe::scoped_limits::{LimitOverrides, SeriesLimits},
    results::journal::Limits,
};

/// The edits from `then` to `now`, `[analysis]`'s first, then each workload's and metric's
/// in recipe order. A scoped limit is compared as it applies at its scope (a metric's
/// `max_cv_pct` removed now falls back to the workload's or `[analysis]`'s), and only where
/// either side sets it, so an edit of `[analysis]` is named once, not at every scope.
#[must_use]
pub fn limit_edits(then: &Limits, now: &Limits) -> Vec<LimitEdit> {
    let mut edits: Vec<LimitEdit> = [
        ("gate_pct", Some(then.gate_pct), Some(now.gate_pct)),
        (
            "drift_margin",
            Some(then.drift_margin),
            Some(now.drift_margin),
        ),
        ("max_drift_pct", then.max_drift_pct, now.max_drift_pct),
        ("max_cv_pct", Some(then.max_cv_pct), Some(now.max_cv_pct)),
    ]
    .into_iter()
    .filter(|(_, then, now)| then != now)
    .map(|(name, then, now)| LimitEdit {
        name: name.to_owned(),
        then,
        now,
    })
    .collect();
    let mut scopes: Vec<(&str, Option<&str>)> = Vec::new();
    for s in now.scoped.iter().chain(&then.scoped) {
        let key = (s.workload.as_str(), s.metric.as_deref());
        if !scopes.contains(&key) {
            scopes.push(key);
        }
    }
    for (workload, metric) in scopes {
        let (was, is) = (at(then, workload, metric), at(now, workload, metric));
        let (set_then, set_now) = (
            then.overrides(workload, metric),
            now.overrides(workload, metric),
        );
        let scope = metric.map_or(workload.to_owned(), |m| format!("{workload}/{m}"));
        let rows = [
            (
                "gate_pct",
                Some(was.gate_pct.value),
                Some(is.gate_pct.value),
                set_then.gate_pct.or(set_now.gate_pct),
            ),
            (
                "max_drift_pct",
                was.max_drift_pct.map(|l| l.value),
                is.max_drift_pct.map(|l| l.value),
                set_then.max_drift_pct.or(set_now.max_drift_pct),
            ),
            (
                "max_cv_pct",
                Some(was.max_cv_pct.value),
                Some(is.max_cv_pct.value),
                set_then.max_cv_pct.or(set_now.max_cv_pct),
            ),
        ];
        for (name, then, now, set) in rows {
            if set.is_some() && then != now {
                edits.push(LimitEdit {
                    name: format!("{name} of {scope}"),
                    then,
                    now,
                });
            }
        }
    }
    edits
}

/// The limits at a workload's table (`metric` absent) or a metric's.
fn at(limits: &Limits, workload: &str, metric: Option<&str>) -> SeriesLimits {
    match metric {
        Some(m) => limits.series(workload, m),
        None => SeriesLimits::resolve(
            limits.gate_pct,
            limits.max_drift_pct,
            limits.max_cv_pct,
            &limits.overrides(workload, None),
            &LimitOverrides::default(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::limit_edits;
    use crate::results::journal::{Limits, ScopedLimits};

    fn limits(scoped: Vec<ScopedLimits>) -> Limits {
        Limits {
            gate_pct: 5.0,
            drift_margin: 2.0,
            max_drift_pct: Some(1.0),
            max_cv_pct: 2.0,
            scoped,
        }
    }

    fn metric_cv(cv: f64) -> ScopedLimits {
        ScopedLimits {
            workload: "tick".into(),
            metric: Some("ticks".into()),
            gate_pct: None,
            max_drift_pct: None,
            max_cv_pct: Some(cv),
        }
    }

    fn names(then: &Limits, now: &Limits) -> Vec<String> {
        limit_edits(then, now)
            .iter()
            .map(crate::report::number::limit_edit_words)
            .collect()
    }

    #[test]
    fn a_metric_limit_edited_added_or_removed_is_an_edit_at_its_scope() {
        let ran = limits(vec![metric_cv(10.0)]);
        assert!(names(&ran, &ran).is_empty());
        assert_eq!(
            names(&ran, &limits(vec![metric_cv(20.0)])),
            ["max_cv_pct of tick/ticks 10 -> 20"]
        );
        // Removed: the metric now falls back to [analysis]'s 2.
        assert_eq!(
            names(&ran, &limits(Vec::new())),
            ["max_cv_pct of tick/ticks 10 -> 2"]
        );
        // Added after a run of older aba (no scoped limits recorded).
        assert_eq!(
            names(&limits(Vec::new()), &ran),
            ["max_cv_pct of tick/ticks 2 -> 10"]
        );
        // An [analysis] edit is named once, not again at a scope that does not set it.
        let mut wider = limits(vec![metric_cv(10.0)]);
        wider.max_cv_pct = 3.0;
        wider.gate_pct = 4.0;
        assert_eq!(
            names(&ran, &wider),
            ["gate_pct 5 -> 4", "max_cv_pct 2 -> 3"]
        );
    }
}
