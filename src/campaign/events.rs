//! What the engine tells the outside world while it runs. The engine never prints: progress
//! bars, plain log lines and tests subscribe to these events.

use std::time::Duration;

use super::{eta::Eta, load::Overload};
use crate::{
    recipe::ident::PointLabel,
    results::samples::{Phase, Status},
};

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
    /// Running a probe (`[[probe]]`), before or after the timed samples.
    Probe {
        /// The probe's name.
        name: String,
        /// `before` or `after`.
        when: &'static str,
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
            Step::Probe { name, when } => write!(f, "probe {name} ({when} the samples)"),
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
        /// The time left: unknown until a point of this run is done (the plan's estimate is
        /// a guess, not a measurement).
        eta: Eta,
        /// Results directory.
        dir: String,
    },
    /// A point attempt starts.
    PointStarted {
        /// 1-based order.
        order: usize,
        /// The point's name as a reader sees it (`a#1`; [`crate::point_name`]), never its
        /// identifier (`a-a`).
        name: String,
        /// Kernel label.
        kernel: String,
        /// Attempt.
        attempt: u32,
    },
    /// The point moved to a new step.
    Step(Step),
    /// A run of the current case finished.
    Run {
        /// Warm-up or measured.
        phase: Phase,
        /// 1-based index within the phase.
        index: u32,
        /// Runs in the phase.
        of: u32,
        /// Whether it counted.
        status: Status,
        /// Its wall time.
        elapsed: Duration,
        /// The time left, counted down within the point.
        eta: Eta,
    },
    /// A point finished.
    PointDone {
        /// The point's name as a reader sees it.
        name: String,
        /// Wall time of the point.
        elapsed: Duration,
        /// The time left, from the points measured so far.
        eta: Eta,
    },
    /// A point attempt failed.
    PointFailed {
        /// The point's name as a reader sees it.
        name: String,
        /// Why.
        reason: String,
        /// Whether it will be retried.
        retry: bool,
    },
    /// A look of an extended campaign (`[analysis] extend`) decided.
    Look {
        /// 1-based look.
        look: u32,
        /// The most looks.
        of: u32,
        /// `extend by b#2, a#3` or `stop`, with why.
        text: String,
        /// Points in the plan now.
        points: usize,
    },
    /// Something worth a line above the progress bars.
    Info(String),
    /// Something the user should look at.
    Warning(Warning),
}

/// Something a campaign met that the user should look at; journaled (as its text) when it
/// belongs to the campaign's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// New kernel warning lines appeared in dmesg during a point.
    Dmesg {
        /// The point.
        point: PointLabel,
        /// How many new lines.
        count: u32,
        /// The new lines (all of them unless there were more than the health check reads),
        /// oldest first; the note quotes the last [`DMESG_QUOTED`].
        lines: Vec<String>,
    },
    /// dmesg's warning lines could not be counted: the point's count is unknown.
    DmesgUncounted {
        /// The point.
        point: PointLabel,
        /// What the count printed.
        printed: String,
    },
    /// The boot did not come back; the power-cycle command brought the machine back.
    PowerCycled {
        /// The point.
        point: PointLabel,
        /// The power-cycle command as the inventory (or the labgrid place) gave it.
        command: String,
    },
    /// The target did not answer when the campaign was resumed (the killed runner may have
    /// left it in a boot that hung): the power-cycle command brought it back.
    RevivedOnResume {
        /// The command as it ran.
        command: String,
    },
    /// A run left processes behind; they were killed.
    LeftBehind {
        /// `workload[case]`.
        run: String,
        /// The point.
        point: PointLabel,
        /// Warm-up or measured.
        phase: Phase,
        /// Index within the phase.
        index: u32,
        /// `PID command line` of each.
        processes: Vec<String>,
    },
    /// A probe did not end as its `expect` says, or gave less than it should (a value not
    /// found, the ftrace profile not set up): said, never a failed point.
    Probe {
        /// The probe's name.
        probe: String,
        /// The point.
        point: PointLabel,
        /// What happened, on one line.
        text: String,
    },
    /// Output aba keeps as evidence (a passing check's) could not be written.
    NotKept(String),
    /// A run failed and is tried again.
    Retrying {
        /// Why it failed, on one line.
        failure: String,
        /// This retry's number.
        retry: u32,
        /// Retries allowed.
        retries: u32,
    },
    /// The connection dropped during a point; aba reconnects.
    ConnectionLost {
        /// The point.
        point: PointLabel,
        /// What was observed.
        reason: String,
    },
    /// The settings tuning changed could not be put back.
    NotRestored(String),
    /// What a switch installed could not be recorded in aba's ledger on the target.
    NotLedgered(String),
    /// The target's lock marker could not be removed.
    MarkerKept(String),
    /// aba's one-shot boot-loader entries could not be removed.
    BootEntriesKept(String),
    /// A record could not be journaled, at a moment where it can only be reported.
    NotJournaled(String),
    /// The interim reports could not be written (the campaign goes on).
    InterimReports(String),
    /// Before the first workload of this run, more tasks wanted a CPU than the target has
    /// online (read from the environment record).
    Loaded(Overload),
    /// A notification command failed.
    Notification(String),
    /// The inventory's `release` command failed: the lab scheduler may still hold the machine.
    ReleaseFailed(String),
    /// What the transport reported once: the persistent runner could not start (runs take
    /// the exec path), or aba's processes could not be kept off the pinned CPUs.
    Transport(String),
}

