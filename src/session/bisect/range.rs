//! The commits a bisection searches: the first-parent line from the good commit to the bad
//! one in the bisected tree, good first (`git rev-list --first-parent --reverse good..bad`
//! with good prepended), each with its subject for the reports. A tree with uncommitted
//! changes to tracked files is refused: checking commits out would carry or lose them.

use std::path::Path;

use crate::build::source::git;

/// One commit of the searched line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeCommit {
    /// The full commit hash.
    pub hash: String,
    /// Its subject line, as `git log --format=%s` prints it.
    pub subject: String,
}

/// Why the searched line could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    /// Git could not answer (not a tree, an unknown ref, …); git's own words.
    #[error("{0}")]
    Git(String),
    /// The tree has uncommitted changes to tracked files.
    #[error(
        "the bisected tree {dir} has uncommitted changes to tracked files ({first}); commit or \
         stash them: aba checks out each commit in that tree"
    )]
    Dirty {
        /// The tree.
        dir: String,
        /// The first line of `git status --porcelain`.
        first: String,
    },
    /// The folder is not the top of a git work tree: git would find a repository in a
    /// folder above it and check out that one's commits.
    #[error(
        "{dir} is not the top folder of a git work tree (git's top folder for it is {top}); \
         name the tree's own folder in the builds file's `dir`"
    )]
    NotTopLevel {
        /// The folder given.
        dir: String,
        /// What git says the top is (empty when none).
        top: String,
    },
    /// `good` is not an ancestor of `bad` along first parents, or they are the same commit.
    #[error(
        "no commits from --good {good} to --bad {bad} along first parents: good must be an \
         ancestor of bad, and they must differ"
    )]
    Empty {
        /// The --good ref as given.
        good: String,
        /// The --bad ref as given.
        bad: String,
    },
    /// `good` is not on the first-parent line of `bad`.
    #[error(
        "--good {good} is not on the first-parent line of --bad {bad} (git bisect would search \
         merged side branches; aba searches the first-parent line only)"
    )]
    NotFirstParent {
        /// The --good ref as given.
        good: String,
        /// The --bad ref as given.
        bad: String,
    },
}

/// The first-parent line of `dir` from `good` to `bad`, good first and bad last; refuses a
/// dirty tree, an empty range, and a good commit off bad's first-parent line.
pub fn resolve(dir: &Path, good: &str, bad: &str) -> Result<Vec<RangeCommit>, RangeError> {
    own_tree(dir)?;
    let status = git(
        dir,
        &[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--ignore-submodules=all",
        ],
    )
    .map_err(RangeError::Git)?;
    if let Some(first) = status.lines().find(|line| !line.trim().is_empty()) {
        return Err(RangeError::Dirty {
            dir: dir.display().to_string(),
            first: first.trim().to_owned(),
        });
    }
    let good_hash = commit_of(dir, good)?;
    let bad_hash = commit_of(dir, bad)?;
    let line = git(
        dir,
        &[
            "rev-list",
            "--first-parent",
            "--reverse",
            &format!("{good_hash}..{bad_hash}"),
        ],
    )
    .map_err(RangeError::Git)?;
    let mut hashes: Vec<String> = line.lines().map(|l| l.trim().to_owned()).collect();
    hashes.retain(|h| !h.is_empty());
    if hashes.is_empty() {
        return Err(RangeError::Empty {
            good: good.to_owned(),
            bad: bad.to_owned(),
        });
    }
    // The first commit after good must have good as its first parent, or good is not on the
    // line and "the change is between good and this commit" would not hold.
    let first_parent = commit_of(dir, &format!("{}^1", hashes[0]))?;
    if first_parent != good_hash {
        return Err(RangeError::NotFirstParent {
            good: good.to_owned(),
            bad: bad.to_owned(),
        });
    }
    hashes.insert(0, good_hash);
    hashes
        .into_iter()
        .map(|hash| {
            let subject = git(dir, &["log", "-1", "--format=%s", &hash])
                .map_err(RangeError::Git)?
                .trim()
                .to_owned();
            Ok(RangeCommit { hash, subject })
        })
        .collect()
}

/// Checks out `hash` detached in `dir` (the tree's hooks and filters do not run: see
/// [`crate::build::source`]), so the tree's build command builds that commit incrementally.
pub fn checkout(dir: &Path, hash: &str) -> Result<(), RangeError> {
    own_tree(dir)?;
    git(dir, &["checkout", "-q", "--detach", hash, "--"]).map_err(RangeError::Git)?;
    Ok(())
}

