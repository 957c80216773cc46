//! The files a bisection keeps up to date after every decision: `bisect-report.txt` (the
//! mail-ready account), `bisect.tsv` ([`super::steps_tsv`]) and `git-bisect-log.txt`
//! ([`super::git_log`]). Written whole each time (atomically), so `aba bisect status` and a
//! reader in the morning see the state of the last decision, finished or not.

use std::{fmt::Write as _, path::Path};

use super::{failure::BisectFailure, git_log, journal::Entry, range::RangeCommit, steps_tsv};
use crate::{
    bisect::{Action, Bisection, Record, StepVerdict, Strategy},
    error::Error,
    results::atomic::write_atomic,
};

/// The mail-ready report's file name.
pub const REPORT: &str = "bisect-report.txt";
/// The steps table's file name.
pub const TSV: &str = "bisect.tsv";
/// The `git bisect log` equivalent's file name.
pub const GIT_LOG: &str = "git-bisect-log.txt";

/// A step's verdict in words.
#[must_use]
pub fn verdict_words(verdict: StepVerdict) -> &'static str {
    match verdict {
        StepVerdict::Good => "like good",
        StepVerdict::Bad => "like bad",
        StepVerdict::Between => "between good and bad",
        StepVerdict::Undecided => "undecided within its budget",
        StepVerdict::Unstable => "UNSTABLE",
    }
}

/// Writes the three files into `dir`.
pub fn write_all(
    dir: &Path,
    commits: &[RangeCommit],
    built: &[Entry],
    bisection: &Bisection,
    series: &str,
) -> Result<(), Error> {
    let records = bisection.records();
    for (name, text) in [
        (TSV, steps_tsv::render(commits, built, records)),
        (GIT_LOG, git_log::render(commits, records)),
        (REPORT, render(commits, bisection, series)),
    ] {
        let path = dir.join(name);
        write_atomic(&path, text.as_bytes())
            .map_err(|source| BisectFailure::Io { path, source })?;
    }
    Ok(())
}

/// The mail-ready report.
#[must_use]
pub fn render(commits: &[RangeCommit], bisection: &Bisection, series: &str) -> String {
    let mut out = String::new();
    let good = &commits[0];
    let bad = &commits[commits.len() - 1];
    let input = bisection.input();
    let _ = writeln!(
        out,
        "aba bisect of {}: good {} ({}) .. bad {} ({}), {} commits on the first-parent line",
        crate::text::untrusted(series, 200),
        short(&good.hash),
        crate::text::untrusted(&good.subject, 80),
        short(&bad.hash),
        crate::text::untrusted(&bad.subject, 80),
        commits.len() - 1
    );
    let hashes: Vec<String> = commits.iter().map(|c| c.hash.clone()).collect();
    let _ = writeln!(out);
    match bisection.next() {
        Action::Done(outcome) => {
            // The sentence quotes step labels and skip reasons a journal holds: escaped.
            let _ = writeln!(
                out,
                "Result: {}",
                crate::text::untrusted(&outcome.sentence(&hashes), 4000)
            );
            if let crate::bisect::Outcome::Culprit { commit, .. } = outcome
                && let Some(c) = commits.get(*commit)
            {
                let _ = writeln!(
                    out,
                    "        {} {}",
                    c.hash,
                    crate::text::untrusted(&c.subject, 200)
                );
            }
        }
        Action::Confirm { .. } => {
            let _ = writeln!(out, "In progress: the endpoints' confirmation.");
        }
        Action::Test { commit } => {
            let _ = writeln!(
                out,
                "In progress: the next step tests {}.",
                commits.get(*commit).map_or("?", |c| short(&c.hash))
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "How it was decided: every step is a sandwich good/X/good booted afresh, extended by \
         X/good while undecided (up to {} points, {} for the endpoints), judged by aba's \
         verdict with the step's error budget of {:.0} % spent over its looks; the endpoints \
         are judged at the recipe's gate of {} %, every commit at the smaller of that gate and \
         half of bad's change. {}",
        input.budget.max_points,
        input.budget.confirm_max_points,
        input.step_alpha * 100.0,
        input.params.gate_pct,
        match input.strategy {
            Strategy::Bayesian => format!(
                "The next commit splits a posterior over the first bad commit (each step taken \
                 as wrong with probability {:.0} %), and a commit is named only when it holds \
                 at least {:.0} % of it.",
                input.step_error * 100.0,
                (1.0 - input.alpha) * 100.0
            ),
            Strategy::Plain => {
                "The next commit halves the range, as git bisect does.".to_owned()
            }
        }
    );
    let _ = writeln!(
        out,
        "Error rate: in aba's simulator of synthetic histories (16 to 1,024 commits, a culprit \
         of 1 to 5 gates, boot-to-boot SD 0.3 to 3 %, within-boot CV 0.1 to 5 %), this search \
         named a wrong commit in at most {} of the bisections of any cell; when it cannot \
         decide it ends with a range or says that good and bad do not differ \
         (docs/bisect.md).",
        match input.strategy {
            Strategy::Bayesian => "0.5 %",
            Strategy::Plain => "3.1 %",
        }
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:>3}  {:<12}  {:<26}  {:>10}  {:<20}  {:>5}  subject",
        "#", "commit", "verdict", "vs good", "interval", "boots"
    );
    for (i, record) in bisection.records().iter().enumerate() {
        match record {
            Record::Step(step) => {
                let c = commits.get(step.commit);
                let _ = writeln!(
                    out,
                    "{:>3}  {:<12}  {:<26}  {:>10}  {:<20}  {:>5}  {}{}",
                    i + 1,
                    c.map_or("?", |c| short(&c.hash)),
                    verdict_words(step.verdict),
                    step.change_pct
                        .map_or_else(|| "-".to_owned(), |v| format!("{v:+.2} %")),
                    step.ci.map_or_else(
                        || "-".to_owned(),
                        |(lo, hi)| format!("[{lo:+.2}, {hi:+.2}] %")
                    ),
                    step.points,
                    if step.commit + 1 == commits.len() && i == 0 {
                        "(endpoints) "
                    } else {
                        ""
                    },
                    c.map_or_else(String::new, |c| crate::text::untrusted(&c.subject, 60)
                        .into_owned())
                );
            }
            Record::Skip { commit, why } => {
                let c = commits.get(*commit);
                let _ = writeln!(
                    out,
                    "{:>3}  {:<12}  {:<26}  {:>10}  {:<20}  {:>5}  {} ({})",
                    i + 1,
                    c.map_or("?", |c| short(&c.hash)),
                    "skipped",
                    "-",
                    "-",
                    "-",
                    c.map_or_else(String::new, |c| crate::text::untrusted(&c.subject, 60)
                        .into_owned()),
                    crate::text::untrusted(why, 200)
                );
            }
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Each step is a results directory under steps/ (`aba report steps/NN-…`); the table as \
         TSV: {TSV}; the decisions as git bisect commands: {GIT_LOG}."
    );
    out
}

/// A commit hash's first 12 digits (hashes are checked hex when a journal is read).
pub(crate) fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
