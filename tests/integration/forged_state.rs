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

// --- aba restore, aba resume --allow-tuning ---------------------------------------------------

/// This machine's boot, which a forged `tuning_saved` names so that it counts.
fn this_boot() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .expect("a Linux boot_id")
        .trim()
        .to_owned()
}

/// A recipe that tunes on this machine without changing anything here: the governor, which
/// is optional (a machine without cpufreq notes it and goes on).
fn tuned_recipe() -> String {
    recipe("r", "echo 1").replace(
        "[[workload]]",
        "[tuning]\ngovernor = \"performance\"\noptional = [\"governor\"]\n[[workload]]",
    )
}

/// `results/forged/`: a campaign started on `local` with [`tuned_recipe`] and cut back to
/// before its first point (as if killed right after its start), so `resume` takes it up.
fn campaign_to_forge(root: &Scratch) -> PathBuf {
    let r = root.write("r.toml", &tuned_recipe());
    let out = root.aba(&[
        "run",
        r.to_str().expect("utf-8"),
        "--allow-tuning",
        "--results",
        "made",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let made = crate::support::cli::campaign_dir(&root.path().join("made"));
    let dir = root.path().join("results/forged");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for entry in std::fs::read_dir(&made).expect("made").flatten() {
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
        }
    }
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    let kept: String = journal
        .lines()
        .take_while(|l| !l.contains("\"point_started\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("journal.jsonl"), kept).expect("write");
    let samples = std::fs::read_to_string(dir.join("samples.csv")).expect("samples");
    let header = samples.lines().next().expect("a header");
    std::fs::write(dir.join("samples.csv"), format!("{header}\n")).expect("write");
    std::fs::remove_dir_all(root.path().join("made")).expect("rm");
    dir
}

/// Appends `line` to the journal of `dir`.
fn append(dir: &Path, line: &str) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("journal.jsonl"))
        .expect("journal");
    writeln!(f, "{line}").expect("append");
}

/// A `tuning_saved` record of `boot_id` that names `values` (path, value).
fn tuning_saved(boot_id: &str, values: &[(String, String)]) -> String {
    serde_json::json!({
        "event": "tuning_saved",
        "point": "this",
        "attempt": 1,
        "boot_id": boot_id,
        "values": values
            .iter()
            .map(|(path, value)| serde_json::json!({ "path": path, "value": value }))
            .collect::<Vec<_>>(),
        "time": "t",
    })
    .to_string()
}

/// Issue 30, severe 1: a forged `tuning_saved` of this boot made `aba restore` write any
/// file with any value as root (`kernel.core_pattern = |/bin/sh …` in the report). Now what
/// is written comes from aba's ledger on the machine, which holds nothing for this campaign:
/// nothing is written, and the refusal names the record's line and says what to do by hand.
#[test]
fn restore_never_writes_what_a_forged_journal_names() {
    let root = Scratch::new();
    let dir = campaign_to_forge(&root);
    let victim = root.write("victim.txt", "the tester's own file\n");
    append(
        &dir,
        &tuning_saved(
            &this_boot(),
            &[(
                victim.display().to_string(),
                "|/bin/sh -c \u{1b}[2Jowned".to_owned(),
            )],
        ),
    );
    let line = std::fs::read_to_string(dir.join("journal.jsonl"))
        .expect("journal")
        .lines()
        .count();
    let before = root.listing(&["results", ".aba-locks", ".aba-state"]);
    let out = root.aba(&["restore", dir.to_str().expect("utf-8")]);
    clean_output(&out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("journal.jsonl:{line}: field `values`"))
            && stderr.contains("holds none for this campaign, so nothing was written")
            && stderr.contains("sysctl -w NAME=VALUE"),
        "{}",
        text(&out)
    );
    assert_eq!(
        before,
        root.listing(&["results", ".aba-locks", ".aba-state"]),
        "{}",
        text(&out)
    );
}

