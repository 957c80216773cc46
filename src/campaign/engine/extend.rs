//! The looks of a campaign that extends itself (`[analysis] extend`, docs/statistics.md §12).
//!
//! When every point of the plan is done, the engine analyses the results directory exactly as
//! `aba report` would at this look (same code, same boundary), asks the stopping rule, and
//! journals the decision with every driving comparison's state. To extend, the appended
//! points go into that same record, fsynced before the first of them runs: a killed campaign
//! resumes the same extended plan, and a look that was journaled is never taken again, so a
//! resume cannot decide differently.

use super::{Engine, Stop};
use crate::{
    analysis::{analyze, extension::look_comparisons},
    campaign::events::CampaignEvent,
    results::journal::{Event, now_rfc3339},
    stats::sequential::{ComparisonState, Decision, decide},
};

impl Engine<'_> {
    /// Takes the look the plan's points make, if the recipe extends and it was not taken:
    /// `true` when it appended points to run.
    pub(super) fn look(&mut self) -> Result<bool, Box<Stop>> {
        let Some(extend) = &self.recipe.analysis.extend else {
            return Ok(false);
        };
        let boundary = extend.boundary(self.recipe.sequence.len());
        let Some(look) = boundary.look_at(self.plan.points.len()) else {
            return Ok(false);
        };
        if self.looks.iter().any(|(taken, _)| *taken == look.look) {
            // Journaled by an earlier run: its points (if any) are already in the plan.
            return Ok(false);
        }
        let analysis = analyze(self.dir).map_err(|e| {
            Box::new(Stop::Look {
                look: look.look,
                error: Box::new(e),
            })
        })?;
        let comparisons = look_comparisons(&analysis);
        let states: Vec<ComparisonState> = comparisons.iter().map(|c| c.state).collect();
        let (decision, reason) = match &self.look_rule {
            Some(rule) => (rule.0)(&analysis, &look).map_err(|why| {
                Box::new(Stop::LookRule {
                    look: look.look,
                    why,
                })
            })?,
            None => {
                let decision = decide(&states, &look);
                (decision, decision.why().to_owned())
            }
        };
        let appended = if decision == Decision::Extend {
            self.plan.next_unit(&extend.unit)
        } else {
            Vec::new()
        };
        self.journal
            .append(&Event::Look {
                look: look.look,
                of: look.of,
                spending: boundary.spending,
                alpha: look.alpha,
                decision,
                reason: reason.clone(),
                comparisons,
                appended: appended.clone(),
                time: now_rfc3339(),
            })
            .map_err(|e| Box::new(Stop::Journal(e)))?;
        self.looks.push((look.look, decision));
        self.plan
            .append(self.recipe, &appended)
            .expect("invariant: the unit's kernels are the recipe's");
        let labels: Vec<String> = appended
            .iter()
            .map(|p| crate::point_name::point_name(&p.label, &p.kernel))
            .collect();
        let text = if appended.is_empty() {
            format!("stop: {reason}")
        } else {
            format!("extend by {}: {reason}", labels.join(", "))
        };
        self.appended.extend(appended);
        self.observer.event(&CampaignEvent::Look {
            look: look.look,
            of: look.of,
            text,
            points: self.plan.points.len(),
        });
        Ok(decision == Decision::Extend)
    }
}
