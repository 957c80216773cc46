//! `aba preflight` against a real sshd on 127.0.0.1: a recipe the target can run passes, and
//! one it cannot run fails with a checklist that says what to fix, without running anything
//! the campaign would.

use crate::support::{
    cli::{aba, text, write},
    sshd::Sshd,
};

#[test]
fn preflight_passes_a_runnable_recipe_and_lists_what_blocks_another() {
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = sshd.inventory(tmp.path(), "");
    let quickstart =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/quickstart.toml");
    let out = aba(
        tmp.path(),
        &[
            "preflight",
            quickstart.to_str().expect("utf-8"),
            "--targets",
            targets.to_str().expect("utf-8"),
            "--target",
            "box",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ok    connect"), "{stdout}");
    assert!(stdout.contains("ok    file preadloop.c"), "{stdout}");
    assert!(stdout.contains("ok    setup 2"), "{stdout}");
    assert!(stdout.contains("preflight passed"), "{stdout}");
    assert!(
        !tmp.path().join("results").exists(),
        "preflight must not start a campaign"
    );

    let broken = write(
        tmp.path(),
        "broken.toml",
        r#"
version = 1
name = "broken"
description = "things this target lacks"
sequence = ["this"]
[kernels.this]
release = "running"
[sysctl]
"kernel.no_such_sysctl_aba" = 1
[setup]
run = ["no-such-compiler-aba -o x x.c"]
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, better = "lower" }
"#,
    );
    let out = aba(
        tmp.path(),
        &[
            "preflight",
            broken.to_str().expect("utf-8"),
            "--targets",
            targets.to_str().expect("utf-8"),
            "--target",
            "box",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("FAIL  sysctl kernel.no_such_sysctl_aba"),
        "{stdout}"
    );
    assert!(stdout.contains("FAIL  setup 1"), "{stdout}");
    assert!(stdout.contains("fix: "), "{stdout}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("preflight found 2 problem(s)"),
        "{}",
        text(&out)
    );
}
