//! The manifest of a multi-target results directory (`aba run RECIPE --target a --target b`):
//! `targets.json` in the parent, naming the targets and the subdirectory of each.
//!
//! ```text
//! results/<name>-<UTC stamp>/
//!   targets.json     this manifest
//!   a/  b/           one normal campaign directory per target (journal, samples, reports)
//!   report.txt README.md targets.tsv   the combined report
//! ```
//!
//! Each subdirectory is a complete campaign directory, so `aba report DIR/a` works on it as
//! on any other; the manifest only says which subdirectories belong together. It is written
//! once, before any target starts, and never changed: what happened on each target is in that
//! target's journal, not here, so a killed runner cannot leave the manifest stale.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The manifest's file name in the parent directory.
pub const MANIFEST: &str = "targets.json";

/// The longest name or time a manifest holds (recipe and target names are at most 64).
pub const MANIFEST_TEXT_LIMIT: usize = 200;

/// The manifest format this aba writes and reads.
pub const MANIFEST_FORMAT: u32 = 1;

/// Why a manifest could not be read or written.
#[derive(Debug, Error)]
pub enum ManifestError {
    /// The file could not be read or written.
    #[error("cannot access {}", path.display())]
    Io {
        /// The manifest.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a manifest.
    #[error("{} is not a multi-target manifest", path.display())]
    Parse {
        /// The manifest.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A format this aba does not know (a newer aba wrote it).
    #[error("{} has manifest format {found}; this aba reads format {MANIFEST_FORMAT}", path.display())]
    Format {
        /// The manifest.
        path: PathBuf,
        /// The format it says.
        found: u32,
    },
    /// A name or a time holding a control character or too long to be aba's.
    #[error(
        "{} holds `{value}`, which aba never writes (a control character, or longer than \
         {MANIFEST_TEXT_LIMIT} characters)",
        path.display()
    )]
    Text {
        /// The manifest.
        path: PathBuf,
        /// The value, quoted and cut.
        value: String,
    },
    /// A subdirectory that is not a plain name inside the parent (a hand-edited manifest).
    #[error("{} names subdirectory `{dir}`, which is not a plain directory name", path.display())]
    Subdirectory {
        /// The manifest.
        path: PathBuf,
        /// The entry.
        dir: String,
    },
}

/// One target of a multi-target campaign.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    /// The target's inventory name (what `--target` said).
    pub target: String,
    /// Its campaign directory, relative to the parent: a plain name.
    pub dir: String,
}

/// `targets.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: u32,
    /// The recipe's name.
    pub recipe: String,
    /// When the run started (RFC 3339).
    pub created: String,
    /// The aba version that started it.
    pub aba_version: String,
    /// The targets in command-line order.
    pub targets: Vec<Member>,
}

impl Manifest {
    /// `dir/targets.json`.
    #[must_use]
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(MANIFEST)
    }

    /// Whether `dir` is a multi-target parent: it has a manifest. A single campaign's
    /// directory never has one, so every command keeps treating those exactly as before.
    #[must_use]
    pub fn is_parent(dir: &Path) -> bool {
        Manifest::path_in(dir).is_file()
    }

    /// Reads and checks `dir/targets.json`.
    pub fn read(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = Manifest::path_in(dir);
        // Bounded and regular only, like every file aba reads back (`crate::input`): a FIFO
        // or a huge file put there is refused, never waited on or held in memory.
        let text =
            crate::input::read_text(&path, crate::input::CONFIG_LIMIT, "multi-target manifest")
                .map_err(|source| ManifestError::Io {
                    path: path.clone(),
                    source,
                })?;
        // The format is checked before the fields, so a newer manifest with fields this aba
        // does not know is refused for its format, not for a field.
        #[derive(Deserialize)]
        struct Format {
            format: u32,
        }
        let format: Format =
            serde_json::from_str(&text).map_err(|source| ManifestError::Parse {
                path: path.clone(),
                source,
            })?;
        if format.format != MANIFEST_FORMAT {
            return Err(ManifestError::Format {
                path,
                found: format.format,
            });
        }
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|source| ManifestError::Parse {
                path: path.clone(),
                source,
            })?;
        if let Some(bad) = manifest.targets.iter().find(|m| !plain_name(&m.dir)) {
            return Err(ManifestError::Subdirectory {
                path,
                dir: crate::text::quoted(&bad.dir),
            });
        }
        // Every field is printed by `status`, `verify` and the combined report: what aba
        // writes is a short line of text, anything else is refused here, once.
        let fields = [&manifest.recipe, &manifest.created, &manifest.aba_version]
            .into_iter()
            .chain(manifest.targets.iter().map(|m| &m.target));
        for field in fields {
            if crate::text::control_char(field, &[]).is_some()
                || field.chars().count() > MANIFEST_TEXT_LIMIT
            {
                return Err(ManifestError::Text {
                    path,
                    value: crate::text::quoted(field),
                });
            }
        }
        Ok(manifest)
    }

    /// Writes `dir/targets.json` atomically.
    pub fn write(&self, dir: &Path) -> Result<(), ManifestError> {
        let path = Manifest::path_in(dir);
        let mut text =
            serde_json::to_string_pretty(self).map_err(|source| ManifestError::Parse {
                path: path.clone(),
                source,
            })?;
        text.push('\n');
        crate::results::atomic::write_atomic(&path, text.as_bytes())
            .map_err(|source| ManifestError::Io { path, source })
    }

    /// Each target with its campaign directory.
    pub fn members<'a>(&'a self, parent: &'a Path) -> impl Iterator<Item = (&'a Member, PathBuf)> {
        self.targets.iter().map(move |m| (m, parent.join(&m.dir)))
    }
}

