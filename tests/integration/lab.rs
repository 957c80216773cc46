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
        cli::{aba, assert_verified, campaign_dir, run_built, run_on, text, write},
        lab::{KERNEL_A, KERNEL_B, LabVm, built_kernels, console_tail, lab_dir},
        recipe::{Metric, Probe, Recipe, Workload},
    },
};

/// (point, release, boot_id, cmdline) of every proven boot, in order.
pub(crate) fn proven(dir: &std::path::Path) -> Vec<(String, String, String, String)> {
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
    // The shipped lab recipe with an ftrace call counter at the A points (the last one's
    // boot is still up after the campaign, to see that nothing stays behind).
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/lab-aba.toml");
    let probe = Probe::new(
        "sysctl_reads",
        "for i in 1 2 3 4 5; do cat /proc/sys/kernel/ostype; done",
    )
    .kernels(&["a"])
    .ftrace(&["proc_sys_read", "aba_no_such_function", "vfs_read"]);
    let recipe = tmp.path().join("lab-aba.toml");
    std::fs::write(
        &recipe,
        format!(
            "{}\n{}",
            std::fs::read_to_string(&shipped).expect("read"),
            probe.toml()
        ),
    )
    .expect("write");
    let out = run_on(tmp.path(), &recipe, &targets, "kexec", "results");
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let probes = std::fs::read_to_string(dir.join("probes.tsv")).expect("probes.tsv");
    let calls = |point: &str, function: &str| -> Option<f64> {
        probes
            .lines()
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .find(|f| f[0] == point && f[2] == "sysctl_reads" && f[3] == function)
            .map(|f| {
                assert_eq!(f[5], "calls", "{probes}");
                f[4].parse().expect("a number")
            })
    };
    for point in ["a-a", "a-b"] {
        // Each `cat` reads twice (the text, then the end).
        let sysctl = calls(point, "proc_sys_read").unwrap_or_else(|| panic!("{probes}"));
        assert!(sysctl >= 10.0, "{probes}");
        let reads = calls(point, "vfs_read").unwrap_or_else(|| panic!("{probes}"));
        assert!(reads >= sysctl, "{probes}");
        assert_eq!(calls(point, "aba_no_such_function"), None, "{probes}");
    }
    assert_eq!(calls("b", "proc_sys_read"), None, "{probes}");
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report");
    assert!(
        report.contains("no kprobe can be put on `aba_no_such_function`"),
        "{report}"
    );
    // Nothing of aba's stays in tracefs on the boot the last probe ran on.
    let left = vm.ssh(
        "grep -c aba_ftrace /sys/kernel/debug/tracing/kprobe_events || true; ls /sys/kernel/debug/tracing/instances",
    );
    assert_eq!(left.trim(), "0", "{left}");

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

/// A short kexec A-B-A in the lab, `samples` per point.
fn short_aba(samples: u32) -> Recipe {
    Recipe::new("lab-short", "a short A-B-A in the lab", &["a", "b", "a"])
        .runs(0, samples)
        .point_retries(0)
        .kernel("a", KERNEL_A, None)
        .kernel("b", KERNEL_B, Some("aba.kernel=b"))
        .workload(Workload::new("labbench", "labbench 5", Metric::lower("ns")))
}

/// Issue 18: the same kexec A-B-A twice on one lab VM, compared (`aba compare`); then the lab
/// campaign against a results fixture, which shares none of its series.
#[test]
fn the_same_aba_twice_in_the_lab_is_compared_side_by_side() {
    let vm = LabVm::start("t-compare", KERNEL_A);
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path(), "");
    // Three samples per point, so that drop-first can judge each campaign.
    let recipe = write(tmp.path(), "r.toml", &short_aba(3).toml());
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
    let recipe = write(tmp.path(), "r.toml", &short_aba(2).toml());
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
        // Keys the builder does not write (`image`, `initrd`) go in as text.
        &short_aba(2).toml().replace(
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
        &short_aba(2)
            .kernel("b", "6.1.0-99-cloud-amd64", Some("aba.kernel=b"))
            .toml(),
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

/// The lab's builds file for recipe 005 with absolute paths, and `patched` carrying a small
/// modules folder (the kernel has no modules; the install is what is proven).
fn built_kernels_file(dir: &std::path::Path, variants: &[&str]) -> (std::path::PathBuf, String) {
    let kernels = built_kernels();
    let release = std::fs::read_to_string(kernels.join("release"))
        .expect("lab/out/kernel/release")
        .trim()
        .to_owned();
    let modules = dir.join("modules");
    let tree = modules.join("lib/modules").join(&release);
    std::fs::create_dir_all(tree.join("extra")).expect("mkdir");
    std::fs::write(tree.join("extra/aba-lab.txt"), "installed by aba\n").expect("write");
    let recipes = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    let mut text = String::from("version = 1\n");
    for &variant in variants {
        let k = kernels.join(variant);
        text.push_str(&format!(
            "[kernels.{variant}]\nimage = \"{}\"\nconfig = \"{}\"\n",
            k.join("bzImage").display(),
            k.join("config").display()
        ));
        let patch = match variant {
            "patched" => Some("patched.patch"),
            "null-patch" => Some("null.patch"),
            _ => None,
        };
        if let Some(p) = patch {
            text.push_str(&format!(
                "patches = [\"{}\"]\n",
                recipes.join("005-lab-built-kernels").join(p).display()
            ));
        }
        if variant == "patched" {
            text.push_str(&format!("modules = \"{}\"\n", modules.display()));
        }
        if variant == "null-patch" {
            // The same modules as an archive of the INSTALL_MOD_PATH folder.
            let archive = dir.join("modules.tar.gz");
            let ok = std::process::Command::new("tar")
                .arg("-C")
                .arg(&modules)
                .args(["-czf"])
                .arg(&archive)
                .arg("lib")
                .status()
                .expect("tar runs")
                .success();
            assert!(ok, "tar");
            text.push_str(&format!("modules = \"{}\"\n", archive.display()));
        }
    }
    (write(dir, "builds.toml", &text), release)
}

/// Recipe 005 in the lab: three kernels built here from one tree, all of one release, each
/// installed by aba before its kexec and proven by its build at every boot; `patched` (a
/// udelay in the sysctl's read handler) is slower with SIGNAL, `null-patch` is not; every
/// sample is attributed to the build that ran; the recipe's probes count the delayed
/// handler's calls on both candidates.
#[test]
fn kernels_built_here_are_installed_proven_and_compared() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (builds, release) = built_kernels_file(tmp.path(), &["original", "patched", "null-patch"]);
    let vm = LabVm::start("t-built", KERNEL_A);
    let targets = vm.inventory(tmp.path(), "");
    let recipe =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/005-lab-built-kernels.toml");
    let out = run_built(tmp.path(), &recipe, &targets, "kexec", &builds);
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 40)
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    assert_verified(&dir);
    let journal = Journal::read(&dir.join("journal.jsonl")).expect("journal");
    let kernels = journal.kernels().expect("the builds bound the kernels");
    let build_of = |label: &str| {
        kernels
            .iter()
            .find(|k| k.label.as_str() == label)
            .and_then(|k| k.build.as_deref())
            .unwrap_or_else(|| panic!("kernel {label} has a build"))
    };
    let versions: BTreeSet<String> = ["original", "patched", "null-patch"]
        .iter()
        .map(|l| build_of(l).version.to_string())
        .collect();
    assert_eq!(versions.len(), 3, "three builds: {versions:?}");
    assert!(
        kernels.iter().all(|k| k.release.as_str() == release),
        "one release for all three"
    );

    // Every counted boot ran the build aba installed for its kernel.
    let done = journal.state().done_attempts();
    let kernel_of = |point: &str| {
        ["null-patch", "patched", "original"]
            .into_iter()
            .find(|k| point.starts_with(k))
            .expect("a kernel")
    };
    let mut proven_points = Vec::new();
    for e in &journal.events {
        match e {
            Event::BuildProven {
                point,
                attempt,
                proof,
            } if done.get(point) == Some(attempt) => {
                let want = build_of(kernel_of(point));
                let running = aba::build::version::KernelVersion::parse_proc(&proof.version)
                    .expect("a /proc/version");
                assert!(want.version.same_build(&running), "{point}: {proof:?}");
                assert_eq!(
                    proof.config,
                    aba::build::proof::ConfigProof::Matched {
                        source: "/proc/config.gz".into()
                    },
                    "{point}"
                );
                proven_points.push(point.clone());
            }
            Event::Installed {
                point,
                attempt,
                installed,
                ..
            } if done.get(point) == Some(attempt) => {
                let want = build_of(kernel_of(point));
                let image = installed
                    .iter()
                    .find(|i| i.path.ends_with("/vmlinuz"))
                    .expect("the image");
                assert_eq!(image.sha256, want.image.sha256, "{point}");
                if point == "patched" || point == "null-patch" {
                    let modules = installed
                        .iter()
                        .find(|i| i.path == format!("/lib/modules/{release}"))
                        .expect("the modules");
                    assert!(modules.sent, "{point}: a fresh initramfs holds none");
                }
            }
            _ => {}
        }
    }
    assert_eq!(proven_points.len(), 5, "{proven_points:?}");
    // The samples of each point carry the boot whose build was proven.
    let boots = proven(&dir);
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    for (point, _, boot_id, _) in boots.iter().filter(|b| proven_points.contains(&b.0)) {
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point
                    && r.status == Status::Ok
                    && r.phase == Phase::Sample
                    && done.get(point.as_str()) == Some(&r.attempt)
            })
            .collect();
        assert_eq!(rows.len(), 10, "5 samples x 2 workloads at {point}");
        assert!(rows.iter().all(|r| table.text(r.boot_id) == boot_id));
    }

    // The verdicts: the patch that delays the read is slower with SIGNAL, the null patch
    // shows none, and the control moves with neither.
    let report = aba(
        tmp.path(),
        &["report", dir.to_str().expect("utf-8"), "--json"],
    );
    assert!(report.status.success(), "{}", text(&report));
    let doc: serde_json::Value = serde_json::from_slice(&report.stdout).expect("JSON");
    let verdict = |series: &str, candidate: &str| {
        doc["summary"]["verdicts"]
            .as_array()
            .into_iter()
            .chain(doc["summary"]["controls"].as_array())
            .flatten()
            .find(|v| {
                v["series"].as_str().is_some_and(|s| s.starts_with(series))
                    && v["candidate"] == candidate
            })
            .unwrap_or_else(|| panic!("no verdict {series} {candidate}: {}", doc["summary"]))
            .clone()
    };
    let patched = verdict("sched_rt_runtime_us", "patched");
    assert_eq!(patched["label"], "SIGNAL", "{patched}");
    assert_eq!(patched["direction"], "slower", "{patched}");
    let null = verdict("sched_rt_runtime_us", "null-patch");
    assert_ne!(null["label"], "SIGNAL", "{null}");
    for candidate in ["patched", "null-patch"] {
        let control = verdict("sched_rr_timeslice_ms", candidate);
        assert_ne!(control["label"], "SIGNAL", "{control}");
    }

    // What resume and report read: the recorded builds, bound to the recipe's kernels.
    let recorded = aba::results::layout::ResultsDir::open(&dir)
        .load_recipe()
        .expect("the copied recipe");
    let patched_build = recorded.kernels["patched"]
        .build
        .as_deref()
        .expect("a build");
    assert_eq!(patched_build.image.sha256, build_of("patched").image.sha256);
    assert_eq!(
        recorded.kernels["patched"].image.as_str(),
        patched_build.target_image()
    );

    // Where each number came from.
    let sources = std::fs::read_to_string(dir.join("source-identity.tsv")).expect("tsv");
    assert_eq!(sources.lines().count(), 4, "{sources}");
    assert!(sources.contains("patched.patch="), "{sources}");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README");
    assert!(
        readme.contains("### Where each kernel came from"),
        "{readme}"
    );
    assert!(
        readme.contains("config matched /proc/config.gz"),
        "{readme}"
    );
    assert!(!readme.contains("NOT PROVEN"), "{readme}");

    // Matched builds (issue 33, item 3): the three builds agree on compiler, linker and
    // normalised config, and differ, as intended, by their patches.
    let matched =
        std::fs::read_to_string(dir.join("matched-build.tsv")).expect("matched-build.tsv");
    for kernel in ["patched", "null-patch"] {
        for (field, status) in [
            ("compiler", "PASS"),
            ("linker", "PASS"),
            ("config_normalised_sha256", "PASS"),
            ("release_length", "PASS"),
            ("patches", "DIFFERS (intended: the patch)"),
        ] {
            assert!(
                matched.lines().any(|l| {
                    let cells: Vec<&str> = l.split('\t').collect();
                    cells.get(1) == Some(&kernel)
                        && cells.get(2) == Some(&field)
                        && cells.get(5) == Some(&status)
                }),
                "{kernel} {field} {status}: {matched}"
            );
        }
    }
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report");
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Builds matched (matched-build.tsv): patched, null-patch against original"),
        "{report}"
    );

    // Attribution (issue 33): the recipe's probes ran before the samples on the two
    // candidates only. The patched handler ran once per read (1000, plus labbench's untimed
    // first read) on both: the patch made each call slower, not the calls more.
    let probes = std::fs::read_to_string(dir.join("probes.tsv")).expect("probes.tsv");
    let value = |point: &str, probe: &str, name: &str| -> Option<f64> {
        probes
            .lines()
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .find(|f| f[0] == point && f[2] == probe && f[3] == name)
            .map(|f| f[4].parse().expect("a number"))
    };
    let calls: Vec<f64> = ["patched", "null-patch"]
        .iter()
        .map(|point| {
            value(point, "rt_handler_calls", "sched_rt_handler")
                .unwrap_or_else(|| panic!("{point}: {probes}\n{report}"))
        })
        .collect();
    eprintln!("sched_rt_handler calls during 1000 reads (patched, null-patch): {calls:?}");
    assert!(calls.iter().all(|c| *c >= 1001.0), "{calls:?}");
    assert!((calls[0] - calls[1]).abs() <= 5.0, "{calls:?}");
    for point in ["patched", "null-patch"] {
        let switches = value(point, "context_switches", "ctxt");
        assert!(switches.is_some_and(|n| n >= 0.0), "{point}: {probes}");
    }
    assert!(
        probes.lines().all(|l| !l.starts_with("original")),
        "no probe at the original points: {probes}"
    );
    assert!(flat.contains("rt_handler_calls"), "{report}");
    // The timed samples after the probe: the within-boot spread of the measured read at the
    // probed points (the counter set up and removed just before) against the original
    // points' (no probe), whose handler is the same, held to the recipe's max_cv_pct. The
    // spread held is robust (1.4826 MAD / median, the SD's value for normal samples): in CI
    // the distro VM runs beside this one, and a few samples it crowds out move the SD, not
    // the MAD. Measured on 2026-12-07: in a CI run the probed points' CVs were 7.9 and 10.5 %
    // (the original points' 1.6-3.9 %); run alone, 2.0 and 2.1 % (1.3-5.9 %), as in the four
    // runs before (mean 2.1 % probed, 2.0 % not). The CV is printed beside it.
    let points = std::fs::read_to_string(dir.join("points.tsv")).expect("points.tsv");
    let mut lines = points.lines();
    let header: Vec<&str> = lines.next().expect("a header").split('\t').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let [workload, analysis, point, cv, median, mad] =
        ["workload", "analysis", "point", "cv_pct", "median", "mad"].map(column);
    let spread: Vec<(String, f64, f64)> = lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f[workload] == "sched_rt_runtime_us" && f[analysis] == "all")
        .map(|f| {
            let number = |i: usize| f[i].parse::<f64>().expect("a number");
            let robust = 100.0 * 1.4826 * number(mad) / number(median);
            (f[point].to_owned(), robust, number(cv))
        })
        .collect();
    eprintln!(
        "within-boot spread of sched_rt_runtime_us per point, robust CV % and CV % (probe before the samples at patched, null-patch): {spread:?}"
    );
    assert_eq!(spread.len(), 5, "{spread:?}");
    assert!(spread.iter().all(|(_, r, _)| *r <= 10.0), "{spread:?}");
}

