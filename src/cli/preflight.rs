//! `aba preflight RECIPE --target T`: print the checklist of what a campaign needs.

use std::path::Path;

use crate::{
    campaign::{
        plan::Summary,
        preflight::{CheckStatus, Workdir, preflight as run_checks},
    },
    cli::{FilesArgs, KernelArgs, TargetArgs},
    error::{Error, exit_code},
    json::preflight::PreflightDoc,
    session::private_dir::PrivateDir,
    target::connect::transport_for,
    text::one_line,
};

/// Checks the target and prints one line per check (the checklist as JSON with `json`:
/// docs/json.md); exits 1 when anything fails.
pub fn preflight(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    kernel_args: &KernelArgs,
    json: bool,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    let bindings = kernel_args.bindings();
    let target = target_args.resolve_in(&inventory);
    let mut recipe = bindings.load(
        &files_args.sources(),
        recipe_path,
        &inventory,
        target.as_ref().ok(),
    )?;
    let target = target?;
    let host = crate::session::HostBuilds::as_they_are(&bindings, &recipe, &[&target])?;
    let mut kernels = bindings.bind_kernels(&mut recipe, &target)?;
    if let Some(host) = &host {
        host.bind(&mut recipe, &mut kernels, &target)?;
    }
    Summary::new(&recipe, &target)?;
    let local_dir = match &target.workdir {
        Some(_) => None,
        None => Some(
            PrivateDir::new(&format!("aba-preflight-{}", recipe.name))
                .map_err(Error::PrivateDir)?,
        ),
    };
    let local_text = local_dir
        .as_ref()
        .map(|d| d.0.to_string_lossy().into_owned());
    let workdir = match &local_text {
        Some(dir) => Workdir::Given(dir),
        None => Workdir::FreshUnder(target.workdir.as_deref().unwrap_or("/tmp/aba")),
    };
    let mut transport = transport_for(&target).map_err(|source| Error::Target {
        target: target.name.clone(),
        source,
    })?;
    crate::interrupt::install();
    let items = run_checks(&recipe, &target, transport.as_mut(), workdir);
    drop(local_dir);
    if json {
        let doc = PreflightDoc::new(recipe_path, &target.name, &items);
        print!("{}", crate::json::render(&doc));
        return if doc.passed {
            Ok(exit_code::OK)
        } else {
            Err(Error::Preflight {
                problems: doc.failed,
                target: target.name.clone(),
            })
        };
    }
    let mut failed = 0;
    for item in &items {
        let mark = match item.status {
            CheckStatus::Ok => "ok  ",
            CheckStatus::Warn => "warn",
            CheckStatus::Fail => {
                failed += 1;
                "FAIL"
            }
        };
        // Details come from the target (its stderr, its cmdline): never raw to the terminal.
        println!(
            "{mark}  {:<22} {}",
            one_line(&item.what),
            crate::text::cut(&one_line(&item.detail), 400)
        );
        if let (Some(hint), true) = (&item.hint, item.status != CheckStatus::Ok) {
            println!("      {:<22} fix: {}", "", one_line(hint));
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
        Err(Error::Preflight {
            problems: failed,
            target: target.name.clone(),
        })
    }
}
