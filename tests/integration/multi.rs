//! Several targets, one campaign (issue 13), through the binary against two real OpenSSH
//! servers on 127.0.0.1 (`switch = "none"` targets `east` and `west`): one recipe on both at
//! once with the combined report read back, one server killed mid-campaign (that target stops
//! resumable, the other finishes, `aba resume PARENT` completes it), and two names for one
//! machine refused before anything starts.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use aba::results::{
    journal::{Event, Journal},
    samples::{Phase, SampleTable, Status},
};

use crate::support::{
    cli::{aba, aba_command, assert_verified, resume, text, write},
    recipe::{Metric, Recipe, Workload},
    sshd::{Sshd, signal},
};

/// A-B-A of the running kernel on each target; `b` answers 10% higher than `a`, so both
/// targets see the same clear change.
fn recipe() -> Recipe {
    Recipe::new("multi", "one recipe on two targets", &["a", "b", "a"])
        .runs(0, 4)
        .point_retries(0)
        .workload(
            Workload::new(
                "lat",
                "sleep 0.3; if [ \"$ABA_KERNEL\" = b ]; then echo $((1100 + ABA_SAMPLE % 3)); else echo $((1000 + ABA_SAMPLE % 3)); fi",
                Metric::lower("ns"),
            )
            .retries(0),
        )
        .limits(10.0, 10.0)
}

/// One inventory with both servers: `east` and `west`, each with its own work directory and
/// lock marker (and `east-again`, a second name for east's machine, when `alias`).
/// A lost target is given up after 30 s (the least `boot_timeout` lets the engine wait for a
/// reconnect), not after the default two minutes.
pub(crate) fn inventory(tmp: &Path, east: &Sshd, west: &Sshd, alias: bool) -> PathBuf {
    let mut text = String::new();
    for (name, sshd) in [("east", east), ("west", west)] {
        let dir = tmp.join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let one = std::fs::read_to_string(sshd.inventory(&dir, "boot_timeout = \"30s\""))
            .expect("inventory");
        text.push_str(&one.replace("[targets.box]", &format!("[targets.{name}]")));
        if alias && name == "east" {
            text.push_str(&one.replace("[targets.box]", "[targets.east-again]"));
        }
    }
    write(tmp, "targets.toml", &text)
}

pub(crate) fn run_args<'a>(recipe: &'a Path, targets: &'a Path, names: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        recipe.to_str().expect("utf-8"),
        "--targets",
        targets.to_str().expect("utf-8"),
        "--results",
        "results",
    ];
    for name in names {
        args.extend(["--target", name]);
    }
    args
}

/// The only directory under `results`.
pub(crate) fn parent_dir(results: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(results)
        .expect("results exists")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// Every done point of the campaign in `dir` has exactly `samples` valid rows of each of its
/// runs, numbered 1..=samples: nothing lost, nothing twice.
pub(crate) fn assert_complete(dir: &Path, samples: u32) {
    let state = Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    let done = state.done_attempts();
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    for (point, attempt) in &done {
        let indices: Vec<u32> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point
                    && r.attempt == *attempt
                    && r.phase == Phase::Sample
                    && r.status == Status::Ok
            })
            .map(|r| r.index)
            .collect();
        assert_eq!(
            indices,
            (1..=samples).collect::<Vec<_>>(),
            "{}: point {point}",
            dir.display()
        );
    }
    assert_verified(dir);
}

