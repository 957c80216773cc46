//! The run audit: what happened at every point attempt, replayed from the journal and counted
//! in `samples.csv`. It is what a reviewer reads before trusting the numbers: which boot ran,
//! with which command line and tuning, which runs failed or were retried, which rows were
//! discarded or rejected, what the kernel complained about.
//!
//! Reads only what the engine recorded; it judges nothing (the report decides what to
//! highlight).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::{
    analysis::model::{AttemptAudit, AttemptOutcome, Audit, RejectedRow, RunIssue, SharedBoot},
    results::{
        journal::{End, History, Journal},
        samples::{Phase, SampleTable, Status, Sym},
    },
};

/// A planned point: its label, 1-based order and kernel.
#[derive(Clone, Debug)]
pub struct PlannedPoint {
    /// Point label.
    pub label: String,
    /// 1-based boot order.
    pub order: usize,
    /// Kernel label.
    pub kernel: String,
}

/// Everything the audit reads.
#[derive(Clone, Copy, Debug)]
pub struct AuditInput<'a> {
    /// The journal.
    pub journal: &'a Journal,
    /// `samples.csv`.
    pub table: &'a SampleTable,
    /// The planned points.
    pub plan: &'a [PlannedPoint],
    /// Environment snapshots present, relative to the results directory (`env/a-1.json`).
    pub env_files: &'a BTreeSet<String>,
    /// Valid rows that repeated an index (counted during selection).
    pub duplicate_rows: usize,
}

/// Builds the audit.
#[must_use]
pub fn audit(input: &AuditInput<'_>) -> Audit {
    let history = input.journal.history();
    let mut book = Book::new(input.plan);
    book.record(&history);
    book.count_rows(input.table);
    let mut attempts: Vec<AttemptAudit> = book.attempts.into_values().collect();
    for a in &mut attempts {
        // The journal, not the row's status, says an attempt does not count: its ok rows are
        // set aside with it (aba 0.1 rewrote them as `discarded`, which counts the same).
        if matches!(
            a.outcome,
            AttemptOutcome::Failed | AttemptOutcome::Discarded
        ) {
            a.rows_discarded += a.samples_ok + a.warmups_ok;
            a.samples_ok = 0;
            a.warmups_ok = 0;
        }
    }
    attempts.sort_by_key(|a| (a.order, a.attempt));
    for a in &mut attempts {
        let env = crate::results::layout::env_record_name(&a.point, a.attempt);
        a.env_file = input.env_files.contains(&env).then_some(env);
    }
    let shared_boot = shared_boot(&attempts);
    let done: Vec<&AttemptAudit> = attempts
        .iter()
        .filter(|a| a.outcome == AttemptOutcome::Done)
        .collect();
    let failed_units: BTreeSet<String> = done
        .iter()
        .flat_map(|a| a.failed_units.iter().cloned())
        .collect();
    Audit {
        failed_runs: attempts.iter().map(|a| a.failed_runs.len()).sum(),
        retried_runs: attempts.iter().map(|a| a.retried_runs.len()).sum(),
        discarded_rows: attempts.iter().map(|a| a.rows_discarded).sum(),
        dmesg_warnings: done.iter().filter_map(|a| a.dmesg_warnings).sum(),
        failed_units: failed_units.into_iter().collect(),
        shared_boot,
        rejected_rows: input
            .table
            .rejected
            .iter()
            .map(|(line, reason)| RejectedRow {
                line: *line,
                reason: reason.clone(),
            })
            .collect(),
        warnings: history.warnings,
        duplicate_rows: input.duplicate_rows,
        journal_truncated: input.journal.truncated_tail,
        samples_truncated: input.table.truncated_tail,
        base_cmdline: history.campaign.base_cmdline,
        attempts,
    }
}

/// Set when at least two points are done and all of them report the same boot_id.
fn shared_boot(attempts: &[AttemptAudit]) -> Option<SharedBoot> {
    let ids: Vec<&str> = attempts
        .iter()
        .filter(|a| a.outcome == AttemptOutcome::Done)
        .map(|a| a.boot_id.as_deref().unwrap_or(""))
        .collect();
    let first = *ids.first()?;
    (ids.len() >= 2 && !first.is_empty() && ids.iter().all(|id| *id == first)).then(|| SharedBoot {
        boot_id: first.to_owned(),
        points: ids.len(),
    })
}

