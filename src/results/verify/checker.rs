//! The full check of a results directory: every journaled run against every row of
//! `samples.csv`, each difference with its file and line. [`super::verify`] runs it when the
//! streaming walk ([`super::lockstep`]) gives up, and `aba verify` always.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Checker<'_> {
    /// The check, once every run is journaled in the checker: `events` are the non-sample
    /// records in order; the hash chain is checked when `bytes` are given.
    pub(super) fn finish(
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
pub(super) struct Journaled {
    pub(super) status: Status,
    /// Where its (metric, value) pairs are in [`Checker::values`]: (start, count); `None` for
    /// a run an older aba journaled.
    pub(super) values: Option<(u32, u32)>,
    /// Its link's index in [`Checker::links`], when journaled.
    pub(super) link: Option<u32>,
    /// Line of its last row (0: none yet).
    pub(super) last_row: u64,
}

/// The state of one check.
pub(super) struct Checker<'a> {
    pub(super) recipe: &'a Recipe,
    pub(super) table: &'a SampleTable,
    pub(super) symbols: HashMap<&'a str, Sym>,
    /// Strings of the journal that no row uses, with symbols past the table's.
    pub(super) extra: HashMap<String, Sym>,
    /// Point label -> (order, kernel), from the recipe.
    pub(super) points: HashMap<String, (usize, String)>,
    pub(super) attempts: HashMap<(Sym, u32), Attempt>,
    pub(super) journaled: HashMap<RunKey, Journaled>,
    /// Every run's journaled (metric, value) pairs, one after the other.
    pub(super) values: Vec<(Sym, f64)>,
    /// Every run's journaled link (`None`: not a link).
    pub(super) links: Vec<Option<Link>>,
    pub(super) run_order: Vec<RunKey>,
    pub(super) rows_of: HashMap<(RunKey, Sym), u32>,
    pub(super) valid: HashMap<SeriesKey, Vec<u32>>,
    pub(super) found: Verification,
}

impl<'a> Checker<'a> {
    pub(super) fn new(recipe: &'a Recipe, table: &'a SampleTable) -> Self {
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
    pub(super) fn appended(&mut self, points: &[AppendedPoint]) {
        for p in points {
            self.points
                .insert(p.label.clone(), (p.order, p.kernel.clone()));
        }
    }

    pub(super) fn sym(&mut self, text: &str) -> Sym {
        if let Some(&s) = self.symbols.get(text) {
            return s;
        }
        let next = Sym::try_from(self.table.strings.len() + self.extra.len()).unwrap_or(Sym::MAX);
        *self.extra.entry(text.to_owned()).or_insert(next)
    }

    pub(super) fn name(&self, s: Sym) -> String {
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

    pub(super) fn differ(&mut self, difference: Difference) {
        self.found.differences.push(difference);
    }

    /// Attempts and their outcomes, from the non-sample records: an attempt counts from its
    /// first start on (the attempt checked as done, from the first record read), and only
    /// what came after that is its boot and its end.
    pub(super) fn attempts_from(&mut self, history: &History) {
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
    pub(super) fn journaled_run(&mut self, run: &RunRecord<'_>) {
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
    pub(super) fn runs_of_started_attempts(&mut self) {
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

    pub(super) fn run_of_row(&self, row: &Row) -> String {
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
    pub(super) fn row(&mut self, row: &Row) {
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
    pub(super) fn chain(&mut self, bytes: RowBytes<'_>) -> Result<(), VerifyError> {
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

    pub(super) fn run_key_name(&self, key: RunKey) -> String {
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

    pub(super) fn row_belongs_to_the_recipe(&mut self, row: &Row) {
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

    pub(super) fn valid_row(&mut self, row: &Row, proven: Option<&(String, String)>) {
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
    pub(super) fn stray_rows(&mut self) {
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
    pub(super) fn rows_of_every_run(&mut self) {
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
    pub(super) fn finished_attempts(&mut self) {
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
            let kernel = self.points.get(&self.name(point)).map(|(_, k)| k.clone());
            for series in self.expected_series() {
                let rows = series.rows_at(kernel.as_deref());
                let mut indices = series
                    .symbols
                    .and_then(|(w, c, m)| self.valid.get(&(point, attempt, w, c, m, series.phase)))
                    .cloned()
                    .unwrap_or_default();
                indices.sort_unstable();
                let exact = indices.len() == rows as usize
                    && indices.iter().zip(1..).all(|(&i, want)| i == want);
                if exact {
                    continue;
                }
                let case_part = if series.case.is_empty() {
                    String::new()
                } else {
                    format!("[{}]", series.case)
                };
                self.found.differences.push(Difference::WrongCount {
                    attempt: label.clone(),
                    series: format!(
                        "{}{case_part} metric `{}` ({})",
                        series.workload,
                        series.metric,
                        series.phase.as_str()
                    ),
                    found: index_list(&indices),
                    expected: rows,
                });
            }
        }
    }
}

/// One series every finished attempt must hold: its names, their symbols in the table (`None`
/// when the table never names one of them), its phase and how many rows.
pub(super) struct ExpectedSeries<'r> {
    pub(super) workload: &'r str,
    pub(super) case: String,
    pub(super) metric: &'r str,
    pub(super) symbols: Option<(Sym, Sym, Sym)>,
    pub(super) phase: Phase,
    pub(super) rows: u32,
    /// The workload's `kernels` (empty: every kernel).
    pub(super) kernels: &'r [crate::recipe::ident::KernelLabel],
}

impl ExpectedSeries<'_> {
    /// The rows an attempt of `kernel` must hold: none where the workload does not run.
    pub(super) fn rows_at(&self, kernel: Option<&str>) -> u32 {
        match kernel {
            Some(k)
                if !self.kernels.is_empty() && !self.kernels.iter().any(|l| l.as_str() == k) =>
            {
                0
            }
            _ => self.rows,
        }
    }
}

impl<'a> Checker<'a> {
    /// The recipe's series, each warm-up and sample phase with its count: what the full
    /// check and the streaming walk hold every finished attempt to.
    pub(super) fn expected_series(&self) -> Vec<ExpectedSeries<'a>> {
        let mut all = Vec::new();
        for workload in &self.recipe.workloads {
            for case in workload.cases() {
                for metric in &workload.metrics {
                    for (phase, rows) in [
                        (Phase::Warmup, workload.warmup),
                        (Phase::Sample, workload.samples),
                    ] {
                        let symbols = match (
                            self.symbols.get(workload.name.as_str()),
                            self.symbols.get(case.name.as_str()),
                            self.symbols.get(metric.name.as_str()),
                        ) {
                            (Some(&w), Some(&c), Some(&m)) => Some((w, c, m)),
                            _ => None,
                        };
                        all.push(ExpectedSeries {
                            workload: workload.name.as_str(),
                            case: case.name.clone(),
                            metric: metric.name.as_str(),
                            symbols,
                            phase,
                            rows,
                            kernels: &workload.kernels,
                        });
                    }
                }
            }
        }
        all
    }
}
