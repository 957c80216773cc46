//! `aba compare NEW REFERENCE` through the real binary: real campaigns on the built-in `local`
//! target (the quickstart twice; A/B/A/B/A campaigns whose candidate moves by a chosen factor,
//! one workload per reproduction verdict), campaigns written with aba's own writers for
//! snapshots of the text and the TSV, a results fixture against a published bundle in
//! lcf0399/linux-regression-evidence's layout (generated from the golden data), the aba 0.1
//! directory as a reference, a recipe whose `[expect] reference` makes `aba run` end with the
//! comparison, and the refusals: not a results directory, nothing in common.

use std::{
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
    process::Output,
};

use crate::{
    report::golden_results::{
        Attempt, Campaign, boot_id, build, fixtures_dir, golden_case, golden_points,
    },
    support::{
        cli::{aba, assert_verified, campaign_dir, reproduce_command, text, write},
        report_oracle,
    },
};

/// `aba compare ARGS…` in `cwd`.
fn compare(cwd: &Path, args: &[&str]) -> Output {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    aba(cwd, &all)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Prose is wrapped at 72 columns: compare with runs of whitespace collapsed.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[track_caller]
fn fits_a_mail(text: &str) {
    for line in text.lines() {
        assert!(line.chars().count() <= 72, "over 72 columns: {line}");
    }
}

/// The `reproduction` rows of a TSV: `args` → label, for `workload`.
fn verdicts(tsv: &str) -> Vec<(String, String)> {
    tsv.lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|c| c.len() == 8 && c[5] == "reproduction")
        .map(|c| (c[0].to_owned(), c[7].to_owned()))
        .collect()
}

/// One workload of a synthetic or real campaign: its name, the candidate's mean over the
/// baseline's, the within-boot CV in percent, and whether it is a control.
#[derive(Clone, Copy)]
struct Moving {
    name: &'static str,
    factor: f64,
    cv_pct: f64,
    control: bool,
}

const fn moving(name: &'static str, factor: f64) -> Moving {
    Moving {
        name,
        factor,
        cv_pct: 0.3,
        control: false,
    }
}

/// Boot-to-boot offsets of the five boots, per mille; `shift` rotates them so that two
/// campaigns of the same truth differ like two real ones.
const BOOTS: [f64; 5] = [0.0, 1.0, 1.5, -0.5, -1.0];
/// Within-boot pattern of the five samples, in units of the CV.
const SAMPLES: [f64; 5] = [-1.2, 0.6, 1.1, -0.4, -0.1];

fn recipe(name: &str, workloads: &[Moving], run: impl Fn(&Moving) -> String) -> String {
    let mut text = format!(
        "version = 1\nname = \"{name}\"\ndescription = \"the candidate moves by a chosen factor\"\n\
         sequence = [\"a\", \"b\", \"a\", \"b\", \"a\"]\nwarmup = 0\nsamples = 5\n\n\
         [kernels.a]\nrelease = \"running\"\n\n[kernels.b]\nrelease = \"running\"\n"
    );
    for w in workloads {
        let _ = write!(
            text,
            "\n[[workload]]\nname = \"{}\"\nrun = '''\n{}\n'''\n{}metric = {{ number = true, unit = \"ns\", better = \"lower\" }}\n",
            w.name,
            run(w),
            if w.control {
                "role = \"control\"\n"
            } else {
                ""
            }
        );
    }
    text
}

/// A finished A/B/A/B/A campaign on target `lab1`, written with aba's own journal and samples
/// writers: exactly what the engine leaves behind, with values fixed by `workloads`.
fn synthetic(dest: &Path, name: &str, workloads: &[Moving], shift: usize) {
    fs::create_dir_all(dest).expect("mkdir");
    let recipe = recipe(name, workloads, |_| "./workload".to_owned()).replace(
        "release = \"running\"",
        "release = \"6.1.0-47-cloud-amd64\"",
    );
    let kernels = ["a", "b", "a", "b", "a"];
    let labels = ["a-a", "b-a", "a-b", "b-b", "a-c"].map(str::to_owned);
    let mut w = Campaign::create(dest, &recipe, "lab1", &labels);
    for (i, (label, kernel)) in labels.iter().zip(kernels).enumerate() {
        let order = i + 1;
        let boot = boot_id(u32::try_from(order).expect("small"));
        let at = Attempt {
            point: label,
            order,
            attempt: 1,
            kernel,
            release: "6.1.0-47-cloud-amd64",
            boot_id: &boot,
        };
        w.begin(&at);
        for m in workloads {
            let factor = if kernel == "b" { m.factor } else { 1.0 };
            let boot_mean = 100.0 * factor * (1.0 + BOOTS[(i + shift) % 5] / 1000.0);
            let values: Vec<f64> = SAMPLES
                .iter()
                .map(|z| boot_mean * (1.0 + m.cv_pct / 100.0 * z))
                .collect();
            w.samples(
                &at,
                m.name,
                m.name,
                "ns",
                aba::results::samples::Phase::Sample,
                &values,
            );
        }
        w.done(label, 1, 0, &[]);
    }
    w.finish();
}

