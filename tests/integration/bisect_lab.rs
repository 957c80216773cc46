//! `aba bisect` on real kernels in the QEMU lab: a generated git history of 16 commits over
//! the lab's kernel source (lab/out/kernel/src, Debian's linux-source-6.1), one of them the
//! slowing patch of recipes/005-lab-built-kernels, one the null patch (changes nothing
//! measurable), one that does not build, one that builds but panics at boot; every other commit
//! touches a compiled comment.
//! Each commit aba tests is built incrementally in the lab's one build tree, installed and
//! proven at every boot, and decided in a good/X/good sandwich by kexec.
//!
//! The history tracks two files of the source (`git init --separate-git-dir`, everything
//! else excluded), so it costs seconds to make; the tree and the build folder are the lab's
//! own, taken under lab/kernel/build.sh's lock and put back as they were, even on a panic.

use std::{
    os::unix::process::CommandExt as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use aba::results::journal::{Event, Journal};

use crate::support::{
    cli::{aba, aba_command, assert_verified, text, write},
    lab::{KERNEL_A, LabVm, built_kernels, console_tail},
};

/// The commits of the history after good, 1-based: what each one does.
const COMMITS: usize = 16;
const NULL_PATCH: usize = 5;
const BROKEN: usize = 8;
/// Builds, but its kernel panics in an early initcall: the step's boots fail (the VM falls
/// back to its default kernel, which the build proof refuses) and the commit is skipped.
/// The search visits it after 7 (like good) and 11 (like bad).
const NO_BOOT: usize = 9;
const SLOWING: usize = 11;

/// The files the history tracks, relative to the source tree.
const TRACKED: [&str; 2] = ["kernel/sched/rt.c", "init/calibrate.c"];

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=aba lab",
            "-c",
            "user.email=lab@aba.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The lab's source tree borrowed for a history: its tracked files' bytes kept, put back and
/// the `.git` link removed when dropped; lab/kernel/build.sh's lock held meanwhile.
struct BorrowedTree {
    src: PathBuf,
    kept: Vec<(PathBuf, Vec<u8>)>,
    _lock: std::fs::File,
}

impl BorrowedTree {
    fn take(kout: &Path) -> BorrowedTree {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(kout.join(".lock"))
            .expect("lab/out/kernel/.lock");
        // SAFETY: flock on a file descriptor this process owns.
        let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
        assert_eq!(locked, 0, "flock lab/out/kernel/.lock");
        let src = kout.join("src");
        let _ = std::fs::remove_file(src.join(".git")); // a killed earlier run's link
        // The tracked files' bytes are kept beside the tree until they are put back: a run
        // killed before that leaves them, and the next run puts them back first.
        let pristine = kout.join("bisect-lab-pristine");
        let kept = TRACKED
            .iter()
            .map(|f| {
                let path = src.join(f);
                let saved = pristine.join(f.replace('/', "_"));
                let bytes = match std::fs::read(&saved) {
                    Ok(bytes) => {
                        std::fs::write(&path, &bytes).expect("put back a killed run's file");
                        bytes
                    }
                    Err(_) => {
                        let bytes =
                            std::fs::read(&path).expect("a tracked file of the lab's source");
                        std::fs::create_dir_all(&pristine).expect("mkdir");
                        std::fs::write(&saved, &bytes).expect("keep");
                        bytes
                    }
                };
                (path, bytes)
            })
            .collect();
        BorrowedTree {
            src,
            kept,
            _lock: lock,
        }
    }
}

impl BorrowedTree {
    /// The tracked files as they were, and no history: ready for another one.
    fn reset(&self) {
        for (path, bytes) in &self.kept {
            std::fs::write(path, bytes).expect("put back a tracked file");
        }
        std::fs::remove_file(self.src.join(".git")).expect("the history's .git link");
    }
}

impl Drop for BorrowedTree {
    fn drop(&mut self) {
        for (path, bytes) in &self.kept {
            let _ = std::fs::write(path, bytes);
        }
        let _ = std::fs::remove_file(self.src.join(".git"));
        if let Some(kout) = self.src.parent() {
            let _ = std::fs::remove_dir_all(kout.join("bisect-lab-pristine"));
        }
    }
}

/// Makes the history in `src` (its git directory in `gitdir`); the hashes, good first.
fn make_history(src: &Path, gitdir: &Path, with_slowing: bool) -> Vec<String> {
    let recipes = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/005-lab-built-kernels");
    let out = Command::new("git")
        .args(["init", "-q", "--separate-git-dir"])
        .arg(gitdir)
        .arg(src)
        .output()
        .expect("git init");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(gitdir.join("info/exclude"), "*\n").expect("exclude");
    let mut add = vec!["add", "-f", "--"];
    add.extend(TRACKED);
    git(src, &add);
    git(
        src,
        &[
            "commit",
            "-q",
            "-m",
            "Linux 6.1.192 (the lab's source): good",
        ],
    );
    let mut hashes = vec![git(src, &["rev-parse", "HEAD"])];
    let calibrate = src.join("init/calibrate.c");
    let pristine = std::fs::read_to_string(&calibrate).expect("calibrate.c");
    let mut comments = String::new();
    for k in 1..=COMMITS {
        let patch = |name: &str| {
            let ok = Command::new("patch")
                .args(["-p1", "-s", "-d"])
                .arg(src)
                .stdin(std::fs::File::open(recipes.join(name)).expect("the patch"))
                .status()
                .expect("patch runs")
                .success();
            assert!(ok, "{name} applies");
        };
        let subject = match k {
            NULL_PATCH => {
                patch("null.patch");
                "sched/rt: reword a comment (the null patch)".to_owned()
            }
            SLOWING if with_slowing => {
                patch("patched.patch");
                "sched/rt: spin in the RT bandwidth sysctls' read handler (the slowing patch)"
                    .to_owned()
            }
            BROKEN => {
                std::fs::write(
                    &calibrate,
                    format!("{pristine}{comments}#error \"aba bisect lab: this commit does not build\"\n"),
                )
                .expect("write");
                "init: a commit that does not build".to_owned()
            }
            NO_BOOT => {
                std::fs::write(
                    &calibrate,
                    format!(
                        "{pristine}{comments}#include <linux/panic.h>\n\
                         static int __init aba_bisect_lab_no_boot(void)\n\
                         {{\n\tpanic(\"aba bisect lab: this commit does not boot\");\n}}\n\
                         early_initcall(aba_bisect_lab_no_boot);\n"
                    ),
                )
                .expect("write");
                "init: a commit that builds but does not boot".to_owned()
            }
            _ => {
                comments.push_str(&format!("/* aba bisect lab: commit {k} */\n"));
                std::fs::write(&calibrate, format!("{pristine}{comments}")).expect("write");
                format!("init: comment {k}")
            }
        };
        git(
            src,
            &["commit", "-q", "-a", "--allow-empty", "-m", &subject],
        );
        hashes.push(git(src, &["rev-parse", "HEAD"]));
    }
    hashes
}

/// The bisection's builds file: the borrowed tree, built incrementally in the lab's one build
/// folder as lab/kernel/build.sh builds it; each build marks its start and its successful end
/// in `dir/build-marks`.
fn builds_file(dir: &Path, kout: &Path) -> PathBuf {
    let script = write(
        dir,
        "build.sh",
        &format!(
            "#!/bin/sh\nset -e\nexport LOCALVERSION=\necho started >> {marks}\n\
             make -s -C {src} O={build} -j\"$(nproc)\" bzImage\necho ended >> {marks}\n",
            marks = dir.join("build-marks").display(),
            src = kout.join("src").display(),
            build = kout.join("build").display()
        ),
    );
    let ok = Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .expect("chmod")
        .success();
    assert!(ok);
    write(
        dir,
        "bisect-builds.toml",
        &format!(
            "version = 1\n[kernels.tree]\ndir = \"{}\"\ncommand = \"{}\"\ntimeout = \"30m\"\nimage = \"{}\"\nconfig = \"{}\"\n",
            kout.join("src").display(),
            script.display(),
            kout.join("build/arch/x86/boot/bzImage").display(),
            kout.join("build/.config").display()
        ),
    )
}

fn bisect_args<'a>(
    recipe: &'a str,
    builds: &'a str,
    good: &'a str,
    bad: &'a str,
    targets: &'a str,
    dir: &'a str,
) -> Vec<&'a str> {
    vec![
        "bisect",
        recipe,
        "--builds",
        builds,
        "--good",
        good,
        "--bad",
        bad,
        "--targets",
        targets,
        "--target",
        "kexec",
        "--dir",
        dir,
    ]
}

