//! What the engine tells the outside world while it runs. The engine never prints: progress
//! bars, plain log lines and tests subscribe to these events.

use std::time::Duration;

use crate::recipe::ident::PointLabel;

/// A step inside a point, for the progress display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Connecting to the target.
    Connecting,
    /// Preparing and triggering the kernel switch.
    Switching,
    /// Waiting for the new boot to answer.
    Booting,
    /// The boot did not come back; running the power-cycle command.
    PowerCycling,
    /// Proving the boot.
    Proving,
    /// Letting the boot settle.
    Settling,
    /// Applying and reading back settings.
    Tuning,
    /// Recording the environment.
    Snapshot,
    /// Copying files.
    Uploading,
    /// Running setup commands.
    Setup,
    /// Running a workload case.
    Workload {
        /// 1-based case number.
        index: usize,
        /// Cases at this point.
        total: usize,
        /// `workload[case]`.
        name: String,
    },
    /// Running teardown commands.
    Teardown,
    /// Counting kernel warnings and failed units.
    Audit,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Connecting => f.write_str("connecting"),
            Step::Switching => f.write_str("switching kernel"),
            Step::Booting => f.write_str("booting"),
            Step::PowerCycling => f.write_str("power-cycling"),
            Step::Proving => f.write_str("proving boot"),
            Step::Settling => f.write_str("settling"),
            Step::Tuning => f.write_str("tuning"),
            Step::Snapshot => f.write_str("recording environment"),
            Step::Uploading => f.write_str("copying files"),
            Step::Setup => f.write_str("setup"),
            Step::Workload { index, total, name } => write!(f, "workload {index}/{total} {name}"),
            Step::Teardown => f.write_str("teardown"),
            Step::Audit => f.write_str("audit"),
        }
    }
}

/// One event.
#[derive(Clone, Debug, PartialEq)]
pub enum CampaignEvent {
    /// The campaign starts (or resumes).
    Started {
        /// Points in the plan.
        points: usize,
        /// Points already done (resume).
        done: usize,
        /// Estimated remaining time.
        eta: Duration,
        /// Results directory.
        dir: String,
    },
    /// A point attempt starts.
    PointStarted {
        /// 1-based order.
        order: usize,
        /// Label.
        label: PointLabel,
        /// Kernel label.
        kernel: String,
        /// Attempt.
        attempt: u32,
    },
    /// The point moved to a new step.
    Step(Step),
    /// A run of the current case finished.
    Run {
        /// `warmup` or `sample`.
        phase: &'static str,
        /// 1-based index within the phase.
        index: u32,
        /// Runs in the phase.
        of: u32,
        /// Whether it counted.
        ok: bool,
        /// Its wall time.
        elapsed: Duration,
    },
    /// A point finished.
    PointDone {
        /// Label.
        label: PointLabel,
        /// Wall time of the point.
        elapsed: Duration,
        /// Remaining ETA, from what was measured so far.
        eta: Duration,
    },
    /// A point attempt failed.
    PointFailed {
        /// Label.
        label: PointLabel,
        /// Why.
        reason: String,
        /// Whether it will be retried.
        retry: bool,
    },
    /// Something worth a line above the progress bars.
    Info(String),
    /// Something the user should look at.
    Warning(String),
}

/// Receives events.
pub trait Observer {
    /// Called for every event, in order.
    fn event(&mut self, event: &CampaignEvent);
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn event(&mut self, _event: &CampaignEvent) {}
}

/// An observer that keeps every event (tests).
#[derive(Debug, Default)]
pub struct Recorder(pub Vec<CampaignEvent>);

impl Observer for Recorder {
    fn event(&mut self, event: &CampaignEvent) {
        self.0.push(event.clone());
    }
}
