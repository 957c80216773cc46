//! `aba calibrate RECIPE --target T [--boots N]`: the options turned into
//! [`crate::session::calibrate`].

use std::path::Path;

use crate::{
    campaign::engine::RunOptions,
    cli::{FilesArgs, KernelArgs, TargetArgs},
    error::{CampaignEnd, Error},
    inventory::LOCAL,
    session::launch::Launch,
};

/// `aba calibrate`.
pub fn calibrate(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    kernel_args: &KernelArgs,
    launch: Launch<'_>,
    boots: u32,
    options: RunOptions,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    crate::session::calibrate::calibrate(
        recipe_path,
        &inventory,
        target_args.target.as_deref().unwrap_or(LOCAL),
        &files_args.sources(),
        &kernel_args.bindings(),
        launch,
        boots,
        options,
    )
    .map(CampaignEnd::code)
}
