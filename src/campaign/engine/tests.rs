//! The engine's policy over a scripted machine ([`crate::target::scripted`]): retries, lost
//! connections on the same boot and on a new one, giving up, host keys, resume discarding an
//! open attempt, and journal and samples.csv writes that fail. The same paths run against a
//! real sshd and the QEMU lab in the integration tests.

use std::{path::Path, time::Duration};

use super::{Engine, Failure, Job, Outcome, Start, Stop};
use crate::{
    campaign::{
        eta::Eta,
        events::{CampaignEvent, Recorder, Warning},
        lock::TargetLock,
        plan::Plan,
    },
    causes::one_line,
    inventory::Target,
    kernel::switch::{Switch, kexec::Kexec},
    recipe::{Recipe, parse},
    results::{
        journal::{Event, Journal, JournalWriter},
        layout::ResultsDir,
        samples::{Phase, SampleTable, Status},
        verify::{Scope, verify},
    },
    stats::sequential::{ComparisonState, Decision},
    target::scripted::{Call, Reconnect, Run, Scripted},
};

/// Two points of the running kernel (`a-a`, `a-b`), two samples each, no warm-up.
fn null_recipe(point_retries: u32, retries: u32) -> String {
    format!(
        r#"
version = 1
name = "policy"
description = "the engine's policy"
sequence = ["a", "a"]
warmup = 0
samples = 2
point_retries = {point_retries}

[kernels.a]
release = "running"

[[workload]]
name = "w"
run = "bench"
retries = {retries}
metric = {{ number = true, better = "lower" }}
"#
    )
}

/// A kexec A-B-A of two releases.
const KEXEC_RECIPE: &str = r#"
version = 1
name = "kexec-policy"
description = "a kexec A-B-A"
sequence = ["a", "b", "a"]
warmup = 0
samples = 1

[kernels.a]
release = "6.1.0-47"
[kernels.b]
release = "6.1.0-50"

[[workload]]
name = "w"
run = "bench"
metric = { number = true, better = "lower" }
"#;

/// A results directory for `recipe` on `target`.
struct Campaign {
    _tmp: tempfile::TempDir,
    dir: ResultsDir,
    recipe: Recipe,
    plan: Plan,
    target: Target,
    /// The target's lock, when a test gives the campaign one (a marker to claim per boot).
    lock: Option<TargetLock>,
}

impl Campaign {
    fn new(recipe: &str, target: Target) -> Campaign {
        let tmp = tempfile::tempdir().expect("tempdir");
        let recipe = parse(Path::new("recipe.toml"), recipe).expect("valid recipe");
        let dir = ResultsDir::create(tmp.path(), &recipe, "t").expect("results dir");
        let plan = Plan::new(&recipe, &target).expect("plannable");
        Campaign {
            _tmp: tmp,
            dir,
            recipe,
            plan,
            target,
            lock: None,
        }
    }

    /// This campaign with a lock whose marker lives at `/var/lib/aba/lock` on the machine.
    fn locked(mut self) -> Campaign {
        self.lock = Some(TargetLock::for_engine_tests(
            self._tmp.path(),
            "/var/lib/aba/lock",
        ));
        self
    }

    fn job(&self) -> Job<'_> {
        Job {
            recipe: &self.recipe,
            plan: &self.plan,
            target: &self.target,
            dir: &self.dir,
            lock: self.lock.as_ref(),
            records: &[],
        }
    }

    /// Runs a new campaign on `machine`; `fail_after` makes the journal's writes fail after
    /// that many more records.
    fn run(&self, machine: &mut Scripted, fail_after: Option<usize>) -> (Outcome, Recorder) {
        let mut events = Recorder::default();
        let journal = JournalWriter::open(&self.dir.journal_path()).expect("journal");
        let mut engine =
            Engine::create_with(self.job(), machine, &mut events, journal).expect("starts");
        engine.journal.fail_after = fail_after;
        let outcome = engine.run();
        (outcome, events)
    }

    fn resume(&self, machine: &mut Scripted) -> (Outcome, Recorder) {
        let mut events = Recorder::default();
        let outcome = Engine::open(
            self.job(),
            Start::Resume,
            machine,
            &mut events,
            &Default::default(),
        )
        .expect("resumes")
        .run();
        (outcome, events)
    }

    fn events(&self) -> Vec<Event> {
        Journal::read(&self.dir.journal_path())
            .expect("the journal stays readable")
            .events
    }

    fn rows(&self) -> SampleTable {
        SampleTable::read(&self.dir.samples_path()).expect("samples.csv stays readable")
    }

    /// Every journaled run has its rows and every finished attempt exactly its samples.
    fn assert_verified(&self) {
        let found = verify(
            &self.recipe,
            &self.dir.journal_path(),
            &self.dir.samples_path(),
            Scope::All,
        )
        .expect("verifiable");
        assert!(found.is_clean(), "{}", found.describe());
    }

    /// Valid sample rows of `point`'s attempt `attempt`.
    fn ok_samples(&self, point: &str, attempt: u32) -> usize {
        let t = self.rows();
        t.rows
            .iter()
            .filter(|r| {
                t.text(r.point) == point
                    && r.attempt == attempt
                    && r.status == Status::Ok
                    && r.phase == Phase::Sample
            })
            .count()
    }
}

