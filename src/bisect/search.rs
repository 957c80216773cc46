//! Which commit to test next: plain halving or the posterior over commits. Both see the
//! decided steps as "X like good" or "X like bad" and the commits that cannot be tested
//! (skipped, undecided, unstable); neither sees the samples.
//!
//! Commits are indexed 0 (good) ..= N (bad); the first bad commit c is one of 1..=N, and a
//! step tests some X in 1..N (bad itself was shown at the confirmation).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::bisect::input::Strategy;

/// The search's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Choice {
    /// Test this commit.
    Test(usize),
    /// This commit is the first bad one; `posterior` is its probability (Bayesian only).
    Culprit {
        /// Its index.
        commit: usize,
        /// Its posterior probability; `None` for plain bisection.
        posterior: Option<f64>,
    },
    /// The first bad commit is one of `first..=last`, and no untested commit can narrow it.
    Range {
        /// First candidate.
        first: usize,
        /// Last candidate.
        last: usize,
    },
}

/// The state of a search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Search {
    /// Halving between the last good and the first bad commit.
    Plain {
        /// Last commit decided like good.
        good: usize,
        /// First commit decided like bad.
        bad: usize,
    },
    /// `weights[c]`: the posterior probability that c is the first bad commit (index 0 is
    /// good, always 0).
    Bayesian {
        /// The posterior, summing to 1.
        weights: Vec<f64>,
        /// The error rate assumed for a decided step.
        step_error: f64,
        /// The mass one commit, and the range, must hold: 1 − α.
        alpha: f64,
    },
}

impl Search {
    /// A search over commits 0..=`bad`, before any step.
    #[must_use]
    pub fn new(strategy: Strategy, bad: usize, step_error: f64, alpha: f64) -> Search {
        match strategy {
            Strategy::Plain => Search::Plain { good: 0, bad },
            Strategy::Bayesian => {
                let mut weights = vec![1.0 / bad as f64; bad + 1];
                weights[0] = 0.0;
                Search::Bayesian {
                    weights,
                    step_error,
                    alpha,
                }
            }
        }
    }

    /// Takes a decided step: X was like bad (`bad`) or like good.
    pub fn update(&mut self, x: usize, is_bad: bool) {
        match self {
            Search::Plain { good, bad } => {
                if is_bad {
                    *bad = x.min(*bad);
                } else {
                    *good = x.max(*good);
                }
            }
            Search::Bayesian {
                weights,
                step_error,
                ..
            } => {
                let e = *step_error;
                // c ≤ X means X is bad.
                for (c, w) in weights.iter_mut().enumerate() {
                    let x_bad = c <= x;
                    *w *= if x_bad == is_bad { 1.0 - e } else { e };
                }
                let total: f64 = weights.iter().sum();
                if total > 0.0 {
                    weights.iter_mut().for_each(|w| *w /= total);
                }
            }
        }
    }

    /// The next commit to test, or the end, with `excluded` commits never tested again.
    #[must_use]
    pub fn choose(&self, excluded: &BTreeSet<usize>) -> Choice {
        match self {
            Search::Plain { good, bad } => plain(*good, *bad, excluded),
            Search::Bayesian { weights, alpha, .. } => bayesian(weights, *alpha, excluded),
        }
    }

    /// The commits that may still be the first bad one: plain, those between the last good
    /// and the first bad; Bayesian, the range holding 1 − α of the posterior.
    #[must_use]
    pub fn range(&self) -> (usize, usize) {
        match self {
            Search::Plain { good, bad } => ((*good + 1).min(*bad), *bad),
            Search::Bayesian { weights, alpha, .. } => credible(&cumulative(weights), *alpha),
        }
    }

    /// The posterior probability of each commit being the first bad one (Bayesian only).
    #[must_use]
    pub fn posterior(&self) -> Option<&[f64]> {
        match self {
            Search::Plain { .. } => None,
            Search::Bayesian { weights, .. } => Some(weights),
        }
    }
}

fn plain(good: usize, bad: usize, excluded: &BTreeSet<usize>) -> Choice {
    if bad <= good + 1 {
        return Choice::Culprit {
            commit: bad,
            posterior: None,
        };
    }
    // Twice the middle, so that a tie picks the lower commit without rounding.
    let mid2 = good + bad;
    let best = (good + 1..bad)
        .filter(|x| !excluded.contains(x))
        .min_by_key(|x| (2 * x).abs_diff(mid2));
    match best {
        Some(x) => Choice::Test(x),
        None => Choice::Range {
            first: good + 1,
            last: bad,
        },
    }
}

/// The running sums of `weights`: `cdf[x]` is P(c ≤ x), the probability that X is bad.
fn cumulative(weights: &[f64]) -> Vec<f64> {
    let mut sum = 0.0;
    weights
        .iter()
        .map(|w| {
            sum += w;
            sum
        })
        .collect()
}