/// The attempts being assembled, by (point, attempt).
struct Book<'a> {
    plan: HashMap<&'a str, &'a PlannedPoint>,
    attempts: BTreeMap<(String, u32), AttemptAudit>,
}

impl<'a> Book<'a> {
    fn new(plan: &'a [PlannedPoint]) -> Self {
        Book {
            plan: plan.iter().map(|p| (p.label.as_str(), p)).collect(),
            attempts: BTreeMap::new(),
        }
    }

    fn entry(&mut self, point: &str, attempt: u32) -> &mut AttemptAudit {
        let planned = self.plan.get(point);
        self.attempts
            .entry((point.to_owned(), attempt))
            .or_insert_with(|| AttemptAudit {
                // Unplanned points (a journal that disagrees with the recipe) sort last.
                order: planned.map_or(usize::MAX, |p| p.order),
                point: point.to_owned(),
                attempt,
                kernel: planned.map(|p| p.kernel.clone()).unwrap_or_default(),
                outcome: AttemptOutcome::Unfinished,
                reason: None,
                boot_id: None,
                release: None,
                cmdline: None,
                switch_s: None,
                login_s: None,
                tuning: BTreeMap::new(),
                skipped_knobs: Vec::new(),
                samples_ok: 0,
                warmups_ok: 0,
                rows_failed: 0,
                rows_discarded: 0,
                failed_runs: Vec::new(),
                retried_runs: Vec::new(),
                left_behind: Vec::new(),
                output_cut: Vec::new(),
                dmesg_warnings: None,
                failed_units: Vec::new(),
                connection_lost: Vec::new(),
                warnings: Vec::new(),
                env_file: None,
                build: None,
            })
    }

    /// What the journal's replay says of every attempt it names.
    fn record(&mut self, history: &History) {
        for h in &history.attempts {
            let a = self.entry(&h.point, h.attempt);
            if let Some(boot) = h.boot() {
                a.boot_id = Some(boot.boot_id.clone());
                a.release = Some(boot.release.clone());
                a.cmdline = Some(boot.cmdline.clone());
                a.switch_s = Some(boot.switch_s);
                a.login_s = Some(boot.login_s);
            }
            a.build.clone_from(&h.build);
            if let Some((settings, skipped)) = &h.tuning {
                a.tuning.clone_from(settings);
                a.skipped_knobs.clone_from(skipped);
            }
            for r in &h.remarkable_runs {
                let run = format!(
                    "{}{} {} {}",
                    r.workload,
                    if r.case.is_empty() {
                        String::new()
                    } else {
                        format!("[{}]", r.case)
                    },
                    r.phase,
                    r.index
                );
                a.left_behind
                    .extend(r.leftovers.iter().map(|p| format!("{run}: {p}")));
                if let Some(n) = r.dropped_bytes {
                    a.output_cut.push(format!("{run}: {n} bytes dropped"));
                }
                let issue = RunIssue {
                    workload: r.workload.clone(),
                    case: r.case.clone(),
                    phase: r.phase.as_str().to_owned(),
                    index: r.index,
                    retry: r.retry,
                    error: r.error.clone(),
                    raw: r.raw.clone(),
                };
                if r.status == Status::Failed {
                    a.failed_runs.push(issue);
                } else if r.retry > 0 {
                    a.retried_runs.push(issue);
                }
            }
            a.connection_lost
                .extend(h.connection_lost.iter().map(|(reason, same_boot)| {
                    let after = match same_boot {
                        Some(true) => "same boot after reconnecting",
                        Some(false) => "a different boot after reconnecting",
                        None => "could not reconnect",
                    };
                    format!("{reason} ({after})")
                }));
            // The last end decides; a failure's reason and a done's remarks stay with the
            // attempt whichever came last.
            for (_, end) in &h.ends {
                match end {
                    End::Done {
                        dmesg_warnings,
                        failed_units,
                    } => {
                        a.outcome = AttemptOutcome::Done;
                        a.dmesg_warnings = Some(*dmesg_warnings);
                        a.failed_units.clone_from(failed_units);
                    }
                    End::Failed { reason, answered } => {
                        a.outcome = AttemptOutcome::Failed;
                        a.reason = Some(reason.clone());
                        // A proof that refused the boot read the one that answered (the
                        // boot loader's fallback, typically): its facts are the row's.
                        if let (Some(boot), None) = (answered, &a.boot_id) {
                            a.boot_id = Some(boot.boot_id.clone());
                            a.release = Some(boot.release.clone());
                            a.cmdline = Some(boot.cmdline.clone());
                        }
                    }
                    End::Discarded => a.outcome = AttemptOutcome::Discarded,
                }
            }
            a.warnings.clone_from(&h.warnings);
        }
    }

