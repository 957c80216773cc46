//! The campaign engine on the built-in `local` target, driven through the real binary: a
//! SIGKILLed runner resumes without losing or mislabelling a sample; failing, unparsable and
//! timed-out workloads stop with errors that name the workload, the point and the raw output.

use std::{
    collections::BTreeMap,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use aba::results::{
    journal::{Event, Journal},
    samples::{Phase, SampleTable, Status},
};

use crate::support::{
    cli::{
        aba, aba_command, assert_verified, campaign_dir, journal_events, resume,
        samples_since_start_of, text, wait_for_journal, write,
    },
    cpus::{OWN, pinning_recipe, split_cpus},
    recipe::{Better, Metric, Recipe, Regex, Workload},
    report_oracle,
};

/// Three points of the running kernel, short shell workloads.
fn three_points() -> String {
    Recipe::new(
        "engine-test",
        "three points of the running kernel, short shell workloads",
        &["this", "this", "this"],
    )
    .runs(1, 4)
    .workload(Workload::new(
        "tick",
        "sleep 0.1; echo $ABA_SAMPLE",
        Metric::lower("n"),
    ))
    .workload(
        Workload::new(
            "pair",
            "sleep 0.1; echo \"mode={mode} a=$ABA_SAMPLE b=2\"",
            Metric::Regexes(vec![
                Regex {
                    name: "a",
                    regex: r"a=(\d+)",
                    unit: "n",
                    better: Better::Lower,
                },
                Regex {
                    name: "b",
                    regex: r"b=(\d+)",
                    unit: "n",
                    better: Better::Higher,
                },
            ]),
        )
        .matrix("mode", &["x", "y"]),
    )
    .toml()
}

/// (point, workload, case, metric) → valid rows, using the journal's done attempts.
fn valid_rows(dir: &Path) -> BTreeMap<(String, String, String, String), usize> {
    let state = Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    let done = state.done_attempts();
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let mut counts = BTreeMap::new();
    for r in &table.rows {
        let point = table.text(r.point).to_owned();
        if r.status == Status::Ok && done.get(&point) == Some(&r.attempt) {
            *counts
                .entry((
                    point,
                    table.text(r.workload).to_owned(),
                    table.text(r.case).to_owned(),
                    table.text(r.metric).to_owned(),
                ))
                .or_insert(0) += 1;
        }
    }
    counts
}

/// `aba run RECIPE --results RESULTS` on the local target in the background, output
/// discarded: for the tests that kill it.
fn spawn_run(tmp: &Path, recipe: &Path, results: &Path) -> std::process::Child {
    aba_command(tmp)
        .args(["run", recipe.to_str().expect("utf-8"), "--results"])
        .arg(results)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("aba run starts")
}

#[test]
fn a_sigkilled_run_resumes_with_every_sample_exactly_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(tmp.path(), "r.toml", &three_points());
    let results = tmp.path().join("results");
    let mut child = spawn_run(tmp.path(), &recipe, &results);

    // Kill it in the middle of the second point, after it took a few samples there.
    let dir = wait_for_journal(&results, Duration::from_secs(60), "point 2", |events| {
        samples_since_start_of(events, "this-b") >= 3
    });
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    // Reports are rewritten after every finished point, so point 1 is already readable.
    let interim = report_oracle::checked_report(&dir);
    assert!(interim.contains("this#1"), "{interim}");

    // A changed recipe is a different experiment: resume refuses it.
    let copy = dir.join("recipe.toml");
    let original = std::fs::read_to_string(&copy).expect("recipe copy");
    std::fs::write(&copy, original.replace("samples = 4", "samples = 5")).expect("edit");
    let refused = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("changed since the campaign started"),
        "{}",
        text(&refused)
    );
    std::fs::write(&copy, original).expect("restore");

    let status = aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]);
    assert!(status.status.success(), "{}", text(&status));
    let status_text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status_text.contains("\n  this#1 "), "{status_text}");
    assert!(
        status_text.contains("in progress or interrupted (attempt 1"),
        "{status_text}"
    );

    let resumed = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert!(resumed.status.success(), "{}", text(&resumed));

    // Exactly warm-up + samples valid rows per workload case and metric per point.
    let counts = valid_rows(&dir);
    let mut expected = BTreeMap::new();
    for point in ["this-a", "this-b", "this-c"] {
        expected.insert(
            (point.into(), "tick".into(), String::new(), "tick".into()),
            5,
        );
        for case in ["mode=x", "mode=y"] {
            for metric in ["a", "b"] {
                expected.insert((point.into(), "pair".into(), case.into(), metric.into()), 5);
            }
        }
    }
    assert_eq!(counts, expected);

    // The interrupted attempt's rows are still in the raw data, as they were written; the
    // journal says they do not count.
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let discarded: Vec<_> = table
        .rows
        .iter()
        .filter(|r| table.text(r.point) == "this-b" && r.attempt == 1)
        .collect();
    assert!(!discarded.is_empty(), "the killed attempt left no rows");
    assert!(discarded.iter().all(|r| r.status == Status::Ok));
    let events = journal_events(&dir);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::PointDiscarded { point, attempt: 1, rows } if point == "this-b" && *rows == discarded.len() as u64
    )));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PointDone { point, attempt: 2, .. } if point == "this-b"))
    );
    // Point this-a was not redone.
    assert!(
        !events.iter().any(
            |e| matches!(e, Event::PointStarted { point, attempt: 2, .. } if point == "this-a")
        )
    );
    // Every measured index 1..=4 appears once per metric in the valid attempt.
    let idx: Vec<u32> = table
        .rows
        .iter()
        .filter(|r| {
            table.text(r.point) == "this-b"
                && r.attempt == 2
                && table.text(r.metric) == "tick"
                && r.phase == Phase::Sample
        })
        .map(|r| r.index)
        .collect();
    assert_eq!(idx, [1, 2, 3, 4]);
    assert_verified(&dir);
}

