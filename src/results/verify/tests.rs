//! The verification over hand-made journals and samples.

use std::{fmt::Write as _, path::Path};

use super::{Difference, RowBytes, Scope, check};
use crate::{
    recipe::parse,
    results::{
        journal::Event,
        row_chain::RowChain,
        samples::{HEADER, Phase, SampleTable, Status},
    },
};

const RECIPE: &str = r#"
version = 1
name = "v"
description = "verification"
sequence = ["a", "b"]
warmup = 1
samples = 2
[kernels.a]
release = "ra"
[kernels.b]
release = "rb"
[[workload]]
name = "w"
run = "x"
metric = [
    { name = "m", number = true, better = "lower" },
]
"#;

/// Journal records and CSV rows of a clean two-point campaign, each point done at
/// attempt 1 with one warm-up and two samples.
fn clean() -> (Vec<Event>, Vec<Event>, String) {
    let mut events = Vec::new();
    let mut runs = Vec::new();
    let mut csv = format!("{}\n", HEADER.join(","));
    for (order, (point, kernel)) in [("a", "a"), ("b", "b")].iter().enumerate() {
        events.push(Event::PointStarted {
            point: (*point).into(),
            attempt: 1,
            time: "t".into(),
        });
        events.push(Event::BootProven {
            point: (*point).into(),
            attempt: 1,
            boot_id: format!("id-{point}"),
            release: format!("r{kernel}"),
            cmdline: String::new(),
            switch_s: 0.0,
            login_s: 0.0,
            proof_s: None,
            proven_at: None,
        });
        for (phase, index) in [(Phase::Warmup, 1), (Phase::Sample, 1), (Phase::Sample, 2)] {
            runs.push(Event::Sample {
                point: (*point).into(),
                attempt: 1,
                workload: "w".into(),
                case: String::new(),
                phase,
                index,
                retry: 0,
                status: Status::Ok,
                elapsed_s: 0.1,
                error: None,
                raw: None,
                leftovers: Vec::new(),
                dropped_bytes: None,
                values: Some([("m".to_owned(), 1.5)].into()),
                rows_sha256: None,
                kept: Vec::new(),
            });
            let _ = writeln!(
                csv,
                "{point},{},1,{kernel},r{kernel},id-{point},w,,m,{phase},{index},0,ok,1.5,ns,t",
                order + 1
            );
        }
        events.push(Event::PointDone {
            point: (*point).into(),
            attempt: 1,
            dmesg_warnings: 0,
            failed_units: vec![],
            time: "t".into(),
        });
    }
    // Each run has one row, on lines 2, 3, …: its link is the chain's after that line.
    let mut links = Vec::new();
    RowChain::default().feed(csv.as_bytes(), |_, link| links.push(hex::encode(link)));
    for (run, link) in runs.iter_mut().zip(links.into_iter().skip(1)) {
        if let Event::Sample { rows_sha256, .. } = run {
            *rows_sha256 = Some(link);
        }
    }
    (events, runs, csv)
}

/// `runs` without their values and row hashes, as an aba older than them journaled runs.
fn as_an_older_aba_journaled(mut runs: Vec<Event>) -> Vec<Event> {
    for run in &mut runs {
        if let Event::Sample {
            values,
            rows_sha256,
            ..
        } = run
        {
            *values = None;
            *rows_sha256 = None;
        }
    }
    runs
}

