//! A noise profile from a finished calibration campaign (`aba calibrate`): the baseline booted
//! N times, analysed like any campaign, its kernel summary per series turned into the
//! profile's estimates, and what its boots recorded into the fingerprint.
//!
//! Pure given the analysis: the calibration's every number comes from `aba::analysis`, the
//! same code that judges campaigns, so a profile says exactly what a campaign of those boots
//! would have measured. A calibration whose boots disagree on the fingerprint (a microcode
//! update in the middle of it) gives no profile: it would hold for no campaign.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::{
    analysis::{Analysis, AttemptOutcome, SeriesResult},
    profile::{
        matching::{definition_sha256, normalize_cmdline, requested_tuning, tuning_seen},
        model::{Estimate, Fingerprint, PROFILE_FORMAT, Profile, Scope, SeriesProfile, Source},
    },
    recipe::Recipe,
};

/// Why a calibration gives no profile.
#[derive(Debug, Error)]
pub enum BuildError {
    /// Not every point is done.
    #[error("the calibration is not finished: {} not done", .0.join(", "))]
    Unfinished(Vec<String>),
    /// Fewer than 2 boots.
    #[error("a noise profile needs at least 2 boots, the calibration has {0}")]
    TooFewBoots(usize),
    /// The boots disagree on something the profile must hold for.
    #[error("the calibration's boots differ, so no profile holds for them: {}", .0.join("; "))]
    Differs(Vec<String>),
    /// A point has no readable environment record.
    #[error("the calibration's environment records are incomplete: {}", .0.join("; "))]
    NoRecord(Vec<String>),
    /// No series could be profiled.
    #[error("no series of the calibration can be profiled: {}", .0.join("; "))]
    NoSeries(Vec<String>),
}

/// What a calibration campaign is, besides its analysis.
#[derive(Clone, Copy, Debug)]
pub struct Calibration<'a> {
    /// The calibration's analysis.
    pub analysis: &'a Analysis,
    /// The calibration recipe (the results directory's copy).
    pub recipe: &'a Recipe,
    /// The calibrated recipe's name.
    pub recipe_name: &'a str,
    /// The calibrated recipe's SHA-256.
    pub recipe_sha256: &'a str,
    /// When the profile is made (RFC 3339).
    pub created: &'a str,
}

/// The profile, sealed, and the series left out with why.
#[derive(Clone, Debug)]
pub struct Built {
    /// The profile.
    pub profile: Profile,
    /// Series that could not be profiled, with why (a mean ≤ 0, a single sample).
    pub skipped: Vec<String>,
}

/// Builds the profile of a finished calibration.
pub fn build(c: &Calibration<'_>) -> Result<Built, BuildError> {
    let a = c.analysis;
    if !a.missing_points.is_empty() {
        return Err(BuildError::Unfinished(a.missing_points.clone()));
    }
    let boots = a.points.len();
    if boots < 2 {
        return Err(BuildError::TooFewBoots(boots));
    }
    let fingerprint = fingerprint(c)?;
    let mut series = Vec::new();
    let mut skipped = Vec::new();
    for s in &a.series {
        let Some(all) = s.all.as_ref().and_then(estimate) else {
            skipped.push(format!(
                "{}: no boot variance (a point mean ≤ 0, or a single sample per point)",
                s.label
            ));
            continue;
        };
        let workload = c
            .recipe
            .workloads
            .iter()
            .find(|w| w.name.as_str() == s.workload)
            .expect("invariant: a series comes from a workload of its recipe");
        let case = workload
            .cases()
            .into_iter()
            .find(|k| k.name == s.case)
            .expect("invariant: a series comes from a case of its workload");
        let metric = workload
            .metrics
            .iter()
            .find(|m| m.name.as_str() == s.metric)
            .expect("invariant: a series comes from a metric of its workload");
        let definition = definition_sha256(c.recipe, workload, &case, metric);
        series.push(SeriesProfile {
            workload: s.workload.clone(),
            case: s.case.clone(),
            metric: s.metric.clone(),
            unit: s.unit.clone(),
            warmup: s.warmup,
            samples: s.samples,
            definition_sha256: definition,
            all,
            drop_first: s.drop_first.as_ref().and_then(estimate),
        });
    }
    if series.is_empty() {
        return Err(BuildError::NoSeries(skipped));
    }
    let mut profile = Profile {
        format: PROFILE_FORMAT,
        checksum: String::new(),
        created: c.created.to_owned(),
        aba: env!("CARGO_PKG_VERSION").to_owned(),
        scope: if a.audit.shared_boot.is_some() {
            Scope::RunToRun
        } else {
            Scope::Boot
        },
        boots: u32::try_from(boots).expect("invariant: a recipe has at most 100 points"),
        source: Source {
            recipe: c.recipe_name.to_owned(),
            recipe_sha256: c.recipe_sha256.to_owned(),
            campaign: a.campaign.directory.clone(),
        },
        fingerprint,
        series,
    };
    profile.seal();
    Ok(Built { profile, skipped })
}

