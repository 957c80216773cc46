//! A build's modules on this host: the folder `make modules_install INSTALL_MOD_PATH=DIR`
//! fills (`DIR/lib/modules/<release>/…`), or a tar archive of it. aba hashes them when the
//! campaign starts and ships them to the target as one tar stream of `<release>/…`.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use sha2::{Digest as _, Sha256};
use thiserror::Error;

use super::record::{HostModules, MAX_INSTALL_BYTES, read_file, sha256_hex};

/// Modules that cannot be used.
#[derive(Debug, Error)]
pub enum ModulesError {
    /// The folder has no modules of the release.
    #[error("{} has no lib/modules/{release}: give the INSTALL_MOD_PATH folder of the build (or an archive of it)", dir.display())]
    NoRelease {
        /// The folder.
        dir: PathBuf,
        /// The image's release.
        release: String,
    },
    /// Reading the folder or archive failed.
    #[error("cannot read the modules {}", path.display())]
    Read {
        /// The culprit.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// More than aba installs.
    #[error("the modules {} hold {}, more than the {} aba installs", path.display(), crate::text::bytes(*bytes), crate::text::bytes(MAX_INSTALL_BYTES))]
    TooLarge {
        /// The folder or archive.
        path: PathBuf,
        /// Their size.
        bytes: u64,
    },
    /// An archive aba cannot unpack.
    #[error("the modules archive {} is not a .tar, .tar.gz or .tgz file", path.display())]
    NotAnArchive {
        /// The file.
        path: PathBuf,
    },
    /// The host's tar failed.
    #[error("`tar` failed on {}: {stderr}", path.display())]
    Tar {
        /// The folder.
        path: PathBuf,
        /// Its stderr.
        stderr: String,
    },
    /// A file or the archive changed since the campaign started.
    #[error(
        "the modules {path} changed since the campaign started (SHA-256 {recorded}, now {now}): a rebuilt kernel is another experiment; start a new campaign"
    )]
    Changed {
        /// The folder or archive.
        path: String,
        /// The recorded hash.
        recorded: String,
        /// The hash now.
        now: String,
    },
}

/// Whether an archive is gzip-compressed, by its name; `None`: not an archive aba reads.
pub fn archive_gzip(path: &Path) -> Option<bool> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Some(true)
    } else if name.ends_with(".tar") {
        Some(false)
    } else {
        None
    }
}

/// Records the modules at `path` for `release`.
pub fn record(path: &Path, release: &str) -> Result<HostModules, ModulesError> {
    let read = |source| ModulesError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read)?;
    if meta.is_dir() {
        let tree = release_dir(path, release)?;
        let (sha256, bytes) = hash_tree(&tree)?;
        return Ok(HostModules {
            path: path.display().to_string(),
            archive: false,
            sha256,
            bytes,
        });
    }
    if archive_gzip(path).is_none() {
        return Err(ModulesError::NotAnArchive {
            path: path.to_path_buf(),
        });
    }
    let data = read_file(path, "modules archive").map_err(|e| match e {
        super::record::FileError::TooLarge { bytes, .. } => ModulesError::TooLarge {
            path: path.to_path_buf(),
            bytes,
        },
        other => read(std::io::Error::other(crate::causes::one_line(&other))),
    })?;
    Ok(HostModules {
        path: path.display().to_string(),
        archive: true,
        sha256: sha256_hex(&data),
        bytes: data.len() as u64,
    })
}

/// The bytes to ship: an archive as it is, a folder as a tar stream of `<release>/…`; both
/// checked against the record first.
pub fn payload(modules: &HostModules, release: &str) -> Result<Vec<u8>, ModulesError> {
    let path = Path::new(&modules.path);
    let changed = |now: String| ModulesError::Changed {
        path: modules.path.clone(),
        recorded: modules.sha256.clone(),
        now,
    };
    if modules.archive {
        let data = read_file(path, "modules archive").map_err(|e| ModulesError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other(crate::causes::one_line(&e)),
        })?;
        let now = sha256_hex(&data);
        return if now == modules.sha256 {
            Ok(data)
        } else {
            Err(changed(now))
        };
    }
    let tree = release_dir(path, release)?;
    let (now, _) = hash_tree(&tree)?;
    if now != modules.sha256 {
        return Err(changed(now));
    }
    let parent = tree.parent().unwrap_or(Path::new("/"));
    let out = Command::new("tar")
        .arg("-C")
        .arg(parent)
        .args(["--owner=0", "--group=0", "-cf", "-", "--"])
        .arg(release)
        .output()
        .map_err(|source| ModulesError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    if !out.status.success() {
        return Err(ModulesError::Tar {
            path: path.to_path_buf(),
            stderr: crate::text::last_lines(&String::from_utf8_lossy(&out.stderr), 3).join(" / "),
        });
    }
    Ok(out.stdout)
}

