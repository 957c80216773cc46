//! Switching proven on a real distribution: A-B-A campaigns on the distro target (Debian 12,
//! systemd, GRUB and systemd-boot under UEFI) by `systemctl kexec`, by a GRUB one-shot entry
//! and by a BLS one-shot entry, each kernel with its own recipe parameters proven in
//! /proc/cmdline; the audits of a real system; a runner killed mid-switch and resumed.
//!
//! One VM serves every test, one test at a time (support::distro). Each boot takes one to
//! three minutes under emulation: the tests are few and each proves several things.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    time::Duration,
};

use aba::results::{
    journal::{Event, Journal},
    samples::{SampleTable, Status},
};

use crate::support::{
    cli::{
        aba, assert_verified, campaign_dir, journal_events as events, resume, run_built, run_on,
        spawn_run_on, text, wait_for_journal, write,
    },
    distro::{DEFAULT_KERNEL, DistroVm, OTHER_KERNEL},
    lab::{console_tail, lab_dir},
};

/// An A-B-A whose kernels differ from the box's default one way or another: `a` is the
/// other kernel (never the default entry), `b` the default kernel with parameters of its own.
fn recipe(run: &str) -> String {
    format!(
        r#"
version = 1
name = "distro-aba"
description = "an A-B-A on the distro target"
sequence = ["a", "b", "a"]
warmup = 0
samples = 3
point_retries = 0
[boot]
cmdline = "aba.lab=1"
[kernels.a]
release = "{OTHER_KERNEL}"
cmdline = "aba.kernel=a"
[kernels.b]
release = "{DEFAULT_KERNEL}"
cmdline = "aba.kernel=b mitigations=off"
[[workload]]
name = "labbench"
run = "{run}"
timeout = "120s"
metric = {{ number = true, unit = "ns", better = "lower" }}
"#
    )
}

/// The attempt that counts of every finished point (the journal's own reading).
fn done_attempts(dir: &Path) -> BTreeMap<String, u32> {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .state()
        .done_attempts()
}

/// (point, release, boot_id, cmdline) of every proven boot of the counted attempts.
fn proven(dir: &Path) -> Vec<(String, String, String, String)> {
    let done = done_attempts(dir);
    events(dir)
        .into_iter()
        .filter_map(|e| match e {
            Event::BootProven {
                point,
                attempt,
                release,
                boot_id,
                cmdline,
                ..
            } if done.get(&point) == Some(&attempt) => Some((point, release, boot_id, cmdline)),
            _ => None,
        })
        .collect()
}

/// Every point was a fresh boot of its kernel with its parameters, and every counted sample
/// is labelled with that boot; nothing is lost (aba verify).
fn assert_aba_proven(dir: &Path) -> Vec<(String, String, String, String)> {
    let boots = proven(dir);
    let points: Vec<&str> = boots.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(points, ["a-a", "b", "a-b"], "{boots:?}");
    let ids: BTreeSet<&str> = boots.iter().map(|b| b.2.as_str()).collect();
    assert_eq!(ids.len(), 3, "every point is a fresh boot: {boots:?}");
    for (point, release, _, cmdline) in &boots {
        let words: Vec<&str> = cmdline.split_whitespace().collect();
        let (kernel, wanted, params) = if point == "b" {
            (
                "b",
                DEFAULT_KERNEL,
                &["aba.kernel=b", "mitigations=off"][..],
            )
        } else {
            ("a", OTHER_KERNEL, &["aba.kernel=a"][..])
        };
        assert_eq!(release, wanted, "point {point}");
        for p in params.iter().chain(&["aba.lab=1"]) {
            assert!(
                words.contains(p),
                "point {point} (kernel {kernel}): {cmdline}"
            );
        }
        assert!(
            words.contains(&"root=UUID=ab0a0001-0000-4000-8000-0000000000a1"),
            "{cmdline}"
        );
    }
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let done = done_attempts(dir);
    for (point, release, boot_id, _) in &boots {
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r.point) == point
                    && done.get(point) == Some(&r.attempt)
                    && r.status == Status::Ok
            })
            .collect();
        assert_eq!(rows.len(), 3, "3 samples at {point}");
        assert!(
            rows.iter()
                .all(|r| table.text(r.boot_id) == boot_id && table.text(r.release) == release),
            "point {point}'s samples carry its proven boot"
        );
    }
    assert_verified(dir);
    boots
}

