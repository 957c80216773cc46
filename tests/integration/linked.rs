//! `aba report A B --together`: two campaigns of one question (issue 34 item 4, the tmpfs
//! bundle's production-config and exact-config A/Bs) in one report, each with its own
//! verdicts, from the committed results fixtures.

use std::fs;

use crate::{
    report::golden_results::build,
    support::cli::{aba, text},
};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// exact-cac1 (+39.77 %, SIGNAL) and pedro-v3 (+6.20 %, INCONCLUSIVE), two campaigns of
/// the mprotect question: one report, each campaign's own change and verdict, and that they
/// disagree; every campaign's own reports rewritten; the files written only into OUT.
#[test]
fn two_campaigns_of_one_question_in_one_report_each_with_its_verdict() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-exact-cac1", &tmp.path().join("exact"));
    build("mprotect-pedro-v3", &tmp.path().join("pedro"));
    for dir in ["exact", "pedro"] {
        let _ = fs::remove_file(tmp.path().join(dir).join("report.txt"));
    }
    let out = aba(
        tmp.path(),
        &["report", "exact", "pedro", "--together", "--to", "linked"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let printed = stdout(&out);
    let written = fs::read_to_string(tmp.path().join("linked/report.txt")).expect("report.txt");
    assert_eq!(printed, written);
    assert!(
        written.lines().all(|l| l.chars().count() <= 72),
        "{written}"
    );
    let words = written.split_whitespace().collect::<Vec<_>>().join(" ");
    for phrase in [
        "2 linked campaigns of one question: exact, pedro (recipes: mprotect-exact-cac1, mprotect-pedro-v3)",
        "Each campaign keeps its own recipe, limits and verdicts; nothing here pools them.",
        "Changes per campaign",
        "mprotect/iteration_ns_per_page (ns/page, lower is better): child against parent",
        "exact +39.77% +29.18%..+51.22%",
        "pedro +6.20% -14.25%..+29.96%",
        "campaigns disagree (environments not known to be the same): exact slower SIGNAL; pedro slower INCONCLUSIVE",
    ] {
        assert!(words.contains(phrase), "{phrase:?} not in:\n{written}");
    }
    // Each campaign's own reports, rewritten as `aba report DIR` writes them.
    for dir in ["exact", "pedro"] {
        assert!(tmp.path().join(dir).join("report.txt").is_file(), "{dir}");
    }
    let tsv = fs::read_to_string(tmp.path().join("linked/linked.tsv")).expect("linked.tsv");
    let mut lines = tsv.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    assert_eq!(header[4], "campaign");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "{tsv}");
    assert_eq!((rows[0][4], rows[0][13]), ("exact", "SIGNAL"));
    assert_eq!((rows[1][4], rows[1][13]), ("pedro", "INCONCLUSIVE"));
    assert!(rows.iter().all(|r| r[14] == "disagree"), "{tsv}");
    assert!(
        fs::read_to_string(tmp.path().join("linked/README.md"))
            .expect("README")
            .contains("# 2 linked campaigns")
    );

    // The JSON: the combined analysis and each campaign's own report.
    let out = aba(
        tmp.path(),
        &["report", "exact", "pedro", "--together", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["kind"], "linked_report");
    assert_eq!(doc["combined"]["grouping"], "campaigns");
    let campaigns = doc["campaigns"].as_array().expect("campaigns");
    assert_eq!(campaigns.len(), 2);
    assert_eq!(campaigns[0]["campaign"], "exact");
    assert_eq!(campaigns[1]["report"]["kind"], "report");
}

/// What --together refuses, each with how to say it instead: one directory, several
/// without it, OUT that is not new or empty, a multi-target parent.
#[test]
fn linked_reports_refuse_what_they_cannot_put_side_by_side() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-exact-cac1", &tmp.path().join("exact"));
    build("mprotect-pedro-v3", &tmp.path().join("pedro"));
    let alone = aba(tmp.path(), &["report", "exact", "--together"]);
    assert_eq!(alone.status.code(), Some(1), "{}", text(&alone));
    assert!(
        stderr(&alone).contains("--together links two or more campaigns; one was given"),
        "{}",
        text(&alone)
    );
    let two = aba(tmp.path(), &["report", "exact", "pedro"]);
    assert_eq!(two.status.code(), Some(1), "{}", text(&two));
    assert!(
        stderr(&two).contains("2 directories were given; one report is of one campaign"),
        "{}",
        text(&two)
    );
    assert!(
        stderr(&two).contains("aba report A B --together"),
        "{}",
        text(&two)
    );
    fs::create_dir(tmp.path().join("full")).expect("mkdir");
    fs::write(tmp.path().join("full/keep"), "mine").expect("write");
    let full = aba(
        tmp.path(),
        &["report", "exact", "pedro", "--together", "--to", "full"],
    );
    assert_eq!(full.status.code(), Some(1), "{}", text(&full));
    assert!(
        stderr(&full)
            .contains("is not empty; a linked report is written into a new or empty folder"),
        "{}",
        text(&full)
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("full/keep")).expect("kept"),
        "mine"
    );
    let to_alone = aba(tmp.path(), &["report", "exact", "--to", "out"]);
    assert_eq!(
        to_alone.status.code(),
        Some(2),
        "clap: --to requires --together"
    );
}