/// A single path component that stays inside the parent.
fn plain_name(dir: &str) -> bool {
    !dir.is_empty()
        && dir != "."
        && dir != ".."
        && !dir.contains('/')
        && !dir.contains('\\')
        && !dir.contains('\0')
}

/// The subdirectory names for `targets`: each name made path-safe; `None` when two would
/// share one (names that differ only in characters a path cannot hold).
#[must_use]
pub fn subdirectories(targets: &[String]) -> Option<Vec<String>> {
    let dirs: Vec<String> = targets
        .iter()
        .map(|t| crate::results::layout::path_safe(t))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    // `targets.json` and the combined report's files live beside the subdirectories.
    let reserved = ["report.txt", "README.md", "targets.tsv", MANIFEST];
    dirs.iter()
        .all(|d| plain_name(d) && !reserved.contains(&d.as_str()) && seen.insert(d.clone()))
        .then_some(dirs)
}

#[cfg(test)]
mod tests {
    use super::{MANIFEST_FORMAT, Manifest, ManifestError, Member, subdirectories};

    fn manifest() -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            recipe: "r".to_owned(),
            created: "2026-12-02T06:00:00Z".to_owned(),
            aba_version: "0.1.0".to_owned(),
            targets: vec![
                Member {
                    target: "a".to_owned(),
                    dir: "a".to_owned(),
                },
                Member {
                    target: "b".to_owned(),
                    dir: "b".to_owned(),
                },
            ],
        }
    }

    #[test]
    fn a_manifest_round_trips_and_marks_its_directory_as_a_parent() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(!Manifest::is_parent(tmp.path()));
        manifest().write(tmp.path()).expect("write");
        assert!(Manifest::is_parent(tmp.path()));
        assert_eq!(Manifest::read(tmp.path()).expect("read"), manifest());
    }

    #[test]
    fn a_newer_format_or_an_escaping_subdirectory_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Manifest::path_in(tmp.path());
        std::fs::write(&path, r#"{"format": 2, "whatever": true}"#).expect("write");
        assert!(matches!(
            Manifest::read(tmp.path()),
            Err(ManifestError::Format { found: 2, .. })
        ));
        let mut bad = manifest();
        bad.targets[1].dir = "../elsewhere".to_owned();
        bad.write(tmp.path()).expect("write");
        let err = Manifest::read(tmp.path()).expect_err("escapes");
        assert!(err.to_string().contains("../elsewhere"), "{err}");
    }

    #[test]
    fn subdirectories_are_path_safe_and_distinct() {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            subdirectories(&names(&["box", "lab/2"])),
            Some(names(&["box", "lab_2"]))
        );
        assert_eq!(subdirectories(&names(&["lab/2", "lab_2"])), None);
        assert_eq!(subdirectories(&names(&["README.md"])), None);
    }
}
