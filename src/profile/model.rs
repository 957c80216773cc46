//! The noise profile file: a plain, versioned TOML file (docs/profiles.md) that `aba
//! calibrate` writes and campaigns read. What it holds: per workload × case × metric the
//! within-boot variance with its ν, the between-boot variance of point means with its ν, the
//! boot-level component and the boot-effect test, for all samples and for drop-first; and the
//! fingerprint it holds for (target, kernel release and command line, tuning read back, the
//! machine facts of the environment record, sample counts) with the date.
//!
//! A profile is meant to be inspected, copied, renamed and deleted, not edited: `checksum` is
//! the SHA-256 of everything else in canonical form, so a number changed by hand is refused
//! (comments, spacing and key order may change freely). Every value is checked when read,
//! and a problem names the file and the field.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The profile format this aba writes and reads.
pub const PROFILE_FORMAT: u32 = 1;

/// What the profile's variance is between: fresh boots, or runs of one boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every point was a fresh, proven boot: boot-to-boot variance.
    Boot,
    /// Every point ran in one boot (a target that does not switch kernels, such as `local`):
    /// run-to-run variance only, boot-to-boot variation unmeasured.
    RunToRun,
}

impl Scope {
    /// `boot-to-boot` / `run-to-run only (all points in one boot)`.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Scope::Boot => "boot-to-boot",
            Scope::RunToRun => "run-to-run only: all points in one boot, boots unmeasured",
        }
    }
}

/// Where the profile came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The calibrated recipe's name.
    pub recipe: String,
    /// Its SHA-256 (recipe text and files) when it was calibrated.
    pub recipe_sha256: String,
    /// The calibration campaign's results directory name.
    pub campaign: String,
}

/// What the profile holds for: a campaign must match all of it to be pooled with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fingerprint {
    /// The target's name in the inventory.
    pub target: String,
    /// The calibrated kernel's label in the recipe.
    pub kernel: String,
    /// Its release, as `uname -r` proved it.
    pub release: String,
    /// The parameters the recipe gave it (`[boot] cmdline`, then its own).
    pub params: Vec<String>,
    /// `/proc/cmdline` of its boots, without `BOOT_IMAGE=` and `initrd=`.
    pub cmdline: String,
    /// The tuning the recipe asked for: sysctls and knobs as `name=value`.
    pub requested_tuning: Vec<String>,
    /// The tuning read back after it was applied (optional knobs the machine lacks as
    /// `absent`).
    pub tuning: BTreeMap<String, String>,
    /// The machine facts of the environment record (`crate::fingerprint::FACTS` and the
    /// sysctls read back).
    pub machine: BTreeMap<String, String>,
}

/// One analysis (all samples or drop-first) of one series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Estimate {
    /// The mean of the point means (unit).
    pub mean: f64,
    /// S_B²: the between-boot variance of the point means (unit²).
    pub between_var: f64,
    /// Its ν: boots − 1.
    pub between_dof: f64,
    /// s_W²: the pooled within-boot variance of the samples (unit²).
    pub within_var: f64,
    /// Its ν: Σ (n_j − 1).
    pub within_dof: f64,
    /// T² = max(0, S_B² − s_W²/n): the boot-level variance component (unit²).
    pub boot_var: f64,
    /// The boot-effect test over the boots (ANOVA), when it could be made.
    pub boot_effect_p: Option<f64>,
    /// 100·√S_B²/mean: the SD of a point mean, percent (for reading; derived).
    pub between_sd_pct: f64,
    /// 100·√T²/mean: the boot-level SD, percent (for reading; derived).
    pub boot_sd_pct: f64,
    /// 100·√s_W²/mean: the within-boot CV, percent (for reading; derived).
    pub within_cv_pct: f64,
}

impl Estimate {
    /// S_B²/mean²: what pools into a campaign.
    #[must_use]
    pub fn rel_between(&self) -> f64 {
        self.between_var / (self.mean * self.mean)
    }

    /// T²/mean².
    #[must_use]
    pub fn rel_boot(&self) -> f64 {
        self.boot_var / (self.mean * self.mean)
    }