fn assert_finished(outcome: &Outcome) {
    match outcome {
        Outcome::Finished => {}
        Outcome::Stopped(stop) => panic!("stopped: {stop}"),
        Outcome::Interrupted => panic!("interrupted"),
    }
}

fn stopped(outcome: Outcome) -> Stop {
    match outcome {
        Outcome::Stopped(stop) => stop,
        other => panic!("expected a stop, got {other:?}"),
    }
}

/// The campaign stopped at the first attempt because the scripted host key changed.
fn assert_stopped_on_the_changed_host_key(stop: &Stop) {
    assert!(
        matches!(
            stop,
            Stop::Point {
                attempt: 1,
                cause: Failure::HostKey { .. },
                ..
            }
        ),
        "{stop:?}"
    );
    assert!(
        stop.to_string().contains("CHANGED to SHA256:scripted"),
        "{stop}"
    );
}

/// A run that fails is retried (same index, next retry number); both runs are journaled and
/// have their rows; only the retry's value counts.
#[test]
fn a_failed_run_is_retried_and_only_its_retry_counts() {
    let c = Campaign::new(&null_recipe(0, 1), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.runs = [Run::Exits(3)].into();
    let (outcome, events) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let runs: Vec<(u32, u32, Status)> = c
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Sample {
                point,
                index,
                retry,
                status,
                ..
            } if point == "a-a" => Some((*index, *retry, *status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        runs,
        [
            (1, 0, Status::Failed),
            (1, 1, Status::Ok),
            (2, 0, Status::Ok)
        ]
    );
    assert!(events.0.iter().any(|e| matches!(
        e,
        CampaignEvent::Warning(Warning::Retrying {
            retry: 1,
            retries: 1,
            ..
        })
    )));
    assert_eq!((c.ok_samples("a-a", 1), c.ok_samples("a-b", 1)), (2, 2));
    assert_eq!(machine.workload_runs(), 5);
    c.assert_verified();
}

/// A connection lost during a run, with the same boot after reconnecting: the run is
/// repeated, no row is written for the lost one, and the point is not redone.
#[test]
fn a_connection_lost_on_the_same_boot_repeats_the_run() {
    let c = Campaign::new(&null_recipe(0, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.runs = [Run::Prints("1\n".into()), Run::Lost].into();
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let journal = c.events();
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::ConnectionLost { point, attempt: 1, same_boot: Some(true), .. } if point == "a-a"
    )));
    assert!(
        !journal
            .iter()
            .any(|e| matches!(e, Event::PointFailed { .. }))
    );
    assert_eq!((c.ok_samples("a-a", 1), c.ok_samples("a-b", 1)), (2, 2));
    assert_eq!(c.rows().rows.len(), 4, "no row for the lost run");
    assert_eq!(machine.workload_runs(), 5);
    c.assert_verified();
}

/// A connection lost while the lock marker is checked after a boot (CI saw it when sshd was
/// restarted with a new host key at that moment): a lost connection like any other, so aba
/// reconnects, finds the same boot, checks the marker again and measures the point, instead
/// of failing it as a lock it could not check.
#[test]
fn a_connection_lost_while_the_lock_marker_is_checked_reconnects_and_checks_again() {
    let c = Campaign::new(&null_recipe(0, 0), Target::local()).locked();
    let mut machine = Scripted::new("6.1.0-47");
    machine.lose_on = ["/var/lib/aba/lock".to_owned()].into();
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let journal = c.events();
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::ConnectionLost { point, attempt: 1, same_boot: Some(true), .. } if point == "a-a"
    )));
    assert!(
        !journal
            .iter()
            .any(|e| matches!(e, Event::PointFailed { .. })),
        "{journal:?}"
    );
    let claims = machine
        .log
        .iter()
        .filter(|c| matches!(c, Call::Exec(cmd) if cmd.contains("/var/lib/aba/lock") && cmd.contains("set -C")))
        .count();
    assert_eq!(claims, 3, "a-a claims twice (lost, then again), a-b once");
    assert_eq!((c.ok_samples("a-a", 1), c.ok_samples("a-b", 1)), (2, 2));
    c.assert_verified();
}

