//! Opening a campaign again (`aba resume`): the journal's header must name this recipe, target
//! and plan; an attempt the last runner left open is discarded (the journal says its rows do
//! not count; samples.csv is never rewritten); the points' state, the base command line, the
//! last boot and the kernels' failures are replayed from the journal.

use std::collections::BTreeMap;

use super::{Engine, EngineError, Job, Mismatch};
use crate::{
    campaign::{events::Observer, ledger::CampaignKey, plan::Plan},
    inventory::Target,
    recipe::Recipe,
    results::{
        journal::{CampaignState, Event, Journal, JournalWriter, now_rfc3339},
        layout::ResultsDir,
        samples::{SampleTable, SampleWriter},
        verify::rows_per_attempt,
    },
    target::transport::Transport,
};

use super::failure::PastFailure;

impl<'a> Engine<'a> {
    /// Opens an existing campaign: checks that the recipe and target match, marks the rows of
    /// any attempt the last runner left open as discarded, and journals the resumption.
    pub(super) fn resume(
        job: Job<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
    ) -> Result<Engine<'a>, EngineError> {
        let past = Journal::read(&job.dir.journal_path())?;
        check_header(&past, job.recipe, job.target, job.plan)?;
        let campaign = CampaignKey::of(past.header());
        let journal = JournalWriter::open(&job.dir.journal_path())?;
        Engine::resume_with(job, transport, observer, journal, &past.state(), campaign)
    }

    /// [`Engine::resume`] appending to `journal`, from the journal's `state`.
    pub(super) fn resume_with(
        job: Job<'a>,
        transport: &'a mut dyn Transport,
        observer: &'a mut dyn Observer,
        mut journal: JournalWriter,
        state: &CampaignState,
        campaign: CampaignKey,
    ) -> Result<Engine<'a>, EngineError> {
        journal.append(&Event::Resumed {
            time: now_rfc3339(),
        })?;
        discard_open_attempts(&mut journal, job.dir, state)?;
        let samples = SampleWriter::open(&job.dir.samples_path())?;
        let mut engine = Engine::assemble(
            job,
            transport,
            observer,
            journal,
            samples,
            state.clone(),
            campaign,
        );
        engine.replay(state)?;
        Ok(engine)
    }

    /// What the engine carries from one run to the next.
    fn replay(&mut self, state: &CampaignState) -> Result<(), EngineError> {
        // The points the looks appended are the campaign's: the same ones run on.
        self.plan
            .append(self.recipe, &state.appended)
            .map_err(|_| EngineError::Mismatch(Mismatch::Plan))?;
        self.appended.clone_from(&state.appended);
        self.looks.clone_from(&state.looks);
        self.base_cmdline.clone_from(&state.base_cmdline);
        let mut boots = state.points.iter().flat_map(|p| p.boots.iter());
        self.last_boot_id = boots.clone().last().map(|b| b.boot_id.clone());
        if self.recipe.kernels.values().any(|k| k.release.is_running()) {
            self.pinned_release = boots.next().map(|b| b.release.clone());
        }
        for point in &state.points {
            let Some(planned) = self.plan.points.iter().find(|p| p.label == point.label) else {
                continue;
            };
            for (attempt, reason) in &point.failures {
                self.kernel_failures.record(
                    &planned.kernel,
                    PastFailure {
                        point: point.label.clone(),
                        attempt: *attempt,
                        reason: reason.clone(),
                    },
                );
            }
        }
        self.done = state.points.iter().filter(|p| p.done.is_some()).count();
        Ok(())
    }
}

/// The journal's header must name this recipe (with its files), this target and these points.
fn check_header(
    past: &Journal,
    recipe: &Recipe,
    target: &Target,
    plan: &Plan,
) -> Result<(), EngineError> {
    let Some(Event::Campaign {
        target: then,
        points,
        ..
    }) = past.header()
    else {
        return Ok(());
    };
    // The copy must be what the campaign started with, or what `--amend` recorded last.
    let expected = past.recipe_sha256().unwrap_or_default();
    if expected != recipe.sha256 {
        return Err(EngineError::Mismatch(Mismatch::Recipe {
            now: recipe.sha256.clone(),
            then: expected.to_owned(),
        }));
    }
    if *then != target.name {
        return Err(EngineError::Mismatch(Mismatch::Target {
            now: target.name.clone(),
            then: then.clone(),
        }));
    }
    let labels: Vec<&str> = plan.points.iter().map(|p| p.label.as_str()).collect();
    if points.iter().map(String::as_str).collect::<Vec<_>>() != labels {
        return Err(EngineError::Mismatch(Mismatch::Plan));
    }
    Ok(())
}

/// Journals that the rows of every attempt the previous runner left open do not count, with
/// how many rows samples.csv holds for each.
fn discard_open_attempts(
    journal: &mut JournalWriter,
    dir: &ResultsDir,
    state: &CampaignState,
) -> Result<(), EngineError> {
    if state.points.iter().all(|p| p.open.is_none()) {
        return Ok(());
    }
    let rows = if dir.samples_path().is_file() {
        rows_per_attempt(&SampleTable::read(&dir.samples_path())?)
    } else {
        BTreeMap::new()
    };
    for discard in state.discards(&rows) {
        journal.append(&discard)?;
    }
    Ok(())
}
