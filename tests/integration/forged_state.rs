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
    path::{Path, PathBuf},
    process::Output,
};

use crate::support::{
    cli::{aba_command, text},
    recipe::{Better, Metric, Recipe, Workload},
};

/// A recipe that runs on this machine without tuning; `run` is its workload.
fn recipe(name: &str, run: &str) -> String {
    Recipe::new(name, "a campaign of a forged directory", &["this"])
        .runs(0, 1)
        .workload(Workload::new("w", run, Metric::Number(None, Better::Lower)))
        .toml()
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

    /// Every path under the root except those under `allowed`: what must not change.
    fn listing(&self, allowed: &[&str]) -> BTreeMap<PathBuf, String> {
        crate::support::tree::listing(self.path(), allowed)
    }
}

/// What aba may write in a scratch root: a campaign or batch directory, the locks and the
/// ledger. Everything else (the victims) must stay as it was.
const ALLOWED: &[&str] = &["results", "batch", ".aba-locks", ".aba-state"];

impl Scratch {
    /// `aba ARGS` must exit with `code` (any failure when `None`), say every one of
    /// `expected` on stderr, write nothing outside [`ALLOWED`], not panic and print no raw
    /// control character.
    #[track_caller]
    fn refuses(&self, args: &[&str], code: Option<i32>, expected: &[&str]) -> Output {
        let before = self.listing(ALLOWED);
        let out = self.aba(args);
        clean_output(&out);
        match code {
            Some(code) => assert_eq!(out.status.code(), Some(code), "{}", text(&out)),
            None => assert_ne!(out.status.code(), Some(0), "{}", text(&out)),
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        for e in expected {
            assert!(stderr.contains(e), "stderr lacks {e:?}: {}", text(&out));
        }
        assert_eq!(
            before,
            self.listing(ALLOWED),
            "aba {args:?} wrote outside {ALLOWED:?}: {}",
            text(&out)
        );
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
        root.refuses(
            &["batch", "resume", batch.to_str().expect("utf-8")],
            Some(1),
            &[
                "batch.jsonl:1: field `campaigns[0].dir`",
                "is not the campaign's directory `01-r`",
            ],
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
    root.refuses(
        &["batch", "resume", batch.to_str().expect("utf-8")],
        None,
        &["is a symbolic link or not a directory"],
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

/// [`campaign_to_forge`] with a `tuning_saved` record of this boot that names the victim
/// file `victim.txt` in the root, with `value`.
fn forged_tuning(root: &Scratch, value: &str) -> PathBuf {
    let dir = campaign_to_forge(root);
    let victim = root.write("victim.txt", "the tester's own file\n");
    append(
        &dir,
        &tuning_saved(
            &this_boot(),
            &[(victim.display().to_string(), value.to_owned())],
        ),
    );
    dir
}

/// Issue 30, severe 1: a forged `tuning_saved` of this boot made `aba restore` write any
/// file with any value as root (`kernel.core_pattern = |/bin/sh …` in the report). Now what
/// is written comes from aba's ledger on the machine, which holds nothing for this campaign:
/// nothing is written, and the refusal names the record's line and says what to do by hand.
#[test]
fn restore_never_writes_what_a_forged_journal_names() {
    let root = Scratch::new();
    let dir = forged_tuning(&root, "|/bin/sh -c \u{1b}[2Jowned");
    let line = std::fs::read_to_string(dir.join("journal.jsonl"))
        .expect("journal")
        .lines()
        .count();
    root.refuses(
        &["restore", dir.to_str().expect("utf-8")],
        Some(1),
        &[
            &format!("journal.jsonl:{line}: field `values`"),
            "holds none for this campaign, so nothing was written",
            "sysctl -w NAME=VALUE",
        ],
    );
}

/// Issue 30, severe 1: `aba resume DIR --allow-tuning` took the forged values as the
/// machine's own and wrote them at its end. Now the resume stops before tuning, saying that
/// the ledger holds no values for this boot, and writes nothing outside the directory.
#[test]
fn resume_never_writes_what_a_forged_journal_names() {
    let root = Scratch::new();
    let dir = forged_tuning(&root, "owned");
    root.refuses(
        &["resume", dir.to_str().expect("utf-8"), "--allow-tuning"],
        None,
        &["the settings an earlier run changed on this boot cannot be put back"],
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
        made_with: None,
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
    root.refuses(
        &["clean", dir.to_str().expect("utf-8")],
        Some(1),
        &[
            "journal.jsonl:3: field `installed`: the journal lists 1 item(s) installed on the target, but aba's ledger there",
        ],
    );
}

// --- Property tests: generated forgeries ------------------------------------------------------

mod generated {
    use std::{
        path::{Path, PathBuf},
        sync::OnceLock,
    };

    use proptest::prelude::*;

    use super::{
        ALLOWED, Scratch, append, campaign_to_forge, clean_output, forged_batch, installed_records,
        this_boot, tuning_saved,
    };

    /// A name a forged record may use: one of the victims, or hostile text.
    fn forged_path() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("VICTIM/keep.txt".to_owned()),
            Just("VICTIM/vmlinuz".to_owned()),
            Just("/proc/sys/../../VICTIM/keep.txt".to_owned()),
            "[a-z/.]{0,12}\u{1b}\\[2J[a-z]{0,4}",
            "\\PC{0,20}",
        ]
    }

    /// One forged record after the header.
    fn forged_record() -> impl Strategy<Value = Record> {
        prop_oneof![
            (
                any::<bool>(),
                proptest::collection::vec((forged_path(), "\\PC{0,12}"), 0..3)
            )
                .prop_map(|(this, values)| Record::TuningSaved { this, values }),
            proptest::collection::vec(forged_path(), 1..3).prop_map(Record::Installed),
            "\\PC{0,20}".prop_map(Record::Stopped),
        ]
    }

    #[derive(Clone, Debug)]
    enum Record {
        TuningSaved {
            this: bool,
            values: Vec<(String, String)>,
        },
        Installed(Vec<String>),
        Stopped(String),
    }

    /// A campaign cut back to its start, made once and copied into each case's root.
    fn template() -> &'static (Scratch, PathBuf) {
        static TEMPLATE: OnceLock<(Scratch, PathBuf)> = OnceLock::new();
        TEMPLATE.get_or_init(|| {
            let root = Scratch::new();
            let dir = campaign_to_forge(&root);
            (root, dir)
        })
    }

    /// A scratch root with the template campaign in `results/forged` and two victims.
    fn root_with_campaign() -> (Scratch, PathBuf) {
        let (template_root, template) = template();
        let root = Scratch::new();
        root.write(
            "r.toml",
            &std::fs::read_to_string(template_root.path().join("r.toml")).expect("recipe"),
        );
        let dir = root.path().join("results/forged");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for entry in std::fs::read_dir(template).expect("template").flatten() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
        }
        root.write("victim/keep.txt", "the tester's own file\n");
        root.write("victim/vmlinuz", "the tester's own kernel\n");
        (root, dir)
    }

    fn victim_path(root: &Path, path: &str) -> String {
        path.replace("VICTIM", &root.join("victim").display().to_string())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

        /// Forged journals fed to `restore`, `clean` and `resume --allow-tuning`: nothing
        /// outside the results directory, the locks and the ledger changes, no panic, no
        /// raw control character on stdout or stderr.
        #[test]
        fn forged_journals_never_reach_outside_their_directory(
            records in proptest::collection::vec(forged_record(), 1..4)
        ) {
            let (root, dir) = root_with_campaign();
            let boot = this_boot();
            for record in &records {
                let line = match record {
                    Record::TuningSaved { this, values } => {
                        let values: Vec<(String, String)> = values
                            .iter()
                            .map(|(p, v)| (victim_path(root.path(), p), v.clone()))
                            .collect();
                        tuning_saved(if *this { &boot } else { "another-boot" }, &values)
                    }
                    Record::Installed(paths) => {
                        let paths: Vec<String> =
                            paths.iter().map(|p| victim_path(root.path(), p)).collect();
                        installed_records(&victim_path(root.path(), "VICTIM"), &paths).join("\n")
                    }
                    Record::Stopped(reason) => serde_json::json!({
                        "event": "stopped", "reason": reason, "time": "t"
                    })
                    .to_string(),
                };
                append(&dir, &line);
            }
            let before = root.listing(ALLOWED);
            let dir_arg = dir.to_str().expect("utf-8");
            for args in [
                &["restore", dir_arg][..],
                &["clean", dir_arg][..],
                &["resume", dir_arg, "--allow-tuning"][..],
            ] {
                let out = root.aba(args);
                clean_output(&out);
                prop_assert_eq!(&before, &root.listing(ALLOWED), "aba {:?}: {}", args, crate::support::cli::text(&out));
            }
        }

        /// Forged batch journals fed to `batch resume`: nothing outside the batch directory,
        /// the locks and the ledger changes, no recipe but the plan's runs, no panic, no raw
        /// control character on stdout or stderr.
        #[test]
        fn forged_batch_journals_never_reach_outside_their_directory(
            dir in prop_oneof![
                Just("01-r".to_owned()),
                Just("../victim".to_owned()),
                Just("VICTIM".to_owned()),
                Just("01-r/../../victim".to_owned()),
                "\\PC{0,12}",
            ],
            evil in any::<bool>(),
            name in prop_oneof![Just("r".to_owned()), "\\PC{0,8}"],
        ) {
            let root = Scratch::new();
            root.write("victim/local/keep.txt", "the tester's own file\n");
            let marker = root.path().join("victim/ran");
            let recipe = if evil {
                root.write("evil.toml", &super::recipe("r", &format!("touch {} ; echo 1", marker.display())))
            } else {
                root.path().join("r.toml")
            };
            let entry = serde_json::json!({
                "recipe": recipe.display().to_string(),
                "name": name,
                "dir": victim_path(root.path(), &dir),
            })
            .to_string();
            let fields = entry.trim_start_matches('{').trim_end_matches('}');
            let batch = forged_batch(&root, fields);
            let before = root.listing(ALLOWED);
            let out = root.aba(&["batch", "resume", batch.to_str().expect("utf-8")]);
            clean_output(&out);
            prop_assert!(!marker.exists(), "{}", crate::support::cli::text(&out));
            prop_assert_eq!(&before, &root.listing(ALLOWED), "{}", crate::support::cli::text(&out));
        }
    }
}