/// A connection lost while the marker is checked and a new host key on reconnecting: aba
/// stops at once, as after any lost connection, rather than failing the point.
#[test]
fn a_new_host_key_after_a_loss_during_the_marker_check_stops_at_once() {
    let c = Campaign::new(&null_recipe(2, 0), Target::local()).locked();
    let mut machine = Scripted::new("6.1.0-47");
    machine.lose_on = ["/var/lib/aba/lock".to_owned()].into();
    machine.reconnects = [Reconnect::SameBoot, Reconnect::HostKeyChanged].into();
    let (outcome, _) = c.run(&mut machine, None);
    assert_stopped_on_the_changed_host_key(&stopped(outcome));
    assert!(
        !c.events()
            .iter()
            .any(|e| matches!(e, Event::PointFailed { .. } | Event::PointDone { .. })),
        "no point failed or done: {:?}",
        c.events()
    );
    assert_eq!(machine.workload_runs(), 0);
}

/// A connection lost during a run, and another boot answers: the machine rebooted on its own,
/// so the point fails and is redone from the new boot, whose facts its rows carry.
#[test]
fn a_new_boot_after_a_lost_connection_redoes_the_point() {
    let c = Campaign::new(&null_recipe(1, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.runs = [Run::Prints("1\n".into()), Run::Lost].into();
    // The first connection finds the boot that is up; the reconnect after the loss, another.
    machine.reconnects = [Reconnect::SameBoot, Reconnect::NewBoot].into();
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let journal = c.events();
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::ConnectionLost {
            same_boot: Some(false),
            ..
        }
    )));
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::PointFailed { point, attempt: 1, reason, .. }
            if point == "a-a" && reason.contains("rebooted on its own")
    )));
    assert!(
        journal
            .iter()
            .any(|e| matches!(e, Event::PointDone { point, attempt: 2, .. } if point == "a-a"))
    );
    let t = c.rows();
    assert!(
        t.rows
            .iter()
            .filter(|r| r.attempt == 2)
            .all(|r| t.text(r.boot_id) == "boot-1"),
        "the redone point's rows carry the new boot"
    );
    assert_eq!((c.ok_samples("a-a", 2), c.ok_samples("a-b", 1)), (2, 2));
    c.assert_verified();
}

