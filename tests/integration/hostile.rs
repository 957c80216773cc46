//! The hostile-input corpus (issue 14): recipes, inventories and results directories a tester
//! might receive from someone else, one case per item of the issue. Each case runs the real
//! binary in a temporary root (as `HOME`, `TMPDIR` and working directory) under an
//! address-space limit and asserts: the expected exit code and error text, no panic, done
//! within a generous time, a small peak RSS, and nothing written anywhere in the root but
//! under `results/` and aba's lock directory (the root is listed before and after).
//!
//! See: issue 14, "hostile recipes, inventories and results directories get clear refusals".

use std::{
    collections::BTreeMap,
    os::unix::fs::PermissionsExt as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::support::{
    cli::{aba_bin, assert_verified, campaign_dir},
    recipe::{Better, Metric, Recipe, Workload},
};

/// Hard limit on the address space of one aba process (a debug build maps ~100 MB).
const ADDRESS_SPACE: &str = "1073741824";
/// What a refusal may cost in resident memory, well above a debug build's ~10 MB.
const PEAK_RSS_KIB: i64 = 200 * 1024;
/// Far above what a refusal needs even on a loaded two-core machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// A minimal valid recipe; cases replace parts of it.
pub(crate) const BASE: &str = r#"version = 1
name = "hostile"
description = "a recipe from someone else"
sequence = ["this"]
warmup = 0
samples = 1
[kernels.this]
release = "running"
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, better = "lower" }
"#;

/// The inventory every case can name with `--targets targets.toml`.
const TARGETS: &str = r#"[targets.box]
host = "127.0.0.1"
host_key = "SHA256:aG9zdGlsZS1pbnB1dC1jb3JwdXMtdGVzdC1rZXk"
switch = "kexec"
"#;

/// What one aba process did.
pub(crate) struct Ran {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// Raw stderr bytes, to look for control characters.
    pub(crate) stderr_bytes: Vec<u8>,
    peak_rss_kib: i64,
}

impl Ran {
    pub(crate) fn text(&self) -> String {
        format!(
            "exit {:?}, peak RSS {} KiB\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.peak_rss_kib,
            cut(&self.stdout),
            cut(&self.stderr)
        )
    }
}

/// A temporary root with the base recipe, the inventory, a home, a TMPDIR and a folder of
/// the tester's own files that no recipe may read.
pub(crate) struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    pub(crate) fn new() -> Root {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = Root { dir };
        for sub in ["home", "tmp", "recipe", "outside/keys"] {
            std::fs::create_dir_all(root.path().join(sub)).expect("mkdir");
        }
        root.write("targets.toml", TARGETS);
        root.write("outside/keys/id_ed25519", "PRIVATE KEY of the tester\n");
        root
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        path
    }

    /// Every path under the root except `results/` and the target locks (ABA_LOCK_DIR), the
    /// only places aba writes here: what must not change.
    fn listing(&self) -> BTreeMap<PathBuf, String> {
        crate::support::tree::listing(self.path(), &["results", "locks"])
    }

    /// Runs `aba ARGS` in the root under the limits, and checks the invariants every case
    /// shares: it ended in time, did not panic, and wrote nothing outside `results/`.
    pub(crate) fn aba(&self, args: &[&str]) -> Ran {
        let before = self.listing();
        let ran = run_limited(self.path(), args);
        assert!(
            !ran.stderr.contains("panicked") && ran.code != Some(101),
            "aba panicked: {}",
            ran.text()
        );
        assert!(
            ran.peak_rss_kib < PEAK_RSS_KIB,
            "peak RSS {} KiB: {}",
            ran.peak_rss_kib,
            ran.text()
        );
        let after = self.listing();
        assert_eq!(
            before,
            after,
            "aba {args:?} wrote outside results/:\n{}",
            ran.text()
        );
        ran
    }

    /// [`Root::aba`], then the exit code and that stderr holds every one of `expected`.
    #[track_caller]
    pub(crate) fn refuses(&self, args: &[&str], code: i32, expected: &[&str]) -> Ran {
        let ran = self.aba(args);
        assert_eq!(ran.code, Some(code), "{}", ran.text());
        for text in expected {
            assert!(
                ran.stderr.contains(text),
                "stderr lacks {text:?}: {}",
                ran.text()
            );
        }
        assert!(
            !ran.stderr_bytes.iter().any(|&b| b == 0x1b || b == 0x07),
            "a control character reached the terminal: {}",
            ran.text()
        );
        ran
    }

    /// `aba check` of `recipe` (written to recipe/r.toml) must fail with `expected`.
    #[track_caller]
    fn check_refuses(&self, recipe: &str, expected: &[&str]) -> Ran {
        self.write("recipe/r.toml", recipe);
        self.refuses(&["check", "recipe/r.toml"], 1, expected)
    }
}

