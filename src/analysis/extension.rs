//! Where an extended campaign's comparisons stand at a look (`[analysis] extend`): the input
//! of the stopping rule ([`crate::stats::sequential::decide`]), read from the same analysis
//! `aba report` prints, so the engine and the report can never judge a look differently.

use crate::{
    analysis::model::{Analysis, CandidateResult, Series},
    recipe::model::Role,
    results::journal::LookComparison,
    stats::sequential::ComparisonState,
};

/// The state of one comparison at its look: its verdict, and its boot-level interval at the
/// look's level against the gate `gate_pct`.
#[must_use]
pub fn comparison_state(result: &CandidateResult, gate_pct: f64) -> ComparisonState {
    ComparisonState::of(result.verdict.label, look_bounds(result), gate_pct)
}

/// The boot-level interval at the look's level, percent: `None` for a fixed design or when it
/// is not estimable. What the stopping rule and a bisection step judge against the gate.
#[must_use]
pub fn look_bounds(result: &CandidateResult) -> Option<(f64, f64)> {
    result
        .comparison
        .look
        .as_ref()
        .and_then(|l| l.ci_boot.as_ref())
        .and_then(|ci| ci.bounds)
}

/// True for a series whose comparisons decide whether to extend: a measured workload that is
/// not auxiliary. A control is expected not to move and an auxiliary one never drives the
/// summary, so neither buys boots.
#[must_use]
pub fn drives(series: &Series) -> bool {
    series.role == Role::Measured && !series.aux
}

/// Every driving comparison (all samples) of `analysis` and where it stands.
#[must_use]
pub fn look_comparisons(analysis: &Analysis) -> Vec<LookComparison> {
    analysis
        .series
        .iter()
        .filter(|s| drives(s))
        .filter_map(|s| Some((s, s.all.as_ref()?)))
        .flat_map(|(s, all)| {
            all.comparisons.iter().map(move |c| LookComparison {
                series: s.label.clone(),
                candidate: c.shown(),
                state: comparison_state(c, s.limits.gate_pct.value),
                change_pct: c.comparison.change_pct,
                ci: look_bounds(c),
            })
        })
        .collect()
}
