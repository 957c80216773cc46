//! What a tester adds to a shared recipe when starting a campaign, as the library takes it:
//! where its `[files]` may come from, and this tester's kernels and parameter values. The
//! command line's options (`aba::cli`) are turned into these.

use std::path::{Path, PathBuf};

use crate::{
    error::Error,
    inventory::{Inventory, Target},
    kernel::binding::{self, BoundKernel, KernelBinding},
    recipe::{self, Recipe, params::ParamBinding},
};

/// Where a recipe's `[files]` may come from besides its own folder: the tester's choice, on
/// the command line or in their inventory, never the recipe's.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// Folders `[files]` may also copy from.
    pub allow_files_outside: Vec<PathBuf>,
}

impl Sources {
    /// Loads the recipe at `path` with the folders this tester allows, its parameters taking
    /// `params`.
    pub fn load(
        &self,
        path: &Path,
        inventory: &Inventory,
        params: recipe::Params<'_>,
    ) -> Result<Recipe, Error> {
        let mut allowed = self.allow_files_outside.clone();
        allowed.extend(inventory.allow_files_outside.iter().cloned());
        Ok(recipe::Loader {
            files: recipe::FilesFrom::RecipeDir(&allowed),
            params,
        }
        .load(path)?)
    }
}

/// This tester's kernels for a shared recipe's labels, over the inventory's
/// `[targets.NAME.kernels]` (`aba::kernel::binding`), and this machine's values for its
/// `[params]`, over the inventory's `[targets.NAME.params]` (`aba::recipe::params`): the
/// facts a shared recipe leaves to whoever runs it.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    /// `LABEL=RELEASE` kernels, over the inventory's and the recipe's.
    pub kernels: Vec<KernelBinding>,
    /// `NAME=VALUE` parameters, over the inventory's and the recipe's defaults.
    pub params: Vec<ParamBinding>,
    /// The kernels built on this host (a builds file).
    pub builds: Option<PathBuf>,
    /// With `builds`: use the built files as they are; do not run the build commands.
    pub no_build: bool,
}

impl Bindings {
    /// Loads the recipe at `path` for `target`, bound in the one reading: its parameters take
    /// the target's `[targets.NAME.params]`, then these values. Without a target (one that
    /// could not be resolved, which the caller reports next), the recipe is read with its
    /// defaults, so that its own problems are said first.
    pub fn load(
        &self,
        sources: &Sources,
        path: &Path,
        inventory: &Inventory,
        target: Option<&Target>,
    ) -> Result<Recipe, Error> {
        let Some(target) = target else {
            return sources.load(path, inventory, recipe::Params::Defaults);
        };
        let params: Vec<ParamBinding> = target.params.iter().chain(&self.params).cloned().collect();
        sources.load(path, inventory, recipe::Params::Bind(&params))
    }

    /// Binds `recipe`'s kernels: the target's inventory entries, then these bindings.
    pub fn bind_kernels(
        &self,
        recipe: &mut Recipe,
        target: &Target,
    ) -> Result<Vec<BoundKernel>, Error> {
        let all: Vec<KernelBinding> = target
            .kernels
            .iter()
            .chain(&self.kernels)
            .cloned()
            .collect();
        Ok(binding::bind(recipe, &all)?)
    }
}