    fn count_rows(&mut self, table: &SampleTable) {
        /// Row counts of one (point, attempt), and its first non-empty boot_id.
        #[derive(Default)]
        struct Counts {
            boot_id: Option<Sym>,
            samples_ok: usize,
            warmups_ok: usize,
            rows_failed: usize,
            rows_discarded: usize,
        }
        // Count by interned key first (a million rows, a few hundred attempts), then apply
        // each attempt's counts once, in the order the attempts first appear.
        let mut groups: Vec<((Sym, u32), Counts)> = Vec::new();
        let mut index: HashMap<(Sym, u32), usize> = HashMap::new();
        let mut last: Option<((Sym, u32), usize)> = None;
        for row in &table.rows {
            let key = (row.point, row.attempt);
            let i = match last {
                Some((k, i)) if k == key => i,
                _ => *index.entry(key).or_insert_with(|| {
                    groups.push((key, Counts::default()));
                    groups.len() - 1
                }),
            };
            last = Some((key, i));
            let c = &mut groups[i].1;
            if c.boot_id.is_none() && !table.text(row.boot_id).is_empty() {
                c.boot_id = Some(row.boot_id);
            }
            match (row.status, row.phase) {
                (Status::Ok, Phase::Sample) => c.samples_ok += 1,
                (Status::Ok, Phase::Warmup) => c.warmups_ok += 1,
                (Status::Failed, _) => c.rows_failed += 1,
                (Status::Discarded, _) => c.rows_discarded += 1,
            }
        }
        for ((point, attempt), c) in groups {
            let a = self.entry(table.text(point), attempt);
            if a.boot_id.is_none()
                && let Some(id) = c.boot_id
            {
                a.boot_id = Some(table.text(id).to_owned());
            }
            a.samples_ok += c.samples_ok;
            a.warmups_ok += c.warmups_ok;
            a.rows_failed += c.rows_failed;
            a.rows_discarded += c.rows_discarded;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, path::Path};

    use super::{AuditInput, PlannedPoint, audit};
    use crate::{
        analysis::model::AttemptOutcome,
        results::{
            journal::{
                Event, Journal,
                testkit::{done, proven},
            },
            samples::{HEADER, SampleTable},
        },
    };

    fn plan() -> Vec<PlannedPoint> {
        ["a-a", "b", "a-b"]
            .iter()
            .enumerate()
            .map(|(i, l)| PlannedPoint {
                label: (*l).to_owned(),
                order: i + 1,
                kernel: l.split('-').next().expect("label").to_owned(),
            })
            .collect()
    }

    #[test]
    fn outcomes_rows_and_shared_boot() {
        let journal = Journal {
            events: vec![
                proven("a-a", 1, "boot"),
                done("a-a", 1),
                proven("b", 1, "boot"),
                Event::PointDiscarded {
                    point: "b".into(),
                    attempt: 1,
                    rows: 1,
                },
                proven("b", 2, "boot"),
                Event::Sample {
                    point: "b".into(),
                    attempt: 2,
                    workload: "w".into(),
                    case: String::new(),
                    phase: crate::results::samples::Phase::Sample,
                    index: 1,
                    retry: 0,
                    status: crate::results::samples::Status::Failed,
                    elapsed_s: 1.0,
                    error: Some("exit status 1".into()),
                    raw: Some("raw/b-2/w-1-0.txt".into()),
                    leftovers: Vec::new(),
                    dropped_bytes: None,
                    values: None,
                    rows_sha256: None,
                    kept: Vec::new(),
                },
                done("b", 2),
                Event::Warning {
                    point: Some("b".into()),
                    text: "slow".into(),
                },
                Event::Warning {
                    point: None,
                    text: "campaign".into(),
                },
            ],
            truncated_tail: false,
        };
        let text = format!(
            "{}\nb,2,1,b,6.1,boot,w,,m,sample,1,0,discarded,9,ns,t\n\
             b,2,2,b,6.1,boot,w,,m,sample,1,0,failed,,ns,t\n\
             b,2,2,b,6.1,boot,w,,m,sample,1,1,ok,1,ns,t\n\
             b,2,2,b,6.1,boot,w,,m,sample,2,0,ok,inf,ns,t\n",
            HEADER.join(",")
        );
        let table = SampleTable::parse(Path::new("samples.csv"), text.as_bytes()).expect("valid");
        let env = BTreeSet::from(["env/b-2.json".to_owned()]);
        let a = audit(&AuditInput {
            journal: &journal,
            table: &table,
            plan: &plan(),
            env_files: &env,
            duplicate_rows: 0,
        });
        let outcomes: Vec<(&str, u32, AttemptOutcome)> = a
            .attempts
            .iter()
            .map(|x| (x.point.as_str(), x.attempt, x.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("a-a", 1, AttemptOutcome::Done),
                ("b", 1, AttemptOutcome::Discarded),
                ("b", 2, AttemptOutcome::Done),
            ]
        );
        let b2 = &a.attempts[2];
        assert_eq!((b2.samples_ok, b2.rows_failed), (1, 1));
        assert_eq!(b2.failed_runs[0].error.as_deref(), Some("exit status 1"));
        assert_eq!(b2.warnings, ["slow"]);
        assert_eq!(b2.env_file.as_deref(), Some("env/b-2.json"));
        assert_eq!(a.attempts[1].rows_discarded, 1);
        assert_eq!((a.failed_runs, a.discarded_rows), (1, 1));
        assert_eq!(a.rejected_rows.len(), 1);
        assert_eq!(a.warnings, ["campaign"]);
        assert_eq!(a.shared_boot.map(|s| s.points), Some(2));
    }

    /// A point whose kernel could not boot: the boot loader's fallback answered, the proof
    /// refused it, and the failed row names that boot (a failure without one names none).
    #[test]
    fn a_refused_boot_is_the_failed_rows_boot() {
        let failed = |point: &str, answered| Event::PointFailed {
            point: point.into(),
            attempt: 1,
            kernel: "b".into(),
            reason: "the target runs 6.1-default, not 6.9 (uname -r)".into(),
            answered,
            time: "t".into(),
        };
        let journal = Journal {
            events: vec![
                proven("a-a", 1, "boot-a"),
                done("a-a", 1),
                failed(
                    "b",
                    Some(crate::kernel::proof::BootFacts {
                        boot_id: "fallback".into(),
                        release: "6.1-default".into(),
                        cmdline: "root=UUID=1 quiet".into(),
                    }),
                ),
                failed("a-b", None),
            ],
            truncated_tail: false,
        };
        let text = format!("{}\n", HEADER.join(","));
        let table = SampleTable::parse(Path::new("samples.csv"), text.as_bytes()).expect("valid");
        let a = audit(&AuditInput {
            journal: &journal,
            table: &table,
            plan: &plan(),
            env_files: &BTreeSet::new(),
            duplicate_rows: 0,
        });
        let b = &a.attempts[1];
        assert_eq!(b.outcome, AttemptOutcome::Failed);
        assert_eq!(
            (
                b.boot_id.as_deref(),
                b.release.as_deref(),
                b.cmdline.as_deref()
            ),
            (
                Some("fallback"),
                Some("6.1-default"),
                Some("root=UUID=1 quiet")
            )
        );
        assert_eq!(a.attempts[2].boot_id, None);
    }
}
