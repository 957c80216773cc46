//! What one step decides from its points: the sandwich good/X/good/X/… judged by the analysis
//! `aba report` runs (`analyze_series` at the look's level, then the extended-campaign state
//! of `analysis::extension::comparison_state`). Nothing statistical is computed here; this
//! file only reads aba's verdict and intervals against the bisection's reference points.

use serde::{Deserialize, Serialize};

use crate::{
    analysis::{
        environment::EnvironmentCheck,
        extension::{comparison_state, look_bounds},
        model::SeriesPoint,
        series::{SeriesContext, analyze_series},
    },
    bisect::{BisectError, BisectInput},
    stats::{
        VerdictParams,
        sequential::{Boundary, ComparisonState, FAMILY_ALPHA, Look, SPENDING},
    },
};

/// What a decided step says about its commit X (for the endpoints' confirmation, X is bad).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// X is like good: its change against good is shown inside ± the step's gate
    /// (aba's "below the gate" state: NO_MATERIAL_SIGNAL or BELOW_GATE at the look's level).
    /// At the endpoints: bad does not differ from good by the gate, nothing to bisect.
    Good,
    /// X is like bad: its change against good is a SIGNAL at the step's gate, in bad's
    /// direction, and its interval reaches bad's. At the endpoints: good and bad differ.
    Bad,
    /// X differs from good (a SIGNAL) but its interval lies wholly short of bad's, or it
    /// moved the other way: a gradual or split regression, reported, not forced.
    Between,
    /// Neither shown within the step's budget.
    Undecided,
    /// The measurement is broken (aba's UNSTABLE): more boots are no remedy.
    Unstable,
}

/// One decided step: what the command journals and [`crate::bisect::Bisection::push`] replays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// Index of X in the commits (the last one for the endpoints' confirmation).
    pub commit: usize,
    /// What the step decided.
    pub verdict: StepVerdict,
    /// aba's verdict label at the last look (`SIGNAL`, `NO_MATERIAL_SIGNAL`, …).
    pub label: String,
    /// X's change against good, percent; `None` when not compared.
    pub change_pct: Option<f64>,
    /// X's boot-level interval at the last look's level, percent; `None` when not estimable.
    pub ci: Option<(f64, f64)>,
    /// Points (boots) the step used.
    pub points: usize,
}

/// What [`crate::bisect::Bisection::judge`] answers for a look.
#[derive(Clone, Debug, PartialEq)]
pub enum Judged {
    /// Not decided yet: boot the step up to `to_points` points and judge again.
    Extend {
        /// The next look's point count.
        to_points: usize,
    },
    /// Decided: journal it and push it.
    Decided(StepResult),
}

/// Which step is judged, with the references it is judged against.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepSpec {
    /// X's index.
    pub commit: usize,
    /// The endpoints' confirmation (good against bad at the recipe's gate).
    pub confirm: bool,
    /// The gate of this step, percent.
    pub gate_pct: f64,
    /// +1 when bad is above good, −1 below (1 for the confirmation).
    pub sign: f64,
    /// The lower end of bad's interval in bad's direction (0 for the confirmation).
    pub bad_low: f64,
    /// Most points.
    pub max_points: usize,
}

/// The looks of a step of at most `max_points` points, with each look's α scaled from aba's
/// extended-campaign boundary (Pocock spending of 5%) to the step's own error `step_alpha`.
pub(crate) fn looks(input: &BisectInput, max_points: usize) -> Vec<Look> {
    let step_alpha = input.step_alpha;
    let b = &input.budget;
    let boundary = Boundary::new(SPENDING, b.planned, b.unit, max_points);
    boundary
        .points
        .iter()
        .filter_map(|&p| boundary.look_at(p))
        .map(|l| Look {
            alpha: l.alpha * step_alpha / FAMILY_ALPHA,
            ..l
        })
        .collect()
}

/// The point counts of the looks of a step of at most `max_points` points.
pub(crate) fn look_points(input: &BisectInput, max_points: usize) -> Vec<usize> {
    Boundary::new(
        SPENDING,
        input.budget.planned,
        input.budget.unit,
        max_points,
    )
    .points
}

/// Judges `points` (good as `baseline`, X as `candidate`, in boot order) at their look.
pub(crate) fn judge(
    input: &BisectInput,
    spec: &StepSpec,
    points: &[SeriesPoint],
    baseline: &str,
    candidate: &str,
    environment: &EnvironmentCheck,
) -> Result<Judged, BisectError> {
    let counts = look_points(input, spec.max_points);
    let Some(k) = counts.iter().position(|&n| n == points.len()) else {
        return Err(BisectError::NotALook {
            points: points.len(),
            looks: counts,
        });
    };
    let look = looks(input, spec.max_points)[k];
    let params = VerdictParams {
        gate_pct: spec.gate_pct,
        ..input.params.clone()
    };
    let candidates = [candidate.to_owned()];
    let ctx = SeriesContext {
        baseline,
        candidates: &candidates,
        declared: &[],
        params: &params,
        better: input.better,
        aux: false,
        recoveries: &[],
        prior_all: None,
        prior_drop_first: None,
        environment,
        look: Some(look),
    };
    let analyses = analyze_series(points, &ctx);
    let result = analyses
        .all
        .as_ref()
        .and_then(|a| a.comparisons.iter().find(|c| c.candidate == candidate));
    let last = look.is_last();
    let Some(result) = result else {
        return Ok(if last {
            Judged::Decided(StepResult {
                commit: spec.commit,
                verdict: StepVerdict::Undecided,
                label: "NOT_COMPARED".to_owned(),
                change_pct: None,
                ci: None,
                points: points.len(),
            })
        } else {
            Judged::Extend {
                to_points: counts[k + 1],
            }
        });
    };
    let change = result.comparison.change_pct;
    let ci = look_bounds(result);
    let state = comparison_state(result, spec.gate_pct);
    let verdict = match state {
        ComparisonState::Unstable => Some(StepVerdict::Unstable),
        ComparisonState::BelowGate => Some(StepVerdict::Good),
        ComparisonState::Signal if spec.confirm => Some(StepVerdict::Bad),
        ComparisonState::Signal => {
            // In bad's direction: the interval's upper end as bad's direction reads it.
            let reach = ci.map(|(lo, hi)| if spec.sign > 0.0 { hi } else { -lo });
            if change * spec.sign < 0.0 || reach.is_some_and(|r| r < spec.bad_low) {
                Some(StepVerdict::Between)
            } else {
                Some(StepVerdict::Bad)
            }
        }
        ComparisonState::Undecided => last.then_some(StepVerdict::Undecided),
    };
    Ok(match verdict {
        Some(verdict) => Judged::Decided(StepResult {
            commit: spec.commit,
            verdict,
            label: result.verdict.label.to_string(),
            change_pct: Some(change),
            ci,
            points: points.len(),
        }),
        None => Judged::Extend {
            to_points: counts[k + 1],
        },
    })
}
