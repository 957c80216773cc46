//! Faults that need no remote machine: a results disk that fills up, and hostile values that
//! must never become shell syntax.

use std::{path::Path, process::Command};

use aba::results::{
    journal::{Event, Journal},
    samples::{SampleTable, Status},
};

use crate::support::{
    cli::{aba, assert_verified, campaign_dir, text, write},
    recipe::{Metric, Recipe, Workload},
};

/// A small tmpfs mounted for one test; unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(path: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(path).expect("mkdir");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .output()
            .expect("mount runs");
        assert!(
            out.status.success(),
            "mounting a tmpfs needs root: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(path.to_path_buf())
    }

    fn available(&self) -> u64 {
        let c = std::ffi::CString::new(self.0.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: statvfs fills the zeroed struct for a valid NUL-terminated path.
        unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            assert_eq!(libc::statvfs(c.as_ptr(), &mut st), 0);
            st.f_bavail * st.f_frsize
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_results_disk_stops_cleanly_and_resumes_once_space_is_freed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = Recipe::new(
        "diskfull",
        "fills a tiny results disk",
        &["this", "this", "this"],
    )
    .runs(1, 30)
    .workload(Workload::new(
        "count",
        "echo $ABA_SAMPLE",
        Metric::lower("n"),
    ))
    .write(tmp.path(), "r.toml");
    let disk = Tmpfs::mount(&tmp.path().join("disk"), "512k");
    std::fs::create_dir_all(disk.0.join("results")).expect("mkdir");
    // Leave room for the campaign's start and part of its samples, not for all of them.
    let filler = disk.0.join("filler");
    let keep = 40 * 1024;
    std::fs::write(
        &filler,
        vec![0u8; usize::try_from(disk.available() - keep).expect("fits")],
    )
    .expect("fill");

    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            disk.0.join("results").to_str().expect("utf-8"),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("aba resume"), "{stderr}");

    let dir = campaign_dir(&disk.0.join("results"));
    let journal = Journal::read(&dir.join("journal.jsonl")).expect("the journal stays parseable");
    let done_before = journal
        .state()
        .points
        .iter()
        .filter(|p| p.done.is_some())
        .count();
    assert!(
        done_before < 3,
        "the disk was not small enough to stop the campaign"
    );
    SampleTable::read(&dir.join("samples.csv")).expect("samples.csv stays readable");

    std::fs::remove_file(&filler).expect("free space");
    let resumed = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert!(resumed.status.success(), "{}", text(&resumed));

    let state = Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    assert!(state.finished);
    let done = state.done_attempts();
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    for point in ["this-a", "this-b", "this-c"] {
        let valid = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point
                    && Some(&r.attempt) == done.get(point)
                    && r.status == Status::Ok
            })
            .count();
        assert_eq!(valid, 31, "point {point}");
    }
    // An ok row outside the done attempt is one of an attempt the journal says does not
    // count (discarded on resume, or failed): samples.csv is never rewritten. Where the disk
    // fills (between two points, or mid-point) depends on the bytes written so far.
    let not_counted = |point: &str, attempt: u32| {
        state.point(point).is_some_and(|p| {
            p.discarded.contains(&attempt) || p.failures.iter().any(|(a, _)| *a == attempt)
        })
    };
    assert!(
        table.rows.iter().all(|r| r.status != Status::Ok
            || Some(&r.attempt) == done.get(table.text(r.point))
            || not_counted(table.text(r.point), r.attempt)),
        "an ok row outside a valid attempt, not discarded nor failed"
    );
    assert_verified(&dir);
}

