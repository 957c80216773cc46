//! Which profile of a target's directory a new campaign copies: the newest one that matches
//! the recipe statically (target, baseline release and parameters, requested tuning) and
//! holds for at least one of its series. The others are listed with why, so that the report
//! can say why a profile the tester expected was not used.
//!
//! The run-time match (what the boots actually recorded) is the analysis' to make, from the
//! copy, so that `aba report` decides the same way on any machine.

use std::path::{Path, PathBuf};

use time::{OffsetDateTime, format_description::well_known::Rfc3339};

use crate::{
    analysis::series_label,
    profile::{
        file::{ProfileError, scan_dir},
        matching::{series_match, static_mismatches},
        model::Profile,
    },
    recipe::Recipe,
};

/// A profile file, read and checked.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Where it is.
    pub path: PathBuf,
    /// Its bytes (what the campaign copies and hashes).
    pub bytes: Vec<u8>,
    /// The profile.
    pub profile: Profile,
}

/// What a new campaign takes from the target's profile directory.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The directory searched.
    pub dir: PathBuf,
    /// The chosen profile, when one matches.
    pub chosen: Option<Candidate>,
    /// Every other profile of the directory, with why it was not chosen.
    pub not_used: Vec<String>,
}

/// Why `profile` does not hold for any series of `recipe` on `target`, statically; empty when
/// it may.
#[must_use]
pub fn why_not(profile: &Profile, recipe: &Recipe, target: &str) -> Vec<String> {
    let mut reasons = static_mismatches(profile, recipe, target);
    if reasons.is_empty() {
        let mut first_miss = None;
        let mut any = false;
        for w in &recipe.workloads {
            for case in w.cases() {
                for metric in &w.metrics {
                    match series_match(profile, recipe, w, &case, metric) {
                        Ok(_) => any = true,
                        Err(e) => {
                            first_miss.get_or_insert_with(|| {
                                let label =
                                    series_label(w.name.as_str(), &case.name, metric.name.as_str());
                                format!("{label}: {e}")
                            });
                        }
                    }
                }
            }
        }
        if !any {
            reasons.push(format!(
                "it holds for no series of the recipe ({})",
                first_miss.unwrap_or_else(|| "the recipe has no series".to_owned())
            ));
        }
    }
    reasons
}

/// `lab-aba.toml (2026-07-23T20:00:00Z)`.
fn name(c: &Candidate) -> String {
    format!(
        "{} ({})",
        c.path.file_name().map_or_else(
            || c.path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        c.profile.created
    )
}

/// Chooses the profile of `dir` for campaigns of `recipe` on `target`. A file in `dir` that is
/// not a valid profile is an error (it may be the one that should have been used).
pub fn choose(dir: &Path, recipe: &Recipe, target: &str) -> Result<Choice, ProfileError> {
    let candidates: Vec<Candidate> = scan_dir(dir)?
        .into_iter()
        .map(|(path, profile, bytes)| Candidate {
            path,
            bytes,
            profile,
        })
        .collect();
    let mut matching: Vec<Candidate> = Vec::new();
    let mut not_used = Vec::new();
    for c in candidates {
        let reasons = why_not(&c.profile, recipe, target);
        if reasons.is_empty() {
            matching.push(c);
        } else {
            not_used.push(format!("{}: {}", name(&c), reasons.join("; ")));
        }
    }
    let created = |c: &Candidate| OffsetDateTime::parse(&c.profile.created, &Rfc3339).ok();
    matching.sort_by_key(|c| std::cmp::Reverse(created(c)));
    let mut matching = matching.into_iter();
    let chosen = matching.next();
    for older in matching {
        not_used.push(format!("{}: a newer profile matches too", name(&older)));
    }
    Ok(Choice {
        dir: dir.to_path_buf(),
        chosen,
        not_used,
    })
}
