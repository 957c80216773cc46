//! The replay of a journal, folded once: what it says about the campaign, every point and
//! every point attempt.

use std::collections::{BTreeMap, HashMap};

use super::{AppendedPoint, Event, Facts, Journal};
use crate::{
    recipe::ident::PointLabel,
    results::samples::{Phase, Status},
    stats::sequential::Decision,
};

/// Values tuning changed that are not restored yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRestore {
    /// The boot they were saved in.
    pub boot_id: String,
    /// (file, previous content), in write order.
    pub values: Vec<(String, String)>,
}

impl Journal {
    /// Replays the records into the state of every point.
    pub fn state(&self) -> CampaignState {
        self.history().campaign
    }

    /// The campaign record.
    pub fn header(&self) -> Option<&Event> {
        self.events.first()
    }

    /// The kernels recorded when the campaign started; `None` for a campaign nothing bound,
    /// or written by an aba older than bindings: the recipe's kernels, as written.
    pub fn kernels(&self) -> Option<&[crate::kernel::binding::BoundKernel]> {
        self.events.iter().find_map(|e| match e {
            Event::Kernels { kernels } => Some(kernels.as_slice()),
            _ => None,
        })
    }

    /// The parameter values recorded when the campaign started; `None` for a recipe without
    /// `[params]`, or a journal older than them.
    pub fn params(&self) -> Option<&[crate::recipe::params::BoundParam]> {
        self.events.iter().find_map(|e| match e {
            Event::Params { params } => Some(params.as_slice()),
            _ => None,
        })
    }

    /// The SHA-256 the recipe copy must have now: the last amendment's, else the header's.
    pub fn recipe_sha256(&self) -> Option<&str> {
        self.events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Amended { sha256, .. } => Some(sha256.as_str()),
                _ => None,
            })
            .or_else(|| match self.header() {
                Some(Event::Campaign { recipe_sha256, .. }) => Some(recipe_sha256.as_str()),
                _ => None,
            })
    }

    /// Replays the records once into everything the readers of a campaign ask of them.
    pub fn history(&self) -> History {
        History::of(&self.events)
    }
}

/// Where a record lies among the records replayed (0-based): the readers that ask what came
/// after what (the verification: after an attempt started; the status: since it last did)
/// compare these.
pub type At = usize;

/// A journal replayed once: the campaign's state, and every point attempt with what its
/// records say (its starts, its switch and boot, its build, tuning and runs, its end). Every
/// reader of a journal (the engine's resume, `aba status`, the audit, the verification)
/// reads this instead of matching records itself, so a new record touches the event and this
/// fold only.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Where the campaign and each planned point stand: what [`Journal::state`] returns.
    pub campaign: CampaignState,
    /// Every point attempt a record names, in the order first named (points the plan lacks
    /// included: a journal can disagree with its recipe, and its readers say so).
    pub attempts: Vec<AttemptHistory>,
    /// Warnings that name no point, in journal order.
    pub warnings: Vec<String>,
    /// The attempt the last `point_started` record began: index in `attempts`.
    pub last_started: Option<usize>,
    /// Point label -> attempt -> index in `attempts`.
    index: HashMap<String, BTreeMap<u32, usize>>,
}

/// What the records of one point attempt say.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptHistory {
    /// Point label.
    pub point: String,
    /// 1-based attempt.
    pub attempt: u32,
    /// Where its `point_started` records lie (one, unless the journal repeats it).
    pub starts: Vec<At>,
    /// Its last step after the start (switch, boot, tuning, a run) and where.
    pub step: Option<(At, Step)>,
    /// Every boot proven for it, in order.
    pub boots: Vec<(At, Boot)>,
    /// The proof of its host-built kernel, the last one recorded.
    pub build: Option<crate::build::proof::BuildProof>,
    /// Its tuning, the last one recorded: setting -> value read back, and the knobs skipped.
    pub tuning: Option<(Facts, Vec<String>)>,
    /// Its last run and where: (workload, case, index within the phase).
    pub last_run: Option<(At, (String, String, u32))>,
    /// Its runs worth a remark (failed, retried, left processes behind, output cut), in order.
    pub remarkable_runs: Vec<RunRemark>,
    /// Its lost connections: what was observed, and whether the boot was the same after
    /// reconnecting (`None`: could not reconnect).
    pub connection_lost: Vec<(String, Option<bool>)>,
    /// How it ended (done, failed, discarded) and where; more than one only in a journal
    /// that says so.
    pub ends: Vec<(At, End)>,
    /// Warnings naming its point while it was the point's latest attempt.
    pub warnings: Vec<String>,
    /// Its probes, in the order they ran.
    pub probes: Vec<ProbeRun>,
    /// The output its passing checks kept (`checks/<point>/…`), in the order written.
    pub kept_checks: Vec<crate::results::kept::KeptFile>,
}

