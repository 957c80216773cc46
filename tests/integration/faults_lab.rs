//! Overnight faults on real kernels in the QEMU lab: a kernel that panics, a kernel that hangs,
//! a runner SIGKILLed mid-point, and a target that reboots on its own.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use aba::results::{
    journal::{Event, Journal},
    samples::{Phase, SampleTable, Status},
};

use crate::support::{
    cli::{
        aba, assert_verified, campaign_dir, journal_events as events, resume, run_on,
        samples_since_start_of, spawn_run_on, text, wait_for_journal, write,
    },
    lab::{KERNEL_A, KERNEL_B, LabVm, console_tail},
    recipe::{Metric, Recipe, Workload},
};

fn recipe(kernel_b_cmdline: &str, samples: u32, run: &str, point_retries: u32) -> String {
    lab_faults(kernel_b_cmdline, samples, run, point_retries).toml()
}

/// [`recipe`] as data, for a test that changes it further.
fn lab_faults(kernel_b_cmdline: &str, samples: u32, run: &str, point_retries: u32) -> Recipe {
    Recipe::new("lab-faults", "fault injection in the lab", &["a", "b", "a"])
        .runs(0, samples)
        .point_retries(point_retries)
        .kernel("a", KERNEL_A, None)
        .kernel("b", KERNEL_B, Some(kernel_b_cmdline))
        .workload(Workload::new("labbench", run, Metric::lower("ns")))
}

#[test]
fn a_kernel_that_panics_falls_back_and_stops_the_campaign_naming_it() {
    let vm = LabVm::start("t-panic", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let r = write(
        tmp.path(),
        "r.toml",
        &recipe("aba.kernel=b rdinit=/nonexistent", 2, "labbench 5", 1),
    );
    let out = run_on(tmp.path(), &r, &targets, "kexec", "results");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "kernel `b` ({KERNEL_B}) failed 2 times, at point `b`"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "the target runs {KERNEL_A}, not {KERNEL_B} (uname -r)"
        )),
        "the default kernel answered, and the proof caught it: {stderr}"
    );
    assert!(stderr.contains("from the console log"), "{stderr}");
    assert!(
        !stderr.contains("kex_exchange_identification"),
        "probe noise is left out: {stderr}"
    );
    assert!(
        stderr.contains("Kernel panic"),
        "the console tail shows the panic: {stderr}"
    );
    assert_eq!(
        stderr.matches("Kernel panic - not syncing").count(),
        1,
        "only the last attempt's boot is quoted, not attempt 1's panic: {stderr}"
    );

    let dir = campaign_dir(&tmp.path().join("results"));
    let state = Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    assert_eq!(state.point("a-a").and_then(|p| p.done), Some(1));
    assert_eq!(state.point("b").map(|p| p.failures.len()), Some(2));
    assert!(state.stopped.is_some());
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    assert!(
        !table.rows.iter().any(|r| table.text(r.point) == "b"),
        "no sample on a failed boot"
    );
    // Still a resumable campaign.
    let status = aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]);
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("state: stopped"),
        "{}",
        text(&status)
    );
    assert_verified(&dir);

    // The recipe caused the stop: fixed, the campaign continues (issue 19). Kernel a's
    // definition may not change (point a-a is finished); kernel b's command line may.
    let resume_with = |fixed: &Path| {
        resume(
            tmp.path(),
            &dir,
            Some(&targets),
            &["--amend", fixed.to_str().expect("utf-8")],
        )
    };
    let touches_a = write(
        tmp.path(),
        "touches-a.toml",
        &lab_faults("aba.kernel=b rdinit=/nonexistent", 2, "labbench 5", 1)
            .kernel("a", KERNEL_A, Some("x=1"))
            .toml(),
    );
    let refused = resume_with(&touches_a);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("point `a-a` is finished"),
        "{}",
        text(&refused)
    );
    let fixed = write(
        tmp.path(),
        "fixed.toml",
        &recipe("aba.kernel=b", 2, "labbench 5", 1),
    );
    let out = resume_with(&fixed);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("amended: kernel `b`: cmdline"),
        "{}",
        text(&out)
    );
    let events = events(&dir);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Amended { changes, .. } if changes.len() == 1)),
        "{events:?}"
    );
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report");
    assert!(
        report.contains("Amended"),
        "the report says so at the top: {report}"
    );
    assert_verified(&dir);
}

