//! `git-bisect-log.txt`: the bisection as the `git bisect` commands that would replay its
//! decisions (`git bisect replay` reads it), so a tester can continue by hand or show the
//! path in a mail. Steps `git bisect` has no word for (between, undecided, unstable) are
//! comments: git would have to be told good or bad, and aba did not decide either.

use std::fmt::Write as _;

use super::range::RangeCommit;
use crate::bisect::{Record, StepVerdict};

/// The log for the line `commits` (good first, bad last) and the decided `records`.
#[must_use]
pub fn render(commits: &[RangeCommit], records: &[Record]) -> String {
    let mut out = String::from("git bisect start --first-parent\n");
    let named = |i: usize| {
        commits.get(i).map_or_else(
            || format!("commit #{i}"),
            |c| format!("[{}] {}", c.hash, c.subject),
        )
    };
    let hash = |i: usize| commits.get(i).map_or("?", |c| c.hash.as_str());
    if let (Some(good), Some(bad)) = (commits.first(), commits.last()) {
        let _ = writeln!(out, "# good: {}", named(0));
        let _ = writeln!(out, "git bisect good {}", good.hash);
        let _ = writeln!(out, "# bad: {}", named(commits.len() - 1));
        let _ = writeln!(out, "git bisect bad {}", bad.hash);
    }
    let bad_index = commits.len().saturating_sub(1);
    for record in records {
        match record {
            Record::Skip { commit, why } => {
                let _ = writeln!(out, "# skip: {} ({why})", named(*commit));
                let _ = writeln!(out, "git bisect skip {}", hash(*commit));
            }
            Record::Step(step) if step.commit == bad_index => {
                // The endpoints' confirmation: bad is already named.
                if step.verdict != StepVerdict::Bad {
                    let _ = writeln!(
                        out,
                        "# aba: good and bad were not confirmed to differ ({})",
                        step.label
                    );
                }
            }
            Record::Step(step) => {
                let (word, said) = match step.verdict {
                    StepVerdict::Good => (Some("good"), "good"),
                    StepVerdict::Bad => (Some("bad"), "bad"),
                    StepVerdict::Between => (None, "between good and bad"),
                    StepVerdict::Undecided => (None, "undecided"),
                    StepVerdict::Unstable => (None, "unstable"),
                };
                match word {
                    Some(word) => {
                        let _ = writeln!(out, "# {word}: {}", named(step.commit));
                        let _ = writeln!(out, "git bisect {word} {}", hash(step.commit));
                    }
                    None => {
                        let _ = writeln!(
                            out,
                            "# aba: {} is neither good nor bad ({said}, {})",
                            named(step.commit),
                            step.label
                        );
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::{
        bisect::{Record, StepResult, StepVerdict},
        session::bisect::range::RangeCommit,
    };

    fn step(commit: usize, verdict: StepVerdict) -> Record {
        Record::Step(StepResult {
            commit,
            verdict,
            label: "SIGNAL".into(),
            change_pct: Some(10.0),
            ci: Some((8.0, 12.0)),
            points: 5,
        })
    }

    #[test]
    fn the_log_names_good_bad_and_skips_as_git_bisect_would() {
        let commits: Vec<RangeCommit> = (0..5)
            .map(|i| RangeCommit {
                hash: format!("h{i}"),
                subject: format!("s{i}"),
            })
            .collect();
        let records = [
            step(4, StepVerdict::Bad),
            step(2, StepVerdict::Good),
            Record::Skip {
                commit: 3,
                why: "the build failed".into(),
            },
            step(1, StepVerdict::Undecided),
        ];
        assert_eq!(
            render(&commits, &records),
            "git bisect start --first-parent\n\
             # good: [h0] s0\ngit bisect good h0\n\
             # bad: [h4] s4\ngit bisect bad h4\n\
             # good: [h2] s2\ngit bisect good h2\n\
             # skip: [h3] s3 (the build failed)\ngit bisect skip h3\n\
             # aba: [h1] s1 is neither good nor bad (undecided, SIGNAL)\n"
        );
    }
}
