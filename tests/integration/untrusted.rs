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
    hostile::{BASE, Root, results_dir},
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

/// A reference that is a copy of the fixture results directory, inside the recipe's folder.
fn reference_with_link(root: &Root, victim: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/local-null");
    let reference = root.path().join("recipe/published");
    std::fs::create_dir_all(reference.join("files")).expect("mkdir");
    for name in ["journal.jsonl", "recipe.toml", "samples.csv"] {
        std::fs::copy(fixture.join(name), reference.join(name)).expect("copy");
    }
    std::os::unix::fs::symlink(victim, reference.join("files/notes.txt")).expect("ln");
    root.write(
        "recipe/r.toml",
        &format!("{BASE}[expect]\nreference = \"published\"\n"),
    );
}

/// A link inside a recipe's reference is refused by `check` and by `run` (before anything
/// runs), naming the link: its target, a 0600 secret, is never copied into the results.
#[test]
fn a_link_inside_a_reference_is_refused_and_never_copied() {
    let root = Root::new();
    let victim = victim(&root);
    reference_with_link(&root, &victim);
    let expected = [
        "recipe/published/files/notes.txt is a symbolic link",
        "aba does not follow links inside a reference",
    ];
    root.refuses(&["check", "recipe/r.toml"], 1, &expected);
    root.refuses(&["run", "recipe/r.toml"], 1, &expected);
    let copied = walk(&root.path().join("results"));
    assert!(
        !copied
            .iter()
            .any(|p| std::fs::read(p).is_ok_and(|d| d == b"the tester's secret\n")),
        "the secret was copied: {copied:?}"
    );
}

/// Every regular file under `dir` (none when it is missing).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}
