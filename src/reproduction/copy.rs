//! A results directory's own copy of its recipe's reference (`<results>/reference/`): the
//! evidence bundle carries what it was compared with, and `aba report` and `aba resume` redo
//! the comparison offline, whatever became of the original.
//!
//! Only what a comparison reads is copied: an aba results directory's raw files (recipe and
//! `files/`, journal, samples, environment records; never its reports or raw outputs), or a
//! bundle's points and comparison files with the `run-audit.tsv` and `source-identity.tsv`
//! beside them; or a summary reference's mapping file and the tables it names.
//!
//! A reference is someone else's folder: a link in it could name any file of this machine (a
//! key, a 0600 secret) and copying it would publish that file in the bundle. Links are never
//! followed: [`reference_files`] refuses the first it meets, naming it, and `aba check`, `aba
//! run` and `aba compare` call it before they read the reference.

use std::path::{Path, PathBuf};

use crate::{
    reproduction::{
        bundle::{COMPARISON_SUFFIX, POINTS_SUFFIX, locate, points_files},
        bundle_audit::{RUN_AUDIT, SOURCE_IDENTITY},
        error::ReproductionError,
        kind::{Kind, kind},
        summary::{self, is_mapping},
    },
    results::layout::ResultsDir,
};

/// One regular file of a reference: where it is, and its path inside the copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceFile {
    /// The file in the reference.
    pub from: PathBuf,
    /// Its path relative to the copy's folder.
    pub to: PathBuf,
}

/// The files of the reference at `source` that a copy holds; [`ReproductionError::Link`] for
/// the first symbolic link among them or among the folders that hold them. The path named
/// (`source` itself) may be a link: the user or the recipe chose it.
pub fn reference_files(source: &Path) -> Result<Vec<ReferenceFile>, ReproductionError> {
    if is_mapping(source) {
        return summary_files(source);
    }
    let mut files = Vec::new();
    match kind(source)? {
        Kind::Results => {
            let results = ResultsDir::open(source);
            for file in [
                results.recipe_path(),
                results.journal_path(),
                results.samples_path(),
            ] {
                if regular_not_link(&file)? {
                    let to = PathBuf::from(file.file_name().expect("invariant: a file name"));
                    files.push(ReferenceFile { from: file, to });
                }
            }
            for dir in [results.files_dir(), results.env_dir()] {
                let to = PathBuf::from(dir.file_name().expect("invariant: a folder name"));
                walk_tree(&dir, &to, &mut files)?;
            }
        }
        Kind::Bundle => {
            for points in points_files(source) {
                let name = points
                    .file_name()
                    .expect("invariant: a file name")
                    .to_string_lossy()
                    .into_owned();
                // A single points file named on the command line may itself be a link.
                if points != source {
                    regular_not_link(&points)?;
                }
                let stem = name.trim_end_matches(POINTS_SUFFIX).to_owned();
                files.push(ReferenceFile {
                    from: points.clone(),
                    to: PathBuf::from(&name),
                });
                let comparison = format!("{stem}{COMPARISON_SUFFIX}");
                let from = points.with_file_name(&comparison);
                if regular_not_link(&from)? {
                    files.push(ReferenceFile {
                        from,
                        to: PathBuf::from(comparison),
                    });
                }
            }
            // The per-experiment tables beside the points (releases, semantic failures,
            // build identities), which a comparison reads too.
            let Some(folder) = locate(source)?.map(|l| l.folder) else {
                return Ok(files);
            };
            if folder != source && !source.is_file() {
                // Found one level down: that folder must not be a link either.
                regular_dir_not_link(&folder)?;
            }
            for name in [RUN_AUDIT, SOURCE_IDENTITY] {
                let from = folder.join(name);
                if regular_not_link(&from)? {
                    files.push(ReferenceFile {
                        from,
                        to: PathBuf::from(name),
                    });
                }
            }
        }
    }
    Ok(files)
}

/// A summary reference's files: the mapping under its own name, and each table it names at
/// the path the mapping gives it (inside the mapping's folder, reached through no link:
/// [`summary::read`] refuses any other), so the copy reads as the original does.
fn summary_files(mapping: &Path) -> Result<Vec<ReferenceFile>, ReproductionError> {
    let read = summary::read(mapping)?;
    let name =
        PathBuf::from(
            mapping
                .file_name()
                .ok_or_else(|| ReproductionError::NotEvidence {
                    path: mapping.to_path_buf(),
                })?,
        );
    let folder = crate::input::folder_of(mapping);
    let mut files = vec![ReferenceFile {
        from: mapping.to_path_buf(),
        to: name.clone(),
    }];
    for table in read.files {
        let to = PathBuf::from(&table);
        if to != name {
            files.push(ReferenceFile {
                from: folder.join(&table),
                to,
            });
        }
    }
    Ok(files)
}