/// Values a workload prints with all 17 significant digits (a ratio printed by Python or
/// awk's `%.17g`) are kept bit for bit: each was read back one unit in the last place off by
/// JSON's fast float reader, so the journal disagreed with `samples.csv` and the campaign
/// stopped at its first point.
#[test]
fn a_workload_printing_seventeen_digit_values_finishes_verified_with_each_value_exact() {
    const VALUES: [&str; 4] = [
        "1491.3107553264927",
        "1677.8666143426585",
        "1430.5185851752121",
        "1816.6712408436426",
    ];
    let pick = VALUES
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{}) v={v};;", i + 1))
        .collect::<String>();
    let recipe = format!(
        r#"
version = 1
name = "digits"
description = "full-precision values, as a number and inside JSON"
sequence = ["this", "this", "this"]
warmup = 0
samples = 4

[kernels.this]
release = "running"

[[workload]]
name = "plain"
run = "case $ABA_SAMPLE in {pick} esac; echo $v"
metric = {{ number = true, unit = "ns", better = "lower" }}

[[workload]]
name = "json"
run = "case $ABA_SAMPLE in {pick} esac; echo '{{\"r\": '$v'}}'"
metric = {{ json = "/r", unit = "ns", better = "lower" }}
"#
    );
    let (_, dir, _tmp) = run_expecting(&recipe, 0);
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let mut seen = 0;
    for row in &table.rows {
        let index = usize::try_from(row.index).expect("index") - 1;
        let value = row.value.expect("a value");
        assert_eq!(
            value.to_bits(),
            VALUES[index].parse::<f64>().expect("f64").to_bits(),
            "row {} of {}",
            row.index,
            table.text(row.workload)
        );
        seen += 1;
    }
    assert_eq!(seen, 3 * 4 * 2, "every row");
    let csv = std::fs::read_to_string(dir.join("samples.csv")).expect("read");
    for v in VALUES {
        assert_eq!(csv.matches(&format!(",{v},")).count(), 6, "{v} as written");
    }
}

fn failing_recipe(run: &str, metric: &str, extra: &str) -> String {
    format!(
        r#"
version = 1
name = "failing"
description = "a workload that does not produce a sample"
sequence = ["this"]
warmup = 0
samples = 2
point_retries = 0

[kernels.this]
release = "running"

[[workload]]
name = "bad"
run = "{run}"
retries = 0
{extra}
metric = {metric}
"#
    )
}

/// Runs a recipe expected to stop; returns (stderr, results dir).
fn run_to_failure(recipe_text: &str) -> (String, std::path::PathBuf, tempfile::TempDir) {
    run_expecting(recipe_text, 3)
}

