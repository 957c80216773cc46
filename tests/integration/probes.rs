//! Probes (`[[probe]]`) and kept check output, against the local target and the real sshd:
//! a probe runs before or after the timed samples (never between them), on the kernels it
//! names, its output is kept under `probes/<point>/` (cut at `max_output` with the cut
//! named), its values reach `probes.tsv` and report.txt and never a verdict, and `aba verify`
//! covers the kept files. The ftrace helper needs a kernel with kprobe events: it is tested
//! on one in the lab (`lab::kexec_aba_in_the_lab_proves_three_boots`).

use std::path::{Path, PathBuf};

use aba::results::journal::Event;

use crate::support::{
    cli::{aba, assert_verified, campaign_dir, journal_events, run_on, text},
    recipe::{Metric, Probe, Recipe, Workload},
    sshd::Sshd,
};

/// A-B-A on the running kernel: one timed workload, a probe before the samples at every
/// point, a probe after them on `b` only.
fn probed() -> Recipe {
    Recipe::new("probed", "probes around the samples", &["a", "b", "a"])
        .runs(1, 3)
        .workload(Workload::new(
            "tick",
            "echo $ABA_SAMPLE",
            Metric::lower("n"),
        ))
        .probe(
            Probe::new(
                "count",
                "echo \"calls: 7\"; echo \"point $ABA_POINT\"; echo to-stderr >&2",
            )
            .when("before")
            .value("calls", r"calls: (\d+)", "calls"),
        )
        .probe(
            Probe::new("late", "echo \"late=12.5\"")
                .kernels(&["b"])
                .value("late", r"late=([0-9.]+)", "ms"),
        )
}

/// `aba run` of `recipe` on the local target; the campaign directory.
fn run_local(tmp: &Path, recipe: &Recipe) -> PathBuf {
    let path = recipe.write(tmp, "r.toml");
    let out = aba(
        tmp,
        &["run", path.to_str().expect("utf-8"), "--results", "results"],
    );
    assert!(out.status.success(), "{}", text(&out));
    campaign_dir(&tmp.join("results"))
}

/// Where each point's probes ran among its samples: (point, probe, samples before it,
/// samples of the point in all).
fn probe_places(events: &[Event]) -> Vec<(String, String, usize, usize)> {
    let mut out = Vec::new();
    let mut point = String::new();
    let mut samples = 0;
    let mut open: Vec<(String, String, usize)> = Vec::new();
    let mut flush = |open: &mut Vec<(String, String, usize)>, samples: usize| {
        out.extend(open.drain(..).map(|(p, n, before)| (p, n, before, samples)));
    };
    for e in events {
        match e {
            Event::PointStarted { point: p, .. } => {
                flush(&mut open, samples);
                point.clone_from(p);
                samples = 0;
            }
            Event::Sample { .. } => samples += 1,
            Event::Probe { probe, .. } => open.push((point.clone(), probe.clone(), samples)),
            _ => {}
        }
    }
    flush(&mut open, samples);
    out
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The probes' shared assertions over a finished campaign of [`probed`].
fn assert_probed(dir: &Path) {
    // Before every sample of every point; after every sample of `b`, nowhere else.
    let places = probe_places(&journal_events(dir));
    assert_eq!(
        places,
        [
            ("a-a".to_owned(), "count".to_owned(), 0, 4),
            ("b".to_owned(), "count".to_owned(), 0, 4),
            ("b".to_owned(), "late".to_owned(), 4, 4),
            ("a-b".to_owned(), "count".to_owned(), 0, 4),
        ]
    );
    for point in ["a-a", "b", "a-b"] {
        let out = read(dir, &format!("probes/{point}/count.out"));
        assert_eq!(out, format!("calls: 7\npoint {point}\n"));
        assert_eq!(
            read(dir, &format!("probes/{point}/count.err")),
            "to-stderr\n"
        );
    }
    assert!(!dir.join("probes/a-a/late.out").exists());
    let tsv = read(dir, "probes.tsv");
    assert_eq!(
        tsv,
        "point\tkernel\tprobe\tvalue_name\tvalue\tunit\n\
         a-a\ta\tcount\tcalls\t7.000000\tcalls\n\
         b\tb\tcount\tcalls\t7.000000\tcalls\n\
         b\tb\tlate\tlate\t12.500000\tms\n\
         a-b\ta\tcount\tcalls\t7.000000\tcalls\n"
    );
    let report = read(dir, "report.txt");
    assert!(
        report.contains("Probes (untimed, kept as evidence, never in the verdict):"),
        "{report}"
    );
    assert!(report.contains("count (before the samples):"), "{report}");
    assert!(
        report.contains("b (kernel b): late 12.5 ms; exit status 0."),
        "{report}"
    );
    // Never a series: the verdict is the timed workload's alone.
    for line in read(dir, "comparison.tsv").lines() {
        assert!(!line.contains("count") && !line.contains("late"), "{line}");
    }
    let readme = read(dir, "README.md");
    assert!(
        readme.contains("`probes.tsv`") && readme.contains("`probes/`"),
        "{readme}"
    );
    assert_verified(dir);
}

#[test]
fn probes_run_before_or_after_the_samples_and_keep_their_output_and_values_locally() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = run_local(tmp.path(), &probed());
    assert_probed(&dir);

    // A kept file that changed is a difference `aba verify` names.
    std::fs::write(dir.join("probes/b/late.out"), "late=1\n").expect("edit");
    let out = aba(&dir, &["verify", dir.to_str().expect("utf-8")]);
    assert!(!out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("the kept output of point `b` attempt 1"),
        "{said}"
    );
    assert!(said.contains("probes/b/late.out has SHA-256"), "{said}");
    // So is one replaced by a link, which verify never follows.
    std::fs::remove_file(dir.join("probes/b/late.out")).expect("rm");
    std::os::unix::fs::symlink("/etc/hostname", dir.join("probes/b/late.out")).expect("link");
    let said = text(&aba(&dir, &["verify", dir.to_str().expect("utf-8")]));
    assert!(said.contains("it is a symbolic link"), "{said}");
}

