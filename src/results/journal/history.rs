//! The replay of a journal: what it says about every point and the campaign.

use std::collections::BTreeMap;

use super::{AppendedPoint, Event, Journal};
use crate::{recipe::ident::PointLabel, stats::sequential::Decision};

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
        let mut state = CampaignState::default();
        for event in &self.events {
            match event {
                Event::Campaign { points, .. } => {
                    state.points = points
                        .iter()
                        .map(|p| PointState {
                            label: PointLabel::new(p.clone()),
                            ..PointState::default()
                        })
                        .collect();
                }
                Event::BaseCmdline { cmdline } => state.base_cmdline = Some(cmdline.clone()),
                Event::Look {
                    look,
                    decision,
                    appended,
                    ..
                } => {
                    state.looks.push((*look, *decision));
                    for point in appended {
                        state.appended.push(point.clone());
                        state.points.push(PointState {
                            label: PointLabel::new(point.label.clone()),
                            ..PointState::default()
                        });
                    }
                }
                Event::PointStarted { point, attempt, .. } => {
                    if let Some(p) = state.point_mut(point) {
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
                    if let Some(p) = state.point_mut(point) {
                        p.boots.push(ProvenBoot {
                            attempt: *attempt,
                            boot_id: boot_id.clone(),
                            release: release.clone(),
                        });
                    }
                }
                Event::PointDone { point, attempt, .. } => {
                    if let Some(p) = state.point_mut(point) {
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
                    if let Some(p) = state.point_mut(point) {
                        p.failures.push((*attempt, reason.clone()));
                        p.open = None;
                    }
                }
                Event::PointDiscarded { point, attempt, .. } => {
                    if let Some(p) = state.point_mut(point) {
                        p.discarded.push(*attempt);
                        if p.open == Some(*attempt) {
                            p.open = None;
                        }
                    }
                }
                // The first record of a boot holds the machine's own values.
                Event::TuningSaved {
                    boot_id, values, ..
                } if state
                    .pending_restore
                    .as_ref()
                    .is_none_or(|p| p.boot_id != *boot_id) =>
                {
                    state.pending_restore = Some(PendingRestore {
                        boot_id: boot_id.clone(),
                        values: values
                            .iter()
                            .map(|v| (v.path.clone(), v.value.clone()))
                            .collect(),
                    });
                }
                Event::TuningRestored { .. } => state.pending_restore = None,
                Event::Finished { .. } => state.finished = true,
                Event::Stopped { reason, .. } => state.stopped = Some(reason.clone()),
                Event::Interrupted { .. } => state.stopped = Some("interrupted".to_owned()),
                Event::Resumed { .. } => state.stopped = None,
                _ => {}
            }
        }
        state
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

    /// The valid attempt of each finished point.
    pub fn done_attempts(&self) -> BTreeMap<String, u32> {
        self.points
            .iter()
            .filter_map(|p| p.done.map(|a| (p.label.to_string(), a)))
            .collect()
    }
}
