//! `aba check`: validate a recipe and print its plan, with no network at all.
//!
//! The plan is printed from its [`Summary`]: no case is expanded beyond the few lines shown,
//! so checking a recipe costs memory in proportion to the recipe, whatever it asks for.

use std::{fmt::Write as _, path::Path};

use crate::{
    analysis::verdict_params,
    campaign::{
        advice::advise,
        footprint::{Footprint, StepCommands},
        judging::Judging,
        lookalikes::lookalikes,
        plan::{PointSummary, Summary, format_eta},
    },
    cli::{FilesArgs, KernelArgs, TargetArgs},
    error::{Error, exit_code},
    inventory::Target,
    json::check::{CheckDoc, DetectSource, KernelJson},
    kernel::binding::BoundKernel,
    profile::select::choose,
    recipe::{
        Recipe,
        ident::KernelLabel,
        model::{BetterSpec, Role},
        scoped_limits::LimitScope,
    },
    report::layout::{fit_width, wrap},
    reproduction::check_reference,
    text::{bytes, cut, one_line},
    ui::{
        WIDTH,
        detect::{Detect, render_advice},
    },
};

/// Validates `recipe_path`, plans it on the selected target and prints the plan (as JSON with
/// `json`: docs/json.md).
pub fn check(
    recipe_path: &Path,
    target_args: &TargetArgs,
    files_args: &FilesArgs,
    kernel_args: &KernelArgs,
    no_profile: bool,
    json: bool,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    // The target `aba run` would use (`local` without --target), so that check accepts and
    // refuses what run does: a plan for some other machine said yes to recipes run refused.
    let target = target_args.resolve_in(&inventory);
    let bindings = kernel_args.bindings();
    let mut recipe = bindings.load(
        &files_args.sources(),
        recipe_path,
        &inventory,
        target.as_ref().ok(),
    )?;
    let target = target?;
    let unbound = recipe.clone();
    let mut kernels = bindings.bind_kernels(&mut recipe, &target)?;
    let builds = crate::session::builds::check_lines(&bindings, &unbound, &target)?;
    if let Some(host) = builds.as_ref().and_then(|b| b.host.as_ref()) {
        host.bind(&mut recipe, &mut kernels, &target)?;
    }
    let summary = Summary::new(&recipe, &target)?;
    let built = builds
        .as_ref()
        .map(|b| b.labels.clone())
        .unwrap_or_default();
    let lookalikes = lookalikes(&recipe, &built);
    if let Some(reference) = &recipe.reference {
        check_reference(&reference.path, &verdict_params(&recipe.analysis))?;
    }
    if !json {
        print!("{}", render_plan(&recipe, &target, &summary, &kernels));
        if let Some(b) = &builds {
            println!("{}", b.lines.join("\n"));
            if !b.estimate.is_zero() {
                println!(
                    "ETA      ~{} with the build steps (~{} + ~{})",
                    format_eta(summary.eta + b.estimate),
                    format_eta(b.estimate),
                    format_eta(summary.eta)
                );
            }
        }
    }
    let advice = if no_profile {
        Detect::Off
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
            Detect::None(choice) => DetectSource::None(choice),
            Detect::Profile(advice, candidate) => DetectSource::Profile(advice, &candidate.path),
        };
        let footprint = Footprint::of(&recipe);
        let mut doc = CheckDoc::new(&recipe, &target, &summary, &footprint, &source);
        doc.kernels = KernelJson::all(&kernels, target.switch.method().switches());
        doc.warnings
            .extend(lookalikes.iter().map(ToString::to_string));
        print!("{}", crate::json::render(&doc));
        return Ok(exit_code::OK);
    }
    print!("{}", render_advice(&recipe, &target, &advice));
    for warning in &summary.warnings {
        eprintln!("warning: {warning}");
    }
    for kernels in &lookalikes {
        eprintln!("warning: {kernels}");
    }
    Ok(exit_code::OK)
}