#[test]
fn probes_keep_their_output_over_ssh() {
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = sshd.inventory(tmp.path(), "");
    let recipe = probed().write(tmp.path(), "r.toml");
    let out = run_on(tmp.path(), &recipe, &targets, "box", "results");
    assert!(out.status.success(), "{}", text(&out));
    assert_probed(&campaign_dir(&tmp.path().join("results")));
}

#[test]
fn an_oversize_probe_output_is_cut_and_the_cut_named_in_the_file_and_the_report() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = Recipe::new("cut", "a probe that prints too much", &["a"])
        .runs(0, 1)
        .workload(Workload::new("tick", "echo 1", Metric::lower("n")))
        .probe(
            Probe::new(
                "big",
                "head -c 10000 /dev/zero | tr '\\0' x; echo; echo n=3 >&2",
            )
            .max_output("4KiB")
            .value("n", "n=(\\d+)", ""),
        );
    let dir = run_local(tmp.path(), &recipe);
    let out = std::fs::read(dir.join("probes/a/big.out")).expect("kept");
    let note = "\n[aba: output cut at max_output: kept the first 4096 of 10001 bytes]\n";
    assert_eq!(out.len(), 4096 + note.len());
    assert!(
        out.ends_with(note.as_bytes()),
        "{}",
        String::from_utf8_lossy(&out[4000..])
    );
    let report = read(&dir, "report.txt");
    assert!(
        report.contains("probes/a/big.out: CUT at max_output, kept the first 4096 of 10001"),
        "{report}"
    );
    // A value that is not found (it is on stderr, the value reads stdout) is said; the
    // point counts.
    assert!(report.contains("note: value `n`"), "{report}");
    assert_verified(&dir);
}

#[test]
fn a_probe_that_does_not_end_as_expected_is_said_and_the_point_counts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = Recipe::new("expect", "a probe expected to fail that passes", &["a"])
        .runs(0, 2)
        .workload(Workload::new("tick", "echo 1", Metric::lower("n")))
        .probe(Probe::new("fails", "exit 3").expect("failure"))
        .probe(Probe::new("passes", "true").expect("failure"));
    let dir = run_local(tmp.path(), &recipe);
    let report = read(&dir, "report.txt");
    assert!(
        report.contains("a (kernel a): no values; exit status 3."),
        "{report}"
    );
    assert!(
        report.contains("note: it ended with exit status 0 but `expect = \"failure\"`"),
        "{report}"
    );
    assert!(!report.contains("exit status 3 but"), "{report}");
    assert_verified(&dir);
}

