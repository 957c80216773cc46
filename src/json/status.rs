//! `aba status --json`: where a campaign stands, from its journal (and samples.csv for the
//! sample counts), point by point, with the step the open attempt last reached.

use serde::Serialize;

use crate::{
    json::{FORMAT, Kind},
    results::{
        journal::{Event, History, Journal, PointState, ReservationAction, Step},
        samples::{Phase, SampleTable, Status},
    },
    text::untrusted,
};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct StatusDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `status`.
    pub kind: Kind,
    /// The journal's header; `null` when the journal has none.
    pub campaign: Option<CampaignJson<'a>>,
    /// How the campaign stands.
    pub state: CampaignStatus,
    /// Why the last run stopped (`stopped`): the journal's reason, `interrupted` for a signal.
    pub stopped_reason: Option<&'a str>,
    /// Every planned point, in plan order.
    pub points: Vec<PointJson<'a>>,
    /// Points done.
    pub done: usize,
    /// Points planned.
    pub total: usize,
    /// The step the open attempt last reached; `null` when no attempt is open.
    pub current: Option<CurrentStep>,
    /// Estimated seconds left: the plan's estimate (as `aba check` prints it) for the points
    /// not done; `null` when the recipe copy or the target cannot be read here.
    pub eta_s: Option<f64>,
    /// The journal ends in a partial record (a runner killed mid-write).
    pub journal_truncated: bool,
    /// `samples.csv`'s rows; `null` when it does not exist yet.
    pub samples_csv: Option<RowCounts>,
    /// The lab scheduler's hold on the machine (`reserve`/`release` or a labgrid place), as
    /// the journal last recorded it; `null` when the target has none.
    pub reservation: Option<ReservationJson>,
}

/// The last `reservation` record of the journal: whether the campaign holds the machine.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct ReservationJson {
    /// The machine is held (the last record is a reservation with no release after it; a
    /// runner killed since still holds it).
    pub held: bool,
    /// When that record was written.
    pub since: String,
    /// The labgrid place, when the record names one (the client's `acquired place P`,
    /// `released place P`, or aba's `place P is still held …`).
    pub place: Option<String>,
    /// The labgrid reservation's token, when the record names one.
    pub token: Option<String>,
    /// The command's error, when the last one failed (a release that may have left the
    /// machine held).
    pub error: Option<String>,
}

impl ReservationJson {
    /// From the journal's last `reservation` record; `None` when there is none.
    #[must_use]
    pub fn of(journal: &Journal) -> Option<ReservationJson> {
        journal.events.iter().rev().find_map(|e| match e {
            Event::Reservation {
                action,
                output,
                error,
                time,
                ..
            } => Some(ReservationJson {
                held: *action == ReservationAction::Reserve || error.is_some(),
                // A journal is a stranger's file: what reaches the terminal is inert (a
                // place only as a plain word, the rest on one line with controls escaped).
                since: untrusted(time, 64).into_owned(),
                place: crate::labgrid::place_of(output),
                token: crate::labgrid::token_of(output),
                error: error.as_deref().map(|e| untrusted(e, 400).into_owned()),
            }),
            _ => None,
        })
    }

    /// One line for `aba status`.
    #[must_use]
    pub fn line(&self) -> String {
        let place = match (&self.place, &self.token) {
            (Some(p), Some(t)) => format!(" (labgrid place {p}, reservation {t})"),
            (Some(p), None) => format!(" (labgrid place {p})"),
            (None, Some(t)) => format!(" (labgrid reservation {t})"),
            (None, None) => String::new(),
        };
        match (&self.error, self.held) {
            (Some(e), _) => format!(
                "lab scheduler: the last reservation command failed at {}{place}: {e}",
                self.since
            ),
            (None, true) => format!(
                "lab scheduler: holds the machine since {}{place}",
                self.since
            ),
            (None, false) => format!(
                "lab scheduler: gave the machine back at {}{place}",
                self.since
            ),
        }
    }
}

/// What the journal's first record says.
#[derive(Debug, Serialize)]
pub struct CampaignJson<'a> {
    /// Recipe name.
    pub name: &'a str,
    /// Target name.
    pub target: &'a str,
    /// When it was created (RFC 3339).
    pub started: &'a str,
}