/// Refuses a folder that is not the top of its own work tree: `git -C dir` would otherwise
/// act on a repository found in a folder above (a tree unpacked inside another checkout).
fn own_tree(dir: &Path) -> Result<(), RangeError> {
    let top = git(dir, &["rev-parse", "--show-toplevel"]).map_err(RangeError::Git)?;
    let top = top.trim();
    let same = match (std::fs::canonicalize(dir), std::fs::canonicalize(top)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(RangeError::NotTopLevel {
            dir: dir.display().to_string(),
            top: top.to_owned(),
        })
    }
}

/// The full hash `rev` names in `dir`, as a commit.
fn commit_of(dir: &Path, rev: &str) -> Result<String, RangeError> {
    let out = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(RangeError::Git)?;
    Ok(out.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use std::{path::Path, process::Command};

    use super::{RangeError, checkout, resolve};

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn commit(dir: &Path, file: &str, text: &str, subject: &str) -> String {
        std::fs::write(dir.join(file), text).expect("write");
        git(dir, &["add", file]);
        git(dir, &["commit", "-q", "-m", subject]);
        git(dir, &["rev-parse", "HEAD"])
    }

    #[test]
    fn a_folder_inside_another_tree_is_refused_not_bisected_as_that_tree() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        let good = commit(dir, "a", "0", "base");
        let bad = commit(dir, "a", "1", "one");
        let inner = dir.join("unpacked");
        std::fs::create_dir(&inner).expect("mkdir");
        let e = resolve(&inner, &good, &bad).expect_err("not its own tree");
        assert!(matches!(e, RangeError::NotTopLevel { .. }), "{e}");
        assert!(checkout(&inner, &good).is_err());
        assert_eq!(
            git(dir, &["rev-parse", "HEAD"]),
            bad,
            "nothing was checked out"
        );
    }

    #[test]
    fn the_line_runs_from_good_to_bad_along_first_parents_with_subjects() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        let good = commit(dir, "a", "0", "base");
        let c1 = commit(dir, "a", "1", "one");
        git(dir, &["checkout", "-q", "-b", "side"]);
        commit(dir, "b", "s", "side work");
        git(dir, &["checkout", "-q", "main"]);
        let c2 = commit(dir, "a", "2", "two");
        git(dir, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
        let merge = git(dir, &["rev-parse", "HEAD"]);
        let line = resolve(dir, &good, "main").expect("resolves");
        let hashes: Vec<&str> = line.iter().map(|c| c.hash.as_str()).collect();
        assert_eq!(hashes, [good.as_str(), &c1, &c2, &merge]);
        let subjects: Vec<&str> = line.iter().map(|c| c.subject.as_str()).collect();
        assert_eq!(subjects, ["base", "one", "two", "merge side"]);
    }

    #[test]
    fn a_dirty_tree_an_empty_range_and_an_off_line_good_are_refused() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        let good = commit(dir, "a", "0", "base");
        git(dir, &["checkout", "-q", "-b", "side"]);
        let side = commit(dir, "b", "s", "side work");
        git(dir, &["checkout", "-q", "main"]);
        commit(dir, "a", "1", "one");
        git(dir, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
        assert!(matches!(
            resolve(dir, "main", &good),
            Err(RangeError::Empty { .. })
        ));
        assert!(matches!(
            resolve(dir, &side, "main"),
            Err(RangeError::NotFirstParent { .. })
        ));
        assert!(matches!(
            resolve(dir, "no-such-ref", "main"),
            Err(RangeError::Git(_))
        ));
        std::fs::write(dir.join("a"), "changed").expect("write");
        let dirty = resolve(dir, &good, "main").expect_err("dirty");
        assert!(matches!(dirty, RangeError::Dirty { .. }), "{dirty}");
        assert!(dirty.to_string().contains("M a"), "{dirty}");
    }

    /// A hardlinked copy of a tree (`cp -al`, how the lab test copies the kernel source)
    /// checks commits out without writing through the links into the original.
    #[test]
    fn a_checkout_in_a_hardlinked_copy_leaves_the_original_alone() {
        let tmp = tempfile::tempdir().expect("tmp");
        let original = tmp.path().join("original");
        std::fs::create_dir(&original).expect("mkdir");
        git(&original, &["init", "-q", "-b", "main"]);
        let first = commit(&original, "a", "first\n", "first");
        commit(&original, "a", "second\n", "second");
        let copy = tmp.path().join("copy");
        let ok = Command::new("cp")
            .arg("-al")
            .arg(&original)
            .arg(&copy)
            .status()
            .expect("cp runs")
            .success();
        assert!(ok, "cp -al");
        checkout(&copy, &first).expect("checks out");
        assert_eq!(
            std::fs::read_to_string(copy.join("a")).expect("read"),
            "first\n"
        );
        assert_eq!(
            std::fs::read_to_string(original.join("a")).expect("read"),
            "second\n"
        );
        assert_eq!(git(&copy, &["rev-parse", "HEAD"]), first);
    }
}