/// Recipe 005's measured workload, smaller for CI's time: one workload, 3 samples of 5,000
/// reads, and a 25 % gate (the slowing patch is +150 %; boots under emulation differ by a few
/// percent, so "like good" within ±10 % took 7–19 boots a step, within ±25 % a few).
const RECIPE: &str = r#"
version = 1
name = "lab-bisect"
description = "open+read+close of /proc/sys/kernel/sched_rt_runtime_us (recipe 005's workload), bisected over a generated history of the lab's kernel source"
sequence = ["original", "patched", "original"]
warmup = 1
samples = 3
settle = "3s"
[kernels.original]
release = "6.1.192-aba-lab"
initrd = "/boot/initrd.img"
[kernels.patched]
release = "6.1.192-aba-lab"
initrd = "/boot/initrd.img"
[boot]
cmdline = "aba.lab=1"
[[workload]]
name = "sched_rt_runtime_us"
run = "labbench --read /proc/sys/kernel/sched_rt_runtime_us 5000 --json"
timeout = "60s"
estimate = "500ms"
metric = { json = "/ns_per_read", unit = "ns/read", better = "lower" }
[analysis]
baseline = "original"
gate_pct = 25.0
max_cv_pct = 10.0
"#;

/// Starts `aba ARGS` in `cwd` in a process group of its own and SIGKILLs that group as soon
/// as `ready` gives something (checked every 200 ms), which it returns; panics, with what
/// aba said, when aba ends first or `what` has not come within `limit`.
fn kill_when<T>(
    cwd: &Path,
    args: &[&str],
    what: &str,
    limit: Duration,
    mut ready: impl FnMut() -> Option<T>,
) -> T {
    let log = cwd.join("killed-run.log");
    let mut child = aba_command(cwd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .process_group(0)
        .spawn()
        .expect("aba bisect starts");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!(
                "aba bisect ended before {what}: {status}\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        if let Some(found) = ready() {
            // SAFETY: signals the process group this test started (a build has its own).
            unsafe { libc::kill(-i32::try_from(child.id()).expect("pid"), libc::SIGKILL) };
            let _ = child.wait();
            return found;
        }
        assert!(
            started.elapsed() < limit,
            "no {what} after {} s\n{}",
            limit.as_secs(),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The PointDone records of the step campaign in `dir`, 0 while it cannot be read.
fn points_done(dir: &Path) -> usize {
    Journal::read(&dir.join("journal.jsonl")).map_or(0, |j| {
        j.events
            .iter()
            .filter(|e| matches!(e, Event::PointDone { .. }))
            .count()
    })
}

/// Recipe 005's workload (its first and only measured series) bisected over 16 commits: the endpoints confirmed, the commit that
/// does not build skipped and named, the slowing commit named as the first bad one; killed
/// in the middle of a step and continued by the same command with `--dir`; every step an
/// ordinary results directory `aba verify` accepts.
#[test]
fn bisect_names_the_slowing_commit_skips_the_broken_one_and_continues_after_a_kill() {
    let kernels = built_kernels();
    let kout = kernels.clone();
    let tmp = tempfile::tempdir().expect("tempdir");
    let vm = LabVm::start("t-bisect", KERNEL_A);
    let tree = BorrowedTree::take(&kout);
    let hashes = make_history(&tree.src, &tmp.path().join("history.git"), true);
    let builds = builds_file(tmp.path(), &kout);
    let targets = vm.inventory(tmp.path(), "");
    let recipe = write(tmp.path(), "lab-bisect.toml", RECIPE);
    let dir = tmp.path().join("bisect");
    let (recipe_s, builds_s, targets_s, dir_s) = (
        recipe.to_str().expect("utf-8"),
        builds.to_str().expect("utf-8"),
        targets.to_str().expect("utf-8"),
        dir.to_str().expect("utf-8"),
    );
    let args = bisect_args(
        recipe_s,
        builds_s,
        &hashes[0],
        &hashes[COMMITS],
        targets_s,
        dir_s,
    );

    // The first run is killed once the first commit step (after the endpoints' confirmation
    // and the skip) has a point done.
    let bad_label = format!("-c{}", &hashes[COMMITS][..12]);
    let started = Instant::now();
    let killed_in = kill_when(
        tmp.path(),
        &args,
        "the first commit step's first point",
        Duration::from_secs(1800),
        || {
            let step = std::fs::read_dir(dir.join("steps"))
                .ok()
                .and_then(|entries| {
                    entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                        p.is_dir()
                            && p.file_name()
                                .is_some_and(|n| !n.to_string_lossy().ends_with(&bad_label))
                    })
                })?;
            (points_done(&step) >= 1).then_some(step)
        },
    );

    // The same command continues it.
    let out = aba(tmp.path(), &args);
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 40)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    let report = std::fs::read_to_string(dir.join("bisect-report.txt")).expect("report");
    assert!(
        report.contains(&format!("Result: first bad commit {}", hashes[SLOWING])),
        "{report}\n{said}"
    );
    let tsv = std::fs::read_to_string(dir.join("bisect.tsv")).expect("tsv");
    let broken_row = tsv
        .lines()
        .find(|l| l.starts_with(&hashes[BROKEN]))
        .unwrap_or_else(|| panic!("the broken commit is named:\n{tsv}"));
    assert!(broken_row.contains("\tskip\t"), "{broken_row}");
    // The commit that builds but does not boot: built, its boots failed, skipped and named.
    let no_boot_row = tsv
        .lines()
        .find(|l| l.starts_with(&hashes[NO_BOOT]))
        .unwrap_or_else(|| panic!("the commit that does not boot is named:\n{tsv}"));
    assert!(
        no_boot_row.contains("\tskip\t") && no_boot_row.contains("completed no point"),
        "{no_boot_row}"
    );
    let log = std::fs::read_to_string(dir.join("git-bisect-log.txt")).expect("log");
    for skipped in [BROKEN, NO_BOOT] {
        assert!(
            log.contains(&format!("git bisect skip {}", hashes[skipped])),
            "{log}"
        );
    }
    assert!(
        log.contains(&format!("git bisect bad {}", hashes[SLOWING])),
        "{log}"
    );
    let decided = tsv
        .lines()
        .skip(1)
        .filter(|l| (l.contains("\tgood\t") || l.contains("\tbad\t")) && !l.contains("endpoints"))
        .count();
    assert!(
        (2..=7).contains(&decided),
        "about log2(16) decided commit steps, got {decided}:\n{tsv}"
    );

    // The killed step was resumed in its own directory, and every step verifies.
    let resumed = Journal::read(&killed_in.join("journal.jsonl")).expect("journal");
    assert!(
        resumed
            .events
            .iter()
            .any(|e| matches!(e, Event::Resumed { .. })),
        "{} was resumed",
        killed_in.display()
    );
    let mut steps: Vec<PathBuf> = std::fs::read_dir(dir.join("steps"))
        .expect("steps")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    steps.sort();
    assert!(steps.len() >= 3, "{steps:?}");
    for step in &steps {
        assert_verified(step);
    }

    let status = aba(tmp.path(), &["bisect", "status", dir_s]);
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains(&hashes[SLOWING]),
        "{}",
        text(&status)
    );
    eprintln!(
        "bisect in the lab: {} s, {} step directories, {decided} decided commit steps\n{report}",
        started.elapsed().as_secs(),
        steps.len()
    );
    no_change_in_range(&tree, tmp.path(), &kout, recipe_s, targets_s, &vm);
    drop(tree);
    let _ = kernels;
}