/// run-audit.tsv's text, and `point`'s row by column name.
fn audit_row(dir: &Path, point: &str) -> (String, BTreeMap<String, String>) {
    let audit = std::fs::read_to_string(dir.join("run-audit.tsv")).expect("run-audit.tsv");
    let mut lines = audit.lines().map(|l| l.split('\t').map(str::to_owned));
    let header: Vec<String> = lines.next().expect("a header").collect();
    let row = lines
        .map(|cells| {
            header
                .iter()
                .cloned()
                .zip(cells)
                .collect::<BTreeMap<_, _>>()
        })
        .find(|row| row.get("point").map(String::as_str) == Some(point))
        .unwrap_or_else(|| panic!("no audit row for {point}:\n{audit}"));
    (audit, row)
}

fn removed_entries(dir: &Path) -> Vec<String> {
    events(dir)
        .into_iter()
        .filter_map(|e| match e {
            Event::BootEntriesRemoved { removed, .. } => Some(removed),
            _ => None,
        })
        .flatten()
        .collect()
}

/// `systemctl kexec` A-B-A; the audit names a failed unit and a kernel warning injected at
/// point b only.
#[test]
fn systemctl_kexec_aba_with_audits_of_a_failed_unit_and_a_kernel_warning() {
    let vm = DistroVm::get();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path());
    let inject = format!(
        "if [ \\\"$(uname -r)\\\" = {DEFAULT_KERNEL} ] && [ ! -e /run/aba-injected ]; then touch /run/aba-injected; systemd-run --unit=aba-fail --quiet false; fi; labbench 5"
    );
    // The kernel warning comes before the first sample, while the point is set up, where a
    // patched kernel most often warns: counted from the boot, it is the point's (issue 37).
    let setup = format!(
        "[setup]\nrun = ['if [ \"$(uname -r)\" = {DEFAULT_KERNEL} ] && [ ! -e /run/aba-warned ]; then touch /run/aba-warned; echo \"<4>WARNING: aba-test warning in setup\" > /dev/kmsg; fi']\n[[workload]]"
    );
    let r = write(
        tmp.path(),
        "r.toml",
        &recipe(&inject).replace("[[workload]]", &setup),
    );
    let out = run_on(tmp.path(), &r, &targets, "kexec", "results");
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 60)
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    assert_aba_proven(&dir);

    let (audit, b) = audit_row(&dir, "b");
    assert!(b["failed_units"].contains("aba-fail.service"), "{audit}");
    assert_ne!(b["dmesg_warnings"], "0", "{audit}");
    for p in ["a-a", "a-b"] {
        let (_, a) = audit_row(&dir, p);
        assert!(!a["failed_units"].contains("aba-fail"), "{audit}");
    }
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report.txt");
    assert!(report.contains("aba-fail.service"), "{report}");
    assert!(
        report.contains("aba-test warning in setup"),
        "the warning logged in setup is quoted: {report}"
    );
    // The box is left on the last point's kernel, a fresh boot without the injected unit.
    assert_eq!(vm.ssh("uname -r").trim(), OTHER_KERNEL);
    assert!(
        !vm.ssh("systemctl list-units --failed --plain --no-legend")
            .contains("aba-fail")
    );
    assert!(vm.boot_loader_leftovers().is_empty());
}

