//! aba against a real labgrid coordinator on 127.0.0.1 (issue 36): the place is reserved in
//! the coordinator's queue, acquired for the campaign and given back (released and its
//! reservation cancelled) at the end, a second campaign on the same place waits in the queue
//! and runs after the first, and a campaign killed with SIGKILL takes its place back on
//! resume; a batch's campaign waits behind the place's holder and its morning summary says
//! so. The machine itself is the real sshd of `support::sshd` (a `switch = "none"`
//! target); labgrid comes from PyPI into lab/out/labgrid (lab/labgrid/install.sh, run by
//! test.sh).

use std::{path::Path, time::Duration};

use aba::results::journal::{Event, Journal, ReservationAction};

use crate::{
    batch::{spawn_batch, tsv_rows, wait_for_batch},
    support::{
        cli::{
            aba, assert_verified, campaign_dir, resume, spawn_run_on, text, wait_for_journal, write,
        },
        labgrid::Coordinator,
        recipe::{Metric, Recipe, Workload},
        sshd::{Sshd, signal},
    },
};

fn recipe() -> String {
    Recipe::new(
        "labgrid-place",
        "slow samples on a labgrid place",
        &["this", "this", "this"],
    )
    .runs(0, 3)
    .point_retries(0)
    .workload(Workload::new("slow", "sleep 0.5; echo $ABA_SAMPLE", Metric::lower("n")).retries(0))
    .toml()
}

/// The journal's events, its reservation records and the time of the first point.
fn journal(dir: &Path) -> Vec<Event> {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events
}

fn reservations(events: &[Event]) -> Vec<(ReservationAction, String, Option<String>, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Reservation {
                action,
                output,
                error,
                time,
                ..
            } => Some((*action, output.clone(), error.clone(), time.clone())),
            _ => None,
        })
        .collect()
}

fn first_point_time(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            Event::PointStarted { time, .. } => Some(time.clone()),
            _ => None,
        })
        .expect("a point started")
}

fn finished_time(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            Event::Finished { time } => Some(time.clone()),
            _ => None,
        })
        .expect("finished")
}

fn samples(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Sample { .. }))
        .count()
}

#[test]
fn two_campaigns_on_one_labgrid_place_queue_in_the_coordinator_and_a_killed_one_takes_it_back() {
    let Some(lab) = Coordinator::start("box") else {
        return;
    };
    let sshd = Sshd::start();
    let first = tempfile::tempdir().expect("tempdir");
    let second = tempfile::tempdir().expect("tempdir");
    let recipe_1 = write(first.path(), "r.toml", &recipe());
    let recipe_2 = write(second.path(), "r.toml", &recipe());
    let targets_1 = lab.inventory(&sshd, first.path(), "box");
    let targets_2 = lab.inventory(&sshd, second.path(), "box");

    // The first campaign holds the place; the second, started while it runs, waits in the
    // coordinator's queue and measures nothing until the first gave the place back.
    let one = spawn_run_on(first.path(), &recipe_1, &targets_1, "box");
    let dir_1 = wait_for_journal(
        &first.path().join("results"),
        Duration::from_secs(120),
        "the first sample",
        |e| samples(e) >= 1,
    );
    assert!(
        lab.show("box").contains("acquired: "),
        "{}",
        lab.show("box")
    );
    let two = spawn_run_on(second.path(), &recipe_2, &targets_2, "box");
    let out_1 = one.wait_with_output().expect("first campaign ends");
    assert!(out_1.status.success(), "{}", text(&out_1));
    let out_2 = two.wait_with_output().expect("second campaign ends");
    assert!(out_2.status.success(), "{}", text(&out_2));
    let dir_2 = campaign_dir(&second.path().join("results"));
    let (events_1, events_2) = (journal(&dir_1), journal(&dir_2));
    let (held_1, held_2) = (reservations(&events_1), reservations(&events_2));
    for held in [&held_1, &held_2] {
        assert_eq!(held.len(), 2, "{held:?}");
        assert_eq!(held[0].0, ReservationAction::Reserve);
        assert!(held[0].1.contains("acquired place box"), "{held:?}");
        assert!(held[0].1.contains("export LG_TOKEN="), "{held:?}");
        assert_eq!(held[1].0, ReservationAction::Release, "{held:?}");
        assert!(held[0].2.is_none() && held[1].2.is_none(), "{held:?}");
    }
    assert!(
        first_point_time(&events_2) > finished_time(&events_1),
        "the second campaign measured before the first gave the place back: {} vs {}",
        first_point_time(&events_2),
        finished_time(&events_1)
    );
    assert!(held_2[0].3 >= held_1[1].3, "{held_1:?} {held_2:?}");
    // Given back: nobody holds the place, and no reservation of ours keeps it.
    let shown = lab.show("box");
    assert!(shown.contains("acquired: None"), "{shown}");
    assert!(!shown.contains("reservation:"), "{shown}");
    assert_verified(&dir_1);
    assert_verified(&dir_2);

    // SIGKILL: nothing gives the place back, so it stays acquired by the campaign's own
    // reservation; resume recognises it, finishes, and releases it.
    let killed = tempfile::tempdir().expect("tempdir");
    let recipe_3 = write(killed.path(), "r.toml", &recipe());
    let targets_3 = lab.inventory(&sshd, killed.path(), "box");
    let three = spawn_run_on(killed.path(), &recipe_3, &targets_3, "box");
    let dir_3 = wait_for_journal(
        &killed.path().join("results"),
        Duration::from_secs(120),
        "the first sample",
        |e| samples(e) >= 1,
    );
    signal(three.id(), libc::SIGKILL);
    let _ = three.wait_with_output();
    let shown = lab.show("box");
    assert!(!shown.contains("acquired: None"), "still held: {shown}");
    // `aba status` says who holds the machine, from the journal.
    let status = aba(killed.path(), &["status", dir_3.to_str().expect("utf-8")]);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains("lab scheduler: holds the machine since")
            && said.contains("(labgrid place box, reservation "),
        "{said}"
    );
    let out = resume(killed.path(), &dir_3, Some(&targets_3), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let held_3 = reservations(&journal(&dir_3));
    assert_eq!(held_3.len(), 3, "{held_3:?}");
    assert!(
        held_3[1]
            .1
            .contains("is still held by this campaign's reservation"),
        "{held_3:?}"
    );
    assert_eq!(held_3[2].0, ReservationAction::Release, "{held_3:?}");
    let shown = lab.show("box");
    assert!(shown.contains("acquired: None"), "{shown}");
    assert!(!shown.contains("reservation:"), "{shown}");
    assert_verified(&dir_3);
    let status = aba(killed.path(), &["status", dir_3.to_str().expect("utf-8")]);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains("lab scheduler: gave the machine back at")
            && said.contains("(labgrid place box"),
        "{said}"
    );
}

