//! One point attempt: switch to the point's kernel and prove the boot, settle, tune, record
//! the environment, copy files and run setup, every workload case, teardown, the health check;
//! then the attempt's own rows and records are verified before it is journaled done.

use std::time::{Duration, Instant};

use super::{
    AttemptId, Boot, Engine,
    failure::{Failure, PointError},
};
use crate::{
    campaign::{
        environment::{Count, Health, WARNING_LINES, new_warning_lines},
        events::{CampaignEvent, Step, Warning},
        lock::LockError,
    },
    interrupt,
    kernel::{
        proof::prove,
        switch::{SwitchError, SwitchPhase, SwitchRequest, Switched, switch_to},
    },
    recipe::{ident::Release, model::ProbeWhen},
    results::{
        journal::{Event, now_rfc3339, now_rfc3339_micros},
        verify::{Scope, verify},
    },
};

/// Where an attempt's records and rows begin in the journal and samples.csv.
#[derive(Clone, Copy)]
struct Offsets {
    journal: u64,
    samples: u64,
    samples_lines: u64,
}

impl Engine<'_> {
    pub(super) fn run_point(&mut self, at: AttemptId<'_>) -> Result<(), PointError> {
        let offsets = self.offsets()?;
        let point = at.point;
        self.observer.event(&CampaignEvent::PointStarted {
            order: point.order,
            name: point.name(),
            kernel: point.kernel.to_string(),
            attempt: at.attempt,
        });
        self.journal.append(&Event::PointStarted {
            point: point.label.to_string(),
            attempt: at.attempt,
            time: now_rfc3339(),
        })?;

        let boot = self.switch_and_prove(at)?;
        // Kernel warnings count from the boot: a fresh boot's dmesg from its first line (one
        // logged while booting, settling, tuning or in setup is the point's), or, on a boot
        // the points share, from a mark taken now, before anything of this point ran.
        let before = if self.switches() {
            Health::fresh_boot()
        } else {
            self.with_reconnect(at, &boot, Self::health)?
        };
        // Every step below is safe to repeat, so a dropped connection costs a reconnect and
        // a boot_id check, not the point.
        self.with_reconnect(at, &boot, Self::claim_marker)?;
        self.clean_boot_loader(Some(&point.label), Some(at.attempt))?;
        self.settle()?;
        self.with_reconnect(at, &boot, |e| e.tune(at))?;
        self.with_reconnect(at, &boot, |e| e.snapshot(at))?;
        self.with_reconnect(at, &boot, |e| e.prepare_workdir(at))?;

        // Probes run outside the timed samples, never between them.
        self.run_probes(at, &boot, ProbeWhen::Before)?;
        let total = point.cases.len();
        for (i, case) in point.cases.iter().enumerate() {
            self.step(Step::Workload {
                index: i + 1,
                total,
                name: case.display_name(),
            });
            self.run_case(at, &boot, case)?;
        }
        self.run_probes(at, &boot, ProbeWhen::After)?;

        self.teardown(at, &boot)?;
        self.step(Step::Audit);
        let after = self.with_reconnect(at, &boot, Self::health)?;
        let new_warnings = self.new_kernel_warnings(at, &before, &after)?;
        self.verify_attempt(at, offsets)?;
        self.journal.append(&Event::PointDone {
            point: point.label.to_string(),
            attempt: at.attempt,
            dmesg_warnings: new_warnings,
            failed_units: after.failed_units,
            time: now_rfc3339(),
        })?;
        Ok(())
    }

    /// The lengths of the journal and samples.csv now: the check before `point_done` reads
    /// both files from here, by path.
    fn offsets(&self) -> Result<Offsets, PointError> {
        let path = self.dir.journal_path();
        let journal = std::fs::metadata(&path)
            .map_err(|source| Failure::File {
                action: "read the length of",
                path,
                source,
            })?
            .len();
        let (samples, samples_lines) = self.samples.position();
        Ok(Offsets {
            journal,
            samples,
            samples_lines,
        })
    }

    /// The dmesg warning lines that appeared during the point, journaled as a warning quoting
    /// exactly those lines; an uncountable dmesg is said so rather than counted as none.
    fn new_kernel_warnings(
        &mut self,
        at: AttemptId<'_>,
        before: &Health,
        after: &Health,
    ) -> Result<u32, PointError> {
        let label = &at.point.label;
        let warning = match (&before.dmesg_warnings, &after.dmesg_warnings) {
            (Count::Counted(b), Count::Counted(a)) => {
                let lines = new_warning_lines(before, after);
                let listed = u32::try_from(lines.len()).unwrap_or(u32::MAX);
                // Every new line is listed unless the point added more than the health check
                // reads; then the counts' difference says how many.
                let count = if lines.len() < WARNING_LINES {
                    listed
                } else {
                    a.saturating_sub(*b).max(listed)
                };
                if count == 0 {
                    return Ok(0);
                }
                Warning::Dmesg {
                    point: label.clone(),
                    count,
                    lines,
                }
            }
            (Count::Unreadable(printed), _) | (_, Count::Unreadable(printed)) => {
                Warning::DmesgUncounted {
                    point: label.clone(),
                    printed: printed.clone(),
                }
            }
        };
        let count = match &warning {
            Warning::Dmesg { count, .. } => *count,
            _ => 0,
        };
        self.warn(Some(label), warning)?;
        Ok(count)
    }

    /// Checks what the attempt appended to the journal and samples.csv before it is journaled
    /// done; a difference stops the campaign (the attempt stays open, so resume redoes it).
    fn verify_attempt(&mut self, at: AttemptId<'_>, offsets: Offsets) -> Result<(), PointError> {
        let scope = Scope::Attempt {
            point: &at.point.label,
            attempt: at.attempt,
            journal_offset: offsets.journal,
            samples_offset: offsets.samples,
            samples_lines: offsets.samples_lines,
            appended: &self.appended,
        };
        let found = verify(
            self.recipe,
            &self.dir.journal_path(),
            &self.dir.samples_path(),
            scope,
        )
        .map_err(Failure::Verify)?;
        if found.is_clean() {
            return Ok(());
        }
        Err(PointError::from(Failure::Disagree {
            count: found.differences.len(),
            differences: found.describe(),
        }))
    }

    fn switch_and_prove(&mut self, at: AttemptId<'_>) -> Result<Boot, PointError> {
        let point = at.point;
        let previous = self.last_boot_id.clone();
        if self.switches() {
            self.step(Step::Switching);
            self.journal.append(&Event::Switching {
                point: point.label.to_string(),
                attempt: at.attempt,
                method: self.target.switch.method().kind(),
                previous_boot_id: previous.clone(),
            })?;
        }
        let started = Instant::now();
        let switched = self.switch(at, previous.as_deref())?;
        if !switched.installed.is_empty() {
            // What `aba clean` may remove later is what the machine's own ledger says aba
            // installed, never what a journal lists.
            if let Some(build) = &self.recipe.kernels[&point.kernel].build {
                let recorded = self.ledger.record_installed(
                    &mut *self.transport,
                    &self.campaign,
                    &self.dir.root.display().to_string(),
                    &build.install_dir,
                    &switched.installed,
                );
                if let Err(e) = recorded {
                    self.warn(
                        Some(&point.label),
                        Warning::NotLedgered(crate::causes::one_line(&e)),
                    )?;
                }
            }
            self.journal.append(&Event::Installed {
                point: point.label.to_string(),
                attempt: at.attempt,
                kernel: point.kernel.to_string(),
                installed: switched.installed.clone(),
            })?;
        }
        if switched.power_cycled {
            self.warn(
                Some(&point.label),
                Warning::PowerCycled {
                    point: point.label.clone(),
                    command: self.target.power_cycle.clone().unwrap_or_default(),
                },
            )?;
        }
        self.step(Step::Proving);
        let boot = self.prove(at, &switched, previous)?;
        self.journal.append(&Event::BootProven {
            point: point.label.to_string(),
            attempt: at.attempt,
            boot_id: boot.boot_id.clone(),
            release: boot.release.clone(),
            cmdline: switched.facts.cmdline.clone(),
            switch_s: if self.switches() {
                started.elapsed().as_secs_f64()
            } else {
                0.0
            },
            login_s: switched.login_s,
            proof_s: self.switches().then_some(switched.proof_s),
            proven_at: Some(now_rfc3339_micros()),
        })?;
        self.prove_build(at, &switched)?;
        self.last_boot_id = Some(boot.boot_id.clone());
        Ok(boot)
    }

    /// For a kernel built on the host: proves that the build running is the one installed
    /// (its `/proc/version` and config), and journals how.
    fn prove_build(&mut self, at: AttemptId<'_>, switched: &Switched) -> Result<(), PointError> {
        let Some(build) = &self.recipe.kernels[&at.point.kernel].build else {
            return Ok(());
        };
        let facts = crate::build::proof::read(self.transport).map_err(|e| match e {
            crate::build::proof::BuildFactsError::Transport(source) => Failure::Transport {
                doing: format!(
                    "reading the build of the boot at point `{}`",
                    at.point.label
                ),
                source,
            },
            garbled => Failure::Proof {
                kernel: at.point.kernel.clone(),
                power_cycled: switched.power_cycled,
                source: crate::kernel::proof::ProofFailure::WrongBuild {
                    expected: build.version.to_string(),
                    found: garbled.to_string(),
                },
                answered: Box::new(switched.facts.clone()),
            },
        })?;
        let proof = crate::build::proof::prove(&facts, build).map_err(|source| Failure::Proof {
            kernel: at.point.kernel.clone(),
            power_cycled: switched.power_cycled,
            source,
            answered: Box::new(switched.facts.clone()),
        })?;
        self.journal.append(&Event::BuildProven {
            point: at.point.label.to_string(),
            attempt: at.attempt,
            proof,
        })?;
        Ok(())
    }

    /// Switches to the point's kernel; what the switch cost, typed.
    fn switch(
        &mut self,
        at: AttemptId<'_>,
        previous: Option<&str>,
    ) -> Result<Switched, PointError> {
        let point = at.point;
        let base = self.base_cmdline.clone().unwrap_or_default();
        let req = SwitchRequest {
            kernel: &self.recipe.kernels[&point.kernel],
            params: &point.cmdline,
            base_cmdline: &base,
            previous_boot_id: previous,
        };
        let observer = &mut *self.observer;
        switch_to(self.target.machine(), self.transport, &req, &mut |phase| {
            let step = match phase {
                SwitchPhase::Preparing | SwitchPhase::Triggered => Step::Switching,
                SwitchPhase::Waiting => Step::Booting,
                SwitchPhase::PowerCycling => Step::PowerCycling,
            };
            observer.event(&CampaignEvent::Step(step));
        })
        .map_err(|e| {
            let kernel = point.kernel.clone();
            PointError::from(match e {
                SwitchError::Interrupted => return PointError::Interrupted,
                SwitchError::HostKey(source) => Failure::HostKey {
                    doing: format!("switching to kernel `{kernel}`"),
                    source,
                },
                // The target refused to load or select the kernel: the same request would be
                // refused again, so the point is not retried.
                source @ SwitchError::Prepare { .. } => Failure::SwitchRefused { kernel, source },
                // A host file that changed or cannot be read would be refused again.
                source @ SwitchError::Install {
                    source:
                        crate::build::install::InstallError::Host(_)
                        | crate::build::install::InstallError::Modules(_)
                        | crate::build::install::InstallError::ForeignModules { .. },
                    ..
                } => Failure::SwitchRefused { kernel, source },
                source => Failure::Switch { kernel, source },
            })
        })
    }

    /// Proves the boot that answered: a fresh `boot_id` (when the method switches), the
    /// point's release (the first one seen for `running`), its parameters.
    fn prove(
        &mut self,
        at: AttemptId<'_>,
        switched: &Switched,
        previous: Option<String>,
    ) -> Result<Boot, PointError> {
        let facts = &switched.facts;
        let expected = match &at.point.release {
            Release::Running => self
                .pinned_release
                .get_or_insert_with(|| facts.release.clone())
                .clone(),
            Release::Named(release) => release.clone(),
        };
        let left = switched.previous_boot_id.clone().or(previous);
        let fresh = if self.switches() {
            left.as_deref()
        } else {
            None
        };
        prove(facts, &expected, &at.point.cmdline, fresh).map_err(|source| Failure::Proof {
            kernel: at.point.kernel.clone(),
            power_cycled: switched.power_cycled,
            source,
            answered: Box::new(facts.clone()),
        })?;
        Ok(Boot {
            boot_id: facts.boot_id.clone(),
            release: facts.release.clone(),
        })
    }

    /// A marker that did not survive the reboot is written again; one that another campaign
    /// wrote meanwhile stops this one.
    fn claim_marker(&mut self) -> Result<(), PointError> {
        let Some(lock) = self.lock else {
            return Ok(());
        };
        lock.claim_marker(self.transport).map_err(|e| {
            PointError::from(match e {
                busy @ LockError::Busy { .. } => Failure::LockBusy(busy),
                LockError::ConnectionLost { path, source, .. } => Failure::Transport {
                    doing: format!("checking the lock marker {path}"),
                    source: *source,
                },
                other => Failure::Lock(other),
            })
        })
    }

    fn settle(&mut self) -> Result<(), PointError> {
        if self.recipe.settle.is_zero() {
            return Ok(());
        }
        self.step(Step::Settling);
        let until = Instant::now() + self.recipe.settle;
        while Instant::now() < until {
            if interrupt::requested() {
                return Err(PointError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(100).min(until - Instant::now()));
        }
        Ok(())
    }
}