/// A target that does not come back after a lost connection fails the point with why the
/// reconnect failed; with no point retries left, the kernel's report stops the campaign.
#[test]
fn a_target_that_does_not_come_back_fails_the_point_and_names_why() {
    let c = Campaign::new(&null_recipe(0, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.runs = [Run::Lost].into();
    machine.reconnects = [Reconnect::SameBoot, Reconnect::Unreachable].into();
    let (outcome, _) = c.run(&mut machine, None);
    let stop = stopped(outcome);
    let text = stop.to_string();
    assert!(
        text.contains("lost the target during point a-a (scripted loss) and could not reconnect: reconnecting: cannot connect to root@scripted:22: connection refused (scripted)"),
        "{text}"
    );
    assert!(matches!(stop, Stop::Kernel(_)), "{stop:?}");
    assert!(c.events().iter().any(|e| matches!(
        e,
        Event::ConnectionLost {
            same_boot: None,
            ..
        }
    )));
    c.assert_verified();
}

/// A kernel whose points keep failing is given up after `point_retries` more attempts: the
/// report names every failure, and no later point is started.
#[test]
fn a_kernel_that_keeps_failing_is_given_up_after_its_point_retries() {
    let c = Campaign::new(&null_recipe(1, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.default_run = Run::Exits(7);
    let (outcome, events) = c.run(&mut machine, None);
    let Stop::Kernel(report) = stopped(outcome) else {
        panic!("a kernel report");
    };
    assert_eq!(report.failures.len(), 2);
    assert!(matches!(report.last, Failure::Run { .. }));
    let text = report.to_string();
    assert!(
        text.starts_with("kernel `a` (running) failed 2 times, at point `a-a`:\n  - point `a-a` attempt 1: workload `w` at point `a-a` (sample 1): exit status 7 (expected exit status 0); raw output saved in "),
        "{text}"
    );
    assert!(text.contains("\n  - point `a-a` attempt 2: "), "{text}");
    let journal = c.events();
    assert_eq!(
        journal
            .iter()
            .filter(|e| matches!(e, Event::PointFailed { .. }))
            .count(),
        2
    );
    assert!(
        !journal
            .iter()
            .any(|e| matches!(e, Event::PointStarted { point, .. } if point == "a-b"))
    );
    let retried: Vec<bool> = events
        .0
        .iter()
        .filter_map(|e| match e {
            CampaignEvent::PointFailed { retry, .. } => Some(*retry),
            _ => None,
        })
        .collect();
    assert_eq!(retried, [true, false]);
    assert!(
        journal
            .iter()
            .any(|e| matches!(e, Event::Stopped { reason, .. } if *reason == text))
    );
    c.assert_verified();
}

/// A changed host key met while reconnecting stops the campaign at once: no retry, and no
/// command is sent to the target afterwards.
#[test]
fn a_changed_host_key_stops_at_once_and_sends_nothing_more() {
    let c = Campaign::new(&null_recipe(3, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.runs = [Run::Lost].into();
    machine.reconnects = [Reconnect::SameBoot, Reconnect::HostKeyChanged].into();
    let (outcome, _) = c.run(&mut machine, None);
    assert_stopped_on_the_changed_host_key(&stopped(outcome));
    assert!(
        !c.events()
            .iter()
            .any(|e| matches!(e, Event::PointFailed { .. }))
    );
    let refused = machine
        .log
        .iter()
        .rposition(|call| *call == Call::Reconnect)
        .expect("reconnected");
    assert!(
        !machine.log[refused..]
            .iter()
            .any(|call| matches!(call, Call::Exec(_) | Call::Upload(_))),
        "{:?}",
        &machine.log[refused..]
    );
}

/// The journal fills up in the middle of the second point: the campaign stops (a full disk,
/// typed), the journal stays readable, and resume discards the attempt that was left open
/// (naming its rows) and redoes it, with every sample exactly once.
#[test]
fn a_journal_write_that_fails_stops_cleanly_and_resume_redoes_the_open_attempt() {
    let c = Campaign::new(&null_recipe(1, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    // After the header: point_started, boot_proven, sample, sample, point_done of a-a, then
    // point_started, boot_proven and one sample of a-b.
    let (outcome, _) = c.run(&mut machine, Some(8));
    let stop = stopped(outcome);
    let Some(Failure::Journal(e)) = stop.failure() else {
        panic!("a journal failure: {stop:?}");
    };
    assert!(one_line(e).contains("No space left on device"), "{stop}");
    assert!(
        matches!(&stop, Stop::Unrecorded { .. }),
        "the stop could not be journaled either: {stop}"
    );
    let state = Journal::read(&c.dir.journal_path())
        .expect("readable")
        .state();
    assert_eq!(state.point("a-a").and_then(|p| p.done), Some(1));
    assert_eq!(state.point("a-b").and_then(|p| p.open), Some(1));

    let mut machine = Scripted::new("6.1.0-47");
    let (outcome, _) = c.resume(&mut machine);
    assert_finished(&outcome);
    let journal = c.events();
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::PointDiscarded { point, attempt: 1, rows: 2 } if point == "a-b"
    )));
    assert_eq!((c.ok_samples("a-a", 1), c.ok_samples("a-b", 2)), (2, 2));
    c.assert_verified();
}

/// samples.csv fills up: the point stops before its run is journaled (rows come first), and
/// resume completes the campaign.
#[test]
fn a_samples_write_that_fails_stops_cleanly_and_resumes() {
    let c = Campaign::new(&null_recipe(1, 0), Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    let mut events = Recorder::default();
    let journal = JournalWriter::open(&c.dir.journal_path()).expect("journal");
    let mut engine =
        Engine::create_with(c.job(), &mut machine, &mut events, journal).expect("starts");
    engine.samples.fail_after = Some(3);
    let stop = stopped(engine.run());
    assert!(
        matches!(
            &stop,
            Stop::Point {
                cause: Failure::Samples(_),
                ..
            }
        ),
        "{stop:?}"
    );
    assert!(
        stop.to_string().contains("No space left on device"),
        "{stop}"
    );
    assert_eq!(
        c.events()
            .iter()
            .filter(|e| matches!(e, Event::Sample { .. }))
            .count(),
        3,
        "the run whose rows were not written is not journaled"
    );
    let (outcome, _) = c.resume(&mut Scripted::new("6.1.0-47"));
    assert_finished(&outcome);
    assert_eq!((c.ok_samples("a-a", 1), c.ok_samples("a-b", 2)), (2, 2));
    c.assert_verified();
}

/// A kexec A-B-A: every boot is proven fresh; a kernel that comes up as another release (its
/// panic fell back to the default kernel) fails its point, which is redone from a new switch.
#[test]
fn a_kexec_campaign_proves_each_boot_and_redoes_a_point_that_booted_another_release() {
    let c = Campaign::new(KEXEC_RECIPE, kexec_lab());
    let mut machine = Scripted::new("6.1.0-47");
    // a-a boots as asked; b's first boot falls back to the default 6.1.0-47; then each boots
    // its own.
    machine.boots_instead = [None, Some("6.1.0-47".to_owned())].into();
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let journal = c.events();
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::PointFailed { point, attempt: 1, reason, .. }
            if point == "b" && reason.contains("the target runs 6.1.0-47, not 6.1.0-50 (uname -r)")
    )));
    let proven: Vec<(String, String)> = journal
        .iter()
        .filter_map(|e| match e {
            Event::BootProven {
                point,
                boot_id,
                release,
                ..
            } => Some((point.clone(), format!("{boot_id} {release}"))),
            _ => None,
        })
        .collect();
    assert_eq!(
        proven,
        [
            ("a-a".into(), "boot-1 6.1.0-47".into()),
            ("b".into(), "boot-3 6.1.0-50".into()),
            ("a-b".into(), "boot-4 6.1.0-47".into()),
        ]
    );
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::Switching { method, .. } if method.name() == "kexec"
    )));
    assert!(journal.iter().any(|e| matches!(
        e,
        Event::BaseCmdline { cmdline } if cmdline == "console=ttyS0 quiet"
    )));
    c.assert_verified();
}

