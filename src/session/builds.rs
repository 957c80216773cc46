//! `--builds FILE` on `aba run`, `calibrate`, `check` and `preflight`: the tester's kernels
//! built on this host, made ready once per command (the build steps run once, whatever the
//! number of targets) and bound per target.

use std::path::Path;

use crate::{
    build::{
        file::BuildsFile,
        prepare::{self, Steps},
        record::KernelBuild,
    },
    error::Error,
    inventory::Target,
    kernel::binding::BoundKernel,
    recipe::Recipe,
    results::layout::ResultsDir,
    session::{
        inputs::{Bindings, Sources},
        observer::Voice,
        private_dir::PrivateDir,
    },
};

/// The builds of one command: read, built (unless `--no-build`) and recorded.
#[derive(Debug)]
pub struct HostBuilds {
    /// The builds file.
    pub file: BuildsFile,
    /// Each kernel's record, in the file's order (install folders chosen per target).
    pub builds: Vec<KernelBuild>,
    /// The build steps' logs, until a results directory keeps them.
    logs: Option<PrivateDir>,
}

impl HostBuilds {
    /// Reads `--builds` (nothing without it), checks it against `recipe` and every target,
    /// runs the build steps unless `--no-build`, and records every build. The builds run
    /// once for every target of the command, before any target's campaign: they speak as
    /// the command itself ([`Voice::Alone`]).
    pub fn prepare(
        args: &Bindings,
        recipe: &Recipe,
        targets: &[&Target],
    ) -> Result<Option<HostBuilds>, Error> {
        HostBuilds::read(args, recipe, targets, !args.no_build)
    }

    /// [`HostBuilds::prepare`] without the build steps: the files as they are now (`aba
    /// preflight`).
    pub fn as_they_are(
        args: &Bindings,
        recipe: &Recipe,
        targets: &[&Target],
    ) -> Result<Option<HostBuilds>, Error> {
        HostBuilds::read(args, recipe, targets, false)
    }

    fn read(
        args: &Bindings,
        recipe: &Recipe,
        targets: &[&Target],
        run_steps: bool,
    ) -> Result<Option<HostBuilds>, Error> {
        let voice = Voice::Alone;
        let Some(path) = &args.builds else {
            return Ok(None);
        };
        let file = BuildsFile::load(path)?;
        for target in targets {
            prepare::check(&file, recipe, target)?;
        }
        let logs = if !run_steps || file.kernels.iter().all(|k| k.command.is_none()) {
            None
        } else {
            Some(PrivateDir::new("aba-build").map_err(Error::PrivateDir)?)
        };
        let say = |text: &str| voice.say(text);
        let builds = match &logs {
            Some(dir) => prepare::make_all(
                &file,
                &Steps::Run {
                    logs: &dir.0,
                    say: &say,
                    log_name: &ResultsDir::build_log_name,
                },
            )?,
            None => prepare::make_all(&file, &Steps::Skip)?,
        };
        for (spec, build) in file.kernels.iter().zip(&builds) {
            voice.say(&format!(
                "kernel {}: built on this host ({}): {}, image SHA-256 {}",
                spec.label,
                spec.at,
                build.version,
                &build.image.sha256[..16]
            ));
        }
        Ok(Some(HostBuilds { file, builds, logs }))
    }

    /// [`HostBuilds::prepare`] for a new campaign of `recipe_path` on `targets`, shared by
    /// their runners.
    pub fn for_run(
        recipe_path: &Path,
        inventory: &crate::inventory::Inventory,
        files: &Sources,
        args: &Bindings,
        targets: &[&Target],
    ) -> Result<Option<std::sync::Arc<HostBuilds>>, Error> {
        if args.builds.is_none() {
            return Ok(None);
        }
        let recipe = files.load(recipe_path, inventory, crate::recipe::Params::Defaults)?;
        Ok(HostBuilds::prepare(args, &recipe, targets)?.map(std::sync::Arc::new))
    }

