//! A night of campaigns (issue 13): `aba batch FILE` through the binary against two real
//! OpenSSH servers on 127.0.0.1 (`east` and `west`, `switch = "none"`): two recipes over
//! both targets (each target's campaigns in plan order, the targets at once, the morning
//! summary read back, the hooks per campaign and once for the batch), one server killed
//! mid-queue (its campaign stops resumable, the other target's campaigns finish, `aba batch
//! resume` completes it), a SIGKILLed runner resumed with every directory verified and no
//! sample lost or duplicated, and a plan file error at its line and column.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use aba::batch::journal::{BatchEvent, BatchJournal, Ended};

use crate::{
    multi::{assert_complete, wait_for_samples},
    support::{
        cli::{aba, aba_command, assert_verified, text, write},
        recipe::{Metric, Recipe, Workload},
        sshd::{Sshd, signal},
    },
};

const SAMPLES: u32 = 3;

/// An A-B-A of the running kernel named `name`; `b` answers 10% higher than `a`.
fn recipe(name: &str) -> String {
    sleeping(name, "0.25").toml()
}

/// [`recipe`] whose every run first sleeps `seconds`.
fn sleeping(name: &str, seconds: &str) -> Recipe {
    Recipe::new(name, "one campaign of a batch", &["a", "b", "a"])
        .runs(0, SAMPLES)
        .point_retries(0)
        .workload(
            Workload::new(
                "lat",
                format!(
                    "sleep {seconds}; if [ \"$ABA_KERNEL\" = b ]; then echo $((1100 + ABA_SAMPLE % 3)); else echo $((1000 + ABA_SAMPLE % 3)); fi"
                ),
                Metric::lower("ns"),
            )
            .retries(0),
        )
        .limits(10.0, 10.0)
}

const PLAN: &str = r#"
version = 1
name = "nightly"

[[campaign]]
recipe = "first.toml"
targets = ["east", "west"]

[[campaign]]
recipe = "second.toml"
targets = ["east", "west"]
"#;

/// Both servers in one inventory, each target's `on_finish` appending to `hooks.log`.
fn setup(tmp: &Path, east: &Sshd, west: &Sshd) -> (PathBuf, PathBuf) {
    let log = tmp.join("hooks.log");
    let hook = format!(
        "on_finish = \"echo finish {{target}} {{dir}} >> {}\"\non_failure = \"echo failure {{target}} {{dir}} >> {}\"\nboot_timeout = \"30s\"",
        log.display(),
        log.display()
    );
    let mut inventory = String::new();
    for (name, sshd) in [("east", east), ("west", west)] {
        let dir = tmp.join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let one = std::fs::read_to_string(sshd.inventory(&dir, &hook)).expect("inventory");
        inventory.push_str(&one.replace("[targets.box]", &format!("[targets.{name}]")));
    }
    let targets = write(tmp, "targets.toml", &inventory);
    write(tmp, "first.toml", &recipe("first"));
    write(tmp, "second.toml", &recipe("second"));
    let plan = write(tmp, "plan.toml", PLAN);
    (targets, plan)
}

pub(crate) fn batch_args<'a>(plan: &'a Path, targets: &'a Path) -> Vec<&'a str> {
    vec![
        "batch",
        plan.to_str().expect("utf-8"),
        "--targets",
        targets.to_str().expect("utf-8"),
        "--results",
        "results",
    ]
}

pub(crate) fn spawn_batch(tmp: &Path, plan: &Path, targets: &Path) -> Child {
    aba_command(tmp)
        .args(batch_args(plan, targets))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aba batch starts")
}

pub(crate) fn resume_batch(tmp: &Path, batch: &Path, targets: &Path) -> std::process::Output {
    aba(
        tmp,
        &[
            "batch",
            "resume",
            batch.to_str().expect("utf-8"),
            "--targets",
            targets.to_str().expect("utf-8"),
        ],
    )
}

