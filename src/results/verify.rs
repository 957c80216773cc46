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
//! The check streams the journal and keeps one small key per run and per row, so it stays
//! linear in the size of the files.

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    path::Path,
};

use thiserror::Error;

use crate::{
    recipe::{Recipe, resolved::point_labels},
    results::{
        journal::{AppendedPoint, End, Event, History, JournalError, RunRecord, visit_runs_from},
        row_chain::{Link, RowChain, parse_link},
        samples::{Phase, Row, SampleTable, SamplesError, Status, Sym, open_complete},
    },
};

/// How many differences are listed one by one; the rest are counted.
const LISTED: usize = 20;

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
    let (journal_offset, samples_offset, samples_lines) = match scope {
        Scope::All => (0, 0, 0),
        Scope::Attempt {
            journal_offset,
            samples_offset,
            samples_lines,
            ..
        } => (journal_offset, samples_offset, samples_lines),
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
    let mut checker = Checker::new(recipe, &table);
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

/// `[1, 2, 3, 5]` as `1-3, 5` (or `none`).
fn index_list(indices: &[u32]) -> String {
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

fn run_name(
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

#[cfg(test)]
mod tests {
    use std::{fmt::Write as _, path::Path};

    use super::{Difference, RowBytes, Scope, check};
    use crate::{
        recipe::parse,
        results::{
            journal::Event,
            row_chain::RowChain,
            samples::{HEADER, Phase, SampleTable, Status},
        },
    };

    const RECIPE: &str = r#"
version = 1
name = "v"
description = "verification"
sequence = ["a", "b"]
warmup = 1
samples = 2
[kernels.a]
release = "ra"
[kernels.b]
release = "rb"
[[workload]]
name = "w"
run = "x"
metric = [
    { name = "m", number = true, better = "lower" },
]
"#;

    /// Journal records and CSV rows of a clean two-point campaign, each point done at
    /// attempt 1 with one warm-up and two samples.
    fn clean() -> (Vec<Event>, Vec<Event>, String) {
        let mut events = Vec::new();
        let mut runs = Vec::new();
        let mut csv = format!("{}\n", HEADER.join(","));
        for (order, (point, kernel)) in [("a", "a"), ("b", "b")].iter().enumerate() {
            events.push(Event::PointStarted {
                point: (*point).into(),
                attempt: 1,
                time: "t".into(),
            });
            events.push(Event::BootProven {
                point: (*point).into(),
                attempt: 1,
                boot_id: format!("id-{point}"),
                release: format!("r{kernel}"),
                cmdline: String::new(),
                switch_s: 0.0,
                login_s: 0.0,
                proof_s: None,
                proven_at: None,
            });
            for (phase, index) in [(Phase::Warmup, 1), (Phase::Sample, 1), (Phase::Sample, 2)] {
                runs.push(Event::Sample {
                    point: (*point).into(),
                    attempt: 1,
                    workload: "w".into(),
                    case: String::new(),
                    phase,
                    index,
                    retry: 0,
                    status: Status::Ok,
                    elapsed_s: 0.1,
                    error: None,
                    raw: None,
                    leftovers: Vec::new(),
                    dropped_bytes: None,
                    values: Some([("m".to_owned(), 1.5)].into()),
                    rows_sha256: None,
                });
                let _ = writeln!(
                    csv,
                    "{point},{},1,{kernel},r{kernel},id-{point},w,,m,{phase},{index},0,ok,1.5,ns,t",
                    order + 1
                );
            }
            events.push(Event::PointDone {
                point: (*point).into(),
                attempt: 1,
                dmesg_warnings: 0,
                failed_units: vec![],
                time: "t".into(),
            });
        }
        // Each run has one row, on lines 2, 3, …: its link is the chain's after that line.
        let mut links = Vec::new();
        RowChain::default().feed(csv.as_bytes(), |_, link| links.push(hex::encode(link)));
        for (run, link) in runs.iter_mut().zip(links.into_iter().skip(1)) {
            if let Event::Sample { rows_sha256, .. } = run {
                *rows_sha256 = Some(link);
            }
        }
        (events, runs, csv)
    }

    /// `runs` without their values and row hashes, as an aba older than them journaled runs.
    fn as_an_older_aba_journaled(mut runs: Vec<Event>) -> Vec<Event> {
        for run in &mut runs {
            if let Event::Sample {
                values,
                rows_sha256,
                ..
            } = run
            {
                *values = None;
                *rows_sha256 = None;
            }
        }
        runs
    }

    /// Issue 29 item 4: a value edited in samples.csv, a row added, a row removed are each
    /// found, naming the line and the run; a journal without values checks as before.
    #[test]
    fn an_edited_added_or_removed_row_breaks_the_values_or_the_chain() {
        let (events, runs, csv) = clean();
        let edited = csv.replacen("w,,m,sample,1,0,ok,1.5,", "w,,m,sample,1,0,ok,999.0,", 1);
        assert_eq!(
            run(&events, &runs, &edited),
            [
                Difference::ValueDiffers {
                    line: 3,
                    run: "`a` attempt 1 w sample 1".into(),
                    metric: "m".into(),
                    row: "999".into(),
                    journal: "1.5".into(),
                },
                Difference::ChainDiffers {
                    from: 3,
                    line: 3,
                    run: "`a` attempt 1 w sample 1".into(),
                },
            ]
        );
        let said = run(&events, &runs, &edited)[0].to_string();
        assert_eq!(
            said,
            "samples.csv line 3 (`a` attempt 1 w sample 1) has `m` = 999, the journal recorded 1.5"
        );
        // The same bytes in another spelling of the same number: only the chain sees it.
        let respelled = csv.replacen("w,,m,sample,2,0,ok,1.5,", "w,,m,sample,2,0,ok,1.50,", 1);
        assert_eq!(
            run(&events, &runs, &respelled),
            [Difference::ChainDiffers {
                from: 4,
                line: 4,
                run: "`a` attempt 1 w sample 2".into(),
            }]
        );
        // A row added in the middle (a duplicate of a warm-up) and a row removed.
        let mut lines: Vec<&str> = csv.lines().collect();
        let warmup = lines[1];
        lines.insert(2, warmup);
        let added = lines.join("\n") + "\n";
        let found = run(&events, &runs, &added);
        assert!(
            found.contains(&Difference::ChainDiffers {
                from: 2,
                line: 3,
                run: "`a` attempt 1 w warmup 1".into(),
            }),
            "{found:?}"
        );
        let mut lines: Vec<&str> = csv.lines().collect();
        lines.remove(2);
        let removed = lines.join("\n") + "\n";
        let found = run(&events, &runs, &removed);
        assert!(
            found.contains(&Difference::ChainDiffers {
                from: 3,
                line: 3,
                run: "`a` attempt 1 w sample 2".into(),
            }),
            "{found:?}"
        );
        // Journaled by an older aba: the edit goes unseen, and the check says it could not look.
        let old = as_an_older_aba_journaled(runs);
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
        let table = SampleTable::parse(Path::new("samples.csv"), edited.as_bytes()).expect("csv");
        let found = check(
            &recipe,
            &table,
            &events,
            &old,
            Scope::All,
            Some(RowBytes::Memory(edited.as_bytes())),
        )
        .expect("check");
        assert_eq!(found.differences, []);
        assert_eq!(found.runs_without_values, 6);
    }

    fn run(events: &[Event], runs: &[Event], csv: &str) -> Vec<Difference> {
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
        let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("csv");
        check(
            &recipe,
            &table,
            events,
            runs,
            Scope::All,
            Some(RowBytes::Memory(csv.as_bytes())),
        )
        .expect("check")
        .differences
    }

    #[test]
    fn a_clean_campaign_has_no_difference() {
        let (events, runs, csv) = clean();
        assert_eq!(run(&events, &runs, &csv), []);
    }

    /// The loss of issue 19: rows journaled but never in samples.csv.
    #[test]
    fn journaled_runs_without_rows_are_found() {
        let (events, runs, csv) = clean();
        let kept: String =
            csv.lines()
                .filter(|l| !l.starts_with("b,"))
                .fold(String::new(), |mut out, l| {
                    out.push_str(l);
                    out.push('\n');
                    out
                });
        let found = run(&events, &runs, &kept);
        assert_eq!(
            found
                .iter()
                .filter(|d| matches!(d, Difference::MissingRow { .. }))
                .count(),
            3,
            "{found:?}"
        );
        assert!(found.iter().any(|d| matches!(
            d,
            Difference::WrongCount { attempt, expected: 2, .. } if attempt == "point `b` attempt 1"
        )));
    }

    #[test]
    fn a_row_without_a_run_a_duplicate_and_a_wrong_boot_are_found() {
        let (events, runs, mut csv) = clean();
        csv.push_str("a,1,1,a,ra,id-a,w,,m,sample,3,0,ok,1.5,ns,t\n");
        csv.push_str("b,2,1,b,rb,id-b,w,,m,sample,2,0,ok,1.5,ns,t\n");
        let csv = csv.replace(
            "a,1,1,a,ra,id-a,w,,m,sample,1,",
            "a,1,1,a,ra,id-x,w,,m,sample,1,",
        );
        let found = run(&events, &runs, &csv);
        assert!(
            found
                .iter()
                .any(|d| matches!(d, Difference::RowWithoutRun { line: 8, .. })),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|d| matches!(d, Difference::DuplicateRow { rows: 2, .. })),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|d| matches!(d, Difference::WrongBoot { line: 3, .. })),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|d| matches!(d, Difference::WrongCount { .. })),
            "{found:?}"
        );
    }

    /// A runner killed between a run's rows and its journal record leaves rows without a
    /// record at the tail of an attempt that never finished: expected, and never counted.
    #[test]
    fn unjournaled_rows_at_the_tail_of_an_unfinished_attempt_are_expected() {
        let (mut events, mut runs, mut csv) = clean();
        events.push(Event::PointStarted {
            point: "b".into(),
            attempt: 2,
            time: "t".into(),
        });
        runs.push(Event::Sample {
            point: "b".into(),
            attempt: 2,
            workload: "w".into(),
            case: String::new(),
            phase: Phase::Warmup,
            index: 1,
            retry: 0,
            status: Status::Ok,
            elapsed_s: 0.1,
            error: None,
            raw: None,
            leftovers: Vec::new(),
            dropped_bytes: None,
            values: None,
            rows_sha256: None,
        });
        csv.push_str("b,2,2,b,rb,id-b2,w,,m,warmup,1,0,ok,1.5,ns,t\n");
        csv.push_str("b,2,2,b,rb,id-b2,w,,m,sample,1,0,ok,1.5,ns,t\n");
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
        let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("csv");
        let found = check(&recipe, &table, &events, &runs, Scope::All, None).expect("check");
        assert_eq!(found.differences, []);
        assert_eq!(found.unjournaled_tail_rows, 1);
        // The same rows in a finished attempt are a difference.
        events.push(Event::PointDone {
            point: "b".into(),
            attempt: 2,
            dmesg_warnings: 0,
            failed_units: vec![],
            time: "t".into(),
        });
        let found = check(&recipe, &table, &events, &runs, Scope::All, None).expect("check");
        assert!(
            found
                .differences
                .iter()
                .any(|d| matches!(d, Difference::RowWithoutRun { .. }))
        );
    }

    /// aba 0.1 rewrote a failed attempt's rows as `discarded`: still agrees with the journal.
    #[test]
    fn rows_discarded_by_an_older_aba_agree_with_a_failed_attempt() {
        let (mut events, runs, csv) = clean();
        let runs = as_an_older_aba_journaled(runs);
        let i = events
            .iter()
            .position(|e| matches!(e, Event::PointDone { point, .. } if point == "b"))
            .expect("b done");
        events[i] = Event::PointFailed {
            point: "b".into(),
            attempt: 1,
            kernel: "b".into(),
            reason: "x".into(),
            time: "t".into(),
        };
        let csv = csv.replace(
            "b,2,1,b,rb,id-b,w,,m,sample,2,0,ok,",
            "b,2,1,b,rb,id-b,w,,m,sample,2,0,discarded,",
        );
        assert_eq!(run(&events, &runs, &csv), []);
        // In a done attempt the same rewrite is a difference.
        let (events, runs, _) = clean();
        let found = run(&events, &runs, &csv);
        assert!(
            found
                .iter()
                .any(|d| matches!(d, Difference::StatusDiffers { .. })),
            "{found:?}"
        );
    }
}
