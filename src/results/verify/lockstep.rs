//! The whole-directory check of a directory that agrees with its journal, made side by side:
//! aba appends each run's rows to `samples.csv`, then the run's record to the journal, so in
//! an untouched directory the journal's `sample` records name the table's rows in order, run
//! after run. The walk follows both in step, and the hash chain over `samples.csv`'s bytes on
//! a second thread, so it holds no key per run and no key per row: what it keeps grows with
//! the attempts and series, not with the samples (`aba verify` of a million samples: 1.2 s
//! and 89 MB with the table, where the full check took 4 s and 490 MB).
//!
//! It can only vouch. At the first thing that is not what aba writes (a row out of step, a
//! value or status that differs, a link that does not match, an unjournaled row, a row an
//! older aba rewrote, …) it gives up, and the full check ([`super::Checker`]) reads the
//! directory again and names every difference, each at its line, exactly as it always has.
//! So a directory it passes is one the full check passes with the same counts, and any other
//! gets the full check's answer.

use std::{
    cell::Cell,
    collections::{HashMap, HashSet},
    io::Read,
    sync::mpsc::{Receiver, SyncSender, sync_channel},
};

use super::{Checker, Outcome, SeriesKey, Verification};
use crate::{
    recipe::{Recipe, resolved::Workload},
    results::{
        journal::{Event, History, RunRecord},
        row_chain::{Link, RowChain, parse_link},
        samples::{Phase, Row, SampleTable, Status, Sym},
    },
};

/// Links per message from the hashing thread.
const BATCH: usize = 4096;
/// Messages in flight: the hashing thread runs at most this far ahead (about 1.3 MB).
const IN_FLIGHT: usize = 8;

/// What the hashing thread sends: the links of the records it hashed, (line, link), in order;
/// then whether it read the whole file.
pub(super) enum Message {
    Links(Vec<(u64, Link)>),
    End { complete: bool },
}

/// Hashes every complete record `bytes` holds and sends their links to `to`, in batches;
/// stops reading as soon as nobody listens any more.
pub(super) fn hash_rows(bytes: impl Read, to: &SyncSender<Message>) {
    let deaf = Cell::new(false);
    let mut batch = Vec::with_capacity(BATCH);
    let reader = UntilDeaf {
        inner: bytes,
        deaf: &deaf,
    };
    let read = RowChain::default().feed_reader(reader, |line, link| {
        batch.push((line, *link));
        if batch.len() == BATCH
            && to
                .send(Message::Links(std::mem::replace(
                    &mut batch,
                    Vec::with_capacity(BATCH),
                )))
                .is_err()
        {
            deaf.set(true);
        }
    });
    if deaf.get() || to.send(Message::Links(batch)).is_err() {
        return;
    }
    let _ = to.send(Message::End {
        complete: read.is_ok(),
    });
}

/// A reader that ends as soon as `deaf` is set: the walk gave up, nothing more to hash.
struct UntilDeaf<'a, R> {
    inner: R,
    deaf: &'a Cell<bool>,
}

impl<R: Read> Read for UntilDeaf<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.deaf.get() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

/// The links as the hashing thread sends them, read forward only.
pub(super) struct Links {
    from: Receiver<Message>,
    batch: Vec<(u64, Link)>,
    next: usize,
    end: Option<bool>,
}

impl Links {
    /// A channel for [`hash_rows`] and its reading end.
    pub(super) fn channel() -> (SyncSender<Message>, Links) {
        let (to, from) = sync_channel(IN_FLIGHT);
        let links = Links {
            from,
            batch: Vec::new(),
            next: 0,
            end: None,
        };
        (to, links)
    }

    /// The link after the record that starts at `line`; `None` when there is no such record
    /// ahead (the walk is past it, or the file ends before it).
    fn at(&mut self, line: u64) -> Option<Link> {
        loop {
            while let Some(&(at, link)) = self.batch.get(self.next) {
                if at > line {
                    return None;
                }
                self.next += 1;
                if at == line {
                    return Some(link);
                }
            }
            if self.end.is_some() {
                return None;
            }
            match self.from.recv() {
                Ok(Message::Links(batch)) => {
                    self.batch = batch;
                    self.next = 0;
                }
                Ok(Message::End { complete }) => self.end = Some(complete),
                Err(_) => self.end = Some(false),
            }
        }
    }

    /// Whether the whole file was hashed without an error (the rest is read and dropped).
    fn complete(&mut self) -> bool {
        while self.end.is_none() {
            match self.from.recv() {
                Ok(Message::Links(_)) => {}
                Ok(Message::End { complete }) => self.end = Some(complete),
                Err(_) => self.end = Some(false),
            }
        }
        self.end == Some(true)
    }
}