/// Runs a recipe on the local machine, expecting `aba run` to exit with `code`; returns
/// (stderr, results dir) after checking the directory's integrity.
fn run_expecting(recipe_text: &str, code: i32) -> (String, std::path::PathBuf, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(tmp.path(), "r.toml", recipe_text);
    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    assert_eq!(out.status.code(), Some(code), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    assert_verified(&dir);
    (String::from_utf8_lossy(&out.stderr).into_owned(), dir, tmp)
}

/// The raw-output directory the message names must exist inside the campaign directory.
fn raw_dir_named_in(stderr: &str, dir: &Path) -> std::path::PathBuf {
    let start = stderr
        .find("raw output saved in ")
        .expect("names the raw output")
        + "raw output saved in ".len();
    let named: String = stderr[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ';')
        .collect();
    let campaign = dir
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let rel = named
        .split_once(&format!("{campaign}/"))
        .expect("the path is inside the campaign directory")
        .1;
    let path = dir.join(rel.trim_end_matches('/'));
    assert!(path.is_dir(), "raw output dir {} missing", path.display());
    path
}

#[test]
fn a_failing_workload_names_workload_point_and_raw_output() {
    let (stderr, dir, _tmp) = run_to_failure(&failing_recipe(
        "echo partial; echo oops >&2; exit 3",
        r#"{ number = true, better = "lower" }"#,
        "",
    ));
    assert!(
        stderr.contains(
            "workload `bad` at point `this` (sample 1): exit status 3 (expected exit status 0)"
        ),
        "{stderr}"
    );
    let raw = raw_dir_named_in(&stderr, &dir);
    assert_eq!(
        std::fs::read_to_string(raw.join("stderr")).expect("saved"),
        "oops\n"
    );
    assert_eq!(
        std::fs::read_to_string(raw.join("stdout")).expect("saved"),
        "partial\n"
    );
    assert!(stderr.contains("aba resume"), "{stderr}");
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    assert_eq!(table.rows.len(), 1);
    assert_eq!(table.rows[0].status, Status::Failed);
    assert!(
        journal_events(&dir)
            .iter()
            .any(|e| matches!(e, Event::PointFailed { point, attempt: 1, .. } if point == "this")),
        "a failed attempt's rows do not count: the journal says so"
    );
}

#[test]
fn unparsable_output_names_the_metric() {
    let (stderr, dir, _tmp) = run_to_failure(&failing_recipe(
        "echo garbage",
        r#"{ name = "ns", number = true, better = "lower" }"#,
        "",
    ));
    assert!(
        stderr.contains("workload `bad` at point `this` (sample 1): cannot read metric `ns`: `garbage` is not a number"),
        "{stderr}"
    );
    let raw = raw_dir_named_in(&stderr, &dir);
    assert_eq!(
        std::fs::read_to_string(raw.join("stdout")).expect("saved"),
        "garbage\n"
    );
}

/// A number printed after more than `max_output` of output (issue 37, item 7): the failure
/// names the cut and says to raise `max_output`, instead of only that the number is missing.
#[test]
fn a_number_beyond_max_output_fails_with_the_hint_to_raise_it() {
    let (stderr, _dir, _tmp) = run_to_failure(&failing_recipe(
        "yes x | head -c 8192; echo 5",
        r#"{ name = "ns", number = true, better = "lower" }"#,
        "max_output = \"4KiB\"",
    ));
    assert!(
        stderr.contains("the output was cut at max_output = 4096 bytes per stream"),
        "{stderr}"
    );
    assert!(
        stderr.contains("raise the workload's `max_output`"),
        "{stderr}"
    );
}

#[test]
fn a_timeout_kills_the_run_and_says_so() {
    let started = Instant::now();
    let (stderr, dir, _tmp) = run_to_failure(&failing_recipe(
        "sleep 30",
        r#"{ number = true, better = "lower" }"#,
        "timeout = \"1s\"",
    ));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the timeout did not cut the run short"
    );
    assert!(
        stderr.contains("workload `bad` at point `this` (sample 1): timed out"),
        "{stderr}"
    );
    let raw = raw_dir_named_in(&stderr, &dir);
    assert!(
        std::fs::read_to_string(raw.join("command.txt"))
            .expect("saved")
            .contains("outcome: timed out")
    );
}

/// Two points on the running kernel that set `kernel.printk_ratelimit` (harmless, writable by
/// root) to `wanted` and run one workload `samples` times.
fn printk_recipe(name: &str, samples: u32, workload: &str, run: &str, wanted: u32) -> String {
    format!(
        r#"
version = 1
name = "{name}"
description = "sets a harmless sysctl"
sequence = ["this", "this"]
warmup = 0
samples = {samples}
[kernels.this]
release = "running"
[sysctl]
"kernel.printk_ratelimit" = {wanted}
[[workload]]
name = "{workload}"
run = "{run}"
metric = {{ number = true, better = "lower" }}
"#
    )
}

#[test]
fn tuning_the_local_machine_needs_consent_and_is_restored() {
    let _sysctls = crate::support::host_sysctl::lock();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = "/proc/sys/kernel/printk_ratelimit";
    let Ok(before) = std::fs::read_to_string(path) else {
        crate::support::skip::skip(&format!("{path} is not readable here"));
        return;
    };
    let wanted: u32 = before.trim().parse::<u32>().unwrap_or(5) + 1;
    let recipe = write(
        tmp.path(),
        "r.toml",
        &printk_recipe(
            "tuned",
            1,
            "read",
            "cat /proc/sys/kernel/printk_ratelimit",
            wanted,
        ),
    );
    let refused = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--allow-tuning"),
        "{}",
        text(&refused)
    );
    assert!(
        !tmp.path().join("results").exists(),
        "a refused run must not create a results directory"
    );

    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
            "--allow-tuning",
        ],
    );
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("rejected") {
        crate::support::skip::skip(&format!("this machine refuses writes to {path}"));
        return;
    }
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(path).expect("readable"),
        before,
        "the sysctl was not restored"
    );
    // The workload saw the tuned value.
    let dir = campaign_dir(&tmp.path().join("results"));
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    assert!(
        table
            .rows
            .iter()
            .all(|r| r.value == Some(f64::from(wanted)))
    );
    assert_verified(&dir);
}