/// targets.tsv as (target, column → value) rows.
pub(crate) fn tsv_rows(parent: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(parent.join("targets.tsv")).expect("targets.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(h, v)| ((*h).to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

#[test]
fn one_recipe_runs_on_two_targets_at_once_with_a_combined_report() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = inventory(tmp.path(), &east, &west, false);
    let recipe = recipe().write(tmp.path(), "r.toml");
    let started = Instant::now();
    let out = aba(tmp.path(), &run_args(&recipe, &targets, &["east", "west"]));
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let parent = parent_dir(&tmp.path().join("results"));

    // The manifest names both subdirectories; each is a normal campaign directory.
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(parent.join("targets.json")).expect("manifest"),
    )
    .expect("JSON");
    assert_eq!(manifest["format"], 1);
    assert_eq!(manifest["recipe"], "multi");
    assert_eq!(
        manifest["targets"],
        serde_json::json!([{"target": "east", "dir": "east"}, {"target": "west", "dir": "west"}])
    );
    for name in ["east", "west"] {
        let dir = parent.join(name);
        let events = Journal::read(&dir.join("journal.jsonl"))
            .expect("journal")
            .events;
        assert!(
            matches!(&events[0], Event::Campaign { target, .. } if target == name),
            "{name}'s journal is its own"
        );
        assert!(events.iter().any(|e| matches!(e, Event::Finished { .. })));
        assert!(dir.join("report.txt").is_file());
        assert_complete(&dir, 4);
        let status = aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]);
        assert!(status.status.success(), "{}", text(&status));
        assert!(String::from_utf8_lossy(&status.stdout).contains("state: finished"));
    }

    // Concurrently: both campaigns' points overlap in time, each campaign alone takes
    // 3 points × 4 samples × 0.3 s at least.
    let span = |name: &str| {
        let events = Journal::read(&parent.join(name).join("journal.jsonl"))
            .expect("journal")
            .events;
        let first = events
            .iter()
            .find_map(|e| match e {
                Event::PointStarted { time, .. } => Some(time.clone()),
                _ => None,
            })
            .expect("a point started");
        let last = events
            .iter()
            .find_map(|e| match e {
                Event::Finished { time } => Some(time.clone()),
                _ => None,
            })
            .expect("finished");
        (first, last)
    };
    let (east_start, east_end) = span("east");
    let (west_start, west_end) = span("west");
    assert!(
        east_start < west_end && west_start < east_end,
        "the campaigns did not overlap: east {east_start}..{east_end}, west {west_start}..{west_end} (run took {took:?})"
    );

    // Progress: every line of a target is prefixed with it.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[east] "), "{stderr}");
    assert!(stderr.contains("[west] "), "{stderr}");
    assert!(
        stderr.contains("targets: east finished, west finished"),
        "{stderr}"
    );

    // The combined report: printed, written, within 72 columns, both targets side by side,
    // agreeing, on one kind of machine.
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report = std::fs::read_to_string(parent.join("report.txt")).expect("report.txt");
    assert_eq!(stdout, report);
    for line in report.lines() {
        assert!(line.chars().count() <= 72, "too wide: {line:?}");
    }
    assert!(
        report.contains("multi on 2 targets: east, west"),
        "{report}"
    );
    assert!(
        report.contains("the same environment fingerprint"),
        "{report}"
    );
    assert!(
        report.contains("lat (ns, lower is better): b against a"),
        "{report}"
    );
    assert!(report.contains("targets agree: slower"), "{report}");
    assert!(parent.join("README.md").is_file());
    let rows = tsv_rows(&parent);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["target"], "east");
    assert_eq!(rows[1]["target"], "west");
    for row in &rows {
        assert_eq!(row["series"], "lat");
        assert_eq!(row["candidate"], "b");
        assert_eq!(row["same_machines"], "yes");
        assert_eq!(row["agreement"], "agree");
        assert_eq!(row["direction"], "slower");
        let change: f64 = row["change_pct"].parse().expect("a number");
        assert!((9.0..11.0).contains(&change), "{row:?}");
    }
    assert_eq!(rows[0]["verdict"], rows[1]["verdict"]);

    // The parent answers status, report and verify.
    let status = aba(tmp.path(), &["status", parent.to_str().expect("utf-8")]);
    assert!(status.status.success(), "{}", text(&status));
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(said.contains("== target east (east/) =="), "{said}");
    assert!(said.contains("== target west (west/) =="), "{said}");
    assert_eq!(said.matches("state: finished").count(), 2, "{said}");
    assert!(said.contains("  east  finished, 3/3 points"), "{said}");
    let again = aba(tmp.path(), &["report", parent.to_str().expect("utf-8")]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(String::from_utf8_lossy(&again.stdout), report);
    let verified = aba(tmp.path(), &["verify", parent.to_str().expect("utf-8")]);
    assert!(verified.status.success(), "{}", text(&verified));
    assert_eq!(
        String::from_utf8_lossy(&verified.stdout)
            .matches("verified:")
            .count(),
        2
    );
    // As JSON: each target's own document under its name, and the combined analysis.
    let json = aba(
        tmp.path(),
        &["status", parent.to_str().expect("utf-8"), "--json"],
    );
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(doc["kind"], "targets_status");
    assert_eq!(doc["recipe"], "multi");
    for (member, name) in doc["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .zip(["east", "west"])
    {
        assert_eq!(member["target"], name);
        assert_eq!(member["dir"], name);
        assert_eq!(member["progress"]["state"], "finished");
        assert_eq!(member["status"]["kind"], "status");
        assert_eq!(member["status"]["state"], "finished");
        assert_eq!(member["status"]["done"], 3);
        let alone = aba(
            tmp.path(),
            &[
                "status",
                parent.join(name).to_str().expect("utf-8"),
                "--json",
            ],
        );
        let alone: serde_json::Value = serde_json::from_slice(&alone.stdout).expect("JSON");
        assert_eq!(member["status"], alone, "the target's own document");
    }
    let json = aba(
        tmp.path(),
        &["report", parent.to_str().expect("utf-8"), "--json"],
    );
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    assert_eq!(
        std::fs::read_to_string(parent.join("report.txt")).expect("report.txt"),
        report,
        "the same files are written"
    );
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(doc["kind"], "targets_report");
    assert_eq!(doc["combined"]["recipe"], "multi");
    let comparison = &doc["combined"]["comparisons"][0];
    assert_eq!(comparison["series"], "lat");
    assert_eq!(comparison["agreement"]["status"], "agree");
    for (i, name) in ["east", "west"].iter().enumerate() {
        let row = &comparison["rows"][i];
        assert_eq!(row["target"], *name);
        let change = row["change_pct"].as_f64().expect("a number");
        assert!((9.0..11.0).contains(&change), "{row}");
        let own = &doc["targets"][i];
        assert_eq!(own["target"], *name);
        assert_eq!(own["report"]["kind"], "report");
        assert_eq!(own["report"]["campaign"]["target"], *name);
    }
    // A command that reads one campaign names a target's directory to pass instead.
    let restore = aba(tmp.path(), &["restore", parent.to_str().expect("utf-8")]);
    assert_eq!(restore.status.code(), Some(1), "{}", text(&restore));
    let said = String::from_utf8_lossy(&restore.stderr);
    assert!(said.contains("one campaign directory per target"), "{said}");
    assert!(
        said.contains(&format!("{}", parent.join("east").display())),
        "{said}"
    );

    // West as another machine: its environment records name another CPU (both servers run
    // on this host, so only an edit makes them differ). The report labels them, never pools.
    let env = parent.join("west").join("env");
    for entry in std::fs::read_dir(&env).expect("env/") {
        let path = entry.expect("entry").path();
        let mut facts: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("record"))
                .expect("a JSON object");
        facts.insert("cpu_model".to_owned(), "Other CPU 9000".into());
        std::fs::write(&path, serde_json::Value::Object(facts).to_string()).expect("write");
    }
    let apart = aba(tmp.path(), &["report", parent.to_str().expect("utf-8")]);
    assert!(apart.status.success(), "{}", text(&apart));
    let report = String::from_utf8_lossy(&apart.stdout).into_owned();
    let words = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("Different machines: each target is reported on its own, never pooled."),
        "{report}"
    );
    assert!(
        words.contains("- CPU model:") && words.contains("; Other CPU 9000 at west"),
        "{report}"
    );
    assert!(
        words.contains("targets agree (different machines): slower"),
        "{report}"
    );
    assert!(tsv_rows(&parent).iter().all(|r| r["same_machines"] == "no"));
    assert_verified(&parent.join("east"));
    assert_verified(&parent.join("west"));
}

