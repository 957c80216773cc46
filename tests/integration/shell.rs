//! Shell completions and the man page, generated from the clap definition: `aba completions
//! bash|zsh|fish`, the hidden `aba targets --names` the bash and fish scripts call for
//! `--target`, and `aba man [--out DIR]`.

use std::{fs, path::Path, process::Command};

use crate::support::cli::{aba, aba_bin, text, write};

const INVENTORY: &str = "[targets.rig]\nhost = \"rig.example\"\nswitch = \"kexec\"\nhost_key = \"SHA256:bGFiLWhvc3Qta2V5LWZvci10ZXN0cw\"\n\n\
                         [targets.netboot3]\nhost = \"10.0.0.13\"\nswitch = \"power\"\nhost_key = \"SHA256:bGFiLWhvc3Qta2V5LWZvci10ZXN0cw\"\n\
                         [targets.netboot3.power]\ncycle = \"true\"\n";

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (shell, marker) in [
        ("bash", "complete -F _aba_targets"),
        ("zsh", "#compdef aba"),
        ("fish", "complete -c aba"),
    ] {
        let out = aba(tmp.path(), &["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        for command in ["new", "run", "check", "completions", "man", "schema"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    let out = aba(tmp.path(), &["completions", "powershell"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn targets_names_lists_the_inventory_local_first() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = aba(tmp.path(), &["targets", "--names"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "local\n");
    write(tmp.path(), "lab/targets.toml", INVENTORY);
    let out = aba(
        tmp.path(),
        &["targets", "--names", "--targets", "lab/targets.toml"],
    );
    assert_eq!(stdout(&out), "local\nrig\nnetboot3\n", "{}", text(&out));
    // A helper for scripts, not a command for people.
    let help = stdout(&aba(tmp.path(), &["--help"]));
    assert!(
        !help.lines().any(|l| l.trim_start().starts_with("targets")),
        "{help}"
    );
}

/// Runs the bash script's completion function for `words` (the last one being completed) in
/// `cwd`, with this build's `aba` first in PATH; returns COMPREPLY, one per line.
fn bash_complete(cwd: &Path, words: &[&str]) -> String {
    let script = stdout(&aba(cwd, &["completions", "bash"]));
    let script_path = write(cwd, "aba.bash", &script);
    let bin_dir = aba_bin().parent().expect("bin dir").to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
         _aba_targets aba \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script_path.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" ")
    );
    let out = Command::new("bash")
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("ABA_TARGETS")
        .args(["--norc", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out)
}

#[test]
fn bash_completes_target_names_from_the_inventory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "targets.toml", INVENTORY);
    assert_eq!(
        bash_complete(tmp.path(), &["aba", "run", "r.toml", "--target", ""]),
        "local\nrig\nnetboot3\n"
    );
    assert_eq!(
        bash_complete(tmp.path(), &["aba", "check", "r.toml", "-t", "ne"]),
        "netboot3\n"
    );
    // `--targets FILE` earlier on the line is the inventory the names come from.
    write(
        tmp.path(),
        "other/targets.toml",
        "[targets.far]\nhost = \"far.example\"\nswitch = \"kexec\"\nhost_key = \"SHA256:bGFiLWhvc3Qta2V5LWZvci10ZXN0cw\"\n",
    );
    assert_eq!(
        bash_complete(
            tmp.path(),
            &[
                "aba",
                "run",
                "--targets",
                "other/targets.toml",
                "--target",
                ""
            ]
        ),
        "local\nfar\n"
    );
    // Anything else is clap's generated completion.
    let commands = bash_complete(tmp.path(), &["aba", "sch"]);
    assert_eq!(commands, "schema\n");
}

#[test]
fn man_prints_the_page_or_writes_one_per_command() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = aba(tmp.path(), &["man"]);
    assert!(out.status.success(), "{}", text(&out));
    let page = stdout(&out);
    assert!(page.contains(".TH aba 1"), "{page}");
    for command in ["new", "completions", "schema", "run", "compare"] {
        assert!(page.contains(command), "the page lacks {command}");
    }
    fs::create_dir(tmp.path().join("man")).expect("mkdir");
    let out = aba(tmp.path(), &["man", "--out", "man"]);
    assert!(out.status.success(), "{}", text(&out));
    for file in ["aba.1", "aba-new.1", "aba-run.1", "aba-schema.1"] {
        let path = tmp.path().join("man").join(file);
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(text.contains(".TH "), "{file}: {text}");
    }
    assert!(
        !tmp.path().join("man/aba-targets.1").exists(),
        "a hidden command got a page"
    );
    let out = aba(tmp.path(), &["man", "--out", "nosuch"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write the man page nosuch/"),
        "{}",
        text(&out)
    );
}