#[test]
fn ctrl_c_restores_tuning_and_leaves_a_resumable_campaign() {
    let _sysctls = crate::support::host_sysctl::lock();
    let path = "/proc/sys/kernel/printk_ratelimit";
    let Ok(before) = std::fs::read_to_string(path) else {
        crate::support::skip::skip(&format!("{path} is not readable here"));
        return;
    };
    let wanted: u32 = before.trim().parse::<u32>().unwrap_or(5) + 2;
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(
        tmp.path(),
        "r.toml",
        &printk_recipe(
            "interrupted",
            4,
            "slow",
            "sleep 0.4; cat /proc/sys/kernel/printk_ratelimit",
            wanted,
        ),
    );
    let results = tmp.path().join("results");
    let child = aba_command(tmp.path())
        .args([
            "run",
            recipe.to_str().expect("utf-8"),
            "--allow-tuning",
            "--results",
        ])
        .arg(&results)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aba run starts");
    let dir = wait_for_journal(&results, Duration::from_secs(60), "a sample", |events| {
        events.iter().any(|e| matches!(e, Event::Sample { .. }))
    });
    // SAFETY: kill(2) on the child we spawned.
    unsafe {
        libc::kill(i32::try_from(child.id()).expect("pid"), libc::SIGINT);
    }
    let out = child.wait_with_output().expect("aba exits");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("aba resume"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(path).expect("readable"),
        before,
        "tuning was not restored"
    );
    let events = journal_events(&dir);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Interrupted { .. }))
    );

    let resumed = aba(
        tmp.path(),
        &["resume", dir.to_str().expect("utf-8"), "--allow-tuning"],
    );
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_eq!(
        std::fs::read_to_string(path).expect("readable"),
        before,
        "tuning was not restored"
    );
    let counts = valid_rows(&dir);
    assert_eq!(counts.values().copied().collect::<Vec<_>>(), [4, 4]);
    assert_verified(&dir);
}

/// The loss of issue 19: a point that fails after it wrote rows and is retried in the same run
/// (here: sample 2 of point `this-b` fails at attempt 1 only). Every row of the retry and of
/// every later point must be in samples.csv, and the campaign must agree with its journal.
#[test]
fn rows_after_a_point_retried_in_the_same_run_are_all_kept() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = Recipe::new(
        "retry-in-run",
        "point b fails once after some samples, then succeeds",
        &["this", "this", "this"],
    )
    .runs(1, 4)
    .point_retries(1)
    .workload(
        Workload::new(
            "flaky",
            r#"if [ "$ABA_POINT/$ABA_ATTEMPT/$ABA_PHASE/$ABA_SAMPLE" = this-b/1/sample/2 ]; then exit 1; fi; echo $ABA_SAMPLE"#,
            Metric::lower("n"),
        )
        .retries(0),
    )
    .write(tmp.path(), "r.toml");
    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let events = journal_events(&dir);
    assert!(
        events.iter().any(
            |e| matches!(e, Event::PointFailed { point, attempt: 1, .. } if point == "this-b")
        ),
        "point b failed once"
    );
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let rows = |point: &str, attempt: u32| -> Vec<(Phase, u32, Status)> {
        table
            .rows
            .iter()
            .filter(|r| table.text(r.point) == point && r.attempt == attempt)
            .map(|r| (r.phase, r.index, r.status))
            .collect()
    };
    let full = vec![
        (Phase::Warmup, 1, Status::Ok),
        (Phase::Sample, 1, Status::Ok),
        (Phase::Sample, 2, Status::Ok),
        (Phase::Sample, 3, Status::Ok),
        (Phase::Sample, 4, Status::Ok),
    ];
    assert_eq!(rows("this-a", 1), full);
    assert_eq!(
        rows("this-b", 1),
        [
            (Phase::Warmup, 1, Status::Ok),
            (Phase::Sample, 1, Status::Ok),
            (Phase::Sample, 2, Status::Failed)
        ]
    );
    assert_eq!(
        rows("this-b", 2),
        full,
        "the retry's rows are in samples.csv"
    );
    assert_eq!(
        rows("this-c", 1),
        full,
        "the next point's rows are in samples.csv"
    );
    assert_verified(&dir);
    let status = aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("done (attempt 2, 4 sample rows)"),
        "{status}"
    );
}

/// A run ends when its own process exits: a child that leaves the process group and keeps
/// stdout open (`setsid sleep 600 &`) neither holds the run until its timeout nor survives it,
/// and the journal, the raw output and the reports name it (issue 19).
#[test]
fn a_child_that_keeps_stdout_open_is_killed_when_the_run_ends_and_named() {
    // host tools: setsid pgrep
    let marker = format!("{}", 600_000 + std::process::id() % 1000);
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(
        tmp.path(),
        "r.toml",
        &format!(
            r#"
version = 1
name = "leftover"
description = "a workload that leaves a daemon holding its stdout"
sequence = ["this"]
warmup = 0
samples = 2
[kernels.this]
release = "running"
[[workload]]
name = "daemon"
run = "setsid sleep {marker} & sleep 0.3; echo 7"
timeout = "60s"
metric = {{ number = true, unit = "n", better = "lower" }}
"#
        ),
    );
    let started = Instant::now();
    let out = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the runs waited for the daemon: {:?}",
        started.elapsed()
    );
    let survivors = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .expect("pgrep");
    assert!(survivors.stdout.is_empty(), "the daemon survived the run");
    let dir = campaign_dir(&tmp.path().join("results"));
    let events = journal_events(&dir);
    let left: Vec<&Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::Sample { leftovers, .. } => Some(leftovers),
            _ => None,
        })
        .collect();
    assert_eq!(left.len(), 2);
    assert!(
        left.iter()
            .all(|l| l.len() == 1 && l[0].contains(&format!("sleep {marker}"))),
        "{left:?}"
    );
    let audit = std::fs::read_to_string(dir.join("run-audit.tsv")).expect("audit");
    assert!(audit.contains(&format!("sleep {marker}")), "{audit}");
    let report = report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("left behind when the run exited"), "{report}");
    let raw = dir.join("raw/this-1/daemon-sample1-try0/command.txt");
    let meta = std::fs::read_to_string(&raw).expect("raw output of the run");
    assert!(meta.contains("left behind and killed:"), "{meta}");
    assert_verified(&dir);
}