/// A `probe` record.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRun {
    /// The probe's name.
    pub probe: String,
    /// The point's kernel.
    pub kernel: String,
    /// Before or after the timed samples.
    pub when: crate::recipe::model::ProbeWhen,
    /// How the command ended.
    pub outcome: String,
    /// Whether that is what the recipe expects.
    pub as_expected: bool,
    /// Wall seconds.
    pub elapsed_s: f64,
    /// Its kept stdout and stderr.
    pub kept: Vec<crate::results::kept::KeptFile>,
    /// The values read.
    pub values: Vec<super::event::ProbeReading>,
    /// What went wrong short of failing the point.
    pub problems: Vec<String>,
}

/// How far an attempt got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `switching`: the kernel switch was triggered.
    Switching,
    /// `boot_proven`.
    Booted,
    /// `tuned`.
    Tuned,
    /// A run of this phase finished.
    Run(Phase),
}

/// A `boot_proven` record's proof.
#[derive(Clone, Debug, PartialEq)]
pub struct Boot {
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// `uname -r`.
    pub release: String,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// Seconds from the switch trigger to a completed proof.
    pub switch_s: f64,
    /// Seconds from the switch trigger to the login into the new boot.
    pub login_s: f64,
}

/// A run the audit remarks on, as its `sample` record says.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRemark {
    /// Workload.
    pub workload: String,
    /// Case.
    pub case: String,
    /// Warm-up or measured.
    pub phase: Phase,
    /// Index within the phase.
    pub index: u32,
    /// Retry.
    pub retry: u32,
    /// `ok` or `failed`.
    pub status: Status,
    /// Why it failed.
    pub error: Option<String>,
    /// Its saved raw output.
    pub raw: Option<String>,
    /// Processes it left behind.
    pub leftovers: Vec<String>,
    /// Output bytes beyond `max_output`.
    pub dropped_bytes: Option<u64>,
}

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// `point_done`: its rows are valid.
    Done {
        /// New kernel warnings in dmesg.
        dmesg_warnings: u32,
        /// Failed systemd units at the end.
        failed_units: Vec<String>,
    },
    /// `point_failed`.
    Failed {
        /// What went wrong.
        reason: String,
        /// The boot that answered instead of the one asked for, when the proof read one.
        answered: Option<crate::kernel::proof::BootFacts>,
    },
    /// `point_discarded` on resume.
    Discarded,
}

impl History {
    /// Replays `events`, in order.
    #[must_use]
    pub fn of(events: &[Event]) -> History {
        let mut history = History::default();
        for (at, event) in events.iter().enumerate() {
            history.campaign.apply(event);
            history.note(at, event);
        }
        history
    }

    /// The attempt `attempt` of `point`, when a record names it.
    #[must_use]
    pub fn attempt(&self, point: &str, attempt: u32) -> Option<&AttemptHistory> {
        let i = *self.index.get(point)?.get(&attempt)?;
        self.attempts.get(i)
    }

    /// The attempt of `point`, named for the first time here or not.
    fn attempt_mut(&mut self, point: &str, attempt: u32) -> &mut AttemptHistory {
        if let Some(&i) = self.index.get(point).and_then(|a| a.get(&attempt)) {
            return &mut self.attempts[i];
        }
        let attempts = &mut self.attempts;
        let i = *self
            .index
            .entry(point.to_owned())
            .or_default()
            .entry(attempt)
            .or_insert_with(|| {
                attempts.push(AttemptHistory::new(point, attempt));
                attempts.len() - 1
            });
        &mut attempts[i]
    }

