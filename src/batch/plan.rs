//! The batch plan, `plan.toml`: which campaigns run overnight, on which targets, in which
//! order, with which options.
//!
//! ```toml
//! version = 1
//! name = "nightly"
//!
//! [[campaign]]
//! recipe = "recipes/002-dlserver.toml"      # relative to this file
//! targets = ["r750", "xr8620t"]
//!
//! [[campaign]]
//! recipe = "recipes/004-pipe.toml"
//! targets = ["r750"]
//! allow_tuning = false
//! wait = false                              # wait for another campaign's lock
//! yes = true                                # start a plan estimated at over a day
//! no_profile = false
//! kernels = ["b=7.2.0-rc3"]                 # --kernel LABEL=RELEASE
//! params = ["isolated_cpu=5"]                # --param NAME=VALUE
//! ```
//!
//! Parsed with `deny_unknown_fields` and spans kept, so every mistake is reported at its
//! file, line and column with the field's name, like a recipe's. What needs the inventory
//! (a target's name) is checked here too; what needs the recipe (it loads, it plans on the
//! target) is checked by the command before anything starts.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use serde::Deserialize;
use thiserror::Error;
use toml::Spanned;

use crate::{
    inventory::Inventory,
    kernel::binding::KernelBinding,
    recipe::{diagnostic::Diagnostic, load::Diagnostics},
};

/// The plan format this aba reads.
pub const PLAN_VERSION: u32 = 1;

/// At most this many campaigns in one plan: a night, not a year; bounds what a bad file
/// can make aba hold.
pub const MAX_CAMPAIGNS: usize = 500;

/// Why a plan cannot be used.
#[derive(Debug, Error)]
pub enum PlanError {
    /// The file could not be read.
    #[error("cannot read batch plan {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file has problems, each at its line and column.
    #[error("{0}")]
    Invalid(Diagnostics),
}

/// A batch plan file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "aba batch plan",
    description = "A night of campaigns run by `aba batch FILE` (docs/queue.md)."
)]
struct PlanFile {
    /// The plan format: 1.
    #[schemars(with = "u32", range(min = 1, max = 1))]
    version: Spanned<u32>,
    /// The batch directory's prefix (default `batch`): 1-64 of [A-Za-z0-9._-].
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    name: Option<Spanned<String>>,
    /// The campaigns, in the order each target runs them.
    #[serde(default)]
    #[schemars(with = "Vec<CampaignSpec>")]
    campaign: Vec<Spanned<CampaignSpec>>,
}

/// One campaign: a recipe on some targets, with `aba run`'s options.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CampaignSpec {
    /// The recipe file, relative to the plan.
    #[schemars(with = "String")]
    recipe: Spanned<String>,
    /// Inventory names; each target runs the campaign when its lane reaches it.
    #[schemars(with = "Vec<String>", length(min = 1))]
    targets: Spanned<Vec<Spanned<String>>>,
    /// `--allow-tuning`.
    #[serde(default)]
    allow_tuning: bool,
    /// `--wait`: wait while another campaign holds a target instead of being refused.
    #[serde(default)]
    wait: bool,
    /// `--yes`: start a plan estimated at more than a day or 100,000 runs.
    #[serde(default)]
    yes: bool,
    /// `--no-profile`.
    #[serde(default)]
    no_profile: bool,
    /// `--kernel LABEL=RELEASE`, each.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    kernels: Vec<Spanned<String>>,
    /// `--param NAME=VALUE`, each (the recipe's `[params]`).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    params: Vec<Spanned<String>>,
}

/// The JSON Schema of batch plans, generated from the types they are read into (`aba
/// schema batch`).
pub fn json_schema(generator: schemars::SchemaGenerator) -> schemars::Schema {
    generator.into_root_schema_for::<PlanFile>()
}

/// What `aba run` would take as flags, per campaign.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CampaignOptions {
    /// `--allow-tuning`.
    pub allow_tuning: bool,
    /// `--wait`.
    pub wait: bool,
    /// `--yes`.
    pub yes: bool,
    /// `--no-profile`.
    pub no_profile: bool,
    /// `--kernel LABEL=RELEASE`, each.
    pub kernels: Vec<KernelBinding>,
    /// The same as written, for the batch journal.
    pub kernel_options: Vec<String>,
    /// `--param NAME=VALUE`, each, as written (read with
    /// [`crate::recipe::params::ParamBinding::from_option`] when checked here and when run).
    pub params: Vec<String>,
}

/// One campaign of the plan.
#[derive(Clone, Debug)]
pub struct PlannedCampaign {
    /// 1-based position in the plan.
    pub number: usize,
    /// The recipe, resolved against the plan's directory.
    pub recipe: PathBuf,
    /// The targets, in the plan's order.
    pub targets: Vec<String>,
    /// Its options.
    pub options: CampaignOptions,
}

