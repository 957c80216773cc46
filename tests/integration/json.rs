//! `--json` of `aba check`, `status`, `preflight` and `report` through the real binary, on
//! real campaigns of the built-in `local` target: each document parses, says its format and
//! kind, and its fields are the values the text says. Also the consistency of issue 15 item
//! 10: check's boot count is the report's, preflight on `local` claims no host key, and the
//! `Reproduce:` command of report.txt works from where the user stands.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli::{aba, campaign_dir, reproduce_command, text, write};

fn quickstart() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("recipes/quickstart.toml")
}

/// `aba ARGS… --json` in `cwd`: exit code and the parsed document, after checking its
/// format and kind.
fn json(cwd: &Path, args: &[&str], kind: &str) -> (Option<i32>, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = aba(cwd, &all);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", text(&out)));
    assert_eq!(doc["format"], 1, "{doc:#}");
    assert_eq!(doc["kind"], kind, "{doc:#}");
    (out.status.code(), doc)
}

/// Text with its line breaks and indentation folded to single spaces.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn check_status_and_report_of_the_quickstart_agree_with_the_plan_and_the_text() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = quickstart();
    let recipe = recipe.to_str().expect("utf-8");

    let (code, plan) = json(tmp.path(), &["check", recipe], "check");
    assert_eq!(code, Some(0));
    assert_eq!(plan["points"].as_array().expect("points").len(), 3);
    assert_eq!(plan["points"][0]["label"], "this-a");
    assert_eq!(plan["cases"], 2);
    assert_eq!(plan["runs"], 42);
    assert_eq!(plan["boots"], 0, "local switches no kernel");
    assert_eq!(plan["target"]["name"], "local");
    assert_eq!(plan["target"]["switch"], "none");
    assert!(plan["eta_s"].as_f64().expect("eta") > 0.0);
    assert!(
        plan["warnings"][0]
            .as_str()
            .expect("warning")
            .contains("does not switch kernels"),
        "{plan:#}"
    );
    assert_eq!(plan["detect"]["status"], "no_profile", "{plan:#}");
    let said = aba(tmp.path(), &["check", recipe]);
    assert!(
        String::from_utf8_lossy(&said.stdout).contains("points   3 (0 boots)"),
        "{}",
        text(&said)
    );

    let run = aba(tmp.path(), &["run", recipe, "--results", "results"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let dir = campaign_dir(&tmp.path().join("results"));
    let name = dir.file_name().expect("name").to_str().expect("utf-8");
    let typed = format!("results/{name}");

    let (code, status) = json(tmp.path(), &["status", &typed], "status");
    assert_eq!(code, Some(0));
    assert_eq!(status["state"], "finished", "{status:#}");
    assert_eq!(status["done"], 3);
    assert_eq!(status["total"], 3);
    assert_eq!(status["current"], Value::Null);
    assert_eq!(status["eta_s"], 0.0);
    assert_eq!(status["campaign"]["target"], "local");
    for point in status["points"].as_array().expect("points") {
        assert_eq!(point["state"], "done", "{status:#}");
        // 5 samples of each of the two workloads, one metric each.
        assert_eq!(point["samples"], 10, "{status:#}");
    }

    let (code, report) = json(tmp.path(), &["report", &typed], "report");
    assert_eq!(code, Some(0));
    assert_eq!(report["campaign"]["finished"], true, "{report:#}");
    assert_eq!(report["campaign"]["target"], "local");
    let labels: Vec<&str> = report["series"]
        .as_array()
        .expect("series")
        .iter()
        .map(|s| s["label"].as_str().expect("label"))
        .collect();
    assert_eq!(labels, ["sysctl_pread", "pipe_pingpong"]);
    let means = &report["series"][0]["points"];
    assert_eq!(means.as_array().expect("points").len(), 3);
    assert_eq!(means[0]["all"]["n"], 5);
    // Each series names the limits that judged it and the table that set them.
    let cv = &report["series"][0]["limits"]["max_cv_pct"];
    assert_eq!(cv["scope"], "analysis");
    assert_eq!(cv["value"], report["params"]["max_cv_pct"]);
    assert_eq!(report["checks"], serde_json::json!([]));
    assert_eq!(report["reproduction"], Value::Null);

    // The report counts what check counted: three points, in one boot, no boots.
    let txt = crate::support::report_oracle::checked_report(&dir);
    assert!(
        txt.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["kernel", "release", "points"]),
        "{txt}"
    );
    assert!(!flat(&txt).contains(" boots "), "{txt}");

    // The Reproduce command works from here, as printed.
    let said = flat(&txt);
    let command = reproduce_command(&said);
    assert_eq!(command, format!("aba report {typed}"));
    let words: Vec<&str> = command.split(' ').skip(1).collect();
    let again = aba(tmp.path(), &words);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

#[test]
fn preflight_on_local_lists_its_checks_and_claims_no_host_key() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = quickstart();
    let (code, doc) = json(
        tmp.path(),
        &["preflight", recipe.to_str().expect("utf-8")],
        "preflight",
    );
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["passed"], true);
    assert_eq!(doc["failed"], 0);
    assert_eq!(doc["target"], "local");
    let checks = doc["checks"].as_array().expect("checks");
    let what: Vec<&str> = checks
        .iter()
        .map(|c| c["what"].as_str().expect("what"))
        .collect();
    for expected in [
        "connect",
        "boot",
        "load",
        "switch",
        "workdir",
        "file preadloop.c",
        "setup 1",
    ] {
        assert!(what.contains(&expected), "{expected} missing: {what:?}");
    }
    // The load check warns when this (shared) machine is busier than its CPUs: a fact of the
    // moment, not of the recipe.
    for c in checks.iter().filter(|c| c["what"] != "load") {
        assert_eq!(c["status"], "ok", "{c:#}");
        assert_eq!(c["fix"], Value::Null, "{c:#}");
        assert!(
            !c["detail"]
                .as_str()
                .expect("detail")
                .contains("host key verified"),
            "{c:#}"
        );
    }
    // The text says the same.
    let out = aba(tmp.path(), &["preflight", recipe.to_str().expect("utf-8")]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("no login and no host key") && !said.contains("host key verified"),
        "{said}"
    );
}

