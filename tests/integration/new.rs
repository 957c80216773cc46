//! `aba new`: every template writes a recipe that passes `aba check` as written (the
//! switching ones also against the stub target they write), `quickstart` runs a real campaign
//! on `local` at once, and nothing a tester wrote is ever overwritten.

use std::{fs, path::Path};

use crate::support::cli::{aba, assert_verified, campaign_dir, text};

const SWITCHING: &[&str] = &["aba", "ababa", "palindrome", "matrix"];

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn new_in(dir: &Path, name: &str, template: &str) {
    let out = aba(dir, &["new", name, "--from", template]);
    assert!(
        out.status.success(),
        "aba new --from {template}: {}",
        text(&out)
    );
}

#[test]
fn every_switching_template_passes_check_on_its_target_and_is_refused_like_run_without_one() {
    for template in SWITCHING {
        let tmp = tempfile::tempdir().expect("tempdir");
        new_in(tmp.path(), "exp", template);
        let recipe = fs::read_to_string(tmp.path().join("exp.toml")).expect("recipe written");
        assert!(recipe.contains("name = \"exp\""), "{template}: {recipe}");
        assert!(recipe.contains("release = "), "{template}");
        assert!(tmp.path().join("targets.toml").is_file(), "{template}");
        let out = aba(tmp.path(), &["check", "exp.toml", "--target", "box"]);
        assert!(out.status.success(), "{template} on box: {}", text(&out));
        // They compare two kernels: the built-in target cannot run them, and without
        // --target check plans for it as run does (issue 29 item 8), refusing with run's words.
        let refusal = "error: cannot plan this recipe: target `local` cannot switch kernels";
        for args in [
            &["check", "exp.toml", "--target", "local"][..],
            &["check", "exp.toml"],
            &["check", "exp.toml", "--json"],
            &["run", "exp.toml", "--results", "results"],
        ] {
            let out = aba(tmp.path(), args);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{template} {args:?}: {}",
                text(&out)
            );
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(refusal),
                "{template} {args:?}: {}",
                text(&out)
            );
        }
        assert!(!tmp.path().join("results").exists(), "run started nothing");
    }
}

#[test]
fn the_sequences_are_the_ones_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (template, sequence) in [
        ("aba", r#"sequence = ["a", "b", "a"]"#),
        ("ababa", r#"sequence = ["a", "b", "a", "b", "a"]"#),
        ("palindrome", r#"sequence = ["a", "b", "b", "a"]"#),
    ] {
        new_in(tmp.path(), template, template);
        let recipe = fs::read_to_string(tmp.path().join(format!("{template}.toml"))).expect("read");
        assert!(recipe.contains(sequence), "{template}: {recipe}");
    }
    new_in(tmp.path(), "m", "matrix");
    let out = aba(tmp.path(), &["check", "m.toml", "--target", "box"]);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("5 cases"), "{}", text(&out));
}

#[test]
fn quickstart_runs_on_local_as_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = aba(tmp.path(), &["new", "first"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("next: aba run first.toml"),
        "{}",
        text(&out)
    );
    let out = aba(tmp.path(), &["run", "first.toml", "--results", "results"]);
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let samples = fs::read_to_string(dir.join("samples.csv")).expect("samples.csv");
    for workload in ["spawn", "sysctl_read"] {
        assert!(samples.contains(workload), "{workload}: {samples}");
    }
    assert_verified(&dir);
}

#[test]
fn an_existing_recipe_is_never_overwritten() {
    let tmp = tempfile::tempdir().expect("tempdir");
    fs::write(tmp.path().join("mine.toml"), "# my own work\n").expect("write");
    let out = aba(tmp.path(), &["new", "mine", "--from", "aba"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    insta::assert_snapshot!("existing_recipe_stderr", stderr(&out));
    assert_eq!(
        fs::read_to_string(tmp.path().join("mine.toml")).expect("read"),
        "# my own work\n"
    );
    assert!(
        !tmp.path().join("targets.toml").exists(),
        "wrote a stub after refusing"
    );
}

#[test]
fn an_existing_inventory_is_kept() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let inventory = "[targets.rig]\nhost = \"rig.example\"\nswitch = \"kexec\"\nhost_key = \"SHA256:bGFiLWhvc3Qta2V5LWZvci10ZXN0cw\"\n";
    fs::write(tmp.path().join("targets.toml"), inventory).expect("write");
    let out = aba(tmp.path(), &["new", "exp", "--from", "ababa"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("kept the existing targets.toml"),
        "{}",
        text(&out)
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("targets.toml")).expect("read"),
        inventory
    );
}

#[test]
fn a_name_that_is_not_a_plain_file_name_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for bad in ["../escape", "sub/dir", ".hidden", "two words"] {
        let out = aba(tmp.path(), &["new", bad]);
        assert_eq!(out.status.code(), Some(1), "{bad}: {}", text(&out));
        assert!(
            stderr(&out).contains("as a recipe name"),
            "{bad}: {}",
            text(&out)
        );
    }
    let out = aba(tmp.path(), &["new", "../escape"]);
    insta::assert_snapshot!("bad_name_stderr", stderr(&out));
    assert_eq!(
        fs::read_dir(tmp.path()).expect("read dir").count(),
        0,
        "wrote something for a bad name"
    );
    let out = aba(tmp.path(), &["new", "x", "--from", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}