/// A kernel that hangs as it boots, with the runner SIGKILLed while it hangs: `aba resume`
/// finds the target dead, power-cycles it (it would have, had it lived), takes the lock,
/// redoes the point, waits out the boot timeout once more, power-cycles again and stops
/// naming the kernel. Nothing is lost and both power cycles are journaled.
#[test]
fn a_kernel_that_hangs_is_power_cycled_after_the_boot_timeout_even_after_a_killed_runner() {
    let vm = LabVm::start("t-hang", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    // Long enough for a power-cycled boot and its login beside another emulated guest.
    let targets = vm.inventory_with_timeout(tmp.path(), "60s", "");
    // panic=0: wait forever after the panic, like a machine whose kernel never comes up.
    let r = write(
        tmp.path(),
        "r.toml",
        &recipe("rdinit=/nonexistent panic=0", 2, "labbench 5", 0),
    );
    let mut child = spawn_run_on(tmp.path(), &r, &targets, "kexec");
    let results = tmp.path().join("results");
    let dir = wait_for_journal(
        &results,
        Duration::from_secs(600),
        "the switch to point b",
        |events| {
            events
                .iter()
                .any(|e| matches!(e, Event::Switching { point, .. } if point == "b"))
        },
    );
    // The kexec is under way or done: kernel b hangs from here on.
    std::thread::sleep(Duration::from_secs(10));
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    let started = Instant::now();
    let out = resume(tmp.path(), &dir, Some(&targets), &[]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 40)
    );
    assert!(
        started.elapsed() > Duration::from_secs(60),
        "the boot timeout was not waited out"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("did not answer when the campaign was resumed"),
        "{stderr}"
    );
    assert!(stderr.contains("after a power cycle"), "{stderr}");
    assert!(
        stderr.contains(&format!("the target runs {KERNEL_A}, not {KERNEL_B}")),
        "{stderr}"
    );
    let warnings: Vec<String> = events(&dir)
        .into_iter()
        .filter_map(|e| match e {
            Event::Warning { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert!(
        warnings
            .iter()
            .any(|t| t.contains("power-cycle command `") && t.contains("power-cycle.sh")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|t| t
            .contains("the boot did not come back; the power-cycle command `")
            && t.ends_with("` was used")),
        "{warnings:?}"
    );
    assert!(vm.console_log().is_file());
    assert_verified(&dir);
}

#[test]
fn a_sigkilled_runner_resumes_the_point_from_a_fresh_boot() {
    let vm = LabVm::start("t-sigkill", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let r = write(
        tmp.path(),
        "r.toml",
        &recipe("aba.kernel=b", 4, "sleep 1; labbench 5", 1),
    );
    let mut child = spawn_run_on(tmp.path(), &r, &targets, "kexec");
    let results = tmp.path().join("results");
    let dir = wait_for_journal(
        &results,
        Duration::from_secs(600),
        "samples at point b",
        |events| samples_since_start_of(events, "b") >= 2,
    );
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    let out = resume(tmp.path(), &dir, Some(&targets), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let events = events(&dir);
    let boots: Vec<(String, u32, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::BootProven {
                point,
                attempt,
                boot_id,
                ..
            } => Some((point.clone(), *attempt, boot_id.clone())),
            _ => None,
        })
        .collect();
    let b: Vec<&(String, u32, String)> = boots.iter().filter(|x| x.0 == "b").collect();
    assert_eq!(b.len(), 2, "{boots:?}");
    assert_ne!(b[0].2, b[1].2, "point b was redone from a fresh boot");
    assert_eq!(
        boots.iter().filter(|x| x.0 == "a-a").count(),
        1,
        "the finished point was kept"
    );
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let b1: Vec<_> = table
        .rows
        .iter()
        .filter(|r| table.text(r.point) == "b" && r.attempt == 1)
        .collect();
    assert!(
        !b1.is_empty(),
        "the killed attempt's rows stay in the raw data"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::PointDiscarded { point, attempt: 1, rows } if point == "b" && *rows == b1.len() as u64
        )),
        "resume journals that the killed attempt's rows do not count"
    );
    for (point, attempt) in [("a-a", 1), ("b", 2), ("a-b", 1)] {
        let indices: Vec<u32> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point
                    && r.attempt == attempt
                    && r.phase == Phase::Sample
                    && r.status == Status::Ok
            })
            .map(|r| r.index)
            .collect();
        assert_eq!(indices, [1, 2, 3, 4], "{point}");
    }
    assert_verified(&dir);
}