/// The only batch directory under `tmp/results`, once it has its journal.
pub(crate) fn wait_for_batch(tmp: &Path) -> PathBuf {
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < Duration::from_secs(60), "no batch");
        if let Ok(mut entries) = std::fs::read_dir(tmp.join("results"))
            && let Some(Ok(entry)) = entries.next()
            && entry.path().join("batch.jsonl").is_file()
        {
            return entry.path();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// (campaign, target) → (counted start, last end) from the batch journal.
pub(crate) fn spans(batch: &Path) -> BTreeMap<(usize, String), (String, String)> {
    let journal = BatchJournal::read(batch).expect("batch journal");
    journal
        .jobs()
        .into_iter()
        .map(|(k, r)| {
            (
                k,
                (r.counted_start.expect("started"), r.ended.expect("ended").3),
            )
        })
        .collect()
}

const DIRS: [&str; 4] = [
    "01-first/east",
    "01-first/west",
    "02-second/east",
    "02-second/west",
];

/// summary.tsv as column → value rows.
pub(crate) fn tsv_rows(batch: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(batch.join("summary.tsv")).expect("summary.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            assert_eq!(cells.len(), header.len(), "{l:?}");
            header
                .iter()
                .zip(cells)
                .map(|(h, v)| ((*h).to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

#[test]
fn two_recipes_over_two_targets_in_order_per_target_and_at_once_across() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (targets, plan) = setup(tmp.path(), &east, &west);
    let out = aba(tmp.path(), &batch_args(&plan, &targets));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let batch = wait_for_batch(tmp.path());
    assert!(
        batch
            .file_name()
            .expect("name")
            .to_string_lossy()
            .starts_with("nightly-")
    );
    assert_eq!(
        std::fs::read_to_string(batch.join("plan.toml")).expect("plan copy"),
        PLAN
    );

    // Order per target: a target's second campaign starts after its first ended. At once
    // across targets: east's and west's first campaigns overlap.
    let spans = spans(&batch);
    assert_eq!(spans.len(), 4, "{spans:?}");
    for target in ["east", "west"] {
        let first = &spans[&(1, target.to_owned())];
        let second = &spans[&(2, target.to_owned())];
        assert!(first.1 <= second.0, "{target}: {first:?} then {second:?}");
    }
    let (e, w) = (
        &spans[&(1, "east".to_owned())],
        &spans[&(1, "west".to_owned())],
    );
    assert!(
        e.0 < w.1 && w.0 < e.1,
        "not at once: east {e:?}, west {w:?}"
    );
    for dir in DIRS {
        assert_complete(&batch.join(dir), SAMPLES);
    }
    // Each campaign is a multi-target parent with its combined report.
    for parent in ["01-first", "02-second"] {
        assert!(batch.join(parent).join("targets.json").is_file());
        assert!(batch.join(parent).join("report.txt").is_file());
        let verified = aba(
            tmp.path(),
            &["verify", batch.join(parent).to_str().expect("utf-8")],
        );
        assert!(verified.status.success(), "{}", text(&verified));
    }

    // The morning summary: printed, written, within 72 columns, every campaign named.
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert_eq!(String::from_utf8_lossy(&out.stdout), summary);
    for line in summary.lines() {
        assert!(line.chars().count() <= 72, "too wide: {line:?}");
    }
    assert!(
        summary.starts_with("Batch nightly: 2 campaigns on 2 targets: 4 finished."),
        "{summary}"
    );
    for (n, recipe, target) in [
        (1, "first", "east"),
        (1, "first", "west"),
        (2, "second", "east"),
        (2, "second", "west"),
    ] {
        assert!(
            summary.contains(&format!("#{n} {recipe} on {target}: finished in ")),
            "{summary}"
        );
        assert!(
            summary.contains(&format!("results: {n:02}-{recipe}/{target}/")),
            "{summary}"
        );
    }
    assert_eq!(
        summary.matches("lat: b against a +").count(),
        4,
        "{summary}"
    );
    let rows = tsv_rows(&batch);
    assert_eq!(rows.len(), 4, "{rows:?}");
    for (row, dir) in rows.iter().zip(DIRS) {
        assert_eq!(row["outcome"], "finished");
        assert_eq!(row["dir"], dir);
        assert_eq!(row["series"], "lat");
        assert_eq!(row["candidate"], "b");
        assert!(!row["verdict"].is_empty());
        let change: f64 = row["change_pct"].parse().expect("a number");
        assert!((9.0..11.0).contains(&change), "{row:?}");
        let took: u64 = row["duration_s"].parse().expect("seconds");
        assert!(took < 300, "{row:?}");
    }
    let status = aba(
        tmp.path(),
        &["batch", "status", batch.to_str().expect("utf-8")],
    );
    assert!(status.status.success(), "{}", text(&status));
    assert_eq!(String::from_utf8_lossy(&status.stdout), summary);

    // on_finish: once per campaign (its directory), then once for the batch, shared by both
    // targets (the same command), with the batch directory.
    let hooks = std::fs::read_to_string(tmp.path().join("hooks.log")).expect("hooks ran");
    let lines: Vec<&str> = hooks.lines().collect();
    assert_eq!(lines.len(), 5, "{hooks}");
    for dir in DIRS {
        assert!(
            lines
                .iter()
                .any(|l| l.ends_with(&format!("{}", batch.join(dir).display()))),
            "{hooks}"
        );
    }
    assert_eq!(
        lines[4],
        format!("finish east,west {}", batch.display()),
        "{hooks}"
    );

    // Resuming a finished batch runs nothing and notifies no one again.
    let again = resume_batch(tmp.path(), &batch, &targets);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already finished"));
    assert_eq!(String::from_utf8_lossy(&again.stdout), summary);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("hooks.log")).expect("hooks"),
        hooks
    );
    for dir in DIRS {
        assert_verified(&batch.join(dir));
    }
}

#[test]
fn a_target_lost_mid_queue_stops_alone_and_batch_resume_completes_it() {
    let east = Sshd::start();
    let mut west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (targets, plan) = setup(tmp.path(), &east, &west);
    let child = spawn_batch(tmp.path(), &plan, &targets);
    let batch = wait_for_batch(tmp.path());
    wait_for_samples(&batch.join("01-first/west"), 2, Duration::from_secs(90));
    west.kill();
    let out = child.wait_with_output().expect("aba batch ends");
    // West's first campaign stopped (3), its second could not start (1): the worst wins.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let journal = BatchJournal::read(&batch).expect("journal");
    let jobs = journal.jobs();
    let outcome = |n: usize, t: &str| jobs[&(n, t.to_owned())].ended.as_ref().expect("ended").0;
    assert_eq!(outcome(1, "east"), Ended::Finished);
    assert_eq!(outcome(2, "east"), Ended::Finished);
    assert_eq!(outcome(1, "west"), Ended::Stopped);
    assert_eq!(outcome(2, "west"), Ended::Failed);
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains("#1 first on west: stopped"), "{summary}");
    assert!(summary.contains("#2 second on west: failed"), "{summary}");
    assert!(summary.contains("aba batch resume"), "{summary}");
    let words = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("why: "), "{summary}");
    for line in summary.lines() {
        assert!(line.chars().count() <= 72, "too wide: {line:?}");
    }
    assert!(
        !batch.join("02-second/west").exists(),
        "a refused start leaves nothing"
    );
    assert_complete(&batch.join("01-first/west"), SAMPLES);
    let east_journals: Vec<Vec<u8>> = ["01-first/east", "02-second/east"]
        .iter()
        .map(|d| std::fs::read(batch.join(d).join("journal.jsonl")).expect("journal"))
        .collect();
    // The batch-wide on_failure ran once.
    let hooks = std::fs::read_to_string(tmp.path().join("hooks.log")).expect("hooks ran");
    assert!(
        hooks.contains(&format!("failure east,west {}", batch.display())),
        "{hooks}"
    );

    west.start_again();
    let resumed = resume_batch(tmp.path(), &batch, &targets);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(stderr.contains("[#1 east] already finished"), "{stderr}");
    for (d, before) in ["01-first/east", "02-second/east"]
        .iter()
        .zip(&east_journals)
    {
        assert_eq!(
            &std::fs::read(batch.join(d).join("journal.jsonl")).expect("journal"),
            before,
            "a finished campaign is left alone"
        );
    }
    // West's first campaign was resumed in its directory, its second started.
    let events = BatchJournal::read(&batch).expect("journal").events;
    let resumed_flags: Vec<(usize, bool)> = events
        .iter()
        .filter_map(|e| match e {
            BatchEvent::Started {
                campaign,
                target,
                resumed,
                ..
            } if target == "west" => Some((*campaign, *resumed)),
            _ => None,
        })
        .collect();
    assert_eq!(
        resumed_flags,
        vec![(1, false), (2, false), (1, true), (2, false)]
    );
    for dir in DIRS {
        assert_complete(&batch.join(dir), SAMPLES);
    }
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains(": 4 finished."), "{summary}");
    assert_eq!(String::from_utf8_lossy(&resumed.stdout), summary);
}