/// Issue 29 item 4: a value edited in samples.csv, a row added, a row removed are each
/// found, naming the line and the run; a journal without values checks as before.
#[test]
fn an_edited_added_or_removed_row_breaks_the_values_or_the_chain() {
    let (events, runs, csv) = clean();
    let edited = csv.replacen("w,,m,sample,1,0,ok,1.5,", "w,,m,sample,1,0,ok,999.0,", 1);
    assert_eq!(
        run(&events, &runs, &edited),
        [
            Difference::ValueDiffers {
                line: 3,
                run: "`a` attempt 1 w sample 1".into(),
                metric: "m".into(),
                row: "999".into(),
                journal: "1.5".into(),
            },
            Difference::ChainDiffers {
                from: 3,
                line: 3,
                run: "`a` attempt 1 w sample 1".into(),
            },
        ]
    );
    let said = run(&events, &runs, &edited)[0].to_string();
    assert_eq!(
        said,
        "samples.csv line 3 (`a` attempt 1 w sample 1) has `m` = 999, the journal recorded 1.5"
    );
    // The same bytes in another spelling of the same number: only the chain sees it.
    let respelled = csv.replacen("w,,m,sample,2,0,ok,1.5,", "w,,m,sample,2,0,ok,1.50,", 1);
    assert_eq!(
        run(&events, &runs, &respelled),
        [Difference::ChainDiffers {
            from: 4,
            line: 4,
            run: "`a` attempt 1 w sample 2".into(),
        }]
    );
    // A row added in the middle (a duplicate of a warm-up) and a row removed.
    let mut lines: Vec<&str> = csv.lines().collect();
    let warmup = lines[1];
    lines.insert(2, warmup);
    let added = lines.join("\n") + "\n";
    let found = run(&events, &runs, &added);
    assert!(
        found.contains(&Difference::ChainDiffers {
            from: 2,
            line: 3,
            run: "`a` attempt 1 w warmup 1".into(),
        }),
        "{found:?}"
    );
    let mut lines: Vec<&str> = csv.lines().collect();
    lines.remove(2);
    let removed = lines.join("\n") + "\n";
    let found = run(&events, &runs, &removed);
    assert!(
        found.contains(&Difference::ChainDiffers {
            from: 3,
            line: 3,
            run: "`a` attempt 1 w sample 2".into(),
        }),
        "{found:?}"
    );
    // Journaled by an older aba: the edit goes unseen, and the check says it could not look.
    let old = as_an_older_aba_journaled(runs);
    let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
    let table = SampleTable::parse(Path::new("samples.csv"), edited.as_bytes()).expect("csv");
    let found = check(
        &recipe,
        &table,
        &events,
        &old,
        Scope::All,
        Some(RowBytes::Memory(edited.as_bytes())),
    )
    .expect("check");
    assert_eq!(found.differences, []);
    assert_eq!(found.runs_without_values, 6);
}

fn run(events: &[Event], runs: &[Event], csv: &str) -> Vec<Difference> {
    let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
    let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("csv");
    check(
        &recipe,
        &table,
        events,
        runs,
        Scope::All,
        Some(RowBytes::Memory(csv.as_bytes())),
    )
    .expect("check")
    .differences
}

#[test]
fn a_clean_campaign_has_no_difference() {
    let (events, runs, csv) = clean();
    assert_eq!(run(&events, &runs, &csv), []);
}

/// The loss of issue 19: rows journaled but never in samples.csv.
#[test]
fn journaled_runs_without_rows_are_found() {
    let (events, runs, csv) = clean();
    let kept: String =
        csv.lines()
            .filter(|l| !l.starts_with("b,"))
            .fold(String::new(), |mut out, l| {
                out.push_str(l);
                out.push('\n');
                out
            });
    let found = run(&events, &runs, &kept);
    assert_eq!(
        found
            .iter()
            .filter(|d| matches!(d, Difference::MissingRow { .. }))
            .count(),
        3,
        "{found:?}"
    );
    assert!(found.iter().any(|d| matches!(
        d,
        Difference::WrongCount { attempt, expected: 2, .. } if attempt == "point `b` attempt 1"
    )));
}

#[test]
fn a_row_without_a_run_a_duplicate_and_a_wrong_boot_are_found() {
    let (events, runs, mut csv) = clean();
    csv.push_str("a,1,1,a,ra,id-a,w,,m,sample,3,0,ok,1.5,ns,t\n");
    csv.push_str("b,2,1,b,rb,id-b,w,,m,sample,2,0,ok,1.5,ns,t\n");
    let csv = csv.replace(
        "a,1,1,a,ra,id-a,w,,m,sample,1,",
        "a,1,1,a,ra,id-x,w,,m,sample,1,",
    );
    let found = run(&events, &runs, &csv);
    assert!(
        found
            .iter()
            .any(|d| matches!(d, Difference::RowWithoutRun { line: 8, .. })),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| matches!(d, Difference::DuplicateRow { rows: 2, .. })),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| matches!(d, Difference::WrongBoot { line: 3, .. })),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| matches!(d, Difference::WrongCount { .. })),
        "{found:?}"
    );
}

