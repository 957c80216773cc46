//! The cross-check of `journal.jsonl` against `samples.csv`: every journaled run has exactly
//! its rows, no row exists without a journaled run, every finished point has exactly its
//! warm-ups and samples per case and metric, and every valid row carries the release and
//! `boot_id` its attempt proved.
//!
//! aba's promise is that no sample is ever lost or mislabelled. The two files are written one
//! after the other, so each can witness the other: a row written to the wrong place, a rewrite
//! that lost rows, or a row attributed to the wrong boot shows up here as a difference. The
//! engine runs this check for each point before journaling it done and for the whole
//! directory at the end; `aba verify DIR` runs it on demand.
//!
//! A whole directory is first walked side by side ([`lockstep`]): the journal's runs against
//! the table's rows in the order aba wrote them, the hash chain on a second thread, holding
//! nothing per run. Only a directory that walk cannot vouch for gets the full check, which
//! streams the journal and keeps one small key per run and per row (linear in the size of the
//! files) and names every difference at its line.

mod checker;
mod difference;
mod lockstep;
#[cfg(test)]
mod tests;

pub use difference::{Difference, Verification};

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

use thiserror::Error;

use crate::{
    recipe::{Recipe, resolved::point_labels},
    results::{
        journal::{
            AppendedPoint, End, Event, History, Journal, JournalError, RunRecord,
            visit_runs_for_analysis, visit_runs_from,
        },
        row_chain::{Link, RowChain, parse_link},
        samples::{Phase, Row, SampleTable, SamplesError, Status, Sym, open_complete},
    },
};
use checker::Checker;
use difference::{index_list, run_name};

/// Why the check could not be made at all.
#[derive(Debug, Error)]
pub enum VerifyError {
    /// The journal could not be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// `samples.csv` could not be read.
    #[error(transparent)]
    Samples(#[from] SamplesError),
}

/// What part of a campaign is checked.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    /// The whole directory.
    All,
    /// One attempt that is about to be journaled done: the journal and `samples.csv` are read
    /// from the lengths they had when the attempt started, and the attempt is checked as done.
    Attempt {
        /// Point label.
        point: &'a str,
        /// Attempt.
        attempt: u32,
        /// Journal length when the attempt started.
        journal_offset: u64,
        /// `samples.csv` length when the attempt started.
        samples_offset: u64,
        /// Lines of `samples.csv` then (the header included), for line numbers.
        samples_lines: u64,
        /// The points an extended campaign appended before this attempt: their `look`
        /// records lie before `journal_offset`.
        appended: &'a [AppendedPoint],
    },
}

/// The outcome of an attempt, as far as the check needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Open,
    Done,
    NotCounted,
}

#[derive(Debug)]
struct Attempt {
    outcome: Outcome,
    boot: Option<(String, String)>,
    /// Line of the last row that belongs to a journaled run.
    last_journaled_line: u64,
    /// Rows without a journaled run: (line, run, description). Allowed only as the tail of an
    /// attempt that never finished, all of one run (the runner died between the two writes).
    unjournaled: Vec<(u64, RunKey, String)>,
}

impl Attempt {
    fn new(outcome: Outcome) -> Attempt {
        Attempt {
            outcome,
            boot: None,
            last_journaled_line: 0,
            unjournaled: Vec::new(),
        }
    }
}

/// One run: (point, attempt, workload, case, phase, index, retry), interned.
type RunKey = (Sym, u32, Sym, Sym, Phase, u32, u32);

