//! `aba check`: validate a recipe and print its plan, with no network at all.
//!
//! The plan is printed from its [`Summary`]: no case is expanded beyond the few lines shown,
//! so checking a recipe costs memory in proportion to the recipe, whatever it asks for.

use std::{fmt::Write as _, io::Read as _, path::Path};

use sha2::{Digest as _, Sha256};

use crate::{
    analysis::verdict_params,
    campaign::{
        advice::advise,
        plan::{Summary, format_eta},
    },
    cli::{
        FilesArgs, TargetArgs,
        detect::{Detect, render_advice},
    },
    error::{Error, exit_code},
    inventory::Target,
    json::check::{CheckDoc, DetectSource},
    profile::select::choose,
    recipe::{Recipe, limits, resolved::FileCopy},
    reproduction::open_reference,
    text::{cut, one_line},
};

/// Validates `recipe_path`, plans it on the selected target and prints the plan (as JSON with
/// `json`: docs/json.md).
pub fn check(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    no_profile: bool,
    json: bool,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    let recipe = files_args.load(recipe_path, &inventory)?;
    // Without --target, plan for a machine that switches kernels: a shared recipe is checked
    // before anyone knows where it will run.
    let target = match &target_args.target {
        Some(name) => inventory.target(name)?,
        None if needs_switch(&recipe) => Target::any_switching(),
        None => inventory.target(crate::inventory::LOCAL)?,
    };
    let summary = Summary::new(&recipe, &target)?;
    if let Some(reference) = &recipe.reference {
        open_reference(&reference.path, &verdict_params(&recipe.analysis))?;
    }
    if !json {
        print!("{}", render_plan(&recipe, &target, &summary));
    }
    let advice = if no_profile {
        Detect::Off
    } else if target.name == crate::inventory::ANY_SWITCHING {
        Detect::NoTarget
    } else {
        let choice = choose(&target.profiles, &recipe, &target.name).map_err(Error::Profile)?;
        match choice.chosen {
            Some(c) => Detect::Profile(advise(&recipe, &target, &c.profile)?, c),
            None => Detect::None(choice),
        }
    };
    if json {
        let source = match &advice {
            Detect::Off => DetectSource::Off,
            Detect::NoTarget => DetectSource::NoTarget,
            Detect::None(choice) => DetectSource::None(choice),
            Detect::Profile(advice, candidate) => DetectSource::Profile(advice, &candidate.path),
        };
        print!(
            "{}",
            crate::json::render(&CheckDoc::new(&recipe, &target, &summary, &source))
        );
        return Ok(exit_code::OK);
    }
    print!("{}", render_advice(&recipe, &target, &advice));
    for warning in &summary.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(exit_code::OK)
}

/// SHA-256 and size of a `[files]` source, read in blocks.
fn file_digest(file: &FileCopy) -> Result<(u64, String), std::io::Error> {
    let mut f = crate::input::open_regular(&file.local)?;
    let mut hasher = Sha256::new();
    let mut block = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut block)?;
        if n == 0 {
            return Ok((len, hex::encode(hasher.finalize())));
        }
        len += n as u64;
        hasher.update(&block[..n]);
    }
}