/// A GRUB A-B-A whose kernels carry their own parameters (aba writes a one-shot entry in
/// custom.cfg), with the runner SIGKILLed during point b's switch and resumed: every boot is
/// proven with its parameters, nothing is lost, and no aba entry or selection is left.
#[test]
fn grub_reboot_applies_each_kernels_parameters_and_a_killed_switch_resumes_clean() {
    let vm = DistroVm::get();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path());
    let r = write(tmp.path(), "r.toml", &recipe("labbench 5"));
    let mut child = spawn_run_on(tmp.path(), &r, &targets, "grub");
    let results = tmp.path().join("results");
    // Killed right after GRUB was told to boot b once (custom.cfg written, next_entry set)
    // or while it reboots into it.
    let dir = wait_for_journal(
        &results,
        Duration::from_secs(1500),
        "the switch to point b",
        |events| {
            events
                .iter()
                .any(|e| matches!(e, Event::Switching { point, .. } if point == "b"))
        },
    );
    std::thread::sleep(Duration::from_secs(8));
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    let out = resume(tmp.path(), &dir, Some(&targets), &[]);
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 60)
    );
    let boots = assert_aba_proven(&dir);
    // GRUB's boots name their image: the one-shot entry's, by its path on the root fs.
    for (point, release, _, cmdline) in &boots {
        assert!(
            cmdline.contains(&format!("BOOT_IMAGE=/boot/vmlinuz-{release}")),
            "point {point}: {cmdline}"
        );
    }
    let removed = removed_entries(&dir);
    assert!(
        removed.iter().any(|r| r.contains("/boot/grub/custom.cfg")),
        "aba removed its entry after each boot: {removed:?}"
    );
    assert!(
        vm.boot_loader_leftovers().is_empty(),
        "{:?}",
        vm.boot_loader_leftovers()
    );
    assert!(
        vm.ssh("cat /boot/grub/grub.cfg").contains("custom.cfg"),
        "grub.cfg is the distribution's"
    );
}

/// A BLS A-B-A through systemd-boot one-shot entries whose kernels are copied to the ESP;
/// the one-shot selection and the copies are gone afterwards. Kernel b is a build on the
/// host (the distribution's own image and config, taken from the host's copy of the box's
/// tree): aba installs it under /boot/aba-kernels, proves its build against
/// /boot/config-<release>, and `aba clean` removes it.
#[test]
fn bls_one_shot_entries_boot_each_kernel_from_the_esp_with_its_parameters() {
    let vm = DistroVm::get();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path());
    let r = write(tmp.path(), "r.toml", &recipe("labbench 5"));
    let host_boot = lab_dir().join("out/distro/base/boot");
    let builds = write(
        tmp.path(),
        "builds.toml",
        &format!(
            "version = 1\n[kernels.b]\nimage = \"{}\"\nconfig = \"{}\"\n",
            host_boot
                .join(format!("vmlinuz-{DEFAULT_KERNEL}"))
                .display(),
            host_boot.join(format!("config-{DEFAULT_KERNEL}")).display()
        ),
    );
    let out = run_built(tmp.path(), &r, &targets, "bls", &builds);
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 60)
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    let boots = assert_aba_proven(&dir);
    // systemd-boot names the initrd it loaded: aba's copy on the ESP, not GRUB's path.
    for (point, _, _, cmdline) in &boots {
        let kernel = if point == "b" { "b" } else { "a" };
        assert!(
            cmdline.contains(&format!("initrd=\\aba\\{kernel}\\initrd")),
            "point {point}: {cmdline}"
        );
        assert!(!cmdline.contains("BOOT_IMAGE="), "{cmdline}");
    }
    let removed = removed_entries(&dir);
    assert!(
        removed.iter().any(|r| r.contains("/boot/efi/aba")),
        "{removed:?}"
    );
    assert!(
        vm.boot_loader_leftovers().is_empty(),
        "{:?}",
        vm.boot_loader_leftovers()
    );
    // Kernel b was the host's build: installed by aba, its build proven at its boot.
    let installed: Vec<String> = events(&dir)
        .into_iter()
        .filter_map(|e| match e {
            Event::Installed { installed, .. } => Some(installed),
            _ => None,
        })
        .flatten()
        .map(|i| i.path)
        .collect();
    assert_eq!(installed.len(), 1, "{installed:?}");
    assert!(
        installed[0].starts_with("/boot/aba-kernels/b-") && installed[0].ends_with("/vmlinuz"),
        "{installed:?}"
    );
    assert!(events(&dir).iter().any(|e| matches!(
        e,
        Event::BuildProven { point, proof, .. } if point == "b"
            && proof.config == aba::build::proof::ConfigProof::Matched {
                source: format!("/boot/config-{DEFAULT_KERNEL}"),
            }
    )));
    assert!(
        std::fs::read_to_string(dir.join("source-identity.tsv"))
            .expect("source-identity.tsv")
            .contains(&format!("vmlinuz-{DEFAULT_KERNEL}"))
    );
    // The install stays after the campaign; aba clean takes it away, and only it.
    assert!(vm.ssh(&format!("ls {}", installed[0])).contains("vmlinuz"));
    let clean = aba(
        tmp.path(),
        &[
            "clean",
            dir.to_str().expect("utf-8"),
            "--targets",
            targets.to_str().expect("utf-8"),
        ],
    );
    assert!(clean.status.success(), "{}", text(&clean));
    assert!(
        String::from_utf8_lossy(&clean.stdout).contains(&format!("removed {}", installed[0])),
        "{}",
        text(&clean)
    );
    assert_eq!(
        vm.ssh("ls -A /boot/aba-kernels 2>/dev/null; true").trim(),
        "",
        "nothing of aba's is left"
    );
    assert!(
        vm.ssh(&format!("ls /boot/vmlinuz-{DEFAULT_KERNEL}"))
            .contains("vmlinuz")
    );
}

