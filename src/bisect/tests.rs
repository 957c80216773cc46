//! Scripted bisections: a sequence of step outcomes gives the expected actions and outcome,
//! and a replay of the records is the live state. The last tests judge synthetic points with
//! aba's analysis.

use crate::{
    analysis::{environment::EnvironmentCheck, model::SeriesPoint},
    bisect::{
        Action, BisectError, BisectInput, Bisection, Judged, Outcome, Record, StepResult,
        StepVerdict, Strategy,
    },
    stats::{Better, VerdictParams, summarize},
};

fn input(n: usize, strategy: Strategy) -> BisectInput {
    let commits = (0..=n).map(|i| format!("c{i:02}")).collect();
    let mut i = BisectInput::new(commits, VerdictParams::default(), Better::Lower);
    i.strategy = strategy;
    i
}

fn step(commit: usize, verdict: StepVerdict, change: f64) -> Record {
    Record::Step(StepResult {
        commit,
        verdict,
        label: "SIGNAL".into(),
        change_pct: Some(change),
        ci: Some((change - 2.0, change + 2.0)),
        points: 5,
    })
}

fn test_of(b: &Bisection) -> usize {
    match b.next() {
        Action::Test { commit } => *commit,
        other => panic!("expected a test, got {other:?}"),
    }
}

fn outcome(b: &Bisection) -> &Outcome {
    match b.next() {
        Action::Done(o) => o,
        other => panic!("expected the end, got {other:?}"),
    }
}

/// Answers the bisection's tests as a history whose first bad commit is `culprit` would,
/// until it ends; returns the commits tested.
fn run(b: &mut Bisection, culprit: usize) -> Vec<usize> {
    let mut tested = Vec::new();
    while let Action::Test { commit } = *b.next() {
        tested.push(commit);
        let (v, c) = if commit >= culprit {
            (StepVerdict::Bad, 10.0)
        } else {
            (StepVerdict::Good, 0.0)
        };
        b.push(step(commit, v, c)).expect("the current step");
        assert!(tested.len() < 40, "{tested:?}");
    }
    tested
}

#[test]
fn plain_bisection_names_the_culprit_in_log2_steps() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    assert_eq!(b.next(), &Action::Confirm { bad: 16 });
    b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    // Bad is 10 % off: the step gate stays at G = 5 %.
    assert!((b.step_gate() - 5.0).abs() < 1e-12);
    let tested = run(&mut b, 11);
    assert_eq!(tested, [8, 12, 10, 11]);
    match outcome(&b) {
        Outcome::Culprit {
            commit, posterior, ..
        } => assert_eq!((*commit, *posterior), (11, None)),
        other => panic!("{other:?}"),
    }
    assert!(
        outcome(&b)
            .sentence(&b.input().commits)
            .starts_with("first bad commit c11")
    );
}

#[test]
fn a_small_change_halves_the_step_gate() {
    let mut b = Bisection::new(input(4, Strategy::Plain)).unwrap();
    b.push(step(4, StepVerdict::Bad, -6.0)).unwrap();
    assert!((b.step_gate() - 3.0).abs() < 1e-12);
}