/// Kernel warnings count from the boot (issue 37, item 1): a WARNING each boot logs while it
/// comes up is its point's, as is one a run logs; the note quotes exactly the new lines, so
/// its count is the number of lines it quotes, and no point quotes another boot's line.
#[test]
fn kernel_warnings_count_from_the_boot_and_the_note_quotes_exactly_the_new_lines() {
    let c = Campaign::new(KEXEC_RECIPE, kexec_lab());
    let mut machine = Scripted::new("6.1.0-47");
    let at_boot = "[    1.5] WARNING: CPU: 0 PID: 1 at drivers/x.c:10 probe";
    machine.dmesg_at_boot = vec![at_boot.to_owned()];
    machine.dmesg_per_run = Some("WARNING: CPU: 1 PID: 99 at mm/y.c:20 run".to_owned());
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let journal = c.events();
    let counted: Vec<u32> = journal
        .iter()
        .filter_map(|e| match e {
            Event::PointDone { dmesg_warnings, .. } => Some(*dmesg_warnings),
            _ => None,
        })
        .collect();
    // One boot warning and one per run (samples = 1), at each of the three points.
    assert_eq!(counted, [2, 2, 2]);
    let notes: Vec<&str> = journal
        .iter()
        .filter_map(|e| match e {
            Event::Warning { text, .. } if text.contains("in dmesg") => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 3, "{notes:?}");
    for note in notes {
        assert!(note.starts_with("2 new kernel warning line(s)"), "{note}");
        assert_eq!(note.matches(at_boot).count(), 1, "{note}");
        assert_eq!(note.matches("WARNING:").count(), 2, "{note}");
    }
    c.assert_verified();
}

/// A target that switches by kexec, for [`KEXEC_RECIPE`].
fn kexec_lab() -> Target {
    Target {
        name: "lab".to_owned(),
        switch: Switch::Kexec(Kexec),
        boot_timeout: std::time::Duration::from_secs(30),
        ..Target::local()
    }
}

/// One engine per target can run in its own thread.
#[test]
fn an_engine_and_its_observer_can_move_to_another_thread() {
    fn send<T: Send>() {}
    send::<Engine<'static>>();
    send::<Recorder>();
}

/// A required tuning knob the machine lacks stops the point before any sample, on every
/// machine (the SSH test can show it only where cpufreq is absent); the hint names
/// `[tuning] optional`.
#[test]
fn a_missing_required_knob_stops_before_any_sample_with_the_fix() {
    let recipe = null_recipe(0, 0) + "\n[tuning]\ngovernor = \"performance\"\n";
    let c = Campaign::new(&recipe, Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    let (outcome, _) = c.run(&mut machine, None);
    let stop = stopped(outcome);
    assert!(
        matches!(
            stop.failure(),
            Some(Failure::Tuning(
                crate::campaign::tuning::TuneError::Missing { .. }
            ))
        ),
        "{stop:?}"
    );
    let text = stop.to_string();
    assert!(
        text.contains("tuning failed before any sample: governor is required but this machine has no /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"),
        "{text}"
    );
    assert_eq!(machine.workload_runs(), 0);
    let error = crate::error::Error::CampaignStopped {
        dir: c.dir.root.clone(),
        stop: Box::new(stop),
    };
    let hint = error.hint().expect("a hint");
    assert!(
        hint.contains("list \"governor\" in [tuning] optional") && hint.contains("aba resume"),
        "{hint}"
    );
}

/// An A-B-A of two kernels on the running release that may extend itself to `max_points`,
/// three samples a point (drop-first needs them).
fn extend_recipe(max_points: u32) -> String {
    format!(
        r#"
version = 1
name = "extend"
description = "a campaign that extends itself"
sequence = ["a", "b", "a"]
warmup = 0
samples = 3

[kernels.a]
release = "running"
[kernels.b]
release = "running"

[analysis]
extend = {{ until = "decided", max_points = {max_points} }}

[[workload]]
name = "w"
run = "bench"
metric = {{ number = true, better = "lower" }}
"#
    )
}

/// Three samples around `mean` (SD 1), as the scripted workload prints them.
fn boot(mean: f64) -> Vec<Run> {
    [mean, mean + 1.0, mean - 1.0]
        .iter()
        .map(|v| Run::Prints(format!("{v}\n")))
        .collect()
}

/// The looks the journal recorded: (look, of, decision, appended labels).
fn looks(events: &[Event]) -> Vec<(u32, u32, Decision, Vec<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Look {
                look,
                of,
                decision,
                appended,
                ..
            } => Some((
                *look,
                *of,
                *decision,
                appended.iter().map(|p| p.label.clone()).collect(),
            )),
            _ => None,
        })
        .collect()
}

