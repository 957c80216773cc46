//! `aba check --json`: the plan of a recipe on a target and the change its design can detect,
//! from the same [`Summary`] and [`Advice`] the text is printed from.

use serde::Serialize;

use crate::{
    campaign::{
        advice::{Advice, Recommendation, SeriesAdvice, SeriesNoise},
        plan::{PointSummary, Summary},
    },
    inventory::{ANY_SWITCHING, Target},
    json::{FORMAT, Kind},
    profile::select::Choice,
    recipe::Recipe,
};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct CheckDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `check`.
    pub kind: Kind,
    /// The recipe checked.
    pub recipe: RecipeJson<'a>,
    /// The target it was planned for.
    pub target: TargetJson<'a>,
    /// Points in boot order.
    pub points: &'a [PointSummary],
    /// Workload cases every point runs.
    pub cases: u64,
    /// Workload runs in all, warm-ups included.
    pub runs: u64,
    /// Fresh boots the campaign needs: 0 on a target that does not switch kernels.
    pub boots: usize,
    /// Estimated wall time, seconds.
    pub eta_s: f64,
    /// Estimated seconds per boot in `eta_s`.
    pub boot_estimate_s: f64,
    /// `aba run` starts the plan only with `--yes` (estimated at more than a day).
    pub needs_yes: bool,
    /// Design warnings, as the text prints them after `warning: `.
    pub warnings: Vec<String>,
    /// The change the design can detect, or why it is unknown.
    pub detect: DetectJson<'a>,
}

/// Which recipe.
#[derive(Debug, Serialize)]
pub struct RecipeJson<'a> {
    /// Its `name`.
    pub name: &'a str,
    /// The file, as given on the command line.
    pub path: String,
    /// SHA-256 of the recipe and its files (what the journal records).
    pub sha256: &'a str,
}

/// Which target.
#[derive(Debug, Serialize)]
pub struct TargetJson<'a> {
    /// Its inventory name; `null` when none was given and the plan is for any target that
    /// switches kernels.
    pub name: Option<&'a str>,
    /// Its switch method (`none`, `kexec`, `grub-reboot`, …); `null` without a target.
    pub switch: Option<String>,
}

/// What `aba check` knows of the change the design can detect.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DetectJson<'a> {
    /// `--no-profile`.
    Off,
    /// No `--target`: no machine, no profile.
    NoTarget,
    /// The target has no noise profile that holds for the recipe.
    NoProfile {
        /// The directory searched.
        dir: String,
        /// The profiles found there, each with why it was not used.
        not_used: &'a [String],
    },
    /// From the target's profile.
    Profile {
        /// The profile file.
        file: String,
        /// The recipe's design: the largest detectable change over the profiled series,
        /// percent; `null` when no series is profiled.
        design_pct: Option<f64>,
        /// Per series.
        series: Vec<SeriesDetectJson<'a>>,
        /// With `[analysis] detect_pct`: the shortest design that resolves it; `null` without
        /// `detect_pct` or when none does.
        recommendation: Option<RecommendationJson<'a>>,
    },
}

/// One series' detectable change.
#[derive(Debug, Serialize)]
pub struct SeriesDetectJson<'a> {
    /// `workload`, `workload[case]`, plus `/metric`.
    pub label: &'a str,
    /// Per candidate, in order of first boot: the change in percent, `null` when the design
    /// cannot resolve any; empty when the profile does not hold for the series.
    pub detectable: Vec<DetectableJson<'a>>,
    /// ν of the boot variance (the profile's plus the design's own); `null` when unknown.
    pub dof: Option<f64>,
    /// The profile's boot-level (or point-to-point) SD, percent.
    pub boot_sd_pct: Option<f64>,
    /// The profile's within-boot CV, percent.
    pub within_cv_pct: Option<f64>,
    /// Why the profile says nothing of this series; `null` when it does.
    pub unknown: Option<&'a str>,
}

/// One candidate's detectable change.
#[derive(Debug, Serialize)]
pub struct DetectableJson<'a> {
    /// The candidate kernel.
    pub candidate: &'a str,
    /// Percent; `null` when not resolvable (ν = 0).
    pub pct: Option<f64>,
}