/// The credible range of the first bad commit: from the first commit past α/2 of the mass to
/// the first that reaches 1 − α/2, so that it holds at least 1 − α.
fn credible(cdf: &[f64], alpha: f64) -> (usize, usize) {
    let n = cdf.len() - 1;
    let first = (1..=n).find(|&c| cdf[c] > alpha / 2.0).unwrap_or(1);
    let last = (first..=n)
        .find(|&c| cdf[c] >= 1.0 - alpha / 2.0)
        .unwrap_or(n);
    (first, last)
}

fn bayesian(weights: &[f64], alpha: f64, excluded: &BTreeSet<usize>) -> Choice {
    let (top, p) =
        weights.iter().enumerate().fold(
            (0, -1.0),
            |best, (c, &w)| if w > best.1 { (c, w) } else { best },
        );
    if p >= 1.0 - alpha {
        return Choice::Culprit {
            commit: top,
            posterior: Some(p),
        };
    }
    let n = weights.len() - 1;
    let cdf = cumulative(weights);
    let (first, last) = credible(&cdf, alpha);
    // A test of X splits the mass at cdf[X]; one that leaves less than α/2 on a side
    // cannot move the range.
    let best = (1..n)
        .filter(|x| !excluded.contains(x))
        .filter(|&x| cdf[x] > alpha / 2.0 && cdf[x] < 1.0 - alpha / 2.0)
        .min_by(|&a, &b| (cdf[a] - 0.5).abs().total_cmp(&(cdf[b] - 0.5).abs()));
    match best {
        Some(x) => Choice::Test(x),
        None if first == last => Choice::Culprit {
            commit: first,
            posterior: Some(weights[first]),
        },
        None => Choice::Range { first, last },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{Choice, Search};
    use crate::bisect::Strategy;

    #[test]
    fn plain_halves_and_steps_around_an_excluded_commit() {
        let mut s = Search::new(Strategy::Plain, 16, 0.02, 0.05);
        let none = BTreeSet::new();
        assert_eq!(s.choose(&none), Choice::Test(8));
        s.update(8, false);
        assert_eq!(s.choose(&none), Choice::Test(12));
        let twelve = BTreeSet::from([12]);
        assert_eq!(s.choose(&twelve), Choice::Test(11));
        s.update(9, true);
        assert_eq!(
            s.choose(&none),
            Choice::Culprit {
                commit: 9,
                posterior: None
            }
        );
    }

    #[test]
    fn bayesian_needs_the_commit_and_its_parent_before_it_names_it() {
        let mut s = Search::new(Strategy::Bayesian, 16, 0.02, 0.05);
        let none = BTreeSet::new();
        // Truth: 5 is the first bad commit. Answer each test truthfully.
        let mut tested = Vec::new();
        let culprit = loop {
            match s.choose(&none) {
                Choice::Test(x) => {
                    tested.push(x);
                    s.update(x, x >= 5);
                }
                Choice::Culprit { commit, posterior } => {
                    assert!(posterior.is_some_and(|p| p >= 0.95), "{posterior:?}");
                    break commit;
                }
                Choice::Range { first, last } => panic!("range {first}..={last}"),
            }
            assert!(tested.len() < 20, "{tested:?}");
        };
        assert_eq!(culprit, 5);
        assert!(tested.contains(&4) && tested.contains(&5), "{tested:?}");
    }

    #[test]
    fn a_decided_step_weighs_each_side_by_the_step_error() {
        let mut s = Search::new(Strategy::Bayesian, 16, 0.02, 0.05);
        s.update(8, true);
        let w = s.posterior().expect("Bayesian");
        // c ≤ 8 keeps 0.98 of its 1/16 each, c > 8 0.02: the total is 1/2, so 0.1225 and
        // 0.0025 after normalising.
        assert!((w[1] - 0.1225).abs() < 1e-12, "{w:?}");
        assert!((w[9] - 0.0025).abs() < 1e-12, "{w:?}");
        assert!(w[0].abs() < 1e-15);
        assert_eq!(s.range(), (1, 8));
    }

    #[test]
    fn bayesian_outvotes_one_wrong_step() {
        let mut s = Search::new(Strategy::Bayesian, 16, 0.02, 0.05);
        let none = BTreeSet::new();
        let mut lie = true;
        let mut steps = 0;
        let culprit = loop {
            steps += 1;
            assert!(steps < 30);
            match s.choose(&none) {
                Choice::Test(x) => {
                    // The first answer is wrong: 8 is said good although 5 is the culprit.
                    let truth = x >= 5;
                    s.update(x, if lie { !truth } else { truth });
                    lie = false;
                }
                Choice::Culprit { commit, .. } => break commit,
                Choice::Range { first, last } => panic!("range {first}..={last}"),
            }
        };
        assert_eq!(culprit, 5);
    }

    #[test]
    fn bayesian_ends_with_a_range_when_the_parent_cannot_be_tested() {
        let mut s = Search::new(Strategy::Bayesian, 16, 0.02, 0.05);
        let skipped = BTreeSet::from([4]);
        let end = loop {
            match s.choose(&skipped) {
                Choice::Test(x) => s.update(x, x >= 5),
                other => break other,
            }
        };
        assert_eq!(end, Choice::Range { first: 4, last: 5 });
    }
}
