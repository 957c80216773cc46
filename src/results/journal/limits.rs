//! The verdict limits a campaign's header records, so that `aba report` can tell which were
//! edited after the run.

use serde::{Deserialize, Serialize};

use crate::recipe::{
    Recipe,
    scoped_limits::{LimitOverrides, SeriesLimits},
};

/// The preregistered verdict limits of a campaign, as its journal records them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// `gate_pct`.
    pub gate_pct: f64,
    /// `drift_margin`.
    pub drift_margin: f64,
    /// `max_drift_pct`, when the recipe sets it (older aba recorded its default, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drift_pct: Option<f64>,
    /// `max_cv_pct`.
    pub max_cv_pct: f64,
    /// The limits `[[workload]]` and `[[workload.metric]]` tables set, in recipe order;
    /// absent in journals of older aba, which had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scoped: Vec<ScopedLimits>,
}

/// The limits one workload (`metric` absent) or one of its metrics set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScopedLimits {
    /// Workload name.
    pub workload: String,
    /// Metric name; absent for the workload's own table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `gate_pct`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_pct: Option<f64>,
    /// `max_drift_pct`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drift_pct: Option<f64>,
    /// `max_cv_pct`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cv_pct: Option<f64>,
}

impl ScopedLimits {
    fn new(workload: &str, metric: Option<&str>, o: &LimitOverrides) -> ScopedLimits {
        ScopedLimits {
            workload: workload.to_owned(),
            metric: metric.map(str::to_owned),
            gate_pct: o.gate_pct,
            max_drift_pct: o.max_drift_pct,
            max_cv_pct: o.max_cv_pct,
        }
    }

    /// The overrides as the recipe model holds them.
    #[must_use]
    pub fn overrides(&self) -> LimitOverrides {
        LimitOverrides {
            gate_pct: self.gate_pct,
            max_drift_pct: self.max_drift_pct,
            max_cv_pct: self.max_cv_pct,
        }
    }
}

impl Limits {
    /// The limits `recipe` judges its series with: `[analysis]`'s and every workload's and
    /// metric's own.
    #[must_use]
    pub fn of(recipe: &Recipe) -> Limits {
        let a = &recipe.analysis;
        let mut scoped = Vec::new();
        for w in &recipe.workloads {
            if !w.limits.is_empty() {
                scoped.push(ScopedLimits::new(w.name.as_str(), None, &w.limits));
            }
            for m in w.metrics.iter().filter(|m| !m.limits.is_empty()) {
                scoped.push(ScopedLimits::new(
                    w.name.as_str(),
                    Some(m.name.as_str()),
                    &m.limits,
                ));
            }
        }
        Limits {
            gate_pct: a.gate_pct,
            drift_margin: a.drift_margin,
            max_drift_pct: a.max_drift_pct,
            max_cv_pct: a.max_cv_pct,
            scoped,
        }
    }

    /// What `workload` (and `metric`, when given) sets; nothing when it sets no limit.
    #[must_use]
    pub fn overrides(&self, workload: &str, metric: Option<&str>) -> LimitOverrides {
        self.scoped
            .iter()
            .find(|s| s.workload == workload && s.metric.as_deref() == metric)
            .map(ScopedLimits::overrides)
            .unwrap_or_default()
    }

    /// The limits of `metric` of `workload` as these limits resolve them.
    #[must_use]
    pub fn series(&self, workload: &str, metric: &str) -> SeriesLimits {
        SeriesLimits::resolve(
            self.gate_pct,
            self.max_drift_pct,
            self.max_cv_pct,
            &self.overrides(workload, None),
            &self.overrides(workload, Some(metric)),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn limits_of_older_aba_read_without_scoped_ones_and_scoped_ones_round_trip() {
        let old: super::Limits = serde_json::from_str(
            r#"{"gate_pct":5.0,"drift_margin":2.0,"max_drift_pct":1.0,"max_cv_pct":2.0}"#,
        )
        .expect("an older header's limits");
        assert!(old.scoped.is_empty());
        assert_eq!(old.series("w", "m").max_cv_pct.value, 2.0);
        // None set: the record is what older aba wrote.
        assert!(
            !serde_json::to_string(&old)
                .expect("json")
                .contains("scoped")
        );
        let mut new = old.clone();
        new.scoped.push(super::ScopedLimits {
            workload: "w".into(),
            metric: Some("m".into()),
            gate_pct: None,
            max_drift_pct: None,
            max_cv_pct: Some(10.0),
        });
        let text = serde_json::to_string(&new).expect("json");
        assert!(
            text.ends_with(r#""scoped":[{"workload":"w","metric":"m","max_cv_pct":10.0}]}"#),
            "{text}"
        );
        let back: super::Limits = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, new);
        assert_eq!(back.series("w", "m").max_cv_pct.value, 10.0);
        assert_eq!(back.series("w", "other").max_cv_pct.value, 2.0);
    }
}