    /// Binds the builds to `recipe`'s kernels for `target` (see [`prepare::bind`]).
    pub fn bind(
        &self,
        recipe: &mut Recipe,
        bound: &mut [BoundKernel],
        target: &Target,
    ) -> Result<(), Error> {
        Ok(prepare::bind(
            recipe,
            bound,
            &self.file,
            &self.builds,
            target,
        )?)
    }

    /// Copies the build logs into `dir/build/`, where the journal's records name them.
    pub fn keep_logs(&self, dir: &ResultsDir) -> Result<(), Error> {
        let Some(logs) = &self.logs else {
            return Ok(());
        };
        let io = |source| Error::ResultsDir {
            parent: dir.root.clone(),
            source,
        };
        std::fs::create_dir_all(dir.build_dir()).map_err(io)?;
        for spec in self.file.kernels.iter().filter(|k| k.command.is_some()) {
            let from = logs.0.join(format!("{}.log", spec.label));
            if from.is_file() {
                std::fs::copy(
                    &from,
                    dir.root.join(ResultsDir::build_log_name(&spec.label)),
                )
                .map_err(io)?;
            }
        }
        Ok(())
    }
}

/// What `aba check` says of the builds of `--builds` for `recipe` on `target`, without
/// running them: each kernel's build step (with its estimate) and whether each file is there
/// (the image with the release it embeds). When every kernel's files are there, the builds
/// as they are (bound, the plan shows their releases); `Err` when a file is missing that no
/// build step makes.
pub fn check_lines(
    args: &Bindings,
    recipe: &Recipe,
    target: &Target,
) -> Result<Option<BuildsCheck>, Error> {
    let Some(path) = &args.builds else {
        return Ok(None);
    };
    let file = BuildsFile::load(path)?;
    if target.name != crate::inventory::ANY_SWITCHING {
        prepare::check(&file, recipe, target)?;
    }
    let mut lines = vec![format!("kernels built on this host ({}):", path.display())];
    let mut builds = Vec::new();
    let mut estimate = std::time::Duration::ZERO;
    for spec in &file.kernels {
        lines.push(format!("  kernel {} ({})", spec.label, spec.at));
        match &spec.command {
            Some(c) if !args.no_build => {
                estimate += spec.estimate.unwrap_or_default();
                lines.push(format!(
                    "    build    `{c}` in {} ({})",
                    spec.dir.display(),
                    spec.estimate.map_or_else(
                        || "no estimate: set `estimate` for the ETA".to_owned(),
                        |e| format!("about {}", humantime::format_duration(e))
                    )
                ));
            }
            _ => lines.push("    build    none: the files are used as they are".to_owned()),
        }
        // Every file there: one read of each, whose record binds the plan below.
        if let Ok(build) = prepare::make(spec, &Steps::Skip) {
            let v = &build.version;
            lines.push(format!(
                "    image    {} present, release {} ({v})",
                spec.image.display(),
                v.release
            ));
            lines.extend(
                others(spec).map(|(what, p)| format!("    {what:<8} {} present", p.display())),
            );
            builds.push(build);
            continue;
        }
        let image = match crate::build::record::read_file(&spec.image, "image") {
            Ok(data) => match crate::build::version::KernelVersion::from_image(&data) {
                Ok(v) => format!("present, release {} ({v})", v.release),
                Err(e) => format!("present, but {e}"),
            },
            Err(e) if spec.command.is_none() || args.no_build => {
                return Err(Error::Build(prepare::BuildError::File {
                    label: spec.label.clone(),
                    at: spec.at.clone(),
                    source: Box::new(e),
                }));
            }
            Err(_) => "missing: the build step makes it".to_owned(),
        };
        lines.push(format!("    image    {} {image}", spec.image.display()));
        lines.extend(others(spec).map(|(what, p)| {
            format!(
                "    {what:<8} {} {}",
                p.display(),
                if p.exists() { "present" } else { "missing" }
            )
        }));
    }
    if !estimate.is_zero() {
        lines.push(format!(
            "  the build steps take about {} before the first boot",
            humantime::format_duration(estimate)
        ));
    }
    let all_there = builds.len() == file.kernels.len();
    if all_there {
        lines.extend(matched_summary(recipe, &file, &builds));
    }
    let file_labels = file
        .kernels
        .iter()
        .filter_map(|k| crate::recipe::ident::KernelLabel::new(&k.label).ok())
        .collect();
    let host = (all_there && target.name != crate::inventory::ANY_SWITCHING).then(|| HostBuilds {
        file,
        builds,
        logs: None,
    });
    Ok(Some(BuildsCheck {
        lines,
        labels: file_labels,
        host,
        estimate,
    }))
}

