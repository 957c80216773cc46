//! The campaign-level conclusion: one verdict line per measured series and candidate, the
//! auxiliary and control lines apart (STATISTICS.md 3.6: auxiliary workloads never drive the
//! summary; a control is expected to show NO_MATERIAL_SIGNAL and anything else is an alert),
//! and the worst CV and drift.

use crate::{
    analysis::model::{CampaignSummary, ExpectCheck, Series, VerdictLine, Worst},
    recipe::model::Role,
    stats::{SpreadMeasure, VerdictLabel, detectable_at_measured_noise, longer_design, spread_of},
};

/// Summarizes the analysed series and expectations; `baseline` is the baseline kernel.
#[must_use]
pub fn summarize_campaign(
    series: &[Series],
    expects: &[ExpectCheck],
    baseline: &str,
) -> CampaignSummary {
    let mut verdicts = Vec::new();
    let mut aux = Vec::new();
    let mut controls = Vec::new();
    let mut control_alerts = Vec::new();
    for s in series {
        let Some(all) = &s.all else { continue };
        for c in &all.comparisons {
            let line = VerdictLine {
                series: s.label.clone(),
                candidate: c.candidate.clone(),
                baseline: c.baseline.clone(),
                name: c.shown(),
                change_pct: c.comparison.change_pct,
                baseline_mean: c.comparison.baseline_mean,
                diff: c.comparison.diff,
                unit: s.unit.clone(),
                label: c.label.clone(),
                verdict: c.verdict.label,
                confidence: c.verdict.confidence,
                ci_boot: c.comparison.ci_boot.clone(),
                ci_within: c.comparison.ci_within.clone(),
                tripped: c.verdict.tripped.clone(),
                baseline_spread: c
                    .verdict
                    .spreads
                    .iter()
                    .find(|sp| sp.kernel == c.baseline)
                    .cloned(),
                short_why: c.verdict.short_why(),
                direction: c.direction.clone(),
                same_conclusion: c.same_conclusion,
                detectable_pct: detectable_at_measured_noise(&c.comparison),
                decided_by: (c.verdict.label == VerdictLabel::Inconclusive)
                    .then(|| longer_design(&c.comparison, s.limits.gate_pct.value))
                    .flatten(),
                gate_pct: s.limits.gate_pct.value,
            };
            if s.role == Role::Control {
                // A control moved when it is anything but ruled out (NO_MATERIAL_SIGNAL) or
                // not shown either way (INCONCLUSIVE, which says so on its own line).
                if !matches!(
                    c.verdict.label,
                    VerdictLabel::NoMaterialSignal | VerdictLabel::Inconclusive
                ) {
                    control_alerts.push(line.clone());
                }
                controls.push(line);
            } else if s.aux {
                aux.push(line);
            } else {
                verdicts.push(line);
            }
        }
    }
    // The conclusion's CV and drift are the measured series'; the controls' are reported
    // beside them (the mails' "drift was at most 0.34%" is about the measured sysctls, with
    // the RR control's 0.83% in its own sentence).
    let measured: Vec<&Series> = series
        .iter()
        .filter(|s| s.role == Role::Measured && !s.aux)
        .collect();
    let control_series: Vec<&Series> = series.iter().filter(|s| s.role == Role::Control).collect();
    let (baseline_drift, baseline_spread) = worst_spread(&measured, baseline);
    let every: Vec<&Series> = series.iter().collect();
    let same: Vec<bool> = series
        .iter()
        .filter_map(|s| s.all.as_ref())
        .flat_map(|all| all.comparisons.iter().filter_map(|c| c.same_conclusion))
        .collect();
    CampaignSummary {
        verdicts,
        aux,
        controls,
        control_alerts,
        max_cv: worst_cv(&measured),
        baseline_drift,
        baseline_spread,
        control_cv: worst_cv(&control_series),
        control_drift: worst_spread(&control_series, baseline).0,
        worst_cv: worst_cv(&every),
        worst_drift: worst_drift(&every, None),
        drop_first_same: (!same.is_empty()).then(|| same.iter().all(|s| *s)),
        expects_reproduced: {
            // An expectation about another target's campaign counts neither way.
            let judged: Vec<&ExpectCheck> = expects.iter().filter(|e| e.applies).collect();
            (!judged.is_empty()).then(|| judged.iter().all(|e| e.reproduced))
        },
    }
}

/// Largest point CV (all samples) over `series`.
fn worst_cv(series: &[&Series]) -> Option<Worst> {
    series
        .iter()
        .flat_map(|s| {
            s.points.iter().filter_map(move |p| {
                Some(Worst {
                    series: s.label.clone(),
                    at: p.label.clone(),
                    value: p.all.cv_pct?,
                })
            })
        })
        .reduce(|a, b| if b.value > a.value { b } else { a })
}

/// Largest spread of `kernel` over `series`, as the verdict measures it (the signed drift
/// with two boots, the RMS difference between two boots with three or more).
fn worst_spread(series: &[&Series], kernel: &str) -> (Option<Worst>, Option<SpreadMeasure>) {
    let mut worst: Option<(Worst, SpreadMeasure)> = None;
    for s in series {
        let Some(all) = &s.all else { continue };
        let Some(k) = all.kernels.iter().find(|k| k.kernel == kernel) else {
            continue;
        };
        let Some(spread) = spread_of(k) else { continue };
        if worst
            .as_ref()
            .is_none_or(|(w, _)| spread.pct.abs() > w.value.abs())
        {
            worst = Some((
                Worst {
                    series: s.label.clone(),
                    at: k.kernel.clone(),
                    value: spread.pct,
                },
                spread.measure,
            ));
        }
    }
    match worst {
        Some((w, m)) => (Some(w), Some(m)),
        None => (None, None),
    }
}

/// Largest |drift| (signed value kept) of `kernel`, or of any kernel, over `series`.
fn worst_drift(series: &[&Series], kernel: Option<&str>) -> Option<Worst> {
    series
        .iter()
        .filter_map(|s| Some((s, s.all.as_ref()?)))
        .flat_map(|(s, all)| {
            all.kernels
                .iter()
                .filter(move |k| kernel.is_none_or(|name| k.kernel == name))
                .filter_map(move |k| {
                    Some(Worst {
                        series: s.label.clone(),
                        at: k.kernel.clone(),
                        value: k.drift_pct?,
                    })
                })
        })
        .reduce(|a, b| if b.value.abs() > a.value.abs() { b } else { a })
}

#[cfg(test)]
mod tests {
    use crate::analysis::testkit::roles;

    #[test]
    fn aux_never_drives_the_summary_and_a_moving_control_is_an_alert() {
        let analysis = roles();
        let s = &analysis.summary;
        let series: Vec<&str> = s.verdicts.iter().map(|v| v.series.as_str()).collect();
        assert_eq!(series, ["main"]);
        assert_eq!(s.verdicts[0].label, "SIGNAL");
        assert_eq!(s.aux.len(), 1);
        assert_eq!(s.aux[0].label, "AUX_SIGNAL");
        // Higher is better and it halved: slower.
        assert_eq!(s.aux[0].direction.as_deref(), Some("slower"));
        assert_eq!(s.control_alerts.len(), 1);
        assert_eq!(s.control_alerts[0].series, "ctl");
        // The measured series' baseline drift, not the control's.
        let drift = s.baseline_drift.as_ref().expect("a booted twice");
        assert_eq!(drift.series, "main");
        assert!((drift.value - 0.2).abs() < 1e-9);
        assert_eq!(s.drop_first_same, Some(true));
    }
}
