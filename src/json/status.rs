//! `aba status --json`: where a campaign stands, from its journal (and samples.csv for the
//! sample counts), point by point, with the step the open attempt last reached.

use serde::Serialize;

use crate::{
    json::{FORMAT, Kind},
    results::{
        journal::{CampaignState, Event, Journal, PointState, Step},
        samples::{Phase, SampleTable, Status},
    },
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
    /// The document of `journal` (its `state`), with `table` when samples.csv was read and the
    /// estimate of the plan's `eta_per_point` seconds.
    #[must_use]
    pub fn new(
        journal: &'a Journal,
        state: &'a CampaignState,
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
            current: current_step(journal),
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
fn current_step(journal: &Journal) -> Option<CurrentStep> {
    let history = journal.history();
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
