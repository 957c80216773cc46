//! `aba preflight RECIPE --target T`: print the checklist of what a campaign needs.

use std::path::Path;

use crate::{
    campaign::{
        plan::Plan,
        preflight::{Status, preflight as run_checks},
    },
    cli::TargetArgs,
    error::{Error, exit_code},
    recipe,
    target::connect::transport_for,
};

/// Checks the target and prints one line per check; exits 1 when anything fails.
pub fn preflight(recipe_path: &Path, target_args: &TargetArgs) -> Result<u8, Error> {
    let recipe = recipe::load(recipe_path)?;
    let target = target_args.resolve()?;
    Plan::new(&recipe, &target)?;
    let workdir = match &target.workdir {
        Some(base) => format!("{}/preflight-{}", base.trim_end_matches('/'), recipe.name),
        None => std::env::temp_dir()
            .join(format!("aba-preflight-{}", recipe.name))
            .to_string_lossy()
            .into_owned(),
    };
    let mut transport = transport_for(&target)
        .map_err(|e| Error::context(format!("cannot use target `{}`", target.name), e))?;
    crate::interrupt::install();
    let items = run_checks(&recipe, &target, transport.as_mut(), &workdir);
    let mut failed = 0;
    for item in &items {
        let mark = match item.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => {
                failed += 1;
                "FAIL"
            }
        };
        println!("{mark}  {:<22} {}", item.what, item.detail);
        if let (Some(hint), true) = (&item.hint, item.status != Status::Ok) {
            println!("      {:<22} fix: {hint}", "");
        }
    }
    if failed == 0 {
        println!(
            "preflight passed: `aba run {} --target {}` can start",
            recipe_path.display(),
            target.name
        );
        Ok(exit_code::OK)
    } else {
        Err(Error::msg(format!(
            "preflight found {failed} problem(s) on target `{}`",
            target.name
        )))
    }
}