/// The plan as `aba check` prints it: a header, one line per point, then what the recipe
/// copies to, runs on and changes on the target (at most
/// [`crate::recipe::limits::CASE_LINES`] cases), totals. Text from the recipe is escaped, so
/// printing a plan cannot drive the terminal, and every line is cut to [`WIDTH`] columns at
/// a space, continued indented.
pub fn render_plan(
    recipe: &Recipe,
    target: &Target,
    plan: &Summary,
    kernels: &[BoundKernel],
) -> String {
    let footprint = Footprint::of(recipe);
    let mut out = header(recipe, target, kernels);
    let _ = writeln!(out);
    let names: Vec<String> = plan.points.iter().map(PointSummary::name).collect();
    let label_width = widest(names.iter().map(String::as_str));
    let kernel_width = widest(plan.points.iter().map(|p| p.kernel.as_str()));
    for (point, name) in plan.points.iter().zip(&names) {
        let own = &recipe.kernels[&point.kernel].cmdline;
        let _ = writeln!(
            out,
            "point {:<2} {:<label_width$}  kernel {:<kernel_width$} ({}){}",
            point.order,
            name,
            point.kernel.as_str(),
            point.release,
            if own.is_empty() {
                String::new()
            } else {
                format!("  cmdline + {}", one_line(&own.join(" ")))
            }
        );
    }
    let _ = writeln!(out);
    out.push_str(&copies(&footprint));
    let _ = writeln!(out);
    out.push_str(&commands(&footprint));
    let _ = writeln!(out);
    out.push_str(&changes(&footprint));
    let _ = writeln!(out);
    out.push_str(&judged(&Judging::of(recipe)));
    let _ = writeln!(out);
    out.push_str(&totals(plan));
    fit_width(&out, WIDTH)
}

/// Who and what: the recipe, its hash, the target, the kernels, the reference.
fn header(recipe: &Recipe, target: &Target, kernels: &[BoundKernel]) -> String {
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
    out.push_str(&wrap(
        &cut(&one_line(&description), 300),
        WIDTH,
        "         ",
    ));
    let _ = writeln!(out, "sha256   {}", recipe.sha256);
    let _ = writeln!(
        out,
        "target   {} (switch: {})",
        target.name,
        target.switch.method().kind()
    );
    for kernel in recipe.kernels.values() {
        let bound = kernels.iter().find(|k| k.label == kernel.label);
        let note = bound
            .and_then(BoundKernel::note)
            .map(|n| format!("  ({})", one_line(&n)))
            .unwrap_or_default();
        let _ = writeln!(out, "kernel   {} = {}{note}", kernel.label, kernel.release);
        if target.switch.method().builds_cmdline() {
            let _ = writeln!(out, "           {} + {}", kernel.image, kernel.initrd);
        }
    }
    // The machine facts: what each parameter means and the value this target gets.
    for param in &recipe.params {
        let _ = writeln!(out, "param    {} = {}", param.name, param.value);
        out.push_str(&wrap(&one_line(&param.note()), WIDTH, "         "));
        out.push_str(&wrap(
            &cut(&format!("means: {}", one_line(&param.means)), 300),
            WIDTH,
            "         ",
        ));
    }
    if let Some(reference) = &recipe.reference {
        let _ = writeln!(
            out,
            "compare  with the reference {} ({}) at the end of the run",
            one_line(&reference.written),
            one_line(&reference.path.to_string_lossy())
        );
    }
    out
}

/// "Copies to the target": each `[files]` entry, its host file, size and SHA-256.
fn copies(f: &Footprint) -> String {
    let mut out = "Copies to the target (into its work directory, at every point)\n".to_owned();
    if f.copies.is_empty() {
        out.push_str("    nothing\n");
    }
    for copy in &f.copies {
        let _ = writeln!(out, "    {}", one_line(&copy.to));
        let _ = writeln!(
            out,
            "        from    {}",
            one_line(&copy.from.to_string_lossy())
        );
        match &copy.content {
            Ok(d) => {
                let _ = writeln!(out, "        size    {}", bytes(d.bytes));
                let _ = writeln!(out, "        sha256  {}", d.sha256);
            }
            Err(e) => {
                let _ = writeln!(out, "        unreadable: {}", one_line(e));
            }
        }
    }
    out
}

