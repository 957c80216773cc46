//! The order of points and the attempt policy: connect once, check the kernels, then run every
//! point that is not done; a failed attempt is journaled and retried from a fresh boot until
//! its kernel failed more than `point_retries` times; at the end, the whole directory is
//! verified before the campaign may say it finished.

use std::time::{Duration, Instant};

use super::{
    AttemptId, Engine,
    failure::{Failure, KernelReport, PastFailure, PointError, Stop, transport_failure},
};
use crate::{
    campaign::{
        eta::Eta,
        events::{CampaignEvent, Step},
        plan::PlannedPoint,
    },
    causes::one_line,
    kernel::{
        proof::{base_cmdline, read_facts},
        switch::missing_kernel_files,
    },
    results::{
        journal::{CampaignState, Event, now_rfc3339},
        verify::{Scope, verify},
    },
    target::transport::TransportError,
};

/// What one point's attempts came to.
enum PointEnd {
    Done,
    Stopped(Stop),
    Interrupted,
}

impl Engine<'_> {
    pub(super) fn run_points(&mut self, state: &CampaignState) -> super::Outcome {
        match self.connect_first() {
            Ok(()) => {}
            Err(PointError::Interrupted) => return super::Outcome::Interrupted,
            Err(PointError::Failed(f)) => return super::Outcome::Stopped(Stop::Start(*f)),
        }
        let mut next = 0;
        loop {
            // Indexed: a look appends to the plan while this loop walks it.
            while let Some(point) = self.plan.points.get(next).cloned() {
                next += 1;
                // A point a look appended in this run has no state yet: it is fresh.
                let (done, attempts) = state
                    .point(&point.label)
                    .map_or((false, 0), |ps| (ps.done.is_some(), ps.attempts));
                if done {
                    continue;
                }
                match self.run_attempts(&point, attempts) {
                    PointEnd::Done => {}
                    PointEnd::Stopped(stop) => return super::Outcome::Stopped(stop),
                    PointEnd::Interrupted => return super::Outcome::Interrupted,
                }
            }
            match self.look() {
                Ok(true) => {}
                Ok(false) => break,
                Err(stop) => return super::Outcome::Stopped(*stop),
            }
        }
        self.verify_all()
    }

    /// Attempts `point` (after `attempts` earlier ones) until it is done or the policy gives up.
    fn run_attempts(&mut self, point: &PlannedPoint, mut attempt: u32) -> PointEnd {
        loop {
            attempt += 1;
            self.clock.point_started();
            // Where the console log ends now: a failure quotes only what follows.
            self.console_from = self
                .target
                .console_log_in(&self.dir.root)
                .and_then(|p| std::fs::metadata(p).ok())
                .map_or(0, |m| m.len());
            let failure = match self.run_point(AttemptId { point, attempt }) {
                Ok(()) => {
                    self.done += 1;
                    let elapsed = self.clock.point_done();
                    self.observer.event(&CampaignEvent::PointDone {
                        name: point.name(),
                        elapsed,
                        eta: self.remaining_eta(),
                    });
                    return PointEnd::Done;
                }
                Err(PointError::Interrupted) => return PointEnd::Interrupted,
                Err(PointError::Failed(f)) if !f.retried() => {
                    return PointEnd::Stopped(Stop::Point {
                        point: point.label.clone(),
                        attempt,
                        cause: *f,
                    });
                }
                Err(PointError::Failed(f)) => *f,
            };
            if let Some(stop) = self.attempt_failed(point, attempt, failure) {
                return PointEnd::Stopped(stop);
            }
        }
    }

    /// Journals a failed attempt that may be retried; the stop when its kernel failed too often.
    fn attempt_failed(
        &mut self,
        point: &PlannedPoint,
        attempt: u32,
        failure: Failure,
    ) -> Option<Stop> {
        let reason = one_line(&failure);
        let failures = self
            .kernel_failures
            .record(
                &point.kernel,
                PastFailure {
                    point: point.label.clone(),
                    attempt,
                    reason: reason.clone(),
                },
            )
            .to_vec();
        let give_up = failures.len() > self.recipe.point_retries as usize;
        if let Err(e) = self.journal.append(&Event::PointFailed {
            point: point.label.to_string(),
            attempt,
            kernel: point.kernel.to_string(),
            reason: reason.clone(),
            answered: failure.answered(),
            time: now_rfc3339(),
        }) {
            return Some(Stop::Journal(e));
        }
        self.observer.event(&CampaignEvent::PointFailed {
            name: point.name(),
            reason,
            retry: !give_up,
        });
        give_up.then(|| {
            Stop::Kernel(Box::new(KernelReport {
                kernel: point.kernel.clone(),
                release: point.release.clone(),
                point: point.label.clone(),
                failures,
                last: failure,
                console: self
                    .target
                    .console_log_in(&self.dir.root)
                    .map(|path| super::failure::Console::read_since(path, self.console_from)),
            }))
        })
    }

    /// The whole directory's journal against its samples, after the last point: a difference
    /// means a sample was lost or mislabelled, and the campaign must not say it finished.
    fn verify_all(&mut self) -> super::Outcome {
        match verify(
            self.recipe,
            &self.dir.journal_path(),
            &self.dir.samples_path(),
            Scope::All,
        ) {
            Ok(v) if v.is_clean() => super::Outcome::Finished,
            Ok(v) => super::Outcome::Stopped(Stop::Disagree {
                count: v.differences.len(),
                differences: v.describe(),
                dir: self.dir.root.clone(),
            }),
            Err(e) => super::Outcome::Stopped(Stop::Verify(e)),
        }
    }

    /// The time left for the points not done yet, from the points this run measured.
    pub(super) fn remaining_eta(&self) -> Eta {
        self.clock
            .remaining(self.plan.points.len().saturating_sub(self.done))
    }

    /// Connects before the first point and, for a method that builds the kernel's command
    /// line, captures the default boot's.
    fn connect_first(&mut self) -> Result<(), PointError> {
        self.step(Step::Connecting);
        let deadline = Instant::now() + self.target.boot_timeout.max(Duration::from_secs(30));
        self.transport.reconnect(deadline).map_err(|e| match e {
            TransportError::Interrupted { .. } => PointError::Interrupted,
            other => PointError::from(Failure::Transport {
                doing: format!("cannot connect to target `{}`", self.target.name),
                source: other,
            }),
        })?;
        self.check_kernels_present()?;
        // A killed run may have left a one-shot entry selected: the first switch must not
        // race it, and the default boot's command line is read without it.
        self.clean_boot_loader(None, None)?;
        if self.target.switch.method().builds_cmdline() && self.base_cmdline.is_none() {
            let captured = match &self.target.base_cmdline {
                Some(pinned) => pinned.clone(),
                None => {
                    read_facts(self.transport)
                        .map_err(Failure::BaseCmdline)?
                        .cmdline
                }
            };
            // Only the boot loader's own words go; each point drops what its kernel sets
            // (SwitchRequest::full_cmdline).
            let base = base_cmdline(&captured, &[]);
            self.journal.append(&Event::BaseCmdline {
                cmdline: base.clone(),
            })?;
            self.info(format!("base kernel command line: {base}"));
            self.base_cmdline = Some(base);
        }
        Ok(())
    }

    /// Before the first switch: every kernel's image and initrd are on the target when the
    /// method boots them from there, so that a release that exists nowhere stops the run at
    /// once instead of after a point was measured, and is not retried.
    fn check_kernels_present(&mut self) -> Result<(), PointError> {
        if !self.target.switch.method().boots_target_files() {
            return Ok(());
        }
        let missing = missing_kernel_files(self.transport, self.recipe.kernels.values())
            .map_err(|e| transport_failure(e, "checking the kernels on the target"))?;
        if missing.is_empty() {
            return Ok(());
        }
        Err(PointError::from(Failure::KernelsMissing {
            target: self.target.name.clone(),
            missing,
        }))
    }
}
