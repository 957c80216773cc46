//! `aba check`: validate a recipe and print its plan, with no network at all.
//!
//! The plan is printed from its [`Summary`]: no case is expanded beyond the few lines shown,
//! so checking a recipe costs memory in proportion to the recipe, whatever it asks for.

use std::{fmt::Write as _, io::Read as _, path::Path};

use sha2::{Digest as _, Sha256};

use crate::{
    campaign::{
        advice::{Advice, SeriesNoise, advise},
        calibrate::DEFAULT_BOOTS,
        plan::{Summary, format_eta},
    },
    cli::{FilesArgs, TargetArgs},
    error::{Error, exit_code},
    inventory::Target,
    profile::select::{Candidate, Choice, choose},
    recipe::{Recipe, limits, resolved::FileCopy},
    text::{cut, one_line},
};

/// Validates `recipe_path`, plans it on the selected target and prints the plan.
pub fn check(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    no_profile: bool,
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
    print!("{}", render_plan(&recipe, &target, &summary));
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
                "    {:<40} {} warm-up + {} samples",
                name, workload.warmup, workload.samples
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

/// What `aba check` knows of the change the design can detect.
enum Detect {
    /// `--no-profile`.
    Off,
    /// No `--target`: no machine, no profile.
    NoTarget,
    /// The target has no profile that matches.
    None(Choice),
    /// The advice from the target's profile.
    Profile(Advice, Candidate),
}

/// `2.31%`.
fn pct(value: f64) -> String {
    format!("{value:.2}%")
}

/// The change the design can detect, and with `detect_pct` the design that reaches it.
fn render_advice(recipe: &Recipe, target: &Target, detect: &Detect) -> String {
    let mut out = String::new();
    let _ = writeln!(out);
    let calibrate = format!(
        "`aba calibrate {} --target {}` measures one ({DEFAULT_BOOTS} boots of {})",
        one_line(&recipe.path.to_string_lossy()),
        target.name,
        recipe.analysis.baseline
    );
    let (advice, candidate) = match detect {
        Detect::Off => {
            let _ = writeln!(
                out,
                "detect   unknown: planned without a noise profile (--no-profile)"
            );
            return out;
        }
        Detect::NoTarget => {
            let _ = writeln!(
                out,
                "detect   unknown: no target, so no noise profile (pass --target NAME)"
            );
            return out;
        }
        Detect::None(choice) => {
            let _ = writeln!(
                out,
                "detect   unknown without a noise profile of target {} ({}): {calibrate}",
                target.name,
                if choice.not_used.is_empty() {
                    format!("none in {}", one_line(&choice.dir.to_string_lossy()))
                } else {
                    format!(
                        "none in {} matches",
                        one_line(&choice.dir.to_string_lossy())
                    )
                }
            );
            for why in &choice.not_used {
                let _ = writeln!(out, "         not used: {}", one_line(why));
            }
            return out;
        }
        Detect::Profile(advice, candidate) => (advice, candidate),
    };
    let p = &candidate.profile;
    let _ = writeln!(
        out,
        "profile  {} (created {}, {} boots of {}, {})",
        one_line(&candidate.path.to_string_lossy()),
        p.created,
        p.boots,
        p.fingerprint.kernel,
        p.scope.words()
    );
    let level = match p.scope {
        crate::profile::Scope::Boot => "boot-level",
        crate::profile::Scope::RunToRun => "run-to-run only, boots unmeasured",
    };
    let _ = writeln!(
        out,
        "detect   minimal detectable change (two-sided 5%, 80% power, {level}):"
    );
    for s in &advice.series {
        match &s.noise {
            SeriesNoise::Known {
                detectable,
                dof,
                boot_sd_pct,
                within_cv_pct,
            } => {
                let each: Vec<String> = detectable
                    .iter()
                    .map(|d| {
                        format!(
                            "{} {}",
                            d.candidate,
                            d.pct.map_or_else(|| "not resolvable".to_owned(), pct)
                        )
                    })
                    .collect();
                let each = if each.is_empty() {
                    "no candidate kernel".to_owned()
                } else {
                    each.join(", ")
                };
                let sd = match p.scope {
                    crate::profile::Scope::Boot => "boot SD",
                    crate::profile::Scope::RunToRun => "point-to-point SD",
                };
                let _ = writeln!(
                    out,
                    "    {:<40} {each}  (ν = {dof:.0}; {sd} {}, within CV {})",
                    s.label,
                    pct(*boot_sd_pct),
                    pct(*within_cv_pct)
                );
            }
            SeriesNoise::Unknown(why) => {
                let _ = writeln!(out, "    {:<40} unknown: {}", s.label, one_line(why));
            }
        }
    }
    if let Some(goal) = recipe.analysis.detect_pct {
        let design = format!(
            "{}, {} samples",
            recipe
                .sequence
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("-"),
            recipe.workloads.first().map_or(0, |w| w.samples)
        );
        match advice.design_pct {
            Some(got) if got <= goal => {
                let _ = writeln!(
                    out,
                    "detect_pct {}: the recipe's design ({design}) resolves {}",
                    pct(goal),
                    pct(got)
                );
            }
            Some(got) => {
                let _ = writeln!(
                    out,
                    "warning: detect_pct {}: the recipe's design ({design}) resolves {} at best",
                    pct(goal),
                    pct(got)
                );
            }
            None => {}
        }
        match &advice.recommendation {
            Some(r) => {
                let _ = writeln!(
                    out,
                    "detect_pct {}: shortest design {}, {} samples: {}, ETA ~{}{}",
                    pct(goal),
                    r.sequence
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("-"),
                    r.samples,
                    pct(r.pct),
                    format_eta(r.eta),
                    if r.pooled {
                        String::new()
                    } else {
                        format!(
                            " (from its own boots: the profile holds for {} samples; calibrate \
                             again with that many to pool it)",
                            p.series.first().map_or(0, |s| s.samples)
                        )
                    }
                );
            }
            None if advice.design_pct.is_some() => {
                let _ = writeln!(
                    out,
                    "warning: detect_pct {}: no repetition of the recipe's sequence within {} \
                     points resolves it",
                    pct(goal),
                    limits::POINTS
                );
            }
            None => {}
        }
    }
    out
}
