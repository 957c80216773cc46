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
        if let Some(found) = in_step(recipe, &table, journal_path, bytes)? {
            return Ok(found);
        }
    }
    full_check(
        recipe,
        &table,
        journal_path,
        samples_path,
        scope,
        has_samples,
    )
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
    let found = match found {
        Some(found) => found,
        None => full_check(recipe, &table, journal_path, samples_path, Scope::All, true).ok()?,
    };
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

impl Checker<'_> {
    /// The check, once every run is journaled in the checker: `events` are the non-sample
    /// records in order; the hash chain is checked when `bytes` are given.
    fn finish(
        mut self,
        events: &[Event],
        scope: Scope<'_>,
        bytes: Option<RowBytes<'_>>,
    ) -> Result<Verification, VerifyError> {
        if let Scope::Attempt {
            point,
            attempt,
            appended,
            ..
        } = scope
        {
            let key = (self.sym(point), attempt);
            self.attempts.insert(key, Attempt::new(Outcome::Done));
            self.appended(appended);
        }
        let history = History::of(events);
        self.appended(&history.campaign.appended);
        self.attempts_from(&history);
        self.runs_of_started_attempts();
        for row in &self.table.rows {
            self.row(row);
        }
        self.stray_rows();
        self.rows_of_every_run();
        self.finished_attempts();
        if let Some(bytes) = bytes {
            self.chain(bytes)?;
        }
        Ok(self.found)
    }
}

/// What the journal recorded of one run, in a few words: a million runs are held at once.
#[derive(Debug)]
struct Journaled {
    status: Status,
    /// Where its (metric, value) pairs are in [`Checker::values`]: (start, count); `None` for
    /// a run an older aba journaled.
    values: Option<(u32, u32)>,
    /// Its link's index in [`Checker::links`], when journaled.
    link: Option<u32>,
    /// Line of its last row (0: none yet).
    last_row: u64,
}

/// The state of one check.
struct Checker<'a> {
    recipe: &'a Recipe,
    table: &'a SampleTable,
    symbols: HashMap<&'a str, Sym>,
    /// Strings of the journal that no row uses, with symbols past the table's.
    extra: HashMap<String, Sym>,
    /// Point label -> (order, kernel), from the recipe.
    points: HashMap<String, (usize, String)>,
    attempts: HashMap<(Sym, u32), Attempt>,
    journaled: HashMap<RunKey, Journaled>,
    /// Every run's journaled (metric, value) pairs, one after the other.
    values: Vec<(Sym, f64)>,
    /// Every run's journaled link (`None`: not a link).
    links: Vec<Option<Link>>,
    run_order: Vec<RunKey>,
    rows_of: HashMap<(RunKey, Sym), u32>,
    valid: HashMap<SeriesKey, Vec<u32>>,
    found: Verification,
}

