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
    /// Loads the recipe at `path` with the folders this tester allows.
    pub fn load(&self, path: &Path, inventory: &Inventory) -> Result<Recipe, Error> {
        self.load_bound(path, inventory, &[])
    }

    /// [`Sources::load`], with `params` bound over the recipe's defaults (one reading: the
    /// defaults are checked first, then the values).
    pub fn load_bound(
        &self,
        path: &Path,
        inventory: &Inventory,
        params: &[recipe::params::BoundParam],
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
    /// Binds `recipe`'s parameters (reading it again with their values) and its kernels: the
    /// target's inventory entries, then these bindings.
    pub fn bind(&self, recipe: &mut Recipe, target: &Target) -> Result<Vec<BoundKernel>, Error> {
        let params: Vec<ParamBinding> = target.params.iter().chain(&self.params).cloned().collect();
        let bound = crate::recipe::params::bind(&recipe.params, &params)?;
        if bound
            .iter()
            .any(|b| b.from != crate::origin::Origin::Recipe)
        {
            *recipe = crate::recipe::load::rebind(recipe, &bound)?;
        }
        let all: Vec<KernelBinding> = target
            .kernels
            .iter()
            .chain(&self.kernels)
            .cloned()
            .collect();
        Ok(binding::bind(recipe, &all)?)
    }
}