/// A runner killed between a run's rows and its journal record leaves rows without a
/// record at the tail of an attempt that never finished: expected, and never counted.
#[test]
fn unjournaled_rows_at_the_tail_of_an_unfinished_attempt_are_expected() {
    let (mut events, mut runs, mut csv) = clean();
    events.push(Event::PointStarted {
        point: "b".into(),
        attempt: 2,
        time: "t".into(),
    });
    runs.push(Event::Sample {
        point: "b".into(),
        attempt: 2,
        workload: "w".into(),
        case: String::new(),
        phase: Phase::Warmup,
        index: 1,
        retry: 0,
        status: Status::Ok,
        elapsed_s: 0.1,
        error: None,
        raw: None,
        leftovers: Vec::new(),
        dropped_bytes: None,
        values: None,
        rows_sha256: None,
        kept: Vec::new(),
    });
    csv.push_str("b,2,2,b,rb,id-b2,w,,m,warmup,1,0,ok,1.5,ns,t\n");
    csv.push_str("b,2,2,b,rb,id-b2,w,,m,sample,1,0,ok,1.5,ns,t\n");
    let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
    let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("csv");
    let found = check(&recipe, &table, &events, &runs, Scope::All, None).expect("check");
    assert_eq!(found.differences, []);
    assert_eq!(found.unjournaled_tail_rows, 1);
    // The same rows in a finished attempt are a difference.
    events.push(Event::PointDone {
        point: "b".into(),
        attempt: 2,
        dmesg_warnings: 0,
        failed_units: vec![],
        time: "t".into(),
    });
    let found = check(&recipe, &table, &events, &runs, Scope::All, None).expect("check");
    assert!(
        found
            .differences
            .iter()
            .any(|d| matches!(d, Difference::RowWithoutRun { .. }))
    );
}

/// aba 0.1 rewrote a failed attempt's rows as `discarded`: still agrees with the journal.
#[test]
fn rows_discarded_by_an_older_aba_agree_with_a_failed_attempt() {
    let (mut events, runs, csv) = clean();
    let runs = as_an_older_aba_journaled(runs);
    let i = events
        .iter()
        .position(|e| matches!(e, Event::PointDone { point, .. } if point == "b"))
        .expect("b done");
    events[i] = Event::PointFailed {
        point: "b".into(),
        attempt: 1,
        kernel: "b".into(),
        reason: "x".into(),
        answered: None,
        time: "t".into(),
    };
    let csv = csv.replace(
        "b,2,1,b,rb,id-b,w,,m,sample,2,0,ok,",
        "b,2,1,b,rb,id-b,w,,m,sample,2,0,discarded,",
    );
    assert_eq!(run(&events, &runs, &csv), []);
    // In a done attempt the same rewrite is a difference.
    let (events, runs, _) = clean();
    let found = run(&events, &runs, &csv);
    assert!(
        found
            .iter()
            .any(|d| matches!(d, Difference::StatusDiffers { .. })),
        "{found:?}"
    );
}

/// The side-by-side walk ([`super::lockstep`]) over `runs` and `csv`: what it vouches for,
/// `None` where it leaves the directory to the full check.
fn walk(events: &[Event], runs: &[Event], csv: &str) -> Option<super::Verification> {
    let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
    let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("csv");
    std::thread::scope(|scope| {
        let (to, links) = super::lockstep::Links::channel();
        scope.spawn(move || RowBytes::Memory(csv.as_bytes()).send_links(&to));
        let mut walk =
            super::lockstep::Walk::new(&recipe, super::lockstep::Rows::Held(&table), Some(links));
        for run in runs {
            walk.run(&crate::results::journal::RunRecord::of(run).expect("a run"));
        }
        walk.finish(events)
    })
}

/// The full check's verdict over the same records.
fn full(events: &[Event], runs: &[Event], csv: &str) -> super::Verification {
    let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
    let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("csv");
    check(
        &recipe,
        &table,
        events,
        runs,
        Scope::All,
        Some(RowBytes::Memory(csv.as_bytes())),
    )
    .expect("check")
}

