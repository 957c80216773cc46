//! Round trips through the writer and the reader.

use std::io::Write;

use super::{Event, JOURNAL_FORMAT, Journal, JournalWriter};
use crate::{
    kernel::switch::SwitchKind,
    results::samples::{Phase, Status},
};

fn header() -> Event {
    Event::Campaign {
        format: JOURNAL_FORMAT,
        aba: "0".into(),
        name: "t".into(),
        recipe_sha256: "x".into(),
        limits: None,
        target: "local".into(),
        points: vec!["a-a".into(), "b".into()],
        time: "t".into(),
    }
}

#[test]
fn the_params_record_round_trips_and_an_old_journal_has_none() {
    use crate::{
        origin::Origin,
        recipe::{
            ident::{ParamName, ParamValue},
            params::BoundParam,
        },
    };
    let params = vec![BoundParam {
        name: ParamName::new("isolated_cpu").unwrap(),
        value: ParamValue::new("5").unwrap(),
        from: Origin::Inventory {
            at: "targets.toml:9:1".to_owned(),
        },
    }];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("new.jsonl");
    let mut w = JournalWriter::open(&path).expect("open");
    w.append(&header()).expect("append");
    w.append(&Event::Params {
        params: params.clone(),
    })
    .expect("append");
    drop(w);
    let journal = Journal::read(&path).expect("reads");
    assert_eq!(journal.params(), Some(params.as_slice()));
    assert_eq!(super::recorded_params(&path).expect("reads"), Some(params));
    let old = dir.path().join("old.jsonl");
    let mut w = JournalWriter::open(&old).expect("open");
    w.append(&header()).expect("append");
    drop(w);
    assert_eq!(super::recorded_params(&old).expect("reads"), None);
    assert_eq!(Journal::read(&old).expect("reads").params(), None);
}

#[test]
fn the_kernels_record_round_trips_and_an_old_journal_has_none() {
    use crate::kernel::binding::{BoundKernel, Origin};
    use crate::recipe::ident::{KernelLabel, Release, TargetPath};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    // Written by an aba older than bindings: the recipe's kernels, as written.
    std::fs::write(
        &path,
        "{\"event\":\"campaign\",\"format\":1,\"aba\":\"0.1.0\",\"name\":\"t\",\
         \"recipe_sha256\":\"x\",\"target\":\"local\",\"points\":[\"a\"],\"time\":\"t\"}\n",
    )
    .expect("write");
    assert_eq!(Journal::read(&path).expect("reads").kernels(), None);
    assert_eq!(super::recorded_kernels(&path).expect("reads"), None);
    assert_eq!(
        super::recorded_kernels(&dir.path().join("none.jsonl")).expect("no journal yet"),
        None
    );

    let kernels = vec![BoundKernel {
        label: KernelLabel::new("a").unwrap(),
        release: Release::new("6.18.0-orig+").unwrap(),
        release_from: Origin::CommandLine {
            option: "--kernel a=6.18.0-orig+".into(),
        },
        image: TargetPath::new("/boot/vmlinuz-a").unwrap(),
        image_from: Origin::Inventory {
            at: "targets.toml:6:1".into(),
        },
        initrd: TargetPath::new("/boot/initrd.img-a").unwrap(),
        initrd_from: Origin::Recipe,
        build: None,
    }];
    let path = dir.path().join("new.jsonl");
    let mut w = JournalWriter::open(&path).expect("open");
    w.append(&header()).expect("append");
    w.append(&Event::Kernels {
        kernels: kernels.clone(),
    })
    .expect("append");
    drop(w);
    let journal = Journal::read(&path).expect("reads");
    assert_eq!(journal.kernels(), Some(kernels.as_slice()));
    assert_eq!(
        super::recorded_kernels(&path).expect("reads"),
        Some(kernels)
    );
}