    /// s_W²/mean².
    #[must_use]
    pub fn rel_within(&self) -> f64 {
        self.within_var / (self.mean * self.mean)
    }

    /// What this estimate pools into a campaign: S_B²/mean² with ν = boots − 1.
    #[must_use]
    pub fn prior(&self) -> crate::stats::BootPrior {
        crate::stats::BootPrior {
            rel_var: self.rel_between(),
            dof: self.between_dof,
        }
    }
}

/// One workload case and metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesProfile {
    /// Workload name.
    pub workload: String,
    /// Matrix case (`key=value,…`), empty without a matrix.
    pub case: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// Warm-up runs per point.
    pub warmup: u32,
    /// Measured samples per point (the variance of a point mean depends on it).
    pub samples: u32,
    /// SHA-256 of what defines the measurement: the case's command, environment and CPU
    /// list, the metric's extraction, the recipe's setup and the files it copies.
    pub definition_sha256: String,
    /// All measured samples.
    pub all: Estimate,
    /// The first measured sample of every point dropped; absent with fewer than 3 samples.
    pub drop_first: Option<Estimate>,
}

/// A noise profile, as the file holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// [`PROFILE_FORMAT`].
    pub format: u32,
    /// `sha256:<hex>` of the rest of the profile in canonical form ([`Profile::digest`]).
    pub checksum: String,
    /// When it was made (RFC 3339, UTC).
    pub created: String,
    /// The aba version that made it.
    pub aba: String,
    /// Boot-to-boot or run-to-run.
    pub scope: Scope,
    /// Points (boots) the calibration measured.
    pub boots: u32,
    /// Where it came from.
    pub source: Source,
    /// What it holds for.
    pub fingerprint: Fingerprint,
    /// Per workload case and metric.
    pub series: Vec<SeriesProfile>,
}

/// A profile value that cannot be right: the field (`series[2].all.between_var`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The field, as a path into the file.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl Profile {
    /// `sha256:<hex>` of the profile without its `checksum`, as canonical JSON (keys in
    /// declaration order, numbers in their shortest round-trip form): independent of the
    /// TOML's layout, comments and key order, and of nothing else.
    #[must_use]
    pub fn digest(&self) -> String {
        let mut body = self.clone();
        body.checksum.clear();
        let json = serde_json::to_vec(&body).expect("invariant: a profile serialises");
        format!("sha256:{}", hex::encode(Sha256::digest(json)))
    }

    /// Sets `checksum` to [`Profile::digest`].
    pub fn seal(&mut self) {
        self.checksum = self.digest();
    }

    /// The series of `workload`, `case` and `metric`, when the profile has it.
    #[must_use]
    pub fn series(&self, workload: &str, case: &str, metric: &str) -> Option<&SeriesProfile> {
        self.series
            .iter()
            .find(|s| s.workload == workload && s.case == case && s.metric == metric)
    }

    /// Checks every value; the first problem found, naming its field. The checksum is
    /// checked last, so a value that is wrong in itself is named as such.
    pub fn validate(&self) -> Result<(), Invalid> {
        let bad = |field: &str, problem: String| Invalid {
            field: field.to_owned(),
            problem,
        };
        if self.format != PROFILE_FORMAT {
            return Err(bad(
                "format",
                format!(
                    "is {}; this aba reads noise profiles of format {PROFILE_FORMAT}",
                    self.format
                ),
            ));
        }
        if time::OffsetDateTime::parse(
            &self.created,
            &time::format_description::well_known::Rfc3339,
        )
        .is_err()
        {
            return Err(bad("created", "is not an RFC 3339 time".to_owned()));
        }
        if self.boots < 2 {
            return Err(bad(
                "boots",
                format!("is {}; a profile needs at least 2 boots", self.boots),
            ));
        }
        if self.fingerprint.target.is_empty() || self.fingerprint.release.is_empty() {
            return Err(bad(
                "fingerprint",
                "names no target or no release".to_owned(),
            ));
        }
        if self.series.is_empty() {
            return Err(bad("series", "is empty".to_owned()));
        }
        for (i, s) in self.series.iter().enumerate() {
            if s.samples == 0 {
                return Err(bad(&format!("series[{i}].samples"), "is 0".to_owned()));
            }
            check_estimate(&s.all, self.boots, &format!("series[{i}].all"))?;
            if let Some(df) = &s.drop_first {
                check_estimate(df, self.boots, &format!("series[{i}].drop_first"))?;
            }
        }
        if self.checksum != self.digest() {
            return Err(bad(
                "checksum",
                format!(
                    "is {}, but the profile's content hashes to {}: it was edited after aba \
                     wrote it",
                    crate::text::cut(&crate::text::one_line(&self.checksum), 80),
                    self.digest()
                ),
            ));
        }
        Ok(())
    }
}