/// The walk vouches for a clean campaign with the full check's counts, and for nothing
/// else: every edit the full check finds, the walk leaves to it.
#[test]
fn the_walk_vouches_only_for_what_the_full_check_passes() {
    let (events, runs, csv) = clean();
    let vouched = walk(&events, &runs, &csv).expect("a clean campaign is vouched for");
    let found = full(&events, &runs, &csv);
    assert_eq!(
        (vouched.runs, vouched.rows, vouched.runs_without_values),
        (found.runs, found.rows, found.runs_without_values)
    );
    assert_eq!((vouched.runs, vouched.rows), (6, 6));
    let old = as_an_older_aba_journaled(runs.clone());
    assert_eq!(
        walk(&events, &old, &csv).map(|v| v.runs_without_values),
        Some(6)
    );

    let lines: Vec<&str> = csv.lines().collect();
    let joined = |lines: &[&str]| lines.join("\n") + "\n";
    let mut reordered = lines.clone();
    reordered.swap(2, 3);
    let mut added = lines.clone();
    added.insert(2, lines[1]);
    let mut removed = lines.clone();
    removed.remove(2);
    let mut twice = runs.clone();
    twice.insert(1, runs[0].clone());
    let mut tail = csv.clone();
    tail.push_str("b,2,1,b,rb,id-b,w,,m,sample,3,0,ok,1.5,ns,t\n");
    let mut undone = events.clone();
    undone.pop();
    let edits: Vec<(&str, Vec<Event>, String)> = vec![
        (
            "an edited value",
            runs.clone(),
            csv.replacen("w,,m,sample,1,0,ok,1.5,", "w,,m,sample,1,0,ok,999.0,", 1),
        ),
        (
            "a respelled value",
            runs.clone(),
            csv.replacen("w,,m,sample,2,0,ok,1.5,", "w,,m,sample,2,0,ok,1.50,", 1),
        ),
        ("reordered rows", runs.clone(), joined(&reordered)),
        ("an added row", runs.clone(), joined(&added)),
        ("a removed row", runs.clone(), joined(&removed)),
        ("a run journaled twice", twice, csv.clone()),
        ("a row after the last run", runs.clone(), tail),
        (
            "a wrong boot",
            runs.clone(),
            csv.replace(
                "a,1,1,a,ra,id-a,w,,m,sample,1,",
                "a,1,1,a,ra,id-x,w,,m,sample,1,",
            ),
        ),
        (
            "a failed status",
            runs.clone(),
            csv.replacen("w,,m,sample,1,0,ok,1.5,", "w,,m,sample,1,0,failed,,", 1),
        ),
    ];
    for (what, runs, csv) in &edits {
        let found = full(&events, runs, csv);
        assert!(!found.is_clean(), "{what}: the full check finds it");
        assert!(
            walk(&events, runs, csv).is_none(),
            "{what}: the walk gave up"
        );
    }
    // Not a difference, but not what a finished campaign looks like: the full check decides.
    assert!(walk(&undone, &runs, &csv).is_some_and(|v| v.is_clean()));
}

/// A results directory on disk: `journal.jsonl` in the order aba writes it (a campaign
/// header, then per point its start, boot, runs and end) and `samples.csv`.
fn write_dir(dir: &Path, events: &[Event], runs: &[Event], csv: &str) {
    let mut journal = String::new();
    let header = Event::Campaign {
        format: crate::results::journal::JOURNAL_FORMAT,
        aba: "test".into(),
        name: "v".into(),
        recipe_sha256: "0".repeat(64),
        limits: None,
        target: "local".into(),
        points: vec!["a".into(), "b".into()],
        time: "t".into(),
    };
    let mut line = |e: &Event| {
        journal.push_str(&serde_json::to_string(e).expect("json"));
        journal.push('\n');
    };
    line(&header);
    let per_point = runs.len() / 2;
    for (p, records) in events.chunks(3).enumerate() {
        line(&records[0]);
        line(&records[1]);
        for run in &runs[p * per_point..(p + 1) * per_point] {
            line(run);
        }
        line(&records[2]);
    }
    std::fs::write(dir.join("journal.jsonl"), journal).expect("journal");
    std::fs::write(dir.join("samples.csv"), csv).expect("samples");
}

