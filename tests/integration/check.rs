//! `aba check` through the real binary, for a recipe received from someone else (issue 15
//! items 6 and 9): the host files it copies, the commands it runs after substitution and the
//! settings it changes, in the text (grouped, at most 100 columns) and in `--json`; the ETA
//! counting setup and teardown; a plan of more than 10^5 runs warned about, and refused by
//! `aba run` without `--yes`.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::support::cli::{aba, text, write};

const SHARED: &str = r#"version = 1
name = "shared"
description = "a recipe from someone else"
sequence = ["a", "b", "a", "b", "a"]
warmup = 1
samples = 3

[kernels.a]
release = "6.1.0-47-cloud-amd64"
[kernels.b]
release = "6.1.0-50-cloud-amd64"
cmdline = "aba.b=1"

[boot]
cmdline = "quiet nohz_full=2-3"

[sysctl]
"kernel.sched_rt_runtime_us" = -1

[tuning]
governor = "performance"
turbo = false
optional = ["turbo"]

[files]
"bench.c" = "shared/bench.c"

[setup]
run = ["cc -O2 -o bench bench.c"]
timeout = "2m"

[teardown]
run = ["rm -f bench"]
timeout = "10s"

[[workload]]
name = "pipe"
run = "./bench --level {level}"
env = { LEVEL = "{level} deep" }
cpu = "2"
matrix = { level = ["root", "1"] }
estimate = "2s"
metric = { number = true, better = "lower" }
"#;

const BENCH: &str = "int main(void) { return 0; }\n";

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A target that switches kernels by kexec, for the recipes here that boot two kernels:
/// without `--target`, `aba check` plans for `local` as `aba run` does, and refuses them.
const LAB_TARGETS: &str = r#"[targets.lab]
host = "lab.example"
host_key = "SHA256:bGFiLWhvc3Qta2V5LWZvci10ZXN0cw"
switch = "kexec"
"#;

/// `aba check ARGS… --target lab` in `dir`, with [`LAB_TARGETS`] as its `targets.toml`.
fn check_on_lab(dir: &Path, args: &[&str]) -> std::process::Output {
    write(dir, "targets.toml", LAB_TARGETS);
    let mut all = vec!["check"];
    all.extend(args);
    all.extend(["--target", "lab"]);
    aba(dir, &all)
}

/// The shared recipe in `dir`, with its program.
fn shared(dir: &Path) -> std::path::PathBuf {
    write(dir, "recipes/shared/bench.c", BENCH);
    write(dir, "recipes/shared.toml", SHARED)
}

