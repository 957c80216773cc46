//! `aba check`: validate a recipe and print its plan, with no network at all.

use std::{fmt::Write as _, path::Path};

use crate::{
    campaign::plan::{Plan, format_eta},
    cli::TargetArgs,
    error::{Error, exit_code},
    inventory::Target,
    recipe::{self, Recipe},
};

/// Validates `recipe_path`, plans it on the selected target and prints the plan.
pub fn check(recipe_path: &Path, target_args: &TargetArgs) -> Result<u8, Error> {
    let recipe = recipe::load(recipe_path)?;
    // Without --target, plan for a machine that switches kernels: a shared recipe is checked
    // before anyone knows where it will run.
    let target = match &target_args.target {
        Some(_) => target_args.resolve()?,
        None if needs_switch(&recipe) => Target::any_switching(),
        None => Target::local(),
    };
    let plan = Plan::new(&recipe, &target)?;
    print!("{}", render_plan(&recipe, &target, &plan));
    for warning in &plan.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(exit_code::OK)
}

/// The plan as `aba check` prints it: a header, one block per point, totals.
pub fn render_plan(recipe: &Recipe, target: &Target, plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "recipe   {} ({})", recipe.name, recipe.path.display());
    let _ = writeln!(out, "         {}", recipe.description.trim());
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
            switch_name(target)
        );
    }
    for kernel in recipe.kernels.values() {
        let _ = writeln!(
            out,
            "kernel   {} = {}{}",
            kernel.label,
            kernel.release,
            if target.switch.method() == crate::inventory::SwitchMethod::Kexec {
                format!(" ({} + {})", kernel.image, kernel.initrd)
            } else {
                String::new()
            }
        );
    }
    if !recipe.sysctls.is_empty() {
        let list: Vec<String> = recipe
            .sysctls
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
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
        for case in &point.cases {
            let _ = writeln!(
                out,
                "    {:<40} {} warm-up + {} samples",
                case.display_name(),
                case.warmup,
                case.samples
            );
        }
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
    recipe
        .kernels
        .values()
        .any(|k| k.release.as_str() != crate::campaign::plan::RUNNING_RELEASE)
}

fn optional_mark(required: bool) -> &'static str {
    if required { "" } else { " (optional)" }
}

fn switch_name(target: &Target) -> &'static str {
    use crate::inventory::SwitchMethod;
    match target.switch.method() {
        SwitchMethod::Kexec => "kexec",
        SwitchMethod::GrubReboot => "grub-reboot",
        SwitchMethod::Bls => "bls",
        SwitchMethod::Power => "power",
        SwitchMethod::None => "none",
    }
}
