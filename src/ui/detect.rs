//! What `aba check` prints after the plan (issue 10 §3): the change the recipe's design can
//! detect on the target, from its noise profile, or why it is unknown and how to measure it;
//! and with `[analysis] detect_pct`, the design that reaches it.

use std::fmt::Write as _;

use crate::{
    campaign::{
        advice::{Advice, Recommendation, SeriesAdvice, SeriesNoise},
        calibrate::DEFAULT_BOOTS,
        plan::format_eta,
    },
    inventory::Target,
    profile::{
        Profile, Scope,
        select::{Candidate, Choice},
    },
    recipe::{Recipe, ident::KernelLabel, limits},
    text::one_line,
};

/// What `aba check` knows of the change the design can detect.
pub enum Detect {
    /// `--no-profile`.
    Off,
    /// The target has no profile that matches.
    None(Choice),
    /// The advice from the target's profile.
    Profile(Advice, Candidate),
}

/// `2.31%`.
fn pct(value: f64) -> String {
    format!("{value:.2}%")
}

/// `a-b-a`.
fn design(sequence: &[KernelLabel]) -> String {
    sequence
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("-")
}

/// The change the design can detect, and with `detect_pct` the design that reaches it.
pub fn render_advice(recipe: &Recipe, target: &Target, detect: &Detect) -> String {
    let mut out = String::from("\n");
    let (advice, candidate) = match detect {
        Detect::Off => {
            out.push_str("detect   unknown: planned without a noise profile (--no-profile)\n");
            return out;
        }
        Detect::None(choice) => {
            out.push_str(&unknown(recipe, target, choice));
            return out;
        }
        Detect::Profile(advice, candidate) => (advice, candidate),
    };
    let p = &candidate.profile;
    let _ = writeln!(
        out,
        "profile  {} (created {}, {} boots of {}, {})",
        one_line(&candidate.path.to_string_lossy()),
        p.created,
        p.boots,
        p.fingerprint.kernel,
        p.scope.words()
    );
    let level = match p.scope {
        Scope::Boot => "boot-level",
        Scope::RunToRun => "run-to-run only, boots unmeasured",
    };
    let _ = writeln!(
        out,
        "detect   minimal detectable change (two-sided 5%, 80% power, {level}):"
    );
    for s in &advice.series {
        out.push_str(&series_line(s, p.scope));
    }
    if let Some(goal) = recipe.analysis.detect_pct {
        out.push_str(&goal_lines(recipe, p, advice, goal));
    }
    out
}

/// Why the detectable change is unknown, and how to measure it.
fn unknown(recipe: &Recipe, target: &Target, choice: &Choice) -> String {
    let dir = one_line(&choice.dir.to_string_lossy()).into_owned();
    // Wrapped: a profile directory under a long home makes it longer than a line.
    let sentence = format!(
        "unknown without a noise profile of target {} ({}): `aba calibrate {} \
         --target {}` measures one ({DEFAULT_BOOTS} boots of {})",
        target.name,
        if choice.not_used.is_empty() {
            format!("none in {dir}")
        } else {
            format!("none in {dir} matches")
        },
        one_line(&recipe.path.to_string_lossy()),
        target.name,
        recipe.analysis.baseline
    );
    let mut out =
        crate::report::layout::wrap_hanging(&sentence, super::WIDTH, "detect   ", "         ");
    for why in &choice.not_used {
        let _ = writeln!(out, "         not used: {}", one_line(why));
    }
    out
}

/// One series: its detectable change per candidate, or why it is unknown.
fn series_line(s: &SeriesAdvice, scope: Scope) -> String {
    match &s.noise {
        SeriesNoise::Known {
            detectable,
            dof,
            boot_sd_pct,
            within_cv_pct,
        } => {
            let each: Vec<String> = detectable
                .iter()
                .map(|d| {
                    let size = d.pct.map_or_else(|| "not resolvable".to_owned(), pct);
                    format!("{} {size}", d.candidate)
                })
                .collect();
            let each = if each.is_empty() {
                "no candidate kernel".to_owned()
            } else {
                each.join(", ")
            };
            let sd = match scope {
                Scope::Boot => "boot SD",
                Scope::RunToRun => "point-to-point SD",
            };
            format!(
                "    {:<40} {each}  (ν = {dof:.0}; {sd} {}, within CV {})\n",
                s.label,
                pct(*boot_sd_pct),
                pct(*within_cv_pct)
            )
        }
        SeriesNoise::Unknown(why) => format!("    {:<40} unknown: {}\n", s.label, one_line(why)),
    }
}

/// What `detect_pct` asks against what the recipe's design and the shortest design resolve.
fn goal_lines(recipe: &Recipe, profile: &Profile, advice: &Advice, goal: f64) -> String {
    let mut out = String::new();
    let own = format!(
        "{}, {} samples",
        design(&recipe.sequence),
        recipe.workloads.first().map_or(0, |w| w.samples)
    );
    match advice.design_pct {
        Some(got) if got <= goal => {
            let _ = writeln!(
                out,
                "detect_pct {}: the recipe's design ({own}) resolves {}",
                pct(goal),
                pct(got)
            );
        }
        Some(got) => {
            let _ = writeln!(
                out,
                "warning: detect_pct {}: the recipe's design ({own}) resolves {} at best",
                pct(goal),
                pct(got)
            );
        }
        None => {}
    }
    match &advice.recommendation {
        Some(r) => {
            let _ = writeln!(
                out,
                "detect_pct {}: shortest design {}, {} samples: {}, ETA ~{}{}",
                pct(goal),
                design(&r.sequence),
                r.samples,
                pct(r.pct),
                format_eta(r.eta),
                unpooled(profile, r)
            );
        }
        None if advice.design_pct.is_some() => {
            let _ = writeln!(
                out,
                "warning: detect_pct {}: no repetition of the recipe's sequence within {} \
                 points resolves it",
                pct(goal),
                limits::POINTS
            );
        }
        None => {}
    }
    out
}

/// Why a recommended design does not pool the profile, when it does not.
fn unpooled(profile: &Profile, r: &Recommendation) -> String {
    if r.pooled {
        return String::new();
    }
    format!(
        " (from its own boots: the profile holds for {} samples; calibrate again with {} to \
         pool it)",
        profile.series.first().map_or(0, |s| s.samples),
        r.samples
    )
}