/// A workload that prints 200 MB keeps at most `max_output` of it in memory and on disk, and
/// the journal says how much was dropped (issue 19).
#[test]
fn output_beyond_max_output_is_counted_not_kept_and_memory_stays_bounded() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(
        tmp.path(),
        "r.toml",
        r#"
version = 1
name = "chatty"
description = "200 MB of log lines on stderr, the number on stdout"
sequence = ["this"]
warmup = 0
samples = 1
[kernels.this]
release = "running"
[[workload]]
name = "chatty"
run = "head -c 200000000 /dev/zero >&2; echo 5"
max_output = "1MiB"
metric = { number = true, unit = "n", better = "lower" }
"#,
    );
    let log = std::fs::File::create(tmp.path().join("stderr.txt")).expect("log");
    let mut child = aba_command(tmp.path())
        .args([
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("aba run starts");
    // VmHWM of the process after its exec (getrusage's maxrss would count the test binary's
    // pages the child shared before the exec); polled until it exits, it is the peak.
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(
        status.success(),
        "aba run ended with {status}: {}",
        std::fs::read_to_string(tmp.path().join("stderr.txt")).unwrap_or_default()
    );
    let peak_mb = peak_kb / 1024;
    eprintln!("peak RSS of aba run: {peak_mb} MB");
    assert!(
        peak_mb < 100,
        "aba's peak RSS was {peak_mb} MB for 200 MB of output"
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    let dropped: Vec<Option<u64>> = journal_events(&dir)
        .iter()
        .filter_map(|e| match e {
            Event::Sample { dropped_bytes, .. } => Some(*dropped_bytes),
            _ => None,
        })
        .collect();
    assert_eq!(dropped, [Some(200_000_000 - (1 << 20))]);
    let raw = dir.join("raw/this-1/chatty-sample1-try0");
    assert_eq!(
        std::fs::metadata(raw.join("stderr"))
            .expect("raw stderr")
            .len(),
        1 << 20
    );
    assert!(
        std::fs::read_to_string(raw.join("command.txt"))
            .expect("meta")
            .contains("stderr: truncated: kept the first 1048576 of 200000000 bytes")
    );
    assert_verified(&dir);
}

/// A campaign stopped by its recipe continues after `aba resume --amend FIXED`, which may
/// change only what no finished point used; the report says so at the top (issue 19).
#[test]
fn a_campaign_stopped_by_its_recipe_continues_with_an_amended_one() {
    let broken = failing_recipe("exit 3", r#"{ number = true, better = "lower" }"#, "");
    let (_, dir, tmp) = run_to_failure(&broken);
    // The analysis is preregistered: an amendment may not touch it.
    let limits = write(
        tmp.path(),
        "limits.toml",
        &format!("{broken}\n[analysis]\nbaseline = \"this\"\nmax_cv_pct = 50.0\n"),
    );
    let refused = resume(
        tmp.path(),
        &dir,
        None,
        &["--amend", limits.to_str().expect("utf-8")],
    );
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("[analysis] changed"),
        "{}",
        text(&refused)
    );
    let fixed = write(
        tmp.path(),
        "fixed.toml",
        &broken.replace("exit 3", "echo 4"),
    );
    let out = resume(
        tmp.path(),
        &dir,
        None,
        &["--amend", fixed.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let report = report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Amended on"), "{report}");
    assert!(flat.contains("the workloads"), "{report}");
    assert_eq!(
        std::fs::read_to_string(dir.join("recipe.toml")).expect("copy"),
        std::fs::read_to_string(&fixed).expect("fixed"),
        "the copy is the amended recipe"
    );
    assert_verified(&dir);
}

fn check_recipe(run: &str) -> String {
    format!(
        r#"
version = 1
name = "checks"
description = "an untimed correctness check that must fail on this kernel"
sequence = ["this"]
point_retries = 0

[kernels.this]
release = "running"

[[workload]]
name = "mode_switch"
role = "check"
run = "{run}"

[workload.check]
must_match = ["RESULT: PASS"]
expect_fail = ["this"]
"#
    )
}

#[test]
fn a_check_that_must_fail_passes_the_run_when_it_fails_and_fails_it_when_it_passes() {
    // Fails as expected: the campaign completes, writes no sample row, and the report says
    // what the check showed where.
    let (_, dir, _tmp) = run_expecting(&check_recipe("echo RESULT: FAIL"), 0);
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    assert!(table.rows.is_empty(), "a check has no metric, so no row");
    let report = report_oracle::checked_report(&dir);
    let report = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        report.contains(
            "mode_switch on kernel this: must fail (check.expect_fail); as expected at this."
        ),
        "{report}"
    );
    let out = aba(
        dir.parent().expect("results"),
        &["report", dir.to_str().expect("utf-8"), "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let this = &doc["checks"][0]["kernels"][0];
    assert_eq!(doc["checks"][0]["workload"], "mode_switch");
    assert_eq!(this["expected"], "fail");
    assert_eq!(this["held_at"], serde_json::json!(["this"]));
    // Passes where it must fail: the run fails, named like any check failure.
    let (stderr, dir, _tmp) = run_to_failure(&check_recipe("echo RESULT: PASS"));
    assert!(
        stderr.contains(
            "workload `mode_switch` at point `this` (sample 1): the check passed on kernel `this`, where it must fail (check.expect_fail)"
        ),
        "{stderr}"
    );
    let raw = raw_dir_named_in(&stderr, &dir);
    assert_eq!(
        std::fs::read_to_string(raw.join("stdout")).expect("saved"),
        "RESULT: PASS\n"
    );
}

/// A-B-A of two kernels on the running release that extends itself: its boot means (the
/// scripted engine test's: 5.5% that look 1 cannot show and look 2 can) come from the point
/// label, each point's three samples at mean, mean + 1 and mean − 1.
const EXTENDED: &str = r#"
version = 1
name = "extended"
description = "an A-B-A that extends itself until decided"
sequence = ["a", "b", "a"]
warmup = 0
samples = 3

[kernels.a]
release = "running"
[kernels.b]
release = "running"

[analysis]
extend = { until = "decided", max_points = 7 }

[[workload]]
name = "w"
run = '''sleep 0.2; case $ABA_POINT in a-a) m=100;; b) m=106;; a-b) m=100.9;; b-b) m=106;; *) m=100.45;; esac; awk -v m=$m -v s=$ABA_SAMPLE 'BEGIN { print m + (s == 2) - (s == 3) }' '''
metric = { number = true, better = "lower" }
"#;

/// SIGKILLed in the middle of the first appended point: the extension was journaled before
/// it ran, so `aba resume` redoes b-b, runs a-c and decides at look 2 as an uninterrupted run
/// would; `aba verify` finds the journal and samples.csv in agreement, and the report says
/// what was appended and why.
#[test]
fn an_extended_campaign_killed_mid_extension_resumes_the_same_plan() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(tmp.path(), "r.toml", EXTENDED);
    let results = tmp.path().join("results");
    let mut child = spawn_run(tmp.path(), &recipe, &results);
    let dir = wait_for_journal(&results, Duration::from_secs(60), "point b-b", |events| {
        samples_since_start_of(events, "b-b") >= 1
    });
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    let status = aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]);
    let status_text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status_text.contains("extended: 2 point(s) appended (b#2, a#3) over 1 look(s)"),
        "{status_text}"
    );

    let resumed = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_verified(&dir);
    let looks: Vec<(u32, String)> = journal_events(&dir)
        .iter()
        .filter_map(|e| match e {
            Event::Look { look, appended, .. } => Some((
                *look,
                appended
                    .iter()
                    .map(|p| p.label.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(looks, [(1, "b-b,a-c".to_owned()), (2, String::new())]);
    let counts = valid_rows(&dir);
    for point in ["a-a", "b", "a-b", "b-b", "a-c"] {
        assert_eq!(
            counts.get(&(point.into(), "w".into(), String::new(), "w".into())),
            Some(&3),
            "{point}: {counts:?}"
        );
    }
    let report = report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("3 points planned, 2 appended (b-b, a-c)"),
        "{report}"
    );
    assert!(flat.contains("judged at look 2 of 3"), "{report}");
    assert!(flat.contains("SIGNAL"), "{report}");
}

/// Two cgroup "levels" of one workload on three points of the running kernel: level 6 reads
/// 6 % below level 0 at every sample (seed 004's cost per level).
const CASES: &str = r#"
version = 1
name = "cases"
description = "a case against another within the kernel"
sequence = ["this", "this", "this"]
warmup = 0
samples = 3

[kernels.this]
release = "running"

[[workload]]
name = "pipe"
run = "echo $(( (1000 + ABA_SAMPLE) * (100 - {level}) ))"
matrix = { level = ["0", "6"] }
metric = { number = true, unit = "ops/s", better = "higher" }

[analysis]
max_cv_pct = 5.0

[[analysis.case_comparison]]
workload = "pipe"
control = "level=0"
treatment = "level=6"
"#;

#[test]
fn a_case_comparison_is_judged_and_reported_in_every_format() {
    let (_, dir, _tmp) = run_expecting(CASES, 0);
    let report = report_oracle::checked_report(&dir);
    assert!(
        report.contains("Case comparisons within each kernel")
            && report.contains("pipe[level=6]\n")
            && report.contains("vs pipe[level=0] (ops/s, higher is better)"),
        "{report}"
    );
    let row = report
        .lines()
        .find(|l| l.trim_start().starts_with("this ") && l.contains("-6.00%"))
        .unwrap_or_else(|| panic!("no row for kernel this:\n{report}"));
    assert!(
        row.contains("100200.00") && row.contains("SIGNAL, slower"),
        "{row}"
    );
    assert!(
        report.contains("95% CI [") && report.contains("drift 0.00%, CV 0.10%\n"),
        "{report}"
    );
    assert!(report.lines().all(|l| l.chars().count() <= 72), "{report}");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README.md");
    assert!(
        readme.contains("vs pipe[level=0] (ops/s, higher is better)"),
        "{readme}"
    );
    let tsv = std::fs::read_to_string(dir.join("comparison.tsv")).expect("tsv");
    for row in [
        "pipe\tlevel=6\tpipe\tops/s\tall\tcase_change_pct\tthis,pipe[level=0]\t-6.000000",
        "pipe\tlevel=6\tpipe\tops/s\tall\tcase_control_mean\tthis,pipe[level=0]\t100200.000000",
        "pipe\tlevel=6\tpipe\tops/s\tall\tcase_verdict\tthis,pipe[level=0]\tSIGNAL",
        "pipe\tlevel=6\tpipe\tops/s\tdrop_first\tcase_verdict\tthis,pipe[level=0]\tSIGNAL",
        "pipe\tlevel=6\tpipe\tops/s\tall\tcase_ci95_boot_nu\tthis,pipe[level=0]\t2.000000",
    ] {
        // The last column, args_named, names points; these args hold none.
        let named = format!("{row}\t");
        assert!(
            tsv.lines().any(|l| l.starts_with(&named)),
            "no row {row:?} in\n{tsv}"
        );
    }
    let out = aba(
        dir.parent().expect("results"),
        &["report", dir.to_str().expect("utf-8"), "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["format"], 1);
    let case = &doc["case_comparisons"][0];
    assert_eq!(case["label"], "pipe[level=6] vs pipe[level=0]");
    assert_eq!(case["control"], "level=0");
    let this = &case["all"][0];
    assert_eq!(this["kernel"], "this");
    assert_eq!(
        this["points"],
        serde_json::json!(["this-a", "this-b", "this-c"])
    );
    assert_eq!(this["verdict"]["label"], "Signal");
    assert_eq!(this["label"], "SIGNAL");
    let change = this["comparison"]["change_pct"].as_f64().expect("a number");
    assert!((change + 6.0).abs() < 1e-9, "{change}");

    // One point: no pair of points to measure the differences' variance, UNREPLICATED.
    let one = CASES.replace(
        r#"sequence = ["this", "this", "this"]"#,
        r#"sequence = ["this"]"#,
    );
    let (_, dir, _tmp) = run_expecting(&one, 0);
    let report = report_oracle::checked_report(&dir);
    assert!(
        report.contains("UNREPLICATED") && report.contains("no boot-level CI (ν = 0), booted once"),
        "{report}"
    );
    assert!(report.lines().all(|l| l.chars().count() <= 72), "{report}");
}

/// On the local target aba itself runs on the machine under test: a recipe that pins a
/// workload to a CPU moves every thread of aba off it, and every command aba starts (setup,
/// an unpinned run, teardown) gets the CPUs aba found; the pinned run gets its CPU.
#[test]
fn on_the_local_target_aba_keeps_itself_off_a_pinned_cpu() {
    let Some(split) = split_cpus() else {
        return;
    };
    let (_, dir, _tmp) = run_expecting(
        &pinning_recipe(
            &split,
            &format!(
                "test \"$({OWN})\" = \"{all}\" || exit 1\n\
                 for t in /proc/$PPID/task/*; do\n\
                 test \"$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $t/status)\" = \"{rest}\" || exit 2\n\
                 done\n\
                 echo 1",
                all = split.all,
                rest = split.rest
            ),
        ),
        0,
    );
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let values: Vec<Option<f64>> = table.rows.iter().map(|r| r.value).collect();
    assert_eq!(values, [Some(1.0), Some(1.0), Some(2.0), Some(2.0)]);
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    assert!(!journal.contains("could not keep itself off"), "{journal}");
}

/// One point of the running kernel on `local`, three samples of a constant value.
fn one_constant_point() -> String {
    Recipe::new(
        "tamper",
        "one point of the running kernel, a constant value",
        &["this"],
    )
    .runs(0, 3)
    .workload(Workload::new(
        "constant",
        "echo 777.41",
        Metric::lower("ms"),
    ))
    .toml()
}

/// Issue 29 item 4: every journaled run carries its values and the hash chain of its rows, so
/// a value edited in samples.csv (777.41 -> 999.0), a row added or a row removed makes `aba
/// verify` fail naming the line and the run, and `aba report` refuse the directory.
#[test]
fn an_edited_added_or_removed_sample_fails_verify_and_report() {
    let (_, dir, tmp) = run_expecting(&one_constant_point(), 0);
    let samples = dir.join("samples.csv");
    let original = std::fs::read_to_string(&samples).expect("samples.csv");
    assert_eq!(original.matches(",777.41,").count(), 3, "{original}");
    let check = |content: &str, what: &str, says: &[&str]| {
        std::fs::write(&samples, content).expect("write samples.csv");
        let verify = aba(tmp.path(), &["verify", dir.to_str().expect("utf-8")]);
        let said = text(&verify);
        assert_eq!(verify.status.code(), Some(5), "{what}: {said}");
        for words in says {
            assert!(said.contains(words), "{what}: `{words}` not in {said}");
        }
        let report = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
        let said = text(&report);
        assert_eq!(report.status.code(), Some(5), "{what}: {said}");
        assert!(
            said.contains("aba report refuses") && said.contains("does not match its journal"),
            "{what}: {said}"
        );
    };
    let edited = original.replacen(",777.41,", ",999.0,", 1);
    check(
        &edited,
        "an edited value",
        &[
            "samples.csv line 2 (`this` attempt 1 constant sample 1) has `constant` = 999, the journal recorded 777.41",
            "samples.csv lines 2-2 are not the bytes journaled with run `this` attempt 1 constant sample 1",
        ],
    );
    let mut lines: Vec<&str> = original.lines().collect();
    let added_row = lines[2].replace(",sample,2,", ",sample,4,");
    lines.insert(3, &added_row);
    check(
        &(lines.join("\n") + "\n"),
        "an added row",
        &[
            "samples.csv line 4 (`this` attempt 1 constant sample 4) belongs to no run in the journal",
        ],
    );
    let mut lines: Vec<&str> = original.lines().collect();
    lines.remove(2);
    check(
        &(lines.join("\n") + "\n"),
        "a removed row",
        &[
            "the journal records run `this` attempt 1 constant sample 2, but samples.csv has no row for its metric `constant`",
            "samples.csv lines 3-3 are not the bytes journaled with run `this` attempt 1 constant sample 3",
        ],
    );
    // The file as measured verifies and reports again.
    std::fs::write(&samples, &original).expect("write samples.csv");
    assert_verified(&dir);
    let report = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
    assert!(report.status.success(), "{}", text(&report));
}

/// Issue 29 item 7: for `["a", "b", "a"]`, `aba check`, the progress of `aba run` and `aba
/// status` name the points `a#1`, `b`, `a#2` as the reports do, never by their identifiers
/// `a-a`, `a-b` (which stay the data's: journal, samples.csv).
#[test]
fn check_progress_and_status_name_points_as_the_reports_do() {
    let recipe = Recipe::new(
        "names",
        "two kernels of the running release",
        &["a", "b", "a"],
    )
    .runs(0, 2)
    .workload(Workload::new("tick", "echo 1", Metric::lower("n")))
    .toml();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = write(tmp.path(), "r.toml", &recipe);
    let path = path.to_str().expect("utf-8");
    let check = text(&aba(tmp.path(), &["check", path, "--target", "local"]));
    for line in [
        "point 1  a#1  kernel a",
        "point 2  b    kernel b",
        "point 3  a#2  kernel a",
    ] {
        assert!(check.contains(line), "`{line}` not in {check}");
    }
    let run = aba(
        tmp.path(),
        &["run", path, "--target", "local", "--results", "results"],
    );
    let said = text(&run);
    assert!(run.status.success(), "{said}");
    assert!(said.contains("point 3 a#2: kernel a"), "{said}");
    assert!(said.contains("point a#2: done in"), "{said}");
    let dir = campaign_dir(&tmp.path().join("results"));
    let status = text(&aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]));
    assert!(status.contains("\n  a#2 "), "{status}");
    // As words: a boot ID such as `843cc99a-acf0-…` holds the letters `a-a` too.
    for said in [&check, &said, &status] {
        let named = said
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .any(|word| word == "a-a" || word == "a-b");
        assert!(!named, "{said}");
    }
    // The identifiers stay the data's.
    let samples = std::fs::read_to_string(dir.join("samples.csv")).expect("samples.csv");
    assert!(samples.contains("\na-b,3,1,a,"), "{samples}");
    assert_verified(&dir);
}

/// Issue 29: the mail names the machine as its environment record read it back: this
/// machine's CPU model from /proc/cpuinfo and its count of CPUs online. It fails on main,
/// whose report.txt names neither.
#[test]
fn the_report_names_the_machine_as_read_back() {
    let (_, dir, _tmp) = run_expecting(&one_constant_point(), 0);
    let report = report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map(|(_, m)| m.split_whitespace().collect::<Vec<_>>().join(" "));
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").expect("cpu online");
    let online = online.trim();
    let expected = match model {
        Some(model) => format!("Machine, as read back at point this: {model}; "),
        // Some architectures' /proc/cpuinfo has no `model name`: then the sentence starts
        // with the CPUs.
        None => "Machine, as read back at point this: ".to_owned(),
    };
    assert!(flat.contains(&expected), "`{expected}` not in {report}");
    assert!(
        flat.contains(&format!(" online ({online})")),
        "{online} not in {report}"
    );
}