    /// The attempt, when a record named it before.
    fn existing_mut(&mut self, point: &str, attempt: u32) -> Option<&mut AttemptHistory> {
        let i = *self.index.get(point)?.get(&attempt)?;
        self.attempts.get_mut(i)
    }

    /// The record at `at`, as far as it concerns a point attempt.
    fn note(&mut self, at: At, event: &Event) {
        match event {
            Event::PointStarted { point, attempt, .. } => {
                self.attempt_mut(point, *attempt).starts.push(at);
                self.last_started = self
                    .index
                    .get(point.as_str())
                    .and_then(|a| a.get(attempt))
                    .copied();
            }
            Event::Switching { point, attempt, .. } => {
                if let Some(a) = self.existing_mut(point, *attempt) {
                    a.step = Some((at, Step::Switching));
                }
            }
            Event::BootProven {
                point,
                attempt,
                boot_id,
                release,
                cmdline,
                switch_s,
                login_s,
                ..
            } => {
                let a = self.attempt_mut(point, *attempt);
                a.step = Some((at, Step::Booted));
                a.boots.push((
                    at,
                    Boot {
                        boot_id: boot_id.clone(),
                        release: release.clone(),
                        cmdline: cmdline.clone(),
                        switch_s: *switch_s,
                        login_s: *login_s,
                    },
                ));
            }
            Event::BuildProven {
                point,
                attempt,
                proof,
            } => self.attempt_mut(point, *attempt).build = Some(proof.clone()),
            Event::Tuned {
                point,
                attempt,
                settings,
                skipped,
            } => {
                let a = self.attempt_mut(point, *attempt);
                a.step = Some((at, Step::Tuned));
                a.tuning = Some((settings.clone(), skipped.clone()));
            }
            Event::Sample {
                point,
                attempt,
                workload,
                case,
                phase,
                index,
                retry,
                status,
                error,
                raw,
                leftovers,
                dropped_bytes,
                kept,
                ..
            } => {
                let a = self.attempt_mut(point, *attempt);
                a.step = Some((at, Step::Run(*phase)));
                a.kept_checks.extend(kept.iter().cloned());
                // Reuses the strings' buffers: a journal of a million runs is replayed
                // without a million copies of their names.
                match &mut a.last_run {
                    Some((last_at, (last_workload, last_case, last_index))) => {
                        *last_at = at;
                        last_workload.clone_from(workload);
                        last_case.clone_from(case);
                        *last_index = *index;
                    }
                    None => a.last_run = Some((at, (workload.clone(), case.clone(), *index))),
                }
                let remarkable = *status == Status::Failed
                    || *retry > 0
                    || !leftovers.is_empty()
                    || dropped_bytes.is_some();
                if remarkable {
                    a.remarkable_runs.push(RunRemark {
                        workload: workload.clone(),
                        case: case.clone(),
                        phase: *phase,
                        index: *index,
                        retry: *retry,
                        status: *status,
                        error: error.clone(),
                        raw: raw.clone(),
                        leftovers: leftovers.clone(),
                        dropped_bytes: *dropped_bytes,
                    });
                }
            }
            Event::Probe {
                point,
                attempt,
                kernel,
                probe,
                when,
                outcome,
                as_expected,
                elapsed_s,
                kept,
                values,
                problems,
                ..
            } => self.attempt_mut(point, *attempt).probes.push(ProbeRun {
                probe: probe.clone(),
                kernel: kernel.clone(),
                when: *when,
                outcome: outcome.clone(),
                as_expected: *as_expected,
                elapsed_s: *elapsed_s,
                kept: kept.clone(),
                values: values.clone(),
                problems: problems.clone(),
            }),
            Event::ConnectionLost {
                point,
                attempt,
                reason,
                same_boot,
            } => self
                .attempt_mut(point, *attempt)
                .connection_lost
                .push((reason.clone(), *same_boot)),
            Event::PointDone {
                point,
                attempt,
                dmesg_warnings,
                failed_units,
                ..
            } => self.attempt_mut(point, *attempt).ends.push((
                at,
                End::Done {
                    dmesg_warnings: *dmesg_warnings,
                    failed_units: failed_units.clone(),
                },
            )),
            Event::PointFailed {
                point,
                attempt,
                reason,
                answered,
                ..
            } => self.attempt_mut(point, *attempt).ends.push((
                at,
                End::Failed {
                    reason: reason.clone(),
                    answered: answered.clone(),
                },
            )),
            Event::PointDiscarded { point, attempt, .. } => self
                .attempt_mut(point, *attempt)
                .ends
                .push((at, End::Discarded)),
            Event::Warning { point, text } => match point {
                // A warning naming only its point belongs to the point's latest attempt
                // named so far (the first, before any).
                Some(p) => {
                    let latest = self
                        .index
                        .get(p.as_str())
                        .and_then(|a| a.keys().next_back())
                        .copied()
                        .unwrap_or(1);
                    self.attempt_mut(p, latest).warnings.push(text.clone());
                }
                None => self.warnings.push(text.clone()),
            },
            _ => {}
        }
    }
}

