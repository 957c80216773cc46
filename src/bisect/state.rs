//! The state of a bisection, rebuilt entirely from its records: resume is a replay of the
//! journaled steps, so the journal holds nothing but [`Record`]s and the state can never
//! disagree with it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::{
    analysis::{environment::EnvironmentCheck, model::SeriesPoint},
    bisect::{
        BisectError, BisectInput,
        search::{Choice, Search},
        step::{self, Judged, StepResult, StepSpec, StepVerdict},
    },
};

/// One journaled event of a bisection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// A decided step (the endpoints' confirmation, or a commit's).
    Step(StepResult),
    /// A commit that does not build or boot, left out like `git bisect skip`.
    Skip {
        /// Its index.
        commit: usize,
        /// Why, as the build or boot said it.
        why: String,
    },
}

/// What to do next.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Action {
    /// Confirm the endpoints: a sandwich good/bad/good/… judged at the recipe's gate.
    Confirm {
        /// Index of bad.
        bad: usize,
    },
    /// Test a commit: a sandwich good/X/good/….
    Test {
        /// Index of X.
        commit: usize,
    },
    /// The bisection is over.
    Done(Outcome),
}

/// How a bisection ends.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Outcome {
    /// Good and bad are shown equivalent within the gate: no commit in range changes it.
    NoChange(StepResult),
    /// Good and bad are not shown to differ by the gate (nor shown equivalent) within the
    /// confirmation's budget, or the measurement is UNSTABLE: no bisection.
    NoBisection(StepResult),
    /// The first bad commit.
    Culprit {
        /// Its index.
        commit: usize,
        /// The step that showed it like bad (the confirmation when it is bad itself).
        step: StepResult,
        /// Its posterior probability (Bayesian search).
        posterior: Option<f64>,
    },
    /// The first bad commit is one of `first..=last`, and the bisection cannot narrow it.
    Range {
        /// First candidate.
        first: usize,
        /// Last candidate.
        last: usize,
        /// Why: the commits left out inside the range, or the step limit.
        why: String,
    },
    /// A commit differs from good but is not like bad: a gradual or split regression.
    Between(StepResult),
}

impl Outcome {
    /// The outcome in one sentence, with commits named by `commits`.
    #[must_use]
    pub fn sentence(&self, commits: &[String]) -> String {
        let id = |i: usize| commits.get(i).map_or("?", String::as_str);
        let change = |s: &StepResult| {
            let c = s
                .change_pct
                .map_or_else(|| "not compared".to_owned(), |c| format!("{c:+.2} %"));
            let ci = s.ci.map_or_else(
                || "interval not estimable".to_owned(),
                |(lo, hi)| format!("interval [{lo:+.2}, {hi:+.2}] %"),
            );
            format!(
                "{c} against good, {ci}, {} after {} boots",
                s.label, s.points
            )
        };
        match self {
            Outcome::NoChange(s) => format!(
                "no commit in range changes it: bad is equivalent to good within the gate ({})",
                change(s)
            ),
            Outcome::NoBisection(s) => format!(
                "good and bad do not differ at this noise: no bisection ({})",
                change(s)
            ),
            Outcome::Culprit {
                commit,
                step,
                posterior,
            } => {
                let p = posterior
                    .map_or_else(String::new, |p| format!("; posterior probability {:.3}", p));
                format!("first bad commit {}: {}{p}", id(*commit), change(step))
            }
            Outcome::Range { first, last, why } => format!(
                "the first bad commit is one of {} ({}) .. {} ({}), {} commits: {why}",
                id(*first),
                first,
                id(*last),
                last,
                last - first + 1
            ),
            Outcome::Between(s) => format!(
                "commit {} sits between good and bad, a gradual or split regression: {}",
                id(s.commit),
                change(s)
            ),
        }
    }
}

/// A bisection: its input, its records, and everything derived from them.
#[derive(Clone, Debug, Serialize)]
pub struct Bisection {
    input: BisectInput,
    records: Vec<Record>,
    confirmation: Option<StepResult>,
    search: Search,
    /// Commits never to test again, with why.
    excluded: BTreeMap<usize, String>,
    /// The latest decided step of each commit.
    latest: BTreeMap<usize, StepResult>,
    /// Commit steps taken (decided, undecided or skipped).
    steps: usize,
    next: Action,
}

impl Bisection {
    /// A bisection before its first step.
    ///
    /// # Errors
    /// [`BisectError`] when the input is out of range.
    pub fn new(input: BisectInput) -> Result<Bisection, BisectError> {
        input.check()?;
        let bad = input.bad();
        Ok(Bisection {
            search: Search::new(input.strategy, bad, input.step_error, input.alpha),
            input,
            records: Vec::new(),
            confirmation: None,
            excluded: BTreeMap::new(),
            latest: BTreeMap::new(),
            steps: 0,
            next: Action::Confirm { bad },
        })
    }

