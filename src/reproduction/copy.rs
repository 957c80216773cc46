//! A results directory's own copy of its recipe's reference (`<results>/reference/`): the
//! evidence bundle carries what it was compared with, and `aba report` and `aba resume` redo
//! the comparison offline, whatever became of the original.
//!
//! Only what a comparison reads is copied: an aba results directory's raw files (recipe and
//! `files/`, journal, samples, environment records; never its reports or raw outputs), or a
//! bundle's points and comparison files.

use std::path::Path;

use crate::{
    reproduction::{
        bundle::{COMPARISON_SUFFIX, POINTS_SUFFIX, points_files},
        error::ReproductionError,
        source::{Kind, kind},
    },
    results::layout::ResultsDir,
};

/// Copies the reference at `source` into `dest` (created).
pub fn copy_reference(source: &Path, dest: &Path) -> Result<(), ReproductionError> {
    let fail = |from: &Path| {
        let from = from.to_path_buf();
        move |error: std::io::Error| ReproductionError::Copy {
            from,
            to: dest.to_path_buf(),
            source: error,
        }
    };
    std::fs::create_dir_all(dest).map_err(fail(source))?;
    match kind(source)? {
        Kind::Results => {
            let results = ResultsDir::open(source);
            for file in [
                results.recipe_path(),
                results.journal_path(),
                results.samples_path(),
            ] {
                if file.is_file() {
                    let to = dest.join(file.file_name().expect("invariant: a file name"));
                    std::fs::copy(&file, to).map_err(fail(&file))?;
                }
            }
            for dir in [results.files_dir(), results.env_dir()] {
                if dir.is_dir() {
                    let to = dest.join(dir.file_name().expect("invariant: a folder name"));
                    copy_tree(&dir, &to).map_err(fail(&dir))?;
                }
            }
        }
        Kind::Bundle => {
            for points in points_files(source) {
                let name = points
                    .file_name()
                    .expect("invariant: a file name")
                    .to_string_lossy()
                    .into_owned();
                std::fs::copy(&points, dest.join(&name)).map_err(fail(&points))?;
                let stem = name.trim_end_matches(POINTS_SUFFIX);
                let comparison = points.with_file_name(format!("{stem}{COMPARISON_SUFFIX}"));
                if comparison.is_file() {
                    let to = dest.join(format!("{stem}{COMPARISON_SUFFIX}"));
                    std::fs::copy(&comparison, to).map_err(fail(&comparison))?;
                }
            }
        }
    }
    Ok(())
}

/// Copies the regular files under `from` into `to`, folders included.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else if path.is_file() {
            std::fs::copy(&path, &target)?;
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
        for name in ["x-points.tsv", "x-comparison.tsv", "README.md"] {
            std::fs::write(bundle.join(name), "a\n").expect("write");
        }
        let dest = tmp.path().join("copy");
        copy_reference(&bundle.join("x-points.tsv"), &dest).expect("copied");
        let mut names: Vec<String> = std::fs::read_dir(&dest)
            .expect("listed")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["x-comparison.tsv", "x-points.tsv"]);

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