#[test]
fn a_skipped_commit_is_stepped_around_and_named_in_the_range() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    assert_eq!(test_of(&b), 8);
    b.push(step(8, StepVerdict::Good, 0.0)).unwrap();
    assert_eq!(test_of(&b), 12);
    b.push(Record::Skip {
        commit: 12,
        why: "does not build".into(),
    })
    .unwrap();
    // The nearest untested commit to the middle of 9..=15.
    assert_eq!(test_of(&b), 11);
    b.push(step(11, StepVerdict::Bad, 10.0)).unwrap();
    assert_eq!(test_of(&b), 9);
    b.push(step(9, StepVerdict::Good, 0.0)).unwrap();
    assert_eq!(test_of(&b), 10);
    b.push(Record::Skip {
        commit: 10,
        why: "does not boot".into(),
    })
    .unwrap();
    match outcome(&b) {
        Outcome::Range { first, last, why } => {
            assert_eq!((*first, *last), (10, 11));
            assert!(why.contains("c10 skipped: does not boot"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn equivalent_endpoints_end_with_no_change_and_undecided_ones_with_no_bisection() {
    let mut b = Bisection::new(input(16, Strategy::Bayesian)).unwrap();
    b.push(step(16, StepVerdict::Good, 0.3)).unwrap();
    let text = outcome(&b).sentence(&b.input().commits);
    assert!(text.starts_with("no commit in range changes it"), "{text}");
    let mut b = Bisection::new(input(16, Strategy::Bayesian)).unwrap();
    b.push(step(16, StepVerdict::Undecided, 3.0)).unwrap();
    let text = outcome(&b).sentence(&b.input().commits);
    assert!(
        text.starts_with("good and bad do not differ at this noise: no bisection"),
        "{text}"
    );
    assert!(matches!(
        b.push(step(8, StepVerdict::Good, 0.0)),
        Err(BisectError::Record { index: 1, .. })
    ));
}

#[test]
fn an_unstable_confirmation_is_retried_then_ends_with_no_bisection() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    assert_eq!(b.input().budget.confirm_retries, 2);
    for _ in 0..2 {
        b.push(step(16, StepVerdict::Unstable, 1.0)).unwrap();
        assert_eq!(b.next(), &Action::Confirm { bad: 16 });
    }
    b.push(step(16, StepVerdict::Unstable, 1.0)).unwrap();
    assert!(matches!(outcome(&b), Outcome::NoBisection(_)));
    // A retry that decides continues as a first confirmation would.
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    b.push(step(16, StepVerdict::Unstable, 1.0)).unwrap();
    b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    assert_eq!(test_of(&b), 8);
    // An undecided confirmation is not retried: more of the same boots would not decide it.
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    b.push(step(16, StepVerdict::Undecided, 3.0)).unwrap();
    assert!(matches!(outcome(&b), Outcome::NoBisection(_)));
}

#[test]
fn a_commit_between_good_and_bad_ends_the_bisection_unforced() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    b.push(step(8, StepVerdict::Between, 5.0)).unwrap();
    match outcome(&b) {
        Outcome::Between(s) => assert_eq!(s.commit, 8),
        other => panic!("{other:?}"),
    }
    assert!(
        outcome(&b)
            .sentence(&b.input().commits)
            .contains("c08 sits between")
    );
}

#[test]
fn an_undecided_step_leaves_its_commit_out() {
    let mut b = Bisection::new(input(4, Strategy::Plain)).unwrap();
    b.push(step(4, StepVerdict::Bad, 10.0)).unwrap();
    assert_eq!(test_of(&b), 2);
    b.push(step(2, StepVerdict::Undecided, 4.0)).unwrap();
    assert_eq!(test_of(&b), 1);
    b.push(step(1, StepVerdict::Good, 0.0)).unwrap();
    assert_eq!(test_of(&b), 3);
    b.push(step(3, StepVerdict::Bad, 10.0)).unwrap();
    match outcome(&b) {
        Outcome::Range { first, last, why } => {
            assert_eq!((*first, *last), (2, 3));
            assert!(why.contains("c02 undecided after 5 boots"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bayesian_search_names_the_culprit_with_its_posterior() {
    for culprit in [1, 7, 16] {
        let mut b = Bisection::new(input(16, Strategy::Bayesian)).unwrap();
        b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
        let tested = run(&mut b, culprit);
        match outcome(&b) {
            Outcome::Culprit {
                commit, posterior, ..
            } => {
                assert_eq!(*commit, culprit, "{tested:?}");
                assert!(posterior.is_some_and(|p| p >= 0.95), "{posterior:?}");
            }
            other => panic!("{other:?} after {tested:?}"),
        }
    }
}

#[test]
fn a_replay_of_the_records_is_the_live_state() {
    let mut live = Bisection::new(input(64, Strategy::Bayesian)).unwrap();
    live.push(step(64, StepVerdict::Bad, 12.0)).unwrap();
    let first = test_of(&live);
    live.push(Record::Skip {
        commit: first,
        why: "no boot".into(),
    })
    .unwrap();
    run(&mut live, 23);
    let json = serde_json::to_string(live.records()).unwrap();
    let records: Vec<Record> = serde_json::from_str(&json).unwrap();
    let replayed = Bisection::replay(input(64, Strategy::Bayesian), &records).unwrap();
    assert_eq!(replayed.next(), live.next());
    assert_eq!(replayed.records(), live.records());
    assert_eq!(replayed.search(), live.search());
    // A replay cut anywhere is the live state at that record.
    let half = Bisection::replay(input(64, Strategy::Bayesian), &records[..4]).unwrap();
    assert_eq!(half.records().len(), 4);
    assert!(matches!(half.next(), Action::Test { .. }));
}

#[test]
fn a_record_for_another_step_is_refused_and_changes_nothing() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    let before = b.next().clone();
    let err = b.push(step(3, StepVerdict::Good, 0.0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "record 1: expected a step or skip of commit 8, got a step of commit 3"
    );
    assert_eq!(b.next(), &before);
    assert_eq!(b.records().len(), 1);
}

/// Points good/X/good/… whose boot means are `mean(kernel)` times a fixed ±0.3 % pattern,
/// each with 5 samples ±0.1 % around it.
fn points(len: usize, x_change: f64) -> Vec<SeriesPoint> {
    let wiggle = [0.0, 0.003, -0.002, 0.001, -0.003, 0.002, -0.001];
    (0..len)
        .map(|i| {
            let kernel = if i % 2 == 0 { "good" } else { "x" };
            let mean = if i % 2 == 0 { 100.0 } else { 100.0 + x_change };
            let boot = mean * (1.0 + wiggle[i % wiggle.len()]);
            let values: Vec<f64> = [-0.001, 0.0005, 0.001, -0.0005, 0.0]
                .iter()
                .map(|d| boot * (1.0 + d))
                .collect();
            SeriesPoint {
                order: i + 1,
                label: format!("{kernel}{i}"),
                kernel: kernel.into(),
                values: values.clone(),
                warmups: Vec::new(),
                all: summarize(&values).unwrap(),
                drop_first: summarize(&values[1..]),
            }
        })
        .collect()
}

fn judged(b: &Bisection, pts: &[SeriesPoint]) -> Judged {
    b.judge(pts, "good", "x", &EnvironmentCheck::default())
        .unwrap()
}

fn decided(j: Judged) -> StepResult {
    match j {
        Judged::Decided(s) => s,
        other => panic!("{other:?}"),
    }
}

#[test]
fn steps_are_judged_by_aba_s_analysis() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    let odd = |max: usize| (3..=max).step_by(2).collect::<Vec<_>>();
    assert_eq!(b.look_points(), odd(91));
    // Bad is 10 % slower, clearly: the endpoints differ.
    let confirm = decided(judged(&b, &points(5, 10.0)));
    assert_eq!((confirm.verdict, confirm.commit), (StepVerdict::Bad, 16));
    assert_eq!(confirm.label, "SIGNAL");
    b.push(Record::Step(confirm)).unwrap();
    assert_eq!(b.look_points(), odd(31));
    // A commit like good, one like bad, and one at a third of bad's change.
    let good = decided(judged(&b, &points(5, 0.05)));
    assert_eq!(good.verdict, StepVerdict::Good, "{good:?}");
    let bad = decided(judged(&b, &points(5, 10.1)));
    assert_eq!(bad.verdict, StepVerdict::Bad, "{bad:?}");
    let between = decided(judged(&b, &points(7, 6.0)));
    assert_eq!(between.verdict, StepVerdict::Between, "{between:?}");
    assert!(matches!(
        b.judge(&points(4, 0.0), "good", "x", &EnvironmentCheck::default()),
        Err(BisectError::NotALook { points: 4, .. })
    ));
}

/// An UNSTABLE commit step is taken again on a fresh sandwich once (`step_retries`), then
/// left out; the retry is replayed like any record.
#[test]
fn an_unstable_commit_step_is_retried_once_then_left_out() {
    let mut b = Bisection::new(input(16, Strategy::Plain)).unwrap();
    b.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    assert_eq!(b.input().budget.step_retries, 1);
    let first = test_of(&b);
    b.push(step(first, StepVerdict::Unstable, 10.0)).unwrap();
    assert_eq!(test_of(&b), first, "a fresh sandwich of the same commit");
    b.push(step(first, StepVerdict::Unstable, 10.0)).unwrap();
    let next = test_of(&b);
    assert_ne!(next, first, "left out after its retry");
    let replayed = Bisection::replay(b.input().clone(), b.records()).unwrap();
    assert_eq!(replayed.next(), b.next());
    // Decided on its retry, the commit counts like any decided step.
    let mut c = Bisection::new(input(16, Strategy::Plain)).unwrap();
    c.push(step(16, StepVerdict::Bad, 10.0)).unwrap();
    let first = test_of(&c);
    c.push(step(first, StepVerdict::Unstable, 10.0)).unwrap();
    c.push(step(first, StepVerdict::Bad, 10.0)).unwrap();
    assert!(
        test_of(&c) < first,
        "bad at {first}: the search goes below it"
    );
}
