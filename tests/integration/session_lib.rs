//! The campaign lifecycle as a library (`aba::session`), without the `aba` binary, on the
//! built-in `local` target (and two real OpenSSH servers on 127.0.0.1 for a multi-target
//! run): a multi-target run on both servers and one refused for two names of one machine, a
//! multi-target parent resumed to its end, a batch whose second campaign stops (its journal
//! says so, the batch exits 3) and whose resume finishes it, and a calibration that writes the
//! noise profile its journal names.

use std::{
    path::{Path, PathBuf},
    sync::Once,
};

use aba::{
    batch::journal::{BatchJournal, Ended},
    campaign::engine::RunOptions,
    error::{CampaignEnd, Error, exit_code},
    inventory::Inventory,
    profile::read_profile,
    results::{
        journal::{Event, Journal},
        manifest::{MANIFEST_FORMAT, Manifest, Member},
    },
    session::{
        Bindings, Sources,
        batch::{self, BatchContext},
        calibrate::calibrate,
        launch::{Destination, Launch},
        multi::{self, MultiRun},
    },
};

use crate::{
    multi::{assert_complete, inventory as two_servers, parent_dir},
    support::{
        cli::write,
        recipe::{Metric, Recipe, Workload},
        sshd::Sshd,
    },
};

const SAMPLES: u32 = 3;

/// An A-B-A of the running kernel whose workload fails while `marker` exists (no retries, so
/// the campaign stops at once, resumable).
fn recipe(name: &str, marker: &Path) -> String {
    Recipe::new(name, "a library test's campaign", &["a", "b", "a"])
        .runs(0, SAMPLES)
        .point_retries(0)
        .workload(
            Workload::new(
                "tick",
                format!(
                    "if [ -e '{}' ]; then exit 7; fi; echo $((1000 + ABA_SAMPLE % 3))",
                    marker.display()
                ),
                Metric::lower("ns"),
            )
            .retries(0),
        )
        .limits(10.0, 10.0)
        .toml()
}

/// This process's host-side lock folder and `local` state folder, set once before any of
/// these tests takes the `local` target: a campaign run in this process reads them from its
/// environment (the binary's tests give each child its own instead). These tests share the
/// target, so they run with `wait`: one campaign on `local` at a time.
fn isolated() -> RunOptions {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let root = std::env::temp_dir().join(format!("aba-session-lib-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("state root");
        // SAFETY: set once, by Rust code, before any campaign in this process reads them; the
        // other tests read no `ABA_*` variable in this process (they pass theirs to children).
        unsafe {
            std::env::set_var("ABA_LOCK_DIR", root.join("locks"));
            std::env::set_var("ABA_STATE_DIR", root.join("state"));
        }
    });
    RunOptions {
        allow_tuning: false,
        wait: true,
        look_rule: None,
    }
}

/// A temporary folder with an inventory whose profiles live in `prof/`.
fn bench() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = write(tmp.path(), "targets.toml", "profiles = \"prof\"\n");
    (tmp, targets)
}

