//! Results directories are user data: what an older aba wrote must stay readable. The frozen
//! aba 0.1 directories in `tests/fixtures/results-v0.1/` are reported, verified and shown by
//! today's aba, with the same figures as the same campaign written today.

use std::{fs, path::Path};

use crate::{
    report::golden_results::{build, fixtures_dir},
    support::cli::{aba, assert_verified, text},
};

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("fixture") {
        let entry = entry.expect("entry");
        fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

#[test]
fn an_aba_0_1_directory_reports_the_same_figures_and_verifies() {
    let legacy = fixtures_dir()
        .parent()
        .expect("fixtures")
        .join("results-v0.1/exact-cac1-audit");
    let tmp = tempfile::tempdir().expect("tempdir");
    // The same directory name in both, as the reports name their directory.
    let old = tmp.path().join("old/exact-cac1-audit");
    copy_dir(&legacy, &old);
    let new = tmp.path().join("new/exact-cac1-audit");
    build("exact-cac1-audit", &new);
    for dir in [&old, &new] {
        // From the directory's parent, as the reports' Reproduce line names it.
        let parent = dir.parent().expect("parent");
        let out = aba(parent, &["report", "exact-cac1-audit"]);
        assert!(out.status.success(), "{}", text(&out));
        assert_verified(dir);
        let status = aba(tmp.path(), &["status", dir.to_str().expect("utf-8")]);
        assert!(status.status.success(), "{}", text(&status));
    }
    // Its journal holds no values: verify says what it could not check.
    let said = text(&aba(tmp.path(), &["verify", old.to_str().expect("utf-8")]));
    assert!(
        said.contains(
            "note: the journal records no values: samples.csv cannot be verified value by value (written by an older aba)"
        ),
        "{said}"
    );
    for file in [
        "points.tsv",
        "comparison.tsv",
        "run-audit.tsv",
        "report.txt",
    ] {
        let read = |d: &Path| fs::read_to_string(d.join(file)).expect("report file");
        assert_eq!(
            read(&old),
            read(&new),
            "{file} differs between aba 0.1's directory and today's"
        );
    }
    // The old directory is untouched apart from the reports written into it.
    for raw in ["journal.jsonl", "samples.csv", "recipe.toml"] {
        assert_eq!(
            fs::read(legacy.join(raw)).expect("fixture"),
            fs::read(old.join(raw)).expect("copy"),
            "{raw} was modified"
        );
    }
}

/// `aba resume` on a finished aba 0.1 directory says so and rewrites only the reports; a
/// `switching` record as aba 0.1 spelled a GRUB switch (`grubreboot`) still reads.
#[test]
fn an_aba_0_1_directory_resumes_as_finished_and_its_switch_spelling_reads() {
    let legacy = fixtures_dir()
        .parent()
        .expect("fixtures")
        .join("results-v0.1/exact-cac1-audit");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("exact-cac1-audit");
    copy_dir(&legacy, &dir);
    let journal = fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    let (first, rest) = journal.split_once('\n').expect("a header line");
    let (started, rest) = rest.split_once('\n').expect("a point_started line");
    assert!(started.contains("\"point_started\""), "{started}");
    fs::write(
        dir.join("journal.jsonl"),
        format!(
            "{first}\n{started}\n{{\"event\":\"switching\",\"point\":\"parent-a\",\"attempt\":1,\"method\":\"grubreboot\",\"previous_boot_id\":null}}\n{rest}"
        ),
    )
    .expect("write");
    let out = aba(tmp.path(), &["resume", dir.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is already finished"),
        "{}",
        text(&out)
    );
    assert!(dir.join("report.txt").is_file());
    assert_verified(&dir);
    for raw in ["samples.csv", "recipe.toml"] {
        assert_eq!(
            fs::read(legacy.join(raw)).expect("fixture"),
            fs::read(dir.join(raw)).expect("copy"),
            "{raw} was modified"
        );
    }
}
