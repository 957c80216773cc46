//! Running the real `aba` binary and looking into the results directories it writes.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use aba::results::journal::{Event, Journal};

/// The `aba` binary cargo built for these tests.
pub fn aba_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_aba"))
}

/// The `aba` binary to run in `cwd`, with the user's `ABA_*` settings removed, the
/// host-side target locks kept in `cwd/.aba-locks` and the `local` target's ledger of what aba
/// changed in `cwd/.aba-state`: tests run side by side, several of them on the built-in
/// `local` target, and each must hold its own lock (the lock tests share one directory on
/// purpose); none writes the machine's own /var/lib/aba.
pub fn aba_command(cwd: &Path) -> Command {
    let mut command = Command::new(aba_bin());
    command
        .current_dir(cwd)
        .env_remove("ABA_TARGETS")
        .env_remove("ABA_RESULTS")
        .env("ABA_LOCK_DIR", cwd.join(".aba-locks"))
        .env("ABA_STATE_DIR", cwd.join(".aba-state"));
    command
}

/// `aba ARGS…` in `cwd`, waited for.
pub fn aba(cwd: &Path, args: &[&str]) -> Output {
    aba_command(cwd).args(args).output().expect("aba runs")
}

/// `aba resume DIR [--targets FILE] EXTRA…` in `cwd`, waited for.
pub fn resume(cwd: &Path, dir: &Path, targets: Option<&Path>, extra: &[&str]) -> Output {
    let mut args = vec!["resume", dir.to_str().expect("utf-8 path")];
    if let Some(t) = targets {
        args.extend(["--targets", t.to_str().expect("utf-8 path")]);
    }
    args.extend(extra);
    aba(cwd, &args)
}

/// Every record of the journal in `dir`.
pub fn journal_events(dir: &Path) -> Vec<Event> {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events
}

/// stdout + stderr as text, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "status: {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The only campaign directory under `results`.
pub fn campaign_dir(results: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(results)
        .expect("results dir exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one campaign in {}: {dirs:?}",
        results.display()
    );
    dirs.remove(0)
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(&path, text).expect("write");
    path
}

/// Waits until the campaign being written under `results` has a journal for which `ready`
/// holds, polling every 20 ms for at most `limit`; returns the campaign directory.
pub fn wait_for_journal(
    results: &Path,
    limit: Duration,
    what: &str,
    ready: impl Fn(&[Event]) -> bool,
) -> PathBuf {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
        let Ok(mut entries) = std::fs::read_dir(results) else {
            continue;
        };
        let Some(Ok(entry)) = entries.next() else {
            continue;
        };
        let Ok(journal) = Journal::read(&entry.path().join("journal.jsonl")) else {
            continue;
        };
        if ready(&journal.events) {
            return entry.path();
        }
    }
}

/// How many workload runs the journal records after `point` started (any attempt).
pub fn samples_since_start_of(events: &[Event], point: &str) -> usize {
    events
        .iter()
        .skip_while(|e| !matches!(e, Event::PointStarted { point: p, .. } if p == point))
        .filter(|e| matches!(e, Event::Sample { .. }))
        .count()
}

/// `aba run RECIPE --targets TARGETS --target TARGET --results RESULTS` in `cwd`, waited for.
pub fn run_on(cwd: &Path, recipe: &Path, targets: &Path, target: &str, results: &str) -> Output {
    on_target(cwd, "run", recipe, targets, target, &["--results", results])
}

/// `aba COMMAND RECIPE --targets TARGETS --target TARGET EXTRA…` in `cwd`, waited for.
pub fn on_target(
    cwd: &Path,
    command: &str,
    recipe: &Path,
    targets: &Path,
    target: &str,
    extra: &[&str],
) -> Output {
    let mut args = vec![
        command,
        recipe.to_str().expect("utf-8 path"),
        "--targets",
        targets.to_str().expect("utf-8 path"),
        "--target",
        target,
    ];
    args.extend_from_slice(extra);
    aba(cwd, &args)
}

/// [`run_on`] with the kernels of the builds file `builds` built on the host.
pub fn run_built(cwd: &Path, recipe: &Path, targets: &Path, target: &str, builds: &Path) -> Output {
    let builds = builds.to_str().expect("utf-8 path");
    on_target(
        cwd,
        "run",
        recipe,
        targets,
        target,
        &["--builds", builds, "--results", "results"],
    )
}

/// The same as [`run_on`], started in the background (stdout and stderr piped) so a test can
/// inject a fault while it runs.
pub fn spawn_run_on(cwd: &Path, recipe: &Path, targets: &Path, target: &str) -> Child {
    aba_command(cwd)
        .arg("run")
        .arg(recipe)
        .arg("--targets")
        .arg(targets)
        .args(["--target", target, "--results", "results"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aba run starts")
}

/// `aba verify DIR` finds the journal and samples.csv in agreement: every journaled run has its
/// rows, no row lacks a run, every finished point has exactly its samples, and every valid row
/// carries its proven boot. Every test that runs a campaign ends with this, so a lost or
/// mislabelled sample fails a test whatever the test itself looks at.
pub fn assert_verified(dir: &Path) {
    let out = aba(dir, &["verify", dir.to_str().expect("utf-8 path")]);
    assert!(
        out.status.success(),
        "aba verify {} found differences:\n{}",
        dir.display(),
        text(&out)
    );
}

/// The command of the `Reproduce: `…`` line in `said`, a report's text with its line breaks
/// and indentation folded to single spaces.
pub fn reproduce_command(said: &str) -> &str {
    let start = said.find("Reproduce: `").expect("a Reproduce line") + "Reproduce: `".len();
    &said[start..start + said[start..].find('`').expect("closing quote")]
}
