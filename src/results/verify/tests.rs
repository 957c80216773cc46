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
