//! `aba bisect RECIPE --builds FILE --good REF --bad REF` and `aba bisect status DIR`: the
//! options turned into [`crate::session::bisect`].

use std::path::{Path, PathBuf};

use crate::{
    bisect::Strategy,
    campaign::engine::RunOptions,
    cli::{FilesArgs, TargetArgs},
    error::Error,
    inventory::LOCAL,
    recipe::params::ParamBinding,
    session::{
        bisect::{drive, status},
        inputs::Bindings,
    },
};

/// What `aba bisect` was given.
pub struct BisectArgs<'a> {
    pub recipe: &'a Path,
    pub builds: PathBuf,
    pub good: &'a str,
    pub bad: &'a str,
    pub dir: Option<&'a Path>,
    pub series: Option<&'a str>,
    pub strategy: Strategy,
    pub params: Vec<ParamBinding>,
    pub target: &'a TargetArgs,
    pub results: &'a Path,
    pub yes: bool,
    pub files: &'a FilesArgs,
    pub options: RunOptions,
}

/// `aba bisect RECIPE …`.
pub fn bisect(args: &BisectArgs<'_>) -> Result<u8, Error> {
    let inventory = args.target.inventory()?;
    let target = inventory.target(args.target.target.as_deref().unwrap_or(LOCAL))?;
    let bindings = Bindings {
        kernels: Vec::new(),
        params: args.params.clone(),
        builds: Some(args.builds.clone()),
        no_build: false,
    };
    drive::run(&drive::BisectRun {
        recipe: args.recipe,
        inventory: &inventory,
        targets_file: args.target.targets.as_ref(),
        target: &target,
        sources: &args.files.sources(),
        bindings: &bindings,
        good: args.good,
        bad: args.bad,
        dir: args.dir,
        results: args.results,
        series: args.series,
        strategy: args.strategy,
        yes: args.yes,
        options: args.options.clone(),
    })
}

/// `aba bisect status DIR`.
pub fn status(dir: &Path) -> Result<u8, Error> {
    print!("{}", status::status(dir)?);
    Ok(crate::error::exit_code::OK)
}