fn release_dir(dir: &Path, release: &str) -> Result<PathBuf, ModulesError> {
    let tree = dir.join("lib/modules").join(release);
    if tree.is_dir() {
        Ok(tree)
    } else {
        Err(ModulesError::NoRelease {
            dir: dir.to_path_buf(),
            release: release.to_owned(),
        })
    }
}

/// SHA-256 over every entry under `root` in name order (its relative path, then a file's
/// size and content or a symlink's target), and the files' total size.
fn hash_tree(root: &Path) -> Result<(String, u64), ModulesError> {
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let read = |source| ModulesError::Read {
            path: dir.clone(),
            source,
        };
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .map_err(read)?
            .collect::<Result<_, _>>()
            .map_err(read)?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        // Folders are visited after this folder's files, in name order (a stack: reversed).
        let mut subdirs = Vec::new();
        for entry in entries {
            let name = rel.join(entry.file_name());
            let path = entry.path();
            let kind = entry.file_type().map_err(read)?;
            hasher.update(name.to_string_lossy().as_bytes());
            hasher.update([0]);
            if kind.is_symlink() {
                let to = std::fs::read_link(&path).map_err(read)?;
                hasher.update(b"L");
                hasher.update(to.to_string_lossy().as_bytes());
            } else if kind.is_dir() {
                hasher.update(b"D");
                subdirs.push(name);
            } else if kind.is_file() {
                let data = std::fs::read(&path).map_err(|source| ModulesError::Read {
                    path: path.clone(),
                    source,
                })?;
                total += data.len() as u64;
                if total > MAX_INSTALL_BYTES {
                    return Err(ModulesError::TooLarge {
                        path: root.to_path_buf(),
                        bytes: total,
                    });
                }
                hasher.update(b"F");
                hasher.update((data.len() as u64).to_le_bytes());
                hasher.update(&data);
            }
            hasher.update([0]);
        }
        stack.extend(subdirs.into_iter().rev());
    }
    Ok((hex::encode(hasher.finalize()), total))
}

#[cfg(test)]
mod tests {
    use super::{ModulesError, archive_gzip, payload, record};

    #[test]
    fn a_folder_is_hashed_by_content_and_shipped_as_a_tar_of_its_release() {
        let tmp = tempfile::tempdir().expect("tmp");
        let rel = tmp.path().join("lib/modules/6.1.0-x/kernel");
        std::fs::create_dir_all(&rel).expect("mkdir");
        std::fs::write(rel.join("a.ko"), b"module a").expect("write");
        std::fs::write(tmp.path().join("lib/modules/6.1.0-x/modules.dep"), b"").expect("write");
        let m = record(tmp.path(), "6.1.0-x").expect("records");
        assert!(!m.archive);
        assert_eq!(m.bytes, 8);
        let again = record(tmp.path(), "6.1.0-x").expect("records");
        assert_eq!(m.sha256, again.sha256);
        let tar = payload(&m, "6.1.0-x").expect("tar");
        assert!(
            tar.windows(19).any(|w| w == b"6.1.0-x/kernel/a.ko"),
            "a tar of <release>/"
        );
        std::fs::write(rel.join("a.ko"), b"module A").expect("write");
        assert!(matches!(
            payload(&m, "6.1.0-x"),
            Err(ModulesError::Changed { .. })
        ));
        assert!(matches!(
            record(tmp.path(), "6.1.0-y"),
            Err(ModulesError::NoRelease { .. })
        ));
    }

    #[test]
    fn archives_are_known_by_their_names() {
        assert_eq!(archive_gzip("m.tar.gz".as_ref()), Some(true));
        assert_eq!(archive_gzip("m.TGZ".as_ref()), Some(true));
        assert_eq!(archive_gzip("m.tar".as_ref()), Some(false));
        assert_eq!(archive_gzip("m.zip".as_ref()), None);
    }
}