/// An estimate's numbers must be finite, variances non-negative, the mean positive and the
/// degrees of freedom those of `boots` points.
fn check_estimate(e: &Estimate, boots: u32, at: &str) -> Result<(), Invalid> {
    let bad = |field: &str, problem: String| Invalid {
        field: format!("{at}.{field}"),
        problem,
    };
    let numbers = [
        ("mean", e.mean),
        ("between_var", e.between_var),
        ("between_dof", e.between_dof),
        ("within_var", e.within_var),
        ("within_dof", e.within_dof),
        ("boot_var", e.boot_var),
        ("between_sd_pct", e.between_sd_pct),
        ("boot_sd_pct", e.boot_sd_pct),
        ("within_cv_pct", e.within_cv_pct),
    ];
    for (field, value) in numbers {
        if !value.is_finite() {
            return Err(bad(field, format!("is {value}, not a finite number")));
        }
        if value < 0.0 {
            return Err(bad(field, format!("is {value}, below 0")));
        }
    }
    if e.mean <= 0.0 {
        return Err(bad(
            "mean",
            "is 0: a relative variance of it does not exist".to_owned(),
        ));
    }
    if e.between_dof != f64::from(boots - 1) {
        return Err(bad(
            "between_dof",
            format!("is {}, but {boots} boots give {}", e.between_dof, boots - 1),
        ));
    }
    if let Some(p) = e.boot_effect_p
        && !(0.0..=1.0).contains(&p)
    {
        return Err(bad("boot_effect_p", format!("is {p}, not a probability")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Profile, Scope};
    use crate::profile::testdata::profile;

    #[test]
    fn a_sealed_profile_validates_and_any_edited_number_is_named() {
        let mut p = profile();
        p.seal();
        assert_eq!(p.validate(), Ok(()));
        let mut edited = p.clone();
        edited.series[0].all.between_var *= 0.5;
        let err = edited.validate().expect_err("edited");
        assert_eq!(err.field, "checksum");
        assert!(err.problem.contains("edited after aba wrote it"), "{err:?}");
        let mut negative = p.clone();
        negative.series[0].all.within_var = -1.0;
        negative.seal();
        let err = negative.validate().expect_err("negative");
        assert_eq!(
            (err.field.as_str(), err.problem.as_str()),
            ("series[0].all.within_var", "is -1, below 0")
        );
        let mut dof = p.clone();
        dof.series[0].all.between_dof = 9.0;
        dof.seal();
        assert_eq!(
            dof.validate().expect_err("dof").field,
            "series[0].all.between_dof"
        );
        let mut future = p;
        future.format = 2;
        assert_eq!(future.validate().expect_err("format").field, "format");
    }

    #[test]
    fn the_checksum_ignores_layout_but_not_content() {
        let mut p = profile();
        p.seal();
        let text = toml::to_string_pretty(&p).expect("serialises");
        let relaid = format!(
            "# a comment a user added\n{}",
            text.replace(" = ", "   =   ")
        );
        let back: Profile = toml::from_str(&relaid).expect("parses");
        assert_eq!(back.validate(), Ok(()));
        assert_eq!(back, p);
        assert_eq!(back.scope, Scope::Boot);
    }
}
