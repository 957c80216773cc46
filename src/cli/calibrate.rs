//! `aba calibrate RECIPE --target T [--boots N]`: the recipe's null campaign (its baseline
//! booted N times), run like any campaign, whose analysis becomes the target's noise profile
//! for that recipe when it finishes (also when it finishes under `aba resume`).

use std::path::Path;

use crate::{
    analysis::analyze,
    campaign::{calibrate::calibration_recipe, engine::RunOptions},
    cli::{
        FilesArgs, KernelArgs, TargetArgs,
        builds::HostBuilds,
        run::{Launch, Voice, kernels_record, params_record, start_new},
    },
    error::Error,
    profile::{
        build::{Calibration, build},
        write_profile as write_profile_file,
    },
    results::{
        journal::{Event, Journal, now_rfc3339},
        layout::ResultsDir,
    },
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
    let mut recipe = files_args.load(recipe_path, &inventory)?;
    let target = target_args.resolve_in(&inventory)?;
    let host = HostBuilds::prepare(kernel_args, &recipe, &[&target], &Voice::Alone)?;
    let mut kernels = kernel_args.bind(&mut recipe, &target)?;
    if let Some(host) = &host {
        host.bind(&mut recipe, &mut kernels, &target)?;
    }
    let mut allowed = files_args.allow_files_outside.clone();
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
            .chain(params_record(&calibration, &Voice::Alone))
            .chain(kernels_record(&kernels, &Voice::Alone))
            .collect())
    })
}

/// When the finished campaign in `dir` is a calibration, writes its noise profile where its
/// journal says and says so; nothing for any other campaign.
pub fn write_profile(dir: &ResultsDir) -> Result<(), Error> {
    let journal = Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir.root.clone(),
        resumable: false,
        source,
    })?;
    let Some((recipe_name, recipe_sha256, path)) = journal.events.iter().find_map(|e| match e {
        Event::Calibration {
            recipe,
            recipe_sha256,
            profile,
            ..
        } => Some((recipe.clone(), recipe_sha256.clone(), profile.clone())),
        _ => None,
    }) else {
        return Ok(());
    };
    let analysis = analyze(dir)?;
    let recipe = dir.load_recipe()?;
    let created = now_rfc3339();
    let built = build(&Calibration {
        analysis: &analysis,
        recipe: &recipe,
        recipe_name: &recipe_name,
        recipe_sha256: &recipe_sha256,
        created: &created,
    })
    .map_err(|source| Error::Calibration {
        dir: dir.root.clone(),
        source,
    })?;
    let path = Path::new(&path);
    let replaced = path.exists();
    write_profile_file(path, &built.profile).map_err(Error::Profile)?;
    for skipped in &built.skipped {
        eprintln!("warning: not in the noise profile: {skipped}");
    }
    let p = &built.profile;
    eprintln!(
        "noise profile {}: {} ({} boots of {}, {}, {} series)",
        if replaced {
            "written over the previous one"
        } else {
            "written"
        },
        path.display(),
        p.boots,
        p.fingerprint.kernel,
        p.scope.words(),
        p.series.len(),
    );
    Ok(())
}