/// A night's queue on a labgrid place (`aba batch`): someone else holds the place when the
/// batch starts, so its campaign waits in the coordinator's queue until they give it back;
/// the morning summary names whom it waited behind, how long, and how long it held the place
/// (summary.txt's `lab:` line, summary.tsv's place, waited_s, held_s and behind).
#[test]
fn a_batch_on_a_labgrid_place_waits_behind_its_holder_and_the_summary_says_so() {
    let Some(lab) = Coordinator::start("night") else {
        return;
    };
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "r.toml", &recipe());
    let plan = write(
        tmp.path(),
        "plan.toml",
        "version = 1\nname = \"night\"\n\n[[campaign]]\nrecipe = \"r.toml\"\ntargets = [\"box\"]\n",
    );
    let targets = lab.inventory(&sshd, tmp.path(), "night");
    let taken = lab.client_as("alice", &["-p", "night", "acquire"]);
    assert!(taken.status.success(), "{}", text(&taken));

    let batch = spawn_batch(tmp.path(), &plan, &targets);
    let dir = wait_for_batch(tmp.path());
    // The campaign's reservation waits in the coordinator's queue (alice only acquired the
    // place, she reserved nothing): nothing is measured while she holds it.
    let started = std::time::Instant::now();
    loop {
        let listed = lab.client(&["reservations"]);
        if String::from_utf8_lossy(&listed.stdout).contains("Reservation '") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no reservation queued: {}",
            text(&listed)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    let measured: usize = std::fs::read_dir(&dir)
        .expect("the batch folder")
        .flatten()
        .flat_map(|e| [e.path().join("box"), e.path()])
        .filter_map(|d| Journal::read(&d.join("journal.jsonl")).ok())
        .map(|j| samples(&j.events))
        .sum();
    assert_eq!(measured, 0, "measured on a place alice holds");
    let given = lab.client_as("alice", &["-p", "night", "release"]);
    assert!(given.status.success(), "{}", text(&given));
    let out = batch.wait_with_output().expect("the batch ends");
    assert!(out.status.success(), "{}", text(&out));

    let summary = std::fs::read_to_string(dir.join("summary.txt")).expect("summary.txt");
    let flat = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("lab: labgrid place night: waited ")
            && flat.contains(" in the queue behind lab/alice, held it "),
        "{summary}"
    );
    let rows = tsv_rows(&dir);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["place"], "night", "{rows:?}");
    assert_eq!(rows[0]["behind"], "lab/alice", "{rows:?}");
    let waited: f64 = rows[0]["waited_s"].parse().expect("seconds");
    let held: f64 = rows[0]["held_s"].parse().expect("seconds");
    assert!(waited >= 2.0, "{rows:?}");
    assert!(held > 0.0, "{rows:?}");
    assert!(lab.show("night").contains("acquired: None"));
    let campaign = dir.join(&rows[0]["dir"]);
    let held = reservations(&journal(&campaign));
    assert!(held[0].1.contains("was held by lab/alice"), "{held:?}");
    assert_verified(&campaign);
}