/// "Runs on the target": setup, every case's command after substitution, teardown.
fn commands(f: &Footprint) -> String {
    let mut out =
        "Runs on the target (in its work directory, at every point, by sh -c)\n".to_owned();
    out.push_str(&steps("setup", &f.setup));
    let chosen = f.cases.iter().any(|c| c.kernels.is_some());
    let _ = writeln!(
        out,
        "    {} case{} {} (warm-ups+samples, then the command):",
        f.cases_total,
        if f.cases_total == 1 { "" } else { "s" },
        if chosen {
            "at the points of their kernels"
        } else {
            "at every point"
        }
    );
    let width = widest(f.cases.iter().map(|c| c.name.as_str())).min(40);
    for case in &f.cases {
        let _ = writeln!(
            out,
            "      {:<width$}  {}+{}  {}{}{}",
            one_line(&case.name),
            case.warmup,
            case.samples,
            one_line(&case.command_line()),
            if case.check {
                "  (check: pass/fail, untimed)"
            } else {
                ""
            },
            case.kernels
                .as_ref()
                .map(|k| format!("  (on kernels {k} only)"))
                .unwrap_or_default()
        );
    }
    let listed = f.cases.len() as u64;
    if listed < f.cases_total {
        let _ = writeln!(
            out,
            "      … and {} more (not listed)",
            f.cases_total - listed
        );
    }
    for p in &f.probes {
        let _ = writeln!(
            out,
            "    probe {} ({} the samples, {}; untimed, output kept, within {}): {}{}",
            one_line(&p.name),
            p.when,
            p.kernels.as_ref().map_or_else(
                || "at every point".to_owned(),
                |k| format!("on kernels {k} only")
            ),
            humantime::format_duration(p.timeout),
            one_line(&p.run),
            if p.ftrace.is_empty() {
                String::new()
            } else {
                format!(
                    "; ftrace function profile of {} (set up before, torn down after)",
                    p.ftrace.join(", ")
                )
            }
        );
    }
    out.push_str(&steps("teardown", &f.teardown));
    out
}

/// One step list, with its deadline and what the ETA counts for it.
fn steps(what: &str, steps: &StepCommands) -> String {
    let mut out = String::new();
    if steps.commands.is_empty() {
        let _ = writeln!(out, "    {what}: none");
        return out;
    }
    let _ = writeln!(
        out,
        "    {what}: each command within {}, counted as ~{} in the ETA (a tenth of that: no estimate)",
        format_eta(steps.timeout),
        format_eta(steps.counted)
    );
    for command in &steps.commands {
        let _ = writeln!(out, "      {}", one_line(command));
    }
    out
}

/// "Changes on the target": kernel parameters, sysctls, CPU frequency knobs.
fn changes(f: &Footprint) -> String {
    let mut out = "Changes on the target (every value is read back at every point)\n".to_owned();
    let before = out.len();
    if !f.boot_cmdline.is_empty() {
        let _ = writeln!(
            out,
            "    cmdline  {} (every boot)",
            one_line(&f.boot_cmdline.join(" "))
        );
    }
    for (kernel, params) in &f.kernel_cmdline {
        let _ = writeln!(
            out,
            "    cmdline  {} (kernel {kernel} only)",
            one_line(&params.join(" "))
        );
    }
    for (name, value) in &f.sysctls {
        let _ = writeln!(out, "    sysctl   {name} = {}", cut(&one_line(value), 80));
    }
    for knob in &f.tuning {
        let _ = writeln!(
            out,
            "    tuning   {} = {}{}",
            knob.knob,
            knob.value,
            optional_mark(knob.required)
        );
    }
    if out.len() == before {
        out.push_str("    nothing but the kernel it boots\n");
    }
    out
}