/// How a campaign stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CampaignStatus {
    /// Every point is done and the journal says so.
    Finished,
    /// The last run stopped on a failure or a signal; `aba resume` continues it.
    Stopped,
    /// Neither: a runner is at it, or was killed (`aba resume` continues it then).
    Running,
}

/// How one point stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    /// Its rows are valid.
    Done,
    /// An attempt started and did not end: running, or its runner was killed.
    InProgress,
    /// Its last attempt failed; the next run redoes it.
    Failed,
    /// Not started.
    Pending,
}

/// One point.
#[derive(Debug, Serialize)]
pub struct PointJson<'a> {
    /// Point label.
    pub label: &'a str,
    /// Done, in progress, failed or pending.
    pub state: PointStatus,
    /// The attempt counted (done) or under way (in progress); `null` otherwise.
    pub attempt: Option<u32>,
    /// Attempts started.
    pub attempts: u32,
    /// `ok` measured rows of that attempt in samples.csv (one per metric and run); `null`
    /// without an attempt or without samples.csv.
    pub samples: Option<usize>,
    /// Failed attempts with their reasons.
    pub failures: Vec<Failure<'a>>,
}

/// A failed attempt.
#[derive(Debug, Serialize)]
pub struct Failure<'a> {
    /// The attempt.
    pub attempt: u32,
    /// Why.
    pub reason: &'a str,
}

/// The step an open attempt last journaled.
#[derive(Debug, Serialize)]
pub struct CurrentStep {
    /// Point label.
    pub point: String,
    /// Attempt.
    pub attempt: u32,
    /// `started`, `switching`, `booted` (boot proven), `tuned`, `warmup` or `sample`.
    pub phase: StepPhase,
    /// The workload of the last run (`warmup`, `sample`); `null` before the first run.
    pub workload: Option<String>,
    /// Its case (empty without a matrix).
    pub case: Option<String>,
    /// The last run's 1-based index within its phase.
    pub index: Option<u32>,
}

/// How far an attempt got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepPhase {
    /// `point_started`.
    Started,
    /// `switching`: the kernel switch was triggered.
    Switching,
    /// `boot_proven`.
    Booted,
    /// `tuned`: settings applied and read back.
    Tuned,
    /// A warm-up run finished.
    Warmup,
    /// A measured run finished.
    Sample,
}

/// samples.csv's rows.
#[derive(Debug, Serialize)]
pub struct RowCounts {
    /// Every row.
    pub rows: usize,
    /// Rows of failed runs.
    pub failed: usize,
    /// Rows aba 0.1 rewrote as `discarded`.
    pub discarded: usize,
}

impl<'a> StatusDoc<'a> {
    /// The document of `journal` (its `history`, folded once by the caller), with `table`
    /// when samples.csv was read and the estimate of the plan's `eta_per_point` seconds.
    #[must_use]
    pub fn new(
        journal: &'a Journal,
        history: &'a History,
        table: Option<&SampleTable>,
        eta_per_point_s: Option<f64>,
    ) -> StatusDoc<'a> {
        let campaign = match journal.header() {
            Some(Event::Campaign {
                name, target, time, ..
            }) => Some(CampaignJson {
                name,
                target,
                started: time,
            }),
            _ => None,
        };
        let state = &history.campaign;
        let points: Vec<PointJson<'a>> = state
            .points
            .iter()
            .map(|p| PointJson::new(p, table))
            .collect();
        let done = state.points.iter().filter(|p| p.done.is_some()).count();
        let total = state.points.len();
        let status = if state.finished {
            CampaignStatus::Finished
        } else if state.stopped.is_some() {
            CampaignStatus::Stopped
        } else {
            CampaignStatus::Running
        };
        StatusDoc {
            format: FORMAT,
            kind: Kind::Status,
            campaign,
            state: status,
            stopped_reason: if status == CampaignStatus::Stopped {
                state.stopped.as_deref()
            } else {
                None
            },
            points,
            done,
            total,
            current: current_step(history),
            #[expect(
                clippy::cast_precision_loss,
                reason = "a point count is far below 2^52"
            )]
            eta_s: eta_per_point_s.map(|each| each * (total - done) as f64),
            journal_truncated: journal.truncated_tail,
            samples_csv: table.map(|t| RowCounts {
                rows: t.rows.len(),
                failed: t.rows.iter().filter(|r| r.status == Status::Failed).count(),
                discarded: t
                    .rows
                    .iter()
                    .filter(|r| r.status == Status::Discarded)
                    .count(),
            }),
            reservation: ReservationJson::of(journal),
        }
    }
}

