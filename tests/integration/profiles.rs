//! Noise profiles through the real binary on the built-in `local` target (issue 10): `aba
//! calibrate` writes a profile that says it measured run-to-run noise only (the points share
//! one boot), `aba check` prints the detectable change with it and says it is unknown
//! without, the next campaign copies and pools it and its report names it, and a tampered or
//! mismatched profile is refused with the file and field named.

use std::path::{Path, PathBuf};

use aba::{
    profile::{Profile, Scope, read_profile, write_profile},
    results::journal::{Event, Journal},
};
use sha2::{Digest as _, Sha256};

use crate::support::{
    cli::{aba, assert_verified, campaign_dir, text, write},
    recipe::{Metric, Recipe, Workload},
};

/// An A-B-A of the running kernel (both labels are the same build), two series whose values
/// move a little from point to point.
fn recipe() -> Recipe {
    let tick = "echo $((1000 + (ABA_SAMPLE * 7 + ABA_ORDER * 3) % 11))";
    let tock = "echo $((2000 + (ABA_SAMPLE * 5 + ABA_ORDER * 13) % 17))";
    Recipe::new(
        "noise",
        "an A-B-A of the running kernel, for noise profiles",
        &["a", "b", "a"],
    )
    .runs(1, 5)
    .workload(Workload::new("tick", tick, Metric::lower("ns")))
    .workload(Workload::new("tock", tock, Metric::lower("ns")))
    .limits(10.0, 10.0)
    .detect_pct(5.0)
}

/// A temporary directory with the recipe and an inventory whose profiles live in `prof/`.
struct Bench {
    tmp: tempfile::TempDir,
    recipe: PathBuf,
    targets: PathBuf,
}