/// The plan as `aba check` prints it: a header, the files it copies, one line per point, the
/// cases every point runs (at most [`limits::CASE_LINES`] of them), totals. Text from the
/// recipe is escaped: printing a plan cannot drive the terminal.
pub fn render_plan(recipe: &Recipe, target: &Target, plan: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "recipe   {} ({})",
        recipe.name,
        one_line(&recipe.path.to_string_lossy())
    );
    let description = recipe
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(out, "         {}", cut(&one_line(&description), 300));
    let _ = writeln!(out, "sha256   {}", recipe.sha256);
    if target.name == crate::inventory::ANY_SWITCHING {
        let _ = writeln!(
            out,
            "target   none given: planned for a target that switches kernels (pass --target NAME)"
        );
    } else {
        let _ = writeln!(
            out,
            "target   {} (switch: {})",
            target.name,
            target.switch.method().kind()
        );
    }
    for kernel in recipe.kernels.values() {
        let _ = writeln!(
            out,
            "kernel   {} = {}{}",
            kernel.label,
            kernel.release,
            if target.switch.method().builds_cmdline() {
                format!(" ({} + {})", kernel.image, kernel.initrd)
            } else {
                String::new()
            }
        );
    }
    if let Some(reference) = &recipe.reference {
        let _ = writeln!(
            out,
            "compare  with the reference {} ({}) at the end of the run",
            one_line(&reference.written),
            one_line(&reference.path.to_string_lossy())
        );
    }
    if !recipe.sysctls.is_empty() {
        let list: Vec<String> = recipe
            .sysctls
            .iter()
            .map(|(k, v)| format!("{k}={}", cut(&one_line(v), 80)))
            .collect();
        let _ = writeln!(out, "sysctl   {}", list.join(" "));
    }
    if !recipe.tuning.is_empty() {
        let mut knobs = Vec::new();
        if let Some(g) = &recipe.tuning.governor {
            knobs.push(format!("governor={}{}", g.value, optional_mark(g.required)));
        }
        if let Some(e) = &recipe.tuning.epp {
            knobs.push(format!("epp={}{}", e.value, optional_mark(e.required)));
        }
        if let Some(t) = &recipe.tuning.turbo {
            knobs.push(format!(
                "turbo={}{}",
                if t.value { "on" } else { "off" },
                optional_mark(t.required)
            ));
        }
        let _ = writeln!(out, "tuning   {}", knobs.join(" "));
    }
    for file in &recipe.files {
        let facts = match file_digest(file) {
            Ok((len, sha)) => format!("{len} bytes, sha256 {sha}"),
            Err(e) => format!("unreadable: {e}"),
        };
        let _ = writeln!(
            out,
            "file     {} <- {} ({facts})",
            file.remote,
            one_line(&file.local.to_string_lossy())
        );
    }
    let _ = writeln!(out);
    for point in &plan.points {
        let cmdline = if point.cmdline.is_empty() {
            "(default cmdline)".to_owned()
        } else {
            point.cmdline.join(" ")
        };
        let _ = writeln!(
            out,
            "point {}  {}  kernel {} ({})  cmdline: {}",
            point.order, point.label, point.kernel, point.release, cmdline
        );
    }
    let _ = writeln!(
        out,
        "every point runs {} case{}:",
        plan.cases,
        if plan.cases == 1 { "" } else { "s" }
    );
    let mut shown = 0usize;
    for workload in &recipe.workloads {
        let n = usize::try_from(workload.case_count()).unwrap_or(usize::MAX);
        for i in 0..n {
            if shown == limits::CASE_LINES {
                break;
            }
            let case = workload.case_at(i);
            let name = if case.name.is_empty() {
                workload.name.to_string()
            } else {
                format!("{}[{}]", workload.name, case.name)
            };
            let _ = writeln!(
                out,
                "    {:<40} {} warm-up + {} samples{}",
                name,
                workload.warmup,
                workload.samples,
                if workload.is_check() {
                    " (check: pass/fail, untimed)"
                } else {
                    ""
                }
            );
            shown += 1;
        }
    }
    if (shown as u64) < plan.cases {
        let _ = writeln!(
            out,
            "    … and {} more (not listed)",
            plan.cases - shown as u64
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "points   {} ({} boot{})",
        plan.points.len(),
        plan.boots,
        if plan.boots == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "runs     {} (warm-ups included)", plan.runs);
    let _ = writeln!(
        out,
        "ETA      ~{} ({} boot{} x ~{} + workload estimates)",
        format_eta(plan.eta),
        plan.boots,
        if plan.boots == 1 { "" } else { "s" },
        format_eta(plan.boot_estimate)
    );
    out
}

/// True when the recipe boots more than one release, or a real one.
fn needs_switch(recipe: &Recipe) -> bool {
    recipe.kernels.values().any(|k| !k.release.is_running())
}

fn optional_mark(required: bool) -> &'static str {
    if required { "" } else { " (optional)" }
}
