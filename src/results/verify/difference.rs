//! What the verification reports: each difference between the journal and `samples.csv` in
//! words a reader can act on, and the runs and indices named the same way in all of them.

use std::fmt;

use crate::results::samples::Phase;

/// How many differences are listed one by one; the rest are counted.
const LISTED: usize = 20;

/// One difference between the journal and `samples.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// A journaled run lacks the row of one of its metrics.
    MissingRow {
        /// Which run.
        run: String,
        /// The metric without a row.
        metric: String,
    },
    /// A run's metric has more than one row.
    DuplicateRow {
        /// Which run.
        run: String,
        /// The metric.
        metric: String,
        /// How many rows.
        rows: u32,
    },
    /// A row that no journaled run accounts for.
    RowWithoutRun {
        /// Line in samples.csv.
        line: u64,
        /// Which run the row claims to be.
        run: String,
    },
    /// A run journaled twice.
    RunJournaledTwice {
        /// Which run.
        run: String,
    },
    /// A journaled run of an attempt that was never started.
    RunWithoutAttempt {
        /// Which run.
        run: String,
    },
    /// A row whose status is not what the journal recorded for its run.
    StatusDiffers {
        /// Line in samples.csv.
        line: u64,
        /// Which run.
        run: String,
        /// The row's status.
        row: String,
        /// The journal's.
        journal: String,
    },
    /// A row whose metric the workload does not have, or whose workload the recipe lacks.
    UnknownSeries {
        /// Line in samples.csv.
        line: u64,
        /// What the row names.
        what: String,
    },
    /// A row whose kernel or order is not its point's.
    WrongPoint {
        /// Line in samples.csv.
        line: u64,
        /// What differs.
        what: String,
    },
    /// A valid row whose release or boot_id is not the one its attempt proved.
    WrongBoot {
        /// Line in samples.csv.
        line: u64,
        /// Point and attempt.
        attempt: String,
        /// What the row says.
        row: String,
        /// What the proof said.
        proven: String,
    },
    /// A finished point without exactly its warm-ups and samples for a case and metric.
    WrongCount {
        /// Point and attempt.
        attempt: String,
        /// Series and phase.
        series: String,
        /// Valid rows found, by index.
        found: String,
        /// How many there must be.
        expected: u32,
    },
    /// A finished point whose proof is missing.
    Unproven {
        /// Point and attempt.
        attempt: String,
    },
    /// A row whose value is not the one journaled with its run.
    ValueDiffers {
        /// Line in samples.csv.
        line: u64,
        /// Which run.
        run: String,
        /// The metric.
        metric: String,
        /// The row's value (empty: none).
        row: String,
        /// The journal's.
        journal: String,
    },
    /// The hash chain of samples.csv's rows up to a run's last row is not the one journaled
    /// with the run: bytes in or before its rows were edited, added or removed.
    ChainDiffers {
        /// First line the difference can lie on (after the last run whose chain agreed).
        from: u64,
        /// The run's last row.
        line: u64,
        /// Which run.
        run: String,
    },
    /// Output a done attempt kept as evidence (a probe's, a passing check's) is missing,
    /// unreadable or not the bytes journaled with it.
    KeptOutput {
        /// `point `b` attempt 1`.
        attempt: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::MissingRow { run, metric } => write!(
                f,
                "the journal records run {run}, but samples.csv has no row for its metric `{metric}`"
            ),
            Difference::DuplicateRow { run, metric, rows } => {
                write!(
                    f,
                    "run {run} has {rows} rows for metric `{metric}`; one expected"
                )
            }
            Difference::RowWithoutRun { line, run } => write!(
                f,
                "samples.csv line {line} ({run}) belongs to no run in the journal"
            ),
            Difference::RunJournaledTwice { run } => write!(f, "run {run} is journaled twice"),
            Difference::RunWithoutAttempt { run } => write!(
                f,
                "run {run} is journaled but its point attempt never started"
            ),
            Difference::StatusDiffers {
                line,
                run,
                row,
                journal,
            } => write!(
                f,
                "samples.csv line {line} ({run}) says `{row}`, the journal says `{journal}`"
            ),
            Difference::UnknownSeries { line, what } => {
                write!(f, "samples.csv line {line}: {what}")
            }
            Difference::WrongPoint { line, what } => write!(f, "samples.csv line {line}: {what}"),
            Difference::WrongBoot {
                line,
                attempt,
                row,
                proven,
            } => write!(
                f,
                "samples.csv line {line} ({attempt}) is labelled {row}, but the attempt proved {proven}"
            ),
            Difference::WrongCount {
                attempt,
                series,
                found,
                expected,
            } => write!(
                f,
                "{attempt} is done, but {series} has valid rows {found}; exactly {expected} expected (indices 1..={expected}, once each)"
            ),
            Difference::ValueDiffers {
                line,
                run,
                metric,
                row,
                journal,
            } => write!(
                f,
                "samples.csv line {line} ({run}) has `{metric}` = {}, the journal recorded {}",
                value_text(row),
                value_text(journal)
            ),
            Difference::ChainDiffers { from, line, run } => write!(
                f,
                "samples.csv lines {from}-{line} are not the bytes journaled with run {run} (the hash chain of its rows differs): a row was edited, added or removed there"
            ),
            Difference::KeptOutput { attempt, reason } => {
                write!(f, "the kept output of {attempt}: {reason}")
            }
            Difference::Unproven { attempt } => {
                write!(
                    f,
                    "{attempt} is done, but the journal holds no proof of its boot"
                )
            }
        }
    }
}