/// Issue 30, severe 1: `aba resume DIR --allow-tuning` took the forged values as the
/// machine's own and wrote them at its end. Now the resume stops before tuning, saying that
/// the ledger holds no values for this boot, and writes nothing outside the directory.
#[test]
fn resume_never_writes_what_a_forged_journal_names() {
    let root = Scratch::new();
    let dir = campaign_to_forge(&root);
    let victim = root.write("victim.txt", "the tester's own file\n");
    append(
        &dir,
        &tuning_saved(
            &this_boot(),
            &[(victim.display().to_string(), "owned".to_owned())],
        ),
    );
    let before = root.listing(&["results", ".aba-locks", ".aba-state"]);
    let out = root.aba(&["resume", dir.to_str().expect("utf-8"), "--allow-tuning"]);
    clean_output(&out);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the settings an earlier run changed on this boot cannot be put back"),
        "{}",
        text(&out)
    );
    assert_eq!(
        before,
        root.listing(&["results", ".aba-locks", ".aba-state"]),
        "{}",
        text(&out)
    );
}

// --- aba clean -------------------------------------------------------------------------------

/// A `kernels` record whose kernel `b` was built on the host and installed into
/// `install_dir`, and an `installed` record that lists `items`.
fn installed_records(install_dir: &str, items: &[String]) -> [String; 2] {
    use aba::{
        build::{
            install::Installed,
            record::{HostFile, KernelBuild},
            version::KernelVersion,
        },
        kernel::binding::{BoundKernel, Origin},
        recipe::ident::{KernelLabel, Release, TargetPath},
        results::journal::Event,
    };
    let file = |path: &str| HostFile {
        path: path.into(),
        sha256: "a".repeat(64),
        bytes: 5,
    };
    let build = KernelBuild {
        at: "builds.toml:2:1".into(),
        version: KernelVersion::parse_proc(
            "Linux version 6.1.158-aba-lab (root@b) (gcc 12) #2 SMP Thu Dec  3 10:12:54 UTC 2026",
        )
        .expect("a version"),
        image: file("/b/bzImage"),
        initrd: None,
        modules: None,
        config: None,
        install_dir: install_dir.to_owned(),
        source: None,
        patches: Vec::new(),
        built: None,
    };
    let kernels = Event::Kernels {
        kernels: vec![BoundKernel {
            label: KernelLabel::new("b").expect("label"),
            release: Release::new("6.1.158-aba-lab").expect("release"),
            release_from: Origin::Recipe,
            image: TargetPath::new("/boot/vmlinuz").expect("path"),
            image_from: Origin::Recipe,
            initrd: TargetPath::new("/boot/initrd.img").expect("path"),
            initrd_from: Origin::Recipe,
            build: Some(Box::new(build)),
        }],
    };
    let installed = Event::Installed {
        point: "this".into(),
        attempt: 1,
        kernel: "b".into(),
        installed: items
            .iter()
            .map(|path| Installed {
                path: path.clone(),
                sha256: "a".repeat(64),
                sent: true,
            })
            .collect(),
    };
    [kernels, installed].map(|e| serde_json::to_string(&e).expect("serialises"))
}

/// Issue 30, severe 3: a forged `kernels` and `installed` record made `aba clean` delete a
/// file aba never installed (here in the scratch root; `install_dir = ""` named /vmlinuz).
/// Now clean removes only what aba's ledger on the target recorded, and says why not.
#[test]
fn clean_never_deletes_what_a_forged_journal_names() {
    let root = Scratch::new();
    let dir = root.path().join("results/forged");
    std::fs::create_dir_all(&dir).expect("mkdir");
    root.write("results/forged/recipe.toml", &recipe("r", "echo 1"));
    let victim = root.write("victim/vmlinuz", "the tester's own kernel\n");
    let header = r#"{"event":"campaign","format":1,"aba":"0","name":"r","recipe_sha256":"x","target":"local","points":["this"],"time":"t"}"#;
    root.write("results/forged/journal.jsonl", &format!("{header}\n"));
    for line in installed_records(
        &root.path().join("victim").display().to_string(),
        &[victim.display().to_string()],
    ) {
        append(&dir, &line);
    }
    let before = root.listing(&["results", ".aba-locks", ".aba-state"]);
    let out = root.aba(&["clean", dir.to_str().expect("utf-8")]);
    clean_output(&out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "journal.jsonl:3: field `installed`: the journal lists 1 item(s) installed on the target, but aba's ledger there"
        ),
        "{}",
        text(&out)
    );
    assert_eq!(
        before,
        root.listing(&["results", ".aba-locks", ".aba-state"]),
        "{}",
        text(&out)
    );
}