impl<'a> Checker<'a> {
    fn new(recipe: &'a Recipe, table: &'a SampleTable) -> Self {
        let symbols = table
            .strings
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((s.as_str(), Sym::try_from(i).ok()?)))
            .collect();
        let points = point_labels(&recipe.sequence)
            .into_iter()
            .zip(&recipe.sequence)
            .enumerate()
            .map(|(i, (l, k))| (l, (i + 1, k.to_string())))
            .collect();
        Checker {
            recipe,
            table,
            symbols,
            extra: HashMap::new(),
            points,
            attempts: HashMap::new(),
            journaled: HashMap::new(),
            values: Vec::new(),
            links: Vec::new(),
            run_order: Vec::new(),
            rows_of: HashMap::new(),
            valid: HashMap::new(),
            found: Verification::default(),
        }
    }

    /// Points an extended campaign appended belong to the campaign as the recipe's do.
    fn appended(&mut self, points: &[AppendedPoint]) {
        for p in points {
            self.points
                .insert(p.label.clone(), (p.order, p.kernel.clone()));
        }
    }

    fn sym(&mut self, text: &str) -> Sym {
        if let Some(&s) = self.symbols.get(text) {
            return s;
        }
        let next = Sym::try_from(self.table.strings.len() + self.extra.len()).unwrap_or(Sym::MAX);
        *self.extra.entry(text.to_owned()).or_insert(next)
    }

    fn name(&self, s: Sym) -> String {
        self.table
            .strings
            .get(s as usize)
            .cloned()
            .unwrap_or_else(|| {
                self.extra
                    .iter()
                    .find(|(_, v)| **v == s)
                    .map(|(k, _)| k.clone())
                    .unwrap_or_default()
            })
    }

    fn differ(&mut self, difference: Difference) {
        self.found.differences.push(difference);
    }

    /// Attempts and their outcomes, from the non-sample records: an attempt counts from its
    /// first start on (the attempt checked as done, from the first record read), and only
    /// what came after that is its boot and its end.
    fn attempts_from(&mut self, history: &History) {
        for h in &history.attempts {
            let key = (self.sym(&h.point), h.attempt);
            let since = if self.attempts.contains_key(&key) {
                None
            } else if let Some(&start) = h.starts.first() {
                Some(start)
            } else {
                continue;
            };
            let (boot, end) = h.after(since);
            let a = self
                .attempts
                .entry(key)
                .or_insert_with(|| Attempt::new(Outcome::Open));
            if let Some(boot) = boot {
                a.boot = Some((boot.release.clone(), boot.boot_id.clone()));
            }
            match end {
                Some(End::Done { .. }) => a.outcome = Outcome::Done,
                Some(End::Failed { .. } | End::Discarded) => a.outcome = Outcome::NotCounted,
                None => {}
            }
        }
    }

    /// The journaled runs, each once, of an attempt that started.
    fn journaled_run(&mut self, run: &RunRecord<'_>) {
        let values = run.values.as_ref().map(|values| {
            let start = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
            for (metric, value) in values {
                let metric = self.sym(metric);
                self.values.push((metric, *value));
            }
            (start, u32::try_from(values.len()).unwrap_or(u32::MAX))
        });
        if values.is_none() {
            self.found.runs_without_values += 1;
        }
        let link = run.rows_sha256.map(|hex| {
            self.links.push(parse_link(hex));
            u32::try_from(self.links.len() - 1).unwrap_or(u32::MAX)
        });
        let journaled = Journaled {
            status: run.status,
            values,
            link,
            last_row: 0,
        };
        let key = (
            self.sym(run.point),
            run.attempt,
            self.sym(run.workload),
            self.sym(run.case),
            run.phase,
            run.index,
            run.retry,
        );
        self.found.runs += 1;
        if self.journaled.insert(key, journaled).is_some() {
            let run = self.run_key_name(key);
            self.differ(Difference::RunJournaledTwice { run });
        } else {
            self.run_order.push(key);
        }
    }

    /// Every journaled run belongs to an attempt that started (known once every record is
    /// read: the runs are checked as they stream by).
    fn runs_of_started_attempts(&mut self) {
        let orphans: Vec<RunKey> = self
            .run_order
            .iter()
            .filter(|k| !self.attempts.contains_key(&(k.0, k.1)))
            .copied()
            .collect();
        for key in orphans {
            let run = self.run_key_name(key);
            self.differ(Difference::RunWithoutAttempt { run });
        }
    }

    fn run_of_row(&self, row: &Row) -> String {
        let t = self.table;
        run_name(
            t.text(row.point),
            row.attempt,
            t.text(row.workload),
            t.text(row.case),
            row.phase,
            row.index,
            row.retry,
        )
    }

    /// One row: its point and metric exist, its run is journaled with its status, and a
    /// valid row carries its attempt's proven boot.
    fn row(&mut self, row: &Row) {
        self.found.rows += 1;
        self.row_belongs_to_the_recipe(row);
        let key: RunKey = (
            row.point,
            row.attempt,
            row.workload,
            row.case,
            row.phase,
            row.index,
            row.retry,
        );
        *self.rows_of.entry((key, row.metric)).or_insert(0) += 1;
        let values = &self.values;
        let journaled = self.journaled.get_mut(&key).map(|j| {
            let value = j.values.map(|(start, count)| {
                values[start as usize..][..count as usize]
                    .iter()
                    .find(|(metric, _)| *metric == row.metric)
                    .map(|(_, v)| *v)
            });
            if j.link.is_some() {
                j.last_row = row.line;
            }
            (j.status, value)
        });
        let run = self.run_of_row(row);
        let Some(attempt) = self.attempts.get_mut(&(row.point, row.attempt)) else {
            self.differ(Difference::RowWithoutRun {
                line: row.line,
                run,
            });
            return;
        };
        let Some((status, value)) = journaled else {
            attempt.unjournaled.push((row.line, key, run));
            return;
        };
        attempt.last_journaled_line = row.line;
        let outcome = attempt.outcome;
        let boot = attempt.boot.clone();
        // Rows rewritten as `discarded` by aba 0.1 belong to attempts that do not count; the
        // journal still says what the run was.
        let legacy_discard = row.status == Status::Discarded && outcome != Outcome::Done;
        if row.status != status && !legacy_discard {
            self.differ(Difference::StatusDiffers {
                line: row.line,
                run: run.clone(),
                row: row.status.as_str().to_owned(),
                journal: status.as_str().to_owned(),
            });
        }
        if let Some(journal) = value
            && journal != row.value
        {
            let text = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            self.differ(Difference::ValueDiffers {
                line: row.line,
                run,
                metric: self.table.text(row.metric).to_owned(),
                row: text(row.value),
                journal: text(journal),
            });
        }
        if outcome == Outcome::Done && row.status == Status::Ok {
            self.valid_row(row, boot.as_ref());
        }
    }

    /// Recomputes the hash chain over `bytes` and compares it with every journaled link at
    /// its run's last row; the first link that differs is reported (every later one differs
    /// with it).
    fn chain(&mut self, bytes: RowBytes<'_>) -> Result<(), VerifyError> {
        let expected: BTreeMap<u64, (RunKey, Option<Link>)> = self
            .journaled
            .iter()
            .filter(|(_, j)| j.last_row > 0)
            .filter_map(|(key, j)| {
                let link = *self.links.get(j.link? as usize)?;
                Some((j.last_row, (*key, link)))
            })
            .collect();
        if expected.is_empty() {
            return Ok(());
        }
        let mut agreed_to = 1;
        let mut broken: Option<(u64, u64, RunKey)> = None;
        bytes.feed(&mut RowChain::default(), |line, link| {
            if broken.is_some() {
                return;
            }
            if let Some((key, journaled)) = expected.get(&line) {
                if journaled.as_ref() == Some(link) {
                    agreed_to = line;
                } else {
                    broken = Some((agreed_to + 1, line, *key));
                }
            }
        })?;
        if let Some((from, line, key)) = broken {
            let run = self.run_key_name(key);
            self.differ(Difference::ChainDiffers { from, line, run });
        }
        Ok(())
    }

    fn run_key_name(&self, key: RunKey) -> String {
        run_name(
            &self.name(key.0),
            key.1,
            &self.name(key.2),
            &self.name(key.3),
            key.4,
            key.5,
            key.6,
        )
    }

    fn row_belongs_to_the_recipe(&mut self, row: &Row) {
        let t = self.table;
        let point = t.text(row.point);
        let wrong = match self.points.get(point) {
            Some((order, kernel))
                if *order == row.order as usize && kernel == t.text(row.kernel) =>
            {
                None
            }
            Some((order, kernel)) => Some(format!(
                "point `{point}` is order {order}, kernel `{kernel}`; the row says order {}, kernel `{}`",
                row.order,
                t.text(row.kernel)
            )),
            None => Some(format!("the recipe has no point `{point}`")),
        };
        if let Some(what) = wrong {
            self.differ(Difference::WrongPoint {
                line: row.line,
                what,
            });
        }
        let known_metric = self
            .recipe
            .workloads
            .iter()
            .find(|w| w.name.as_str() == t.text(row.workload))
            .is_some_and(|w| {
                w.metrics
                    .iter()
                    .any(|m| m.name.as_str() == t.text(row.metric))
            });
        if !known_metric {
            self.differ(Difference::UnknownSeries {
                line: row.line,
                what: format!(
                    "workload `{}` has no metric `{}` in the recipe",
                    t.text(row.workload),
                    t.text(row.metric)
                ),
            });
        }
    }

    fn valid_row(&mut self, row: &Row, proven: Option<&(String, String)>) {
        let t = self.table;
        let labelled = (t.text(row.release), t.text(row.boot_id));
        if let Some(proven) = proven
            && (proven.0.as_str(), proven.1.as_str()) != labelled
        {
            self.differ(Difference::WrongBoot {
                line: row.line,
                attempt: format!("point `{}` attempt {}", t.text(row.point), row.attempt),
                row: format!("release {} boot_id {}", labelled.0, labelled.1),
                proven: format!("release {} boot_id {}", proven.0, proven.1),
            });
        }
        self.valid
            .entry((
                row.point,
                row.attempt,
                row.workload,
                row.case,
                row.metric,
                row.phase,
            ))
            .or_default()
            .push(row.index);
    }

    /// Rows without a journaled run: one run's rows at the very end of an unfinished attempt
    /// are what a runner killed between the two writes leaves; anything else is a difference.
    fn stray_rows(&mut self) {
        let mut stray: Vec<(u64, String)> = Vec::new();
        for attempt in self.attempts.values() {
            let Some(&(first, key, _)) = attempt.unjournaled.first() else {
                continue;
            };
            let tail = attempt.outcome != Outcome::Done
                && first > attempt.last_journaled_line
                && attempt.unjournaled.iter().all(|(_, k, _)| *k == key);
            if tail {
                self.found.unjournaled_tail_rows += attempt.unjournaled.len() as u64;
            } else {
                stray.extend(attempt.unjournaled.iter().map(|(l, _, r)| (*l, r.clone())));
            }
        }
        stray.sort();
        for (line, run) in stray {
            self.differ(Difference::RowWithoutRun { line, run });
        }
    }

    /// Every journaled run has exactly one row per metric of its workload.
    fn rows_of_every_run(&mut self) {
        for key in std::mem::take(&mut self.run_order) {
            let workload_name = self.name(key.2);
            let Some(workload) = self
                .recipe
                .workloads
                .iter()
                .find(|w| w.name.as_str() == workload_name)
            else {
                continue;
            };
            for metric in &workload.metrics {
                let rows = self
                    .symbols
                    .get(metric.name.as_str())
                    .and_then(|&m| self.rows_of.get(&(key, m)))
                    .copied()
                    .unwrap_or(0);
                if rows == 1 {
                    continue;
                }
                let run = run_name(
                    &self.name(key.0),
                    key.1,
                    &workload_name,
                    &self.name(key.3),
                    key.4,
                    key.5,
                    key.6,
                );
                let metric = metric.name.to_string();
                self.differ(if rows == 0 {
                    Difference::MissingRow { run, metric }
                } else {
                    Difference::DuplicateRow { run, metric, rows }
                });
            }
        }
    }

    /// Every done attempt is proven and has exactly its warm-ups and samples per case and
    /// metric, indices 1..n once each.
    fn finished_attempts(&mut self) {
        let mut done: Vec<((Sym, u32), bool)> = self
            .attempts
            .iter()
            .filter(|(_, a)| a.outcome == Outcome::Done)
            .map(|(k, a)| (*k, a.boot.is_some()))
            .collect();
        done.sort_by_key(|((p, a), _)| (self.name(*p), *a));
        for ((point, attempt), proven) in done {
            let label = format!("point `{}` attempt {attempt}", self.name(point));
            if !proven {
                self.differ(Difference::Unproven {
                    attempt: label.clone(),
                });
            }
            for workload in &self.recipe.workloads {
                for case in workload.cases() {
                    for metric in &workload.metrics {
                        for (phase, expected) in [
                            (Phase::Warmup, workload.warmup),
                            (Phase::Sample, workload.samples),
                        ] {
                            let series = (
                                self.symbols.get(workload.name.as_str()),
                                self.symbols.get(case.name.as_str()),
                                self.symbols.get(metric.name.as_str()),
                            );
                            let mut indices = match series {
                                (Some(&w), Some(&c), Some(&m)) => self
                                    .valid
                                    .get(&(point, attempt, w, c, m, phase))
                                    .cloned()
                                    .unwrap_or_default(),
                                _ => Vec::new(),
                            };
                            indices.sort_unstable();
                            let exact = indices.len() == expected as usize
                                && indices.iter().zip(1..).all(|(&i, want)| i == want);
                            if exact {
                                continue;
                            }
                            let case_part = if case.name.is_empty() {
                                String::new()
                            } else {
                                format!("[{}]", case.name)
                            };
                            self.found.differences.push(Difference::WrongCount {
                                attempt: label.clone(),
                                series: format!(
                                    "{}{case_part} metric `{}` ({})",
                                    workload.name,
                                    metric.name,
                                    phase.as_str()
                                ),
                                found: index_list(&indices),
                                expected,
                            });
                        }
                    }
                }
            }
        }
    }
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