/// `aba preflight` checks every boot-loader assumption on the real box: both one-shot methods
/// pass on the pristine distribution, and a `custom.cfg` aba did not write, or one a killed
/// campaign left, is named with its fix (no boot needed).
#[test]
fn preflight_checks_the_boot_loaders_and_names_a_foreign_or_left_entry() {
    let vm = DistroVm::get();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path());
    let r = write(tmp.path(), "r.toml", &recipe("labbench 5"));
    let preflight = |target: &str| {
        aba(
            tmp.path(),
            &[
                "preflight",
                r.to_str().expect("utf-8"),
                "--targets",
                targets.to_str().expect("utf-8"),
                "--target",
                target,
            ],
        )
    };
    for target in ["grub", "bls"] {
        let out = preflight(target);
        assert!(out.status.success(), "{target}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("ok    one-shot entry"), "{stdout}");
    }
    let grub = String::from_utf8_lossy(&preflight("grub").stdout).into_owned();
    assert!(
        grub.contains("sources custom.cfg and honours next_entry"),
        "{grub}"
    );
    assert!(
        grub.contains("GRUB clears next_entry as it boots"),
        "{grub}"
    );
    let bls = String::from_utf8_lossy(&preflight("bls").stdout).into_owned();
    assert!(
        bls.contains("systemd-boot with one-shot entry control"),
        "{bls}"
    );

    vm.ssh("echo 'menuentry mine { true; }' > /boot/grub/custom.cfg");
    let foreign = preflight("grub");
    vm.ssh("rm -f /boot/grub/custom.cfg");
    assert!(!foreign.status.success(), "{}", text(&foreign));
    assert!(
        text(&foreign).contains("/boot/grub/custom.cfg exists and was not written by aba"),
        "{}",
        text(&foreign)
    );

    vm.ssh(&format!(
        "printf '%s\\n' '{}' > /boot/grub/custom.cfg",
        aba::kernel::switch::oneshot::MARKER
    ));
    let left = preflight("grub");
    vm.ssh("rm -f /boot/grub/custom.cfg");
    assert!(!left.status.success(), "{}", text(&left));
    assert!(
        text(&left).contains("was left by a killed aba campaign"),
        "{}",
        text(&left)
    );
    assert!(vm.boot_loader_leftovers().is_empty());
}