/// At most 4000 characters of `text`, for assertion messages.
fn cut(text: &str) -> String {
    match text.char_indices().nth(4000) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}… ({} bytes)", &text[..i], text.len()),
    }
}

/// `prlimit --as=… aba ARGS` in `cwd` with a clean environment, waited for with a deadline;
/// the peak RSS comes from the kernel's accounting of the exited child (`wait4`).
fn run_limited(cwd: &Path, args: &[&str]) -> Ran {
    let out_path = cwd.join("results/.stdout");
    let err_path = cwd.join("results/.stderr");
    std::fs::create_dir_all(cwd.join("results")).expect("mkdir");
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by wait4 below, which also reports its peak RSS"
    )]
    let mut child = Command::new("prlimit")
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(aba_bin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", cwd.join("home"))
        .env("TMPDIR", cwd.join("tmp"))
        .env("ABA_LOCK_DIR", cwd.join("locks"))
        .env("XDG_CONFIG_HOME", cwd.join("home/.config"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("prlimit starts");
    let pid = i32::try_from(child.id()).expect("a pid");
    let started = Instant::now();
    let (status, rusage) = loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is valid; wait4 fills it for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child; status and usage are live out-parameters.
        let rc = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if rc == pid {
            break (status, usage);
        }
        assert!(rc == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "aba {args:?} did not finish within {DEADLINE:?}:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let stdout = std::fs::read(&out_path).expect("stdout");
    let stderr_bytes = std::fs::read(&err_path).expect("stderr");
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    if std::fs::read_dir(cwd.join("results")).is_ok_and(|mut d| d.next().is_none()) {
        let _ = std::fs::remove_dir(cwd.join("results"));
    }
    Ran {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr_bytes).into_owned(),
        stderr_bytes,
        peak_rss_kib: rusage.ru_maxrss,
    }
}

/// The base recipe with `old` replaced by `new` (which must occur).
pub(crate) fn base_with(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "{old:?} is not in the base recipe");
    BASE.replacen(old, new, 1)
}

/// The base recipe with lines added to the first workload.
fn with_workload_keys(keys: &str) -> String {
    base_with("run = \"echo 1\"", &format!("run = \"echo 1\"\n{keys}"))
}

pub(crate) fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().expect("utf-8")).expect("no NUL");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a directory entry.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

// --- Panics: huge durations --------------------------------------------------------------

#[test]
fn a_huge_estimate_is_out_of_range() {
    Root::new().check_refuses(
        &with_workload_keys("estimate = \"584542046090y\""),
        &[
            "`estimate` = \"584542046090y\" is out of range",
            "recipe/r.toml:12:12 (key `workload[1].estimate`)",
            "from 0s to 24h",
        ],
    );
}

#[test]
fn a_huge_settle_is_out_of_range() {
    Root::new().check_refuses(
        &base_with("samples = 1", "samples = 1\nsettle = \"584542046090y\""),
        &[
            "`settle` = \"584542046090y\" is out of range",
            "from 0s to 1h",
        ],
    );
}

#[test]
fn a_huge_boot_estimate_is_out_of_range() {
    let root = Root::new();
    root.write(
        "targets.toml",
        &format!("{TARGETS}boot_estimate = \"584542046090y\"\n"),
    );
    root.write(
        "recipe/r.toml",
        &base_with(
            "release = \"running\"",
            "release = \"6.1.0-47-cloud-amd64\"",
        ),
    );
    root.refuses(
        &[
            "check",
            "recipe/r.toml",
            "--targets",
            "targets.toml",
            "--target",
            "box",
        ],
        1,
        &[
            "`boot_estimate` = \"584542046090y\" is out of range",
            "targets.toml:5:17",
        ],
    );
}

#[test]
fn a_huge_workload_timeout_is_refused_by_check() {
    Root::new().check_refuses(
        &with_workload_keys("timeout = \"584542046090y\""),
        &[
            "`timeout` = \"584542046090y\" is out of range",
            "from 1s to 24h",
        ],
    );
}