/// One workload per verdict, the reference's truth and the new one's.
fn verdict_workloads() -> (Vec<Moving>, Vec<Moving>) {
    let control = Moving {
        control: true,
        ..moving("control", 1.0)
    };
    let shaky = |factor| Moving {
        cv_pct: 5.0,
        ..moving("shaky", factor)
    };
    let reference = vec![
        moving("steady", 1.2),
        moving("grown", 1.2),
        moving("gone", 1.2),
        shaky(1.2),
        control,
        moving("old", 1.1),
    ];
    let new = vec![
        moving("steady", 1.2),
        moving("grown", 1.4),
        moving("gone", 1.0),
        shaky(1.2),
        control,
        moving("added", 1.1),
    ];
    (reference, new)
}

#[test]
fn every_reproduction_verdict_with_snapshots_of_the_text_and_the_tsv() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (reference, new) = verdict_workloads();
    synthetic(&tmp.path().join("published"), "aba-study", &reference, 0);
    synthetic(&tmp.path().join("again"), "aba-study", &new, 2);
    // Relative paths from a fixed folder: the text names them, and snapshots must not
    // depend on where the temporary directory is.
    let out = compare(tmp.path(), &["again", "published", "--tsv", "again.tsv"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(stderr(&out).contains("NOT_REPRODUCED"), "{}", text(&out));
    let report = stdout(&out);
    fits_a_mail(&report);
    let tsv = fs::read_to_string(tmp.path().join("again.tsv")).expect("the TSV");
    report_oracle::check_reproduction(&stdout(&out), &tsv);
    let got = verdicts(&tsv);
    let want: Vec<(String, String)> = [
        ("steady", "REPRODUCED"),
        ("grown", "DIFFERENT"),
        ("gone", "NOT_REPRODUCED"),
        ("shaky", "INCONCLUSIVE"),
        ("control", "REPRODUCED"),
    ]
    .iter()
    .map(|(w, l)| ((*w).to_owned(), (*l).to_owned()))
    .collect();
    assert_eq!(got, want, "{report}");
    let said = flat(&report);
    for phrase in [
        "aba-study against the reference aba-study: 2 REPRODUCED, 1 DIFFERENT, 1 NOT_REPRODUCED, 1 INCONCLUSIVE",
        "steady: the b kernel was 19.91% slower than the mean of kernel a over 3 boots, \
         against 20.01% in the reference. REPRODUCED: both show the change",
        "grown: the b kernel was 39.90% slower than the mean of kernel a over 3 boots, \
         against 20.01% in the reference. DIFFERENT: the same direction",
        "NOT_REPRODUCED: the reference's SIGNAL is not there, and the changes differ by -20.08",
        "INCONCLUSIVE: the reference is UNSTABLE (max point CV",
        "control: the b kernel changed by -0.07% against the mean of kernel a over 3 boots \
         (NO_MATERIAL_SIGNAL), against +0.01% (NO_MATERIAL_SIGNAL) in the reference. \
         REPRODUCED: neither shows a material change",
        "Only in this campaign: added. Only in the reference: old.",
    ] {
        assert!(
            said.contains(phrase),
            "the text does not say {phrase:?}:\n{report}"
        );
    }
    insta::assert_snapshot!("every_verdict_text", report);
    insta::assert_snapshot!("every_verdict_tsv", tsv);

    // --json: the same comparison, every number unrounded.
    let out = compare(tmp.path(), &["again", "published", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    // The format and kind every --json document carries (docs/json.md).
    assert_eq!(json["format"], 1, "{json:#}");
    assert_eq!(json["kind"], "compare", "{json:#}");
    assert_eq!(json["counts"]["reproduced"], 2);
    assert_eq!(json["counts"]["not_reproduced"], 1);
    assert_eq!(
        json["series"][2]["candidates"][0]["verdict"]["rule"]["rule"],
        "signal_gone"
    );
    assert_eq!(json["only_reference"][0], "old");
    let steady = &json["series"][0]["candidates"][0];
    assert!(
        steady["verdict"]["ratio"]
            .as_f64()
            .is_some_and(|r| (r - 1.0).abs() < 0.01)
    );
}

/// The printed `Reproduce:` command, run by `sh` in `cwd` with `aba` as the built binary:
/// it must work from where the user stands, whatever the paths hold.
#[test]
fn the_reproduce_command_works_from_where_the_user_stands() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let workloads = [moving("steady", 1.2)];
    synthetic(
        &tmp.path().join("my results/again"),
        "moving",
        &workloads,
        2,
    );
    synthetic(&tmp.path().join("published"), "moving", &workloads, 0);
    let out = compare(tmp.path(), &["my results/again", "published"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = flat(&stdout(&out));
    let command = reproduce_command(&said);
    assert_eq!(command, "aba compare 'my results/again' published");
    let again = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("aba() {{ \"$ABA\" \"$@\"; }}; {command}"))
        .current_dir(tmp.path())
        .env("ABA", crate::support::cli::aba_bin())
        .env_remove("ABA_TARGETS")
        .env_remove("ABA_RESULTS")
        .output()
        .expect("sh runs");
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert_eq!(stdout(&again), stdout(&out));
}

/// The published layout of lcf0399/linux-regression-evidence for golden `cases`, transcribed
/// from `tests/fixtures/golden/`: `<stem>-points.tsv` (point statistics printed with 6
/// decimals, as published) and `<stem>-comparison.tsv` with the published change.
fn golden_bundle(dest: &Path, cases: &[&str]) {
    fs::create_dir_all(dest).expect("mkdir");
    let expected = fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden/expected.tsv"),
    )
    .expect("golden expected.tsv");
    for case in cases {
        let stem = case.trim_start_matches("mprotect-");
        let (metric, _, _) = golden_case(case);
        let mut points = format!(
            "order\tpoint\trole\tcommit\tn\tmean_{metric}\tsd\tcv_pct\tvalues\tsemantic_failures\n"
        );
        let golden = golden_points(case);
        for (i, p) in golden.iter().enumerate() {
            let s = aba::stats::summarize(&p.values).expect("values");
            let values: Vec<String> = p.values.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                points,
                "{}\t{}\t{}\t{}\t{}\t{:.6}\t{:.6}\t{:.6}\t{}\t0",
                i + 1,
                p.label,
                p.kernel,
                p.release,
                s.n,
                s.mean,
                s.sd.expect("sd"),
                s.cv_pct.expect("cv"),
                values.join(" ")
            );
        }
        fs::write(dest.join(format!("{stem}-points.tsv")), points).expect("write");
        // The published change of the child against the parent midpoint.
        let change = expected
            .lines()
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .find(|c| {
                c[0] == *case && c[1] == "all" && c[2] == "change_pct" && c[3] == "child,parent"
            })
            .map(|c| c[6].to_owned())
            .expect("a published change");
        fs::write(
            dest.join(format!("{stem}-comparison.tsv")),
            format!("analysis\tchild_vs_parent_midpoint_pct\nall_15_rounds\t{change}\n"),
        )
        .expect("write");
    }
}

#[test]
fn a_results_fixture_against_a_published_bundle_reproduces_its_figures() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-exact-cac1", &tmp.path().join("exact-cac1-again"));
    golden_bundle(&tmp.path().join("bare-metal"), &["mprotect-exact-cac1"]);
    let out = compare(
        tmp.path(),
        &[
            "exact-cac1-again",
            "bare-metal/exact-cac1-points.tsv",
            "--tsv",
            "bundle.tsv",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    fits_a_mail(&report);
    let said = flat(&report);
    for phrase in [
        "mprotect-exact-cac1 against the reference exact-cac1: 1 REPRODUCED",
        "the reference's exact-cac1/iteration_ns_per_page, matched by its case and metric",
        "it publishes 39.773716 (child_vs_parent_midpoint_pct), which aba's recomputation matches",
        "the reference, a published bundle, records none and is judged with them",
        "a published bundle: exact-cac1-points.tsv, exact-cac1-comparison.tsv",
    ] {
        assert!(
            said.contains(phrase),
            "the text does not say {phrase:?}:\n{report}"
        );
    }
    let tsv = fs::read_to_string(tmp.path().join("bundle.tsv")).expect("the TSV");
    report_oracle::check_reproduction(&stdout(&out), &tsv);
    assert!(
        tsv.contains("reference\tpublished_agrees\tchild,parent\tyes"),
        "{tsv}"
    );
    insta::assert_snapshot!("published_bundle_text", report);
    insta::assert_snapshot!("published_bundle_tsv", tsv);

    // The bundle's folder with two experiments of the same metric: which one is meant cannot
    // be told, and the hint says how to pick one.
    golden_bundle(&tmp.path().join("bare-metal"), &["mprotect-pedro-v3"]);
    let out = compare(tmp.path(), &["exact-cac1-again", "bare-metal"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("have no workload, case and metric in common"),
        "{err}"
    );
    assert!(
        err.contains("name one <name>-points.tsv of a bundle"),
        "{err}"
    );
    // A bundle is never the new campaign.
    let out = compare(tmp.path(), &["bare-metal", "exact-cac1-again"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("the new campaign first"),
        "{}",
        text(&out)
    );
}

/// Issue 29 item 5: a bundle folder whose two experiments give the role names `parent` and
/// `child` to different builds: the comparison takes the matched experiment's kernels only,
/// reads their releases, preemption and semantic failures from `run-audit.tsv` and
/// `source-identity.tsv`, and lists exactly the files it used and those it did not, with why.
/// (The layouts of lcf0399/linux-regression-evidence, with this test's own numbers.)
#[test]
fn a_bundle_folder_keeps_its_experiments_apart_and_reads_its_side_tables() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-mechanism", &tmp.path().join("mechanism-again"));
    let bundle = tmp.path().join("bare-metal");
    golden_bundle(&bundle, &["mprotect-mechanism"]);
    // A change against another candidate than the baseline: read as a comparison the
    // reference declares (fastpath against child), which the new campaign does not have.
    write(
        &bundle,
        "mechanism-comparison.tsv",
        "analysis\tfastpath_vs_child_pct\nall_15_rounds\t-11.000000\n",
    );
    write(
        &bundle,
        "other-points.tsv",
        "order\tpoint\trole\tcommit\tn\tmean_other_ns\tvalues\tsemantic_failures\n\
         1\tparent-a\tparent\t1111111\t3\t20\t19 20 21\t0\n\
         2\tchild\tchild\t2222222\t3\t30\t29 30 31\t0\n\
         3\tparent-b\tparent\t1111111\t3\t20\t20 20 20\t0\n",
    );
    let golden = golden_points("mprotect-mechanism");
    let mut audit = String::from("experiment\tpoint\tkernel_release\tboot_id\tsemantic_failures\n");
    for (i, p) in golden.iter().enumerate() {
        let _ = writeln!(audit, "mechanism\t{}\t{}\tboot-{i}\t0", p.label, p.release);
    }
    audit.push_str(
        "other\tparent-a\t9.9-other-p\tboot-x\t0\nother\tchild\t9.9-other-c\tboot-y\t1\n\
         other\tparent-b\t9.9-other-p\tboot-z\t0\n",
    );
    write(&bundle, "run-audit.tsv", &audit);
    let parent = &golden[0];
    write(
        &bundle,
        "source-identity.tsv",
        &format!(
            "experiment\tpoint\tcanonical_config_sha256\tkernel_release\tcompiler\tpreemption\n\
             mechanism\tparent\tfeedface\t{}\tgcc-99\tdynamic/none\n\
             other\tparent\tdeadbeef\t9.9-other-p\tgcc-98\tfull\n",
            parent.release
        ),
    );
    write(&bundle, "README.md", "# a bundle\n");
    let out = compare(
        tmp.path(),
        &["mechanism-again", "bare-metal", "--tsv", "t.tsv"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    fits_a_mail(&report);
    let said = flat(&report);
    for phrase in [
        &format!("parent (mechanism) release: {} (the same)", parent.release),
        "parent (mechanism) preemption: dynamic/none / not recorded",
        "parent (mechanism) compiler: gcc-99 / not recorded",
        "Only in the reference: other/other_ns.",
        "The reference: other: point child records 1 semantic failure (run-audit.tsv:12): it is \
         left out of the analysis.",
        "Compared only in the reference: fastpath vs child.",
        "The reference's files not used: README.md (not a table aba reads as a reference)",
        "(a published bundle: mechanism-points.tsv, mechanism-comparison.tsv, \
         other-points.tsv, run-audit.tsv, source-identity.tsv)",
    ] {
        assert!(
            said.contains(phrase),
            "the text does not say {phrase:?}:\n{report}"
        );
    }
    // The other experiment's builds, releases and preemption are never the mechanism's.
    for other in ["1111111", "9.9-other", "deadbeef", "full", "gcc-98"] {
        assert!(!report.contains(other), "{other} leaked:\n{report}");
    }
    assert!(!said.contains("Differences:"), "{report}");
    // Issue 34 item 1: the bundle's root (here the folder holding it) is searched one level
    // down, and the files are named from there.
    let out = compare(tmp.path(), &["mechanism-again", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = flat(&stdout(&out));
    assert!(
        said.contains(
            "(a published bundle: bare-metal/mechanism-points.tsv, \
             bare-metal/mechanism-comparison.tsv, bare-metal/other-points.tsv"
        ),
        "{said}"
    );
    assert!(
        said.contains("mechanism-again (a folder: a bundle's tables are read from one folder)"),
        "{said}"
    );
}

#[test]
fn the_aba_0_1_directory_is_a_reference() {
    let legacy = fixtures_dir()
        .parent()
        .expect("fixtures")
        .join("results-v0.1/exact-cac1-audit");
    let tmp = tempfile::tempdir().expect("tempdir");
    let new = tmp.path().join("exact-cac1-now");
    build("mprotect-exact-cac1", &new);
    let out = compare(
        tmp.path(),
        &[
            new.to_str().expect("utf-8"),
            legacy.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = flat(&stdout(&out));
    assert!(said.contains("1 REPRODUCED"), "{said}");
    // The same samples: the same change, a ratio of 1.00 and no difference.
    assert!(
        said.contains("child +39.77% +39.77% 1.00 REPRODUCED"),
        "{said}"
    );
    assert!(said.contains("the changes differ by 0.00 points"), "{said}");
    assert!(
        said.contains("tuning: governor=performance turbo=off / none (differs)"),
        "{said}"
    );
}

#[test]
fn a_directory_that_is_not_a_results_directory_is_refused_by_name() {
    let tmp = tempfile::tempdir().expect("tempdir");
    synthetic(&tmp.path().join("good"), "r", &[moving("w", 1.2)], 0);
    write(tmp.path(), "junk/notes.txt", "not a campaign\n");
    let out = compare(tmp.path(), &["good", "junk"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    insta::assert_snapshot!("not_a_results_directory_stderr", stderr(&out));
    let out = compare(tmp.path(), &["junk", "good"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).starts_with("error: junk is neither"),
        "{}",
        text(&out)
    );
    let out = compare(tmp.path(), &["good", "missing"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).starts_with("error: cannot read missing"),
        "{}",
        text(&out)
    );
    // A journal that is not one: the directory is named, the cause follows.
    write(
        tmp.path(),
        "broken/journal.jsonl",
        "{not json\n{\"event\":\"finished\"}\n",
    );
    write(
        tmp.path(),
        "broken/recipe.toml",
        &fs::read_to_string(tmp.path().join("good/recipe.toml")).expect("recipe"),
    );
    let out = compare(tmp.path(), &["good", "broken"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: cannot analyse broken\ncaused by:"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn campaigns_without_a_common_metric_are_refused_with_both_lists() {
    let tmp = tempfile::tempdir().expect("tempdir");
    synthetic(&tmp.path().join("one"), "r", &[moving("pread", 1.2)], 0);
    synthetic(&tmp.path().join("other"), "r", &[moving("pipe", 1.2)], 0);
    let out = compare(tmp.path(), &["one", "other"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    insta::assert_snapshot!("nothing_in_common_stderr", stderr(&out));
}

/// `aba run RECIPE --results RESULTS` in `cwd`; the campaign directory it made.
fn run_local(cwd: &Path, recipe: &Path, results: &str) -> (Output, PathBuf) {
    let out = aba(
        cwd,
        &["run", recipe.to_str().expect("utf-8"), "--results", results],
    );
    let dir = campaign_dir(&cwd.join(results));
    assert_verified(&dir);
    (out, dir)
}

/// Runs `first`, then `second` on `local`, and compares the second campaign with the first,
/// writing the TSV to `tsv` in `cwd`.
fn run_twice_and_compare(cwd: &Path, first: &Path, second: &Path, tsv: &str) -> Output {
    let mut dirs = Vec::new();
    for (recipe, results) in [(first, "results-1"), (second, "results-2")] {
        let (out, dir) = run_local(cwd, recipe, results);
        assert!(out.status.success(), "{}", text(&out));
        dirs.push(dir.to_str().expect("utf-8").to_owned());
    }
    compare(cwd, &[&dirs[1], &dirs[0], "--tsv", tsv])
}

#[test]
fn the_quickstart_twice_on_local_compares_side_by_side() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let quickstart = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("recipes/quickstart.toml");
    let out = run_twice_and_compare(tmp.path(), &quickstart, &quickstart, "q.tsv");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    fits_a_mail(&report);
    let said = flat(&report);
    assert!(
        said.contains("quickstart against the reference quickstart: no comparison to judge"),
        "{report}"
    );
    assert!(
        said.contains("a null campaign boots one kernel only"),
        "{report}"
    );
    // In each metric's display unit, which the measured means choose (a pipe round trip of
    // 92008 ns reads as 92.008 µs/roundtrip): the oracle below holds it to the TSV's means.
    for series in [
        "sysctl_pread (",
        "s/read, lower is better)",
        "pipe_pingpong (",
        "s/roundtrip, lower is better)",
    ] {
        assert!(
            said.contains(series),
            "{series} is not side by side:\n{report}"
        );
    }
    // Both ran here: the same CPU, target and kernel.
    assert!(said.contains("target: local (the same)"), "{report}");
    assert!(said.contains("CPU: "), "{report}");
    assert!(said.contains("No recorded fact differs."), "{report}");
    let tsv = fs::read_to_string(tmp.path().join("q.tsv")).expect("TSV");
    report_oracle::check_reproduction(&stdout(&out), &tsv);
    for side in ["reference", "new"] {
        assert!(
            tsv.contains(&format!(
                "sysctl_pread\t\tsysctl_pread\tns/read\t{side}\tmean\tthis-a\t"
            )),
            "{tsv}"
        );
    }
}

/// A real A/B/A/B/A campaign on `local` whose kernels `a` and `b` are both the running one:
/// each workload prints its boot mean (the candidate's `factor` times the baseline's, with
/// boot-to-boot offsets by point) times a within-boot pattern by sample, from `$ABA_KERNEL`,
/// `$ABA_POINT` and `$ABA_SAMPLE`.
fn real_recipe(name: &str, workloads: &[Moving]) -> String {
    recipe(name, workloads, |w| {
        format!(
            "awk -v k=\"$ABA_KERNEL\" -v p=\"$ABA_POINT\" -v s=\"$ABA_SAMPLE\" 'BEGIN {{ \
             split(\"{boots}\", b, \" \"); split(\"{samples}\", z, \" \"); \
             o[\"a-a\"] = 1; o[\"b-a\"] = 2; o[\"a-b\"] = 3; o[\"b-b\"] = 4; o[\"a-c\"] = 5; \
             f = (k == \"b\") ? {factor} : 1; \
             printf \"%.6f\\n\", 100 * f * (1 + b[o[p]] / 1000) * (1 + {cv} / 100 * z[s]) }}'",
            boots = BOOTS.map(|b| b.to_string()).join(" "),
            samples = SAMPLES.map(|z| z.to_string()).join(" "),
            factor = w.factor,
            cv = w.cv_pct,
        )
    })
}

#[test]
fn real_campaigns_on_local_reproduce_differ_and_lose_their_change() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (reference, new) = verdict_workloads();
    // The shaky and only-in-one workloads add nothing a synthetic pair does not show.
    let keep = |w: &&Moving| ["steady", "grown", "gone"].contains(&w.name);
    let reference: Vec<Moving> = reference.iter().filter(keep).copied().collect();
    let new: Vec<Moving> = new.iter().filter(keep).copied().collect();
    let first = write(
        tmp.path(),
        "reference.toml",
        &real_recipe("moving", &reference),
    );
    let second = write(tmp.path(), "new.toml", &real_recipe("moving", &new));
    let out = run_twice_and_compare(tmp.path(), &first, &second, "real.tsv");
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let tsv = fs::read_to_string(tmp.path().join("real.tsv")).expect("TSV");
    report_oracle::check_reproduction(&stdout(&out), &tsv);
    let got = verdicts(&tsv);
    assert_eq!(
        got,
        [
            ("steady".to_owned(), "REPRODUCED".to_owned()),
            ("grown".to_owned(), "DIFFERENT".to_owned()),
            ("gone".to_owned(), "NOT_REPRODUCED".to_owned()),
        ],
        "{}",
        stdout(&out)
    );
    let report = stdout(&out);
    fits_a_mail(&report);
    // Every point of both ran in this one boot: the intervals are run-to-run, and say so.
    assert!(flat(&report).contains("run-to-run 95% CI"), "{report}");
}

#[test]
fn a_recipe_naming_a_reference_ends_its_run_and_its_report_with_the_comparison() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let workloads = [moving("steady", 1.2)];
    // The reference lives in the recipe's folder, as a published results directory would.
    synthetic(
        &tmp.path().join("recipes/published"),
        "moving",
        &workloads,
        0,
    );
    let body = real_recipe("moving", &workloads);
    let recipe = write(
        tmp.path(),
        "recipes/again.toml",
        &format!("{body}\n[expect]\nreference = \"published\"\n"),
    );
    let check = aba(tmp.path(), &["check", recipe.to_str().expect("utf-8")]);
    assert!(check.status.success(), "{}", text(&check));
    assert!(
        stdout(&check).contains("compare  with the reference published ("),
        "{}",
        text(&check)
    );
    let (out, dir) = run_local(tmp.path(), &recipe, "results");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let printed = stdout(&out);
    assert!(
        printed.contains("moving against the reference moving: 1 REPRODUCED"),
        "{printed}"
    );
    // The bundle carries its reference and the comparison.
    assert!(dir.join("reference/journal.jsonl").is_file());
    assert!(!dir.join("reference/report.txt").exists());
    let readme = fs::read_to_string(dir.join("README.md")).expect("README.md");
    assert!(
        readme.contains("`reproduction.txt`") && readme.contains("`reference/`"),
        "{readme}"
    );
    let written = fs::read_to_string(dir.join("reproduction.txt")).expect("reproduction.txt");
    assert!(printed.ends_with(&written), "{printed}");
    assert!(
        fs::read_to_string(dir.join("reproduction.tsv"))
            .expect("TSV")
            .contains("\treproduction\t")
    );
    // `aba report` redoes it from the copy, whatever became of the original.
    fs::remove_dir_all(tmp.path().join("recipes/published")).expect("rm");
    let again = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("1 REPRODUCED"), "{}", text(&again));
    // A reference that is not there stops the run before it starts.
    let gone = aba(tmp.path(), &["check", recipe.to_str().expect("utf-8")]);
    assert_eq!(gone.status.code(), Some(1), "{}", text(&gone));
    assert!(
        stderr(&gone).contains("cannot read `published`"),
        "{}",
        text(&gone)
    );
}

/// Issue 34 item 1: a recipe's `[expect] reference` may be a summary reference, here a
/// table of published changes (the tmpfs bundle's comparisons.csv layout: a row per
/// comparison and metric set, the change in percent). `aba check` reads it before the night,
/// the run copies the mapping and its table into `reference/` and ends with the comparison,
/// `aba report` redoes it from the copy (text and JSON); `aba compare` with a change the
/// campaign does not show says NOT_REPRODUCED.
#[test]
fn a_recipe_naming_a_table_of_published_changes_ends_with_its_comparison() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let workloads = [moving("steady", 1.2)];
    let published = tmp.path().join("recipes/published");
    fs::create_dir_all(&published).expect("mkdir");
    let table = |b_vs_a: &str| {
        format!(
            "metric_set,comparison,reference_ns,candidate_ns,delta_pct\n\
             mean,b_vs_a_midpoint,100.0,120.0,{b_vs_a}\n\
             mean,a_control_drift,100.1,99.9,-0.2\n\
             drop_first_mean,b_vs_a_midpoint,100.0,121.0,21.0\n"
        )
    };
    fs::write(published.join("comparisons.csv"), table("20.0")).expect("write");
    fs::write(
        published.join("map.toml"),
        "version = 1\ndescription = \"the moving workload, as published changes\"\n\
         [[series]]\nworkload = \"steady\"\nfile = \"comparisons.csv\"\n\
         comparison = \"comparison\"\nchange = \"delta_pct\"\nwhere = { metric_set = \"mean\" }\n\
         comparisons = { b_vs_a_midpoint = \"b vs a\" }\n",
    )
    .expect("write");
    let body = real_recipe("moving", &workloads);
    let recipe = write(
        tmp.path(),
        "recipes/again.toml",
        &format!("{body}\n[expect]\nreference = \"published/map.toml\"\n"),
    );
    let check = aba(tmp.path(), &["check", recipe.to_str().expect("utf-8")]);
    assert!(check.status.success(), "{}", text(&check));
    assert!(
        stdout(&check).contains("compare  with the reference published/map.toml ("),
        "{}",
        text(&check)
    );
    let (out, dir) = run_local(tmp.path(), &recipe, "results");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let printed = stdout(&out);
    let said = flat(&printed);
    for phrase in [
        "against the summary reference",
        "map.toml: 1 REPRODUCED",
        "The reference publishes means only",
        "b: published +20.00% as the table states it; this campaign +20.",
        "published changes, as the table states them: b vs a 20.000000% (b_vs_a_midpoint (line 2))",
        "Not used from comparisons.csv (no comparison in `comparisons`): a_control_drift.",
    ] {
        assert!(said.contains(phrase), "{phrase:?} not in:\n{printed}");
    }
    assert!(dir.join("reference/map.toml").is_file());
    assert!(dir.join("reference/comparisons.csv").is_file());
    let written = fs::read_to_string(dir.join("reproduction.txt")).expect("reproduction.txt");
    assert!(printed.ends_with(&written), "{printed}");
    let tsv = fs::read_to_string(dir.join("reproduction.tsv")).expect("TSV");
    let row: Vec<&str> = tsv.lines().nth(1).expect("a row").split('\t').collect();
    assert_eq!((row[1], row[2], row[3]), ("b", "a", "20.000000"), "{tsv}");
    // `aba report` redoes it from the copy, whatever became of the original.
    fs::remove_dir_all(&published).expect("rm");
    let again = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        flat(&stdout(&again)).contains("1 REPRODUCED"),
        "{}",
        text(&again)
    );
    let json = aba(
        tmp.path(),
        &["report", dir.to_str().expect("utf-8"), "--json"],
    );
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert!(doc["reproduction"].is_null(), "{doc}");
    let c = &doc["summary_reproduction"]["series"][0]["candidates"][0];
    assert_eq!(
        (&c["baseline"], &c["stated"]),
        (&"a".into(), &true.into()),
        "{doc}"
    );
    assert_eq!(c["verdict"], "Reproduced", "{doc}");
    // A published change this campaign does not show.
    fs::create_dir_all(&published).expect("mkdir");
    fs::copy(dir.join("reference/map.toml"), published.join("map.toml")).expect("copy");
    fs::write(published.join("comparisons.csv"), table("-3.0")).expect("write");
    let out = aba(
        tmp.path(),
        &[
            "compare",
            dir.to_str().expect("utf-8"),
            "recipes/published/map.toml",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        flat(&stdout(&out)).contains("1 NOT_REPRODUCED"),
        "{}",
        text(&out)
    );
}

/// Issue 34 item 2: `aba export` writes the published layout, and `aba compare` reads the
/// export as a statistical reference: the campaign against its own export reproduces every
/// change exactly; a campaign whose change is gone does not.
#[test]
fn an_export_is_a_reference_that_reproduces_its_campaign_exactly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let workloads = [moving("steady", 1.2), moving("flat", 1.0)];
    synthetic(&tmp.path().join("first"), "first", &workloads, 0);
    let out = aba(
        tmp.path(),
        &["export", "first", "--to", "published", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["kind"], "export");
    let published = tmp.path().join("published");
    for file in [
        "steady-points.tsv",
        "steady-comparison.tsv",
        "flat-points.tsv",
        "run-audit.tsv",
        "source-identity.tsv",
        "README.md",
        "recipe.toml",
        "samples.csv",
    ] {
        assert!(published.join(file).is_file(), "{file} missing: {doc}");
    }
    let points = fs::read_to_string(published.join("steady-points.tsv")).expect("points");
    assert!(
        points.starts_with(
            "order\tpoint\tpoint_name\trole\trelease\tboot_id\tcommit\tn\tmean_steady\tsd\tcv_pct\t\
             values\tsemantic_failures\tworkload\tcase\tunit\n1\ta-a\ta#1\ta\t"
        ),
        "{points}"
    );
    let readme = fs::read_to_string(published.join("README.md")).expect("README");
    for part in [
        "## Scope",
        "## Method",
        "## Machine",
        "## Caveats",
        "Target lab1",
    ] {
        assert!(readme.contains(part), "{part}: {readme}");
    }

    // The campaign against its own export: every change the same, REPRODUCED.
    let out = compare(tmp.path(), &["first", "published", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["counts"]["reproduced"], 2, "{doc}");
    for s in doc["series"].as_array().expect("series") {
        assert_eq!(s["matched_by"], "name", "{s}");
        for c in s["candidates"].as_array().expect("candidates") {
            assert_eq!(
                c["reference"]["comparison"]["change_pct"], c["new"]["comparison"]["change_pct"],
                "{c}"
            );
            assert_eq!(c["published"]["agrees"], true, "{c}");
        }
    }
    // Exactly the tables are read; the README and the raw files are named as not used.
    let ignored: Vec<&str> = doc["reference"]["source"]["ignored"]
        .as_array()
        .expect("ignored")
        .iter()
        .filter_map(|i| i["file"].as_str())
        .collect();
    assert_eq!(
        ignored,
        ["README.md", "recipe.toml", "samples.csv"],
        "{doc}"
    );

    // A campaign whose change is gone: NOT_REPRODUCED against the export.
    synthetic(
        &tmp.path().join("reverted"),
        "reverted",
        &[moving("steady", 1.0), moving("flat", 1.0)],
        1,
    );
    let out = compare(tmp.path(), &["reverted", "published", "--tsv", "r.tsv"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let tsv = fs::read_to_string(tmp.path().join("r.tsv")).expect("TSV");
    report_oracle::check_reproduction(&stdout(&out), &tsv);
    assert!(
        verdicts(&tsv).contains(&("steady".to_owned(), "NOT_REPRODUCED".to_owned())),
        "{tsv}"
    );

    // OUT must be new or empty, and never a link.
    let out = aba(tmp.path(), &["export", "first", "--to", "published"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("published is not empty"),
        "{}",
        text(&out)
    );
    std::os::unix::fs::symlink(tmp.path().join("elsewhere"), tmp.path().join("link"))
        .expect("symlink");
    let out = aba(tmp.path(), &["export", "first", "--to", "link"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("is a symbolic link"),
        "{}",
        text(&out)
    );
    assert!(!tmp.path().join("elsewhere").exists());
}

/// The golden exact-cac1 fixture exported and compared with itself: the published change is
/// the recomputed one to its six decimals.
#[test]
fn the_golden_fixture_reproduces_its_own_export() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build("mprotect-exact-cac1", &tmp.path().join("exact"));
    let out = aba(tmp.path(), &["export", "exact", "--to", "out"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = compare(tmp.path(), &["exact", "out"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = flat(&stdout(&out));
    for phrase in [
        "1 REPRODUCED",
        "it publishes 39.773716 (child_vs_parent_pct), which aba's recomputation matches",
        "No recorded fact differs.",
    ] {
        assert!(said.contains(phrase), "{phrase}: {said}");
    }
}
