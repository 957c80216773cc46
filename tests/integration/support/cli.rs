//! Running the real `aba` binary and looking into the results directories it writes.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// The `aba` binary cargo built for these tests.
pub fn aba_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_aba"))
}

/// `aba ARGS…` in `cwd`, waited for.
pub fn aba(cwd: &Path, args: &[&str]) -> Output {
    Command::new(aba_bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("ABA_TARGETS")
        .env_remove("ABA_RESULTS")
        .output()
        .expect("aba runs")
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