#[test]
fn a_huge_setup_timeout_is_refused_by_check() {
    Root::new().check_refuses(
        &base_with(
            "[[workload]]",
            "[setup]\nrun = [\"true\"]\ntimeout = \"584542046090y\"\n[[workload]]",
        ),
        &[
            "`timeout` = \"584542046090y\" is out of range",
            "key `setup.timeout`",
        ],
    );
}

/// A duration that overflows humantime itself.
#[test]
fn a_duration_beyond_u64_is_an_error_not_an_overflow() {
    Root::new().check_refuses(
        &with_workload_keys("timeout = \"99999999999999999999999y\""),
        &["invalid duration", "from 1s to 24h"],
    );
}

// --- Hangs and unbounded memory ----------------------------------------------------------

#[test]
fn a_fifo_as_recipe_is_refused_without_blocking() {
    let root = Root::new();
    mkfifo(&root.path().join("recipe/fifo.toml"));
    root.refuses(
        &["check", "recipe/fifo.toml"],
        1,
        &[
            "cannot read recipe/fifo.toml",
            "it is a FIFO, not a regular file",
        ],
    );
}

#[test]
fn a_device_as_recipe_is_refused_without_reading_it() {
    Root::new().refuses(
        &["check", "/dev/zero"],
        1,
        &["it is a character device, not a regular file"],
    );
}

#[test]
fn a_fifo_as_inventory_is_refused_without_blocking() {
    let root = Root::new();
    root.write("recipe/r.toml", BASE);
    mkfifo(&root.path().join("fifo-targets.toml"));
    root.refuses(
        &[
            "check",
            "recipe/r.toml",
            "--targets",
            "fifo-targets.toml",
            "--target",
            "box",
        ],
        1,
        &["cannot read target inventory fifo-targets.toml", "a FIFO"],
    );
}

#[test]
fn a_recipe_larger_than_a_mib_is_refused() {
    let root = Root::new();
    // A 50 MB description: refused by size before it is parsed or printed.
    let huge = format!(
        "version = 1\nname = \"x\"\ndescription = \"{}\"\n",
        "d".repeat(50 << 20)
    );
    root.write("recipe/r.toml", &huge);
    let ran = root.refuses(
        &["check", "recipe/r.toml"],
        1,
        &["it is 50.0 MiB; a recipe file is at most 1.0 MiB"],
    );
    assert!(ran.stderr.len() < 1000, "{}", ran.text());
    assert!(ran.stdout.is_empty(), "{}", ran.text());
}