/// A validated plan.
#[derive(Clone, Debug)]
pub struct BatchPlan {
    /// The plan file.
    pub path: PathBuf,
    /// Its exact text (copied into the batch directory).
    pub text: String,
    /// The batch's name (`name`, default `batch`): the batch directory's prefix.
    pub name: String,
    /// The campaigns in order.
    pub campaigns: Vec<PlannedCampaign>,
}

/// Whether `name` can become part of a directory name.
fn plain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.')
}

impl BatchPlan {
    /// Reads and validates the plan at `path` against `inventory`.
    pub fn load(path: &Path, inventory: &Inventory) -> Result<BatchPlan, PlanError> {
        let text = crate::input::read_text(path, crate::input::CONFIG_LIMIT, "batch plan")
            .map_err(|source| PlanError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        BatchPlan::parse(path, &text, inventory)
    }

    /// Validates plan text as if read from `path`.
    pub fn parse(path: &Path, text: &str, inventory: &Inventory) -> Result<BatchPlan, PlanError> {
        let base = path.parent().unwrap_or(Path::new("."));
        BatchPlan::parse_beside(path, base, text, inventory)
    }

    /// Validates plan text read from `path` (named in messages) whose recipes are relative to
    /// `base`: a batch directory's copy, `plan.toml`, read against the folder of the plan it
    /// was copied from.
    pub fn parse_beside(
        path: &Path,
        base: &Path,
        text: &str,
        inventory: &Inventory,
    ) -> Result<BatchPlan, PlanError> {
        let invalid = |diags| PlanError::Invalid(Diagnostics(diags));
        let file: PlanFile = toml::from_str(text)
            .map_err(|e| invalid(vec![Diagnostic::from_toml(path, text, &e)]))?;
        let mut diags = Vec::new();
        let at = |span: std::ops::Range<usize>, message: String| {
            Diagnostic::at(path, text, Some(span), message)
        };
        if *file.version.get_ref() != PLAN_VERSION {
            diags.push(at(
                file.version.span(),
                format!(
                    "batch plan version {} is not supported: this aba reads version {PLAN_VERSION}",
                    file.version.get_ref()
                ),
            ));
        }
        let name = match &file.name {
            Some(n) if !plain(n.get_ref()) => {
                diags.push(at(
                    n.span(),
                    "invalid batch name: use 1-64 of [A-Za-z0-9._-], not starting with `.` \
                     (it becomes a directory name)"
                        .to_owned(),
                ));
                String::new()
            }
            Some(n) => n.get_ref().clone(),
            None => "batch".to_owned(),
        };
        if file.campaign.is_empty() {
            diags.push(at(
                0..0,
                "a batch plan needs at least one [[campaign]]".to_owned(),
            ));
        }
        if file.campaign.len() > MAX_CAMPAIGNS {
            diags.push(at(
                file.campaign[MAX_CAMPAIGNS].span(),
                format!("more than {MAX_CAMPAIGNS} campaigns in one plan"),
            ));
        }
        let mut campaigns = Vec::new();
        for (i, spec) in file.campaign.iter().enumerate() {
            let spec = spec.get_ref();
            let recipe = base.join(spec.recipe.get_ref());
            if let Err(why) = recipe_inside(base, &recipe) {
                diags.push(at(
                    spec.recipe.span(),
                    format!(
                        "recipe `{}` {why}",
                        crate::text::quoted(spec.recipe.get_ref())
                    ),
                ));
            }
            if spec.targets.get_ref().is_empty() {
                diags.push(at(
                    spec.targets.span(),
                    "a campaign needs at least one target".to_owned(),
                ));
            }
            let mut seen = BTreeSet::new();
            for target in spec.targets.get_ref() {
                let name = target.get_ref();
                if !seen.insert(name.clone()) {
                    diags.push(at(
                        target.span(),
                        format!("target `{name}` is named twice in this campaign"),
                    ));
                } else if let Err(e) = inventory.target(name) {
                    diags.push(at(target.span(), e.to_string()));
                }
            }
            let mut kernels = Vec::new();
            for k in &spec.kernels {
                match KernelBinding::from_option(k.get_ref()) {
                    Ok(b) => kernels.push(b),
                    Err(e) => diags.push(at(k.span(), format!("invalid kernel binding: {e}"))),
                }
            }
            for p in &spec.params {
                if let Err(e) = crate::recipe::params::ParamBinding::from_option(p.get_ref()) {
                    diags.push(at(p.span(), format!("invalid parameter binding: {e}")));
                }
            }
            campaigns.push(PlannedCampaign {
                number: i + 1,
                recipe,
                targets: spec
                    .targets
                    .get_ref()
                    .iter()
                    .map(|t| t.get_ref().clone())
                    .collect(),
                options: CampaignOptions {
                    allow_tuning: spec.allow_tuning,
                    wait: spec.wait,
                    yes: spec.yes,
                    no_profile: spec.no_profile,
                    kernels,
                    kernel_options: spec.kernels.iter().map(|k| k.get_ref().clone()).collect(),
                    params: spec.params.iter().map(|p| p.get_ref().clone()).collect(),
                },
            });
        }
        if diags.is_empty() {
            Ok(BatchPlan {
                path: path.to_path_buf(),
                text: text.to_owned(),
                name,
                campaigns,
            })
        } else {
            Err(invalid(diags))
        }
    }

    /// Every target the plan names, first appearance first.
    #[must_use]
    pub fn targets(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for c in &self.campaigns {
            for t in &c.targets {
                if !all.contains(t) {
                    all.push(t.clone());
                }
            }
        }
        all
    }
}

/// Checks, before a byte of it is read, that `recipe` (a plan's recipe joined to `base`, the
/// plan's folder) is a regular file inside that folder, reached without a link at its name:
/// a plan can come from someone else (a batch directory's copy), and a recipe that does not
/// parse is quoted by its error, so a plan naming `/etc/shadow`, `../../x` or a link to a
/// 0600 file must be refused here. Returns why not, as the end of a sentence.
fn recipe_inside(base: &Path, recipe: &Path) -> Result<(), String> {
    let folder = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let meta = std::fs::symlink_metadata(recipe)
        .map_err(|_| format!("not found (looked for {})", recipe.display()))?;
    if meta.file_type().is_symlink() {
        return Err(format!(
            "is a symbolic link ({}): a plan's recipes must be regular files inside the plan's folder, and aba does not follow links there",
            recipe.display()
        ));
    }
    if !meta.is_file() {
        return Err(format!("is not a regular file ({})", recipe.display()));
    }
    let inside = match (folder.canonicalize(), recipe.canonicalize()) {
        (Ok(folder), Ok(recipe)) => recipe.starts_with(folder),
        _ => false,
    };
    if inside {
        Ok(())
    } else {
        Err(format!(
            "is outside the plan's folder {} ({}): a plan's recipes must be inside it",
            folder.display(),
            recipe.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{BatchPlan, PlanError};
    use crate::inventory::Inventory;

    fn parse(text: &str) -> Result<BatchPlan, PlanError> {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("r.toml"), "").expect("write");
        let path = dir.path().join("plan.toml");
        BatchPlan::parse(&path, text, &Inventory::default())
    }

    fn error(text: &str) -> String {
        match parse(text) {
            Err(PlanError::Invalid(d)) => d.to_string(),
            other => panic!("expected an invalid plan, got {other:?}"),
        }
    }

    #[test]
    fn a_plan_lists_campaigns_in_order_with_their_options() {
        let plan = parse(
            "version = 1\nname = \"nightly\"\n[[campaign]]\nrecipe = \"r.toml\"\n\
             targets = [\"local\"]\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"local\"]\n\
             yes = true\nkernels = [\"b=6.1.0\"]\nparams = [\"cpu=3\"]\n",
        )
        .expect("valid");
        assert_eq!(plan.campaigns[1].options.params, ["cpu=3"]);
        assert_eq!(plan.name, "nightly");
        assert_eq!(plan.campaigns.len(), 2);
        assert_eq!(plan.campaigns[1].number, 2);
        assert!(plan.campaigns[1].options.yes);
        assert_eq!(plan.campaigns[1].options.kernels.len(), 1);
        assert_eq!(plan.targets(), vec!["local".to_owned()]);
        assert!(plan.campaigns[0].recipe.ends_with(Path::new("r.toml")));
    }

    #[test]
    fn errors_name_line_column_and_field() {
        let e = error("version = 1\n[[campaign]]\nrecipe = \"r.toml\"\ntarget = [\"local\"]\n");
        assert!(e.contains(":4:1"), "{e}");
        assert!(e.contains("unknown field `target`"), "{e}");
        let e = error("version = 2\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"local\"]\n");
        assert!(e.contains(":1:11") && e.contains("version 2"), "{e}");
        let e = error("version = 1\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"nope\"]\n");
        assert!(
            e.contains(":4:12") && e.contains("`nope` is not defined"),
            "{e}"
        );
        assert!(e.contains("campaign[1].targets[1]"), "{e}");
        let e = error("version = 1\n[[campaign]]\nrecipe = \"gone.toml\"\ntargets = [\"local\"]\n");
        assert!(e.contains(":3:10") && e.contains("not found"), "{e}");
        let e =
            error("version = 1\n[[campaign]]\nrecipe = \"/etc/passwd\"\ntargets = [\"local\"]\n");
        assert!(
            e.contains(":3:10") && e.contains("outside the plan's folder"),
            "{e}"
        );
        let e = error("version = 1\n");
        assert!(e.contains("at least one [[campaign]]"), "{e}");
        let e = error(
            "version = 1\nname = \"../x\"\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"local\"]\n",
        );
        assert!(e.contains("invalid batch name"), "{e}");
        let e = error(
            "version = 1\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"local\"]\nparams = [\"cpu\"]\n",
        );
        assert!(
            e.contains(":5:11") && e.contains("invalid parameter binding"),
            "{e}"
        );
    }
}
