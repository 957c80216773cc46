//! A new campaign made ready before anything is created: the recipe loaded and bound for its
//! target, the noise profile chosen, the records its journal starts with, each choice said.

use std::{path::Path, sync::Arc};

use sha2::{Digest as _, Sha256};

use crate::{
    campaign::engine::RunOptions,
    error::{CampaignEnd, Error},
    inventory::{Inventory, Target},
    kernel::binding::BoundKernel,
    origin::Origin,
    profile::select::{Choice, choose},
    recipe::{Recipe, params::BoundParam},
    results::{atomic::write_atomic, journal::Event},
    session::{
        builds::HostBuilds,
        inputs::{Bindings, Sources},
        launch::{Launch, begin_new, check_new},
        observer::Voice,
    },
};

/// A new campaign of `aba run` on one target, made ready before anything is created: the
/// recipe loaded and its kernels bound for the target, the noise profile chosen, the records
/// its journal starts with.
pub struct Prepared {
    /// The recipe, bound for the target.
    pub recipe: Recipe,
    /// The target.
    pub target: Target,
    records: Vec<Event>,
    profile: Option<Vec<u8>>,
    /// The kernels built on this host, whose logs the results directory keeps.
    host: Option<Arc<HostBuilds>>,
    /// Who the campaign speaks as, from its preparation to its conclusion.
    voice: Voice,
}

impl Prepared {
    /// Loads the recipe for `target`, binds its kernels and chooses its noise profile,
    /// saying each choice as `voice`, which the campaign keeps.
    #[expect(
        clippy::too_many_arguments,
        reason = "one campaign's parts, each from a different place; a struct would only rename them"
    )]
    pub fn new(
        recipe_path: &Path,
        inventory: &Inventory,
        target: Target,
        sources: &Sources,
        bindings: &Bindings,
        host: Option<Arc<HostBuilds>>,
        no_profile: bool,
        voice: Voice,
    ) -> Result<Prepared, Error> {
        let mut recipe = bindings.load(sources, recipe_path, inventory, Some(&target))?;
        let mut kernels = bindings.bind_kernels(&mut recipe, &target)?;
        if let Some(host) = &host {
            host.bind(&mut recipe, &mut kernels, &target)?;
        }
        let choice = if no_profile {
            None
        } else {
            Some(choose(&target.profiles, &recipe, &target.name).map_err(Error::Profile)?)
        };
        let record = profile_record(&target, choice.as_ref()).say(&voice);
        let profile = choice.and_then(|c| c.chosen).map(|c| c.bytes);
        let records = std::iter::once(record)
            .chain(params_record(&recipe).say(&voice))
            .chain(kernels_record(&kernels).say(&voice))
            .collect();
        Ok(Prepared {
            recipe,
            target,
            records,
            profile,
            host,
            voice,
        })
    }

    /// Checks the plan as [`check_new`] does.
    pub fn check(
        &self,
        recipe_path: &Path,
        launch: Launch<'_>,
        options: &RunOptions,
    ) -> Result<(), Error> {
        check_new(
            &self.recipe,
            recipe_path,
            &self.target,
            launch,
            options,
            &self.voice,
        )
    }

    /// Checks, creates the results directory and runs the campaign.
    pub fn start(
        &self,
        recipe_path: &Path,
        launch: Launch<'_>,
        options: RunOptions,
    ) -> Result<CampaignEnd, Error> {
        self.check(recipe_path, launch, &options)?;
        self.begin(launch, options)
    }

    /// Creates the results directory and runs the campaign (checked already).
    pub fn begin(&self, launch: Launch<'_>, options: RunOptions) -> Result<CampaignEnd, Error> {
        begin_new(
            &self.recipe,
            &self.target,
            launch,
            options,
            &self.voice,
            |dir| {
                if let Some(host) = &self.host {
                    host.keep_logs(dir)?;
                }
                if let Some(bytes) = &self.profile {
                    write_atomic(&dir.profile_path(), bytes).map_err(|source| {
                        Error::ResultsDir {
                            parent: dir.root.clone(),
                            source,
                        }
                    })?;
                }
                Ok(self.records.clone())
            },
        )
    }
}

