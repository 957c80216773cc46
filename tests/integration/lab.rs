//! Kernel switching proven on real kernels: campaigns in the QEMU lab, by kexec and by a
//! host-side power switch, and a boot the proof must refuse.

use std::collections::BTreeSet;

use aba::results::{
    journal::{Event, Journal},
    samples::{Phase, SampleTable, Status},
};

use crate::{
    report::golden_results::fixtures_dir,
    support::{
        cli::{aba, assert_verified, campaign_dir, run_on, text, write},
        lab::{KERNEL_A, KERNEL_B, LabVm, lab_dir},
    },
};

/// (point, release, boot_id, cmdline) of every proven boot, in order.
fn proven(dir: &std::path::Path) -> Vec<(String, String, String, String)> {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events
        .into_iter()
        .filter_map(|e| match e {
            Event::BootProven {
                point,
                release,
                boot_id,
                cmdline,
                ..
            } => Some((point, release, boot_id, cmdline)),
            _ => None,
        })
        .collect()
}

fn ok_samples(dir: &std::path::Path, point: &str) -> usize {
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    table
        .rows
        .iter()
        .filter(|r| table.text(r.point) == point && r.status == Status::Ok)
        .count()
}

#[test]
fn kexec_aba_in_the_lab_proves_three_boots() {
    let vm = LabVm::start("t-kexec", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let recipe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/lab-aba.toml");
    let out = run_on(tmp.path(), &recipe, &targets, "kexec", "results");
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));

    let boots = proven(&dir);
    let points: Vec<&str> = boots.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(points, ["a-a", "b", "a-b"]);
    let releases: Vec<&str> = boots.iter().map(|b| b.1.as_str()).collect();
    assert_eq!(releases, [KERNEL_A, KERNEL_B, KERNEL_A]);
    let ids: BTreeSet<&str> = boots.iter().map(|b| b.2.as_str()).collect();
    assert_eq!(ids.len(), 3, "every point is a fresh boot: {boots:?}");
    for (point, _, _, cmdline) in &boots {
        let kernel = if point == "b" { "b" } else { "a" };
        let params: Vec<&str> = cmdline.split_whitespace().collect();
        assert!(params.contains(&"aba.lab=1"), "{cmdline}");
        assert!(
            params.contains(&format!("aba.kernel={kernel}").as_str()),
            "{cmdline}"
        );
        assert_eq!(
            params
                .iter()
                .filter(|p| p.starts_with("aba.kernel="))
                .count(),
            1,
            "{cmdline}"
        );
    }
    // Every sample is labelled with the boot that took it.
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    for (point, release, boot_id, _) in &boots {
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| table.text(r.point) == point)
            .collect();
        assert_eq!(
            rows.len(),
            12,
            "2 cases x (1 warm-up + 5 samples) at {point}"
        );
        assert!(rows.iter().all(|r| r.status == Status::Ok));
        assert!(
            rows.iter()
                .all(|r| table.text(r.boot_id) == boot_id && table.text(r.release) == release)
        );
        assert_eq!(rows.iter().filter(|r| r.phase == Phase::Sample).count(), 10);
    }
    // The guest really runs the last point's kernel now.
    assert_eq!(vm.ssh("uname -r").trim(), KERNEL_A);
    for env in ["a-a-1.json", "b-1.json", "a-b-1.json"] {
        assert!(
            dir.join("env").join(env).is_file(),
            "environment record {env}"
        );
    }
    assert_verified(&dir);
}

const SHORT_ABA: &str = r#"
version = 1
name = "lab-short"
description = "a short A-B-A in the lab"
sequence = ["a", "b", "a"]
warmup = 0
samples = 2
point_retries = 0
[kernels.a]
release = "6.1.0-47-cloud-amd64"
[kernels.b]
release = "6.1.0-50-cloud-amd64"
cmdline = "aba.kernel=b"
[[workload]]
name = "labbench"
run = "labbench 5"
metric = { number = true, unit = "ns", better = "lower" }
"#;

