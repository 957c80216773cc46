//! Kernels built on the host (`--builds FILE`), without booting them: `aba build` runs each
//! build step into its log and prints each build's identity from a real kernel image; `aba
//! check` shows the builds and binds the image's release; a failing build stops `aba run`
//! before any target is touched; a builds file's problems are named at line and column; and
//! the install on a real sshd target sends a file once, keeps it by SHA-256 and `remove`
//! takes only aba's files away. The boots themselves are proven in the lab
//! (`lab::kernels_built_here_are_installed_proven_and_compared`).

use std::{path::Path, process::Command};

use aba::{
    build::{
        file::BuildsFile,
        install::{Installed, install, remove},
        prepare::{Steps, make},
    },
    campaign::ledger::{CampaignKey, Ledger},
    target::{ssh::SshTransport, transport::Transport},
};

use crate::support::{
    cli::{aba, on_target, run_built, text, write},
    lab::real_kernel_image,
    sshd::Sshd,
};

const RECIPE: &str = r#"
version = 1
name = "built"
description = "kernels built here"
sequence = ["a", "b", "a"]
samples = 3
[kernels.a]
release = "6.1.0-50-cloud-amd64"
[kernels.b]
release = "7.2.0-patched"
initrd = "/boot/initrd.img"
[[workload]]
name = "w"
run = "echo 1"
estimate = "1s"
metric = { number = true, better = "lower" }
"#;

const INVENTORY: &str = r#"
[targets.lab]
host = "127.0.0.1"
port = 1
user = "root"
known_hosts = "known_hosts"
switch = "kexec"
"#;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?}");
}

/// A git tree `linux/` (tag v7.2, then a change: dirty) whose build step copies a real kernel
/// image into `linux/out/bzImage`; its builds file names kernel `b`.
fn tree(dir: &Path, command: &str) -> std::path::PathBuf {
    let linux = dir.join("linux");
    std::fs::create_dir_all(&linux).expect("mkdir");
    git(&linux, &["init", "-q"]);
    std::fs::write(linux.join("Makefile"), "all:\n").expect("write");
    git(&linux, &["add", "Makefile"]);
    git(&linux, &["commit", "-q", "-m", "base"]);
    git(&linux, &["tag", "v7.2"]);
    std::fs::write(linux.join("Makefile"), "all:\n\ttrue\n").expect("write");
    std::fs::write(linux.join(".config"), "CONFIG_X=y\n").expect("write");
    write(dir, "fix.patch", "--- a/x\n+++ b/x\n");
    write(
        dir,
        "builds.toml",
        &format!(
            "version = 1\n[kernels.b]\ndir = \"linux\"\ncommand = \"{command}\"\nestimate = \"2m\"\nimage = \"linux/out/bzImage\"\nconfig = \"linux/.config\"\npatches = [\"fix.patch\"]\n"
        ),
    )
}