#[test]
fn a_target_that_reboots_on_its_own_gets_the_point_redone() {
    let vm = LabVm::start("t-reboot", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let r = write(
        tmp.path(),
        "r.toml",
        &recipe("aba.kernel=b", 4, "sleep 1; labbench 5", 1),
    );
    let child = spawn_run_on(tmp.path(), &r, &targets, "kexec");
    let results = tmp.path().join("results");
    wait_for_journal(
        &results,
        Duration::from_secs(600),
        "a sample at point a-a",
        |events| events.iter().any(|e| matches!(e, Event::Sample { .. })),
    );
    // The machine reboots behind aba's back (busybox reboot: the default kernel comes back).
    // Detached, so the ssh that asks for it returns at once instead of hanging on a dead peer.
    vm.ssh(&aba::target::quote::detached("sleep 0.3; reboot -f"));
    let out = child.wait_with_output().expect("aba finishes");
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&results);
    let events = events(&dir);
    // On a loaded host the login that asks for the reboot can take long enough for a-a to
    // finish first: the reboot then hits a later point, which must be redone the same way.
    let hit = events
        .iter()
        .find_map(|e| match e {
            Event::PointFailed {
                point, attempt: 1, ..
            } => Some(point.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a point failed when the target rebooted: {events:?}"));
    assert!(
        events.iter().any(|e| matches!(e, Event::ConnectionLost { point, same_boot: Some(false), .. } if *point == hit)),
        "the new boot_id was noticed: {events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PointDone { point, attempt: 2, .. } if *point == hit))
    );
    // The retried point and every later point keep all their rows (the samples of a retry
    // within one run were once written to a deleted samples.csv).
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    for point in ["a-a", "b", "a-b"] {
        let attempt = if point == hit { 2 } else { 1 };
        let indices: Vec<u32> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point
                    && r.attempt == attempt
                    && r.phase == Phase::Sample
                    && r.status == Status::Ok
            })
            .map(|r| r.index)
            .collect();
        assert_eq!(indices, [1, 2, 3, 4], "{point} attempt {attempt}");
    }
    assert_verified(&dir);
}

/// The loss of issue 19 in the lab: point `b` fails at its second sample at attempt 1 only, is
/// redone from a fresh boot in the same run, and every row of the retry and of the following
/// point lands in samples.csv.
#[test]
fn a_workload_that_fails_once_is_retried_in_the_same_run_with_every_row_kept() {
    let vm = LabVm::start("t-retry", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let fails_once = r#"if [ "$ABA_POINT/$ABA_ATTEMPT/$ABA_PHASE/$ABA_SAMPLE" = b/1/sample/2 ]; then exit 1; fi; labbench 5"#;
    let r = Recipe::new(
        "lab-retry-in-run",
        "point b fails once after a sample, then succeeds",
        &["a", "b", "a"],
    )
    .runs(1, 3)
    .point_retries(1)
    .kernel("a", KERNEL_A, None)
    .kernel("b", KERNEL_B, Some("aba.kernel=b"))
    .workload(Workload::new("labbench", fails_once, Metric::lower("ns")).retries(0))
    .write(tmp.path(), "r.toml");
    let out = run_on(tmp.path(), &r, &targets, "kexec", "results");
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let events = events(&dir);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PointFailed { point, attempt: 1, .. } if point == "b"))
    );
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    for (point, attempt) in [("a-a", 1), ("b", 2), ("a-b", 1)] {
        let rows: Vec<(Phase, u32)> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point && r.attempt == attempt && r.status == Status::Ok
            })
            .map(|r| (r.phase, r.index))
            .collect();
        assert_eq!(
            rows,
            [
                (Phase::Warmup, 1),
                (Phase::Sample, 1),
                (Phase::Sample, 2),
                (Phase::Sample, 3)
            ],
            "{point} attempt {attempt}"
        );
    }
    assert_verified(&dir);
}