impl<'a> PointJson<'a> {
    fn new(p: &'a PointState, table: Option<&SampleTable>) -> PointJson<'a> {
        let (state, attempt) = match (p.done, p.open) {
            (Some(a), _) => (PointStatus::Done, Some(a)),
            (None, Some(a)) => (PointStatus::InProgress, Some(a)),
            (None, None) if p.attempts > 0 => (PointStatus::Failed, None),
            (None, None) => (PointStatus::Pending, None),
        };
        let samples = attempt.and_then(|a| {
            table.map(|t| {
                t.rows
                    .iter()
                    .filter(|r| {
                        t.text(r.point) == p.label.as_str()
                            && r.attempt == a
                            && r.status == Status::Ok
                            && r.phase == Phase::Sample
                    })
                    .count()
            })
        });
        PointJson {
            label: p.label.as_str(),
            state,
            attempt,
            attempts: p.attempts,
            samples,
            failures: p
                .failures
                .iter()
                .map(|(attempt, reason)| Failure {
                    attempt: *attempt,
                    reason,
                })
                .collect(),
        }
    }
}

/// The last step of the attempt that started last, unless it ended (done, failed, discarded)
/// since.
fn current_step(history: &History) -> Option<CurrentStep> {
    let a = history.attempts.get(history.last_started?)?;
    let start = *a.starts.last()?;
    if a.ends.iter().any(|(at, _)| *at > start) {
        return None;
    }
    let phase = match a.step {
        Some((at, step)) if at > start => match step {
            Step::Switching => StepPhase::Switching,
            Step::Booted => StepPhase::Booted,
            Step::Tuned => StepPhase::Tuned,
            Step::Run(Phase::Warmup) => StepPhase::Warmup,
            Step::Run(Phase::Sample) => StepPhase::Sample,
        },
        _ => StepPhase::Started,
    };
    let run = a.last_run.as_ref().filter(|(at, _)| *at > start);
    Some(CurrentStep {
        point: a.point.clone(),
        attempt: a.attempt,
        phase,
        workload: run.map(|(_, (workload, _, _))| workload.clone()),
        case: run.map(|(_, (_, case, _))| case.clone()),
        index: run.map(|(_, (_, _, index))| *index),
    })
}

#[cfg(test)]
mod reservation_tests {
    use super::ReservationJson;
    use crate::results::journal::{Event, Journal, ReservationAction};

    fn journal(output: &str, error: Option<&str>, time: &str) -> Journal {
        Journal {
            events: vec![Event::Reservation {
                action: ReservationAction::Release,
                command: "x".to_owned(),
                output: output.to_owned(),
                error: error.map(str::to_owned),
                time: time.to_owned(),
            }],
            ..Journal::default()
        }
    }

    /// A forged record cannot put a control sequence on the tester's terminal through
    /// `aba status`, nor pass a shell word off as a place.
    #[test]
    fn a_forged_reservation_record_is_shown_inert() {
        let j = journal(
            "released place $(reboot)\nexport LG_TOKEN=AB12",
            Some("boom\u{1b}[2J\nsecond line"),
            "2026\u{1b}[31m",
        );
        let r = ReservationJson::of(&j).expect("a record");
        assert_eq!(r.place, None);
        assert_eq!(r.token.as_deref(), Some("AB12"));
        let line = r.line();
        assert!(!line.contains('\u{1b}') && !line.contains('\n'), "{line:?}");
        assert!(r.held, "a failed release may leave the machine held");
    }
}
