//! `bisect.tsv`: one row per decided step or skipped commit, in the order decided, for a
//! spreadsheet or a mail: the commit, its subject, its change against good with the interval,
//! the verdict, the boots it took, and the build's identity (its kernel version string).

use std::fmt::Write as _;

use super::{journal::Entry, range::RangeCommit};
use crate::{
    bisect::{Record, StepVerdict},
    report::number::tsv,
};

/// The header row.
pub const HEADER: &str =
    "commit\tsubject\tchange_vs_good_pct\tci_low_pct\tci_high_pct\tverdict\tboots\tbuild\tnote";

/// The table for the line `commits`, the journal's `built` entries and its decided `records`.
#[must_use]
pub fn render(commits: &[RangeCommit], built: &[Entry], records: &[Record]) -> String {
    let mut out = format!("{HEADER}\n");
    let cell = |text: &str| crate::text::one_line(text).into_owned();
    let build_of = |index: usize| {
        built
            .iter()
            .rev()
            .find_map(|entry| match entry {
                Entry::Built {
                    commit, version, ..
                } if *commit == index => Some(version.clone().unwrap_or_else(|| "built".into())),
                _ => None,
            })
            .unwrap_or_else(|| "-".into())
    };
    let named = |index: usize| -> (String, String) {
        commits.get(index).map_or_else(
            || (format!("#{index}"), "-".into()),
            |c| (c.hash.clone(), cell(&c.subject)),
        )
    };
    let last = commits.len().saturating_sub(1);
    for record in records {
        let (hash, subject) = match record {
            Record::Skip { commit, .. } => named(*commit),
            Record::Step(step) => named(step.commit),
        };
        match record {
            Record::Skip { commit, why } => {
                let _ = writeln!(
                    out,
                    "{hash}\t{subject}\t-\t-\t-\tskip\t-\t{}\t{}",
                    cell(&build_of(*commit)),
                    cell(why)
                );
            }
            Record::Step(step) => {
                let verdict = match step.verdict {
                    StepVerdict::Good => "good",
                    StepVerdict::Bad => "bad",
                    StepVerdict::Between => "between",
                    StepVerdict::Undecided => "undecided",
                    StepVerdict::Unstable => "unstable",
                };
                let note = if step.commit == last {
                    format!("endpoints' confirmation ({})", step.label)
                } else {
                    step.label.clone()
                };
                let _ = writeln!(
                    out,
                    "{hash}\t{subject}\t{}\t{}\t{}\t{verdict}\t{}\t{}\t{}",
                    tsv(step.change_pct),
                    tsv(step.ci.map(|c| c.0)),
                    tsv(step.ci.map(|c| c.1)),
                    step.points,
                    cell(&build_of(step.commit)),
                    cell(&note)
                );
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
        session::bisect::{journal::Entry, range::RangeCommit},
    };

    #[test]
    fn each_decided_step_and_skip_is_a_row_with_its_build() {
        let commits: Vec<RangeCommit> = (0..3)
            .map(|i| RangeCommit {
                hash: format!("h{i}"),
                subject: format!("s{i}\twith a tab"),
            })
            .collect();
        let built = [Entry::Built {
            commit: 2,
            hash: "h2".into(),
            image: "builds/h2/bzImage".into(),
            config: "builds/h2/config".into(),
            version: Some("6.1.192-aba-lab #3".into()),
        }];
        let records = [
            Record::Step(StepResult {
                commit: 2,
                verdict: StepVerdict::Bad,
                label: "SIGNAL".into(),
                change_pct: Some(10.5),
                ci: Some((8.0, 12.25)),
                points: 5,
            }),
            Record::Skip {
                commit: 1,
                why: "the build failed".into(),
            },
        ];
        let text = render(&commits, &built, &records);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[1],
            "h2\ts2\\twith a tab\t10.500000\t8.000000\t12.250000\tbad\t5\t6.1.192-aba-lab #3\t\
             endpoints' confirmation (SIGNAL)"
        );
        assert_eq!(
            rows[2],
            "h1\ts1\\twith a tab\t-\t-\t-\tskip\t-\t-\tthe build failed"
        );
    }
}