#[test]
fn a_sigkilled_runner_resumes_without_losing_or_doubling_a_sample() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (targets, plan) = setup(tmp.path(), &east, &west);
    let child = spawn_batch(tmp.path(), &plan, &targets);
    let batch = wait_for_batch(tmp.path());
    wait_for_samples(&batch.join("01-first/east"), 4, Duration::from_secs(90));
    signal(child.id(), libc::SIGKILL);
    let out = child.wait_with_output().expect("aba batch ends");
    assert_eq!(out.status.code(), None, "killed");
    let status = aba(
        tmp.path(),
        &["batch", "status", batch.to_str().expect("utf-8")],
    );
    assert!(status.status.success(), "{}", text(&status));
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains("#1 first on east: started, no end recorded"),
        "{said}"
    );
    assert!(said.contains("#2 second on east: not started"), "{said}");

    // `aba resume` reads one campaign (or a multi-target parent) and names the batch command.
    let wrong = aba(tmp.path(), &["resume", batch.to_str().expect("utf-8")]);
    assert_eq!(wrong.status.code(), Some(1), "{}", text(&wrong));
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("is a batch directory: `aba batch resume"),
        "{}",
        text(&wrong)
    );

    let resumed = resume_batch(tmp.path(), &batch, &targets);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let events = BatchJournal::read(&batch).expect("journal").events;
    assert!(
        events.iter().any(|e| matches!(e, BatchEvent::Started { campaign: 1, target, resumed: true, .. } if target == "east")),
        "east's first campaign is resumed in its directory, not started anew"
    );
    for dir in DIRS {
        assert_complete(&batch.join(dir), SAMPLES);
        assert_verified(&batch.join(dir));
    }
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains(": 4 finished."), "{summary}");
}