#[test]
fn a_failing_preflight_prints_its_document_and_exits_1() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(
        tmp.path(),
        "r.toml",
        "version = 1\nname = \"nosuch\"\ndescription = \"a setup that fails\"\n\
         sequence = [\"this\"]\nsamples = 3\n\n[setup]\nrun = [\"exit 7\"]\n\n\
         [kernels.this]\nrelease = \"running\"\n\n[[workload]]\nname = \"w\"\nrun = \"echo 1\"\n\
         metric = { number = true, unit = \"n\", better = \"lower\" }\n",
    );
    let (code, doc) = json(
        tmp.path(),
        &["preflight", recipe.to_str().expect("utf-8")],
        "preflight",
    );
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(doc["passed"], false);
    let failed: Vec<&Value> = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert_eq!(doc["failed"], failed.len());
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|c| c["fix"].is_string()), "{doc:#}");
}

#[test]
fn status_of_a_stopped_campaign_says_stopped_and_which_point_failed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = write(
        tmp.path(),
        "r.toml",
        "version = 1\nname = \"failing\"\ndescription = \"a workload that fails\"\n\
         sequence = [\"this\", \"this\"]\nwarmup = 0\nsamples = 2\npoint_retries = 0\n\n\
         [kernels.this]\nrelease = \"running\"\n\n[[workload]]\nname = \"bad\"\n\
         run = \"exit 3\"\nretries = 0\nmetric = { number = true, unit = \"n\", better = \"lower\" }\n",
    );
    let run = aba(
        tmp.path(),
        &[
            "run",
            recipe.to_str().expect("utf-8"),
            "--results",
            "results",
        ],
    );
    assert_eq!(run.status.code(), Some(3), "{}", text(&run));
    let dir = campaign_dir(&tmp.path().join("results"));
    let (code, doc) = json(
        tmp.path(),
        &["status", dir.to_str().expect("utf-8")],
        "status",
    );
    assert_eq!(code, Some(0));
    assert_eq!(doc["state"], "stopped", "{doc:#}");
    assert!(doc["stopped_reason"].is_string(), "{doc:#}");
    assert_eq!(doc["done"], 0);
    assert_eq!(doc["total"], 2);
    assert_eq!(doc["points"][0]["state"], "failed", "{doc:#}");
    assert_eq!(doc["points"][0]["failures"][0]["attempt"], 1, "{doc:#}");
    assert_eq!(doc["points"][1]["state"], "pending", "{doc:#}");
    assert_eq!(doc["current"], Value::Null);
    assert!(doc["eta_s"].as_f64().expect("eta") >= 0.0, "{doc:#}");
}