/// A design that resolves `detect_pct`.
#[derive(Debug, Serialize)]
pub struct RecommendationJson<'a> {
    /// The boot sequence.
    pub sequence: Vec<&'a str>,
    /// Measured samples per point.
    pub samples: u32,
    /// Its largest detectable change, percent.
    pub pct: f64,
    /// Its estimated wall time, seconds.
    pub eta_s: f64,
    /// It pools the profile (otherwise its own boots alone give the boot variance).
    pub pooled: bool,
}

/// What the command found about detection, before it becomes JSON.
pub enum DetectSource<'a> {
    /// `--no-profile`.
    Off,
    /// No target.
    NoTarget,
    /// No profile holds.
    None(&'a Choice),
    /// The advice and the profile file it came from.
    Profile(&'a Advice, &'a std::path::Path),
}

impl<'a> CheckDoc<'a> {
    /// The document of `plan` for `recipe` on `target`.
    #[must_use]
    pub fn new(
        recipe: &'a Recipe,
        target: &'a Target,
        plan: &'a Summary,
        detect: &DetectSource<'a>,
    ) -> CheckDoc<'a> {
        let any = target.name == ANY_SWITCHING;
        CheckDoc {
            format: FORMAT,
            kind: Kind::Check,
            recipe: RecipeJson {
                name: recipe.name.as_str(),
                path: recipe.path.to_string_lossy().into_owned(),
                sha256: &recipe.sha256,
            },
            target: TargetJson {
                name: (!any).then_some(target.name.as_str()),
                switch: (!any).then(|| target.switch.method().kind().to_string()),
            },
            points: &plan.points,
            cases: plan.cases,
            runs: plan.runs,
            boots: plan.boots,
            eta_s: plan.eta.as_secs_f64(),
            boot_estimate_s: plan.boot_estimate.as_secs_f64(),
            needs_yes: plan.needs_confirmation(),
            warnings: plan.warnings.iter().map(ToString::to_string).collect(),
            detect: DetectJson::new(detect),
        }
    }
}

impl<'a> DetectJson<'a> {
    fn new(source: &DetectSource<'a>) -> DetectJson<'a> {
        match source {
            DetectSource::Off => DetectJson::Off,
            DetectSource::NoTarget => DetectJson::NoTarget,
            DetectSource::None(choice) => DetectJson::NoProfile {
                dir: choice.dir.to_string_lossy().into_owned(),
                not_used: &choice.not_used,
            },
            DetectSource::Profile(advice, file) => DetectJson::Profile {
                file: file.to_string_lossy().into_owned(),
                design_pct: advice.design_pct,
                series: advice.series.iter().map(SeriesDetectJson::new).collect(),
                recommendation: advice.recommendation.as_ref().map(RecommendationJson::new),
            },
        }
    }
}

impl<'a> SeriesDetectJson<'a> {
    fn new(s: &'a SeriesAdvice) -> SeriesDetectJson<'a> {
        match &s.noise {
            SeriesNoise::Known {
                detectable,
                dof,
                boot_sd_pct,
                within_cv_pct,
            } => SeriesDetectJson {
                label: &s.label,
                detectable: detectable
                    .iter()
                    .map(|d| DetectableJson {
                        candidate: d.candidate.as_str(),
                        pct: d.pct,
                    })
                    .collect(),
                dof: Some(*dof),
                boot_sd_pct: Some(*boot_sd_pct),
                within_cv_pct: Some(*within_cv_pct),
                unknown: None,
            },
            SeriesNoise::Unknown(why) => SeriesDetectJson {
                label: &s.label,
                detectable: Vec::new(),
                dof: None,
                boot_sd_pct: None,
                within_cv_pct: None,
                unknown: Some(why),
            },
        }
    }
}

impl<'a> RecommendationJson<'a> {
    fn new(r: &'a Recommendation) -> RecommendationJson<'a> {
        RecommendationJson {
            sequence: r.sequence.iter().map(|k| k.as_str()).collect(),
            samples: r.samples,
            pct: r.pct,
            eta_s: r.eta.as_secs_f64(),
            pooled: r.pooled,
        }
    }
}
