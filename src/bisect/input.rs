//! What a bisection is given: the commits, the recipe's gate and limits, the boots a step may
//! use, and how the next commit is chosen.

use serde::{Deserialize, Serialize};

use crate::{
    bisect::BisectError,
    stats::{Better, VerdictParams},
};

/// How the next commit is chosen (`bench/bisect.rs` measured both; docs/bisect.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// `git bisect`'s halving: the untested commit nearest the middle of the range between
    /// the last commit decided like good and the first decided like bad. Every decided step
    /// is taken as true.
    Plain,
    /// A posterior over which commit is the first bad one, updated by each decided step with
    /// the step's error rate; the next commit splits the posterior at its median, and the
    /// search ends when one commit holds at least 1 − α. A wrong step is outvoted by later
    /// ones instead of sending the search away for good.
    Bayesian,
}

/// A step's error budget: 10 %, twice an extended campaign's, because aba's verdict needs
/// more than its interval: the simulator measured at most 2 % wrong commits in any cell with
/// it, for fewer boots than with 5 % (docs/bisect.md).
pub const STEP_ALPHA: f64 = 0.10;

/// The default strategy, chosen on the simulator's numbers (docs/bisect.md): Bayesian names
/// a wrong commit in at most 0.5 % of any cell (plain 3.1 %, full run of 2026-12-07) and
/// states a posterior, for 8 % more boots on average (the run that chose it).
pub const DEFAULT_STRATEGY: Strategy = Strategy::Bayesian;

/// The boots a step may use: a sandwich good/X/good of `planned` points, extended by `unit`
/// points (X/good) while undecided, up to `max_points`; the endpoints' confirmation has its
/// own, larger cap (a wrong "no change" there ends the whole bisection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// Points of the first look (3: good/X/good).
    pub planned: usize,
    /// Points appended per extension (2: X/good).
    pub unit: usize,
    /// Most points of a commit's step.
    pub max_points: usize,
    /// Most points of the endpoints' confirmation.
    pub confirm_max_points: usize,
    /// Fresh confirmations after one that ended UNSTABLE, before "no bisection". The
    /// stability checks are applied afresh at each of up to 30 looks, so a no-change
    /// confirmation trips one of them in up to 16 % of the simulator's noisiest cells; two
    /// retries bring "no commit in range changes it" to ≥ 95 % in every cell of the full run
    /// (docs/bisect.md).
    pub confirm_retries: usize,
    /// Fresh sandwiches of a commit after its step ended UNSTABLE, before it is left out. On
    /// real hardware and in the lab the stability rule's trend test trips now and then on a
    /// step whose change is far larger than the drift (the lab: +153 % against a drift of
    /// −1 % per point, F(1, 2) = 54); a commit left out ends the search with a range around
    /// it. One retry, measured in the simulator (docs/bisect.md).
    pub step_retries: usize,
}

impl Default for Budget {
    /// 3 points, +2 per look, up to 31 per step and 91 for the endpoints (retried twice after
    /// an UNSTABLE confirmation): in the simulator's
    /// noisiest cells (boot SD 3 %) a range ends 25–40 % of the bisections instead of 54–78 %
    /// with 15 and 31, for about the same mean boots; the endpoints' 91 points (61 before
    /// 2026-12-07) bring "no commit in range changes it" from 94.0 % to at least 98.8 % in
    /// the noisiest no-change cell (boot SD 3 %, CV 5 %), for more boots only where the
    /// culprit is the size of the gate itself (docs/bisect.md).
    fn default() -> Budget {
        Budget {
            planned: 3,
            unit: 2,
            max_points: 31,
            confirm_max_points: 91,
            confirm_retries: 2,
            step_retries: 1,
        }
    }
}

/// Everything a bisection is given. `commits[0]` is good, the last is bad.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BisectInput {
    /// The first-parent line from good to bad, oldest first, as commit ids.
    pub commits: Vec<String>,
    /// The recipe's verdict parameters: its gate G and stability limits.
    pub params: VerdictParams,
    /// Which direction of the metric is an improvement.
    pub better: Better,
    /// Boots per step.
    pub budget: Budget,
    /// How the next commit is chosen.
    pub strategy: Strategy,
    /// The Bayesian search ends when one commit holds at least 1 − `alpha`, and its range
    /// holds 1 − `alpha` of the posterior.
    pub alpha: f64,
    /// The error rate the posterior assumes for a decided step (like good when bad, or like
    /// bad when good).
    pub step_error: f64,
    /// Most commit steps (decided, undecided or skipped) before the search ends with a range.
    pub max_steps: usize,
    /// The error budget of one step, spent over its looks as an extended campaign spends
    /// its 5% (Pocock): the level its intervals are judged at.
    pub step_alpha: f64,
}

impl BisectInput {
    /// An input with aba's defaults for everything but the range and the recipe's limits.
    #[must_use]
    pub fn new(commits: Vec<String>, params: VerdictParams, better: Better) -> BisectInput {
        // log2 of the commits, three times over, and room for the endpoints' neighbours.
        let steps = 3 * (usize::BITS - commits.len().leading_zeros()) as usize + 8;
        BisectInput {
            commits,
            params,
            better,
            budget: Budget::default(),
            strategy: DEFAULT_STRATEGY,
            alpha: 0.05,
            step_error: 0.02,
            max_steps: steps,
            step_alpha: STEP_ALPHA,
        }
    }

    /// N: the index of bad; the first bad commit is one of 1..=N.
    #[must_use]
    pub fn bad(&self) -> usize {
        self.commits.len().saturating_sub(1)
    }

    /// Checks the limits a bisection relies on.
    ///
    /// # Errors
    /// [`BisectError`] naming the first limit out of range.
    pub fn check(&self) -> Result<(), BisectError> {
        if self.commits.len() < 2 {
            return Err(BisectError::TooFewCommits(self.commits.len()));
        }
        let b = &self.budget;
        if b.planned < 3 || b.unit == 0 {
            return Err(BisectError::Input(format!(
                "a step needs at least 3 planned points (good/X/good) and a unit of at least 1, \
                 got planned {} and unit {}",
                b.planned, b.unit
            )));
        }
        if b.max_points < b.planned || b.confirm_max_points < b.planned {
            return Err(BisectError::Input(format!(
                "max_points {} and confirm_max_points {} must be at least planned {}",
                b.max_points, b.confirm_max_points, b.planned
            )));
        }
        let unit = |x: f64| x > 0.0 && x < 0.5;
        if !unit(self.alpha) || !unit(self.step_error) || !unit(self.step_alpha) {
            return Err(BisectError::Input(format!(
                "alpha {}, step_error {} and step_alpha {} must lie in (0, 0.5)",
                self.alpha, self.step_error, self.step_alpha
            )));
        }
        if self.params.gate_pct.is_nan() || self.params.gate_pct <= 0.0 {
            return Err(BisectError::Input(format!(
                "the gate must be positive, got {}",
                self.params.gate_pct
            )));
        }
        Ok(())
    }
}
