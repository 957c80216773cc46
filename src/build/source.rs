//! The source identity of a build whose tree is a git checkout: the commit, how `git
//! describe` names it, whether tracked files differed from it, and a SHA-256 of the
//! difference, so that "patched" in a report can be traced to the exact tree that was built.

use std::{
    io::Read as _,
    path::Path,
    process::{Command, Stdio},
};

use sha2::{Digest as _, Sha256};

use super::{inputs::SourceSnapshot, record::SourceIdentity};

/// The identity of the git tree at `dir`; `Ok(None)` when `dir` is not in one (or it has no
/// commit yet), `Err` with the reason when git could not say.
pub fn identify(dir: &Path) -> Result<Option<SourceIdentity>, String> {
    match git(dir, &["rev-parse", "--is-inside-work-tree"]) {
        Ok(out) if out.trim() == "true" => {}
        Ok(_) => return Ok(None),
        Err(e) if e.contains("not a git repository") => return Ok(None),
        Err(e) => return Err(e),
    }
    // A tree without a commit yet has nothing to name.
    let Ok(commit) = git(dir, &["rev-parse", "--verify", "-q", "HEAD"]) else {
        return Ok(None);
    };
    let commit = commit.trim().to_owned();
    let describe = git(dir, &["describe", "--always", "--tags", "--dirty"])?
        .trim()
        .to_owned();
    let status = git(
        dir,
        &[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--ignore-submodules=all",
        ],
    )?;
    let diff_sha256 = diff_hash(dir)?;
    Ok(Some(SourceIdentity {
        dir: dir.display().to_string(),
        describe,
        commit,
        dirty: !status.trim().is_empty(),
        diff_sha256,
    }))
}

/// The snapshot of a source tree that is not a git checkout: a SHA-256 over its source
/// files, each as its path, a NUL, its size, a NUL and its content (a symbolic link: its
/// target), in byte order of the paths. The source files are those git would not ignore in
/// the tree (`git ls-files --others --exclude-standard`, with an empty repository of aba's
/// own and no global exclude file): a kernel tree's `.gitignore` files, which release
/// tarballs carry, leave out what Kbuild generates, and a `make O=` folder ignores itself.
/// Every file is read, so a kernel tree takes seconds.
pub fn snapshot(dir: &Path) -> Result<SourceSnapshot, String> {
    let repo = crate::session::private_dir::PrivateDir::new("aba-snapshot")
        .map_err(|e| format!("cannot make a private directory: {e}"))?;
    let git_dir = repo.0.join("git");
    let init = bare_git(&repo.0)
        .args(["init", "-q", "--bare"])
        .arg(&git_dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !init.status.success() {
        return Err(format!(
            "`git init --bare` failed: {}",
            String::from_utf8_lossy(&init.stderr).trim()
        ));
    }
    let out = git_command(dir)?
        .args(["-c", "core.excludesFile=/dev/null"])
        .arg(format!("--git-dir={}", git_dir.display()))
        .args([
            "--work-tree=.",
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`git ls-files --others` in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut paths: Vec<&[u8]> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    paths.sort_unstable();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    for raw in &paths {
        use std::os::unix::ffi::OsStrExt as _;
        let path = dir.join(std::ffi::OsStr::from_bytes(raw));
        let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
        let meta = std::fs::symlink_metadata(&path).map_err(cannot)?;
        hasher.update(raw);
        hasher.update([0]);
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map_err(cannot)?;
            hasher.update(b"link\0");
            hasher.update(target.as_os_str().as_bytes());
        } else {
            hasher.update(meta.len().to_string().as_bytes());
            hasher.update([0]);
            let mut file = crate::input::open_regular(&path).map_err(cannot)?;
            loop {
                match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => hasher.update(&buf[..n]),
                    Err(e) => return Err(cannot(e)),
                }
            }
        }
        hasher.update([0]);
    }
    Ok(SourceSnapshot {
        sha256: hex::encode(hasher.finalize()),
        files: paths.len() as u64,
    })
}

/// Runs git in `dir`; its stdout, or its stderr's last line as the error.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = git_command(dir)?
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "`git {}` in {} failed: {}",
            args.join(" "),
            dir.display(),
            crate::text::last_lines(&stderr, 2).join(" / ")
        ))
    }
}