/// "Judged": each workload's metrics (unit, direction, the limits that apply and the table
/// that set each), each check's kernels (where it must pass, where it must fail) and what it
/// looks for, and the published results to reproduce.
fn judged(j: &Judging<'_>) -> String {
    let mut out = format!(
        "Judged against kernel {} (limits from [analysis] unless a line names its table)\n",
        j.baseline
    );
    let drift_gate = j.limits.max_drift_pct.map_or_else(String::new, |gate| {
        format!(", drift gate {gate}% (the recipe's own, preregistered)")
    });
    let _ = writeln!(
        out,
        "    limits   gate {}%, max CV {}%{drift_gate}, drift margin {} (a SIGNAL must reach {}x \
         the largest spread of a compared kernel's boots)",
        j.limits.gate_pct, j.limits.max_cv_pct, j.drift_margin, j.drift_margin
    );
    for c in j.comparisons {
        let _ = writeln!(
            out,
            "    compare  {} against kernel {} too ([[analysis.comparison]]), with its own verdict",
            c.candidate, c.baseline
        );
    }
    for w in &j.workloads {
        let role = match (w.role, w.aux) {
            (Role::Check, _) => "check: pass/fail, untimed",
            (Role::Control, false) => "control: expected not to move",
            (Role::Control, true) => "control, aux: never drives the summary",
            (Role::Measured, false) => "measured",
            (Role::Measured, true) => "measured, aux: never drives the summary",
        };
        let kernels: Vec<&str> = w.kernels.iter().map(KernelLabel::as_str).collect();
        let place = if kernels.is_empty() {
            String::new()
        } else if w.role == Role::Check || kernels.contains(&j.baseline.as_str()) {
            format!("; on kernels {} only", kernels.join(", "))
        } else {
            format!(
                "; on kernels {} only: no comparison, the baseline {} is not among them",
                kernels.join(", "),
                j.baseline
            )
        };
        let _ = writeln!(out, "    {} ({role}{place})", w.name);
        let width = widest(w.metrics.iter().map(|m| m.name.as_str()));
        for m in &w.metrics {
            let better = match m.better {
                BetterSpec::Lower => "lower",
                BetterSpec::Higher => "higher",
            };
            let unit = if m.unit.is_empty() {
                String::new()
            } else {
                format!("{}, ", one_line(m.unit))
            };
            let l = &m.limits;
            let mut limits = vec![("gate", l.gate_pct), ("max CV", l.max_cv_pct)];
            limits.extend(l.max_drift_pct.map(|drift| ("drift gate", drift)));
            let own: Vec<String> = [LimitScope::Metric, LimitScope::Workload]
                .into_iter()
                .filter_map(|table| {
                    let set: Vec<String> = limits
                        .iter()
                        .filter(|(_, limit)| limit.scope == table)
                        .map(|(what, limit)| format!("{what} {}%", limit.value))
                        .collect();
                    (!set.is_empty()).then(|| format!("{} ({})", set.join(", "), scope(table)))
                })
                .collect();
            let own = if own.is_empty() {
                String::new()
            } else {
                format!("; {}", own.join("; "))
            };
            let _ = writeln!(
                out,
                "      {:<width$}  {unit}{better} is better{own}",
                m.name.as_str()
            );
        }
        if let Some(c) = &w.check {
            let names = |kernels: &mut dyn Iterator<Item = &KernelLabel>| {
                kernels.map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
            };
            if !c.must_pass_on.is_empty() {
                let _ = writeln!(
                    out,
                    "      must pass on {}",
                    names(&mut c.must_pass_on.iter().copied())
                );
            }
            if !c.must_fail_on.is_empty() {
                let _ = writeln!(
                    out,
                    "      must FAIL on {} (expect_fail: exit {} and a regex not met)",
                    names(&mut c.must_fail_on.iter()),
                    c.exit
                );
            }
            for regex in &c.must_match {
                let _ = writeln!(out, "      must match      {}", cut(&one_line(regex), 80));
            }
            for regex in &c.must_not_match {
                let _ = writeln!(out, "      must not match  {}", cut(&one_line(regex), 80));
            }
        }
    }
    for e in &j.expect {
        let case = if e.case.is_empty() {
            String::new()
        } else {
            format!("[{}]", one_line(e.case))
        };
        let unit = if e.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", one_line(e.unit))
        };
        let only = e
            .target
            .map_or_else(String::new, |t| format!(" (on target {t} only)"));
        match (e.change_pct, e.mean, e.share_pct) {
            (Some(change), _, _) if e.control.is_some() => {
                let _ = writeln!(
                    out,
                    "    expect   {}{case}/{} vs {} on kernel {}: {change:+}%, within {} pp{only}",
                    e.workload,
                    e.metric,
                    one_line(e.control.as_deref().unwrap_or_default()),
                    e.kernel,
                    e.tolerance
                );
            }
            (Some(change), _, _) => {
                let _ = writeln!(
                    out,
                    "    expect   {}{case}/{} on {}: {change:+}% against {}, within {} pp{only}",
                    e.workload,
                    e.metric,
                    e.kernel,
                    e.baseline.unwrap_or(j.baseline),
                    e.tolerance
                );
            }
            (None, Some(mean), _) => {
                let _ = writeln!(
                    out,
                    "    expect   {}{case}/{} on {}: mean {mean}{unit}, within {}{unit}{only}",
                    e.workload,
                    e.metric,
                    e.point.map_or_else(
                        || format!("kernel {}", e.kernel),
                        |p| format!(
                            "point {}",
                            crate::point_name::point_name(p, e.kernel.as_str())
                        )
                    ),
                    e.tolerance
                );
            }
            (None, None, Some(share)) => {
                let _ = writeln!(
                    out,
                    "    expect   {}{case}/{} recovery {}: the step to {} recovers {share}% of the gap, within {} pp{only}",
                    e.workload,
                    e.metric,
                    one_line(e.recovery.unwrap_or_default()),
                    e.kernel,
                    e.tolerance
                );
            }
            (None, None, None) => {}
        }
    }
    out
}

