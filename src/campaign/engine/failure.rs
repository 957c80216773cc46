//! What can go wrong in a campaign, as values: why a point attempt failed ([`Failure`], with
//! its typed cause), what that costs ([`Failure::retried`]), and why a campaign stopped
//! ([`Stop`]), including the report on a kernel that failed too often with the console
//! excerpt.
//!
//! A failure is written out once, by [`crate::causes::one_line`]: the journal's `reason`, the
//! list of a kernel's failures and the notification's `{reason}` all read the same text.

use std::{collections::HashMap, fmt, path::PathBuf};

use thiserror::Error;

use crate::{
    campaign::{extract::RunFailure, lock::LockError, restore::RestoreError, tuning::TuneError},
    causes::one_line,
    kernel::{proof::ProofFailure, switch::SwitchError},
    recipe::ident::{KernelLabel, PointLabel, Release},
    results::{journal::JournalError, samples::SamplesError, verify::VerifyError},
    target::transport::{ExitOutcome, TransportError},
};

/// Why a point attempt (or the start of a campaign) did not go through.
#[derive(Debug, Error)]
pub enum Failure {
    /// A command or a copy on the target failed in transport.
    #[error("{doing}")]
    Transport {
        /// What was being done: `workload `w` at point `a``, `reconnecting`.
        doing: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// The target's host key is unknown or changed.
    #[error("aba stopped and sends no further command to this target ({doing})")]
    HostKey {
        /// What was being done.
        doing: String,
        /// The refusal, with the fingerprint and the fix.
        #[source]
        source: TransportError,
    },
    /// The default boot's command line could not be read.
    #[error("cannot read the default boot's command line")]
    BaseCmdline(#[source] crate::kernel::proof::FactsError),
    /// The journal could not be written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// samples.csv could not be written.
    #[error(transparent)]
    Samples(#[from] SamplesError),
    /// A file of the results directory (`env/`) or of the recipe could not be used.
    #[error("cannot {action} {}", path.display())]
    File {
        /// `write`, `read`, `read the length of`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Kernel files are missing on the target; checked before the first switch.
    #[error(
        "kernel files missing on target `{target}`, so no point was started:\n  - {}\n(install the kernels, or set `image`/`initrd` in [kernels]; `aba preflight` checks this too)",
        missing.join("\n  - ")
    )]
    KernelsMissing {
        /// The target.
        target: String,
        /// `kernel `a` (release): path`, one per file.
        missing: Vec<String>,
    },
    /// The attempt's rows could not be checked against the journal.
    #[error("cannot verify the attempt's rows against the journal")]
    Verify(#[source] VerifyError),
    /// The attempt's rows and records disagree.
    #[error(
        "the journal and samples.csv disagree about this attempt ({count} difference(s)), so it is not counted:\n{differences}"
    )]
    Disagree {
        /// How many differences.
        count: usize,
        /// Them, one per line.
        differences: String,
    },
    /// The target refused to load or select the kernel: the same request would be refused
    /// again.
    #[error("switch to kernel `{kernel}` failed, and would fail again")]
    SwitchRefused {
        /// The kernel.
        kernel: KernelLabel,
        /// Why.
        #[source]
        source: SwitchError,
    },
    /// The switch did not reach a new boot.
    #[error("switch to kernel `{kernel}` failed")]
    Switch {
        /// The kernel.
        kernel: KernelLabel,
        /// Why.
        #[source]
        source: SwitchError,
    },
    /// The new boot is not the one the point asked for.
    #[error("boot not proven for kernel `{kernel}`{}", if *power_cycled { " after a power cycle" } else { "" })]
    Proof {
        /// The kernel.
        kernel: KernelLabel,
        /// Whether the power-cycle command brought the machine back.
        power_cycled: bool,
        /// What the proof found.
        #[source]
        source: ProofFailure,
        /// The boot that answered instead, as the proof read it.
        answered: Box<crate::kernel::proof::BootFacts>,
    },
    /// Another campaign holds the target now.
    #[error("this campaign stops rather than measure beside another one")]
    LockBusy(#[source] LockError),
    /// The target's lock marker could not be checked.
    #[error(transparent)]
    Lock(LockError),
    /// Tuning failed; nothing was measured.
    #[error("tuning failed before any sample")]
    Tuning(#[source] TuneError),
    /// A resume on a boot an earlier run tuned cannot learn the machine's own values from
    /// aba's ledger: tuning again would lose them.
    #[error("the settings an earlier run changed on this boot cannot be put back")]
    Untuned(#[source] RestoreError),
    /// The work directory (or a folder in it) could not be created.
    #[error("cannot create work directory {dir}: {stderr}")]
    Workdir {
        /// The directory.
        dir: String,
        /// What `mkdir` said.
        stderr: String,
    },
    /// A setup or teardown command failed.
    #[error("{what} command `{command}` failed: {outcome}{tail}; raw output saved in {raw}")]
    Command {
        /// `setup` or `teardown`.
        what: &'static str,
        /// The recipe's command.
        command: String,
        /// How it ended.
        outcome: ExitOutcome,
        /// ` (last stderr lines)`, or nothing.
        tail: String,
        /// Where its output was saved.
        raw: String,
    },
    /// A workload run failed (and its retries did too).
    #[error("{run}: {failure}; raw output saved in {raw}")]
    Run {
        /// `workload `w` at point `a` (sample 3)`.
        run: String,
        /// What was wrong with it.
        failure: RunFailure,
        /// Where its output was saved.
        raw: String,
    },
    /// After a lost connection, another boot answered.
    #[error(
        "the target rebooted on its own during point {point} (boot_id changed); the point is redone from a fresh boot"
    )]
    Rebooted {
        /// The point.
        point: PointLabel,
    },
    /// After a lost connection, the target did not come back.
    #[error("lost the target during point {point} ({reason}) and could not reconnect")]
    Unreachable {
        /// The point.
        point: PointLabel,
        /// How the connection was lost.
        reason: String,
        /// Why reconnecting (or reading the boot after it) failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Failure {
    /// Whether another attempt of the point, from a fresh boot, may succeed. Not when the same
    /// thing would fail the same way (a kernel that cannot be loaded, missing files), or when
    /// going on is wrong (an untrusted host key, another campaign on the target, results that
    /// cannot be written or do not agree).
    pub fn retried(&self) -> bool {
        match self {
            Failure::Transport { .. }
            | Failure::Switch { .. }
            | Failure::Proof { .. }
            | Failure::Lock(_)
            | Failure::Tuning(_)
            | Failure::Workdir { .. }
            | Failure::Command { .. }
            | Failure::Run { .. }
            | Failure::Rebooted { .. }
            | Failure::Unreachable { .. } => true,
            Failure::HostKey { .. }
            | Failure::BaseCmdline(_)
            | Failure::Journal(_)
            | Failure::Samples(_)
            | Failure::File { .. }
            | Failure::KernelsMissing { .. }
            | Failure::Verify(_)
            | Failure::Disagree { .. }
            | Failure::Untuned(_)
            | Failure::SwitchRefused { .. }
            | Failure::LockBusy(_) => false,
        }
    }

    /// How the connection was lost, when this is a lost connection: worth a reconnect and a
    /// `boot_id` check before the step is repeated.
    pub fn connection_lost(&self) -> Option<&str> {
        match self {
            Failure::Transport {
                source: TransportError::ConnectionLost { reason, .. },
                ..
            } => Some(reason),
            _ => None,
        }
    }
}

/// A failure inside a point, or Ctrl-C.
#[derive(Debug)]
pub(super) enum PointError {
    /// The attempt failed; [`Failure::retried`] says what it costs.
    Failed(Box<Failure>),
    /// Ctrl-C / SIGTERM.
    Interrupted,
}

impl From<Failure> for PointError {
    fn from(failure: Failure) -> Self {
        PointError::Failed(Box::new(failure))
    }
}

impl From<JournalError> for PointError {
    fn from(e: JournalError) -> Self {
        Failure::Journal(e).into()
    }
}

impl From<SamplesError> for PointError {
    fn from(e: SamplesError) -> Self {
        Failure::Samples(e).into()
    }
}

/// A transport error met while `doing` something in a point.
pub(super) fn transport_failure(e: TransportError, doing: impl Into<String>) -> PointError {
    let doing = doing.into();
    match e {
        TransportError::Interrupted { .. } => PointError::Interrupted,
        TransportError::HostKey { .. } => Failure::HostKey { doing, source: e }.into(),
        other => Failure::Transport {
            doing,
            source: other,
        }
        .into(),
    }
}

/// One failed attempt of a kernel's point, as the failure report lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PastFailure {
    /// The point.
    pub point: PointLabel,
    /// Its attempt.
    pub attempt: u32,
    /// Why, on one line (the journal's `reason`).
    pub reason: String,
}

impl Failure {
    /// The boot that answered when it was not the one asked for: for the journal's
    /// `point_failed` and so for run-audit.tsv.
    pub(super) fn answered(&self) -> Option<crate::kernel::proof::BootFacts> {
        match self {
            Failure::Proof { answered, .. } => Some((**answered).clone()),
            _ => None,
        }
    }
}

impl fmt::Display for PastFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "point `{}` attempt {}: {}",
            self.point, self.attempt, self.reason
        )
    }
}

