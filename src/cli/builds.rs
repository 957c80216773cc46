//! `aba build` and `aba clean`: the tester's kernels built on this host, and what a campaign
//! installed of them on its target removed.

use std::path::{Path, PathBuf};

use crate::{
    build::{
        file::BuildsFile,
        prepare::{self, Steps},
        record::KernelBuild,
    },
    error::Error,
    inventory::Target,
    results::layout::ResultsDir,
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
    Ok(crate::error::exit_code::OK)
}

/// `aba clean DIR`: removes from the campaign's target what aba's ledger there says the
/// campaign installed, where it is still aba's. The journal only says whether the campaign
/// installed anything; what is removed comes from the ledger, never from the journal.
pub fn clean(dir_path: &Path, targets: Option<&PathBuf>) -> Result<u8, Error> {
    use crate::{
        build::install::{InstallError, remove},
        campaign::ledger::{CampaignKey, Ledger},
        results::journal::{Event, Journal, first_line_of},
    };
    let dir = ResultsDir::open(dir_path);
    let journal = Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir_path.to_path_buf(),
        resumable: false,
        source,
    })?;
    let Some(Event::Campaign { target: name, .. }) = journal.header().cloned() else {
        return Err(Error::NoHeader);
    };
    let claimed: usize = journal
        .events
        .iter()
        .map(|e| match e {
            Event::Installed { installed, .. } => installed.len(),
            _ => 0,
        })
        .sum();
    if claimed == 0 {
        eprintln!(
            "the campaign in {} installed nothing on its target",
            dir_path.display()
        );
        return Ok(crate::error::exit_code::OK);
    }
    let inventory = crate::inventory::Inventory::discover(targets.map(PathBuf::as_path))?;
    let target = inventory.target(&name)?;
    let mut transport =
        crate::target::connect::transport_for(&target).map_err(|source| Error::Target {
            target: name.clone(),
            source,
        })?;
    let deadline = std::time::Instant::now() + target.connect_window();
    transport
        .reconnect(deadline)
        .map_err(|source| Error::Connect {
            target: name.clone(),
            source,
        })?;
    let failed = |source: InstallError| Error::Clean {
        target: name.clone(),
        source,
    };
    let ledger = Ledger::of(&target);
    let campaign = CampaignKey::of(journal.header());
    let Some(entry) = ledger
        .installed(transport.as_mut(), &campaign)
        .map_err(|e| failed(e.into()))?
    else {
        let journal_path = dir.journal_path();
        let line = first_line_of(&journal_path, "\"installed\"", |e| {
            matches!(e, Event::Installed { .. })
        })
        .ok()
        .flatten()
        .unwrap_or(0);
        return Err(failed(InstallError::NotInLedger {
            journal: journal_path,
            line,
            count: claimed,
            ledger: ledger.dir().to_owned(),
        }));
    };
    let (removed, refused) = remove(transport.as_mut(), &entry).map_err(failed)?;
    for reason in &refused {
        eprintln!("warning: {}: {reason}", ledger.installed_path(&campaign));
    }
    if refused.is_empty() {
        // Everything the ledger listed is gone or was never there: nothing is left to do.
        ledger
            .set_installed(transport.as_mut(), &campaign, None)
            .map_err(|e| failed(e.into()))?;
    }
    if removed.is_empty() {
        eprintln!(
            "nothing left to remove on target {name}: {} item(s) installed, none there any more",
            entry.items.len()
        );
    }
    for line in removed {
        println!("{line}");
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
    if let Some(c) = &build.version.compiler {
        lines.push(format!("  compiler {c}"));
    }
    for (what, file) in [("initrd", &build.initrd), ("config", &build.config)] {
        if let Some(f) = file {
            lines.push(format!("  {what:<8} {} (SHA-256 {})", f.path, f.sha256));
        }
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
        None => lines.push("  source   not a git tree (no `dir`, or not a checkout)".to_owned()),
    }
    for p in &build.patches {
        lines.push(format!("  patch    {} (SHA-256 {})", p.path, p.sha256));
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