/// Installed on the lab VM before the stale-install test's campaign: any `kexec -l` of
/// patched's image loads `/tmp/stale-bzImage` (original's) instead, as a forgotten
/// `make install` would leave it; every other use of kexec is the real one. Each call is
/// logged to the console (kmsg level 3) for a failure's report.
const STALE_KEXEC: &str = r#"set -e
k=$(command -v kexec)
[ -e "$k.real" ] || mv "$k" "$k.real"
{
    echo '#!/bin/sh'
    echo 'echo "<3>aba-stale-kexec: $*" >/dev/kmsg 2>/dev/null'
    echo 'case $1 in -l) ;; *) exec '"$k"'.real "$@" ;; esac'
    echo 'n=$#'
    echo 'for a in "$@"; do'
    echo '    case $a in */kernels/patched-*/vmlinuz) a=/tmp/stale-bzImage ;; esac'
    echo '    set -- "$@" "$a"'
    echo 'done'
    echo 'shift $n'
    echo 'exec '"$k"'.real "$@"'
} > "$k"
chmod +x "$k"
"#;

const STALE_RECIPE: &str = r#"
version = 1
name = "stale"
description = "patched's image replaced by original's on the target"
sequence = ["patched"]
warmup = 0
samples = 2
point_retries = 0
[kernels.patched]
release = "6.1.192-aba-lab"
initrd = "/boot/initrd.img"
[[workload]]
name = "read"
run = "labbench --read /proc/sys/kernel/sched_rt_runtime_us 200 --json"
timeout = "60s"
metric = { json = "/ns_per_read", unit = "ns/read", better = "lower" }
"#;