impl AttemptHistory {
    fn new(point: &str, attempt: u32) -> AttemptHistory {
        AttemptHistory {
            point: point.to_owned(),
            attempt,
            starts: Vec::new(),
            step: None,
            boots: Vec::new(),
            build: None,
            tuning: None,
            last_run: None,
            remarkable_runs: Vec::new(),
            connection_lost: Vec::new(),
            ends: Vec::new(),
            warnings: Vec::new(),
            probes: Vec::new(),
            kept_checks: Vec::new(),
        }
    }

    /// Its last proven boot.
    #[must_use]
    pub fn boot(&self) -> Option<&Boot> {
        self.boots.last().map(|(_, b)| b)
    }

    /// How it ended last, if it did.
    #[must_use]
    pub fn end(&self) -> Option<&End> {
        self.ends.last().map(|(_, e)| e)
    }

    /// The output it kept as evidence (its probes' streams, then its passing checks'), each
    /// with the SHA-256 journaled for it.
    pub fn kept_files(&self) -> impl Iterator<Item = &crate::results::kept::KeptFile> {
        self.probes
            .iter()
            .flat_map(|p| &p.kept)
            .chain(&self.kept_checks)
    }

    /// Its last proven boot and its last end among the records after `since` (all of them
    /// when `None`).
    #[must_use]
    pub fn after(&self, since: Option<At>) -> (Option<&Boot>, Option<&End>) {
        let later = |at: &At| since.is_none_or(|s| *at > s);
        (
            self.boots
                .iter()
                .rev()
                .find(|(at, _)| later(at))
                .map(|(_, b)| b),
            self.ends
                .iter()
                .rev()
                .find(|(at, _)| later(at))
                .map(|(_, e)| e),
        )
    }
}

impl CampaignState {
    /// The record at hand, as far as it concerns the campaign's state.
    fn apply(&mut self, event: &Event) {
        match event {
            Event::Campaign { points, .. } => {
                self.points = points
                    .iter()
                    .map(|p| PointState {
                        label: PointLabel::new(p.clone()),
                        ..PointState::default()
                    })
                    .collect();
            }
            Event::BaseCmdline { cmdline } => self.base_cmdline = Some(cmdline.clone()),
            Event::Look {
                look,
                decision,
                appended,
                ..
            } => {
                self.looks.push((*look, *decision));
                for point in appended {
                    self.appended.push(point.clone());
                    self.points.push(PointState {
                        label: PointLabel::new(point.label.clone()),
                        ..PointState::default()
                    });
                }
            }
            Event::PointStarted { point, attempt, .. } => {
                if let Some(p) = self.point_mut(point) {
                    p.attempts = p.attempts.max(*attempt);
                    p.open = Some(*attempt);
                }
            }
            Event::BootProven {
                point,
                attempt,
                boot_id,
                release,
                ..
            } => {
                if let Some(p) = self.point_mut(point) {
                    p.boots.push(ProvenBoot {
                        attempt: *attempt,
                        boot_id: boot_id.clone(),
                        release: release.clone(),
                    });
                }
            }
            Event::PointDone { point, attempt, .. } => {
                if let Some(p) = self.point_mut(point) {
                    p.done = Some(*attempt);
                    p.open = None;
                }
            }
            Event::PointFailed {
                point,
                attempt,
                reason,
                ..
            } => {
                if let Some(p) = self.point_mut(point) {
                    p.failures.push((*attempt, reason.clone()));
                    p.open = None;
                }
            }
            Event::PointDiscarded { point, attempt, .. } => {
                if let Some(p) = self.point_mut(point) {
                    p.discarded.push(*attempt);
                    if p.open == Some(*attempt) {
                        p.open = None;
                    }
                }
            }
            // The first record of a boot holds the machine's own values.
            Event::TuningSaved {
                boot_id, values, ..
            } if self
                .pending_restore
                .as_ref()
                .is_none_or(|p| p.boot_id != *boot_id) =>
            {
                self.pending_restore = Some(PendingRestore {
                    boot_id: boot_id.clone(),
                    values: values
                        .iter()
                        .map(|v| (v.path.clone(), v.value.clone()))
                        .collect(),
                });
            }
            Event::TuningRestored { .. } => self.pending_restore = None,
            Event::Finished { .. } => self.finished = true,
            Event::Stopped { reason, .. } => self.stopped = Some(reason.clone()),
            Event::Interrupted { .. } => self.stopped = Some("interrupted".to_owned()),
            Event::Resumed { .. } => self.stopped = None,
            _ => {}
        }
    }
}

