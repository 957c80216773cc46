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
    hostile::{BASE, Root, mkfifo, results_dir},
    support::cli::aba_bin,
};

/// A 0600 file of the tester's that no command may change or copy.
fn victim(root: &Root) -> std::path::PathBuf {
    let path = root.write("outside/victim", "the tester's secret\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// The victim still holds what [`victim`] wrote.
#[track_caller]
fn assert_untouched(victim: &Path) {
    assert_eq!(
        std::fs::read_to_string(victim).expect("read"),
        "the tester's secret\n"
    );
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
    assert_untouched(&victim);
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

/// A lock file planted as a link to the tester's file: `unlock` and `run` refuse it, naming
/// it, and never truncate what it points to.
#[test]
fn a_lock_file_that_is_a_link_is_refused_not_truncated() {
    let root = Root::new();
    let victim = victim(&root);
    std::fs::create_dir_all(root.path().join("locks")).expect("mkdir");
    std::os::unix::fs::symlink(&victim, root.path().join("locks/local.lock")).expect("ln");
    let expected = [
        "locks/local.lock",
        "it is a symbolic link; aba does not follow links to lock files",
    ];
    root.refuses(&["unlock", "--target", "local"], 1, &expected);
    root.write("recipe/r.toml", BASE);
    root.refuses(&["run", "recipe/r.toml"], 1, &expected);
    assert_untouched(&victim);
}

/// `$ABA_LOCK_DIR` naming a folder that exists keeps its mode (a shared folder stays
/// shared); one aba creates is private.
#[test]
fn an_existing_lock_directory_keeps_its_mode() {
    let root = Root::new();
    let shared = root.path().join("locks");
    std::fs::create_dir_all(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let ran = root.aba(&["unlock", "--target", "local"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    let mode = std::fs::metadata(&shared)
        .expect("stat")
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o1777, "{}", ran.text());
    std::fs::remove_dir_all(&shared).expect("rm");
    let ran = root.aba(&["unlock", "--target", "local"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    let mode = std::fs::metadata(&shared)
        .expect("stat")
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o700, "{}", ran.text());
}

/// A stale lock record of megabytes with escape sequences: `unlock` reads a bounded start of
/// it and shows it escaped and cut.
#[test]
fn a_huge_lock_record_is_shown_cut_and_escaped() {
    let root = Root::new();
    let record = format!("\u{1b}]0;owned\u{7}{}\n", "x".repeat(8 << 20));
    root.write("locks/local.lock", &record);
    let ran = root.aba(&["unlock", "--target", "local"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    assert!(
        ran.stdout.contains("released: host-side record")
            && ran.stdout.contains("\\u{1b}]0;owned\\u{7}xxx"),
        "{}",
        ran.text()
    );
    assert!(ran.stdout.len() < 2000, "{} bytes", ran.stdout.len());
    assert!(!ran.stdout.contains('\u{1b}'), "{}", ran.text());
}

/// A journal whose header and stop reason hold escape sequences and 5000 characters:
/// `status`, `report` (stdout, report.txt, README.md) show them escaped and cut.
#[test]
fn a_journals_free_text_reaches_no_terminal_or_report_raw() {
    let root = Root::new();
    let dir = results_dir(&root);
    let path = dir.join("journal.jsonl");
    let journal = std::fs::read_to_string(&path).expect("journal");
    let mut lines: Vec<String> = journal
        .lines()
        .filter(|l| !l.contains("\"event\":\"finished\""))
        .map(str::to_owned)
        .collect();
    let hostile = format!("\u{1b}]0;owned\u{7}\u{1b}[2J{}", "R".repeat(5000));
    let mut header: serde_json::Value = serde_json::from_str(&lines[0]).expect("header");
    header["aba"] = serde_json::Value::String(hostile.clone());
    lines[0] = header.to_string();
    lines.push(
        serde_json::json!({"event": "stopped", "reason": hostile, "time": "2026-07-20T00:10:00Z"})
            .to_string(),
    );
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    for args in [&["status", "results/sent"][..], &["report", "results/sent"]] {
        let ran = root.aba(args);
        assert_eq!(ran.code, Some(0), "{}", ran.text());
        for (what, text) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{args:?}: raw control character on {what}: {}",
                ran.text()
            );
        }
        assert!(!ran.stdout.contains(&"R".repeat(1000)), "{}", ran.text());
    }
    for name in ["report.txt", "README.md"] {
        let text = std::fs::read_to_string(dir.join(name)).expect("report");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{name}: {text}"
        );
        assert!(text.contains("\\u{1b}]0;owned"), "{name}: {text}");
        assert!(!text.contains(&"R".repeat(1000)), "{name}: {text}");
    }
}

/// A bad `--kernel` or `--param` value of 100 KB with a bell: the error shows it escaped and
/// cut, saying how long it was.
#[test]
fn a_huge_bad_option_value_is_echoed_escaped_and_cut() {
    let root = Root::new();
    root.write("recipe/r.toml", BASE);
    let value = format!("a=\u{7}{}", "v".repeat(100_000));
    for option in ["--kernel", "--param"] {
        let ran = root.refuses(
            &["check", "recipe/r.toml", option, &value],
            2,
            &["invalid value", "characters)"],
        );
        assert!(ran.stderr.len() < 2000, "{} bytes", ran.stderr.len());
        assert!(!ran.stderr.contains('\u{7}'), "{}", ran.text());
    }
}

/// `report` of a campaign whose samples.csv is missing, a link (to the tester's file), a FIFO,
/// a folder or a link to /dev/null fails (without blocking) and leaves the reports it wrote
/// before untouched.
#[test]
fn report_without_readable_samples_fails_and_keeps_the_reports() {
    let root = Root::new();
    let dir = results_dir(&root);
    let ran = root.aba(&["report", "results/sent"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    let before = std::fs::read(dir.join("report.txt")).expect("report");
    let samples = dir.join("samples.csv");
    let victim = victim(&root);
    let link = "it is a symbolic link; aba reads a results or batch directory's raw data only \
                from regular files";
    let cases: [(&str, &dyn Fn(), &str); 5] = [
        (
            "a link to the tester's file",
            &|| std::os::unix::fs::symlink(&victim, &samples).expect("ln"),
            link,
        ),
        (
            "a link to /dev/null",
            &|| std::os::unix::fs::symlink("/dev/null", &samples).expect("ln"),
            link,
        ),
        ("missing", &|| {}, "samples.csv missing"),
        (
            "a FIFO",
            &|| mkfifo(&samples),
            "it is a FIFO, not a regular file",
        ),
        (
            "a directory",
            &|| std::fs::create_dir(&samples).expect("mkdir"),
            "it is a directory, not a regular file",
        ),
    ];
    for (what, make, expected) in cases {
        match std::fs::symlink_metadata(&samples) {
            Ok(m) if m.is_dir() => std::fs::remove_dir(&samples).expect("rmdir"),
            Ok(_) => std::fs::remove_file(&samples).expect("rm"),
            Err(_) => {}
        }
        make();
        root.refuses(&["report", "results/sent"], 1, &[expected]);
        assert_eq!(
            std::fs::read(dir.join("report.txt")).expect("report"),
            before,
            "{what}: report.txt was rewritten"
        );
    }
}

/// `aba man --out DIR` and `aba build --logs DIR` refuse a link planted at one of the files
/// they write, and leave what it points to alone.
#[test]
fn man_pages_and_build_logs_are_never_written_through_a_link() {
    let root = Root::new();
    let victim = victim(&root);
    std::fs::create_dir_all(root.path().join("results/man")).expect("mkdir");
    std::os::unix::fs::symlink(&victim, root.path().join("results/man/aba-check.1")).expect("ln");
    root.refuses(
        &["man", "--out", "results/man"],
        1,
        &["results/man/aba-check.1", "it is a symbolic link"],
    );
    root.write(
        "recipe/r.toml",
        &BASE.replace(
            "[kernels.this]\nrelease = \"running\"",
            "[kernels.this]\nrelease = \"7.2.0-x\"",
        ),
    );
    root.write(
        "recipe/builds.toml",
        "version = 1\n[kernels.this]\ncommand = \"echo built\"\nimage = \"bzImage\"\n",
    );
    std::fs::create_dir_all(root.path().join("results/logs")).expect("mkdir");
    std::os::unix::fs::symlink(&victim, root.path().join("results/logs/this.log")).expect("ln");
    root.refuses(
        &[
            "build",
            "recipe/r.toml",
            "--builds",
            "recipe/builds.toml",
            "--logs",
            "results/logs",
        ],
        1,
        &["it is a symbolic link"],
    );
    assert_untouched(&victim);
}

/// A results directory whose recipe.toml is a link to the tester's 0600 file: refused as a
/// link, and no line of that file is quoted.
#[test]
fn a_results_recipe_that_is_a_link_is_refused_without_quoting_its_target() {
    let root = Root::new();
    let dir = results_dir(&root);
    let victim = victim(&root);
    std::fs::write(&victim, "password = hunter2 is not TOML [\n").expect("write");
    std::fs::remove_file(dir.join("recipe.toml")).expect("rm");
    std::os::unix::fs::symlink(&victim, dir.join("recipe.toml")).expect("ln");
    for command in ["report", "status", "verify"] {
        // `status` reads the journal and samples only.
        let ran = root.aba(&[command, "results/sent"]);
        assert!(command == "status" || ran.code != Some(0), "{}", ran.text());
        assert!(
            !ran.stdout.contains("hunter2") && !ran.stderr.contains("hunter2"),
            "{command} quoted the linked file: {}",
            ran.text()
        );
    }
    root.refuses(&["report", "results/sent"], 1, &["it is a symbolic link"]);
}

/// A `targets.toml` in the current folder that is a link to the tester's 0600 file: aba finds
/// it without being told, so it refuses the link instead of quoting the file's first line in
/// a parse error; named with `--targets`, the same link is the user's choice.
#[test]
fn a_found_targets_toml_that_is_a_link_is_refused_without_quoting_its_target() {
    let root = Root::new();
    let victim = victim(&root);
    std::fs::write(&victim, "password = hunter2 is not TOML [\n").expect("write");
    std::fs::remove_file(root.path().join("targets.toml")).expect("rm");
    std::os::unix::fs::symlink(&victim, root.path().join("targets.toml")).expect("ln");
    root.write("recipe/r.toml", BASE);
    let ran = root.refuses(
        &["check", "recipe/r.toml"],
        1,
        &["targets.toml", "it is a symbolic link", "--targets"],
    );
    assert!(!ran.stderr.contains("hunter2"), "{}", ran.text());
}

/// A batch plan whose recipe is a link to the tester's 0600 file, or a path out of the plan's
/// folder to it: `aba batch` refuses it before reading it, so the file's first line is never
/// quoted by a TOML error (issue 30, the plan's recipe paths).
#[test]
fn a_plans_recipe_that_is_a_link_or_outside_its_folder_is_refused_unread() {
    let root = Root::new();
    let victim = victim(&root);
    std::fs::write(&victim, "password = hunter2 is not TOML [\n").expect("write");
    std::os::unix::fs::symlink(&victim, root.path().join("recipe/linked.toml")).expect("ln");
    for (recipe, expected) in [
        ("linked.toml", "is a symbolic link"),
        ("../outside/victim", "is outside the plan's folder"),
    ] {
        root.write(
            "recipe/plan.toml",
            &format!("version = 1\n[[campaign]]\nrecipe = \"{recipe}\"\ntargets = [\"local\"]\n"),
        );
        let ran = root.refuses(&["batch", "recipe/plan.toml"], 1, &[expected]);
        assert!(!ran.stderr.contains("hunter2"), "{}", ran.text());
        assert!(!ran.stdout.contains("hunter2"), "{}", ran.text());
    }
}

/// A batch directory whose `batch.jsonl` is a link to the tester's file: `batch status` and
/// `batch resume` refuse it naming the link, without reading what it names (issue 30: the
/// batch journal is read like the results journals, never through a link).
#[test]
fn a_batch_journal_that_is_a_link_is_refused_unread() {
    let root = Root::new();
    let victim = victim(&root);
    std::fs::write(&victim, "{\"event\":\"hunter2\"}\n").expect("write");
    root.write(
        "results/b/plan.toml",
        "version = 1\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"local\"]\n",
    );
    std::os::unix::fs::symlink(&victim, root.path().join("results/b/batch.jsonl")).expect("ln");
    for command in ["status", "resume"] {
        let ran = root.refuses(
            &["batch", command, "results/b"],
            1,
            &["batch.jsonl", "it is a symbolic link"],
        );
        assert!(!ran.stderr.contains("hunter2"), "{}", ran.text());
        assert!(!ran.stdout.contains("hunter2"), "{}", ran.text());
    }
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read"),
        "{\"event\":\"hunter2\"}\n"
    );
}