/// `aba report`'s single reading ([`super::verify_and_read`]) gives the check of
/// [`super::verify`], the journal of `Journal::read_for_analysis` and the table of
/// `SampleTable::read`; an edit is named at its line of samples.csv as `aba verify` names
/// it.
#[test]
fn one_reading_checks_and_reads_as_the_separate_readers_do() {
    let recipe = parse(Path::new("r.toml"), RECIPE).expect("recipe");
    let (events, runs, csv) = clean();
    let dir = tempfile::tempdir().expect("tempdir");
    let (journal, samples) = (
        dir.path().join("journal.jsonl"),
        dir.path().join("samples.csv"),
    );
    write_dir(dir.path(), &events, &runs, &csv);
    let checked = super::verify_and_read(&recipe, &journal, &samples).expect("readable");
    assert!(checked.found.is_clean(), "{:?}", checked.found);
    assert_eq!((checked.found.runs, checked.found.rows), (6, 6));
    let alone = super::verify(&recipe, &journal, &samples, Scope::All).expect("verify");
    assert_eq!((alone.runs, alone.rows, alone.differences.len()), (6, 6, 0));
    let read = crate::results::journal::Journal::read_for_analysis(&journal).expect("journal");
    assert_eq!(
        format!("{:?}", checked.journal.events),
        format!("{:?}", read.events)
    );
    assert_eq!(
        checked.table.rows,
        SampleTable::read(&samples).expect("table").rows
    );

    let edited = csv.replacen("w,,m,sample,1,0,ok,1.5,", "w,,m,sample,1,0,ok,999.0,", 1);
    write_dir(dir.path(), &events, &runs, &edited);
    let expected = full(&events, &runs, &edited).differences;
    assert_eq!(
        expected[0].to_string(),
        "samples.csv line 3 (`a` attempt 1 w sample 1) has `m` = 999, the journal recorded 1.5"
    );
    let checked = super::verify_and_read(&recipe, &journal, &samples).expect("readable");
    assert_eq!(checked.found.differences, expected);
    let alone = super::verify(&recipe, &journal, &samples, Scope::All).expect("verify");
    assert_eq!(alone.differences, expected);

    // A file it cannot read so is left to the separate readers, which name it.
    std::fs::write(&samples, "not,a,header\n").expect("samples");
    assert!(super::verify_and_read(&recipe, &journal, &samples).is_none());
}

/// More rows than one batch of the parsing thread: the walk meets rows as they arrive, and
/// an edit far into the file is named at its line.
#[test]
fn rows_arriving_in_batches_are_checked_to_the_last() {
    let samples_per_point = 5000;
    let recipe_text = RECIPE.replace("samples = 2", &format!("samples = {samples_per_point}"));
    let recipe = parse(Path::new("r.toml"), &recipe_text).expect("recipe");
    let (events, _, _) = clean();
    let mut runs = Vec::new();
    let mut csv = format!("{}\n", HEADER.join(","));
    let mut chain = RowChain::default();
    chain.feed(csv.as_bytes(), |_, _| {});
    for (order, point) in ["a", "b"].into_iter().enumerate() {
        let phases = std::iter::once((Phase::Warmup, 1))
            .chain((1..=samples_per_point).map(|i| (Phase::Sample, i)));
        for (phase, index) in phases {
            let value = f64::from(index) / 8.0;
            let row = format!(
                "{point},{},1,{point},r{point},id-{point},w,,m,{phase},{index},0,ok,{value},ns,t\n",
                order + 1
            );
            chain.feed(row.as_bytes(), |_, _| {});
            csv.push_str(&row);
            runs.push(Event::Sample {
                point: point.into(),
                attempt: 1,
                workload: "w".into(),
                case: String::new(),
                phase,
                index,
                retry: 0,
                status: Status::Ok,
                elapsed_s: 0.1,
                error: None,
                raw: None,
                leftovers: Vec::new(),
                dropped_bytes: None,
                values: Some([("m".to_owned(), value)].into()),
                rows_sha256: Some(chain.hex()),
                kept: Vec::new(),
            });
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (journal, samples) = (
        dir.path().join("journal.jsonl"),
        dir.path().join("samples.csv"),
    );
    write_dir(dir.path(), &events, &runs, &csv);
    let checked = super::verify_and_read(&recipe, &journal, &samples).expect("readable");
    assert!(checked.found.is_clean(), "{:?}", checked.found);
    assert_eq!(checked.found.rows, 2 * (u64::from(samples_per_point) + 1));
    assert_eq!(
        checked.table.rows,
        SampleTable::read(&samples).expect("table").rows
    );

    // Line 9,500 is point b's sample 4497 (a's 5,001 rows are lines 2..=5002).
    let edited = csv.replacen(
        "b,2,1,b,rb,id-b,w,,m,sample,4497,0,ok,562.125,",
        "b,2,1,b,rb,id-b,w,,m,sample,4497,0,ok,562.5,",
        1,
    );
    assert_ne!(edited, csv);
    write_dir(dir.path(), &events, &runs, &edited);
    let checked = super::verify_and_read(&recipe, &journal, &samples).expect("readable");
    assert_eq!(
        checked
            .found
            .differences
            .first()
            .map(ToString::to_string)
            .as_deref(),
        Some(
            "samples.csv line 9500 (`b` attempt 1 w sample 4497) has `m` = 562.5, the journal recorded 562.125"
        )
    );
}