#[test]
fn a_million_case_matrix_is_refused_with_bounded_memory() {
    let values = |n: usize| {
        (0..n)
            .map(|i| format!("\"{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let recipe = base_with(
        "run = \"echo 1\"",
        &format!(
            "run = \"echo {{a}}{{b}}{{c}}{{d}}{{e}}{{f}}\"\nmatrix = {{ a = [{v}], b = [{v}], c = [{v}], d = [{v}], e = [{v}], f = [{v}] }}",
            v = values(10)
        ),
    );
    let ran = Root::new().check_refuses(
        &recipe,
        &[
            "the recipe has 1000000 workload cases (workload `w` alone has 1000000); at most 10000 are allowed",
        ],
    );
    assert!(ran.stdout.is_empty(), "nothing is planned: {}", ran.text());
}

#[test]
fn ten_thousand_cases_over_a_day_warn_in_check_and_need_yes_to_run() {
    let root = Root::new();
    let v = (0..100)
        .map(|i| format!("\"{i}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let recipe = base_with(
        "run = \"echo 1\"",
        &format!(
            "run = \"echo {{a}} {{b}}\"\nestimate = \"10s\"\nmatrix = {{ a = [{v}], b = [{v}] }}"
        ),
    );
    root.write("recipe/r.toml", &recipe);
    let ran = root.aba(&["check", "recipe/r.toml"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    assert!(
        ran.stderr.contains("warning: the campaign is estimated to take 27h 46m, more than 24h 00m: `aba run` starts it only with --yes"),
        "{}",
        ran.text()
    );
    assert!(
        ran.stdout
            .contains("    10000 cases at every point (warm-ups+samples, then the command):"),
        "{}",
        ran.text()
    );
    assert!(
        ran.stdout.contains("… and 9960 more (not listed)"),
        "{}",
        ran.text()
    );
    assert!(ran.stdout.lines().count() < 80, "{}", ran.text());
    root.refuses(
        &["run", "recipe/r.toml"],
        1,
        &[
            "the campaign is estimated to take 27h 46m, more than 24h 00m",
            "pass --yes",
        ],
    );
    assert!(!root.path().join("results").exists(), "run started nothing");
}

#[test]
fn four_billion_samples_are_out_of_range() {
    Root::new().check_refuses(
        &base_with("samples = 1", "samples = 4294967295"),
        &["`samples` = 4294967295 is out of range", "from 1 to 10000"],
    );
}

#[test]
fn too_many_workloads_are_refused() {
    let mut recipe = base_with(
        "[[workload]]\nname = \"w\"\nrun = \"echo 1\"\nmetric = { number = true, better = \"lower\" }\n",
        "",
    );
    for i in 0..343 {
        recipe.push_str(&format!(
            "[[workload]]\nname = \"w{i}\"\nrun = \"echo 1\"\nmetric = {{ number = true, better = \"lower\" }}\n"
        ));
    }
    Root::new().check_refuses(
        &recipe,
        &["the recipe declares 343 workloads; at most 100 are allowed"],
    );
}

#[test]
fn a_campaign_of_too_many_runs_is_refused() {
    let v = (0..100)
        .map(|i| format!("\"{i}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let recipe = base_with(
        "run = \"echo 1\"",
        &format!("run = \"echo {{a}}\"\nsamples = 10000\nwarmup = 1\nmatrix = {{ a = [{v}] }}"),
    );
    Root::new().check_refuses(
        &recipe,
        &[
            "the campaign would take 1000100 workload runs",
            "at most 1000000 runs and 2000000 rows",
        ],
    );
}

/// A results directory to point `report`, `status` and `resume` at.
pub(crate) fn results_dir(root: &Root) -> PathBuf {
    let dir = root.path().join("results/sent");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/local-null");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for name in ["journal.jsonl", "recipe.toml", "samples.csv"] {
        std::fs::copy(fixture.join(name), dir.join(name)).expect("copy");
    }
    dir
}

/// Replaces the value field of the second row of `samples.csv` with `value`.
fn hostile_value(dir: &Path, value: &str) {
    let path = dir.join("samples.csv");
    let text = std::fs::read_to_string(&path).expect("samples");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut fields: Vec<&str> = lines[2].split(',').collect();
    fields[13] = value;
    lines[2] = fields.join(",");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
}

#[test]
fn a_ten_million_digit_field_is_refused_naming_its_line() {
    let root = Root::new();
    let dir = results_dir(&root);
    hostile_value(&dir, &"1".repeat(10_000_000));
    root.refuses(
        &["report", "results/sent"],
        1,
        &["results/sent/samples.csv:3: column 65553: a row longer than 65552 bytes, cut in field `value`"],
    );
}

#[test]
fn a_long_field_is_refused_naming_its_line_and_column() {
    let root = Root::new();
    let dir = results_dir(&root);
    hostile_value(&dir, &"1".repeat(5000));
    root.refuses(
        &["report", "results/sent"],
        1,
        &["samples.csv:3: column 108: field `value` is 5000 bytes long; aba reads fields of at most 4096 bytes"],
    );
    // `status` says so too, instead of counting no rows.
    root.refuses(
        &["status", "results/sent"],
        1,
        &[
            "cannot read the samples of results/sent",
            "samples.csv:3: column 108: field `value` is 5000 bytes long",
        ],
    );
}

#[test]
fn a_huge_journal_record_is_refused_naming_its_line() {
    let root = Root::new();
    let dir = results_dir(&root);
    let mut journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    journal.push_str(&format!(
        "{{\"event\":\"warning\",\"point\":null,\"text\":\"{}\"}}\n",
        "x".repeat(20 << 20)
    ));
    std::fs::write(dir.join("journal.jsonl"), journal).expect("write");
    root.refuses(
        &["status", "results/sent"],
        1,
        &["a record longer than 16.0 MiB"],
    );
}

#[test]
fn a_fifo_in_a_results_directory_is_refused_without_blocking() {
    let root = Root::new();
    let dir = results_dir(&root);
    std::fs::remove_file(dir.join("journal.jsonl")).expect("rm");
    mkfifo(&dir.join("journal.jsonl"));
    root.refuses(
        &["status", "results/sent"],
        1,
        &["a FIFO, not a regular file"],
    );
    root.refuses(
        &["resume", "results/sent"],
        1,
        &["a FIFO, not a regular file"],
    );
    std::fs::remove_file(dir.join("journal.jsonl")).expect("rm");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/results/local-null/journal.jsonl"),
        dir.join("journal.jsonl"),
    )
    .expect("copy");
    std::fs::remove_file(dir.join("samples.csv")).expect("rm");
    mkfifo(&dir.join("samples.csv"));
    // `verify` reads only a missing samples.csv as "no rows yet": a FIFO there is refused,
    // never opened (`report` leaves it to its analysis, which refuses it as well:
    // untrusted::report_without_readable_samples_fails_and_keeps_the_reports).
    root.refuses(
        &["verify", "results/sent"],
        1,
        &["samples.csv", "a FIFO, not a regular file"],
    );
}

// --- Reads and writes outside the intended places -----------------------------------------

/// A recipe that copies `source` as `secret`.
fn copying(source: &str) -> String {
    base_with(
        "[[workload]]",
        &format!("[files]\n\"secret\" = {source:?}\n[[workload]]"),
    )
}

#[test]
fn a_files_source_above_the_recipe_folder_is_refused() {
    let root = Root::new();
    let ran = root.check_refuses(
        &copying("../outside/keys/id_ed25519"),
        &[
            "`../outside/keys/id_ed25519` resolves to",
            "outside/keys/id_ed25519, outside the recipe's folder",
            "--allow-files-outside DIR",
        ],
    );
    assert!(!ran.stderr.contains("PRIVATE KEY"), "{}", ran.text());
    // `run` refuses the same way, before a results directory exists.
    root.refuses(
        &["run", "recipe/r.toml"],
        1,
        &["outside the recipe's folder"],
    );
    assert!(!root.path().join("results").exists());
}

#[test]
fn an_absolute_files_source_is_refused() {
    Root::new().check_refuses(
        &copying("/etc/passwd"),
        &["`/etc/passwd` resolves to /etc/passwd, outside the recipe's folder"],
    );
}

#[test]
fn a_symlink_to_a_file_outside_is_refused_naming_the_resolved_path() {
    let root = Root::new();
    std::os::unix::fs::symlink("/etc/passwd", root.path().join("recipe/passwd")).expect("ln");
    root.check_refuses(
        &copying("passwd"),
        &["`passwd` resolves to /etc/passwd, outside the recipe's folder"],
    );
}

#[test]
fn a_symlinked_directory_out_of_the_recipe_folder_is_refused() {
    let root = Root::new();
    std::os::unix::fs::symlink(root.path().join("outside"), root.path().join("recipe/lib"))
        .expect("ln");
    root.check_refuses(
        &copying("lib/keys/id_ed25519"),
        &[
            "`lib/keys/id_ed25519` resolves to",
            "outside/keys/id_ed25519, outside the recipe's folder",
        ],
    );
}

#[test]
fn files_outside_are_copied_only_when_the_tester_allows_their_folder() {
    let root = Root::new();
    root.write("recipe/r.toml", &copying("../outside/keys/id_ed25519"));
    let key = root.path().join("outside/keys/id_ed25519");
    let ran = root.aba(&["check", "recipe/r.toml", "--allow-files-outside", "outside"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    let resolved = std::fs::canonicalize(&key).expect("canonical");
    assert!(
        ran.stdout.contains(&format!(
            "    secret\n        from    {}\n        size    26 bytes\n        sha256  ",
            resolved.display()
        )),
        "{}",
        ran.text()
    );
    // The same opt-in from the tester's own inventory.
    root.write(
        "targets.toml",
        &format!("allow_files_outside = [\"outside\"]\n{TARGETS}"),
    );
    let ran = root.aba(&["check", "recipe/r.toml", "--targets", "targets.toml"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    // A recipe cannot opt itself in: there is no such recipe key.
    root.check_refuses(
        &format!(
            "allow_files_outside = [\"..\"]\n{}",
            copying("../outside/keys/id_ed25519")
        ),
        &["unknown field `allow_files_outside`"],
    );
}

#[test]
fn a_results_directory_whose_copies_link_out_is_refused_on_resume() {
    let root = Root::new();
    root.write(
        "recipe/r.toml",
        &base_with("[[workload]]", "[files]\n\"data\" = \"data\"\n[[workload]]"),
    );
    root.write("recipe/data", "ours\n");
    let ran = root.aba(&["run", "recipe/r.toml"]);
    assert_eq!(ran.code, Some(0), "{}", ran.text());
    let dir = campaign_dir(&root.path().join("results"));
    assert_verified(&dir);
    // Someone edits the kept copy into a link to the tester's key.
    let copy = dir.join("files/data");
    std::fs::remove_file(&copy).expect("rm");
    std::os::unix::fs::symlink(root.path().join("outside/keys/id_ed25519"), &copy).expect("ln");
    let rel = dir.strip_prefix(root.path()).expect("under root");
    root.refuses(
        &["report", rel.to_str().expect("utf-8")],
        1,
        &["outside the recipe's folder", "a link out of it is refused"],
    );
}

#[test]
fn preflight_on_local_works_in_a_fresh_private_directory_and_removes_it() {
    let root = Root::new();
    // Another user's trap at the old, predictable place.
    let trap = root.path().join("tmp/aba-preflight-hostile");
    std::fs::create_dir_all(&trap).expect("mkdir");
    let victim = root.write("victim", "root-owned secret\n");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::os::unix::fs::symlink(&victim, trap.join("s.sh")).expect("ln");
    std::os::unix::fs::symlink(&victim, trap.join("d.txt")).expect("ln");
    root.write("recipe/s.sh", "#!/bin/sh\necho 1\n");
    std::fs::set_permissions(
        root.path().join("recipe/s.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    root.write("recipe/d.txt", "data\n");
    std::fs::set_permissions(
        root.path().join("recipe/d.txt"),
        std::fs::Permissions::from_mode(0o640),
    )
    .expect("chmod");
    // Setup passes only in a private directory with the sources' modes.
    root.write(
        "recipe/r.toml",
        &base_with(
            "[[workload]]",
            "[files]\n\"s.sh\" = \"s.sh\"\n\"d.txt\" = \"d.txt\"\n[setup]\nrun = ['test \"$(stat -c %a .)\" = 700 && test \"$(stat -c %a s.sh)\" = 755 && test \"$(stat -c %a d.txt)\" = 640 && test ! -L s.sh']\n[[workload]]",
        ),
    );
    // `refuses` with code 0: the run passes, and the listing before and after is the same,
    // so the fresh directory is gone and the trap and the victim are untouched.
    let ran = root.refuses(&["preflight", "recipe/r.toml"], 0, &[]);
    assert!(ran.stdout.contains("ok    setup 1"), "{}", ran.text());
    assert!(
        ran.stdout.contains("(fresh, private, removed afterwards)"),
        "{}",
        ran.text()
    );
    assert!(
        !ran.stdout.contains("tmp/aba-preflight-hostile "),
        "{}",
        ran.text()
    );
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read"),
        "root-owned secret\n"
    );
    assert_eq!(
        std::fs::metadata(&victim)
            .expect("stat")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
}

// --- Free text that breaks outputs --------------------------------------------------------

#[test]
fn a_unit_with_a_newline_is_refused() {
    Root::new().check_refuses(
        &base_with(
            "better = \"lower\"",
            "better = \"lower\", unit = \"ns\\nrow\"",
        ),
        &["`unit` contains the control character '\\n'"],
    );
}

#[test]
fn a_unit_with_a_tab_is_refused() {
    Root::new().check_refuses(
        &base_with(
            "better = \"lower\"",
            "better = \"lower\", unit = \"ns\\tcol\"",
        ),
        &["`unit` contains the control character '\\t'"],
    );
}

#[test]
fn escape_codes_in_the_description_never_reach_the_terminal() {
    let ran = Root::new().check_refuses(
        &base_with(
            "a recipe from someone else",
            "\\u001b]0;owned\\u0007\\u001b[2Jcleared",
        ),
        &["`description` contains the control character '\\u{1b}'"],
    );
    assert!(ran.stdout.is_empty(), "{}", ran.text());
}

#[test]
fn a_bell_in_the_description_is_refused() {
    Root::new().check_refuses(
        &base_with("a recipe from someone else", "ring\\u0007"),
        &["`description` contains the control character '\\u{7}'"],
    );
}

#[test]
fn raw_control_bytes_in_a_file_are_shown_escaped() {
    // Invalid TOML: the diagnostic quotes the line, escaped.
    Root::new().check_refuses(
        &base_with(
            "description = \"a recipe from someone else\"",
            "description = \"a\u{1b}[31mb\"",
        ),
        &["\\u{1b}[31m"],
    );
}

#[test]
fn a_long_description_is_refused_with_its_length() {
    Root::new().check_refuses(
        &base_with("a recipe from someone else", &"d".repeat(5000)),
        &["`description` has 5000 characters; at most 4000 are allowed"],
    );
}

#[test]
fn a_hundred_kilobyte_name_is_shown_once_and_cut() {
    let ran = Root::new().check_refuses(
        &base_with(
            "name = \"hostile\"",
            &format!("name = \"{}\"", "n".repeat(100_000)),
        ),
        &["it is longer than 64 characters", "(100000 characters)"],
    );
    assert_eq!(
        ran.stderr.matches("(100000 characters)").count(),
        1,
        "{}",
        ran.text()
    );
    assert!(
        ran.stderr.len() < 2000,
        "{} bytes: {}",
        ran.stderr.len(),
        ran.text()
    );
}

/// An unknown key of 900 KB: no quadratic "did you mean", shown once, cut.
#[test]
fn a_huge_unknown_key_is_answered_at_once_and_cut() {
    let ran = Root::new().check_refuses(
        &format!("{}{} = 1\n", BASE, "k".repeat(900_000)),
        &["unknown field", "(900000 characters)"],
    );
    assert!(
        ran.stderr.len() < 4000,
        "{} bytes: {}",
        ran.stderr.len(),
        ran.text()
    );
}

/// A million bad matrix values on one line: a bounded answer, not a million carets.
#[test]
fn many_problems_are_counted_not_all_shown() {
    let values = (0..900)
        .map(|i| format!("\"v{i};\""))
        .collect::<Vec<_>>()
        .join(", ");
    let ran = Root::new().check_refuses(
        &base_with(
            "run = \"echo 1\"",
            &format!("run = \"echo {{a}}\"\nmatrix = {{ a = [{values}] }}"),
        ),
        &["850 more problems in this file are not shown"],
    );
    assert!(ran.stderr.len() < 100_000, "{} bytes", ran.stderr.len());
}

// --- Accepted values that cannot work -----------------------------------------------------

#[test]
fn a_zero_timeout_is_refused() {
    Root::new().check_refuses(
        &with_workload_keys("timeout = \"0s\""),
        &[
            "`timeout` = \"0s\" is out of range",
            "`timeout`: the deadline of one workload run, from 1s to 24h",
        ],
    );
}

/// An inventory target with `extra` lines, checked through `aba check --target box`.
fn inventory_refuses(extra: &str, expected: &[&str]) {
    let root = Root::new();
    root.write("targets.toml", &format!("{TARGETS}{extra}\n"));
    root.write(
        "recipe/r.toml",
        &base_with(
            "release = \"running\"",
            "release = \"6.1.0-47-cloud-amd64\"",
        ),
    );
    root.refuses(
        &[
            "check",
            "recipe/r.toml",
            "--targets",
            "targets.toml",
            "--target",
            "box",
        ],
        1,
        expected,
    );
}

#[test]
fn a_zero_boot_timeout_is_refused() {
    inventory_refuses(
        "boot_timeout = \"0s\"",
        &["`boot_timeout` = \"0s\" is out of range", "from 10s to 24h"],
    );
}

#[test]
fn a_zero_dead_after_is_refused() {
    inventory_refuses(
        "dead_after = \"0s\"",
        &["`dead_after` = \"0s\" is out of range", "from 2s to 2m"],
    );
}

#[test]
fn a_dead_after_beyond_the_kernels_keepalive_count_is_refused() {
    inventory_refuses(
        "dead_after = \"10m\"",
        &["`dead_after` = \"10m\" is out of range"],
    );
}

#[test]
fn a_zero_keepalive_is_refused() {
    inventory_refuses(
        "keepalive = \"0s\"",
        &["`keepalive` = \"0s\" is out of range", "from 1s to 10m"],
    );
}

#[test]
fn a_dead_after_shorter_than_two_keepalives_is_refused() {
    inventory_refuses(
        "keepalive = \"5s\"\ndead_after = \"6s\"",
        &["`dead_after` (6s) must be at least twice `keepalive` (5s)"],
    );
}

#[test]
fn a_runner_cpu_list_that_is_not_one_is_refused_at_its_place() {
    inventory_refuses(
        "runner_cpus = \"0-x\"",
        &[
            "invalid runner_cpus `0-x`",
            "write `auto`, `off` or a CPU list",
            "targets.toml:5:15",
            "targets.box.runner_cpus",
        ],
    );
    inventory_refuses("runner_cpus = \"9000\"", &["CPU 9000 is above 8191"]);
}

#[test]
fn port_zero_is_refused() {
    inventory_refuses(
        "port = 0",
        &["`port` = 0 is out of range", "from 1 to 65535"],
    );
}

#[test]
fn an_unknown_placeholder_in_a_power_command_is_refused_by_check() {
    let root = Root::new();
    root.write(
        "targets.toml",
        "[targets.box]\nhost = \"127.0.0.1\"\nhost_key = \"SHA256:x\"\nswitch = \"power\"\n[targets.box.power]\ncycle = \"./pdu.sh {relase}\"\n",
    );
    root.write(
        "recipe/r.toml",
        &base_with(
            "release = \"running\"",
            "release = \"6.1.0-47-cloud-amd64\"",
        ),
    );
    root.refuses(
        &[
            "check",
            "recipe/r.toml",
            "--targets",
            "targets.toml",
            "--target",
            "box",
        ],
        1,
        &[
            "unknown placeholder `{relase}`",
            "did you mean `{release}`?",
            "targets.toml:6:9",
        ],
    );
}

#[test]
fn an_unknown_placeholder_in_a_notification_is_refused_by_check() {
    inventory_refuses(
        "on_failure = \"mail -s {subject} me\"",
        &[
            "unknown placeholder `{subject}`",
            "{dir}, {reason}, {target}",
        ],
    );
}

// --- Tuning survives a killed runner --------------------------------------------------------

/// Three points of the running kernel running `run`, with `kernel.sched_rr_timeslice_ms` set
/// to `timeslice`.
fn tuned(run: &str, timeslice: i64) -> Recipe {
    Recipe::new(
        "tuned",
        "a sysctl on a machine that is not rebooted",
        &["this", "this", "this"],
    )
    .runs(0, 3)
    .sysctl("kernel.sched_rr_timeslice_ms", timeslice)
    .workload(Workload::new("w", run, Metric::Number(None, Better::Lower)))
}
/// `--allow-tuning` on this machine, SIGKILLed mid-campaign (no hook can run): the journal
/// holds the machine's value from before the first write, `aba restore` puts it back, and a
/// second campaign killed the same way is put back by `aba resume`, which then finishes.
#[test]
fn a_killed_tuned_run_is_put_back_by_restore_and_by_resume() {
    let _sysctls = crate::support::host_sysctl::lock();
    const SYSCTL: &str = "/proc/sys/kernel/sched_rr_timeslice_ms";
    let Ok(original) = std::fs::read_to_string(SYSCTL) else {
        crate::support::skip::skip("no /proc/sys/kernel/sched_rr_timeslice_ms");
        return;
    };
    let original = original.trim().to_owned();
    let wanted = if original == "90" { "80" } else { "90" };
    if std::fs::write(SYSCTL, format!("{original}\n")).is_err() {
        crate::support::skip::skip("/proc/sys is not writable here (needs root)");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe =
        tuned("sleep 0.3; echo 1", wanted.parse().expect("80 or 90")).write(tmp.path(), "r.toml");
    let now = || {
        std::fs::read_to_string(SYSCTL)
            .expect("read")
            .trim()
            .to_owned()
    };
    for how in ["restore", "resume"] {
        let results = tmp.path().join(format!("results-{how}"));
        let mut child = Command::new(aba_bin())
            .arg("run")
            .arg(&recipe)
            .arg("--allow-tuning")
            .arg("--results")
            .arg(&results)
            .current_dir(tmp.path())
            .env_remove("ABA_TARGETS")
            .env_remove("ABA_RESULTS")
            // The machine's own /var/lib/aba stays untouched: the ledger is the test's.
            .env("ABA_STATE_DIR", tmp.path().join("state"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("aba run starts");
        let dir = crate::support::cli::wait_for_journal(
            &results,
            Duration::from_secs(60),
            "the first sample after tuning",
            |events| {
                events
                    .iter()
                    .any(|e| matches!(e, aba::results::journal::Event::Sample { .. }))
            },
        );
        child.kill().expect("SIGKILL");
        child.wait().expect("reaped");
        assert_eq!(now(), wanted, "the campaign changed the sysctl");
        let journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
        assert!(
            journal.contains(&format!(
                "\"values\":[{{\"path\":\"{SYSCTL}\",\"value\":\"{original}\"}}]"
            )),
            "the original value is journaled: {journal}"
        );
        let out = Command::new(aba_bin())
            .arg(how)
            .arg(&dir)
            .args(if how == "resume" {
                &["--allow-tuning"][..]
            } else {
                &[][..]
            })
            .current_dir(tmp.path())
            .env_remove("ABA_TARGETS")
            .env("ABA_STATE_DIR", tmp.path().join("state"))
            .output()
            .expect("aba runs");
        let text = crate::support::cli::text(&out);
        assert!(out.status.success(), "aba {how}: {text}");
        assert_eq!(now(), original, "aba {how} put the sysctl back: {text}");
        if how == "restore" {
            assert!(text.contains("restored 1 setting(s)"), "{text}");
        } else {
            assert_verified(&dir);
        }
    }
}
