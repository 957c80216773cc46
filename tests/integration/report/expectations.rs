//! `[[expect]]` on an absolute value (issue 34, item 3): the boot-weighted mean of a kernel
//! or the mean of one point, in the metric's unit, checked by `aba report` on a committed
//! results fixture (no target) and shown by `aba check` before anything runs.

use std::path::Path;

use crate::support::cli::{aba, on_target, text, write};

/// `mail-rt-sysctl` copied to `dir`, its recipe given `expects` (the report then says the
/// recipe changed after the run, which is true).
fn fixture_with(dir: &Path, expects: &str) -> std::path::PathBuf {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/mail-rt-sysctl");
    let copy = dir.join("mail-rt-sysctl");
    std::fs::create_dir_all(&copy).expect("mkdir");
    for name in ["recipe.toml", "samples.csv", "journal.jsonl"] {
        std::fs::copy(fixture.join(name), copy.join(name)).expect("copy");
    }
    let recipe = std::fs::read_to_string(copy.join("recipe.toml")).expect("recipe");
    std::fs::write(copy.join("recipe.toml"), format!("{recipe}\n{expects}")).expect("write");
    copy
}

const MEANS: &str = r#"
[[expect]]
workload = "sched_rt_period_us"
kernel = "original"
mean = 8700
tolerance = 500

[[expect]]
workload = "sched_rt_period_us"
point = "patched"
mean = 1
tolerance = 0.5
"#;

#[test]
fn a_published_mean_is_checked_in_the_metrics_unit() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = fixture_with(tmp.path(), MEANS);
    let out = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "one is not reproduced: {}",
        text(&out)
    );
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report");
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    for line in [
        // The original boots' midpoint: (8572.936 … + …) / 2, all samples.
        "sched_rt_period_us original (boot-weighted mean): expected a mean of 8700 ns/read ± 500 ns/read, got 8561.815500 ns/read: reproduced.",
        "sched_rt_period_us patched: expected a mean of 1 ns/read ± 0.5 ns/read, got 264.575000 ns/read: NOT reproduced.",
        // The change expectations of the recipe are checked as before.
        "sched_rt_period_us patched: expected -96.91% ± 0.005, got -96.91% (-96.909826): reproduced.",
    ] {
        assert!(flat.contains(line), "{line}\n{report}");
    }
    let out = aba(
        tmp.path(),
        &["report", "--json", dir.to_str().expect("utf-8")],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let mean = &doc["expects"][2];
    assert_eq!(mean["quantity"], "mean");
    assert_eq!(mean["kernel"], "original");
    assert_eq!(mean["unit"], "ns/read");
    assert_eq!(mean["reproduced"], true);
    assert!(mean.get("expected_pct").is_none(), "{mean}");
    assert_eq!(doc["expects"][3]["point"], "patched");
    assert_eq!(doc["expects"][0]["expected_pct"], -96.91);
    assert_eq!(doc["expects"][0]["quantity"], "change_pct");

    // `aba check` shows what will be expected, before anything runs.
    let inventory = write(
        tmp.path(),
        "targets.toml",
        "[targets.lab]\nhost = \"127.0.0.1\"\nport = 1\nuser = \"root\"\nknown_hosts = \"known_hosts\"\nswitch = \"kexec\"\n",
    );
    let out = on_target(
        tmp.path(),
        "check",
        &dir.join("recipe.toml"),
        &inventory,
        "lab",
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stdout = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        stdout.contains(
            "expect sched_rt_period_us/sched_rt_period_us on kernel original: mean 8700 ns/read, within 500 ns/read"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("on point patched: mean 1 ns/read, within 0.5 ns/read"),
        "{stdout}"
    );
}

/// A mistake in a mean expectation is named at its line, column and field by `aba check`.
#[test]
fn a_mean_expectation_without_its_kernel_is_refused_at_its_place() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = fixture_with(
        tmp.path(),
        "[[expect]]\nworkload = \"sched_rt_period_us\"\nmean = 8700\ntolerance = 500\n",
    );
    let out = aba(
        tmp.path(),
        &["check", dir.join("recipe.toml").to_str().expect("utf-8")],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "an [[expect]] with `mean` names the `kernel` whose mean it expects, or its `point`"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("recipe.toml:65:12 (key `expect[3].workload`)"),
        "{stderr}"
    );
}
