//! The campaign's noise profile, from the analysis' side: what the journal says was chosen,
//! whether it holds for the boots the baseline actually had, and, series by series, the
//! boot variance it contributes (issue 10 §2).
//!
//! Reads only the results directory: the profile is the copy `aba run` made (`profile.toml`,
//! its SHA-256 journaled and checked by [`crate::analysis::analyze`]), the boots are the
//! journal's and the environment records', so `aba report` reaches the same verdicts on any
//! machine and at any later time.

use crate::{
    analysis::{
        environment::EnvironmentCheck,
        model::{AttemptAudit, AttemptOutcome, PointInfo, ProfileUse, SeriesCalibration},
    },
    profile::{
        Profile,
        matching::{BootSeen, runtime_mismatches, series_match, static_mismatches, tuning_seen},
        model::Estimate,
    },
    recipe::{Case, Metric, Recipe, Workload},
    results::journal::{Event, Journal},
};

/// What the analysis knows of the campaign's profile.
pub struct Calibration<'a> {
    /// The profile, when one holds for the campaign as a whole.
    profile: Option<&'a Profile>,
    /// The campaign-level account.
    pub usage: ProfileUse,
}

/// What [`Calibration::new`] reads.
#[derive(Clone, Copy)]
pub struct CalibrationInput<'a, 'p> {
    /// The recipe copy.
    pub recipe: &'a Recipe,
    /// The journal.
    pub journal: &'a Journal,
    /// The target the campaign ran on.
    pub target: &'a str,
    /// The copied profile, checked against its journaled SHA-256; `None` when the campaign
    /// has none or it is turned off.
    pub profile: Option<&'p Profile>,
    /// `aba report --no-profile`.
    pub no_profile: bool,
    /// Every planned point.
    pub points: &'a [PointInfo],
    /// Every point attempt.
    pub attempts: &'a [AttemptAudit],
    /// The environment records, compared.
    pub environment: &'a EnvironmentCheck,
    /// Every done point shares one boot.
    pub shared_boot: bool,
}

impl<'a> Calibration<'a> {
    /// Decides whether the campaign's profile holds, from the journal and what the
    /// baseline's boots recorded.
    #[must_use]
    pub fn new(input: &CalibrationInput<'_, 'a>) -> Calibration<'a> {
        let mut usage = ProfileUse::default();
        let chosen = input.journal.events.iter().find_map(|e| match e {
            Event::Profile {
                file,
                sha256,
                not_used,
                disabled,
                ..
            } => Some((file, sha256, not_used, *disabled)),
            _ => None,
        });
        let Some((file, sha256, not_used, disabled)) = chosen else {
            return Calibration {
                profile: None,
                usage,
            };
        };
        usage.file = file.clone();
        usage.name = file
            .as_deref()
            .map(|f| f.rsplit('/').next().unwrap_or(f).to_owned());
        usage.sha256 = sha256.clone();
        usage.disabled = disabled || input.no_profile;
        if disabled {
            usage
                .reasons
                .push("turned off with --no-profile when the campaign ran".to_owned());
        } else if input.no_profile {
            usage.reasons.push(format!(
                "turned off with aba report --no-profile{}",
                file.as_ref()
                    .map_or_else(String::new, |f| format!(" (the campaign used {f})"))
            ));
        }
        if file.is_none() && !disabled {
            if not_used.is_empty() {
                usage
                    .reasons
                    .push("the target's profile directory held no profile".to_owned());
            }
            usage.reasons.extend(not_used.iter().cloned());
        }
        let Some(profile) = input.profile.filter(|_| !usage.disabled) else {
            return Calibration {
                profile: None,
                usage,
            };
        };
        usage.created = Some(profile.created.clone());
        usage.boots = Some(profile.boots);
        usage.scope = Some(profile.scope);
        let mut reasons = static_mismatches(profile, input.recipe, input.target);
        reasons.extend(runtime_mismatches(
            profile,
            &boots_seen(input),
            input.shared_boot,
        ));
        let holds = reasons.is_empty();
        usage.reasons.extend(reasons);
        Calibration {
            profile: holds.then_some(profile),
            usage,
        }
    }

    /// How the series of `workload`, `case`, `metric` uses the profile; `None` when the
    /// campaign has no profile at all. Marks the profile used when a series pools it.
    pub fn series(
        &mut self,
        recipe: &Recipe,
        workload: &Workload,
        case: &Case,
        metric: &Metric,
    ) -> Option<SeriesCalibration> {
        if self.usage.file.is_none() || self.usage.disabled {
            return None;
        }
        let Some(profile) = self.profile else {
            return Some(SeriesCalibration::NotUsed {
                why: "the profile does not hold for this campaign (see above)".to_owned(),
            });
        };
        Some(
            match series_match(profile, recipe, workload, case, metric) {
                Ok(entry) => {
                    self.usage.used = true;
                    SeriesCalibration::Used {
                        all: entry.all.prior(),
                        drop_first: entry.drop_first.as_ref().map(Estimate::prior),
                    }
                }
                Err(why) => SeriesCalibration::NotUsed { why },
            },
        )
    }
}

/// What each done boot of the baseline recorded.
fn boots_seen<'a>(input: &CalibrationInput<'a, '_>) -> Vec<BootSeen<'a>> {
    let baseline = input.recipe.analysis.baseline.as_str();
    input
        .points
        .iter()
        .filter(|p| p.kernel == baseline)
        .filter_map(|p| {
            let attempt = p.done_attempt?;
            let audit = input.attempts.iter().find(|a| {
                a.point == p.label && a.attempt == attempt && a.outcome == AttemptOutcome::Done
            })?;
            Some(BootSeen {
                point: &p.label,
                release: p.release.as_deref(),
                cmdline: p.cmdline.as_deref(),
                tuning: tuning_seen(&audit.tuning, &audit.skipped_knobs),
                facts: input
                    .environment
                    .points
                    .iter()
                    .find(|e| e.point == p.label)
                    .map(|e| &e.facts),
            })
        })
        .collect()
}