/// Copies the reference at `source` into `dest` (created), without following any link in it.
pub fn copy_reference(source: &Path, dest: &Path) -> Result<(), ReproductionError> {
    let fail = |from: &Path, error: std::io::Error| ReproductionError::Copy {
        from: from.to_path_buf(),
        to: dest.to_path_buf(),
        source: error,
    };
    let files = reference_files(source)?;
    std::fs::create_dir_all(dest).map_err(|e| fail(source, e))?;
    for file in files {
        let to = dest.join(&file.to);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail(&file.from, e))?;
        }
        copy_regular(&file.from, &to).map_err(|e| fail(&file.from, e))?;
    }
    Ok(())
}

/// Copies the regular file `from` (opened without following a link: one swapped in since it
/// was listed is refused) to the new file `to`.
pub(crate) fn copy_regular(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut input = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(from)?;
    if !input.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    let mut output = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(to)?;
    std::io::copy(&mut input, &mut output)?;
    Ok(())
}

/// Whether `path` is a regular file; `false` when it is missing or something else (a folder,
/// a FIFO: not copied); [`ReproductionError::Link`] when it is a link.
fn regular_not_link(path: &Path) -> Result<bool, ReproductionError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(ReproductionError::Link {
            path: path.to_path_buf(),
        }),
        Ok(meta) => Ok(meta.is_file()),
        Err(_) => Ok(false),
    }
}

/// [`ReproductionError::Link`] when the folder `path` is a link.
fn regular_dir_not_link(path: &Path) -> Result<(), ReproductionError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(ReproductionError::Link {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// Lists the regular files under `from` (as `to/...`), folders included; a link anywhere is
/// [`ReproductionError::Link`]. A missing folder lists nothing.
fn walk_tree(
    from: &Path,
    to: &Path,
    files: &mut Vec<ReferenceFile>,
) -> Result<(), ReproductionError> {
    match std::fs::symlink_metadata(from) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(ReproductionError::Link {
                path: from.to_path_buf(),
            });
        }
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok(()),
    }
    let unreadable = |source| ReproductionError::Unreadable {
        path: from.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(unreadable)?
        .collect::<Result<_, _>>()
        .map_err(unreadable)?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let target = to.join(entry.file_name());
        let file_type = entry.file_type().map_err(unreadable)?;
        if file_type.is_symlink() {
            return Err(ReproductionError::Link { path });
        } else if file_type.is_dir() {
            walk_tree(&path, &target, files)?;
        } else if file_type.is_file() {
            files.push(ReferenceFile {
                from: path,
                to: target,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::copy_reference;

    #[test]
    fn a_bundle_copies_its_tables_and_a_results_directory_its_raw_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let bundle = tmp.path().join("bundle");
        std::fs::create_dir(&bundle).expect("mkdir");
        for name in [
            "x-points.tsv",
            "x-comparison.tsv",
            "run-audit.tsv",
            "README.md",
        ] {
            std::fs::write(bundle.join(name), "a\n").expect("write");
        }
        let dest = tmp.path().join("copy");
        copy_reference(&bundle.join("x-points.tsv"), &dest).expect("copied");
        let mut names: Vec<String> = std::fs::read_dir(&dest)
            .expect("listed")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["run-audit.tsv", "x-comparison.tsv", "x-points.tsv"]);

        let results = tmp.path().join("results");
        std::fs::create_dir_all(results.join("files/sub")).expect("mkdir");
        std::fs::create_dir_all(results.join("raw/b-1")).expect("mkdir");
        for name in [
            "journal.jsonl",
            "recipe.toml",
            "report.txt",
            "files/sub/w.c",
        ] {
            std::fs::write(results.join(name), "x\n").expect("write");
        }
        let dest = tmp.path().join("copy2");
        copy_reference(&results, &dest).expect("copied");
        assert!(dest.join("journal.jsonl").is_file() && dest.join("files/sub/w.c").is_file());
        assert!(!dest.join("report.txt").exists() && !dest.join("raw").exists());
    }
}
