//! The source identity of a build whose tree is a git checkout: the commit, how `git
//! describe` names it, whether tracked files differed from it, and a SHA-256 of the
//! difference, so that "patched" in a report can be traced to the exact tree that was built.

use std::{
    io::Read as _,
    path::Path,
    process::{Command, Stdio},
};

use sha2::{Digest as _, Sha256};

use super::record::SourceIdentity;

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
    let status = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    let diff_sha256 = diff_hash(dir)?;
    Ok(Some(SourceIdentity {
        dir: dir.display().to_string(),
        describe,
        commit,
        dirty: !status.trim().is_empty(),
        diff_sha256,
    }))
}

/// Runs git in `dir`; its stdout, or its stderr's last line as the error.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
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

/// SHA-256 of `git diff HEAD` (binary, no external diff or text conversion drivers: the
/// tree's own configuration must not run programs here), streamed.
fn diff_hash(dir: &Path) -> Result<String, String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv"])
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
}