/// How many new dmesg warning lines a note quotes (the newest).
pub const DMESG_QUOTED: usize = 5;

/// How many characters of one quoted dmesg line a note shows.
const DMESG_LINE_CHARS: usize = 300;

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::Dmesg {
                point,
                count,
                lines,
            } => {
                let quoted = &lines[lines.len().saturating_sub(DMESG_QUOTED)..];
                let which = if quoted.len() == *count as usize {
                    String::new()
                } else {
                    format!(", the last {}", quoted.len())
                };
                let quoted: Vec<_> = quoted
                    .iter()
                    .map(|l| crate::text::untrusted(l, DMESG_LINE_CHARS))
                    .collect();
                write!(
                    f,
                    "{count} new kernel warning line(s) in dmesg during point {point}{which}: {}",
                    quoted.join(" | ")
                )
            }
            Warning::DmesgUncounted { point, printed } => write!(
                f,
                "the kernel warning lines in dmesg could not be counted at point {point} (the count printed `{}`); new warnings of this point are unknown",
                crate::text::quoted(printed)
            ),
            Warning::PowerCycled { point, command } => write!(
                f,
                "point {point}: the boot did not come back; the power-cycle command `{command}` was used"
            ),
            Warning::RevivedOnResume { command } => write!(
                f,
                "the target did not answer when the campaign was resumed (the killed run may have left it in a boot that hung); the power-cycle command `{command}` brought it back"
            ),
            Warning::LeftBehind {
                run,
                point,
                phase,
                index,
                processes,
            } => write!(
                f,
                "workload `{run}` at point `{point}` ({phase} {index}) left {} process(es) behind; killed: {}",
                processes.len(),
                processes.join("; ")
            ),
            Warning::Probe { probe, point, text } => {
                write!(f, "probe `{probe}` at point `{point}`: {text}")
            }
            Warning::NotKept(what) => write!(f, "output not kept: {what}"),
            Warning::Retrying {
                failure,
                retry,
                retries,
            } => write!(f, "{failure}; retrying ({retry}/{retries})"),
            Warning::ConnectionLost { point, reason } => write!(
                f,
                "connection lost during point {point} ({reason}); reconnecting"
            ),
            Warning::NotRestored(e) => write!(f, "could not restore settings: {e}"),
            Warning::NotLedgered(e) => write!(
                f,
                "what was installed could not be recorded in aba's ledger on the target, so `aba clean` will not remove it: {e}"
            ),
            Warning::MarkerKept(e) => {
                write!(f, "the target's lock marker could not be removed: {e}")
            }
            Warning::BootEntriesKept(e) => write!(
                f,
                "aba's one-shot boot entries could not be removed: {e}; the next campaign (or `aba resume`) on this target removes them"
            ),
            Warning::NotJournaled(e) => write!(f, "not journaled: {e}"),
            Warning::InterimReports(e) => write!(f, "interim reports not written: {e}"),
            Warning::Loaded(overload) => {
                write!(f, "before the first workload of this run, {overload}")
            }
            Warning::Notification(e) => write!(f, "notification command failed: {e}"),
            Warning::ReleaseFailed(e) => write!(
                f,
                "release command failed: {e}; the lab scheduler may still hold the machine"
            ),
            Warning::Transport(e) => write!(f, "{e}"),
        }
    }
}

/// Receives events.
pub trait Observer: Send {
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

#[cfg(test)]
mod tests {
    use super::{DMESG_QUOTED, Warning};
    use crate::recipe::ident::PointLabel;

    /// A dmesg note quotes the new lines, all of them when they are few, else the newest
    /// [`DMESG_QUOTED`] said as such: its count never disagrees with what it quotes.
    #[test]
    fn a_dmesg_note_says_how_many_of_the_new_lines_it_quotes() {
        let note = |n: u32| {
            Warning::Dmesg {
                point: PointLabel::new("b"),
                count: n,
                lines: (0..n).map(|i| format!("[{i}.0] WARNING: w{i}")).collect(),
            }
            .to_string()
        };
        assert_eq!(
            note(2),
            "2 new kernel warning line(s) in dmesg during point b: [0.0] WARNING: w0 | [1.0] WARNING: w1"
        );
        let many = note(8);
        assert!(
            many.starts_with("8 new kernel warning line(s) in dmesg during point b, the last 5: [3.0] WARNING: w3 |"),
            "{many}"
        );
        assert_eq!(many.matches("WARNING:").count(), DMESG_QUOTED);
    }
}
