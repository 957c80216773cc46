//! `aba bisect` refusals that need no kernel: a builds file it cannot use, a tree folder
//! inside another checkout, a continuation with other inputs, and a forged journal read by
//! `aba bisect status`. The bisection itself runs in the lab (`bisect_lab`).

use std::{path::Path, process::Command};

use crate::support::cli::{aba, text, write};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

const RECIPE: &str = r#"
version = 1
name = "bisect-refusals"
description = "a recipe for aba bisect's refusals"
sequence = ["a", "b", "a"]
samples = 3
[kernels.a]
release = "6.1.0-lab"
[kernels.b]
release = "6.1.0-lab"
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, unit = "ns", better = "lower" }
[analysis]
baseline = "a"
"#;

/// A git tree of three commits in `dir/tree`; (good, bad).
fn tree(dir: &Path) -> (String, String) {
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).expect("mkdir");
    git(&tree, &["init", "-q", "-b", "main"]);
    let mut hashes = Vec::new();
    for i in 0..3 {
        std::fs::write(tree.join("f"), format!("{i}\n")).expect("write");
        git(&tree, &["add", "f"]);
        git(&tree, &["commit", "-q", "-m", &format!("commit {i}")]);
        hashes.push(git(&tree, &["rev-parse", "HEAD"]));
    }
    (hashes[0].clone(), hashes[2].clone())
}

fn builds(dir: &Path, tree: &Path, tables: usize) -> String {
    let mut text = String::from("version = 1\n");
    for i in 0..tables {
        text.push_str(&format!(
            "[kernels.t{i}]\ndir = \"{}\"\ncommand = \"true\"\nimage = \"bzImage\"\nconfig = \"config\"\n",
            tree.display()
        ));
    }
    write(dir, "bisect-builds.toml", &text)
        .to_str()
        .expect("utf-8")
        .to_owned()
}

fn bisect_args<'a>(recipe: &'a Path, builds: &'a str, good: &'a str, bad: &'a str) -> Vec<&'a str> {
    vec![
        "bisect",
        recipe.to_str().expect("utf-8"),
        "--builds",
        builds,
        "--good",
        good,
        "--bad",
        bad,
    ]
}

#[test]
fn a_builds_file_of_two_tables_is_refused_before_anything_is_made() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (good, bad) = tree(tmp.path());
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let builds = builds(tmp.path(), &tmp.path().join("tree"), 2);
    let out = aba(tmp.path(), &bisect_args(&recipe, &builds, &good, &bad));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exactly one [kernels.LABEL] table"), "{err}");
    assert!(err.contains("bisect-builds.toml"), "{err}");
    assert!(!tmp.path().join("results").exists(), "nothing was made");
}

#[test]
fn a_tree_folder_inside_another_checkout_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (good, bad) = tree(tmp.path());
    let inner = tmp.path().join("tree/unpacked");
    std::fs::create_dir(&inner).expect("mkdir");
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let builds = builds(tmp.path(), &inner, 1);
    let out = aba(tmp.path(), &bisect_args(&recipe, &builds, &good, &bad));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not the top folder of a git work tree"),
        "{err}"
    );
    assert_eq!(
        git(&tmp.path().join("tree"), &["rev-parse", "HEAD"]),
        bad,
        "the outer checkout was not touched"
    );
}

/// A bisect journal with `built` naming a file outside the commit's own folder: `aba bisect
/// status` names the file and the line, and reads nothing else.
#[test]
fn status_refuses_a_journal_that_points_a_build_elsewhere() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("bisect");
    std::fs::create_dir(&dir).expect("mkdir");
    let h = |i: usize| format!("{i:040x}");
    let start = serde_json::json!({
        "kind": "start", "format": 1, "tree": "/src", "good": h(0), "bad": h(2),
        "commits": [
            {"hash": h(0), "subject": "good"},
            {"hash": h(1), "subject": "one"},
            {"hash": h(2), "subject": "bad"}
        ],
        "setup": {
            "recipe": "r.toml", "recipe_sha256": "0", "builds": "b.toml", "builds_sha256": "0",
            "target": "lab", "series": "w\u{1b}[31m", "strategy": "bayesian",
            "params": {"gate_pct": 5.0, "drift_margin": 2.0, "max_drift_pct": null, "max_cv_pct": 10.0},
            "better": "Lower"
        }
    });
    let built = serde_json::json!({
        "kind": "built", "commit": 1, "hash": h(1), "image": "/etc/shadow",
        "config": format!("builds/{}/config", h(1)), "version": null
    });
    std::fs::write(dir.join("bisect.jsonl"), format!("{start}\n{built}\n")).expect("write");
    let out = aba(
        tmp.path(),
        &["bisect", "status", dir.to_str().expect("utf-8")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bisect.jsonl:2:"), "{err}");
    assert!(err.contains("must be stored as builds/"), "{err}");

    // Without the forged line, status reads the start and says what comes next.
    std::fs::write(dir.join("bisect.jsonl"), format!("{start}\n")).expect("write");
    let out = aba(
        tmp.path(),
        &["bisect", "status", dir.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("In progress: the endpoints' confirmation."),
        "{said}"
    );
    assert!(
        !said.contains('\u{1b}'),
        "a journal's text is escaped: {said}"
    );
    assert!(said.contains("w\\u{1b}[31m"), "{said}");
}

/// A build a killed aba left running (it runs in its own process group, so it outlives aba)
/// is waited for before the tree is checked out and built again: the continuation says so,
/// and its build starts only after the orphaned one ended.
#[test]
fn a_build_left_running_by_a_killed_aba_is_waited_for() {
    use std::os::unix::process::CommandExt as _;
    let tmp = tempfile::tempdir().expect("tmp");
    let (good, bad) = tree(tmp.path());
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let marks = tmp.path().join("marks");
    let script = write(
        tmp.path(),
        "build.sh",
        &format!(
            "#!/bin/sh\necho started >> {m}\nsleep 3\necho ended >> {m}\nexit 1\n",
            m = marks.display()
        ),
    );
    let builds = write(
        tmp.path(),
        "bisect-builds.toml",
        &format!(
            "version = 1\n[kernels.t]\ndir = \"{}\"\ncommand = \"sh {}\"\nimage = \"bzImage\"\nconfig = \"config\"\n",
            tmp.path().join("tree").display(),
            script.display()
        ),
    );
    let dir = tmp.path().join("bisect");
    let args = [
        "bisect",
        recipe.to_str().expect("utf-8"),
        "--builds",
        builds.to_str().expect("utf-8"),
        "--good",
        &good,
        "--bad",
        &bad,
        "--dir",
        dir.to_str().expect("utf-8"),
    ];
    let mut first = crate::support::cli::aba_command(tmp.path())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("aba bisect starts");
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&marks).is_ok_and(|m| m.contains("started")) {
        assert!(started.elapsed().as_secs() < 60, "the build never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signals the process group this test started (the build has its own).
    unsafe { libc::kill(-i32::try_from(first.id()).expect("pid"), libc::SIGKILL) };
    let _ = first.wait();
    let out = aba(tmp.path(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a build that an earlier aba left running"),
        "{err}"
    );
    assert!(err.contains("the good commit"), "{err}");
    let marks = std::fs::read_to_string(&marks).expect("marks");
    assert_eq!(
        marks.lines().collect::<Vec<_>>(),
        ["started", "ended", "started", "ended"],
        "the second build waited for the first"
    );
}