/// Issue 18: the same kexec A-B-A twice on one lab VM, compared (`aba compare`); then the lab
/// campaign against a results fixture, which shares none of its series.
#[test]
fn the_same_aba_twice_in_the_lab_is_compared_side_by_side() {
    let vm = LabVm::start("t-compare", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    // Three samples per point, so that drop-first can judge each campaign.
    let recipe = write(
        tmp.path(),
        "r.toml",
        &SHORT_ABA.replace("samples = 2", "samples = 3"),
    );
    let mut dirs = Vec::new();
    for results in ["results-1", "results-2"] {
        let out = run_on(tmp.path(), &recipe, &targets, "kexec", results);
        assert!(out.status.success(), "{}", text(&out));
        let dir = campaign_dir(&tmp.path().join(results));
        assert_verified(&dir);
        dirs.push(dir.to_str().expect("utf-8").to_owned());
    }
    let out = aba(
        tmp.path(),
        &["compare", &dirs[1], &dirs[0], "--tsv", "lab.tsv"],
    );
    // The verdict is the two TCG campaigns' to give; what they ran on is not.
    assert!(matches!(out.status.code(), Some(0 | 4)), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        said.contains("lab-short against the reference lab-short: 1 "),
        "{said}"
    );
    for fact in [
        "target: kexec (the same)".to_owned(),
        format!("a release: {KERNEL_A} (the same)"),
        format!("b release: {KERNEL_B} (the same)"),
        "b command line: aba.kernel=b (the same)".to_owned(),
    ] {
        assert!(said.contains(&fact), "{fact}: {said}");
    }
    // Fresh boots: the intervals are boot-level, not run-to-run.
    assert!(said.contains("boot-level 95% CI"), "{said}");
    let tsv = std::fs::read_to_string(tmp.path().join("lab.tsv")).expect("TSV");
    let label = tsv
        .lines()
        .find(|l| l.contains("\tboth\treproduction\tb,a\t"))
        .and_then(|l| l.rsplit('\t').next())
        .expect("a reproduction verdict for b");
    assert!(
        ["REPRODUCED", "DIFFERENT", "NOT_REPRODUCED", "INCONCLUSIVE"].contains(&label),
        "{label}"
    );
    // A results fixture shares no series with the lab campaign: refused, both lists named.
    let fixture = fixtures_dir().join("mprotect-exact-cac1");
    let out = aba(
        tmp.path(),
        &["compare", &dirs[0], fixture.to_str().expect("utf-8")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "the new campaign has labbench; the reference has mprotect/iteration_ns_per_page"
        ),
        "{err}"
    );
}

#[test]
fn a_power_switch_boots_the_other_kernel() {
    let vm = LabVm::start("t-power", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let recipe = write(tmp.path(), "r.toml", SHORT_ABA);
    let pidfile = lab_dir().join("out/run/t-power/qemu.pid");
    let pid_before = std::fs::read_to_string(&pidfile).expect("pid");
    let out = run_on(tmp.path(), &recipe, &targets, "power", "results");
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let boots = proven(&dir);
    let releases: Vec<&str> = boots.iter().map(|b| b.1.as_str()).collect();
    assert_eq!(releases, [KERNEL_A, KERNEL_B, KERNEL_A]);
    assert!(
        boots[1].3.split_whitespace().any(|p| p == "aba.kernel=b"),
        "{:?}",
        boots[1]
    );
    assert_eq!(boots.iter().map(|b| &b.2).collect::<BTreeSet<_>>().len(), 3);
    let pid_after = std::fs::read_to_string(&pidfile).expect("pid");
    assert_ne!(pid_before, pid_after, "QEMU was power-cycled");
    for point in ["a-a", "b", "a-b"] {
        assert_eq!(ok_samples(&dir, point), 2, "{point}");
    }
    assert_verified(&dir);
}

#[test]
fn a_wrong_release_is_refused_by_the_proof_and_records_no_sample() {
    let vm = LabVm::start("t-wrongrel", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    // Kernel b boots 6.1.0-50's image but claims another release: the proof must catch it.
    let recipe = write(
        tmp.path(),
        "r.toml",
        &SHORT_ABA.replace(
            "[kernels.b]\nrelease = \"6.1.0-50-cloud-amd64\"",
            "[kernels.b]\nrelease = \"6.1.0-99-cloud-amd64\"\nimage = \"/boot/vmlinuz-6.1.0-50-cloud-amd64\"\ninitrd = \"/boot/initrd.img-6.1.0-50-cloud-amd64\"",
        ),
    );
    let out = run_on(tmp.path(), &recipe, &targets, "kexec", "results");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "the target runs {KERNEL_B}, not 6.1.0-99-cloud-amd64 (uname -r)"
        )),
        "{stderr}"
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    assert_eq!(ok_samples(&dir, "a-a"), 2);
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    assert!(
        !table.rows.iter().any(|r| table.text(r.point) == "b"),
        "a sample was recorded on an unproven boot"
    );
    let journal = Journal::read(&dir.join("journal.jsonl")).expect("journal");
    assert!(
        !journal
            .events
            .iter()
            .any(|e| matches!(e, Event::BootProven { point, .. } if point == "b"))
    );
    assert!(journal.events.iter().any(
        |e| matches!(e, Event::PointFailed { point, kernel, .. } if point == "b" && kernel == "b")
    ));
    assert_verified(&dir);
}

/// Issue 19: a release that exists nowhere stops the run before the first switch (not after a
/// measured point), names the missing files, and is not retried.
#[test]
fn a_kernel_missing_on_the_target_stops_the_run_before_the_first_switch() {
    let vm = LabVm::start("t-missing", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    let recipe = write(
        tmp.path(),
        "r.toml",
        &SHORT_ABA.replace("6.1.0-50-cloud-amd64", "6.1.0-99-cloud-amd64"),
    );
    let out = run_on(tmp.path(), &recipe, &targets, "kexec", "results");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/boot/vmlinuz-6.1.0-99-cloud-amd64"),
        "names the missing image: {stderr}"
    );
    assert!(stderr.contains("no point was started"), "{stderr}");
    let dir = campaign_dir(&tmp.path().join("results"));
    let journal = Journal::read(&dir.join("journal.jsonl")).expect("journal");
    assert!(
        !journal
            .events
            .iter()
            .any(|e| matches!(e, Event::PointStarted { .. } | Event::Switching { .. })),
        "a point started: {:?}",
        journal.events
    );
    assert_verified(&dir);
}

/// Issue 10: `aba calibrate` of recipes/lab-aba.toml writes the target's noise profile (fresh
/// kexec boots of the baseline, so boot-to-boot), and the A-B-A that follows copies it, matches
/// its fingerprint against what its own boots recorded, pools it and names it in its report.
/// Two calibration boots keep it short: ν = 1 is the fewest a profile can have.
#[test]
fn calibrate_writes_a_profile_the_following_aba_pools_and_names() {
    let vm = LabVm::start("t-profile", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let profiles = tmp.path().join("profiles");
    let targets = vm.inventory(
        tmp.path(),
        &format!("profiles = \"{}\"", profiles.display()),
    );
    let recipe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/lab-aba.toml");
    let args = |command: &'static str, results: &'static str| {
        vec![
            command.to_owned(),
            recipe.display().to_string(),
            "--targets".to_owned(),
            targets.display().to_string(),
            "--target".to_owned(),
            "kexec".to_owned(),
            "--results".to_owned(),
            results.to_owned(),
        ]
    };
    let mut calibrate = args("calibrate", "calibrations");
    calibrate.extend(["--boots".to_owned(), "2".to_owned()]);
    let calibrate: Vec<&str> = calibrate.iter().map(String::as_str).collect();
    let out = crate::support::cli::aba(tmp.path(), &calibrate);
    assert!(out.status.success(), "{}", text(&out));
    let file = profiles.join("lab-aba.toml");
    let (profile, _) = aba::profile::read_profile(&file).expect("a valid profile");
    assert_eq!(profile.scope, aba::profile::Scope::Boot);
    assert_eq!(profile.boots, 2);
    assert_eq!(profile.fingerprint.release, KERNEL_A);
    assert_eq!(profile.fingerprint.params, ["aba.lab=1", "aba.kernel=a"]);
    assert_eq!(profile.series.len(), 2, "labbench at two sizes");
    let calibration = campaign_dir(&tmp.path().join("calibrations"));
    let boots = proven(&calibration);
    assert_eq!(boots.len(), 2);
    assert_ne!(boots[0].2, boots[1].2, "two fresh boots");
    assert_verified(&calibration);

    let run = args("run", "results");
    let run: Vec<&str> = run.iter().map(String::as_str).collect();
    let out = crate::support::cli::aba(tmp.path(), &run);
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    assert!(dir.join("profile.toml").is_file());
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report");
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!(
            "Noise profile: lab-aba.toml (created {}, 2 boots, ν = 1, boot-to-boot)",
            profile.created
        )),
        "{report}"
    );
    assert!(
        flat.contains("pooled with the campaign's own in 2 of 2 series"),
        "{report}"
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("readme");
    assert!(readme.contains("- Noise profile: `"), "{readme}");
    assert_verified(&dir);
}