#[test]
fn a_build_on_the_host_its_install_and_its_proof_round_trip() {
    use crate::build::{
        install::Installed,
        proof::{BuildProof, ConfigProof},
        record::{HostFile, KernelBuild},
        version::KernelVersion,
    };
    use crate::kernel::binding::{BoundKernel, Origin};
    use crate::recipe::ident::{KernelLabel, Release, TargetPath};
    let file = |path: &str, sha: &str| HostFile {
        path: path.into(),
        sha256: sha.repeat(64),
        bytes: 5,
    };
    let build = KernelBuild {
        at: "builds.toml:2:10".into(),
        version: KernelVersion::parse_proc(
            "Linux version 6.1.158-aba-lab (root@b) (gcc 12) #2 SMP Thu Dec  3 10:12:54 UTC 2026",
        )
        .unwrap(),
        image: file("/b/bzImage", "a"),
        initrd: None,
        modules: None,
        config: Some(file("/b/.config", "c")),
        install_dir: "/tmp/aba/kernels/patched-aaaaaaaaaaaa".into(),
        source: None,
        patches: vec![file("/p/x.patch", "d")],
        built: None,
        made_with: None,
    };
    let kernels = vec![BoundKernel {
        label: KernelLabel::new("patched").unwrap(),
        release: Release::new("6.1.158-aba-lab").unwrap(),
        release_from: Origin::Build {
            at: "builds.toml:2:10".into(),
        },
        image: TargetPath::new("/tmp/aba/kernels/patched-aaaaaaaaaaaa/vmlinuz").unwrap(),
        image_from: Origin::Build {
            at: "builds.toml:2:10".into(),
        },
        initrd: TargetPath::new("/boot/initrd.img").unwrap(),
        initrd_from: Origin::Recipe,
        build: Some(Box::new(build)),
    }];
    let events = vec![
        header(),
        Event::Kernels {
            kernels: kernels.clone(),
        },
        Event::Installed {
            point: "patched".into(),
            attempt: 1,
            kernel: "patched".into(),
            installed: vec![Installed {
                path: "/tmp/aba/kernels/patched-aaaaaaaaaaaa/vmlinuz".into(),
                sha256: "a".repeat(64),
                sent: true,
            }],
        },
        Event::BuildProven {
            point: "patched".into(),
            attempt: 1,
            proof: BuildProof {
                version: "Linux version 6.1.158-aba-lab (root@b) (gcc 12) #2 SMP".into(),
                config: ConfigProof::Matched {
                    source: "/proc/config.gz".into(),
                },
            },
        },
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut w = JournalWriter::open(&path).expect("open");
    for e in &events {
        w.append(e).expect("append");
    }
    drop(w);
    let journal = Journal::read(&path).expect("reads");
    assert_eq!(journal.events, events);
    assert_eq!(journal.kernels(), Some(kernels.as_slice()));
    let text = std::fs::read_to_string(&path).expect("text");
    assert!(
        text.contains(r#""config":"matched","source":"/proc/config.gz""#),
        "{text}"
    );
}

#[test]
fn a_partial_last_line_is_skipped_then_cut_before_appending() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut w = JournalWriter::open(&path).expect("open");
    w.append(&header()).expect("append");
    w.append(&Event::PointStarted {
        point: "a-a".into(),
        attempt: 1,
        time: "t".into(),
    })
    .expect("append");
    drop(w);
    // A killed writer left half a record.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    f.write_all(b"{\"event\":\"point_do").expect("write");
    drop(f);

    let j = Journal::read(&path).expect("readable");
    assert!(j.truncated_tail);
    assert_eq!(j.state().point("a-a").expect("point").open, Some(1));

    let mut w = JournalWriter::open(&path).expect("reopen");
    w.append(&Event::PointDone {
        point: "a-a".into(),
        attempt: 1,
        dmesg_warnings: 0,
        failed_units: vec![],
        time: "t".into(),
    })
    .expect("append");
    let j = Journal::read(&path).expect("readable");
    assert!(!j.truncated_tail);
    let state = j.state();
    assert_eq!(state.point("a-a").expect("point").done, Some(1));
    assert_eq!(state.point("b").expect("point").done, None);
}

/// The switch method is written as the inventory spells it; aba 0.1's `grubreboot` still
/// reads.
#[test]
fn the_switch_method_is_spelled_as_the_inventory_spells_it() {
    let record = Event::Switching {
        point: "b".into(),
        attempt: 1,
        method: SwitchKind::GrubReboot,
        previous_boot_id: None,
    };
    let line = serde_json::to_string(&record).expect("serialises");
    assert!(line.contains(r#""method":"grub-reboot""#), "{line}");
    let old = line.replace("grub-reboot", "grubreboot");
    assert_eq!(serde_json::from_str::<Event>(&old).expect("reads"), record);
    assert!(serde_json::from_str::<Event>(&line.replace("grub-reboot", "grub")).is_err());
}

fn sample(index: u32, retry: u32, status: Status) -> Event {
    Event::Sample {
        point: "a-a".into(),
        attempt: 1,
        workload: "w".into(),
        case: String::new(),
        phase: Phase::Sample,
        index,
        retry,
        status,
        elapsed_s: 0.5,
        error: (status == Status::Failed).then(|| "exit status 1".into()),
        raw: None,
        leftovers: Vec::new(),
        dropped_bytes: None,
        values: Some(std::collections::BTreeMap::from([("m".to_owned(), 1.5)])),
        rows_sha256: Some("ab".repeat(32)),
        kept: Vec::new(),
    }
}

/// The analysis's read leaves out exactly the sample records of first-try successes and
/// still rejects a malformed line.
#[test]
fn reading_for_analysis_leaves_out_plain_samples_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut w = JournalWriter::open(&path).expect("open");
    let events = [
        header(),
        sample(1, 0, Status::Ok),
        sample(2, 0, Status::Failed),
        sample(2, 1, Status::Ok),
        sample(3, 0, Status::Ok),
    ];
    for e in &events {
        w.append(e).expect("append");
    }
    drop(w);
    let all = Journal::read(&path).expect("readable");
    assert_eq!(all.events, events);
    let some = Journal::read_for_analysis(&path).expect("readable");
    assert_eq!(
        some.events,
        [events[0].clone(), events[2].clone(), events[3].clone()]
    );

    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    f.write_all(b"{\"event\":\"sample\",\"status\":\"ok\",\"retry\":0,}\n")
        .expect("write");
    drop(f);
    assert!(Journal::read_for_analysis(&path).is_err());
}

/// A probe record and a check run's kept output round-trip, fold into the attempt's history,
/// and a run with kept output is read by the analysis (it is not a plain run); an older
/// journal's sample record, without `kept`, reads as before.
#[test]
fn probe_records_and_kept_check_output_round_trip_and_fold_into_the_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let kept = crate::results::kept::KeptFile {
        path: "checks/a-a/mode.out".into(),
        sha256: "cd".repeat(32),
        bytes: 8,
        dropped_bytes: 0,
    };
    let mut check = sample(1, 0, Status::Ok);
    if let Event::Sample { kept: k, .. } = &mut check {
        k.push(kept.clone());
    }
    let probe = Event::Probe {
        point: "a-a".into(),
        attempt: 1,
        kernel: "a".into(),
        probe: "rebuild_calls".into(),
        when: crate::recipe::model::ProbeWhen::After,
        outcome: "exit status 0".into(),
        as_expected: true,
        elapsed_s: 0.1,
        kept: vec![crate::results::kept::KeptFile {
            path: "probes/a-a/rebuild_calls.out".into(),
            sha256: "ef".repeat(32),
            bytes: 100,
            dropped_bytes: 7,
        }],
        values: vec![super::ProbeReading {
            name: "rebuild_sched_domains".into(),
            value: 128.0,
            unit: "calls".into(),
        }],
        problems: Vec::new(),
        time: "t".into(),
    };
    let events = [header(), sample(2, 0, Status::Ok), check, probe];
    let mut w = JournalWriter::open(&path).expect("open");
    for e in &events {
        w.append(e).expect("append");
    }
    drop(w);
    assert_eq!(Journal::read(&path).expect("readable").events, events);
    let some = Journal::read_for_analysis(&path).expect("readable");
    assert_eq!(
        some.events,
        [events[0].clone(), events[2].clone(), events[3].clone()]
    );
    let history = some.history();
    let attempt = history.attempt("a-a", 1).expect("named");
    assert_eq!(attempt.kept_checks, [kept]);
    assert_eq!(attempt.probes[0].values[0].value, 128.0);
    assert_eq!(attempt.probes[0].kept[0].dropped_bytes, 7);

    let line = serde_json::to_string(&sample(3, 0, Status::Ok)).expect("serialises");
    assert!(!line.contains("kept"), "{line}");
    let old = serde_json::from_str::<Event>(&line).expect("an older record reads");
    assert!(matches!(old, Event::Sample { ref kept, .. } if kept.is_empty()));
}