/// Checks `scope` of the results in `journal_path` and `samples_path` against `recipe`.
pub fn verify(
    recipe: &Recipe,
    journal_path: &Path,
    samples_path: &Path,
    scope: Scope<'_>,
) -> Result<Verification, VerifyError> {
    let (samples_offset, samples_lines) = match scope {
        Scope::All => (0, 0),
        Scope::Attempt {
            samples_offset,
            samples_lines,
            ..
        } => (samples_offset, samples_lines),
    };
    // No samples.csv is a campaign before its first row; anything else at that name (a link,
    // a FIFO, a directory) is read, and refused with its reason.
    let has_samples = !matches!(
        std::fs::symlink_metadata(samples_path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound
    );
    let table = if has_samples {
        SampleTable::read_from(samples_path, samples_offset, samples_lines)?
    } else {
        SampleTable::default()
    };
    if let Scope::All = scope {
        let bytes = has_samples.then_some(RowBytes::File(samples_path));
        if let Some(mut found) = in_step(recipe, &table, journal_path, bytes)? {
            found.differences.extend(kept_output(recipe, journal_path)?);
            return Ok(found);
        }
    }
    let mut found = full_check(
        recipe,
        &table,
        journal_path,
        samples_path,
        scope,
        has_samples,
    )?;
    if let Scope::All = scope {
        found.differences.extend(kept_output(recipe, journal_path)?);
    }
    Ok(found)
}

/// The output the done attempts kept as evidence (`probes/`, `checks/`), each file against
/// the SHA-256 journaled with it ([`crate::results::kept::check`]). Read only when the
/// recipe has probes or checks: the journal is read once more, its plain runs skipped.
fn kept_output(recipe: &Recipe, journal_path: &Path) -> Result<Vec<Difference>, VerifyError> {
    if recipe.probes.is_empty() && !recipe.workloads.iter().any(|w| w.is_check()) {
        return Ok(Vec::new());
    }
    let root = journal_path.parent().unwrap_or(Path::new("."));
    let history = Journal::read_for_analysis(journal_path)?.history();
    let mut differences = Vec::new();
    for attempt in &history.attempts {
        if !matches!(attempt.end(), Some(End::Done { .. })) {
            continue;
        }
        for kept in attempt.kept_files() {
            if let Err(e) = crate::results::kept::check(root, kept) {
                differences.push(Difference::KeptOutput {
                    attempt: format!(
                        "point `{}` attempt {}",
                        crate::text::untrusted(&attempt.point, 80),
                        attempt.attempt
                    ),
                    reason: crate::causes::one_line(&e),
                });
            }
        }
    }
    Ok(differences)
}

/// The check that names every difference: the journal's runs kept as interned keys, then
/// every row looked up among them.
fn full_check(
    recipe: &Recipe,
    table: &SampleTable,
    journal_path: &Path,
    samples_path: &Path,
    scope: Scope<'_>,
    has_samples: bool,
) -> Result<Verification, VerifyError> {
    let journal_offset = match scope {
        Scope::All => 0,
        Scope::Attempt { journal_offset, .. } => journal_offset,
    };
    let mut checker = Checker::new(recipe, table);
    let mut events = Vec::new();
    // Runs are kept as interned keys as they stream by, never as records.
    visit_runs_from(
        journal_path,
        journal_offset,
        |run| checker.journaled_run(run),
        |event| events.push(event),
    )?;
    // A tail read from an offset lacks the chain's start: an attempt's rows are checked value
    // by value, the whole file's also by the chain.
    let bytes = match scope {
        Scope::All if has_samples => Some(RowBytes::File(samples_path)),
        _ => None,
    };
    checker.finish(&events, scope, bytes)
}

/// The check of a whole directory that agrees with its journal, made side by side
/// ([`lockstep`]): the journal streamed against `table`'s rows, the hash chain over `bytes`
/// on a second thread. `None` when it cannot vouch for the directory: the full check then
/// reads it again and names the differences.
fn in_step(
    recipe: &Recipe,
    table: &SampleTable,
    journal_path: &Path,
    bytes: Option<RowBytes<'_>>,
) -> Result<Option<Verification>, VerifyError> {
    std::thread::scope(|scope| {
        let links = match bytes {
            Some(bytes) => {
                let (to, links) = lockstep::Links::channel();
                scope.spawn(move || bytes.send_links(&to));
                Some(links)
            }
            None => None,
        };
        let mut walk = lockstep::Walk::new(recipe, lockstep::Rows::Held(table), links);
        let mut events = Vec::new();
        visit_runs_from(
            journal_path,
            0,
            |run| walk.run(run),
            |event| events.push(event),
        )?;
        Ok(walk.finish(&events))
    })
}

/// A whole directory checked and read for its analysis at once ([`verify_and_read`]).
#[derive(Debug)]
pub struct Checked {
    /// The check's outcome, the same as [`verify`] with [`Scope::All`].
    pub found: Verification,
    /// The journal as [`Journal::read_for_analysis`] reads it.
    pub journal: Journal,
    /// `samples.csv` as [`SampleTable::read`] reads it.
    pub table: SampleTable,
}

/// `aba report`'s reading of a whole directory: the check of [`verify`] and the two files as
/// the analysis reads them, each file read once. `samples.csv` is parsed on one thread and
/// hashed on another while the journal is streamed against its rows as they arrive
/// ([`lockstep`]); a directory the walk cannot vouch for gets the full check over the table
/// read. `None` when either file cannot be read so: the caller then reads them apart, as
/// before, and reports what is wrong in its own words.
#[must_use]
pub fn verify_and_read(
    recipe: &Recipe,
    journal_path: &Path,
    samples_path: &Path,
) -> Option<Checked> {
    let (found, journal, table) = std::thread::scope(|scope| {
        let (rows_to, rows_from) = std::sync::mpsc::sync_channel(16);
        let parser = scope.spawn(move || {
            let rest = SampleTable::read_in_batches(samples_path, |batch| {
                let _ = rows_to.send(batch);
            })?;
            let _ = rows_to.send(rest);
            Ok::<_, SamplesError>(())
        });
        let (to, links) = lockstep::Links::channel();
        scope.spawn(move || RowBytes::File(samples_path).send_links(&to));
        let rows = lockstep::Rows::Arriving {
            table: SampleTable::default(),
            from: rows_from,
        };
        let mut walk = lockstep::Walk::new(recipe, rows, Some(links));
        let read = visit_runs_for_analysis(journal_path, |run| walk.run(run));
        let found = match &read {
            Ok((_, others)) => walk.finish(others),
            Err(_) => None,
        };
        let lockstep::Rows::Arriving { table, .. } = walk.into_rows() else {
            return None;
        };
        let parsed = parser
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let (journal, _) = read.ok()?;
        parsed.ok()?;
        Some((found, journal, table))
    })?;
    let mut found = match found {
        Some(found) => found,
        None => full_check(recipe, &table, journal_path, samples_path, Scope::All, true).ok()?,
    };
    found
        .differences
        .extend(kept_output(recipe, journal_path).ok()?);
    Some(Checked {
        found,
        journal,
        table,
    })
}

/// Where the check reads `samples.csv`'s bytes to hash them.
#[derive(Clone, Copy, Debug)]
enum RowBytes<'a> {
    /// The file.
    File(&'a Path),
    /// Tests: its content.
    #[cfg(test)]
    Memory(&'a [u8]),
}

impl RowBytes<'_> {
    /// Hashes the complete records and sends their links to `to` ([`lockstep::hash_rows`]);
    /// a file that cannot be opened sends nothing, and the walk gives up.
    fn send_links(self, to: &std::sync::mpsc::SyncSender<lockstep::Message>) {
        match self {
            RowBytes::File(path) => {
                if let Ok((complete, _)) = open_complete(path) {
                    lockstep::hash_rows(complete, to);
                }
            }
            #[cfg(test)]
            RowBytes::Memory(data) => {
                let end = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                lockstep::hash_rows(&data[..end], to);
            }
        }
    }

    /// Feeds the complete records to `chain`.
    fn feed(self, chain: &mut RowChain, at_end: impl FnMut(u64, &Link)) -> Result<(), VerifyError> {
        match self {
            RowBytes::File(path) => {
                let (complete, _) = open_complete(path)?;
                chain
                    .feed_reader(complete, at_end)
                    .map_err(|source| SamplesError::Io {
                        action: "read",
                        path: path.to_path_buf(),
                        source,
                    })?;
            }
            #[cfg(test)]
            RowBytes::Memory(data) => {
                let end = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                chain.feed(&data[..end], at_end);
            }
        }
        Ok(())
    }
}

/// One series at one attempt: (point, attempt, workload, case, metric, phase), interned.
type SeriesKey = (Sym, u32, Sym, Sym, Sym, Phase);

/// The check over records already read: `events` are the non-sample records in order,
/// `runs` the `sample` records in order; the hash chain is checked when `bytes` are given.
#[cfg(test)]
fn check(
    recipe: &Recipe,
    table: &SampleTable,
    events: &[Event],
    runs: &[Event],
    scope: Scope<'_>,
    bytes: Option<RowBytes<'_>>,
) -> Result<Verification, VerifyError> {
    let mut checker = Checker::new(recipe, table);
    for run in runs {
        if let Some(record) = RunRecord::of(run) {
            checker.journaled_run(&record);
        }
    }
    checker.finish(events, scope, bytes)
}

/// Rows per (point, attempt) in a table, for the journal's `point_discarded` record.
pub fn rows_per_attempt(table: &SampleTable) -> BTreeMap<(String, u32), u64> {
    let mut counts: BTreeMap<(String, u32), u64> = BTreeMap::new();
    for row in &table.rows {
        *counts
            .entry((table.text(row.point).to_owned(), row.attempt))
            .or_default() += 1;
    }
    counts
}