/// `aba run RECIPE` on one target: its builds made, the campaign prepared, checked, created
/// and run, speaking alone.
pub fn run(
    recipe_path: &Path,
    inventory: &Inventory,
    target: Target,
    sources: &Sources,
    bindings: &Bindings,
    launch: Launch<'_>,
    options: RunOptions,
) -> Result<CampaignEnd, Error> {
    let host = HostBuilds::for_run(recipe_path, inventory, sources, bindings, &[&target])?;
    let prepared = Prepared::new(
        recipe_path,
        inventory,
        target,
        sources,
        bindings,
        host,
        launch.no_profile,
        Voice::Alone,
    )?;
    prepared.start(recipe_path, launch, options)
}

/// The journal's record of the kernels a new campaign boots, when something bound one (none
/// means "as the recipe said"); each bound kernel is said before the campaign starts.
pub fn kernels_record(kernels: &[BoundKernel]) -> Said<Option<Event>> {
    let lines: Vec<String> = kernels
        .iter()
        .filter(|k| k.is_bound())
        .map(|k| {
            format!(
                "kernel {}: {} ({})",
                k.label,
                k.release,
                k.note().unwrap_or_default()
            )
        })
        .collect();
    Said {
        record: (!lines.is_empty()).then(|| Event::Kernels {
            kernels: kernels.to_vec(),
        }),
        lines,
    }
}

/// The journal's record of the parameter values a new campaign uses, when the recipe declares
/// any; each bound one is said before the campaign starts.
pub fn params_record(recipe: &Recipe) -> Said<Option<Event>> {
    Said {
        record: (!recipe.params.is_empty()).then(|| Event::Params {
            params: recipe.params.iter().map(BoundParam::from).collect(),
        }),
        lines: recipe
            .params
            .iter()
            .filter(|p| p.from != Origin::Recipe)
            .map(|p| format!("parameter {}", p.line()))
            .collect(),
    }
}

/// The journal's record of which noise profile a new campaign uses, and the line that says
/// it before the campaign starts.
fn profile_record(target: &Target, choice: Option<&Choice>) -> Said<Event> {
    let dir = target.profiles.display().to_string();
    let Some(choice) = choice else {
        return Said {
            record: Event::Profile {
                dir,
                file: None,
                sha256: None,
                not_used: Vec::new(),
                disabled: true,
            },
            lines: vec!["noise profile: none (--no-profile)".to_owned()],
        };
    };
    let first = match &choice.chosen {
        Some(c) => format!(
            "noise profile: {} (created {}, {} boots)",
            c.path.display(),
            c.profile.created,
            c.profile.boots
        ),
        None if choice.not_used.is_empty() => {
            format!("noise profile: none in {dir} (`aba calibrate` makes one)")
        }
        None => format!("noise profile: none of {dir} matches this campaign"),
    };
    let lines = std::iter::once(first)
        .chain(
            choice
                .not_used
                .iter()
                .map(|why| format!("  not used: {why}")),
        )
        .collect();
    Said {
        record: Event::Profile {
            dir,
            file: choice.chosen.as_ref().map(|c| c.path.display().to_string()),
            sha256: choice
                .chosen
                .as_ref()
                .map(|c| hex::encode(Sha256::digest(&c.bytes))),
            not_used: choice.not_used.clone(),
            disabled: false,
        },
        lines,
    }
}

/// A record for a new campaign's journal and the lines that say it before the campaign
/// starts: the lines are the caller's to say, as the campaign's voice.
pub struct Said<T> {
    /// The record.
    pub record: T,
    /// What says it, one line each.
    pub lines: Vec<String>,
}

impl<T> Said<T> {
    /// Says the lines as `voice` and returns the record.
    pub fn say(self, voice: &Voice) -> T {
        for line in &self.lines {
            voice.say(line);
        }
        self.record
    }
}
