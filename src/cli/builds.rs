//! `aba build` and `aba clean`: the tester's kernels built on this host, and every trace a
//! campaign left on its target removed.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use crate::{
    analysis::matched_build::{BuildSide, MatchedBuilds, Status},
    build::{
        file::BuildsFile,
        prepare::{self, Steps},
        record::KernelBuild,
    },
    error::Error,
    inventory::Target,
};

/// `aba build RECIPE --builds FILE`: runs the build steps (logs into `logs`), then says each
/// kernel's identity; touches no target.
pub fn build(
    recipe_path: &Path,
    target_args: &super::TargetArgs,
    files: &super::FilesArgs,
    builds_file: &Path,
    no_build: bool,
    logs: &Path,
) -> Result<u8, Error> {
    let inventory = target_args.inventory()?;
    let recipe = files.load(recipe_path, &inventory)?;
    let target = match &target_args.target {
        Some(name) => inventory.target(name)?,
        None => Target::any_switching(),
    };
    let file = BuildsFile::load(builds_file)?;
    prepare::check(&file, &recipe, &target)?;
    std::fs::create_dir_all(logs).map_err(|source| Error::ResultsDir {
        parent: logs.to_path_buf(),
        source,
    })?;
    let say = |text: &str| eprintln!("{text}");
    let log_name = |label: &str| logs.join(format!("{label}.log")).display().to_string();
    let steps = if no_build {
        Steps::Skip
    } else {
        Steps::Run {
            logs,
            say: &say,
            log_name: &log_name,
        }
    };
    let builds = prepare::make_all(&file, &steps)?;
    for (spec, build) in file.kernels.iter().zip(&builds) {
        println!("{}", describe(&spec.label, build).join("\n"));
    }
    let matched = MatchedBuilds::compare(
        recipe.analysis.baseline.as_str(),
        &file
            .kernels
            .iter()
            .zip(&builds)
            .map(|(spec, build)| (spec.label.clone(), Some(BuildSide::of_build(build))))
            .collect::<Vec<_>>(),
    );
    if !matched.rows.is_empty() {
        println!("{}", matched_lines(&matched).join("\n"));
    }
    Ok(crate::error::exit_code::OK)
}

/// The builds against the baseline's, field by field, as `matched-build.tsv` has them.
fn matched_lines(matched: &MatchedBuilds) -> Vec<String> {
    let mut lines = vec![format!(
        "matched builds: each kernel against the baseline {}",
        matched.baseline
    )];
    let width = matched.kernels().iter().map(|k| k.len()).max().unwrap_or(0);
    for row in &matched.rows {
        let mut line = format!("  {:<width$} {:<25} {}", row.kernel, row.field, row.status);
        if let (Some(b), Some(v), Status::Differs) = (&row.baseline, &row.value, row.status) {
            let _ = write!(line, ": {} vs {}", b.short(), v.short());
        }
        lines.push(line);
    }
    lines
}

/// `aba clean DIR`: removes every trace the campaign left on its target
/// ([`crate::session::clean`]) and says each.
pub fn clean(dir_path: &Path, targets: Option<&PathBuf>) -> Result<u8, Error> {
    let cleaned = crate::session::clean::clean(dir_path, targets)?;
    // What the target printed: shown escaped, it cannot drive the terminal.
    for reason in &cleaned.refused {
        eprintln!("warning: {}", crate::text::one_line(reason));
    }
    if cleaned.removed.is_empty() {
        eprintln!(
            "nothing of the campaign in {} was left on target `{}`",
            crate::text::one_line(&dir_path.display().to_string()),
            cleaned.target
        );
    }
    for line in &cleaned.removed {
        println!("{}", crate::text::one_line(line));
    }
    if cleaned.settings_pending {
        eprintln!(
            "warning: the campaign's settings (sysctls, CPU frequency) were never put back: `aba restore {}` does that",
            dir_path.display()
        );
    }
    Ok(crate::error::exit_code::OK)
}

/// A kernel's build in lines: what `aba build` prints and the report's source identity says.
pub fn describe(label: &str, build: &KernelBuild) -> Vec<String> {
    let mut lines = vec![
        format!("kernel {label} ({})", build.at),
        format!("  version  {}", build.version),
        format!(
            "  image    {} ({}, SHA-256 {})",
            build.image.path,
            crate::text::bytes(build.image.bytes),
            build.image.sha256
        ),
    ];
    let made = build.made_with.as_ref();
    match made.and_then(|m| m.compiler.as_ref()) {
        Some(c) => lines.push(format!("  compiler {} (from {})", c.value, c.from.words())),
        None => {
            if let Some(c) = &build.version.compiler {
                lines.push(format!("  compiler {c}"));
            }
        }
    }
    if let Some(l) = made.and_then(|m| m.linker.as_ref()) {
        lines.push(format!("  linker   {} (from {})", l.value, l.from.words()));
    }
    for (what, file) in [("initrd", &build.initrd), ("config", &build.config)] {
        if let Some(f) = file {
            lines.push(format!("  {what:<8} {} (SHA-256 {})", f.path, f.sha256));
        }
    }
    if let Some(sha) = made.and_then(|m| m.config_normalised_sha256.as_ref()) {
        lines.push(format!("  config   normalised SHA-256 {sha}"));
    }
    if let Some(m) = &build.modules {
        lines.push(format!("  modules  {} (SHA-256 {})", m.path, m.sha256));
    }
    match &build.source {
        Some(s) => lines.push(format!(
            "  source   {} at {} ({}{}), diff SHA-256 {}",
            s.dir,
            s.commit,
            s.describe,
            if s.dirty { ", dirty" } else { "" },
            s.diff_sha256
        )),
        None => match made.and_then(|m| m.source_snapshot.as_ref()) {
            Some(s) => lines.push(format!(
                "  source   not a git tree: snapshot SHA-256 {} ({} files)",
                s.sha256, s.files
            )),
            None => lines.push("  source   not recorded (no `dir`)".to_owned()),
        },
    }
    for p in &build.patches {
        lines.push(format!("  patch    {} (SHA-256 {})", p.path, p.sha256));
        if let Some(m) = made
            .into_iter()
            .flat_map(|m| &m.patch_messages)
            .find(|m| m.patch == p.path)
        {
            lines.push(format!("           Message-ID {}", m.message_id));
        }
    }
    if let Some(b) = &build.built {
        lines.push(format!(
            "  built    `{}` in {:.1} s (log {})",
            b.command,
            b.millis as f64 / 1000.0,
            b.log
        ));
    }
    lines
}