/// The table's rows as the walk reads them: held whole, or arriving in batches from the
/// thread that parses `samples.csv` ([`SampleTable::read_in_batches`]).
pub(super) enum Rows<'a> {
    /// Read already.
    Held(&'a SampleTable),
    /// Arriving: the batches so far, and the channel of the next ones.
    Arriving {
        /// The batches so far, put together.
        table: SampleTable,
        /// The next batches; the thread's end closes it.
        from: Receiver<SampleTable>,
    },
}

impl Rows<'_> {
    /// The table so far.
    fn table(&self) -> &SampleTable {
        match self {
            Rows::Held(table) => table,
            Rows::Arriving { table, .. } => table,
        }
    }

    /// Waits until the table has `len` rows or every row has come.
    fn fill(&mut self, len: usize) {
        if let Rows::Arriving { table, from } = self {
            while table.rows.len() < len {
                match from.recv() {
                    Ok(batch) => table.append(batch),
                    Err(_) => return,
                }
            }
        }
    }

    /// Waits for every row.
    fn fill_all(&mut self) {
        self.fill(usize::MAX);
    }
}

/// An attempt as its runs showed it: every attempt a run names, and the boots its valid rows
/// carry (distinct, usually one).
type Boots = Vec<(Sym, Sym)>;

/// A run series: (point, attempt, workload, case, phase), interned.
type RunSeries = (Sym, u32, Sym, Sym, Phase);

/// The walk over the journal's runs and the table's rows in step.
pub(super) struct Walk<'a> {
    recipe: &'a Recipe,
    rows: Rows<'a>,
    /// `None` when the chain is not checked (no samples.csv).
    links: Option<Links>,
    /// The next row.
    cursor: usize,
    /// Set at the first thing the walk cannot vouch for.
    gave_up: bool,
    runs: u64,
    runs_without_values: u64,
    /// Each run series' (point, attempt, workload, case, phase) last (index, retry): strictly
    /// increasing in what aba writes, so no run is journaled twice.
    last_run: HashMap<RunSeries, (u32, u32)>,
    /// Per series, its ok rows: how many, and whether they came as indices 1, 2, 3, ….
    ok_rows: HashMap<SeriesKey, (u32, bool)>,
    /// Per attempt a run names, the boots of its ok rows.
    attempts: HashMap<(Sym, u32), Boots>,
    /// Every (point, order, kernel) a row names.
    placed: HashSet<(Sym, u32, Sym)>,
    /// The last one put in `placed`: rows come point by point, so most rows name it again
    /// and need no lookup.
    last_placed: Option<(Sym, u32, Sym)>,
    /// The last workload looked up in the recipe.
    workload: Option<&'a Workload>,
}

impl<'a> Walk<'a> {
    pub(super) fn new(recipe: &'a Recipe, rows: Rows<'a>, links: Option<Links>) -> Self {
        Walk {
            recipe,
            rows,
            links,
            cursor: 0,
            gave_up: false,
            runs: 0,
            runs_without_values: 0,
            last_run: HashMap::new(),
            ok_rows: HashMap::new(),
            attempts: HashMap::new(),
            placed: HashSet::new(),
            last_placed: None,
            workload: None,
        }
    }

    /// The next journaled run: its rows are the next ones in the table.
    pub(super) fn run(&mut self, run: &RunRecord<'_>) {
        if !self.gave_up && self.step(run).is_none() {
            self.gave_up = true;
        }
    }