/// The same history without the slowing patch, on the same VM and tree: the endpoints are
/// confirmed equivalent within the gate and the bisection ends "no commit in range changes
/// it" without testing a commit. The first run is killed while the bad endpoint's kernel is
/// being built (the build goes on in its own process group); the same command waits for
/// that build and continues.
fn no_change_in_range(
    tree: &BorrowedTree,
    tmp: &Path,
    kout: &Path,
    recipe: &str,
    targets: &str,
    vm: &LabVm,
) {
    tree.reset();
    let hashes = make_history(&tree.src, &tmp.join("history-none.git"), false);
    let work = tmp.join("none");
    std::fs::create_dir_all(&work).expect("mkdir");
    let builds = builds_file(&work, kout);
    let marks = work.join("build-marks");
    let dir = tmp.join("bisect-none");
    let (builds_s, dir_s) = (
        builds.to_str().expect("utf-8"),
        dir.to_str().expect("utf-8"),
    );
    let args = bisect_args(
        recipe,
        builds_s,
        &hashes[0],
        &hashes[COMMITS],
        targets,
        dir_s,
    );
    let started = Instant::now();
    // Good is built first, then bad: killed once bad's build has started and not ended (the
    // build, in its own process group, goes on).
    kill_when(
        tmp,
        &args,
        "the bad endpoint's build",
        Duration::from_secs(1200),
        || {
            let m = std::fs::read_to_string(&marks).unwrap_or_default();
            let count = |word: &str| m.lines().filter(|l| *l == word).count();
            (count("started") >= 2 && count("ended") < 2).then_some(())
        },
    );
    let out = aba(tmp, &args);
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 40)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("a build that an earlier aba left running"),
        "{said}"
    );
    // Good built; bad's build, which ran on after the kill; bad built again after it ended.
    let m = std::fs::read_to_string(&marks).expect("marks");
    assert_eq!(
        m.lines().collect::<Vec<_>>(),
        ["started", "ended", "started", "ended", "started", "ended"],
        "{m}"
    );
    let report = std::fs::read_to_string(dir.join("bisect-report.txt")).expect("report");
    assert!(
        report.contains("Result: no commit in range changes it"),
        "{report}\n{said}"
    );
    let tsv = std::fs::read_to_string(dir.join("bisect.tsv")).expect("tsv");
    assert!(
        tsv.lines().skip(1).all(|l| l.contains("endpoints")),
        "only the endpoints were tested:\n{tsv}"
    );
    let steps: Vec<PathBuf> = std::fs::read_dir(dir.join("steps"))
        .expect("steps")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    // One confirmation, or up to two fresh ones after an UNSTABLE confirmation (the core's
    // retries): every step is of the bad endpoint against good.
    let bad_label = format!("-c{}", &hashes[COMMITS][..12]);
    assert!(
        (1..=3).contains(&steps.len())
            && steps.iter().all(|s| s
                .file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&bad_label))),
        "{steps:?}"
    );
    for step in &steps {
        assert_verified(step);
    }
    eprintln!(
        "no change in range, in the lab: {} s, {} step directories\n{report}",
        started.elapsed().as_secs(),
        steps.len()
    );
}
