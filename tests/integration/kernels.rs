//! Kernel bindings through the real binary (issue 15 item 5): a shared recipe's placeholder
//! release bound to this tester's kernel by `--kernel LABEL=RELEASE` or by the inventory's
//! `[targets.NAME.kernels]`, without editing the recipe: shown by `aba check`, refused for a
//! label the recipe lacks, proven by the boot proof on `local`, journaled, shown in the
//! report, and kept by `aba resume`.

use std::path::Path;

use serde_json::Value;

use crate::support::cli::{aba, campaign_dir, journal_events, text, write};

/// A shared recipe whose release is a placeholder this machine does not run; its workload
/// fails until `go` exists in `flag_dir`.
fn shared(dir: &Path) -> String {
    let flag = dir.join("go");
    let recipe = write(
        dir,
        "shared.toml",
        &format!(
            "version = 1\nname = \"shared\"\ndescription = \"a recipe from someone else\"\n\
             sequence = [\"orig\", \"orig\"]\nwarmup = 0\nsamples = 2\npoint_retries = 0\n\n\
             [kernels.orig]\nrelease = \"7.2.0-orig\"\n\n[[workload]]\nname = \"w\"\n\
             run = \"test -e {} && echo 5\"\nretries = 0\nestimate = \"10ms\"\n\
             metric = {{ number = true, unit = \"n\", better = \"lower\" }}\n",
            flag.display()
        ),
    );
    recipe.to_str().expect("utf-8").to_owned()
}

/// A targets.toml in `dir` whose kexec target `box` binds `kernels` (from line 6 on).
fn inventory(dir: &Path, kernels: &str) {
    write(
        dir,
        "targets.toml",
        &format!(
            "[targets.box]\nhost = \"box\"\nhost_key = \"SHA256:abc\"\nswitch = \"kexec\"\n\
             [targets.box.kernels]\n{kernels}"
        ),
    );
}

fn running_release() -> String {
    let out = std::process::Command::new("uname")
        .arg("-r")
        .output()
        .expect("uname");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn check_shows_a_binding_and_refuses_a_label_the_recipe_lacks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = shared(tmp.path());
    inventory(tmp.path(), "orig = { release = \"6.18.0-orig+\" }\n");
    let out = aba(tmp.path(), &["check", &recipe, "--target", "box"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains("kernel   orig = 6.18.0-orig+  (bound by the inventory (targets.toml:6:1))"),
        "{said}"
    );
    assert!(
        said.contains("/boot/vmlinuz-6.18.0-orig+ + /boot/initrd.img-6.18.0-orig+"),
        "{said}"
    );

    // The command line wins over the inventory, and --json says where each field came from.
    let out = aba(
        tmp.path(),
        &[
            "check",
            &recipe,
            "--target",
            "box",
            "--kernel",
            "orig=6.19.0",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["format"], 1);
    let k = &doc["kernels"][0];
    assert_eq!(k["label"], "orig", "{doc:#}");
    assert_eq!(k["release"], "6.19.0");
    assert_eq!(k["release_from"]["from"], "command_line");
    assert_eq!(k["release_from"]["option"], "--kernel orig=6.19.0");
    assert_eq!(k["image"], "/boot/vmlinuz-6.19.0");
    assert_eq!(doc["points"][0]["release"], "6.19.0", "{doc:#}");

    let out = aba(
        tmp.path(),
        &["check", &recipe, "--kernel", "patched=6.19.0"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kernel patched=6.19.0: the recipe has no kernel `patched` to bind"),
        "{err}"
    );

    inventory(
        tmp.path(),
        "orig = { release = \"6.18.0\" }\n  patched = { release = \"6.19.0\" }\n",
    );
    let out = aba(tmp.path(), &["check", &recipe, "--target", "box"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("targets.toml:7:3: the recipe has no kernel `patched` to bind"),
        "{err}"
    );

    let out = aba(
        tmp.path(),
        &["check", &recipe, "--kernel", "orig=6.1;reboot"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("invalid kernel release"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_bound_release_is_proven_journaled_reported_and_kept_by_resume() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = shared(tmp.path());
    let release = running_release();
    let option = format!("orig={release}");

    // Unbound, the placeholder is not what runs here: the boot proof fails.
    let out = aba(tmp.path(), &["run", &recipe, "--results", "unbound"]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));

    // Bound, the proof passes; the workload fails until `go` exists: the campaign stops.
    let out = aba(
        tmp.path(),
        &["run", &recipe, "--kernel", &option, "--results", "results"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let recorded = journal_events(&dir).into_iter().find_map(|e| match e {
        aba::results::journal::Event::Kernels { kernels } => Some(kernels),
        _ => None,
    });
    let recorded = recorded.expect("a kernels record");
    assert_eq!(recorded[0].release.as_str(), release);

    // Resume boots what the journal recorded, without the option.
    write(tmp.path(), "go", "");
    let out = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "kernel orig: {release} (recorded when the campaign started: bound by the command line (--kernel {option}))"
        )),
        "{err}"
    );

    let report = crate::support::report_oracle::checked_report(&dir);
    assert!(
        report.contains(&format!("bound by the command line (--kernel {option})")),
        "{report}"
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README.md");
    assert!(readme.contains("bound by the command line"), "{readme}");
    let out = aba(
        tmp.path(),
        &["report", dir.to_str().expect("utf-8"), "--json"],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["kernels"][0]["release"], release.as_str(), "{doc:#}");
    assert_eq!(
        doc["kernels"][0]["bound"]["release_from"]["from"],
        "command_line"
    );
}