/// Boot means of a change of about 5.5% that one control pair cannot show (look 1, ν = 1,
/// t ≈ 23 at α₁ = 0.0276) and two more boots can (look 2, ν = 3): a-a, b, a-b, b-b, a-c.
const DECIDED_AT_LOOK_2: [f64; 5] = [100.0, 106.0, 100.9, 106.0, 100.45];

fn script(means: &[f64]) -> Scripted {
    let mut machine = Scripted::new("6.1.0-47");
    machine.runs = means.iter().flat_map(|m| boot(*m)).collect();
    machine
}

/// Look 1 is undecided, so B-A is journaled and appended; look 2 is SIGNAL, so the campaign
/// stops there with 5 of its 7 points, and the report's analysis judges it at look 2.
#[test]
fn an_undecided_campaign_extends_and_stops_when_decided() {
    let c = Campaign::new(&extend_recipe(7), Target::local());
    let mut machine = script(&DECIDED_AT_LOOK_2);
    let (outcome, events) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let journal = c.events();
    assert_eq!(
        looks(&journal),
        [
            (
                1,
                3,
                Decision::Extend,
                vec!["b-b".to_owned(), "a-c".to_owned()]
            ),
            (2, 3, Decision::Decided, vec![])
        ]
    );
    let Some(Event::Look {
        comparisons, alpha, ..
    }) = journal.iter().find(|e| matches!(e, Event::Look { .. }))
    else {
        panic!("a look");
    };
    assert_eq!(comparisons.len(), 1);
    assert_eq!(comparisons[0].state, ComparisonState::Undecided);
    assert!((alpha - 0.05 * (1.0 + (std::f64::consts::E - 1.0) * 3.0 / 7.0).ln()).abs() < 1e-12);
    // The appended points were journaled before they started.
    let look_at = journal
        .iter()
        .position(|e| matches!(e, Event::Look { look: 1, .. }))
        .expect("look 1");
    let started = journal
        .iter()
        .position(|e| matches!(e, Event::PointStarted { point, .. } if point == "b-b"))
        .expect("b-b started");
    assert!(look_at < started);
    assert_eq!(machine.workload_runs(), 15);
    assert_eq!((c.ok_samples("b-b", 1), c.ok_samples("a-c", 1)), (3, 3));
    assert!(events.0.iter().any(|e| matches!(
        e,
        CampaignEvent::Look {
            look: 1,
            points: 5,
            ..
        }
    )));
    c.assert_verified();
    let analysis = crate::analysis::analyze(&c.dir).expect("analysable");
    assert_eq!(analysis.points.len(), 5);
    let verdict = &analysis.series[0]
        .all
        .as_ref()
        .expect("analysed")
        .comparisons[0];
    assert_eq!(verdict.verdict.label, crate::stats::VerdictLabel::Signal);
    assert_eq!(
        verdict.comparison.look.as_ref().map(|l| l.look.look),
        Some(2)
    );
    // The report says how many points were added and why.
    let notice = crate::report::mail_prose::notices(&analysis);
    assert!(
        notice.starts_with(
            "Extended campaign ([analysis] extend, max_points 7): 3 points planned, 2 appended \
             (b-b, a-c). Look 1 of 3 (α = 0.0276): appended b-b, a-c, because a comparison is \
             undecided and the budget allows another unit (w b undecided). Look 2 of 3 \
             (α = 0.0124): stopped, because every comparison is decided (w b SIGNAL)."
        ),
        "{notice}"
    );
    assert!(
        notice.contains("judged at look 2 of 3: their evidence needs 98.76% intervals"),
        "{notice}"
    );
}