    /// The bisection after `records`, in order: how the command resumes.
    ///
    /// # Errors
    /// [`BisectError::Record`] naming the first record that does not fit.
    pub fn replay(input: BisectInput, records: &[Record]) -> Result<Bisection, BisectError> {
        let mut b = Bisection::new(input)?;
        for r in records {
            b.push(r.clone())?;
        }
        Ok(b)
    }

    /// What to do next.
    #[must_use]
    pub fn next(&self) -> &Action {
        &self.next
    }

    /// The input.
    #[must_use]
    pub fn input(&self) -> &BisectInput {
        &self.input
    }

    /// Every record so far, in order: what the journal holds.
    #[must_use]
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The search's state (the posterior of a Bayesian one).
    #[must_use]
    pub fn search(&self) -> &Search {
        &self.search
    }

    /// The endpoints' confirmation, once decided.
    #[must_use]
    pub fn confirmation(&self) -> Option<&StepResult> {
        self.confirmation.as_ref()
    }

    /// The gate a commit's step is judged at: the recipe's gate G, or half of bad's measured
    /// change when that is smaller, so that "like good" (inside ± the gate) and "like bad"
    /// (a SIGNAL of at least the gate) cannot both hold. G until the endpoints are confirmed.
    #[must_use]
    pub fn step_gate(&self) -> f64 {
        let g = self.input.params.gate_pct;
        self.confirmation
            .as_ref()
            .and_then(|c| c.change_pct)
            .map_or(g, |d| g.min(d.abs() / 2.0))
    }

    /// The point counts at which the current step is judged (3, 5, 7, …); empty when done.
    #[must_use]
    pub fn look_points(&self) -> Vec<usize> {
        self.spec()
            .map(|s| step::look_points(&self.input, s.max_points))
            .unwrap_or_default()
    }

    fn spec(&self) -> Option<StepSpec> {
        let b = &self.input.budget;
        match self.next {
            Action::Confirm { bad } => Some(StepSpec {
                commit: bad,
                confirm: true,
                gate_pct: self.input.params.gate_pct,
                sign: 1.0,
                bad_low: 0.0,
                max_points: b.confirm_max_points,
            }),
            Action::Test { commit } => {
                let c = self.confirmation.as_ref()?;
                let d = c.change_pct.unwrap_or(0.0);
                let sign = if d < 0.0 { -1.0 } else { 1.0 };
                let bad_low =
                    c.ci.map_or(0.0, |(lo, hi)| if sign > 0.0 { lo } else { -hi });
                Some(StepSpec {
                    commit,
                    confirm: false,
                    gate_pct: self.step_gate(),
                    sign,
                    bad_low,
                    max_points: b.max_points,
                })
            }
            Action::Done(_) => None,
        }
    }

    /// Judges the current step's points (good as `baseline`, X as `candidate`, in boot
    /// order; their count one of [`Bisection::look_points`]) with aba's analysis.
    ///
    /// # Errors
    /// [`BisectError::Done`] after the end, [`BisectError::NotALook`] for a point count
    /// between looks.
    pub fn judge(
        &self,
        points: &[SeriesPoint],
        baseline: &str,
        candidate: &str,
        environment: &EnvironmentCheck,
    ) -> Result<Judged, BisectError> {
        let spec = self.spec().ok_or(BisectError::Done)?;
        step::judge(&self.input, &spec, points, baseline, candidate, environment)
    }

