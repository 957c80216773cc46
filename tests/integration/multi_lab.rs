//! Several machines in the QEMU lab (issue 13): two VMs on two loopback ports, each switched
//! between real Debian kernels by kexec. One recipe on both at once with the combined report;
//! a queue of two recipes over both with one VM's plug pulled mid-queue (its campaign stops
//! resumable, the other machine's campaigns finish, `aba batch resume` completes it); two
//! campaigns against one VM (the second refuses naming the first, or waits with `--wait`)
//! and the lock a SIGKILLed runner left, reported with its fix. Every campaign directory is
//! checked sample by sample against its journal: nothing lost, nothing twice, every sample on
//! its proven boot.

use std::{
    collections::BTreeSet,
    path::Path,
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use aba::{
    batch::journal::{BatchJournal, Ended},
    results::journal::{Event, Journal},
};

use crate::{
    batch::{resume_batch, spans, spawn_batch, wait_for_batch},
    lab::proven,
    multi::{assert_complete, parent_dir, run_args, tsv_rows, wait_for_samples},
    support::{
        cli::{
            aba, aba_command, assert_verified, campaign_dir, resume, run_on, spawn_run_on, text,
            wait_for_journal, write,
        },
        lab::{KERNEL_A, KERNEL_B, LabPair, LabVm},
        recipe::{Metric, Recipe, Workload},
        sshd::signal,
    },
};

const SAMPLES: u32 = 3;

/// A kexec A-B-A between the lab's two Debian kernels, named `name`.
fn recipe(name: &str) -> String {
    Recipe::new(name, "a kexec A-B-A on a lab VM", &["a", "b", "a"])
        .runs(0, SAMPLES)
        .point_retries(0)
        .kernel("a", KERNEL_A, None)
        .kernel("b", KERNEL_B, Some("aba.kernel=b"))
        .workload(Workload::new("labbench", "labbench 5", Metric::lower("ns")).retries(0))
        .limits(50.0, 50.0)
        .toml()
}

/// The time of the first record of `dir`'s journal that `pick` accepts.
fn first_time(dir: &Path, pick: impl Fn(&Event) -> Option<String>) -> String {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events
        .iter()
        .find_map(pick)
        .unwrap_or_else(|| panic!("no such record in {}", dir.display()))
}

fn point_started(e: &Event) -> Option<String> {
    match e {
        Event::PointStarted { time, .. } => Some(time.clone()),
        _ => None,
    }
}

fn finished(e: &Event) -> Option<String> {
    match e {
        Event::Finished { time } => Some(time.clone()),
        _ => None,
    }
}

#[test]
fn one_recipe_on_two_lab_vms_at_once_with_a_combined_report() {
    let pair = LabPair::start("t-multi");
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = pair.inventory(tmp.path(), "90s");
    let recipe = write(tmp.path(), "r.toml", &recipe("lab-multi"));
    let out = aba(tmp.path(), &run_args(&recipe, &targets, &["east", "west"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let parent = parent_dir(&tmp.path().join("results"));

    // Each machine switched through its own three boots, a, b and a again.
    let mut ids = BTreeSet::new();
    for (name, vm) in [("east", &pair.east), ("west", &pair.west)] {
        let dir = parent.join(name);
        let proven = proven(&dir);
        let releases: Vec<&str> = proven.iter().map(|b| b.1.as_str()).collect();
        assert_eq!(releases, [KERNEL_A, KERNEL_B, KERNEL_A], "{name}");
        ids.extend(proven.into_iter().map(|b| b.2));
        assert_eq!(vm.ssh("uname -r").trim(), KERNEL_A, "{name} ends on a");
        assert_complete(&dir, SAMPLES);
    }
    assert_eq!(ids.len(), 6, "six fresh boots on two machines: {ids:?}");

    // At once: the two campaigns' measuring overlapped.
    let span = |name: &str| {
        let dir = parent.join(name);
        (first_time(&dir, point_started), first_time(&dir, finished))
    };
    let (east, west) = (span("east"), span("west"));
    assert!(
        east.0 < west.1 && west.0 < east.1,
        "not at once: east {east:?}, west {west:?}"
    );

    // The combined report puts the machines side by side; two VMs of one QEMU are one kind
    // of machine, so their results are compared, not labelled apart.
    let report = std::fs::read_to_string(parent.join("report.txt")).expect("report.txt");
    assert_eq!(String::from_utf8_lossy(&out.stdout), report);
    for line in report.lines() {
        assert!(line.chars().count() <= 72, "too wide: {line:?}");
    }
    assert!(
        report.contains("lab-multi on 2 targets: east, west"),
        "{report}"
    );
    assert!(
        report.contains("the same environment fingerprint"),
        "{report}"
    );
    let rows = tsv_rows(&parent);
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (row, name) in rows.iter().zip(["east", "west"]) {
        assert_eq!(row["target"], name);
        assert_eq!(row["series"], "labbench");
        assert_eq!(row["candidate"], "b");
        assert_eq!(row["same_machines"], "yes");
        assert!(!row["verdict"].is_empty(), "{row:?}");
    }
    let verified = aba(tmp.path(), &["verify", parent.to_str().expect("utf-8")]);
    assert!(verified.status.success(), "{}", text(&verified));
}

const PLAN: &str = r#"
version = 1
name = "lab-night"

[[campaign]]
recipe = "first.toml"
targets = ["east", "west"]

[[campaign]]
recipe = "second.toml"
targets = ["east", "west"]
"#;

/// Waits until the batch journal says campaign `n` on `target` ended.
fn wait_for_end(batch: &Path, n: usize, target: &str, limit: Duration) -> Ended {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < limit,
            "#{n} on {target} did not end within {limit:?}"
        );
        if let Ok(journal) = BatchJournal::read(batch)
            && let Some(job) = journal.jobs().get(&(n, target.to_owned()))
            && let Some(ended) = &job.ended
        {
            return ended.0;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_queue_over_two_lab_vms_goes_on_when_one_machine_dies_and_resumes_it() {
    let pair = LabPair::start("t-queue");
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = pair.inventory(tmp.path(), "60s");
    write(tmp.path(), "first.toml", &recipe("first"));
    write(tmp.path(), "second.toml", &recipe("second"));
    let plan = write(tmp.path(), "plan.toml", PLAN);
    let child = spawn_batch(tmp.path(), &plan, &targets);
    let batch = wait_for_batch(tmp.path());

    // West's plug is pulled while its first campaign measures; the machine is back once that
    // campaign has given up (the inventory has no power switch to bring it back sooner).
    let killed_in = batch.join("01-first/west");
    wait_for_samples(&killed_in, 2, Duration::from_secs(300));
    pair.west.kill();
    let ended = wait_for_end(&batch, 1, "west", Duration::from_secs(300));
    assert_eq!(ended, Ended::Stopped);
    pair.west.start_again(KERNEL_A);

    let out = child.wait_with_output().expect("aba batch ends");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let jobs = BatchJournal::read(&batch).expect("journal").jobs();
    let outcome = |n: usize, t: &str| jobs[&(n, t.to_owned())].ended.as_ref().expect("ended").0;
    assert_eq!(outcome(1, "east"), Ended::Finished);
    assert_eq!(outcome(2, "east"), Ended::Finished);
    assert_eq!(outcome(1, "west"), Ended::Stopped);
    assert_eq!(outcome(2, "west"), Ended::Finished);
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains("#1 first on west: stopped"), "{summary}");
    assert!(summary.contains("aba batch resume"), "{summary}");
    let west_state = Journal::read(&killed_in.join("journal.jsonl"))
        .expect("journal")
        .state();
    assert!(!west_state.finished && west_state.stopped.is_some());
    let dirs = [
        "01-first/east",
        "01-first/west",
        "02-second/east",
        "02-second/west",
    ];
    for dir in dirs {
        assert_complete(&batch.join(dir), SAMPLES);
    }
    // East's first campaign ran while west was down and came back.
    let spans = spans(&batch);
    let east = &spans[&(1, "east".to_owned())];
    let west = &spans[&(1, "west".to_owned())];
    assert!(east.0 < west.1 && west.0 < east.1, "{east:?} {west:?}");

    let resumed = resume_batch(tmp.path(), &batch, &targets);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains(": 4 finished."), "{summary}");
    for dir in dirs {
        assert!(
            Journal::read(&batch.join(dir).join("journal.jsonl"))
                .expect("journal")
                .state()
                .finished,
            "{dir}"
        );
        assert_complete(&batch.join(dir), SAMPLES);
    }
    let proven = proven(&killed_in);
    let releases: BTreeSet<&str> = proven.iter().map(|b| b.1.as_str()).collect();
    assert_eq!(releases, BTreeSet::from([KERNEL_A, KERNEL_B]), "{proven:?}");
}

/// `aba run` on the VM's kexec target into `results` with `extra` options, in the background.
fn spawn_into(tmp: &Path, recipe: &Path, targets: &Path, results: &str, extra: &[&str]) -> Child {
    aba_command(tmp)
        .arg("run")
        .arg(recipe)
        .arg("--targets")
        .arg(targets)
        .args(["--target", "kexec", "--results", results])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aba run starts")
}

fn samples_done(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::Sample { .. }))
}

fn campaigns(results: &Path) -> usize {
    std::fs::read_dir(results).map_or(0, |d| d.filter(|e| e.is_ok()).count())
}

#[test]
fn a_second_campaign_on_a_lab_vm_refuses_or_waits_and_a_killed_ones_lock_is_reported() {
    let vm = LabVm::start("t-lock", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory_with_timeout(tmp.path(), "90s", "");
    let recipe = write(tmp.path(), "r.toml", &recipe("lab-lock"));

    // A second campaign while the first measures: refused at once, naming the first.
    let first = spawn_run_on(tmp.path(), &recipe, &targets, "kexec");
    let first_dir = wait_for_journal(
        &tmp.path().join("results"),
        Duration::from_secs(300),
        "the first campaign's first sample",
        samples_done,
    );
    let out = run_on(tmp.path(), &recipe, &targets, "kexec", "results-second");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is in use by campaign"), "{stderr}");
    let first_name = first_dir.file_name().expect("name").to_string_lossy();
    assert!(stderr.contains(first_name.as_ref()), "{stderr}");
    assert!(stderr.contains(&format!("pid {}", first.id())), "{stderr}");
    assert!(stderr.contains("--wait"), "{stderr}");
    assert_eq!(campaigns(&tmp.path().join("results-second")), 0);

    // With --wait, a third starts measuring once the first has finished.
    let waiting = spawn_into(tmp.path(), &recipe, &targets, "results-waited", &["--wait"]);
    let first = first.wait_with_output().expect("first ends");
    assert!(first.status.success(), "{}", text(&first));
    let waited = waiting.wait_with_output().expect("the waiting one ends");
    assert!(waited.status.success(), "{}", text(&waited));
    let waited_dir = campaign_dir(&tmp.path().join("results-waited"));
    let first_end = first_time(&first_dir, finished);
    let waited_start = first_time(&waited_dir, point_started);
    assert!(waited_start >= first_end, "{waited_start} < {first_end}");
    for dir in [&first_dir, &waited_dir] {
        assert_complete(dir, SAMPLES);
        assert_eq!(proven(dir).len(), 3);
    }
    assert_eq!(
        vm.ssh("if [ -e /var/lib/aba/lock ]; then echo held; else echo free; fi")
            .trim(),
        "free",
        "the marker was released at the end"
    );

    // A runner SIGKILLed mid-campaign leaves its marker on the machine: the next campaign
    // refuses, saying how to resume or release it; the killed campaign takes it back.
    let mut killed = spawn_into(tmp.path(), &recipe, &targets, "results-killed", &[]);
    let killed_dir = wait_for_journal(
        &tmp.path().join("results-killed"),
        Duration::from_secs(300),
        "a sample of the campaign to kill",
        samples_done,
    );
    signal(killed.id(), libc::SIGKILL);
    let _ = killed.wait();
    let out = run_on(tmp.path(), &recipe, &targets, "kexec", "results-other");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("whose process is gone"), "{stderr}");
    assert!(stderr.contains("aba unlock --target kexec"), "{stderr}");
    assert!(stderr.contains("aba resume"), "{stderr}");
    assert_eq!(campaigns(&tmp.path().join("results-other")), 0);
    let resumed = resume(tmp.path(), &killed_dir, Some(&targets), &[]);
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_complete(&killed_dir, SAMPLES);
    assert_verified(&killed_dir);
}