/// A change just under the gate that stays undecided: the campaign appends until
/// `max_points` (7) and stops on the budget at the last look.
#[test]
fn an_undecided_campaign_stops_at_max_points() {
    let c = Campaign::new(&extend_recipe(8), Target::local());
    let mut machine = script(&[100.0, 105.0, 100.9, 105.0, 100.0, 105.0, 100.9]);
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    assert_eq!(
        looks(&c.events()),
        [
            (
                1,
                3,
                Decision::Extend,
                vec!["b-b".to_owned(), "a-c".to_owned()]
            ),
            (
                2,
                3,
                Decision::Extend,
                vec!["b-c".to_owned(), "a-d".to_owned()]
            ),
            (3, 3, Decision::Budget, vec![])
        ]
    );
    assert_eq!(
        machine.workload_runs(),
        21,
        "7 points: 8 leaves no room for a third unit"
    );
    c.assert_verified();
}

/// Killed in the middle of the first appended point (its second run's rows are in
/// samples.csv, its record is not, as after a kill between the two): resume discards the open attempt,
/// keeps the journaled extension (never looks at look 1 again), redoes b-b, runs a-c and
/// decides at look 2 as the uninterrupted campaign did; journal and samples.csv agree.
#[test]
fn a_campaign_killed_mid_extension_resumes_the_same_extended_plan() {
    // Where the first sample of b-b lands in an uninterrupted run's journal.
    let reference = Campaign::new(&extend_recipe(7), Target::local());
    let (outcome, _) = reference.run(&mut script(&DECIDED_AT_LOOK_2), None);
    assert_finished(&outcome);
    let first_bb_sample = reference
        .events()
        .iter()
        .position(|e| matches!(e, Event::Sample { point, .. } if point == "b-b"))
        .expect("b-b measured");

    let c = Campaign::new(&extend_recipe(7), Target::local());
    // Every record after the header up to b-b's first sample is written, then none.
    let (outcome, _) = c.run(&mut script(&DECIDED_AT_LOOK_2), Some(first_bb_sample));
    let _ = stopped(outcome);
    let state = Journal::read(&c.dir.journal_path())
        .expect("readable")
        .state();
    assert_eq!(state.point("b-b").and_then(|p| p.open), Some(1));
    assert_eq!(state.appended.len(), 2);
    let journal = Journal::read(&c.dir.journal_path()).expect("readable");
    let status = crate::cli::status::render(
        &journal,
        &journal.history(),
        None,
        &std::collections::HashMap::new(),
    );
    assert!(status.contains("3/5 points done"), "{status}");
    assert!(
        status.contains(
            "extended: 2 point(s) appended (b#2, a#3) over 1 look(s); look 1: a comparison is \
             undecided and the budget allows another unit"
        ),
        "{status}"
    );

    // The rerun of b-b and a-c.
    let mut machine = script(&DECIDED_AT_LOOK_2[3..]);
    let (outcome, _) = c.resume(&mut machine);
    assert_finished(&outcome);
    let journal = c.events();
    assert_eq!(
        looks(&journal),
        [
            (
                1,
                3,
                Decision::Extend,
                vec!["b-b".to_owned(), "a-c".to_owned()]
            ),
            (2, 3, Decision::Decided, vec![])
        ]
    );
    assert!(
        journal.iter().any(|e| matches!(
            e,
            Event::PointDiscarded { point, attempt: 1, rows: 2 } if point == "b-b"
        )),
        "{:?}",
        journal
            .iter()
            .filter(|e| matches!(e, Event::PointDiscarded { .. }))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        machine.workload_runs(),
        6,
        "b-b again and a-c, nothing else"
    );
    assert_eq!((c.ok_samples("b-b", 2), c.ok_samples("a-c", 1)), (3, 3));
    c.assert_verified();
    let rows = c.rows();
    let orders: Vec<(String, u32)> = rows
        .rows
        .iter()
        .map(|r| (rows.text(r.point).to_owned(), r.order))
        .filter(|(p, _)| p == "b-b" || p == "a-c")
        .collect();
    assert!(
        orders
            .iter()
            .all(|(p, o)| (p == "b-b" && *o == 4) || (p == "a-c" && *o == 5)),
        "{orders:?}"
    );
}

/// Issue 29 item 6: the progress ETA is measured, never guessed. Before a point of the run is
/// done it is unknown (the plan's estimate stood there: a setup command without `estimate`
/// counted 12 s a point); every run of a later point carries it again, counted down within
/// the point; the last point done leaves nothing.
#[test]
fn the_eta_is_unknown_until_a_point_is_measured_then_counts_down_within_points() {
    let c = Campaign::new(&null_recipe(0, 0), Target::local());
    assert!(
        !c.plan.eta.is_zero(),
        "the plan has an estimate the ETA must not use"
    );
    let mut machine = Scripted::new("6.1.0-47");
    let (outcome, events) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let etas: Vec<(&str, Eta)> = events
        .0
        .iter()
        .filter_map(|e| match e {
            CampaignEvent::Started { eta, .. } => Some(("started", *eta)),
            CampaignEvent::Run { eta, .. } => Some(("run", *eta)),
            CampaignEvent::PointDone { eta, .. } => Some(("done", *eta)),
            _ => None,
        })
        .collect();
    let kinds: Vec<&str> = etas.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        ["started", "run", "run", "done", "run", "run", "done"],
        "{etas:?}"
    );
    assert!(
        etas[..3].iter().all(|(_, eta)| *eta == Eta::Unknown),
        "{etas:?}"
    );
    assert!(matches!(etas[3].1, Eta::Left(_)), "{etas:?}");
    assert!(
        etas[4..6].iter().all(|(_, eta)| *eta != Eta::Unknown),
        "{etas:?}"
    );
    assert_eq!(etas[6].1, Eta::Left(Duration::ZERO), "{etas:?}");
}