#[test]
fn hostile_values_reach_the_shell_as_data() {
    let _sysctls = crate::support::host_sysctl::lock();
    let tmp = tempfile::tempdir().expect("tempdir");
    let pwned = tmp.path().join("pwned");
    let injection = format!("; touch {}", pwned.display());
    let recipe = write(
        tmp.path(),
        "r.toml",
        &format!(
            r#"
version = 1
name = "quoting"
description = "values with shell syntax stay values"
sequence = ["this"]
warmup = 0
samples = 1
[kernels.this]
release = "running"
[[workload]]
name = "echo"
run = 'printf "%s" "$HOSTILE"'
env = {{ HOSTILE = "{injection}" }}
metric = {{ regex = '(touch)', better = "lower" }}
check = {{ must_match = ["^; touch "] }}
"#
        ),
    );
    // The env value is printed verbatim and never executed; the regex cannot read "touch"
    // as a number, so the run fails after the check passed, which proves the value arrived.
    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`touch` is not a number"), "{}", text(&out));
    assert!(!pwned.exists(), "the injected command ran");
    assert_verified(&campaign_dir(&tmp.path().join("results")));

    // A sysctl value with shell syntax is written as one word and rejected by the kernel.
    let recipe = write(
        tmp.path(),
        "s.toml",
        &format!(
            r#"
version = 1
name = "quoting-sysctl"
description = "a hostile sysctl value"
sequence = ["this"]
warmup = 0
samples = 1
point_retries = 0
[kernels.this]
release = "running"
[sysctl]
"kernel.printk_ratelimit" = "{injection}"
[[workload]]
name = "noop"
run = "echo 1"
metric = {{ number = true, better = "lower" }}
"#
        ),
    );
    let before = std::fs::read_to_string("/proc/sys/kernel/printk_ratelimit").ok();
    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results2",
            "--allow-tuning",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tuning failed before any sample: sysctl kernel.printk_ratelimit"),
        "{stderr}"
    );
    assert!(!pwned.exists(), "the injected command ran");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/printk_ratelimit").ok(),
        before
    );
    let dir = campaign_dir(&tmp.path().join("results2"));
    let journal = Journal::read(&dir.join("journal.jsonl")).expect("journal");
    assert!(
        !journal
            .events
            .iter()
            .any(|e| matches!(e, Event::Sample { .. })),
        "a sample was taken"
    );
    assert_verified(&dir);
}

/// The host-side lock of `local` in `root`, flocked by this test process as a campaign
/// that started a moment ago holds it, with `record` as what it wrote so far.
fn hold_local_lock(root: &crate::hostile::Root, record: &str) -> std::fs::File {
    use std::os::fd::AsRawFd as _;
    let path = root.write("locks/local.lock", record);
    let file = std::fs::File::open(&path).expect("open the lock file");
    // SAFETY: flock(2) on a descriptor this test owns.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(rc, 0, "flock: {}", std::io::Error::last_os_error());
    file
}

/// Two campaigns started 5 ms apart (issue 37, item 5): the second finds the first's flock
/// taken and its record not written yet. The race is made deterministic by holding the flock
/// with an empty record: `aba run` refuses naming a campaign that is starting, and never
/// prints `kill 0`, which would signal the user's own process group. A complete record of
/// pid 0 or 1 (forged, or cut) gets no kill hint either.
#[test]
fn a_campaign_refused_by_one_that_is_starting_names_no_process_to_kill() {
    let root = crate::hostile::Root::new();
    root.write("recipe/r.toml", crate::hostile::BASE);
    let held = hold_local_lock(&root, "");
    let ran = root.refuses(
        &["run", "recipe/r.toml"],
        1,
        &["another aba on this host that is starting", "--wait"],
    );
    assert!(!ran.stderr.contains("kill"), "{}", ran.text());
    assert!(!ran.stderr.contains("pid 0"), "{}", ran.text());
    drop(held);
    for pid in [0, 1] {
        let record = format!(
            "{{\"campaign\":\"/r/x\",\"host\":{:?},\"user\":\"u\",\"pid\":{pid},\"started\":\"t\",\"recipe\":\"r\",\"target\":\"local\"}}\n",
            aba::campaign::lock::hostname()
        );
        let held = hold_local_lock(&root, &record);
        let ran = root.refuses(
            &["run", "recipe/r.toml"],
            1,
            &["is in use by campaign /r/x"],
        );
        assert!(!ran.stderr.contains("kill"), "pid {pid}: {}", ran.text());
        drop(held);
    }
}