/// The one value every point agrees on, or the list of what each had.
fn agreed<'v>(what: &str, values: &[(&str, &'v str)]) -> Result<&'v str, String> {
    let first = values.first().map_or("", |(_, v)| v);
    if values.iter().all(|(_, v)| *v == first) {
        return Ok(first);
    }
    let listed: Vec<String> = values.iter().map(|(p, v)| format!("{v} at {p}")).collect();
    Err(format!("{what}: {}", listed.join(", ")))
}

/// The fingerprint every boot of the calibration shares.
fn fingerprint(c: &Calibration<'_>) -> Result<Fingerprint, BuildError> {
    let a = c.analysis;
    let env = &a.environment;
    if !env.unchecked.is_empty() {
        return Err(BuildError::NoRecord(env.unchecked.clone()));
    }
    let mut differs: Vec<String> = env.differences.iter().map(|d| d.text()).collect();
    let releases: Vec<(&str, &str)> = a
        .points
        .iter()
        .map(|p| (p.label.as_str(), p.release.as_deref().unwrap_or("")))
        .collect();
    let cmdlines: Vec<(String, String)> = a
        .points
        .iter()
        .map(|p| {
            (
                p.label.clone(),
                normalize_cmdline(p.cmdline.as_deref().unwrap_or("")),
            )
        })
        .collect();
    let cmdline_refs: Vec<(&str, &str)> = cmdlines
        .iter()
        .map(|(p, v)| (p.as_str(), v.as_str()))
        .collect();
    let tunings: Vec<(String, String)> = a
        .audit
        .attempts
        .iter()
        .filter(|t| t.outcome == AttemptOutcome::Done)
        .map(|t| {
            let seen = tuning_seen(&t.tuning, &t.skipped_knobs);
            (
                t.point.clone(),
                serde_json::to_string(&seen).unwrap_or_default(),
            )
        })
        .collect();
    let tuning_refs: Vec<(&str, &str)> = tunings
        .iter()
        .map(|(p, v)| (p.as_str(), v.as_str()))
        .collect();
    let release = agreed("release", &releases)
        .map_err(|e| differs.push(e))
        .ok();
    let cmdline = agreed("/proc/cmdline", &cmdline_refs)
        .map_err(|e| differs.push(e))
        .ok();
    let tuning = agreed("tuning read back", &tuning_refs)
        .map_err(|e| differs.push(e))
        .ok();
    if !differs.is_empty() {
        return Err(BuildError::Differs(differs));
    }
    let tuning: BTreeMap<String, String> = tuning
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    let baseline = &c.recipe.analysis.baseline;
    Ok(Fingerprint {
        target: a.campaign.target.clone(),
        kernel: baseline.to_string(),
        release: release.unwrap_or_default().to_owned(),
        params: c.recipe.cmdline_for(baseline),
        cmdline: cmdline.unwrap_or_default().to_owned(),
        requested_tuning: requested_tuning(c.recipe),
        tuning,
        machine: env
            .points
            .first()
            .map(|p| p.facts.clone())
            .unwrap_or_default(),
    })
}

/// The estimate of the only kernel of a calibration series (one analysis of it); `None`
/// without a boot variance or a within-boot SD, or with a mean ≤ 0. Public for the simulator
/// (bench/profiles.rs), which builds its profiles exactly as `aba calibrate` does.
#[must_use]
pub fn estimate(result: &SeriesResult) -> Option<Estimate> {
    let k = result.kernels.first()?;
    if k.mean <= 0.0 {
        return None;
    }
    let between_var = k.between_var?;
    let within_var = k.within_var?;
    let boot_var = k.boot_var?;
    let within_dof: usize = result.points.iter().map(|p| p.n.saturating_sub(1)).sum();
    let pct = |var: f64| 100.0 * var.sqrt() / k.mean;
    Some(Estimate {
        mean: k.mean,
        between_var,
        between_dof: (k.boots.len() - 1) as f64,
        within_var,
        within_dof: within_dof as f64,
        boot_var,
        boot_effect_p: k.boot_effect.as_ref().map(|e| e.p_value),
        between_sd_pct: pct(between_var),
        boot_sd_pct: pct(boot_var),
        within_cv_pct: pct(within_var),
    })
}