/// Waits until `dir`'s journal has at least `n` sample records.
pub(crate) fn wait_for_samples(dir: &Path, n: usize, limit: Duration) {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < limit,
            "no {n} samples in {}",
            dir.display()
        );
        if let Ok(journal) = Journal::read(&dir.join("journal.jsonl"))
            && journal
                .events
                .iter()
                .filter(|e| matches!(e, Event::Sample { .. }))
                .count()
                >= n
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `aba run` with both targets, started in the background.
fn spawn_both(tmp: &Path, recipe: &Path, targets: &Path) -> std::process::Child {
    aba_command(tmp)
        .args(run_args(recipe, targets, &["east", "west"]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("aba run starts")
}

/// The parent directory under `tmp/results`, once the run has made it.
pub(crate) fn wait_for_parent(tmp: &Path) -> PathBuf {
    let results = tmp.join("results");
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < Duration::from_secs(60), "no parent");
        if let Ok(mut entries) = std::fs::read_dir(&results)
            && let Some(Ok(entry)) = entries.next()
        {
            return entry.path();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_stops_every_target_resumable() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = inventory(tmp.path(), &east, &west, false);
    let recipe = recipe().write(tmp.path(), "r.toml");
    let child = spawn_both(tmp.path(), &recipe, &targets);
    let parent = wait_for_parent(tmp.path());
    wait_for_samples(&parent.join("east"), 1, Duration::from_secs(90));
    wait_for_samples(&parent.join("west"), 1, Duration::from_secs(90));
    signal(child.id(), libc::SIGINT);
    let out = child.wait_with_output().expect("aba finishes");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("targets: east interrupted, west interrupted"),
        "{stderr}"
    );
    for name in ["east", "west"] {
        let dir = parent.join(name);
        let state = Journal::read(&dir.join("journal.jsonl"))
            .expect("journal")
            .state();
        assert!(!state.finished, "{name} stopped before its end");
        assert_complete(&dir, 4);
    }
    let status = aba(tmp.path(), &["status", parent.to_str().expect("utf-8")]);
    assert!(status.status.success(), "{}", text(&status));
    let resumed = resume(tmp.path(), &parent, Some(&targets), &[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    for name in ["east", "west"] {
        let dir = parent.join(name);
        assert!(
            Journal::read(&dir.join("journal.jsonl"))
                .expect("journal")
                .state()
                .finished
        );
        assert_complete(&dir, 4);
    }
}

#[test]
fn a_target_that_vanishes_stops_alone_and_resume_completes_it() {
    let east = Sshd::start();
    let mut west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = inventory(tmp.path(), &east, &west, false);
    let recipe = recipe().write(tmp.path(), "r.toml");
    let child = spawn_both(tmp.path(), &recipe, &targets);
    let parent = wait_for_parent(tmp.path());
    // West's machine disappears mid-point.
    wait_for_samples(&parent.join("west"), 2, Duration::from_secs(90));
    west.kill();

    let out = child.wait_with_output().expect("aba finishes");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("targets: east finished, west stopped"),
        "{stderr}"
    );
    assert!(stderr.contains("aba resume"), "{stderr}");
    let east_dir = parent.join("east");
    let west_dir = parent.join("west");
    let east_state = Journal::read(&east_dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    assert!(east_state.finished, "east finished despite west");
    let west_state = Journal::read(&west_dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    assert!(!west_state.finished && west_state.stopped.is_some());
    assert_complete(&east_dir, 4);
    assert_complete(&west_dir, 4);
    let report = std::fs::read_to_string(parent.join("report.txt")).expect("report.txt");
    assert!(
        report
            .lines()
            .any(|l| l.trim_start().starts_with("west ") && l.contains("stopped, 0/3 points")),
        "{report}"
    );
    let words = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("west: kernel `a` (running) failed"),
        "{report}"
    );
    assert!(words.contains("could not reconnect"), "{report}");
    assert!(words.contains("no result on west"), "{report}");
    let east_journal = std::fs::read(east_dir.join("journal.jsonl")).expect("journal");

    // Back up: resume the parent, which resumes west only.
    west.start_again();
    let resumed = resume(tmp.path(), &parent, Some(&targets), &[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(stderr.contains("[east] already finished"), "{stderr}");
    assert_eq!(
        std::fs::read(east_dir.join("journal.jsonl")).expect("journal"),
        east_journal,
        "a finished target is left alone"
    );
    let west_state = Journal::read(&west_dir.join("journal.jsonl"))
        .expect("journal")
        .state();
    assert!(west_state.finished);
    assert_complete(&east_dir, 4);
    assert_complete(&west_dir, 4);
    let rows = tsv_rows(&parent);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r["agreement"] == "agree"), "{rows:?}");
}

#[test]
fn two_names_for_one_machine_are_refused_before_anything_starts() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = inventory(tmp.path(), &east, &west, true);
    let recipe = recipe().write(tmp.path(), "r.toml");
    // The harness logged in once to see each server up; aba must not log in at all.
    let logs = (east.log().len(), west.log().len());
    let out = aba(
        tmp.path(),
        &run_args(&recipe, &targets, &["east", "west", "east-again"]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("targets `east` and `east-again` are one machine"),
        "{stderr}"
    );
    assert!(
        !tmp.path().join("results").exists(),
        "nothing was created: {}",
        stderr
    );
    assert!(
        !east.log()[logs.0..].contains("Accepted publickey")
            && !west.log()[logs.1..].contains("Accepted publickey"),
        "no target was touched"
    );
}

/// On a terminal each target has one line of its own, drawn by one display for every target's
/// thread (issue 13), and the targets' log lines are printed above them, prefixed. The run is
/// put on a pseudo-terminal by util-linux `script`, which copies what aba drew to its stdout.
#[test]
fn on_a_terminal_each_target_has_a_progress_line_of_its_own() {
    // host tools: script stty
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = inventory(tmp.path(), &east, &west, false);
    let recipe = recipe().runs(0, 2).write(tmp.path(), "r.toml");
    let args = run_args(&recipe, &targets, &["east", "west"]);
    let quoted: Vec<String> = std::iter::once(crate::support::cli::aba_bin().display().to_string())
        .chain(args.iter().map(|a| (*a).to_owned()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let command = format!("stty cols 100 rows 30; {} </dev/null", quoted.join(" "));
    let out = std::process::Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .current_dir(tmp.path())
        .env_remove("ABA_TARGETS")
        .env_remove("ABA_RESULTS")
        .env("ABA_LOCK_DIR", tmp.path().join(".aba-locks"))
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux script runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let escapes = regex::Regex::new(r"\x1b\[[0-9;]*[A-Za-z]").expect("regex");
    let drawn = escapes
        .replace_all(&String::from_utf8_lossy(&out.stdout), "")
        .into_owned();
    // Each target's line, redrawn as it goes (the display skips frames, so which ones were
    // drawn varies); then where it ended, as a line that stays.
    for name in ["east", "west"] {
        // `[east] [===>    ] 1/3  00:00:01  point b: sample 1/2 · ETA 1s`: the time elapsed,
        // then an ETA that is said only once a point was measured (issue 29 item 6).
        let bar = regex::Regex::new(&format!(
            r"\[{name}\] \[[=> ]{{20}}\] [0-3]/3  \d\d:\d\d:\d\d  point [^·]* · ETA (after the first point|\d+s)"
        ))
        .expect("regex");
        assert!(
            bar.is_match(&drawn),
            "no progress line of {name} in:\n{drawn}"
        );
        let last = format!("[{name}] 3/3 points; last: point a#2 done");
        assert!(drawn.contains(&last), "no `{last}` in:\n{drawn}");
        assert!(
            drawn.contains(&format!("[{name}] point 1 a#1: kernel a")),
            "{drawn}"
        );
    }
    // Not the plain lines of a log: no timestamps before the prefixes.
    let stamped = regex::Regex::new(r"\d\d:\d\d:\d\d \[(east|west)\]").expect("regex");
    assert!(!stamped.is_match(&drawn), "{drawn}");
    let parent = parent_dir(&tmp.path().join("results"));
    assert_complete(&parent.join("east"), 2);
    assert_complete(&parent.join("west"), 2);
}