/// `git -C dir` that runs none of the programs the tree's configuration names: the tree is a
/// tester's (or someone else's) checkout, and aba may run as root. Its `.git/config` could
/// name an fsmonitor hook (run by every command that refreshes the index), hooks, and filter
/// drivers that `.gitattributes` applies when git hashes a work-tree file (`status`,
/// `describe --dirty`, `diff`). Settings passed through `GIT_CONFIG_COUNT` outrank every
/// configuration file, so: no fsmonitor, hooks from an empty place, and every filter driver
/// that any configuration defines made empty and optional (git then hashes the file as it
/// is). Submodules are not looked into: their own configurations would name other drivers.
fn git_command(dir: &Path) -> Result<Command, String> {
    let mut settings: Vec<(String, String)> = vec![
        ("core.fsmonitor".into(), "false".into()),
        ("core.hooksPath".into(), "/dev/null".into()),
        ("diff.ignoreSubmodules".into(), "all".into()),
        ("submodule.recurse".into(), "false".into()),
    ];
    for driver in filter_drivers(dir)? {
        for key in ["clean", "smudge", "process"] {
            settings.push((format!("filter.{driver}.{key}"), String::new()));
        }
        settings.push((format!("filter.{driver}.required"), "false".into()));
    }
    let mut command = bare_git(dir);
    command.env("GIT_CONFIG_COUNT", settings.len().to_string());
    for (i, (key, value)) in settings.iter().enumerate() {
        command
            .env(format!("GIT_CONFIG_KEY_{i}"), key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    Ok(command)
}

/// `git --no-pager -C dir` with no external diff or text conversion from the environment.
fn bare_git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("--no-pager")
        .arg("-C")
        .arg(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_EXTERNAL_DIFF");
    command
}

/// The names of the filter drivers (`filter.<name>.*`) that the configuration seen in `dir`
/// defines, whatever file defines them. Reading configuration runs nothing.
fn filter_drivers(dir: &Path) -> Result<Vec<String>, String> {
    let out = bare_git(dir)
        .args(["config", "-z", "--name-only", "--get-regexp", r"^filter\."])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    // Exit 1: no such setting; outside a tree git still reads the user's configuration.
    let mut drivers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|name| name.strip_prefix("filter."))
        .filter_map(|rest| rest.rsplit_once('.').map(|(driver, _)| driver.to_owned()))
        .collect();
    drivers.sort();
    drivers.dedup();
    Ok(drivers)
}

/// SHA-256 of `git diff HEAD` (binary, no external diff or text conversion drivers, no
/// filters: see [`git_command`]), streamed.
fn diff_hash(dir: &Path) -> Result<String, String> {
    let mut child = git_command(dir)?
        .args([
            "diff",
            "HEAD",
            "--binary",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=all",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let mut hasher = Sha256::new();
    if let Some(mut out) = child.stdout.take() {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match out.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => hasher.update(&buf[..n]),
                Err(e) => return Err(format!("cannot read `git diff HEAD`: {e}")),
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for git: {e}"))?;
    if !status.success() {
        return Err(format!("`git diff HEAD` in {} failed", dir.display()));
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use std::{path::Path, process::Command};

    use super::identify;

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

    #[test]
    fn a_git_tree_names_its_commit_and_a_change_makes_it_dirty() {
        let tmp = tempfile::tempdir().expect("tmp");
        assert_eq!(identify(tmp.path()).expect("not a tree"), None);
        git(tmp.path(), &["init", "-q"]);
        assert_eq!(identify(tmp.path()).expect("no commit yet"), None);
        std::fs::write(tmp.path().join("Makefile"), "all:\n").expect("write");
        git(tmp.path(), &["add", "Makefile"]);
        git(tmp.path(), &["commit", "-q", "-m", "base"]);
        git(tmp.path(), &["tag", "v7.2"]);
        let clean = identify(tmp.path()).expect("git").expect("a tree");
        assert_eq!(clean.describe, "v7.2");
        assert_eq!(clean.commit.len(), 40);
        assert!(!clean.dirty);
        std::fs::write(tmp.path().join("Makefile"), "all:\n\ttrue\n").expect("write");
        let dirty = identify(tmp.path()).expect("git").expect("a tree");
        assert_eq!(dirty.describe, "v7.2-dirty");
        assert!(dirty.dirty);
        assert_ne!(dirty.diff_sha256, clean.diff_sha256);
        assert_eq!(dirty.commit, clean.commit);
    }

    /// A tree that is not git is identified by its source files: what its `.gitignore`
    /// leaves out (build outputs, a `make O=` folder) does not count, an edit does.
    #[test]
    fn a_tree_without_git_is_snapshot_by_its_source_files() {
        use super::snapshot;
        let tmp = tempfile::tempdir().expect("tmp");
        let tree = tmp.path();
        std::fs::create_dir_all(tree.join("kernel")).expect("mkdir");
        std::fs::create_dir_all(tree.join("build")).expect("mkdir");
        std::fs::write(tree.join(".gitignore"), "*.o\n").expect("write");
        std::fs::write(tree.join("kernel/sched.c"), "int x;\n").expect("write");
        std::fs::write(tree.join("build/.gitignore"), "*\n").expect("write");
        let before = snapshot(tree).expect("snapshot");
        assert_eq!(before.files, 2, "{before:?}");
        std::fs::write(tree.join("kernel/sched.o"), "obj").expect("write");
        std::fs::write(tree.join("build/vmlinux"), "elf").expect("write");
        assert_eq!(snapshot(tree).expect("snapshot"), before);
        std::fs::write(tree.join("kernel/sched.c"), "int y;\n").expect("write");
        assert_ne!(snapshot(tree).expect("snapshot").sha256, before.sha256);
    }

    /// A tree whose `.git/config` names an fsmonitor hook, a filter driver (clean, smudge and
    /// process, applied to every file by `.gitattributes`) and hooks, each a program that
    /// leaves a marker: identifying the tree runs none of them.
    #[test]
    fn a_hostile_git_configuration_runs_nothing() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tmp");
        let tree = tmp.path().join("linux");
        std::fs::create_dir(&tree).expect("mkdir");
        git(&tree, &["init", "-q"]);
        std::fs::write(tree.join("Makefile"), "all:\n").expect("write");
        std::fs::write(tree.join(".gitattributes"), "* filter=evil diff=evil\n").expect("write");
        git(&tree, &["add", "."]);
        git(&tree, &["commit", "-q", "-m", "base"]);
        let marker = tmp.path().join("ran");
        let program = tmp.path().join("evil.sh");
        std::fs::write(
            &program,
            format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", marker.display()),
        )
        .expect("write");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let p = program.display();
        let mut config = std::fs::read_to_string(tree.join(".git/config")).expect("config");
        config.push_str(&format!(
            "[core]\n\tfsmonitor = {p}\n\thooksPath = {h}\n\
             [filter \"evil\"]\n\tclean = {p}\n\tsmudge = {p}\n\trequired = true\n\
             [diff \"evil\"]\n\ttextconv = {p}\n\tcommand = {p}\n",
            h = tmp.path().display()
        ));
        std::fs::write(tree.join(".git/config"), config).expect("config");
        for hook in ["post-index-change", "reference-transaction", "pre-commit"] {
            std::fs::copy(&program, tmp.path().join(hook)).expect("hook");
        }
        // Same size, new content and time: git must hash the file to know.
        std::fs::write(tree.join("Makefile"), "ALL:\n").expect("write");
        let dirty = identify(&tree).expect("git").expect("a tree");
        assert!(dirty.dirty);
        assert!(
            !marker.exists(),
            "the tree's programs ran: {}",
            std::fs::read_to_string(&marker).unwrap_or_default()
        );
        // The process form of a driver too.
        let mut config = std::fs::read_to_string(tree.join(".git/config")).expect("config");
        config.push_str(&format!("[filter \"evil\"]\n\tprocess = {p}\n"));
        std::fs::write(tree.join(".git/config"), config).expect("config");
        identify(&tree).expect("git").expect("a tree");
        assert!(!marker.exists(), "the process filter ran");
    }
}