/// A kernel that cannot boot (its root does not exist, `panic=5`): GRUB falls back to the
/// default entry, the proof catches it, and the failure quotes the lines that say why from
/// this attempt's boot only (issue 37 item 2); the failed row of run-audit.tsv names the boot
/// that answered; nothing of aba's is left in the boot loader.
#[test]
fn a_kernel_that_cannot_find_its_root_is_reported_by_its_own_console_lines() {
    let vm = DistroVm::get();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path());
    let text_of = recipe("labbench 5").replace(
        "cmdline = \"aba.kernel=a\"",
        "cmdline = \"aba.kernel=a root=UUID=ab0a0001-0000-4000-8000-00000000dead rootdelay=3 panic=5\"",
    );
    let r = write(tmp.path(), "r.toml", &text_of);
    // A line an earlier boot printed: never this attempt's.
    let earlier = "Kernel panic - not syncing: aba-test line before the campaign";
    vm.ssh(&format!("echo '{earlier}' > /dev/console"));
    let out = run_on(tmp.path(), &r, &targets, "grub", "results");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "the target runs {DEFAULT_KERNEL}, not {OTHER_KERNEL} (uname -r)"
        )),
        "the default entry answered, and the proof caught it: {stderr}"
    );
    for decisive in [
        "Gave up waiting for root",
        "ALERT!",
        "Rebooting automatically due to panic=",
    ] {
        assert!(
            stderr.contains(decisive),
            "{decisive}: {stderr}\n--- console ---\n{}",
            console_tail(&vm.console_log(), 80)
        );
    }
    assert!(
        std::fs::read_to_string(vm.console_log())
            .unwrap_or_default()
            .contains(earlier),
        "the earlier line is in the console log"
    );
    assert!(!stderr.contains(earlier), "only this attempt: {stderr}");

    let dir = campaign_dir(&tmp.path().join("results"));
    let (audit, row) = audit_row(&dir, "a-a");
    assert_eq!(row["release"], DEFAULT_KERNEL, "{audit}");
    assert!(!row["boot_id"].is_empty(), "{audit}");
    assert!(
        row["cmdline"].contains("root=UUID=ab0a0001-0000-4000-8000-0000000000a1"),
        "the fallback's own command line: {audit}"
    );
    assert!(
        vm.boot_loader_leftovers().is_empty(),
        "{:?}",
        vm.boot_loader_leftovers()
    );
}

/// A BLS campaign killed during its first switch leaves a one-shot entry, its ESP copies and
/// its lock marker; `aba clean DIR` waits for the box to answer and removes them all (issue
/// 37 item 3), without a resume.
#[test]
fn clean_after_a_campaign_killed_mid_switch_removes_its_entry_copies_and_marker() {
    let vm = DistroVm::get();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = vm.inventory(tmp.path());
    let r = write(tmp.path(), "r.toml", &recipe("labbench 5"));
    let mut child = spawn_run_on(tmp.path(), &r, &targets, "bls");
    let dir = wait_for_journal(
        &tmp.path().join("results"),
        Duration::from_secs(900),
        "the switch to point a-a",
        |events| {
            events
                .iter()
                .any(|e| matches!(e, Event::Switching { point, .. } if point == "a-a"))
        },
    );
    std::thread::sleep(Duration::from_secs(8));
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let out = aba(
        tmp.path(),
        &[
            "clean",
            dir.to_str().expect("utf-8"),
            "--targets",
            targets.to_str().expect("utf-8"),
        ],
    );
    assert!(
        out.status.success(),
        "{}\n--- console ---\n{}",
        text(&out),
        console_tail(&vm.console_log(), 60)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("removed /boot/efi/aba"), "{}", text(&out));
    assert!(
        vm.boot_loader_leftovers().is_empty(),
        "{:?}",
        vm.boot_loader_leftovers()
    );
    assert_eq!(
        vm.ssh("ls /var/lib/aba/lock 2>/dev/null; true").trim(),
        "",
        "the killed campaign's marker is gone"
    );
}