#[test]
fn ctrl_c_stops_the_whole_queue_resumably() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (targets, plan) = setup(tmp.path(), &east, &west);
    let child = spawn_batch(tmp.path(), &plan, &targets);
    let batch = wait_for_batch(tmp.path());
    wait_for_samples(&batch.join("01-first/west"), 2, Duration::from_secs(90));
    signal(child.id(), libc::SIGINT);
    let out = child.wait_with_output().expect("aba batch ends");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(!batch.join("02-second/east").exists() && !batch.join("02-second/west").exists());
    let resumed = resume_batch(tmp.path(), &batch, &targets);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    for dir in DIRS {
        assert_complete(&batch.join(dir), SAMPLES);
    }
}

#[test]
fn a_plan_error_names_file_line_column_and_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "first.toml", &recipe("first"));
    let plan = write(
        tmp.path(),
        "plan.toml",
        "version = 1\n[[campaign]]\nrecipe = \"first.toml\"\ntarget = [\"local\"]\n",
    );
    let out = aba(
        tmp.path(),
        &[
            "batch",
            plan.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("plan.toml:4:1"), "{stderr}");
    assert!(stderr.contains("unknown field `target`"), "{stderr}");
    assert!(stderr.contains("did you mean `targets`?"), "{stderr}");
    assert!(!tmp.path().join("results").exists(), "nothing was created");
}

#[test]
fn a_campaign_refused_by_a_held_lock_is_recorded_and_the_queue_goes_on() {
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (targets, _) = setup(tmp.path(), &east, &west);
    // Another campaign holds east for the whole batch (9 samples of 1 s).
    write(tmp.path(), "slow.toml", &sleeping("slow", "1").toml());
    let holder = aba_command(tmp.path())
        .args([
            "run",
            "slow.toml",
            "--targets",
            targets.to_str().expect("utf-8"),
            "--target",
            "east",
            "--results",
            "other",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aba run starts");
    let started = Instant::now();
    let other = loop {
        assert!(started.elapsed() < Duration::from_secs(60), "no holder");
        if let Ok(mut entries) = std::fs::read_dir(tmp.path().join("other"))
            && let Some(Ok(entry)) = entries.next()
            && entry.path().join("journal.jsonl").is_file()
        {
            break entry.path();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    wait_for_samples(&other, 1, Duration::from_secs(60));
    let plan = write(
        tmp.path(),
        "one.toml",
        "version = 1\n[[campaign]]\nrecipe = \"first.toml\"\ntargets = [\"east\", \"west\"]\n\
         [[campaign]]\nrecipe = \"second.toml\"\ntargets = [\"west\"]\n",
    );
    let out = aba(tmp.path(), &batch_args(&plan, &targets));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let batch = wait_for_batch(tmp.path());
    let jobs = BatchJournal::read(&batch).expect("journal").jobs();
    let ended = |n: usize, t: &str| jobs[&(n, t.to_owned())].ended.clone().expect("ended");
    let refused = ended(1, "east");
    assert_eq!(refused.0, Ended::Refused);
    assert!(refused.2.expect("a reason").contains("in use by"));
    assert_eq!(ended(1, "west").0, Ended::Finished);
    assert_eq!(ended(2, "west").0, Ended::Finished);
    let summary = std::fs::read_to_string(batch.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains("#1 first on east: refused"), "{summary}");
    assert!(summary.contains(": 2 finished, 1 refused."), "{summary}");
    assert!(
        !batch.join("01-first/east").exists(),
        "a refused start leaves nothing"
    );
    assert!(
        summary.contains("results: none (no campaign directory was made)"),
        "{summary}"
    );
    let holder = holder.wait_with_output().expect("the holder ends");
    assert!(holder.status.success(), "{}", text(&holder));
    assert_verified(&other);
    for dir in ["01-first/west", "02-second/west"] {
        assert_complete(&batch.join(dir), SAMPLES);
    }
}