/// What the journal says about one point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointState {
    /// Point label.
    pub label: PointLabel,
    /// Highest attempt number started.
    pub attempts: u32,
    /// The attempt whose rows are valid, once the point is done.
    pub done: Option<u32>,
    /// An attempt that started and neither finished, failed nor was discarded: the runner
    /// died during it.
    pub open: Option<u32>,
    /// Failed attempts with their reasons.
    pub failures: Vec<(u32, String)>,
    /// Attempts discarded on resume.
    pub discarded: Vec<u32>,
    /// Proven boots, in journal order.
    pub boots: Vec<ProvenBoot>,
}

/// A boot the journal records as proven for a point attempt (`boot_proven`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvenBoot {
    /// The attempt.
    pub attempt: u32,
    /// Its `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// Its `uname -r`.
    pub release: String,
}

/// What the journal says about the whole campaign.
#[derive(Clone, Debug, Default)]
pub struct CampaignState {
    /// Points in plan order.
    pub points: Vec<PointState>,
    /// The captured default cmdline (kexec targets).
    pub base_cmdline: Option<String>,
    /// Every point is done.
    pub finished: bool,
    /// Why the last run stopped, if it did not finish.
    pub stopped: Option<String>,
    /// Settings changed on a boot and not yet put back.
    pub pending_restore: Option<PendingRestore>,
    /// The points an extended campaign appended, in boot order (also in `points`).
    pub appended: Vec<AppendedPoint>,
    /// Every look of an extended campaign and what it decided.
    pub looks: Vec<(u32, Decision)>,
}

impl CampaignState {
    fn point_mut(&mut self, label: &str) -> Option<&mut PointState> {
        self.points.iter_mut().find(|p| p.label == label)
    }

    /// The point with this label.
    pub fn point(&self, label: &str) -> Option<&PointState> {
        self.points.iter().find(|p| p.label == label)
    }

    /// The `point_discarded` records that set aside every attempt the last runner left open,
    /// each with the rows `rows` counts for it by (point, attempt): those rows do not count,
    /// and samples.csv is never rewritten.
    #[must_use]
    pub fn discards(&self, rows: &BTreeMap<(String, u32), u64>) -> Vec<Event> {
        self.points
            .iter()
            .filter_map(|point| {
                let attempt = point.open?;
                let label = point.label.to_string();
                let rows = rows.get(&(label.clone(), attempt)).copied().unwrap_or(0);
                Some(Event::PointDiscarded {
                    point: label,
                    attempt,
                    rows,
                })
            })
            .collect()
    }

