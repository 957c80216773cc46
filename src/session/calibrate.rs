//! `aba calibrate`: the recipe's null campaign (its baseline booted N times), run like any
//! campaign, whose analysis becomes the target's noise profile for that recipe when it
//! finishes (also when it finishes under `aba resume`: [`super::conclude::write_profile`]).

use std::path::Path;

use crate::{
    campaign::{calibrate::calibration_recipe, engine::RunOptions},
    error::{CampaignEnd, Error},
    inventory::Inventory,
    results::journal::Event,
    session::{
        builds::HostBuilds,
        inputs::{Bindings, Sources},
        launch::{Launch, start_new},
        observer::Voice,
        prepare::{kernels_record, params_record},
    },
};

/// `aba calibrate` of the recipe at `recipe_path` on the target named `target` (resolved
/// after the recipe loads, so a bad recipe is said first).
#[expect(
    clippy::too_many_arguments,
    reason = "one campaign's parts, each from a different place; a struct would only rename them"
)]
pub fn calibrate(
    recipe_path: &Path,
    inventory: &Inventory,
    target: &str,
    sources: &Sources,
    bindings: &Bindings,
    launch: Launch<'_>,
    boots: u32,
    options: RunOptions,
) -> Result<CampaignEnd, Error> {
    let target = inventory.target(target);
    let mut recipe = bindings.load(sources, recipe_path, inventory, target.as_ref().ok())?;
    let target = target?;
    let host = HostBuilds::prepare(bindings, &recipe, &[&target])?;
    let mut kernels = bindings.bind_kernels(&mut recipe, &target)?;
    if let Some(host) = &host {
        host.bind(&mut recipe, &mut kernels, &target)?;
    }
    let mut allowed = sources.allow_files_outside.clone();
    allowed.extend(inventory.allow_files_outside.iter().cloned());
    let mut calibration = calibration_recipe(&recipe, boots, &allowed).map_err(Error::Calibrate)?;
    crate::kernel::binding::apply(&mut calibration, &kernels);
    let profile = target.profiles.join(format!("{}.toml", recipe.name));
    eprintln!(
        "calibration: {boots} boots of {} on target {}; the noise profile goes to {}",
        recipe.analysis.baseline,
        target.name,
        profile.display()
    );
    let record = Event::Calibration {
        recipe: recipe.name.to_string(),
        recipe_sha256: recipe.sha256.clone(),
        boots,
        profile: profile.display().to_string(),
    };
    // A calibration measures the machine: it pools no profile of its own.
    start_new(&calibration, recipe_path, &target, launch, options, |dir| {
        if let Some(host) = &host {
            host.keep_logs(dir)?;
        }
        Ok(std::iter::once(record)
            .chain(params_record(&calibration).say(&Voice::Alone))
            .chain(kernels_record(&kernels).say(&Voice::Alone))
            .collect())
    })
}