/// A stale install: the target's kexec loads `original`'s image where aba installed
/// `patched`'s (same release). The build proof refuses the point; no sample is attributed to
/// a build that did not run.
#[test]
fn a_stale_image_of_the_same_release_is_refused_by_the_build_proof() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (builds, _) = built_kernels_file(tmp.path(), &["patched"]);
    let recipe = write(tmp.path(), "stale.toml", STALE_RECIPE);
    let vm = LabVm::start("t-stale", KERNEL_A);
    let stale = std::fs::File::open(built_kernels().join("original/bzImage")).expect("image");
    let copied = std::process::Command::new(lab_dir().join("lab-ssh.sh"))
        .args([&vm.port.to_string(), "cat > /tmp/stale-bzImage"])
        .stdin(stale)
        .status()
        .expect("lab-ssh.sh runs");
    assert!(copied.success());
    vm.ssh(STALE_KEXEC);
    let targets = vm.inventory(tmp.path(), "");
    let out = run_built(tmp.path(), &recipe, &targets, "kexec", &builds);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 30)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("another build of the release runs"),
        "{stderr}\n--- console ---\n{}",
        console_tail(&vm.console_log(), 30)
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    assert_verified(&dir);
    let events = Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::BootProven { point, .. } if point == "patched")),
        "the release and parameters were proven: only the build differs"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::BuildProven { .. })),
        "patched's build was never proven"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::PointFailed { point, reason, .. }
            if point == "patched" && reason.contains("another build of the release runs")
    )));
    assert_eq!(ok_samples(&dir, "patched"), 0);
}