    /// One run in step; `None` when the walk cannot vouch for it.
    fn step(&mut self, run: &RunRecord<'_>) -> Option<()> {
        self.runs += 1;
        if run.values.is_none() {
            self.runs_without_values += 1;
        }
        let workload = match self.workload {
            Some(w) if w.name.as_str() == run.workload => w,
            _ => {
                let w = self
                    .recipe
                    .workloads
                    .iter()
                    .find(|w| w.name.as_str() == run.workload)?;
                self.workload = Some(w);
                w
            }
        };
        let count = workload.metrics.len();
        self.rows.fill(self.cursor + count);
        let t = self.rows.table();
        let rows = t.rows.get(self.cursor..self.cursor + count)?;
        let first = rows.first()?;
        let same_run = |row: &Row| {
            row.attempt == run.attempt
                && row.phase == run.phase
                && row.index == run.index
                && row.retry == run.retry
                && row.point == first.point
                && row.workload == first.workload
                && row.case == first.case
        };
        let named = t.text(first.point) == run.point
            && t.text(first.workload) == run.workload
            && t.text(first.case) == run.case;
        if !named || !rows.iter().all(same_run) {
            return None;
        }
        // Each of the workload's metrics once.
        for (i, row) in rows.iter().enumerate() {
            let metric = t.text(row.metric);
            let known = workload.metrics.iter().any(|m| m.name.as_str() == metric);
            if !known || rows[..i].iter().any(|r| r.metric == row.metric) {
                return None;
            }
            if row.status != run.status {
                return None;
            }
            if let Some(values) = &run.values {
                let journal = values.iter().find(|(m, _)| *m == metric).map(|(_, v)| *v);
                if journal != row.value {
                    return None;
                }
            }
        }
        let series = (
            first.point,
            run.attempt,
            first.workload,
            first.case,
            run.phase,
        );
        let order = (run.index, run.retry);
        match self.last_run.insert(series, order) {
            Some(before) if before >= order => return None,
            _ => {}
        }
        let boots = self.attempts.entry((first.point, run.attempt)).or_default();
        for row in rows {
            let place = (row.point, row.order, row.kernel);
            if self.last_placed != Some(place) {
                self.placed.insert(place);
                self.last_placed = Some(place);
            }
            if row.status != Status::Ok {
                continue;
            }
            let boot = (row.release, row.boot_id);
            if !boots.contains(&boot) {
                boots.push(boot);
            }
            let (n, in_order) = self
                .ok_rows
                .entry((
                    row.point,
                    row.attempt,
                    row.workload,
                    row.case,
                    row.metric,
                    row.phase,
                ))
                .or_insert((0, true));
            *n += 1;
            *in_order &= row.index == *n;
        }
        self.cursor += count;
        if let Some(links) = &mut self.links {
            // A run an older aba journaled has no link; its rows are checked as above.
            if let Some(hex) = run.rows_sha256 {
                let journaled = parse_link(hex)?;
                if links.at(rows.last()?.line)? != journaled {
                    return None;
                }
            }
        }
        Some(())
    }

    /// The verdict once every run is walked, `events` being the journal's other records in
    /// order: the counts of a clean check, or `None` when the full check must look.
    pub(super) fn finish(&mut self, events: &[Event]) -> Option<Verification> {
        self.rows.fill_all();
        let t = self.rows.table();
        if self.gave_up || self.cursor != t.rows.len() || !t.rejected.is_empty() {
            return None;
        }
        if let Some(links) = &mut self.links
            && !links.complete()
        {
            return None;
        }
        let mut checker = Checker::new(self.recipe, t);
        let history = History::of(events);
        checker.appended(&history.campaign.appended);
        checker.attempts_from(&history);
        for &(point, order, kernel) in &self.placed {
            match checker.points.get(t.text(point)) {
                Some((o, k)) if *o == order as usize && k == t.text(kernel) => {}
                _ => return None,
            }
        }
        // Every run's attempt started, and a done attempt's valid rows carry its boot.
        for (key, boots) in &self.attempts {
            let attempt = checker.attempts.get(key)?;
            if attempt.outcome != Outcome::Done || boots.is_empty() {
                continue;
            }
            let (release, boot_id) = attempt.boot.as_ref()?;
            let proven = |&(r, b): &(Sym, Sym)| t.text(r) == release && t.text(b) == boot_id;
            if !boots.iter().all(proven) {
                return None;
            }
        }
        // Every done attempt is proven and has exactly its warm-ups and samples.
        let expected = checker.expected_series();
        for (&(point, attempt), a) in &checker.attempts {
            if a.outcome != Outcome::Done {
                continue;
            }
            a.boot.as_ref()?;
            let kernel = checker.points.get(t.text(point)).map(|(_, k)| k.as_str());
            for series in &expected {
                let (n, in_order) = series
                    .symbols
                    .and_then(|(w, c, m)| {
                        self.ok_rows
                            .get(&(point, attempt, w, c, m, series.phase))
                            .copied()
                    })
                    .unwrap_or((0, true));
                if n != series.rows_at(kernel) || !in_order {
                    return None;
                }
            }
        }
        Some(Verification {
            differences: Vec::new(),
            runs: self.runs,
            rows: t.rows.len() as u64,
            unjournaled_tail_rows: 0,
            runs_without_values: self.runs_without_values,
        })
    }

    /// The table, every row of it: the rows that arrived are the analysis's.
    pub(super) fn into_rows(mut self) -> Rows<'a> {
        self.rows.fill_all();
        self.rows
    }
}
