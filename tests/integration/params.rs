//! Recipe parameters through the real binary (issue 20 item 4): a shared recipe's machine
//! fact (`[params]`, `{params.NAME}`) bound by the inventory's `[targets.NAME.params]` or by
//! `--param NAME=VALUE`, without editing the recipe: shown by `aba check`, refused for a
//! name the recipe lacks, substituted into the workload that runs, journaled, shown in the
//! report, and kept by `aba resume`.

use std::path::Path;

use serde_json::Value;

use crate::support::cli::{aba, campaign_dir, journal_events, text, write};

/// A shared recipe whose workload prints its `cpu` parameter (and fails until `go` exists in
/// `dir`), pinned to it, with the expectation's tolerance a parameter as well.
fn shared(dir: &Path) -> String {
    let flag = dir.join("go");
    let recipe = write(
        dir,
        "shared.toml",
        &format!(
            "version = 1\nname = \"facts\"\ndescription = \"a recipe from someone else\"\n\
             sequence = [\"a\", \"b\"]\nwarmup = 0\nsamples = 2\npoint_retries = 0\n\n\
             [kernels.a]\nrelease = \"running\"\n[kernels.b]\nrelease = \"running\"\n\n\
             [params]\ncpu = {{ default = \"0\", means = \"the CPU the test pins to\" }}\n\
             slack = {{ default = \"50\", means = \"how far this machine may be from the mail\" }}\n\n\
             [[workload]]\nname = \"w\"\n\
             run = \"test -e {} && echo {{params.cpu}}\"\ncpu = \"{{params.cpu}}\"\n\
             retries = 0\nestimate = \"10ms\"\n\
             metric = {{ number = true, unit = \"n\", better = \"lower\" }}\n\n\
             [[expect]]\nworkload = \"w\"\nchange_pct = 0.0\ntolerance = \"{{params.slack}}\"\n",
            flag.display()
        ),
    );
    recipe.to_str().expect("utf-8").to_owned()
}

/// A targets.toml in `dir` whose target `box` binds `params` (from line 6 on).
fn inventory(dir: &Path, params: &str) {
    write(
        dir,
        "targets.toml",
        &format!(
            "[targets.box]\nhost = \"box\"\nhost_key = \"SHA256:abc\"\nswitch = \"none\"\n\
             [targets.box.params]\n{params}"
        ),
    );
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn check_shows_the_values_and_refuses_a_name_the_recipe_lacks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = shared(tmp.path());
    let out = aba(tmp.path(), &["check", &recipe]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains(
            "param    cpu = 0\n         the recipe's default\n         means: the CPU the test pins to\n"
        ),
        "{said}"
    );

    inventory(tmp.path(), "cpu = \"1\"\n");
    let out = aba(tmp.path(), &["check", &recipe, "--target", "box"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains(
            "param    cpu = 1\n         bound by the inventory (targets.toml:6:1); the recipe's default is 0\n"
        ),
        "{said}"
    );
    assert!(
        said.contains("param    slack = 50\n         the recipe's default\n"),
        "{said}"
    );

    // The command line wins over the inventory; --json says where the value came from.
    let out = aba(
        tmp.path(),
        &[
            "check", &recipe, "--target", "box", "--param", "cpu=2", "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let p = &doc["params"][0];
    assert_eq!(p["name"], "cpu", "{doc:#}");
    assert_eq!(p["value"], "2");
    assert_eq!(p["default"], "0");
    assert_eq!(p["from"]["from"], "command_line");
    assert_eq!(p["from"]["option"], "--param cpu=2");
    assert_eq!(doc["recipe"]["sha256"], {
        let plain = aba(tmp.path(), &["check", &recipe, "--json"]);
        let plain: Value = serde_json::from_slice(&plain.stdout).expect("JSON");
        plain["recipe"]["sha256"].clone()
    });

    // A name the recipe lacks, from the inventory (placed) or the command line.
    inventory(tmp.path(), "cpu = \"1\"\n  cpus = \"2\"\n");
    let out = aba(tmp.path(), &["check", &recipe, "--target", "box"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("targets.toml:7:3: the recipe has no parameter `cpus` to bind (its parameters: cpu, slack)"),
        "{err}"
    );
    assert!(err.contains("did you mean `cpu`?"), "{err}");
    let out = aba(tmp.path(), &["check", &recipe, "--param", "slak=1"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("--param slak=1: the recipe has no parameter `slak`"),
        "{}",
        text(&out)
    );

    // A value is checked for the place it is used, at the recipe's line and column.
    let out = aba(tmp.path(), &["check", &recipe, "--param", "cpu=x"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("invalid CPU list `x`"), "{err}");
    assert!(err.contains("shared.toml:21:7"), "{err}");
    assert!(
        err.contains("`{params.cpu}` is `x`, from the command line (--param cpu=x)"),
        "{err}"
    );
    // A value a shell would read specially is refused before anything else.
    let out = aba(tmp.path(), &["check", &recipe, "--param", "cpu=0;reboot"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("invalid parameter value"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_bound_value_reaches_the_workload_is_journaled_reported_and_kept_by_resume() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = shared(tmp.path());

    // The workload fails until `go` exists: the campaign stops after the first point.
    let out = aba(
        tmp.path(),
        &["run", &recipe, "--param", "cpu=1", "--results", "results"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains("parameter cpu = 1 (bound by the command line (--param cpu=1)"),
        "{}",
        text(&out)
    );
    let dir = campaign_dir(&tmp.path().join("results"));
    let recorded = journal_events(&dir).into_iter().find_map(|e| match e {
        aba::results::journal::Event::Params { params } => Some(params),
        _ => None,
    });
    let recorded = recorded.expect("a params record");
    assert_eq!(recorded[0].name.as_str(), "cpu");
    assert_eq!(recorded[0].value.as_str(), "1");
    assert_eq!(recorded[1].value.as_str(), "50");

    // Resume uses what the journal recorded, without the option.
    write(tmp.path(), "go", "");
    let out = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stderr(&out).contains(
            "parameter cpu = 1 (recorded when the campaign started: bound by the command line (--param cpu=1))"
        ),
        "{}",
        text(&out)
    );

    // The workload printed the bound value: every sample is 1, not the default 0.
    let samples = std::fs::read_to_string(dir.join("samples.csv")).expect("samples.csv");
    let mut lines = samples.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let column = header
        .iter()
        .position(|c| *c == "value")
        .expect("a value column");
    // The failed first attempt (before `go`) has no value.
    let values: Vec<&str> = lines
        .filter_map(|l| l.split(',').nth(column))
        .filter(|v| !v.is_empty())
        .collect();
    assert!(!values.is_empty(), "{samples}");
    assert!(values.iter().all(|v| v.trim() == "1"), "{samples}");

    let flat = |name: &str| {
        let t = std::fs::read_to_string(dir.join(name)).expect("report file");
        t.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let report = flat("report.txt");
    assert!(
        report.contains(
            "Machine facts (the recipe's [params]): cpu = 1 (bound by the command line (--param cpu=1); the recipe's default is 0); slack = 50 (the recipe's default)."
        ),
        "{report}"
    );
    assert!(flat("README.md").contains("cpu = 1 (bound by the command line"));
    let out = aba(
        tmp.path(),
        &["report", dir.to_str().expect("utf-8"), "--json"],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        doc["campaign"]["params"][0],
        "cpu = 1 (bound by the command line (--param cpu=1); the recipe's default is 0)",
        "{doc:#}"
    );
}
