//! Visible skips for tests that cannot run on this machine.
//!
//! A test that needs something the machine lacks (a tool, a writable `/proc/sys`, hardware
//! without cpufreq) calls [`skip`] and returns. The skip is printed, appended to the skip log
//! that `./test.sh` counts in one summary line at the end of the suite, and, under
//! `ABA_REQUIRE_ALL=1` (set by `.ci/run`, where every prerequisite is installed), turned into a
//! failure: a skip can never hide in CI.
//!
//! Shared by the unit tests (`src/testing.rs` includes this file) and the integration tests.

use std::io::Write as _;

/// Where skips are logged: `$ABA_SKIP_LOG`, else `target/test-skips.log` in the crate.
fn log_path() -> std::path::PathBuf {
    match std::env::var_os("ABA_SKIP_LOG") {
        Some(path) => path.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-skips.log"),
    }
}

/// Whether `.ci/run` demands that every test runs.
pub fn required() -> bool {
    std::env::var_os("ABA_REQUIRE_ALL").is_some_and(|v| v == "1")
}

/// Records that the calling test cannot do what it names, and why. Panics under
/// `ABA_REQUIRE_ALL=1`; otherwise the caller returns after this.
#[track_caller]
pub fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_owned();
    let at = std::panic::Location::caller();
    if required() {
        panic!("{test} cannot run here and ABA_REQUIRE_ALL=1 forbids skipping: {reason} ({at})");
    }
    eprintln!("SKIPPED {test}: {reason}");
    let line = format!("{test}\t{reason}\t{at}\n");
    if let Ok(mut log) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path())
    {
        let _ = log.write_all(line.as_bytes());
    }
}

/// Whether `program` can be started from `PATH` (or is an absolute path that exists).
pub fn have(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).exists();
    }
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let candidate = dir.join(program);
            std::fs::metadata(&candidate).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt as _;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
    })
}

/// [`have`], or a visible [`skip`] naming the program and the script that installs it.
#[track_caller]
pub fn need(program: &str) -> bool {
    if have(program) {
        return true;
    }
    skip(&format!(
        "`{program}` is not installed (lab/host-deps.sh installs it; run it as root)"
    ));
    false
}