/// Each kernel's build against the baseline's, in a line per kernel (the baseline built
/// here too): the fields that agree, those that differ as intended or expected, and those
/// that differ beyond (with both values), as `matched-build.tsv` will say.
fn matched_summary(recipe: &Recipe, file: &BuildsFile, builds: &[KernelBuild]) -> Vec<String> {
    use crate::analysis::matched_build::{BuildSide, MatchedBuilds, Status};
    let sides: Vec<_> = file
        .kernels
        .iter()
        .zip(builds)
        .map(|(spec, build)| (spec.label.clone(), Some(BuildSide::of_build(build))))
        .collect();
    let matched = MatchedBuilds::compare(recipe.analysis.baseline.as_str(), &sides);
    let mut lines = Vec::new();
    for kernel in matched.kernels() {
        let rows: Vec<_> = matched.rows.iter().filter(|r| r.kernel == kernel).collect();
        let pass = rows.iter().filter(|r| r.status == Status::Pass).count();
        let allowed: Vec<&str> = rows
            .iter()
            .filter(|r| matches!(r.status, Status::Intended(_) | Status::Expected(_)))
            .map(|r| r.field)
            .collect();
        let differs: Vec<String> = rows
            .iter()
            .filter(|r| r.status == Status::Differs)
            .map(|r| {
                format!(
                    "{} ({} vs {})",
                    r.field,
                    r.baseline.as_ref().map_or_else(String::new, |v| v.short()),
                    r.value.as_ref().map_or_else(String::new, |v| v.short())
                )
            })
            .collect();
        let mut line = format!(
            "  kernel {kernel} against the baseline {}: {pass} of {} fields PASS",
            matched.baseline,
            rows.len()
        );
        if !allowed.is_empty() {
            line.push_str(&format!(
                "; differ as intended or expected: {}",
                allowed.join(", ")
            ));
        }
        let unknown: Vec<&str> = rows
            .iter()
            .filter(|r| r.status == Status::NotRecorded)
            .map(|r| r.field)
            .collect();
        if !unknown.is_empty() {
            line.push_str(&format!("; not recorded: {}", unknown.join(", ")));
        }
        if differs.is_empty() {
            line.push_str("; nothing beyond");
        } else {
            line.push_str(&format!("; DIFFERS beyond: {}", differs.join(", ")));
        }
        lines.push(line);
    }
    lines
}

/// A build's files besides its image, with what each is.
fn others(spec: &crate::build::file::BuildSpec) -> impl Iterator<Item = (&'static str, &Path)> {
    [
        ("initrd", &spec.initrd),
        ("config", &spec.config),
        ("modules", &spec.modules),
    ]
    .into_iter()
    .filter_map(|(what, p)| Some((what, p.as_deref()?)))
    .chain(spec.patches.iter().map(|p| ("patch", p.as_path())))
}

/// What `aba check` says of the builds, and the builds as they are when all are there.
pub struct BuildsCheck {
    /// The lines to print.
    pub lines: Vec<String>,
    /// The kernels the builds file covers: each boot of one is proven to be its build.
    pub labels: Vec<crate::recipe::ident::KernelLabel>,
    /// The builds, read without their build steps, when every file is there.
    pub host: Option<HostBuilds>,
    /// What the build steps are estimated to take (their `estimate`s).
    pub estimate: std::time::Duration,
}