#[test]
fn workloads_and_checks_on_chosen_kernels_run_only_there_and_are_compared_only_there() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = Recipe::new("chosen", "workloads on chosen kernels", &["a", "b", "a"])
        .runs(1, 3)
        .workload(Workload::new("everywhere", "echo 5", Metric::lower("n")))
        .workload(Workload::new("only_b", "echo 9", Metric::lower("n")).kernels(&["b"]))
        .workload(Workload::check("mode", "echo \"mode: $ABA_KERNEL\"", "mode: a").kernels(&["a"]));
    let path = recipe.write(tmp.path(), "r.toml");
    let check = aba(tmp.path(), &["check", path.to_str().expect("utf-8")]);
    assert!(check.status.success(), "{}", text(&check));
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        said.contains("(on kernels b only)")
            && said.contains("no comparison, the baseline a is not among them"),
        "{said}"
    );
    // 3 points × (4 runs of `everywhere`) + 4 runs of `only_b` at b + 1 check at each a.
    assert!(said.contains("18 (warm-ups included)"), "{said}");

    let dir = run_local(tmp.path(), &recipe);
    let mut ran: Vec<(String, String)> = journal_events(&dir)
        .iter()
        .filter_map(|e| match e {
            Event::Sample {
                point, workload, ..
            } if workload != "everywhere" => Some((point.clone(), workload.clone())),
            _ => None,
        })
        .collect();
    ran.dedup();
    assert_eq!(
        ran,
        [
            ("a-a".to_owned(), "mode".to_owned()),
            ("b".to_owned(), "only_b".to_owned()),
            ("a-b".to_owned(), "mode".to_owned()),
        ]
    );
    // The passing check's output is kept as evidence.
    assert_eq!(read(&dir, "checks/a-a/mode.out"), "mode: a\n");
    assert_verified(&dir);
    let report = read(&dir, "report.txt");
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    // A point of a kernel the workload leaves out is not missing data.
    assert!(!report.contains("missing"), "{report}");
    assert!(!flat.contains("No valid values"), "{report}");
    assert!(
        flat.contains("only_b: no verdict: it ran only on kernel b (`kernels`), which leaves out the baseline a"),
        "{report}"
    );
    assert!(report.contains("mode on kernel a: must pass"), "{report}");
    assert!(!report.contains("mode on kernel b"), "{report}");
    assert!(
        flat.contains("passing checks' output is kept in checks/<point>/"),
        "{report}"
    );
}

/// `aba export` publishes the probes' values and the output the probes and a passing check
/// kept, each file checked against the SHA-256 its journal holds: an edited kept file stops
/// the export, naming it, and OUT is not written.
#[test]
fn an_export_carries_the_kept_output_and_refuses_an_edited_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let recipe = probed()
        .workload(Workload::check("mode", "echo \"mode: $ABA_KERNEL\"", "mode: ").kernels(&["b"]));
    let dir = run_local(tmp.path(), &recipe);
    let dir_arg = dir.to_str().expect("utf-8");
    let out = aba(tmp.path(), &["export", dir_arg, "--to", "published"]);
    assert!(out.status.success(), "{}", text(&out));
    let published = tmp.path().join("published");
    for (file, from) in [
        ("probes/a-a/count.out", "probes/a-a/count.out"),
        ("probes/b/late.out", "probes/b/late.out"),
        ("probes/a-b/count.err", "probes/a-b/count.err"),
        ("checks/b/mode.out", "checks/b/mode.out"),
    ] {
        assert_eq!(
            std::fs::read(published.join(file)).expect(file),
            std::fs::read(dir.join(from)).expect(from),
            "{file}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(published.join("probes.tsv")).expect("probes.tsv"),
        read(&dir, "probes.tsv")
    );
    let readme = std::fs::read_to_string(published.join("README.md")).expect("README");
    for part in [
        "`probes/`",
        "`checks/`",
        "`probes.tsv`",
        "what each untimed probe printed",
        "checked against the SHA-256",
    ] {
        assert!(readme.contains(part), "{part}: {readme}");
    }

    // A kept file edited since the campaign: the export stops and names it.
    std::fs::write(dir.join("probes/b/late.out"), "late=99\n").expect("write");
    let out = aba(tmp.path(), &["export", dir_arg, "--to", "again"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("probes/b/late.out") && said.contains("not the output the campaign kept"),
        "{said}"
    );
    assert!(!tmp.path().join("again").exists(), "{said}");
}
