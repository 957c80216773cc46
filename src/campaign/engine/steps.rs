//! What a point does on the target besides its workloads: tuning (journaled before the first
//! write), the environment record, the work directory with the recipe's files, setup and
//! teardown commands, and the health check. Each is safe to repeat after a reconnect.

use std::time::Duration;

use super::{
    AttemptId, Boot, Engine,
    failure::{Failure, PointError, transport_failure},
    shell::run_command,
};
use crate::{
    campaign::{
        environment::{self, Health},
        events::{Step, Warning},
        load, restore,
        tuning::{self, Saved},
    },
    results::{
        atomic::write_atomic,
        journal::{Event, now_rfc3339},
    },
    target::{quote::sh_quote, transport::TransportError},
    text::last_lines,
};

/// Deadline of the small commands aba itself runs (`mkdir -p`).
const SMALL: Duration = Duration::from_secs(60);

impl Engine<'_> {
    pub(super) fn tune(&mut self, at: AttemptId<'_>) -> Result<(), PointError> {
        if self.recipe.sysctls.is_empty() && self.recipe.tuning.is_empty() {
            return Ok(());
        }
        self.step(Step::Tuning);
        let boot_id = self.last_boot_id.clone().unwrap_or_default();
        let keeps_settings = !self.switches();
        if keeps_settings
            && self.saved_tuning.is_none()
            && let Some(claimed) = tuning::pending_for(&self.dir.journal_path(), &boot_id)?
        {
            // Resumed on a boot an earlier run tuned: the values it recorded are the
            // machine's own; what is there now is aba's. They come from the ledger, never
            // from the journal, which may come from anyone.
            let ledger = &self.ledger;
            let own = restore::ledger_values(
                ledger,
                &mut *self.transport,
                &self.campaign,
                &boot_id,
                self.recipe,
            )
            .map_err(Failure::Untuned)?
            .ok_or_else(|| {
                Failure::Untuned(restore::not_in_ledger(self.dir, ledger, &boot_id, &claimed))
            })?;
            self.saved_tuning = Some(own);
            self.tuning_saved_boot = Some(boot_id.clone());
        }
        let first_on_boot = self.tuning_saved_boot.as_deref() != Some(boot_id.as_str());
        let mut saved_now: Option<Saved> = None;
        let journal = &mut self.journal;
        let (ledger, campaign) = (&self.ledger, &self.campaign);
        let results = self.dir.root.display().to_string();
        let applied = tuning::apply(
            &mut *self.transport,
            self.recipe,
            &mut |transport, saved| {
                if !first_on_boot {
                    return Ok(());
                }
                // Recorded on the machine and journaled (and fsynced) before the first write: a
                // crash from here on leaves the machine's values where resume and `aba restore`
                // find them.
                ledger
                    .record_tuning(
                        transport,
                        campaign,
                        &boot_id,
                        &results,
                        tuning::saved_values(saved),
                    )
                    .map_err(tuning::TuneError::NotRecorded)?;
                journal
                    .append(&Event::TuningSaved {
                        point: at.point.label.to_string(),
                        attempt: at.attempt,
                        boot_id: boot_id.clone(),
                        values: tuning::saved_values(saved),
                        time: now_rfc3339(),
                    })
                    .map_err(tuning::TuneError::NotSaved)?;
                saved_now = Some(saved.clone());
                Ok(())
            },
        );
        if let Some(saved) = saved_now {
            // Also when a write below failed: what was written is put back at the end.
            self.tuning_saved_boot = Some(boot_id);
            if keeps_settings && self.saved_tuning.is_none() {
                self.saved_tuning = Some(saved);
            }
        }
        let tuned = applied.map_err(|e| match e {
            tuning::TuneError::Transport(t) => transport_failure(t, "tuning"),
            other => PointError::from(Failure::Tuning(other)),
        })?;
        for knob in &tuned.skipped {
            self.info(format!(
                "optional knob `{knob}` is absent on this machine; not set"
            ));
        }
        self.journal.append(&Event::Tuned {
            point: at.point.label.to_string(),
            attempt: at.attempt,
            settings: tuned.settings,
            skipped: tuned.skipped,
        })?;
        Ok(())
    }

    pub(super) fn snapshot(&mut self, at: AttemptId<'_>) -> Result<(), PointError> {
        self.step(Step::Snapshot);
        let names: Vec<String> = self
            .recipe
            .sysctls
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        let facts = environment::snapshot(self.transport, &names)
            .map_err(|e| transport_failure(e, "recording the environment"))?;
        let json = serde_json::to_vec_pretty(&facts).expect("invariant: a string map serialises");
        let path = self.dir.env_path(&at.point.label, at.attempt);
        write_atomic(&path, &json).map_err(|source| Failure::File {
            action: "write",
            path,
            source,
        })?;
        // Only the run's first record: later ones on a machine that is not rebooted count
        // aba's own workloads of the points before in their load.
        if !std::mem::replace(&mut self.load_read, true) {
            let fact = |name: &str| facts.get(name).map_or("", String::as_str);
            if let Some(overload) = load::overload(fact("loadavg"), fact("cpus_online")) {
                self.warn(Some(&at.point.label), Warning::Loaded(overload))?;
            }
        }
        Ok(())
    }

    pub(super) fn prepare_workdir(&mut self, at: AttemptId<'_>) -> Result<(), PointError> {
        let workdir = self.workdir.clone();
        self.make_dir(&workdir, "creating the work directory")?;
        if !self.recipe.files.is_empty() {
            self.step(Step::Uploading);
            self.upload_files()?;
        }
        if !self.recipe.setup.commands.is_empty() {
            self.step(Step::Setup);
            let recipe = self.recipe;
            let setup = &recipe.setup;
            self.run_steps(at, "setup", &setup.commands, setup.timeout)?;
        }
        Ok(())
    }

    /// `mkdir -p DIR` on the target.
    fn make_dir(&mut self, dir: &str, doing: &str) -> Result<(), PointError> {
        let out = self
            .transport
            .exec(&format!("mkdir -p {}", sh_quote(dir)), SMALL)
            .map_err(|e| transport_failure(e, doing))?;
        if out.outcome.success() {
            return Ok(());
        }
        Err(PointError::from(Failure::Workdir {
            dir: dir.to_owned(),
            stderr: out.stderr_text().trim().to_owned(),
        }))
    }

    /// Copies the recipe's `[files]` into the work directory, with their permission bits.
    fn upload_files(&mut self) -> Result<(), PointError> {
        let recipe = self.recipe;
        for file in &recipe.files {
            let data =
                crate::recipe::load::read_source(&file.local).map_err(|source| Failure::File {
                    action: "read",
                    path: file.local.clone(),
                    source,
                })?;
            let remote = format!("{}/{}", self.workdir, file.remote);
            if let Some((parent, _)) = remote.rsplit_once('/') {
                self.make_dir(parent, &format!("copying {}", file.remote))?;
            }
            self.transport
                .upload(&data, &remote, file.mode())
                .map_err(|e| transport_failure(e, format!("copying {}", file.remote)))?;
        }
        Ok(())
    }

    pub(super) fn teardown(&mut self, at: AttemptId<'_>, boot: &Boot) -> Result<(), PointError> {
        let recipe = self.recipe;
        let teardown = &recipe.teardown;
        if teardown.commands.is_empty() {
            return Ok(());
        }
        self.step(Step::Teardown);
        self.with_reconnect(at, boot, |e| {
            e.run_steps(at, "teardown", &teardown.commands, teardown.timeout)
        })
    }

    /// Runs setup or teardown `commands` in order; the first that fails fails the point, with
    /// its output saved.
    fn run_steps(
        &mut self,
        at: AttemptId<'_>,
        what: &'static str,
        commands: &[String],
        timeout: Duration,
    ) -> Result<(), PointError> {
        for (i, command) in commands.iter().enumerate() {
            let env = self.aba_env(at, what, None);
            let full = run_command(&self.workdir, &env, None, command);
            let out = self
                .transport
                .exec(&full, timeout)
                .map_err(|e| transport_failure(e, format!("{what} command `{command}`")))?;
            if !out.outcome.success() {
                let raw = self.save_raw(at, &format!("{what}-{}", i + 1), &full, &out);
                let stderr = out.stderr_text();
                let tail = last_lines(&stderr, 3);
                return Err(PointError::from(Failure::Command {
                    what,
                    command: command.clone(),
                    outcome: out.outcome,
                    tail: if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", tail.join(" / "))
                    },
                    raw: self.dir.root.join(raw).display().to_string(),
                }));
            }
        }
        Ok(())
    }

    pub(super) fn health(&mut self) -> Result<Health, PointError> {
        environment::health(self.transport)
            .map_err(|e: TransportError| transport_failure(e, "the audit"))
    }
}
