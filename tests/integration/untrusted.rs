//! Results, reference and source directories from someone else (issue 30, part 2): aba never
//! writes through a link planted in them, never copies what a link points to, never runs the
//! programs a git tree configures, and shows their text escaped and cut. Cases run the real
//! binary in a [`Root`] of the hostile-input corpus, which also checks that nothing outside
//! `results/` changed.

use std::{
    io::Write as _,
    os::unix::fs::PermissionsExt as _,
    path::Path,
    process::{Command, Stdio},
};

use crate::{
    hostile::{Root, results_dir},
    support::cli::aba_bin,
};

/// A 0600 file of the tester's that no command may change or copy.
fn victim(root: &Root) -> std::path::PathBuf {
    let path = root.write("outside/victim", "the tester's secret\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// `aba report results/sent` with links to `victim` planted at every temporary name an older
/// aba would have written through (`.<file>.tmp-<pid>`, its own pid known before it starts:
/// a shell that waits for a line, then execs aba under its own pid).
#[test]
fn report_never_writes_through_links_planted_at_temporary_names() {
    let root = Root::new();
    let dir = results_dir(&root);
    let victim = victim(&root);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("read go; exec \"$0\" report results/sent")
        .arg(aba_bin())
        .current_dir(root.path())
        .env("ABA_LOCK_DIR", root.path().join("locks"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh starts");
    let pid = child.id();
    for name in aba::report::write::FILES
        .iter()
        .chain(aba::report::write::REPRODUCTION_FILES.iter())
    {
        std::os::unix::fs::symlink(&victim, dir.join(format!(".{name}.tmp-{pid}"))).expect("ln");
    }
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"go\n")
        .expect("go");
    let out = child.wait_with_output().expect("aba ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read"),
        "the tester's secret\n"
    );
    assert!(
        std::fs::symlink_metadata(dir.join("report.txt"))
            .expect("written")
            .is_file()
    );
}