/// Issue 29: a campaign started on a machine busier than its CPUs says so, once (the run's
/// first environment record), as a warning shown and journaled with the point; a quiet
/// machine gets none.
#[test]
fn a_machine_busier_than_its_cpus_at_the_start_is_warned_about_once() {
    let loaded = |loadavg: &str| {
        let c = Campaign::new(&null_recipe(0, 0), Target::local());
        let mut machine = Scripted::new("6.1.0-47");
        machine.cpus_online = "0-1".to_owned();
        machine.loadavg = loadavg.to_owned();
        let (outcome, events) = c.run(&mut machine, None);
        assert_finished(&outcome);
        let shown: Vec<String> = events
            .0
            .iter()
            .filter_map(|e| match e {
                CampaignEvent::Warning(w @ Warning::Loaded(_)) => Some(w.to_string()),
                _ => None,
            })
            .collect();
        let journaled: Vec<(Option<String>, String)> = c
            .events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Warning { point, text } if text.contains("load average") => {
                    Some((point, text))
                }
                _ => None,
            })
            .collect();
        (shown, journaled)
    };
    let (shown, journaled) = loaded("3.10 2.00 1.50 5/127 30274");
    let text = "before the first workload of this run, the load average of the last minute \
                was 3.10 with 2 CPUs online: more tasks wanted a CPU than there were, and \
                work competing with the workloads adds to their noise";
    assert_eq!(shown, [text]);
    assert_eq!(journaled, [(Some("a-a".to_owned()), text.to_owned())]);
    assert_eq!(loaded("1.99 2.00 1.50 5/127 30274"), (vec![], vec![]));
}

/// A probe with an ftrace profile whose connection drops while the probe runs: the profile
/// is torn down after the loss (nothing stays enabled), then set up again and the probe
/// repeated; its record says how it ended and the calls (hits and missed ones).
#[test]
fn an_ftrace_profile_is_torn_down_after_a_probe_that_lost_its_connection_and_retried() {
    let recipe = format!(
        "{}[[probe]]\nname = \"calls\"\nrun = \"reader\"\nwhen = \"before\"\n\
         ftrace = {{ functions = [\"sched_rt_handler\"] }}\n",
        null_recipe(0, 0).replace("sequence = [\"a\", \"a\"]", "sequence = [\"a\"]")
    );
    let c = Campaign::new(&recipe, Target::local());
    let mut machine = Scripted::new("6.1.0-47");
    machine.lose_on = ["ABA_PHASE=probe".to_owned()].into();
    machine.kprobe_profile =
        "  aba_ftrace_f0                                       3               1\n".to_owned();
    let (outcome, _) = c.run(&mut machine, None);
    assert_finished(&outcome);
    let steps: Vec<&str> = machine
        .log
        .iter()
        .filter_map(|call| match call {
            Call::Exec(cmd) if cmd.contains("echo 1 > \"$I/events/$G/enable\"") => Some("setup"),
            Call::Exec(cmd) if cmd.contains(crate::campaign::ftrace::COUNTS_MARK) => {
                Some("teardown")
            }
            Call::Exec(cmd) if cmd.contains("ABA_PHASE=probe") => Some("probe"),
            Call::Exec(cmd) if cmd.contains("ABA_PHASE=sample") => Some("sample"),
            Call::Reconnect => Some("reconnect"),
            _ => None,
        })
        .collect();
    // The first reconnect is the campaign's connection.
    assert_eq!(
        steps,
        [
            "reconnect",
            "setup",
            "probe",
            "reconnect",
            "teardown",
            "setup",
            "probe",
            "teardown",
            "sample",
            "sample"
        ]
    );
    let probe = c
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::Probe {
                outcome, values, ..
            } => Some((outcome, values)),
            _ => None,
        })
        .expect("a probe record");
    assert_eq!(probe.0, "exit status 0");
    assert_eq!(probe.1[0].name, "sched_rt_handler");
    assert_eq!(probe.1[0].value, 4.0, "3 hits and 1 missed call");
    c.assert_verified();
}