impl Bench {
    fn new(recipe: &str) -> Bench {
        let tmp = tempfile::tempdir().expect("tempdir");
        let recipe = write(tmp.path(), "noise.toml", recipe);
        let targets = write(tmp.path(), "targets.toml", "profiles = \"prof\"\n");
        Bench {
            tmp,
            recipe,
            targets,
        }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    fn aba(&self, command: &str, extra: &[&str]) -> std::process::Output {
        let mut args = vec![
            command,
            self.recipe.to_str().expect("utf-8"),
            "--targets",
            self.targets.to_str().expect("utf-8"),
        ];
        args.extend_from_slice(extra);
        aba(self.dir(), &args)
    }

    /// Where `aba calibrate` writes the recipe's profile for `local`.
    fn profile(&self) -> PathBuf {
        self.dir().join("prof/local/noise.toml")
    }

    fn calibrate(&self) {
        let out = self.aba("calibrate", &["--boots", "3", "--results", "calibrations"]);
        assert!(out.status.success(), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "noise profile written: {} (3 boots of a, run-to-run only",
                self.profile().display()
            )),
            "{stderr}"
        );
    }
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn calibrate_on_local_writes_a_run_to_run_profile_that_check_and_the_next_campaign_use() {
    let bench = Bench::new(&recipe().toml());
    // Without a profile, the detectable change is unknown, and check says how to get one
    // (wrapped at 100 columns: words compared).
    let out = bench.aba("check", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(&stdout(&out)).contains(&format!(
            "detect unknown without a noise profile of target local (none in {}): `aba \
             calibrate {} --target local` measures one (6 boots of a)",
            bench.dir().join("prof/local").display(),
            bench.recipe.display()
        )),
        "{}",
        text(&out)
    );

    bench.calibrate();
    let (profile, _) = read_profile(&bench.profile()).expect("a valid profile");
    // Points on `local` share one boot: the profile claims run-to-run noise, never boots.
    assert_eq!(profile.scope, Scope::RunToRun);
    assert_eq!((profile.boots, profile.series.len()), (3, 2));
    assert_eq!(profile.fingerprint.target, "local");
    assert!(profile.fingerprint.machine.contains_key("cpu_model"));
    let tick = &profile.series[0];
    assert_eq!(
        (tick.workload.as_str(), tick.samples, tick.warmup),
        ("tick", 5, 1)
    );
    assert_eq!(tick.all.between_dof, 2.0);
    assert_eq!(tick.all.within_dof, 12.0);
    // The calibration is an ordinary campaign: the baseline booted 3 times, journaled as such.
    let calibration = campaign_dir(&bench.dir().join("calibrations"));
    let journal = Journal::read(&calibration.join("journal.jsonl")).expect("journal");
    assert!(journal.events.iter().any(|e| matches!(
        e,
        Event::Calibration { boots: 3, recipe, .. } if recipe == "noise"
    )));
    assert!(
        std::fs::read_to_string(calibration.join("recipe.toml"))
            .expect("copy")
            .contains(r#"sequence = ["a", "a", "a"]"#)
    );
    assert_verified(&calibration);

    // check: the detectable change from the profile, run-to-run only, and the design for
    // detect_pct.
    let out = bench.aba("check", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let plan = stdout(&out);
    assert!(
        plan.contains("detect   minimal detectable change (two-sided 5%, 80% power, run-to-run only, boots unmeasured):"),
        "{plan}"
    );
    assert!(
        plan.contains("    tick                                     b "),
        "{plan}"
    );
    assert!(plan.contains("(ν = 3; point-to-point SD"), "{plan}");
    assert!(plan.contains("detect_pct 5.00%: "), "{plan}");
    let out = bench.aba("check", &["--no-profile"]);
    assert!(
        stdout(&out).contains("detect   unknown: planned without a noise profile (--no-profile)"),
        "{}",
        text(&out)
    );

    // The next campaign copies the profile, journals its SHA-256 and pools it.
    let out = bench.aba("run", &["--results", "results"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!("noise profile: {}", bench.profile().display())),
        "{}",
        text(&out)
    );
    let dir = campaign_dir(&bench.dir().join("results"));
    let copy = std::fs::read(dir.join("profile.toml")).expect("copied");
    assert_eq!(copy, std::fs::read(bench.profile()).expect("original"));
    let journal = Journal::read(&dir.join("journal.jsonl")).expect("journal");
    let sha = hex::encode(Sha256::digest(&copy));
    assert!(journal.events.iter().any(|e| matches!(
        e,
        Event::Profile { sha256: Some(s), file: Some(f), .. }
            if *s == sha && Path::new(f) == bench.profile()
    )));
    let report = crate::support::report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!(
            "Noise profile: noise.toml (created {}, 3 boots, ν = 2, run-to-run only: all points in one boot, boots unmeasured)",
            profile.created
        )),
        "{report}"
    );
    assert!(
        flat.contains("pooled with the campaign's own in 2 of 2 series"),
        "{report}"
    );
    assert!(
        flat.contains("the boot variance pools the noise profile's (ν = 2)"),
        "{report}"
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("readme");
    assert!(
        readme.contains("- Noise profile: `noise.toml` (created"),
        "{readme}"
    );
    let tsv = std::fs::read_to_string(dir.join("comparison.tsv")).expect("tsv");
    assert!(
        tsv.contains("tick\t\ttick\tns\tall\tprofile_file\t\tnoise.toml\t\n"),
        "{tsv}"
    );
    assert!(
        tsv.contains("tick\t\ttick\tns\tall\tprofile_nu\t\t2.000000\t\n"),
        "{tsv}"
    );
    assert!(
        tsv.contains("tick\t\ttick\tns\tall\tprofile_pooled\tb,a\tyes\tb,a\n"),
        "{tsv}"
    );
    // Reproducible: the report is the same from the copy, whatever happens to the original
    // (asked for as `aba run` named the directory, which report.txt's Reproduce line says).
    std::fs::remove_file(bench.profile()).expect("rm");
    let typed = dir.strip_prefix(bench.dir()).expect("under the bench");
    let out = aba(bench.dir(), &["report", typed.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(crate::support::report_oracle::checked_report(&dir), report);
    // And it can be judged without it.
    let out = aba(
        bench.dir(),
        &["report", dir.to_str().expect("utf-8"), "--no-profile"],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("No noise profile: turned off with aba report --no-profile"),
        "{}",
        text(&out)
    );
    assert_verified(&dir);
}

#[test]
fn a_tampered_profile_is_refused_naming_its_file_and_field() {
    let bench = Bench::new(&recipe().toml());
    bench.calibrate();
    let path = bench.profile();
    let original = std::fs::read_to_string(&path).expect("profile");
    let line = original
        .lines()
        .find(|l| l.starts_with("between_var = "))
        .expect("a variance");
    std::fs::write(&path, original.replacen(line, "between_var = 0.001", 1)).expect("edit");
    for (command, extra) in [("check", &[][..]), ("run", &["--results", "results"][..])] {
        let out = bench.aba(command, extra);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "error: invalid noise profile {}: `checksum` is sha256:",
                path.display()
            )),
            "{command}: {err}"
        );
        assert!(err.contains("it was edited after aba wrote it"), "{err}");
        assert!(err.contains("`--no-profile` runs without any"), "{err}");
    }
    assert!(!bench.dir().join("results").exists(), "no campaign started");
    // A key that is not a profile's is named at its line.
    std::fs::write(
        &path,
        original.replacen("boots = 3", "boots = 3\nbots = 4", 1),
    )
    .expect("edit");
    let out = bench.aba("check", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("unknown field `bots`"),
        "{}",
        text(&out)
    );
    // --no-profile runs without it.
    let out = bench.aba("run", &["--results", "results", "--no-profile"]);
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&bench.dir().join("results"));
    assert!(!dir.join("profile.toml").exists());
    // A copy tampered in the results directory makes `aba report` refuse, not guess.
    std::fs::write(&path, &original).expect("restore");
    let out = bench.aba("run", &["--results", "again"]);
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&bench.dir().join("again"));
    let copy = dir.join("profile.toml");
    std::fs::write(&copy, format!("# edited\n{original}")).expect("edit");
    let out = aba(bench.dir(), &["report", dir.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "error: {} changed after the campaign recorded it",
            copy.display()
        )),
        "{}",
        text(&out)
    );
    let out = aba(
        bench.dir(),
        &["report", dir.to_str().expect("utf-8"), "--no-profile"],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_mismatched_profile_is_reported_and_not_used() {
    let bench = Bench::new(&recipe().toml());
    bench.calibrate();
    // Another sample count: statically not the same measurement.
    let fewer = write(bench.dir(), "noise.toml", &recipe().runs(1, 4).toml());
    assert_eq!(fewer, bench.recipe);
    let out = bench.aba("check", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("`series[0].samples` is 5 in the profile, 4 here"),
        "{}",
        text(&out)
    );
    let out = bench.aba("run", &["--results", "results"]);
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&bench.dir().join("results"));
    assert!(!dir.join("profile.toml").exists());
    let report = crate::support::report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("No noise profile: noise.toml (")
            && flat.contains("samples` is 5 in the profile, 4 here"),
        "{report}"
    );
    // A machine fact that differs: the static match passes, the boots' records do not.
    write(bench.dir(), "noise.toml", &recipe().toml());
    let (mut profile, _): (Profile, _) = read_profile(&bench.profile()).expect("valid");
    profile
        .fingerprint
        .machine
        .insert("microcode".to_owned(), "0xdeadbeef".to_owned());
    profile.seal();
    write_profile(&bench.profile(), &profile).expect("written");
    let out = bench.aba("run", &["--results", "other"]);
    assert!(out.status.success(), "{}", text(&out));
    let dir = campaign_dir(&bench.dir().join("other"));
    assert!(dir.join("profile.toml").is_file(), "chosen statically");
    let report = crate::support::report_oracle::checked_report(&dir);
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Noise profile noise.toml (")
            && flat.contains("NOT USED: `fingerprint.machine.microcode` (microcode revision) is 0xdeadbeef in the profile"),
        "{report}"
    );
    let tsv = std::fs::read_to_string(dir.join("comparison.tsv")).expect("tsv");
    assert!(!tsv.contains("profile_pooled"), "{tsv}");
    assert_verified(&dir);
}