/// Every failed attempt of every kernel in this campaign (earlier runs included), for the
/// retry policy: a kernel whose points failed more than `point_retries` times stops it.
#[derive(Debug, Default)]
pub(super) struct KernelFailures(HashMap<KernelLabel, Vec<PastFailure>>);

impl KernelFailures {
    /// Records a failure of `kernel`'s point; returns the kernel's failures so far.
    pub(super) fn record(&mut self, kernel: &KernelLabel, failure: PastFailure) -> &[PastFailure] {
        let list = self.0.entry(kernel.clone()).or_default();
        list.push(failure);
        list
    }
}

/// What the console log says about a kernel that failed.
#[derive(Debug)]
pub enum Console {
    /// The lines that matter (panics, oopses, the boot's last lines).
    Excerpt {
        /// The log.
        path: PathBuf,
        /// The excerpt, as [`crate::kernel::console::excerpt`] writes it.
        text: String,
    },
    /// The log gained nothing during the attempt.
    Empty {
        /// The log.
        path: PathBuf,
    },
    /// The log could not be read.
    Unreadable {
        /// The log.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl Console {
    /// What the inventory's `console_log` gained since byte `from`, where it ended when the
    /// failed attempt began: this attempt's boot, never a panic of an earlier campaign.
    pub fn read_since(path: PathBuf, from: u64) -> Console {
        match crate::kernel::console::since(&path, from) {
            Ok(bytes) => match crate::kernel::console::excerpt(&bytes) {
                Some(text) => Console::Excerpt { path, text },
                None => Console::Empty { path },
            },
            Err(error) => Console::Unreadable { path, error },
        }
    }
}

impl fmt::Display for Console {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Console::Excerpt { path, text } => write!(
                f,
                "from the console log {}, as this attempt wrote it, {text}",
                path.display()
            ),
            Console::Empty { path } => write!(
                f,
                "(console log {} has nothing from this attempt)",
                path.display()
            ),
            Console::Unreadable { path, error } => {
                write!(f, "(console log {} unreadable: {error})", path.display())
            }
        }
    }
}