fn launch(results: Destination<'_>) -> Launch<'_> {
    Launch {
        results,
        yes: true,
        no_profile: true,
    }
}

/// The only entry under `dir`.
fn only_entry(dir: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

fn finished(dir: &Path) -> bool {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .state()
        .finished
}

/// `aba run RECIPE --target …` for `names`, as a library call, under `results`.
fn run_on(
    names: &[String],
    recipe: &Path,
    targets: &Path,
    results: &Path,
    options: RunOptions,
) -> Result<CampaignEnd, Error> {
    multi::run(
        &MultiRun {
            recipe,
            targets: names,
            inventory: Some(targets),
            files: &Sources::default(),
            kernels: &Bindings::default(),
        },
        launch(Destination::Under(results)),
        options,
    )
}

#[test]
fn multi_run_refuses_two_names_of_one_machine_before_anything_exists() {
    let options = isolated();
    let (tmp, targets) = bench();
    let marker = tmp.path().join("absent");
    let recipe_path = write(tmp.path(), "r.toml", &recipe("twice", &marker));
    let results = tmp.path().join("results");
    let names = ["local".to_owned(), "local".to_owned()];
    let refused = run_on(&names, &recipe_path, &targets, &results, options);
    match refused {
        Err(Error::SameMachine {
            first,
            second,
            machine,
        }) => {
            assert_eq!((first.as_str(), second.as_str()), ("local", "local"));
            assert_eq!(machine, "local");
        }
        other => panic!("expected SameMachine, got {other:?}"),
    }
    assert!(!results.exists(), "nothing is created for a refused run");
}

#[test]
fn multi_run_on_two_targets_ends_finished_with_each_member_complete() {
    let options = isolated();
    let east = Sshd::start();
    let west = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = two_servers(tmp.path(), &east, &west, false);
    let never = tmp.path().join("absent");
    let recipe_path = write(tmp.path(), "r.toml", &recipe("pair", &never));
    let results = tmp.path().join("results");
    let names = ["east".to_owned(), "west".to_owned()];
    let end = run_on(&names, &recipe_path, &targets, &results, options).expect("the run starts");
    assert_eq!(end, CampaignEnd::Finished);
    let parent = parent_dir(&results);
    let manifest = Manifest::read(&parent).expect("manifest");
    let members: Vec<(&str, &str)> = manifest
        .targets
        .iter()
        .map(|m| (m.target.as_str(), m.dir.as_str()))
        .collect();
    assert_eq!(members, [("east", "east"), ("west", "west")]);
    for name in names {
        let dir = parent.join(&name);
        assert!(finished(&dir), "{name}");
        assert_complete(&dir, SAMPLES);
    }
    assert!(parent.join("targets.tsv").is_file());
}

#[test]
fn multi_resume_continues_a_stopped_member_to_its_end_with_a_combined_report() {
    let options = isolated();
    let (tmp, targets) = bench();
    let marker = write(tmp.path(), "failing", "");
    let recipe_path = write(tmp.path(), "r.toml", &recipe("parent", &marker));
    let inventory = Inventory::discover(Some(&targets)).expect("inventory");
    let parent = tmp.path().join("parent");
    std::fs::create_dir(&parent).expect("parent");
    Manifest {
        format: MANIFEST_FORMAT,
        recipe: "parent".to_owned(),
        created: "2026-12-06T00:00:00Z".to_owned(),
        aba_version: env!("CARGO_PKG_VERSION").to_owned(),
        targets: vec![Member {
            target: "local".to_owned(),
            dir: "local".to_owned(),
        }],
    }
    .write(&parent)
    .expect("manifest");
    let member = parent.join("local");

    // The member's own campaign stops on its failing workload: resumable.
    let stopped = aba::session::prepare::run(
        &recipe_path,
        &inventory,
        inventory.target("local").expect("local"),
        &Sources::default(),
        &Bindings::default(),
        launch(Destination::At(&member)),
        options.clone(),
    );
    match &stopped {
        Err(e @ Error::CampaignStopped { dir, .. }) => {
            assert_eq!(dir, &member);
            assert_eq!(CampaignEnd::of_error(e), CampaignEnd::Stopped);
            assert_eq!(e.exit_code(), exit_code::CAMPAIGN_STOPPED);
        }
        other => panic!("expected a stop, got {other:?}"),
    }
    assert!(!finished(&member));

    std::fs::remove_file(&marker).expect("the workload succeeds from now on");
    let end = multi::resume(&parent, Some(&targets), None, &Sources::default(), options)
        .expect("resumed");
    assert_eq!(end, CampaignEnd::Finished);
    assert_eq!(end.code(), exit_code::OK);
    assert!(finished(&member));
    assert_complete(&member, SAMPLES);
    let combined = std::fs::read_to_string(parent.join("report.txt")).expect("combined report");
    assert!(combined.contains("local"), "{combined}");
}

#[test]
fn batch_run_journals_a_stopped_campaign_exits_3_and_batch_resume_finishes_it() {
    let options = isolated();
    let (tmp, targets) = bench();
    let never = tmp.path().join("absent");
    let marker = write(tmp.path(), "failing", "");
    write(tmp.path(), "first.toml", &recipe("first", &never));
    write(tmp.path(), "second.toml", &recipe("second", &marker));
    let plan = write(
        tmp.path(),
        "plan.toml",
        r#"
version = 1
name = "lib"

[[campaign]]
recipe = "first.toml"
targets = ["local"]
wait = true
no_profile = true

[[campaign]]
recipe = "second.toml"
targets = ["local"]
wait = true
no_profile = true
"#,
    );
    assert!(options.wait);
    let sources = Sources::default();
    let ctx = BatchContext {
        inventory: Some(&targets),
        files: &sources,
    };
    let results = tmp.path().join("results");
    let code = batch::run(&plan, &results, &ctx).expect("the batch runs");
    assert_eq!(code, exit_code::CAMPAIGN_STOPPED);
    let dir = only_entry(&results);
    let ended = |dir: &Path| {
        BatchJournal::read(dir)
            .expect("batch journal")
            .jobs()
            .into_iter()
            .map(|((number, target), job)| {
                let (outcome, code, ..) = job.ended.expect("every job ended");
                (number, target, outcome, code)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ended(&dir),
        [
            (1, "local".to_owned(), Ended::Finished, exit_code::OK),
            (
                2,
                "local".to_owned(),
                Ended::Stopped,
                exit_code::CAMPAIGN_STOPPED
            ),
        ]
    );

    std::fs::remove_file(&marker).expect("the workload succeeds from now on");
    let code = batch::resume(&dir, &ctx).expect("the batch resumes");
    assert_eq!(code, exit_code::OK);
    assert_eq!(
        ended(&dir),
        [
            (1, "local".to_owned(), Ended::Finished, exit_code::OK),
            (2, "local".to_owned(), Ended::Finished, exit_code::OK),
        ]
    );
    let journal = BatchJournal::read(&dir).expect("batch journal");
    for entry in journal.campaigns() {
        let campaign = dir.join(&entry.dir).join("local");
        assert!(finished(&campaign), "{}", campaign.display());
        assert_complete(&campaign, SAMPLES);
    }
}

#[test]
fn calibrate_writes_the_noise_profile_its_journal_names() {
    let options = isolated();
    let (tmp, targets) = bench();
    let never = tmp.path().join("absent");
    let recipe_path = write(tmp.path(), "noise.toml", &recipe("noise", &never));
    let inventory = Inventory::discover(Some(&targets)).expect("inventory");
    let results = tmp.path().join("calibrations");
    let end = calibrate(
        &recipe_path,
        &inventory,
        "local",
        &Sources::default(),
        &Bindings::default(),
        launch(Destination::Under(&results)),
        3,
        options,
    )
    .expect("calibrated");
    assert_eq!(end, CampaignEnd::Finished);
    let dir = only_entry(&results);
    assert!(finished(&dir));
    let named = Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events
        .into_iter()
        .find_map(|e| match e {
            Event::Calibration { profile, boots, .. } => Some((profile, boots)),
            _ => None,
        })
        .expect("a calibration record");
    let expected = tmp.path().join("prof/local/noise.toml");
    assert_eq!(named, (expected.display().to_string(), 3));
    let (profile, _) = read_profile(&expected).expect("the profile is written and valid");
    assert_eq!(profile.boots, 3);
}
