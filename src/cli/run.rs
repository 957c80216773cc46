//! `aba run` and `aba resume` on one campaign: the options turned into the lifecycle of
//! [`crate::session`].

use std::path::{Path, PathBuf};

use crate::{
    campaign::engine::RunOptions,
    cli::{FilesArgs, KernelArgs, TargetArgs},
    error::{CampaignEnd, Error},
    results::manifest::Manifest,
    session::{launch::Launch, observer::Voice, resume::resume_one},
};

/// `aba run RECIPE`.
pub fn run(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    kernel_args: &KernelArgs,
    launch: Launch<'_>,
    options: RunOptions,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    let target = target_args.resolve_in(&inventory)?;
    crate::session::prepare::run(
        recipe_path,
        &inventory,
        target,
        &files_args.sources(),
        &kernel_args.bindings(),
        launch,
        options,
    )
    .map(CampaignEnd::code)
}

/// `aba resume DIR`: one campaign, or with a multi-target parent every unfinished target's
/// concurrently.
pub fn resume(
    dir_path: &Path,
    targets: Option<&PathBuf>,
    amend: Option<&Path>,
    files: &FilesArgs,
    options: RunOptions,
) -> Result<u8, Error> {
    let files = files.sources();
    if Manifest::is_parent(dir_path) {
        return crate::session::multi::resume(dir_path, targets, amend, &files, options)
            .map(CampaignEnd::code);
    }
    resume_one(dir_path, targets, amend, &files, options, &Voice::Alone).map(CampaignEnd::code)
}