/// `set on the metric`, `set on the workload`: which table set a limit.
fn scope(scope: LimitScope) -> &'static str {
    match scope {
        LimitScope::Analysis => "",
        LimitScope::Workload => "set on the workload",
        LimitScope::Metric => "set on the metric",
    }
}

/// Points, boots, runs and the ETA, with what it counts.
fn totals(plan: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "points   {} ({} boot{})",
        plan.points.len(),
        plan.boots,
        if plan.boots == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "runs     {} (warm-ups included)", plan.runs);
    let steps = if plan.steps_estimate.is_zero() {
        String::new()
    } else {
        format!(
            " + setup/teardown ~{} per point",
            format_eta(plan.steps_estimate)
        )
    };
    let _ = writeln!(
        out,
        "ETA      ~{} ({} boot{} x ~{}{steps} + workload estimates)",
        format_eta(plan.eta),
        plan.boots,
        if plan.boots == 1 { "" } else { "s" },
        format_eta(plan.boot_estimate)
    );
    if let Some(max) = &plan.extended {
        let unit: Vec<&str> = max.unit.iter().map(|k| k.as_str()).collect();
        let _ = writeln!(
            out,
            "extend   until decided: +{} per look, up to {} points ({} looks, {} boots, {} runs)",
            unit.join("-"),
            max.points,
            max.looks,
            max.boots,
            max.runs
        );
        let _ = writeln!(
            out,
            "ETA max  ~{} if every look extends (~{} as planned)",
            format_eta(max.eta),
            format_eta(plan.eta)
        );
    }
    out
}

/// The width of the longest of `names`, for a column that lines them up.
fn widest<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(0)
}

fn optional_mark(required: bool) -> &'static str {
    if required { "" } else { " (optional)" }
}
