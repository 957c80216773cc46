//! What a batch directory may make `aba batch resume` do. The directory may come from someone
//! else (or have been edited), so its journal is input from a stranger: a resume runs only
//! the recipes the batch's own plan copy, `plan.toml`, names, and creates, resumes or clears
//! only directories strictly inside the batch directory, reached without following a link.
//! Nothing a journal says is used as a path verbatim.

use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use super::{
    journal::{BatchEvent, BatchJournal, CampaignEntry},
    plan::{BatchPlan, PlanError},
};
use crate::{inventory::Inventory, recipe::ident::Name, results::layout::path_safe};

/// The batch directory's copy of its plan.
pub const PLAN_COPY: &str = "plan.toml";

/// Why a batch directory is not resumed, or one of its campaigns is not run.
#[derive(Debug, Error)]
pub enum ConfineError {
    /// `plan.toml` cannot be read or no longer validates.
    #[error(
        "the batch's plan copy {} cannot be used, so nothing of the batch is resumed",
        path.display()
    )]
    Plan {
        /// The plan copy.
        path: PathBuf,
        /// Why.
        #[source]
        source: PlanError,
    },
    /// The journal says something its plan copy does not.
    #[error(
        "{}:{line}: field `{field}`: {reason}; nothing of the batch is resumed",
        path.display()
    )]
    Journal {
        /// `batch.jsonl`.
        path: PathBuf,
        /// 1-based line (the header's campaigns are on line 1).
        line: usize,
        /// The field, as `campaigns[0].recipe`.
        field: String,
        /// What is wrong, with the values escaped.
        reason: String,
    },
    /// A campaign's directory is a link or not a directory.
    #[error(
        "{} is a symbolic link or not a directory: a batch resume creates, resumes and removes only directories inside the batch directory, so this campaign is not run",
        path.display()
    )]
    NotInside {
        /// The path.
        path: PathBuf,
    },
}

/// Checks every campaign of the batch journal's header against the plan copy: same count,
/// numbers, recipe files (the plan's, resolved beside the plan it was copied from), targets
/// and options, and a directory named `NN-<recipe name>`. A resume runs nothing when any
/// differs.
pub fn check_campaigns(
    batch: &Path,
    journal: &BatchJournal,
    inventory: &Inventory,
) -> Result<(), ConfineError> {
    let journal_path = BatchJournal::path_in(batch);
    let wrong = |field: String, reason: String| ConfineError::Journal {
        path: journal_path.clone(),
        line: 1,
        field,
        reason,
    };
    let Some(BatchEvent::Batch { plan, .. }) = journal.events.first() else {
        return Err(wrong("event".to_owned(), "no batch header".to_owned()));
    };
    let plan_path = batch.join(PLAN_COPY);
    let plan_error = |source| ConfineError::Plan {
        path: plan_path.clone(),
        source,
    };
    let text = crate::input::read_text(&plan_path, crate::input::CONFIG_LIMIT, "batch plan")
        .map_err(|source| {
            plan_error(PlanError::Read {
                path: plan_path.clone(),
                source,
            })
        })?;
    let base = Path::new(plan).parent().unwrap_or(Path::new("/"));
    if !base.is_absolute() {
        return Err(wrong(
            "plan".to_owned(),
            format!(
                "`{}` is not an absolute path",
                crate::text::quoted(plan.as_str())
            ),
        ));
    }
    let planned =
        BatchPlan::parse_beside(&plan_path, base, &text, inventory).map_err(plan_error)?;
    let entries = journal.campaigns();
    if entries.len() != planned.campaigns.len() {
        return Err(wrong(
            "campaigns".to_owned(),
            format!(
                "{} campaign(s), but {PLAN_COPY} has {}",
                entries.len(),
                planned.campaigns.len()
            ),
        ));
    }
    for (i, (entry, plan)) in entries.iter().zip(&planned.campaigns).enumerate() {
        let field = |name: &str| format!("campaigns[{i}].{name}");
        let recipe = std::path::absolute(&plan.recipe).unwrap_or_else(|_| plan.recipe.clone());
        let options = &plan.options;
        let differs = [
            ("number", entry.number != plan.number),
            ("recipe", Path::new(&entry.recipe) != recipe),
            ("targets", entry.targets != plan.targets),
            ("allow_tuning", entry.allow_tuning != options.allow_tuning),
            ("wait", entry.wait != options.wait),
            ("yes", entry.yes != options.yes),
            ("no_profile", entry.no_profile != options.no_profile),
            ("kernels", entry.kernels != options.kernel_options),
            ("params", entry.params != options.params),
        ];
        if let Some((name, _)) = differs.iter().find(|(_, d)| *d) {
            return Err(wrong(
                field(name),
                format!(
                    "campaign {} differs from campaign {} of {PLAN_COPY} (recipe `{}` there)",
                    entry.number,
                    plan.number,
                    crate::text::quoted(&recipe.display().to_string())
                ),
            ));
        }
        if Name::new(&entry.name).is_err() {
            return Err(wrong(
                field("name"),
                format!(
                    "`{}` is not a recipe name",
                    crate::text::quoted(&entry.name)
                ),
            ));
        }
        let expected = format!("{:02}-{}", entry.number, entry.name);
        if entry.dir != expected {
            return Err(wrong(
                field("dir"),
                format!(
                    "`{}` is not the campaign's directory `{expected}`",
                    crate::text::quoted(&entry.dir)
                ),
            ));
        }
    }
    Ok(())
}

/// `<batch>/<entry.dir>/<target>`, when every part is one plain name and nothing on the way
/// is a link or a file (what does not exist yet is fine: a start creates it).
pub fn campaign_dir(
    batch: &Path,
    entry: &CampaignEntry,
    target: &str,
) -> Result<PathBuf, ConfineError> {
    let mut at = batch.to_path_buf();
    for part in [entry.dir.clone(), path_safe(target)] {
        let one_name = matches!(
            Path::new(&part).components().collect::<Vec<_>>().as_slice(),
            [Component::Normal(_)]
        );
        at.push(&part);
        if !one_name || part.contains('/') {
            return Err(ConfineError::NotInside { path: at });
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                return Err(ConfineError::NotInside { path: at });
            }
            // Not there yet (a start creates it), or unreadable (the start says why).
            Ok(_) | Err(_) => {}
        }
    }
    Ok(at)
}