/// A kernel that failed more often than `point_retries` allows.
#[derive(Debug)]
pub struct KernelReport {
    /// The kernel.
    pub kernel: KernelLabel,
    /// Its release.
    pub release: Release,
    /// The point that failed last.
    pub point: PointLabel,
    /// Every failure of the kernel in this campaign, oldest first.
    pub failures: Vec<PastFailure>,
    /// The last failure, typed.
    pub last: Failure,
    /// The console log's excerpt, when the inventory has one.
    pub console: Option<Console>,
}

impl fmt::Display for KernelReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.failures.len();
        write!(
            f,
            "kernel `{}` ({}) failed {n} time{}, at point `{}`:",
            self.kernel,
            self.release,
            if n == 1 { "" } else { "s" },
            self.point
        )?;
        for failure in &self.failures {
            write!(f, "\n  - {failure}")?;
        }
        if let Some(console) = &self.console {
            write!(f, "\n{console}")?;
        }
        Ok(())
    }
}

/// Why a campaign stopped before its end; the directory stays resumable. Its text, on one
/// line with every cause, is what the journal's `stopped` record and `{reason}` say.
#[derive(Debug)]
pub enum Stop {
    /// Before the first point (connecting, checking the kernels).
    Start(Failure),
    /// A point attempt failed in a way another attempt would not fix.
    Point {
        /// The point.
        point: PointLabel,
        /// The attempt.
        attempt: u32,
        /// Why.
        cause: Failure,
    },
    /// A kernel failed more often than `point_retries` allows.
    Kernel(Box<KernelReport>),
    /// A failed attempt could not be journaled.
    Journal(JournalError),
    /// The whole directory's journal and samples.csv could not be checked.
    Verify(VerifyError),
    /// The whole directory's journal and samples.csv disagree.
    Disagree {
        /// How many differences.
        count: usize,
        /// Them, one per line.
        differences: String,
        /// The results directory.
        dir: PathBuf,
    },
    /// A look of an extended campaign could not analyse the results so far, so it cannot
    /// decide whether to extend; resume takes the look again.
    Look {
        /// The look.
        look: u32,
        /// Why the analysis failed.
        error: Box<crate::analysis::AnalysisError>,
    },
    /// The command's stopping rule (`aba bisect`'s step) could not decide a look.
    LookRule {
        /// The look.
        look: u32,
        /// Why, as the rule said it.
        why: String,
    },
    /// The journal could not record how the run ended; it must not count as finished.
    Unrecorded {
        /// How the run ended.
        outcome: Box<Outcome>,
        /// The journal's errors.
        errors: Vec<JournalError>,
    },
}