#[test]
fn aba_build_runs_the_build_step_and_prints_the_identity_of_a_real_image() {
    let image = real_kernel_image();
    let tmp = tempfile::tempdir().expect("tmp");
    let builds = tree(
        tmp.path(),
        &format!(
            "mkdir -p out && cp {} out/bzImage && echo copied",
            image.display()
        ),
    );
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let out = aba(
        tmp.path(),
        &[
            "build",
            recipe.to_str().expect("utf-8"),
            "--builds",
            builds.to_str().expect("utf-8"),
            "--logs",
            "logs",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("kernel b ("), "{stdout}");
    assert!(
        stdout.contains("version  6.1.0-47-cloud-amd64 (") && stdout.contains(") #1 SMP"),
        "the version string of Debian's image: {stdout}"
    );
    assert!(stdout.contains("(v7.2-dirty, dirty)"), "{stdout}");
    assert!(stdout.contains("fix.patch (SHA-256 "), "{stdout}");
    assert!(stdout.contains("config   "), "{stdout}");
    let log = std::fs::read_to_string(tmp.path().join("logs/b.log")).expect("log");
    assert_eq!(log, "copied\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("built kernel b in"), "{stderr}");

    // aba check shows the build and plans b with the release its image embeds.
    let inventory = write(tmp.path(), "targets.toml", INVENTORY);
    let out = on_target(
        tmp.path(),
        "check",
        &recipe,
        &inventory,
        "lab",
        &["--builds", builds.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("kernels built on this host"), "{stdout}");
    assert!(
        stdout.contains("present, release 6.1.0-47-cloud-amd64"),
        "{stdout}"
    );
    assert!(stdout.contains("about 2m"), "{stdout}");
    assert!(
        stdout.contains("with the build steps (~2m 00s + ~"),
        "the ETA counts the builds: {stdout}"
    );
    assert!(
        stdout.contains("kernel b (6.1.0-47-cloud-amd64)"),
        "the plan boots the image's release: {stdout}"
    );
}

#[test]
fn a_failing_build_stops_the_run_before_any_target_is_touched() {
    let tmp = tempfile::tempdir().expect("tmp");
    let builds = tree(
        tmp.path(),
        "for i in 1 2 3; do echo cc file$i.o; done; echo 'make: *** [vmlinux] Error 1' >&2; exit 2",
    );
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let inventory = write(tmp.path(), "targets.toml", INVENTORY);
    let out = run_built(tmp.path(), &recipe, &inventory, "lab", &builds);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the build of kernel `b` (`for i in"),
        "{stderr}"
    );
    assert!(stderr.contains("failed (exit status: 2) after"), "{stderr}");
    assert!(
        stderr.contains("make: *** [vmlinux] Error 1"),
        "the log's tail: {stderr}"
    );
    assert!(stderr.contains("cc file3.o"), "{stderr}");
    assert!(stderr.contains("(hint: fix the build"), "{stderr}");
    assert!(
        !stderr.contains("connect"),
        "no target was touched: {stderr}"
    );
    assert!(!tmp.path().join("results").exists(), "no results directory");
}

#[test]
fn builds_files_are_checked_at_line_and_column_and_against_the_target() {
    let tmp = tempfile::tempdir().expect("tmp");
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let inventory = write(tmp.path(), "targets.toml", INVENTORY);
    let check = |builds: &str, target: &str| {
        let builds = write(tmp.path(), "b.toml", builds);
        on_target(
            tmp.path(),
            "check",
            &recipe,
            &inventory,
            target,
            &["--builds", builds.to_str().expect("utf-8")],
        )
    };
    let out = check("version = 1\n[kernels.c]\nimage = \"x\"\n", "lab");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("b.toml:2:10: the recipe has no kernel `c` (its kernels: a, b)"),
        "{}",
        text(&out)
    );
    let out = check(
        "version = 1\n[kernels.b]\nimage = \"x\"\ncomand = \"make\"\n",
        "lab",
    );
    assert!(text(&out).contains("b.toml:4:1"), "{}", text(&out));
    assert!(
        text(&out).contains("command"),
        "did you mean: {}",
        text(&out)
    );
    let out = check(
        "version = 1\n[kernels.b]\nimage = \"missing/bzImage\"\n",
        "lab",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("missing/bzImage"), "{}", text(&out));
    let out = check("version = 1\n[kernels.b]\nimage = \"x\"\n", "local");
    assert!(
        text(&out)
            .contains("target `local` switches by none, which cannot boot a kernel aba installs"),
        "{}",
        text(&out)
    );
}

/// Install and remove against a real sshd on this machine, into a temporary folder: a file
/// goes once, a second install finds it by SHA-256 and sends nothing, `remove` takes only
/// what the build names.
#[test]
fn an_install_sends_each_file_once_and_remove_takes_only_abas_files() {
    let image = real_kernel_image();
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().expect("tmp");
    let builds = write(
        tmp.path(),
        "builds.toml",
        &format!(
            "version = 1\n[kernels.b]\nimage = \"{}\"\ninitrd = \"initrd\"\n",
            image.display()
        ),
    );
    write(tmp.path(), "initrd", "not really an initrd\n");
    let file = BuildsFile::load(&builds).expect("valid");
    let mut build = make(&file.kernels[0], &Steps::Skip).expect("recorded");
    let dir = tmp.path().join("remote/kernels/b-0123456789ab");
    build.install_dir = dir.display().to_string();
    let mut ssh = SshTransport::connect(&sshd.target()).expect("connect");
    let first = install(&mut ssh, &build).expect("installs");
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|i| i.sent), "{first:?}");
    assert_eq!(
        std::fs::read(dir.join("vmlinuz")).expect("installed"),
        std::fs::read(&image).expect("image")
    );
    let again = install(&mut ssh, &build).expect("installs");
    assert!(again.iter().all(|i| !i.sent), "held already: {again:?}");
    // A file the target holds with other content is replaced.
    std::fs::write(dir.join("initrd.img"), "stale").expect("write");
    let third = install(&mut ssh, &build).expect("installs");
    assert_eq!(
        third.iter().map(|i| i.sent).collect::<Vec<_>>(),
        [false, true]
    );
    std::fs::write(tmp.path().join("remote/kernels/other"), "not aba's").expect("write");
    let foreign = Installed {
        path: tmp
            .path()
            .join("remote/kernels/other")
            .display()
            .to_string(),
        sha256: "0".repeat(64),
        sent: true,
    };
    let mut listed = first.clone();
    listed.push(foreign);
    // What `aba clean` removes is what the ledger on the target recorded.
    let ledger = Ledger::at(&tmp.path().join("ledger").display().to_string());
    let campaign = CampaignKey::of(None);
    ledger
        .record_installed(&mut ssh, &campaign, "r", &build.install_dir, &listed)
        .expect("recorded");
    let entry = ledger
        .installed(&mut ssh, &campaign)
        .expect("reads")
        .expect("recorded");
    let (removed, refused) = remove(&mut ssh, &entry).expect("removes");
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(!dir.exists(), "the build's folder goes once empty");
    assert!(
        tmp.path().join("remote/kernels/other").exists(),
        "not aba's: kept"
    );
    // The host image changed since: the install refuses instead of sending another build.
    let mut changed = build.clone();
    changed.image.sha256 = "f".repeat(64);
    let err = install(&mut ssh, &changed).expect_err("refused");
    assert!(
        err.to_string()
            .contains("changed since the campaign started"),
        "{err}"
    );
    ssh.disconnect();
}

/// `aba preflight --builds` on a real sshd target that switches by kexec: the build's line
/// says where it goes and that there is room; a kernel aba installs is not looked for in
/// /boot (it is not there yet), its initrd is.
#[test]
fn preflight_checks_the_install_side_of_a_build() {
    let image = real_kernel_image();
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().expect("tmp");
    let targets = sshd.inventory(tmp.path(), "");
    let inventory = std::fs::read_to_string(&targets)
        .expect("inventory")
        .replace("switch = \"none\"", "switch = \"kexec\"");
    std::fs::write(&targets, inventory).expect("write");
    let builds = write(
        tmp.path(),
        "builds.toml",
        &format!(
            "version = 1\n[kernels.b]\nimage = \"{}\"\n",
            image.display()
        ),
    );
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let out = on_target(
        tmp.path(),
        "preflight",
        &recipe,
        &targets,
        "box",
        &["--builds", builds.to_str().expect("utf-8")],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("kernel b") && l.contains("built on this host"))
        .unwrap_or_else(|| panic!("no install line: {}", text(&out)));
    assert!(line.starts_with("ok"), "{line}");
    assert!(line.contains("/remote-work/kernels/b-"), "{line}");
    // The initrd the recipe names must be on the target; the image is aba's to send.
    let missing = stdout
        .lines()
        .find(|l| l.contains("kernel b") && l.contains("cannot access"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(missing.contains("'/boot/initrd.img'"), "{missing}");
    assert!(!missing.contains("vmlinuz"), "{missing}");
}

/// A source tree whose `.git/config` names an fsmonitor hook and a clean filter (applied to
/// every file by its `.gitattributes`), both a program that leaves a marker: `aba build` and
/// `aba check --builds` identify the tree (commit, dirty, diff) and run neither.
#[test]
fn a_source_trees_git_programs_never_run() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().expect("tmp");
    let builds = tree(
        tmp.path(),
        "mkdir -p out && printf 'Linux version 7.2.0-patched (t@h) (gcc) #1 SMP\\\\n' > out/bzImage",
    );
    let linux = tmp.path().join("linux");
    std::fs::write(linux.join(".gitattributes"), "* filter=evil\n").expect("write");
    let marker = tmp.path().join("ran");
    let program = write(
        tmp.path(),
        "evil.sh",
        &format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", marker.display()),
    );
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut config = std::fs::read_to_string(linux.join(".git/config")).expect("config");
    config.push_str(&format!(
        "[core]\n\tfsmonitor = {p}\n[filter \"evil\"]\n\tclean = {p}\n\trequired = true\n",
        p = program.display()
    ));
    std::fs::write(linux.join(".git/config"), config).expect("config");
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let builds = builds.to_str().expect("utf-8");
    let out = aba(
        tmp.path(),
        &["build", recipe.to_str().expect("utf-8"), "--builds", builds],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("(v7.2-dirty, dirty)"),
        "{}",
        text(&out)
    );
    let inventory = write(tmp.path(), "targets.toml", INVENTORY);
    let out = on_target(
        tmp.path(),
        "check",
        &recipe,
        &inventory,
        "lab",
        &["--builds", builds],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !marker.exists(),
        "the tree's programs ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}
