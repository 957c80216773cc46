//! Forged results and batch directories (issue 30, part 1): a journal or batch journal from
//! someone else can never make `aba restore`, `resume`, `clean` or `batch resume` write,
//! delete or run anything outside the places docs/security.md names. Each case runs the real
//! binary in a scratch root with a "victim" file or folder that a forged record names, and
//! checks it is untouched, that the refusal names the file, line and field, and that no raw
//! control character reaches the terminal.
//!
//! See: issue 30, "untrusted directories can never make aba write, delete, copy or run
//! anything"; docs/security.md.

use std::{
    collections::BTreeMap,
    os::unix::fs::MetadataExt as _,
    path::{Path, PathBuf},
    process::Output,
};

use crate::support::cli::{aba_command, text};

/// A recipe that runs on this machine without tuning; `run` is its workload.
fn recipe(name: &str, run: &str) -> String {
    format!(
        r#"version = 1
name = "{name}"
description = "a campaign of a forged directory"
sequence = ["this"]
warmup = 0
samples = 1
[kernels.this]
release = "running"
[[workload]]
name = "w"
run = "{run}"
metric = {{ number = true, better = "lower" }}
"#
    )
}

/// A scratch root: aba runs in it (its locks and ledger in `.aba-locks` and `.aba-state`),
/// and every file in it outside the places a case allows is listed before and after.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        crate::support::cli::write(self.path(), rel, text)
    }

    /// `aba ARGS` in the root.
    fn aba(&self, args: &[&str]) -> Output {
        aba_command(self.path())
            .args(args)
            .output()
            .expect("aba runs")
    }

    /// Every path under the root except those under `allowed`, with its mode and content.
    fn listing(&self, allowed: &[&str]) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
                let path = entry.path();
                let rel = path
                    .strip_prefix(self.path())
                    .expect("under root")
                    .to_owned();
                if allowed.iter().any(|a| rel.starts_with(a)) {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).expect("stat");
                let content = if meta.is_file() {
                    String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned()
                } else if meta.file_type().is_symlink() {
                    format!("-> {}", std::fs::read_link(&path).expect("link").display())
                } else {
                    String::new()
                };
                out.insert(rel, format!("{:o} {content}", meta.mode()));
                if meta.is_dir() {
                    stack.push(path);
                }
            }
        }
        out
    }
}

/// What every refusal shares: no panic, no raw control character on stdout or stderr.
#[track_caller]
fn clean_output(out: &Output) {
    assert_ne!(out.status.code(), Some(101), "aba panicked: {}", text(out));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "aba panicked: {}",
        text(out)
    );
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !stream
                .iter()
                .any(|&b| b.is_ascii_control() && b != b'\n' && b != b'\t'),
            "a control character reached the terminal: {}",
            text(out)
        );
    }
}

// --- aba batch resume ----------------------------------------------------------------------

/// A batch directory `batch/` whose plan copy runs `r.toml` on `local`, and whose journal's
/// one campaign is `entry` (JSON fields after `number`).
fn forged_batch(root: &Scratch, entry: &str) -> PathBuf {
    let plan = "version = 1\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"local\"]\n";
    root.write("plan.toml", plan);
    root.write("r.toml", &recipe("r", "echo 1"));
    root.write("batch/plan.toml", plan);
    let header = format!(
        r#"{{"event":"batch","format":1,"name":"batch","plan":"{}","plan_sha256":"x","aba_version":"0","time":"t","campaigns":[{{"number":1,{entry},"targets":["local"],"allow_tuning":false,"wait":false,"yes":false,"no_profile":false,"kernels":[]}}]}}"#,
        root.path().join("plan.toml").display()
    );
    root.write("batch/batch.jsonl", &format!("{header}\n"));
    root.path().join("batch")
}

/// Issue 30, severe 2: a batch journal whose campaign directory is `../victim` (or an
/// absolute path) made `batch resume` clear `victim/local/` ("it has no journal") and run a
/// campaign there. Now the journal is checked against the plan copy and nothing outside the
/// batch directory is touched.
#[test]
fn batch_resume_never_clears_a_directory_a_forged_journal_names() {
    for dir in ["../victim".to_owned(), String::new()] {
        let root = Scratch::new();
        let victim = root.path().join("victim");
        let dir = if dir.is_empty() {
            victim.display().to_string()
        } else {
            dir
        };
        root.write("victim/local/keep.txt", "the tester's own file\n");
        let batch = forged_batch(
            &root,
            &format!(
                r#""recipe":"{}","name":"r","dir":"{dir}""#,
                root.path().join("r.toml").display()
            ),
        );
        let before = root.listing(&["batch", ".aba-locks", ".aba-state"]);
        let out = root.aba(&["batch", "resume", batch.to_str().expect("utf-8")]);
        clean_output(&out);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("batch.jsonl:1: field `campaigns[0].dir`")
                && stderr.contains("is not the campaign's directory `01-r`"),
            "{}",
            text(&out)
        );
        assert_eq!(
            before,
            root.listing(&["batch", ".aba-locks", ".aba-state"]),
            "batch resume touched something outside the batch directory: {}",
            text(&out)
        );
    }
}

/// Issue 30, severe 2: `batch resume` ran whatever recipe path `batch.jsonl` stored. Now a
/// recipe the plan copy does not name is refused and nothing runs.
#[test]
fn batch_resume_never_runs_a_recipe_the_plan_copy_does_not_name() {
    let root = Scratch::new();
    let marker = root.path().join("ran");
    let evil = root.write(
        "evil.toml",
        &recipe("r", &format!("touch {} ; echo 1", marker.display())),
    );
    let batch = forged_batch(
        &root,
        &format!(r#""recipe":"{}","name":"r","dir":"01-r""#, evil.display()),
    );
    let out = root.aba(&["batch", "resume", batch.to_str().expect("utf-8")]);
    clean_output(&out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("batch.jsonl:1: field `campaigns[0].recipe`"),
        "{}",
        text(&out)
    );
    assert!(!marker.exists(), "the forged recipe ran: {}", text(&out));
    assert!(!batch.join("01-r").exists(), "{}", text(&out));
}

/// A campaign directory that is a link (to a folder outside the batch) is neither cleared
/// nor written through.
#[test]
fn batch_resume_never_follows_a_linked_campaign_directory() {
    let root = Scratch::new();
    root.write("victim/local/keep.txt", "the tester's own file\n");
    let batch = forged_batch(
        &root,
        &format!(
            r#""recipe":"{}","name":"r","dir":"01-r""#,
            root.path().join("r.toml").display()
        ),
    );
    std::os::unix::fs::symlink(root.path().join("victim"), batch.join("01-r")).expect("link");
    let before = root.listing(&["batch", ".aba-locks", ".aba-state"]);
    let out = root.aba(&["batch", "resume", batch.to_str().expect("utf-8")]);
    clean_output(&out);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is a symbolic link or not a directory"),
        "{}",
        text(&out)
    );
    assert_eq!(
        before,
        root.listing(&["batch", ".aba-locks", ".aba-state"]),
        "{}",
        text(&out)
    );
}