impl Stop {
    /// The typed failure behind the stop, if one is.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Stop::Start(f) | Stop::Point { cause: f, .. } => Some(f),
            Stop::Kernel(report) => Some(&report.last),
            Stop::Unrecorded { outcome, .. } => match outcome.as_ref() {
                Outcome::Stopped(stop) => stop.failure(),
                Outcome::Finished | Outcome::Interrupted => None,
            },
            Stop::Journal(_)
            | Stop::Verify(_)
            | Stop::Disagree { .. }
            | Stop::Look { .. }
            | Stop::LookRule { .. } => None,
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Start(failure) => f.write_str(&one_line(failure)),
            Stop::Point {
                point,
                attempt,
                cause,
            } => write!(f, "point `{point}` attempt {attempt}: {}", one_line(cause)),
            Stop::Kernel(report) => report.fmt(f),
            Stop::Journal(e) => f.write_str(&one_line(e)),
            Stop::Verify(e) => write!(
                f,
                "cannot verify the journal against samples.csv: {}",
                one_line(e)
            ),
            Stop::Disagree {
                count,
                differences,
                dir,
            } => write!(
                f,
                "the journal and samples.csv disagree ({count} difference(s)); the results cannot be trusted as they are:\n{differences}\n(`aba verify {}` lists them again)",
                dir.display()
            ),
            Stop::Look { look, error } => write!(
                f,
                "look {look} of the extended campaign could not analyse the results so far: {}",
                one_line(error.as_ref())
            ),
            Stop::LookRule { look, why } => {
                write!(
                    f,
                    "look {look} could not be decided by the step's rule: {why}"
                )
            }
            Stop::Unrecorded { outcome, errors } => {
                match outcome.as_ref() {
                    Outcome::Finished => f.write_str("every point is done")?,
                    Outcome::Stopped(stop) => stop.fmt(f)?,
                    Outcome::Interrupted => f.write_str("interrupted")?,
                }
                let errors: Vec<String> = errors.iter().map(|e| one_line(e)).collect();
                write!(
                    f,
                    "; but the journal could not record it: {}",
                    errors.join("; ")
                )
            }
        }
    }
}

/// How a campaign run ended.
#[derive(Debug)]
pub enum Outcome {
    /// Every point is done.
    Finished,
    /// Stopped before the end; the directory is resumable.
    Stopped(Stop),
    /// Ctrl-C / SIGTERM; the directory is resumable.
    Interrupted,
}

#[cfg(test)]
mod tests {
    use super::{Failure, PastFailure, Stop};
    use crate::{causes::one_line, recipe::ident::PointLabel, target::transport::TransportError};

    fn lost() -> TransportError {
        TransportError::ConnectionLost {
            target: "root@box:22".into(),
            reason: "keepalive unanswered".into(),
        }
    }

    /// A failure reads as before the causes were typed: message, then each cause once.
    #[test]
    fn failures_read_on_one_line_with_their_causes() {
        let f = Failure::Transport {
            doing: "workload `w` at point `a`".into(),
            source: lost(),
        };
        assert_eq!(
            one_line(&f),
            "workload `w` at point `a`: connection to root@box:22 lost: keepalive unanswered"
        );
        assert_eq!(f.connection_lost(), Some("keepalive unanswered"));
        assert!(f.retried());
        let stop = Stop::Point {
            point: PointLabel::new("a"),
            attempt: 2,
            cause: f,
        };
        assert!(
            stop.to_string()
                .starts_with("point `a` attempt 2: workload `w`")
        );
        assert!(matches!(stop.failure(), Some(Failure::Transport { .. })));
    }

    /// A host-key refusal and a full disk are different values, and neither is retried.
    #[test]
    fn what_must_not_go_on_is_not_retried() {
        let key = Failure::HostKey {
            doing: "reconnecting".into(),
            source: TransportError::HostKey {
                target: "box:22".into(),
                reason: "CHANGED".into(),
            },
        };
        let disk = Failure::File {
            action: "write",
            path: "env/a-1.json".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert!(!key.retried() && !disk.retried());
        assert!(one_line(&key).contains("sends no further command"));
        assert!(one_line(&disk).contains("No space left on device"));
        let past = PastFailure {
            point: PointLabel::new("b"),
            attempt: 1,
            reason: one_line(&disk),
        };
        assert!(
            past.to_string()
                .starts_with("point `b` attempt 1: cannot write")
        );
    }
}