    /// The valid attempt of each finished point.
    pub fn done_attempts(&self) -> BTreeMap<String, u32> {
        self.points
            .iter()
            .filter_map(|p| p.done.map(|a| (p.label.to_string(), a)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{End, History, Step};
    use crate::results::journal::{
        Event,
        testkit::{proven, started},
    };

    fn header(points: &[&str]) -> Event {
        Event::Campaign {
            format: super::super::JOURNAL_FORMAT,
            aba: "0".into(),
            name: "t".into(),
            recipe_sha256: "x".into(),
            target: "local".into(),
            points: points.iter().map(|p| (*p).to_owned()).collect(),
            time: "t".into(),
            limits: None,
        }
    }

    /// One fold keeps what each reader asks: the campaign's points, every attempt in the order
    /// first named, where each record lay, and warnings with the latest attempt named.
    #[test]
    fn attempts_keep_their_records_and_where_they_lay() {
        let events = [
            header(&["a", "b"]),
            proven("a", 1, "early"),
            started("a", 1),
            proven("a", 1, "boot-1"),
            Event::PointFailed {
                point: "a".into(),
                attempt: 1,
                kernel: "k".into(),
                reason: "hung".into(),
                answered: None,
                time: "t".into(),
            },
            started("a", 2),
            Event::Warning {
                point: Some("a".into()),
                text: "slow".into(),
            },
            Event::Switching {
                point: "a".into(),
                attempt: 2,
                method: crate::kernel::switch::SwitchKind::Kexec,
                previous_boot_id: None,
            },
            Event::Warning {
                point: None,
                text: "campaign".into(),
            },
        ];
        let h = History::of(&events);
        let a1 = h.attempt("a", 1).expect("attempt 1");
        assert_eq!(a1.starts, [2]);
        assert_eq!(a1.boots.len(), 2);
        // From its start on, its boot is the one proven after it.
        let (boot, end) = a1.after(a1.starts.first().copied());
        assert_eq!(boot.map(|b| b.boot_id.as_str()), Some("boot-1"));
        assert!(matches!(end, Some(End::Failed { reason, answered: None }) if reason == "hung"));
        let a2 = h.attempt("a", 2).expect("attempt 2");
        assert_eq!(a2.warnings, ["slow"]);
        assert_eq!(a2.step, Some((7, Step::Switching)));
        assert_eq!(h.last_started.map(|i| &h.attempts[i].attempt), Some(&2));
        assert_eq!(h.warnings, ["campaign"]);
        // The campaign's state is the same fold's.
        let a = h.campaign.point("a").expect("planned");
        assert_eq!((a.attempts, a.open, a.failures.len()), (2, Some(2), 1));
        assert!(h.attempt("b", 1).is_none());
    }

    /// The last run of an attempt is the last one recorded, whichever workload it was.
    #[test]
    fn the_last_run_is_the_last_recorded() {
        let run = |at_workload: &str, phase, index| Event::Sample {
            point: "a".into(),
            attempt: 1,
            workload: at_workload.into(),
            case: String::new(),
            phase,
            index,
            retry: 0,
            status: crate::results::samples::Status::Ok,
            elapsed_s: 1.0,
            error: None,
            raw: None,
            leftovers: Vec::new(),
            dropped_bytes: None,
            values: None,
            rows_sha256: None,
            kept: Vec::new(),
        };
        use crate::results::samples::Phase;
        let h = History::of(&[
            started("a", 1),
            run("long-name", Phase::Warmup, 1),
            run("w", Phase::Sample, 2),
        ]);
        let a = h.attempt("a", 1).expect("named");
        assert_eq!(a.last_run, Some((2, ("w".to_owned(), String::new(), 2))));
        assert_eq!(a.step, Some((2, Step::Run(Phase::Sample))));
        assert!(a.remarkable_runs.is_empty());
    }

    /// The open attempt of each point is set aside with the rows counted for it.
    #[test]
    fn open_attempts_are_discarded_with_their_rows() {
        let h = History::of(&[header(&["a", "b"]), started("a", 1), started("b", 3)]);
        let rows = BTreeMap::from([(("b".to_owned(), 3), 7)]);
        assert_eq!(
            h.campaign.discards(&rows),
            [
                Event::PointDiscarded {
                    point: "a".into(),
                    attempt: 1,
                    rows: 0,
                },
                Event::PointDiscarded {
                    point: "b".into(),
                    attempt: 3,
                    rows: 7,
                },
            ]
        );
    }
}