/// A value as a difference names it: the number, or `no value`.
fn value_text(value: &str) -> String {
    if value.is_empty() {
        "no value".to_owned()
    } else {
        value.to_owned()
    }
}

/// What the check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verification {
    /// Every difference, in the order found.
    pub differences: Vec<Difference>,
    /// Journaled runs checked.
    pub runs: u64,
    /// Rows checked.
    pub rows: u64,
    /// Rows of an unfinished attempt written just before the runner was killed, before their
    /// journal record: expected after a kill, never counted.
    pub unjournaled_tail_rows: u64,
    /// Journaled runs without their values and row hashes (written by an older aba): their
    /// rows are checked as to which run they belong to, not value by value.
    pub runs_without_values: u64,
}

impl Verification {
    /// No difference.
    pub fn is_clean(&self) -> bool {
        self.differences.is_empty()
    }

    /// The differences as a list for a message: the first [`LISTED`] and a count of the rest.
    pub fn describe(&self) -> String {
        let mut text = self
            .differences
            .iter()
            .take(LISTED)
            .map(|d| format!("  - {d}"))
            .collect::<Vec<_>>()
            .join("\n");
        if self.differences.len() > LISTED {
            text.push_str(&format!(
                "\n  … and {} more difference(s)",
                self.differences.len() - LISTED
            ));
        }
        text
    }
}

/// `[1, 2, 3, 5]` as `1-3, 5` (or `none`).
pub(super) fn index_list(indices: &[u32]) -> String {
    if indices.is_empty() {
        return "none".to_owned();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut start = indices[0];
    let mut prev = indices[0];
    for &i in &indices[1..] {
        if i == prev + 1 {
            prev = i;
            continue;
        }
        parts.push(range(start, prev));
        start = i;
        prev = i;
    }
    parts.push(range(start, prev));
    parts.join(", ")
}

fn range(a: u32, b: u32) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

pub(super) fn run_name(
    point: &str,
    attempt: u32,
    workload: &str,
    case: &str,
    phase: Phase,
    index: u32,
    retry: u32,
) -> String {
    let case = if case.is_empty() {
        String::new()
    } else {
        format!("[{case}]")
    };
    let retry = if retry == 0 {
        String::new()
    } else {
        format!(" retry {retry}")
    };
    format!(
        "`{point}` attempt {attempt} {workload}{case} {} {index}{retry}",
        phase.as_str()
    )
}
