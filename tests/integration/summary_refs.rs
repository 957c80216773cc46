//! Summary references (issue 34 item 1): published tables of means, in the layouts the
//! public evidence bundles use (a row per point, as the tmpfs bundle's point-summary.csv; a
//! row per metric with a column per kernel, as the fsnotify summaries), read through a
//! mapping file and judged by the new campaign's interval alone. The tables here are this
//! test's own numbers in those layouts (the bundles carry no licence).

use std::fs;

use crate::{
    report::golden_results::build,
    support::cli::{aba, text},
};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A row per point: parent twice, child once, and an older release the mapping leaves out.
fn point_summary(child: f64) -> String {
    format!(
        "point,kernel,rows,mean_ns_per_page,cv_pct\nv70-a,7.0.14,15,30.000000,0.5\n\
         parent-a,6.16-p,15,35.500000,1.1\nchild,6.16-c,15,{child:.6},0.9\n\
         parent-b,6.16-p,15,35.740000,1.2\n"
    )
}

const ROWS_MAP: &str = "version = 1\ndescription = \"mprotect, the exact A/B, as a point summary\"\n\
    [[series]]\nworkload = \"mprotect\"\nmetric = \"iteration_ns_per_page\"\n\
    file = \"point-summary.csv\"\nkernel = \"point\"\nmean = \"mean_ns_per_page\"\n\
    kernels = { parent-a = \"parent\", parent-b = \"parent\", child = \"child\" }\n";

/// exact-cac1 (child +39.77 %, boot-level 95 % interval +29.18 .. +51.22 %, SIGNAL) against
/// three published point summaries: the same change (REPRODUCED), a smaller one in the same
/// direction (DIFFERENT), none (NOT_REPRODUCED, exit 4); each text says the reference
/// publishes means only, names the rows it used and the ones it did not.
#[test]
fn a_point_summary_is_judged_by_the_new_campaigns_interval() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-exact-cac1", &tmp.path().join("exact"));
    let reference = tmp.path().join("published");
    fs::create_dir(&reference).expect("mkdir");
    fs::write(reference.join("map.toml"), ROWS_MAP).expect("write");
    // Parent midpoint 35.62: child 49.79 is +39.78 %, 40.00 is +12.30 %, 35.00 is -1.74 %.
    for (child, published, verdict, code) in [
        (49.79, "+39.78%", "REPRODUCED", 0),
        (40.0, "+12.30%", "DIFFERENT", 0),
        (35.0, "-1.74%", "NOT_REPRODUCED", 4),
    ] {
        fs::write(reference.join("point-summary.csv"), point_summary(child)).expect("write");
        let out = aba(
            tmp.path(),
            &["compare", "exact", "published/map.toml", "--tsv", "s.tsv"],
        );
        assert_eq!(out.status.code(), Some(code), "{}", text(&out));
        let printed = stdout(&out);
        assert!(
            printed.lines().all(|l| l.chars().count() <= 72),
            "{printed}"
        );
        let said = flat(&printed);
        for phrase in [
            &format!("exact against the summary reference published/map.toml: 1 {verdict}"),
            "The reference: mprotect, the exact A/B, as a point summary",
            "The reference publishes means only (no samples, no spread per boot): each published \
             change is judged against this campaign's 95% interval alone.",
            "mprotect/iteration_ns_per_page in ns/page (point-summary.csv): against kernel parent",
            &format!(
                "child: published {published} from the means below; this campaign +39.77% (SIGNAL, boot-level 95% interval +29.18%..+51.22%): {verdict}"
            ),
            "parent 35.620000 (the mean of parent-a (line 3), parent-b (line 5))",
            "Not used from point-summary.csv (no kernel in `kernels`): v70-a.",
        ] {
            assert!(said.contains(phrase), "{phrase:?} not in:\n{printed}");
        }
        let tsv = fs::read_to_string(tmp.path().join("s.tsv")).expect("tsv");
        let row: Vec<&str> = tsv.lines().nth(1).expect("a row").split('\t').collect();
        assert_eq!(
            (row[1], row[2], row[9]),
            ("child", "parent", verdict),
            "{tsv}"
        );
        assert_eq!(row[7], "boot-level");
    }
}

/// A row per metric, a column per kernel (the fsnotify summaries' layout), as JSON; a row
/// the mapping names twice is refused with both lines, a cell that is not a number with its
/// file, line and column.
#[test]
fn a_wide_summary_and_its_mistakes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-exact-cac1", &tmp.path().join("exact"));
    let reference = tmp.path().join("published");
    fs::create_dir(&reference).expect("mkdir");
    fs::write(
        reference.join("exact-ab-summary.tsv"),
        "metric\tparent_a\tchild\tparent_b\tchild_vs_parent_a_pct\n\
         iteration_ns_per_page\t35.5\t49.79\t35.74\t40.25\nother\t1\t2\t3\t100\n",
    )
    .expect("write");
    let map = "version = 1\n[[series]]\nworkload = \"mprotect\"\nmetric = \"iteration_ns_per_page\"\n\
               file = \"exact-ab-summary.tsv\"\nrow = { metric = \"iteration_ns_per_page\" }\n\
               kernels = { parent_a = \"parent\", parent_b = \"parent\", child = \"child\" }\n";
    fs::write(reference.join("wide.toml"), map).expect("write");
    let out = aba(
        tmp.path(),
        &["compare", "exact", "published/wide.toml", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["kind"], "compare_summary");
    let c = &doc["series"][0]["candidates"][0];
    assert_eq!(c["verdict"], "Reproduced", "{doc}");
    assert!((c["published_pct"].as_f64().expect("a number") - 39.7810).abs() < 1e-3);

    fs::write(
        reference.join("exact-ab-summary.tsv"),
        "metric\tparent_a\tchild\tparent_b\niteration_ns_per_page\t35.5\tslow\t35.74\n",
    )
    .expect("write");
    let out = aba(tmp.path(), &["compare", "exact", "published/wide.toml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("exact-ab-summary.tsv:2:3"), "{err}");
    assert!(err.contains("`child` is `slow`, not a number"), "{err}");
    fs::write(
        reference.join("exact-ab-summary.tsv"),
        "metric\tparent_a\tchild\tparent_b\niteration_ns_per_page\t1\t2\t3\niteration_ns_per_page\t1\t2\t3\n",
    )
    .expect("write");
    let out = aba(tmp.path(), &["compare", "exact", "published/wide.toml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("wide.toml:6:18"), "{err}");
    assert!(
        err.contains("2 rows of") && err.contains("(lines 2, 3); it must select one"),
        "{err}"
    );
}