    /// Takes the current step's record and moves on.
    ///
    /// # Errors
    /// [`BisectError::Record`] when the record is not for the current step (and then
    /// nothing changes).
    pub fn push(&mut self, record: Record) -> Result<(), BisectError> {
        let index = self.records.len();
        let wrong = |why: String| BisectError::Record { index, why };
        match (&self.next, &record) {
            (Action::Done(_), _) => return Err(wrong("the bisection is already done".into())),
            (Action::Confirm { bad }, Record::Step(s)) if s.commit == *bad => {
                self.confirmation = Some(s.clone());
                let unstable = self
                    .records
                    .iter()
                    .filter(|r| matches!(r, Record::Step(s) if s.verdict == StepVerdict::Unstable))
                    .count();
                self.next = match s.verdict {
                    StepVerdict::Good => Action::Done(Outcome::NoChange(s.clone())),
                    StepVerdict::Bad => self.choose(),
                    // A fresh sandwich, from its first point, within the retries allowed.
                    StepVerdict::Unstable if unstable < self.input.budget.confirm_retries => {
                        Action::Confirm { bad: *bad }
                    }
                    _ => Action::Done(Outcome::NoBisection(s.clone())),
                };
            }
            (Action::Confirm { bad }, r) => {
                return Err(wrong(format!(
                    "expected the endpoints' confirmation (commit {bad}), got {}",
                    describe(r)
                )));
            }
            (Action::Test { commit }, r) if record_commit(r) == *commit => {
                let commit = *commit;
                self.steps += 1;
                match r {
                    Record::Skip { why, .. } => {
                        self.excluded.insert(commit, format!("skipped: {why}"));
                    }
                    Record::Step(s) => match s.verdict {
                        StepVerdict::Good | StepVerdict::Bad => {
                            let is_bad = s.verdict == StepVerdict::Bad;
                            self.search.update(commit, is_bad);
                            self.latest.insert(commit, s.clone());
                        }
                        StepVerdict::Between => {
                            self.records.push(record.clone());
                            self.next = Action::Done(Outcome::Between(s.clone()));
                            return Ok(());
                        }
                        StepVerdict::Unstable
                            if self.unstable_steps(commit) < self.input.budget.step_retries =>
                        {
                            // A fresh sandwich of the same commit, from its first point.
                            self.records.push(record);
                            self.next = Action::Test { commit };
                            return Ok(());
                        }
                        StepVerdict::Undecided | StepVerdict::Unstable => {
                            self.excluded.insert(
                                commit,
                                format!(
                                    "{} after {} boots ({})",
                                    word(s.verdict),
                                    s.points,
                                    s.label
                                ),
                            );
                        }
                    },
                }
                self.next = self.choose();
            }
            (Action::Test { commit }, r) => {
                return Err(wrong(format!(
                    "expected a step or skip of commit {commit}, got {}",
                    describe(r)
                )));
            }
        }
        self.records.push(record);
        Ok(())
    }

    /// The UNSTABLE steps of `commit` journaled so far.
    fn unstable_steps(&self, commit: usize) -> usize {
        self.records
            .iter()
            .filter(|r| {
                matches!(r, Record::Step(s) if s.commit == commit && s.verdict == StepVerdict::Unstable)
            })
            .count()
    }

    /// The next action once the endpoints are confirmed.
    fn choose(&self) -> Action {
        let bad = self.input.bad();
        let set: BTreeSet<usize> = self.excluded.keys().copied().collect();
        let choice = self.search.choose(&set);
        let range = |first: usize, last: usize, limit: bool| {
            let left: Vec<String> = self
                .excluded
                .range(first..=last)
                .map(|(c, why)| format!("{} {why}", self.id(*c)))
                .collect();
            let mut why = Vec::new();
            if limit {
                why.push(format!(
                    "the step limit ({}) was reached",
                    self.input.max_steps
                ));
            }
            if !left.is_empty() {
                why.push(format!("left out: {}", left.join("; ")));
            }
            if why.is_empty() {
                why.push(format!(
                    "no single commit reaches {:.0} % of the posterior",
                    100.0 * (1.0 - self.input.alpha)
                ));
            }
            Action::Done(Outcome::Range {
                first,
                last,
                why: why.join("; "),
            })
        };
        match choice {
            Choice::Test(_) if self.steps >= self.input.max_steps => {
                let (first, last) = self.search.range();
                range(first, last, true)
            }
            Choice::Test(commit) => Action::Test { commit },
            Choice::Range { first, last } => range(first, last, false),
            Choice::Culprit { commit, posterior } => {
                let step = if commit == bad {
                    self.confirmation.clone()
                } else {
                    self.latest.get(&commit).cloned()
                };
                match step {
                    Some(step) => Action::Done(Outcome::Culprit {
                        commit,
                        step,
                        posterior,
                    }),
                    // The posterior names a commit no step showed like bad (possible only
                    // with an extreme step_error): it has to be tested.
                    None if !self.excluded.contains_key(&commit) => Action::Test { commit },
                    None => range(commit, commit, false),
                }
            }
        }
    }

    fn id(&self, i: usize) -> &str {
        self.input.commits.get(i).map_or("?", String::as_str)
    }
}

fn record_commit(r: &Record) -> usize {
    match r {
        Record::Step(s) => s.commit,
        Record::Skip { commit, .. } => *commit,
    }
}

fn describe(r: &Record) -> String {
    match r {
        Record::Step(s) => format!("a step of commit {}", s.commit),
        Record::Skip { commit, .. } => format!("a skip of commit {commit}"),
    }
}

fn word(v: StepVerdict) -> &'static str {
    match v {
        StepVerdict::Good => "like good",
        StepVerdict::Bad => "like bad",
        StepVerdict::Between => "between good and bad",
        StepVerdict::Undecided => "undecided",
        StepVerdict::Unstable => "unstable",
    }
}