#[test]
fn a_shared_recipe_lists_what_it_copies_runs_and_changes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = shared(tmp.path());
    let out = check_on_lab(tmp.path(), &["recipes/shared.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    for line in said.lines() {
        assert!(line.chars().count() <= 100, "over 100 columns: {line}");
    }
    let host = std::fs::canonicalize(recipe.parent().expect("dir").join("shared/bench.c"))
        .expect("canonical");
    let sha = hex::encode(Sha256::digest(BENCH.as_bytes()));
    let listed: Vec<&str> = said.lines().collect();
    // Each group, in the order a point meets it, with what belongs to it.
    let copies = listed
        .iter()
        .position(|l| l.starts_with("Copies to the target"))
        .expect("copies");
    let runs = listed
        .iter()
        .position(|l| l.starts_with("Runs on the target"))
        .expect("runs");
    let changes = listed
        .iter()
        .position(|l| l.starts_with("Changes on the target"))
        .expect("changes");
    assert!(copies < runs && runs < changes, "{said}");
    assert_eq!(
        listed[copies + 1..copies + 5],
        [
            "    bench.c".to_owned(),
            format!("        from    {}", host.display()),
            format!("        size    {} bytes", BENCH.len()),
            format!("        sha256  {sha}"),
        ]
    );
    assert_eq!(
        listed[runs + 1..changes - 1],
        [
            "    setup: each command within 2m 00s, counted as ~12s in the ETA (a tenth of \
             that: no estimate)",
            "      cc -O2 -o bench bench.c",
            "    2 cases at every point (warm-ups+samples, then the command):",
            "      pipe[level=root]  1+3  LEVEL='root deep' exec taskset -c 2 sh -c './bench --level root'",
            "      pipe[level=1]     1+3  LEVEL='1 deep' exec taskset -c 2 sh -c './bench --level 1'",
            "    teardown: each command within 10s, counted as ~1s in the ETA (a tenth of \
             that: no estimate)",
            "      rm -f bench",
        ]
    );
    assert_eq!(
        listed[changes + 1..changes + 6],
        [
            "    cmdline  quiet nohz_full=2-3 (every boot)",
            "    cmdline  aba.b=1 (kernel b only)",
            "    sysctl   kernel.sched_rt_runtime_us = -1",
            "    tuning   governor = performance",
            "    tuning   turbo = off (optional)",
        ]
    );
    // The ETA counts setup and teardown at every point: 5 × (12 s + 1 s) on top of the
    // boots (kexec's 30 s) and the workloads (2 cases × 4 runs × 2 s).
    assert!(
        said.contains(
            "ETA      ~4m 55s (5 boots x ~30s + setup/teardown ~13s per point + workload \
             estimates)"
        ),
        "{said}"
    );

    let out = check_on_lab(tmp.path(), &["recipes/shared.toml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["format"], 1);
    assert_eq!(doc["kind"], "check");
    assert_eq!(doc["eta_s"], 295.0);
    assert_eq!(doc["steps_estimate_s"], 13.0);
    let copy = &doc["copies"][0];
    assert_eq!(copy["to"], "bench.c");
    assert_eq!(copy["from"], host.to_str().expect("utf-8"));
    assert_eq!(copy["bytes"], BENCH.len());
    assert_eq!(copy["sha256"], sha.as_str());
    assert_eq!(copy["unreadable"], Value::Null);
    let commands = &doc["commands"];
    assert_eq!(commands["setup"]["run"][0], "cc -O2 -o bench bench.c");
    assert_eq!(commands["setup"]["timeout_s"], 120.0);
    assert_eq!(commands["setup"]["estimate_s"], 12.0);
    assert_eq!(commands["teardown"]["run"][0], "rm -f bench");
    assert_eq!(commands["cases_total"], 2);
    let case = &commands["cases"][1];
    assert_eq!(case["name"], "pipe[level=1]");
    assert_eq!(case["run"], "./bench --level 1");
    assert_eq!(case["env"][0][0], "LEVEL");
    assert_eq!(case["env"][0][1], "1 deep");
    assert_eq!(case["cpu"], "2");
    assert_eq!(
        (case["warmup"].clone(), case["samples"].clone()),
        (1.into(), 3.into())
    );
    let changes = &doc["changes"];
    assert_eq!(changes["cmdline"][1], "nohz_full=2-3");
    assert_eq!(changes["kernel_cmdline"][0]["kernel"], "b");
    assert_eq!(changes["kernel_cmdline"][0]["cmdline"][0], "aba.b=1");
    assert_eq!(changes["sysctls"][0]["name"], "kernel.sched_rt_runtime_us");
    assert_eq!(changes["sysctls"][0]["value"], "-1");
    assert_eq!(changes["tuning"][1]["knob"], "turbo");
    assert_eq!(changes["tuning"][1]["value"], "off");
    assert_eq!(changes["tuning"][1]["required"], false);
    assert_eq!(doc["needs_yes"], false);
}

#[test]
fn a_plan_of_more_than_a_hundred_thousand_runs_warns_and_needs_yes_to_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let values: Vec<String> = (0..1000).map(|i| format!("\"{i}\"")).collect();
    let recipe = format!(
        "version = 1\nname = \"absurd\"\ndescription = \"d\"\nsequence = [\"a\"]\n\
         warmup = 0\nsamples = 101\n[kernels.a]\nrelease = \"running\"\n[[workload]]\n\
         name = \"w\"\nrun = \"echo {{v}}\"\nestimate = \"0s\"\nmatrix = {{ v = [{}] }}\n\
         metric = {{ number = true, better = \"lower\" }}\n",
        values.join(", ")
    );
    write(tmp.path(), "absurd.toml", &recipe);
    let out = aba(tmp.path(), &["check", "absurd.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "warning: the plan makes 101000 workload runs, more than 100000: `aba run` starts \
             it only with --yes"
        ),
        "{}",
        text(&out)
    );
    let out = aba(tmp.path(), &["check", "absurd.toml", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["runs"], 101_000);
    assert_eq!(doc["needs_yes"], true);
    assert!(doc["eta_s"].as_f64().expect("eta") < 86_400.0, "{doc:#}");
    let out = aba(tmp.path(), &["run", "absurd.toml", "--results", "results"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the plan makes 101000 workload runs, more than 100000"),
        "{err}"
    );
    assert!(err.contains("pass --yes"), "{err}");
    assert!(!tmp.path().join("results").exists(), "run started nothing");
}

/// An untimed correctness check (seed 001's mode switch) is listed as one, in the text and
/// in the JSON, so a reader does not mistake it for a measured case.
#[test]
fn a_correctness_check_is_listed_as_pass_fail_and_untimed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/001-sched-setparam-slice.toml");
    let recipe = recipe.to_str().expect("utf-8 path");
    let out = check_on_lab(tmp.path(), &[recipe]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    let line = said
        .lines()
        .find(|l| l.trim_start().starts_with("mode_switch "))
        .unwrap_or_else(|| panic!("no mode_switch line: {said}"));
    assert!(
        line.ends_with("./mode_switch  (check: pass/fail, untimed)"),
        "{line}"
    );
    assert!(
        said.lines()
            .filter(|l| l.trim_start().starts_with("default_slice "))
            .all(|l| !l.contains("(check:")),
        "{said}"
    );
    let out = check_on_lab(tmp.path(), &[recipe, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let checks: Vec<(&str, bool)> = json["commands"]["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().expect("name"),
                c["check"].as_bool().expect("check"),
            )
        })
        .collect();
    assert_eq!(
        checks,
        [
            ("default_slice", false),
            ("custom_slice", false),
            ("mode_switch", true),
            ("pi_boost", true)
        ]
    );
}

/// A recipe that extends itself: `aba check` shows the largest plan the budget allows and
/// the ETA of both plans, in the text and in the JSON.
#[test]
fn an_extended_recipe_shows_its_maximum_plan_and_both_etas() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "ext.toml",
        "version = 1\nname = \"ext\"\ndescription = \"d\"\nsequence = [\"a\", \"b\", \"a\"]\n\
         warmup = 0\nsamples = 3\n[kernels.a]\nrelease = \"6.1.0-47-cloud-amd64\"\n\
         [kernels.b]\nrelease = \"6.1.0-50-cloud-amd64\"\n\
         [analysis]\nextend = { until = \"decided\", max_points = 10 }\n[[workload]]\n\
         name = \"w\"\nrun = \"./bench\"\nestimate = \"10s\"\n\
         metric = { number = true, better = \"lower\" }\n",
    );
    let out = check_on_lab(tmp.path(), &["ext.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    // 10 leaves room for 3 units of b-a: 9 points at most, 4 looks.
    assert!(
        said.contains("ETA      ~3m 00s (3 boots x ~30s + workload estimates)"),
        "{said}"
    );
    assert!(
        said.contains(
            "extend   until decided: +b-a per look, up to 9 points (4 looks, 9 boots, 27 runs)"
        ),
        "{said}"
    );
    assert!(
        said.contains("ETA max  ~9m 00s if every look extends (~3m 00s as planned)"),
        "{said}"
    );
    let out = check_on_lab(tmp.path(), &["ext.toml", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["extend"]["points"], 9);
    assert_eq!(doc["extend"]["looks"], 4);
    assert_eq!(doc["extend"]["unit"], serde_json::json!(["b", "a"]));
    assert_eq!(doc["extend"]["eta_s"], 540);
    assert_eq!(doc["eta_s"], 180.0);
}

/// How the results will be judged (issue 35 item 7): each workload's metrics with unit,
/// direction and the limits a table of their own sets, each check with the kernels it must
/// pass and must fail on, each expectation; in the text and in `--json`. Recipe 002 has all
/// of them: limits set on a metric, a check that must fail on v2, expectations on params.
#[test]
fn the_plan_says_how_each_metric_check_and_expectation_is_judged() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/002-dl-server-nohz-full.toml");
    let recipe = recipe.to_str().expect("utf-8 path");
    let out = check_on_lab(tmp.path(), &[recipe]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    let lines: Vec<&str> = said.lines().collect();
    let judged = lines
        .iter()
        .position(|l| l.starts_with("Judged against kernel vanilla"))
        .unwrap_or_else(|| panic!("no Judged section: {said}"));
    let changes = lines
        .iter()
        .position(|l| l.starts_with("Changes on the target"))
        .expect("changes");
    assert!(changes < judged, "after what the recipe changes: {said}");
    let section: Vec<&str> = lines[judged..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    for expected in [
        "    limits   gate 10%, max CV 10%, drift gate 10% (the recipe's own, preregistered), \
         drift margin 2 (a SIGNAL must reach 2x the largest spread of a compared kernel's boots)",
        "    dlserver (measured)",
        "      heartbeat_max_gap                ms, lower is better",
        "      phase_a_tick_stop_success        events/phase, lower is better",
        "    tick_check (check: pass/fail, untimed)",
        "      must pass on vanilla, variant",
        "      must FAIL on v2 (expect_fail: exit 0 and a regex not met)",
        "      must match      (?m)^check tick_rate: PASS",
        "      must pass on vanilla, v2, variant",
        "    expect   dlserver/tick_rate on v2: +1417.6% against vanilla, within 250 pp",
        "    expect   dlserver/tick_rate on variant: -18% against vanilla, within 15 pp",
    ] {
        assert!(
            fit(&section.join(" ")).contains(&fit(expected)),
            "missing `{expected}` in:\n{}",
            section.join("\n")
        );
    }
    let joined = fit(&section.join(" "));
    assert!(
        joined.contains(
            "tick_rate irq/s, lower is better; max CV 50%, drift gate 50% (set on the metric)"
        ),
        "{joined}"
    );
    assert!(
        joined.contains("cfs_bandwidth_deviation % of reserved, lower is better; gate 50%, max CV 50%, drift gate 50% (set on the metric)"),
        "{joined}"
    );
    for line in &section {
        assert!(line.chars().count() <= 100, "over 100 columns: {line}");
    }

    let out = check_on_lab(tmp.path(), &[recipe, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let judged = &doc["judged"];
    assert_eq!(judged["baseline"], "vanilla");
    assert_eq!(judged["limits"]["gate_pct"], 10.0);
    assert_eq!(judged["drift_margin"], 2.0);
    let dlserver = &judged["workloads"][0];
    assert_eq!(dlserver["role"], "measured");
    let tick_rate = &dlserver["metrics"][1];
    assert_eq!(tick_rate["name"], "tick_rate");
    assert_eq!(tick_rate["better"], "lower");
    assert_eq!(tick_rate["limits"]["max_cv_pct"]["value"], 50.0);
    assert_eq!(tick_rate["limits"]["max_cv_pct"]["scope"], "metric");
    assert_eq!(tick_rate["limits"]["gate_pct"]["scope"], "analysis");
    let tick_check = &judged["workloads"][1];
    assert_eq!(tick_check["name"], "tick_check");
    assert_eq!(
        tick_check["check"]["must_fail_on"],
        serde_json::json!(["v2"])
    );
    assert_eq!(
        tick_check["check"]["must_pass_on"],
        serde_json::json!(["vanilla", "variant"])
    );
    assert_eq!(judged["expect"][0]["kernel"], "v2");
    assert_eq!(judged["expect"][0]["change_pct"], 1417.6);
    assert_eq!(judged["expect"][0]["tolerance"], 250.0);
}

/// `line` with its wrapping undone: runs of spaces as one.
fn fit(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `aba check --json` names the files a kernel boots only when one is booted (issue 29 item
/// 8): the quickstart's `running` kernel on `local` has no image or initrd, where a
/// made-up `/boot/vmlinuz-running` stood; a kernel booted by kexec on a target has its own.
#[test]
fn check_json_names_no_image_for_a_kernel_that_boots_none() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/quickstart.toml");
    let out = aba(
        tmp.path(),
        &["check", quickstart.to_str().expect("utf-8"), "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["target"]["name"], "local", "{doc:#}");
    let kernels = doc["kernels"].as_array().expect("kernels");
    assert!(!kernels.is_empty(), "{doc:#}");
    for kernel in kernels {
        for field in ["image", "image_from", "initrd", "initrd_from"] {
            assert_eq!(kernel[field], Value::Null, "{field}: {kernel:#}");
        }
        assert_eq!(kernel["release"], "running", "{kernel:#}");
    }
    shared(tmp.path());
    let out = check_on_lab(tmp.path(), &["recipes/shared.toml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        doc["kernels"][0]["image"], "/boot/vmlinuz-6.1.0-47-cloud-amd64",
        "{doc:#}"
    );
}

/// A power target without `set_next` can only cut power: the machine boots its default kernel.
/// A recipe of two releases, or of a kernel with parameters of its own, is refused by `check`
/// and `preflight` before anything runs, naming what the inventory must add (issue 37,
/// item 4); on main both passed and the run cut power, then failed at the first proof.
#[test]
fn a_power_target_that_cannot_choose_the_kernel_is_refused_before_any_switch() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let power = |set_next: &str| {
        format!(
            "[targets.pdu]\nhost = \"127.0.0.1\"\nport = 9\nhost_key = \"SHA256:x\"\nswitch = \"power\"\n\
             [targets.pdu.power]\n{set_next}cycle = \"touch {}\"\n",
            tmp.path().join("cycled").display()
        )
    };
    let targets = write(tmp.path(), "targets.toml", &power(""));
    let recipe = |kernels: &str| {
        format!(
            "version = 1\nname = \"pw\"\ndescription = \"power\"\nsequence = [\"a\", \"b\", \"a\"]\n\
             warmup = 0\nsamples = 1\n{kernels}[[workload]]\nname = \"w\"\nrun = \"echo 1\"\n\
             metric = {{ number = true, better = \"lower\" }}\n"
        )
    };
    let two = write(
        tmp.path(),
        "two.toml",
        &recipe("[kernels.a]\nrelease = \"6.1.0\"\n[kernels.b]\nrelease = \"6.2.0\"\n"),
    );
    let params = write(
        tmp.path(),
        "params.toml",
        &recipe(
            "[kernels.a]\nrelease = \"6.1.0\"\n[kernels.b]\nrelease = \"6.1.0\"\ncmdline = \"mitigations=off\"\n",
        ),
    );
    let run = |command: &str, recipe: &Path| {
        aba(
            tmp.path(),
            &[
                command,
                recipe.to_str().expect("utf-8"),
                "--targets",
                targets.to_str().expect("utf-8"),
                "--target",
                "pdu",
            ],
        )
    };
    for (recipe, asked) in [
        (&two, "2 different releases (6.1.0, 6.2.0)"),
        (&params, "parameters of their own for kernel(s) `b`"),
    ] {
        for command in ["check", "preflight"] {
            let out = run(command, recipe);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{command}: {}", text(&out));
            assert!(
                stderr.contains("target `pdu` switches by power without `set_next`"),
                "{command}: {stderr}"
            );
            assert!(stderr.contains(asked), "{command}: {stderr}");
            assert!(
                stderr.contains("add to [targets.pdu.power] a `set_next` command"),
                "{command}: {stderr}"
            );
        }
    }
    assert!(!tmp.path().join("cycled").exists(), "nothing was switched");
    // With `set_next`, the same recipes plan.
    std::fs::write(&targets, power("set_next = \"echo {release}\"\n")).expect("write");
    for recipe in [&two, &params] {
        let out = run("check", recipe);
        assert!(out.status.success(), "{}", text(&out));
    }
}

/// Two kernels of one release, image, initrd and command line: the boot proof passes either
/// for the other, so `aba check` without `--builds` warns, in the text and in `--json`,
/// naming exactly those kernels (issue 35 item 6); a kernel with a command line of its own is
/// told apart at every boot and is not named, and a builds file that covers the two silences
/// the warning.
#[test]
fn kernels_only_a_builds_file_tells_apart_are_warned_about_without_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "alike.toml",
        "version = 1\nname = \"alike\"\ndescription = \"d\"\n\
         sequence = [\"a\", \"b\", \"c\", \"a\", \"b\", \"c\", \"a\"]\nsamples = 3\n\
         [kernels.a]\nrelease = \"6.1.0-aba\"\n[kernels.b]\nrelease = \"6.1.0-aba\"\n\
         [kernels.c]\nrelease = \"6.1.0-aba\"\ncmdline = \"aba.c=1\"\n\
         [[workload]]\nname = \"w\"\nrun = \"true\"\nestimate = \"1s\"\n\
         metric = { number = true, better = \"lower\" }\n",
    );
    let warning = "kernels `a`, `b` have the same release (6.1.0-aba), image, initrd and command \
                   line: without --builds nothing at a boot tells them apart";
    let out = check_on_lab(tmp.path(), &["alike.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("have the same release").count(),
        1,
        "{}",
        text(&out)
    );
    assert!(err.contains(&format!("warning: {warning}")), "{err}");
    let out = check_on_lab(tmp.path(), &["alike.toml", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let warned: Vec<&str> = doc["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("have the same release"))
        .collect();
    assert_eq!(warned.len(), 1, "{doc:#}");
    assert!(warned[0].starts_with(warning), "{doc:#}");

    write(tmp.path(), "image-a", "an image");
    write(tmp.path(), "image-b", "another image");
    write(
        tmp.path(),
        "builds.toml",
        "version = 1\n[kernels.a]\nimage = \"image-a\"\n[kernels.b]\nimage = \"image-b\"\n",
    );
    let out = check_on_lab(tmp.path(), &["alike.toml", "--builds", "builds.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("have the same release"),
        "{}",
        text(&out)
    );
}
