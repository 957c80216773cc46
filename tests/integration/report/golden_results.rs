//! Builds real results directories (recipe.toml, journal.jsonl, samples.csv) from the golden
//! raw cases in `tests/fixtures/golden/points.tsv`, plus two synthetic campaigns: a null
//! A-A-A run on the `local` target (one shared boot) and exact-cac1 with a failed run, a
//! failed point attempt and a discarded attempt (to show the audit).
//!
//! The directories are written with aba's own journal and samples writers, so they are exactly
//! what the engine would leave behind. They are committed under `tests/fixtures/results/`;
//! `report::fixtures_are_generated_from_golden_data` regenerates them and fails when they
//! differ (set `ABA_BLESS=1` to rewrite them).

use std::{
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
};

use aba::results::{
    journal::{Event, JOURNAL_FORMAT, JournalWriter},
    samples::{Phase, SampleRow, SampleWriter, Status},
};

/// The fixtures, by directory name.
pub const FIXTURES: [&str; 6] = [
    "mprotect-exact-cac1",
    "mprotect-mechanism",
    "mprotect-pedro-v3",
    "local-null",
    "exact-cac1-audit",
    "mail-rt-sysctl",
];

/// `tests/fixtures/results/`.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
}

/// Writes the fixture `name` into `dest` (created; must not exist).
pub fn build(name: &str, dest: &Path) {
    fs::create_dir_all(dest).expect("create the fixture directory");
    match name {
        "mprotect-exact-cac1" => golden(dest, "mprotect-exact-cac1", Some("39.77"), &[]),
        "mprotect-pedro-v3" => golden(dest, "mprotect-pedro-v3", Some("6.20"), &[]),
        "mprotect-mechanism" => golden(dest, "mprotect-mechanism", Some("36.51"), &MECHANISM),
        "local-null" => local_null(dest),
        "exact-cac1-audit" => audited(dest),
        "mail-rt-sysctl" => rt_mail(dest),
        other => panic!("unknown fixture {other}"),
    }
}

/// The recovery decomposition the mechanism source publishes.
const MECHANISM: [&str; 1] = [r#"
[[analysis.recovery]]
name = "mechanism"
gap = ["child", "parent"]
path = ["child", "fastpath", "folioonly", "nofolio"]
"#];

/// A published point mean: (point label, kernel, mean).
type PublishedMean = (String, String, f64);

/// The published point means of a `rounded` golden case (`input_value`), in boot order.
fn golden_means(case: &str) -> Vec<PublishedMean> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden/points.tsv");
    let text = fs::read_to_string(&path).expect("golden points.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|c| c[col("case_id")] == case)
        .map(|c| {
            (
                c[col("point")].to_owned(),
                c[col("kernel")].to_owned(),
                c[col("input_value")].parse().expect("input_value"),
            )
        })
        .collect()
}

/// The RT sysctl mail (`seeds/000`): three workloads (two measured, the RR control), the
/// mail's published point means, 3 warm-ups and 9 samples per point. The mail published no
/// samples, so each point gets nine synthetic values spread ±0.4% around its published mean
/// (their mean is the published mean to the last printed digit), and a slow first warm-up.
fn rt_mail(dest: &Path) {
    let recipe = r#"version = 1
name = "mail-rt-sysctl"
description = """
RT sysctl read latency on v7.2, original A -> patched -> original B, a fresh boot
at each point (seeds/000). Point means are the mail's; the samples around them
are synthetic."""
sequence = ["original", "patched", "original"]
warmup = 3
samples = 9

[kernels.original]
release = "7.2.0-orig"

[kernels.patched]
release = "7.2.0-rtfix"

[boot]
cmdline = "preempt=full"

[sysctl]
"kernel.sched_rt_period_us" = 1000000
"kernel.sched_rt_runtime_us" = 950000

[tuning]
governor = "performance"
epp = "performance"
turbo = false

[[workload]]
name = "sched_rt_period_us"
run = "./rt_sysctl_read timing period 4096 2 1000000"
cpu = "2"
env = { KS_ALLOW_SYSCTL_TIMING = "1" }
metric = { json = "/wall_ns", divide = 4096, unit = "ns/read", better = "lower" }

[[workload]]
name = "sched_rt_runtime_us"
run = "./rt_sysctl_read timing runtime 4096 2 950000"
cpu = "2"
env = { KS_ALLOW_SYSCTL_TIMING = "1" }
metric = { json = "/wall_ns", divide = 4096, unit = "ns/read", better = "lower" }

[[workload]]
name = "sched_rr_timeslice_ms"
role = "control"
run = "./rt_sysctl_read timing rr 4096 2 100"
cpu = "2"
env = { KS_ALLOW_SYSCTL_TIMING = "1" }
metric = { json = "/wall_ns", divide = 4096, unit = "ns/read", better = "lower" }

[analysis]
baseline = "original"

[[expect]]
workload = "sched_rt_period_us"
change_pct = -96.91
tolerance = 0.005

[[expect]]
workload = "sched_rt_runtime_us"
change_pct = -96.92
tolerance = 0.005
"#;
    let cases = [
        ("sched_rt_period_us", "mail-rt-sysctl-period"),
        ("sched_rt_runtime_us", "mail-rt-sysctl-runtime"),
        ("sched_rr_timeslice_ms", "mail-rt-sysctl-rr"),
    ];
    let means: Vec<(&str, Vec<PublishedMean>)> = cases
        .iter()
        .map(|(workload, case)| (*workload, golden_means(case)))
        .collect();
    let labels: Vec<String> = means[0].1.iter().map(|(p, _, _)| p.clone()).collect();
    let mut w = Campaign::create(dest, recipe, "lab1", &labels);
    // Offsets in units of 0.1% of the mean, summing to 0: the mean is exact.
    const SPREAD: [i32; 9] = [2, -1, 0, 3, -3, 1, -4, 4, -2];
    for (i, label) in labels.iter().enumerate() {
        let order = i + 1;
        let kernel = &means[0].1[i].1;
        let release = if kernel == "original" {
            "7.2.0-orig"
        } else {
            "7.2.0-rtfix"
        };
        let boot = boot_id(order as u32 + 16);
        w.start(label, 1);
        w.prove(label, 1, &boot, release, 44.0, 40.5);
        let at = Attempt {
            point: label,
            order,
            attempt: 1,
            kernel,
            release,
            boot_id: &boot,
        };
        for (workload, points) in &means {
            let mean = points[i].2;
            let step = (mean * 0.001 * 1000.0).round() / 1000.0;
            let warmups: Vec<f64> = [1.08, 1.01, 1.003]
                .iter()
                .map(|f| (mean * f * 1000.0).round() / 1000.0)
                .collect();
            let values: Vec<f64> = SPREAD
                .iter()
                .map(|k| ((mean + f64::from(*k) * step) * 1000.0).round() / 1000.0)
                .collect();
            w.samples(&at, workload, workload, "ns/read", Phase::Warmup, &warmups);
            w.samples(&at, workload, workload, "ns/read", Phase::Sample, &values);
        }
        w.done(label, 1, 0, &[]);
    }
    w.finish();
}

/// One golden point: label, kernel, release, values.
pub struct GoldenPoint {
    /// Point label.
    pub label: String,
    /// Kernel label.
    pub kernel: String,
    /// Release or commit (the golden `build`).
    pub release: String,
    /// Measured values in order.
    pub values: Vec<f64>,
}

/// The raw points of a golden case, in boot order.
pub fn golden_points(case: &str) -> Vec<GoldenPoint> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden/points.tsv");
    let text = fs::read_to_string(&path).expect("golden points.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .expect("golden column")
    };
    let (c_case, c_order, c_point, c_kernel, c_build, c_values) = (
        col("case_id"),
        col("order"),
        col("point"),
        col("kernel"),
        col("build"),
        col("values"),
    );
    let mut points: Vec<(usize, GoldenPoint)> = lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|cells| cells[c_case] == case)
        .map(|cells| {
            let point = GoldenPoint {
                label: cells[c_point].to_owned(),
                kernel: cells[c_kernel].to_owned(),
                release: cells[c_build].to_owned(),
                values: cells[c_values]
                    .split(' ')
                    .map(|v| v.parse().expect("golden value"))
                    .collect(),
            };
            (cells[c_order].parse().expect("order"), point)
        })
        .collect();
    points.sort_by_key(|(order, _)| *order);
    assert!(!points.is_empty(), "no golden points for {case}");
    points.into_iter().map(|(_, p)| p).collect()
}

/// The golden case's metric, unit and source commit from `cases.tsv`.
pub fn golden_case(case: &str) -> (String, String, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden/cases.tsv");
    let text = fs::read_to_string(&path).expect("golden cases.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let row: Vec<&str> = lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|cells| cells[col("case_id")] == case)
        .expect("golden case");
    (
        row[col("metric")].to_owned(),
        row[col("unit")].to_owned(),
        row[col("source_commit")].to_owned(),
    )
}

/// Kernel labels in boot order and `[kernels.*]` tables, from the points.
fn kernels_toml(points: &[(&str, &str)]) -> (String, String) {
    let sequence: Vec<String> = points.iter().map(|(k, _)| format!("\"{k}\"")).collect();
    let mut tables = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for (kernel, release) in points {
        if !seen.contains(kernel) {
            seen.push(kernel);
            let _ = write!(tables, "\n[kernels.{kernel}]\nrelease = \"{release}\"\n");
        }
    }
    (sequence.join(", "), tables)
}

fn golden(dest: &Path, case: &str, published_change: Option<&str>, extra: &[&str]) {
    let points = golden_points(case);
    let (metric, unit, commit) = golden_case(case);
    let pairs: Vec<(&str, &str)> = points
        .iter()
        .map(|p| (p.kernel.as_str(), p.release.as_str()))
        .collect();
    let (sequence, kernels) = kernels_toml(&pairs);
    let samples = points[0].values.len();
    let mut recipe = format!(
        r#"version = 1
name = "{case}"
description = """
Golden case {case}: the published raw values of lcf0399/linux-regression-evidence
at {short}, rebuilt as a results directory (one workload, one metric, no warm-ups)."""
sequence = [{sequence}]
warmup = 0
samples = {samples}
{kernels}
[boot]
cmdline = "quiet"

[[workload]]
name = "mprotect"
run = "./mprotect-toggle"
metric = {{ name = "{metric}", number = true, unit = "{unit}", better = "lower" }}

[analysis]
baseline = "parent"
"#,
        short = &commit[..12],
    );
    for block in extra {
        recipe.push_str(block);
    }
    if let Some(change) = published_change {
        let _ = write!(
            recipe,
            "\n[[expect]]\nworkload = \"mprotect\"\nkernel = \"child\"\nchange_pct = {change}\ntolerance = 0.005\n"
        );
    }
    let mut w = Campaign::create(dest, &recipe, "lab1", &labels(&points));
    for (i, p) in points.iter().enumerate() {
        let order = i + 1;
        let boot = boot_id(order as u32);
        w.start(&p.label, 1);
        w.prove(&p.label, 1, &boot, &p.release, 41.5 + order as f64, 38.0);
        let at = Attempt {
            point: &p.label,
            order,
            attempt: 1,
            kernel: &p.kernel,
            release: &p.release,
            boot_id: &boot,
        };
        w.samples(&at, "mprotect", &metric, &unit, Phase::Sample, &p.values);
        w.done(&p.label, 1, 0, &[]);
    }
    w.finish();
}

fn labels(points: &[GoldenPoint]) -> Vec<String> {
    points.iter().map(|p| p.label.clone()).collect()
}

/// A deterministic boot_id for the n-th boot.
pub fn boot_id(n: u32) -> String {
    format!(
        "5e1f{n:04x}-0000-4000-8000-{:012x}",
        u64::from(n) * 0x1_0001
    )
}

/// A null campaign on the `local` target: one kernel, three points, one shared boot.
fn local_null(dest: &Path) {
    let recipe = r#"version = 1
name = "local-null"
description = """
Null A-A-A campaign on this machine: the same kernel three times, to calibrate
the noise floor of perf bench sched pipe before comparing kernels."""
sequence = ["base", "base", "base"]
warmup = 2
samples = 9

[kernels.base]
release = "running"

[[workload]]
name = "pipe"
run = "perf bench sched pipe -T -l 50000"
metric = { name = "usecs_per_op", regex = '([0-9.]+) usecs/op', unit = "us/op", better = "lower" }
"#;
    // Synthetic but realistic: ~0.3% within-point noise, a slow first warm-up.
    let points: [(&str, [f64; 2], [f64; 9]); 3] = [
        (
            "base-a",
            [5.612, 5.301],
            [
                5.214, 5.198, 5.231, 5.207, 5.189, 5.222, 5.215, 5.201, 5.226,
            ],
        ),
        (
            "base-b",
            [5.298, 5.244],
            [
                5.203, 5.219, 5.196, 5.228, 5.211, 5.190, 5.224, 5.207, 5.216,
            ],
        ),
        (
            "base-c",
            [5.287, 5.239],
            [
                5.221, 5.236, 5.209, 5.218, 5.240, 5.212, 5.227, 5.231, 5.205,
            ],
        ),
    ];
    let labels: Vec<String> = points.iter().map(|p| p.0.to_owned()).collect();
    let mut w = Campaign::create(dest, recipe, "local", &labels);
    let boot = "9b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3";
    let release = "6.1.0-47-cloud-amd64";
    for (i, (label, warmups, values)) in points.iter().enumerate() {
        w.start(label, 1);
        w.prove(label, 1, boot, release, 0.0, 0.0);
        let at = Attempt {
            point: label,
            order: i + 1,
            attempt: 1,
            kernel: "base",
            release,
            boot_id: boot,
        };
        w.samples(&at, "pipe", "usecs_per_op", "us/op", Phase::Warmup, warmups);
        w.samples(&at, "pipe", "usecs_per_op", "us/op", Phase::Sample, values);
        w.done(label, 1, 0, &[]);
    }
    w.finish();
}

/// exact-cac1 with incidents: the child's first attempt died and was discarded on resume,
/// parent-b's first attempt failed its boot proof, and one run of parent-b's second attempt
/// failed and succeeded on its retry. The valid rows are exactly exact-cac1's, so every
/// figure must equal the clean fixture's.
fn audited(dest: &Path) {
    let points = golden_points("mprotect-exact-cac1");
    let (metric, unit, _) = golden_case("mprotect-exact-cac1");
    let pairs: Vec<(&str, &str)> = points
        .iter()
        .map(|p| (p.kernel.as_str(), p.release.as_str()))
        .collect();
    let (sequence, kernels) = kernels_toml(&pairs);
    let recipe = format!(
        r#"version = 1
name = "exact-cac1-audit"
description = """
exact-cac1 again, with the incidents an overnight run has: a runner that died,
a boot that came up in the wrong kernel, a failed run that was retried."""
sequence = [{sequence}]
warmup = 0
samples = 15
{kernels}
[boot]
cmdline = "quiet"

[tuning]
governor = "performance"
turbo = false

[[workload]]
name = "mprotect"
run = "./mprotect-toggle"
retries = 1
metric = {{ name = "{metric}", number = true, unit = "{unit}", better = "lower" }}

[analysis]
baseline = "parent"

[[expect]]
workload = "mprotect"
kernel = "child"
change_pct = 39.77
tolerance = 0.005
"#
    );
    let mut w = Campaign::create(dest, &recipe, "lab1", &labels(&points));
    let tuned = |w: &mut Campaign, point: &str, attempt: u32| {
        w.event(&Event::Tuned {
            point: point.into(),
            attempt,
            settings: [
                ("governor".to_owned(), "performance".to_owned()),
                ("turbo".to_owned(), "off".to_owned()),
            ]
            .into(),
            skipped: vec![],
        });
    };
    let (parent_a, child, parent_b) = (&points[0], &points[1], &points[2]);

    // parent-a: clean.
    let boot = boot_id(1);
    w.start(&parent_a.label, 1);
    w.prove(&parent_a.label, 1, &boot, &parent_a.release, 42.5, 39.0);
    tuned(&mut w, &parent_a.label, 1);
    let at = Attempt {
        point: &parent_a.label,
        order: 1,
        attempt: 1,
        kernel: &parent_a.kernel,
        release: &parent_a.release,
        boot_id: &boot,
    };
    w.samples(
        &at,
        "mprotect",
        &metric,
        &unit,
        Phase::Sample,
        &parent_a.values,
    );
    w.done(&parent_a.label, 1, 0, &[]);

    // child, attempt 1: five bogus samples, the connection drops, the runner dies.
    let boot = boot_id(2);
    w.start(&child.label, 1);
    w.prove(&child.label, 1, &boot, &child.release, 43.0, 39.5);
    tuned(&mut w, &child.label, 1);
    let at = Attempt {
        point: &child.label,
        order: 2,
        attempt: 1,
        kernel: &child.kernel,
        release: &child.release,
        boot_id: &boot,
    };
    w.samples(&at, "mprotect", &metric, &unit, Phase::Sample, &[999.0; 5]);
    w.raw_row(&at, "mprotect", &metric, &unit, 6, 0, Status::Ok, "NaN");
    w.event(&Event::ConnectionLost {
        point: child.label.clone(),
        attempt: 1,
        reason: "ssh: connection reset by peer".into(),
        same_boot: None,
    });
    w.event(&Event::Interrupted {
        time: "2026-07-20T01:10:00Z".into(),
    });
    // Resume: the journal says the unfinished attempt's rows do not count (samples.csv is
    // never rewritten), and the point is redone. The NaN row was rejected, not counted.
    w.event(&Event::Resumed {
        time: "2026-07-20T07:30:00Z".into(),
    });
    w.event(&Event::PointDiscarded {
        point: child.label.clone(),
        attempt: 1,
        rows: 5,
    });
    w.reopen_samples();
    let boot = boot_id(3);
    w.start(&child.label, 2);
    w.prove(&child.label, 2, &boot, &child.release, 44.0, 40.0);
    tuned(&mut w, &child.label, 2);
    let at = Attempt {
        point: &child.label,
        order: 2,
        attempt: 2,
        kernel: &child.kernel,
        release: &child.release,
        boot_id: &boot,
    };
    w.samples(
        &at,
        "mprotect",
        &metric,
        &unit,
        Phase::Sample,
        &child.values,
    );
    w.done(&child.label, 2, 1, &["mcelog.service"]);

    // parent-b, attempt 1: the machine came back in the child kernel.
    w.start(&parent_b.label, 1);
    w.event(&Event::PointFailed {
        point: parent_b.label.clone(),
        attempt: 1,
        kernel: parent_b.kernel.clone(),
        reason: format!(
            "boot not proven: uname -r printed {}, expected {}",
            child.release, parent_b.release
        ),
        // Written as a journal before the answering boot was kept.
        answered: None,
        time: "2026-07-20T08:05:00Z".into(),
    });
    w.event(&Event::Warning {
        point: Some(parent_b.label.clone()),
        text: "kexec fell back to the default entry; rebooting into the parent".into(),
    });
    // parent-b, attempt 2: run 4 fails once and succeeds on its retry.
    let boot = boot_id(4);
    w.start(&parent_b.label, 2);
    w.prove(&parent_b.label, 2, &boot, &parent_b.release, 97.0, 93.5);
    tuned(&mut w, &parent_b.label, 2);
    let at = Attempt {
        point: &parent_b.label,
        order: 3,
        attempt: 2,
        kernel: &parent_b.kernel,
        release: &parent_b.release,
        boot_id: &boot,
    };
    for (i, value) in parent_b.values.iter().enumerate() {
        let index = u32::try_from(i + 1).expect("small");
        if index == 4 {
            let raw = format!("raw/{}-2/mprotect-sample-4-0.txt", parent_b.label);
            w.raw_row(
                &at,
                "mprotect",
                &metric,
                &unit,
                index,
                0,
                Status::Failed,
                "",
            );
            w.run_event(
                &at,
                "mprotect",
                index,
                0,
                Some(("exit status 1: mmap: Cannot allocate memory", &raw)),
            );
            w.raw_row(
                &at,
                "mprotect",
                &metric,
                &unit,
                index,
                1,
                Status::Ok,
                &value.to_string(),
            );
            w.run_event(&at, "mprotect", index, 1, None);
        } else {
            w.raw_row(
                &at,
                "mprotect",
                &metric,
                &unit,
                index,
                0,
                Status::Ok,
                &value.to_string(),
            );
            w.run_event(&at, "mprotect", index, 0, None);
        }
    }
    w.done(&parent_b.label, 2, 0, &[]);
    w.event(&Event::Warning {
        point: None,
        text: "the target's clock stepped by 2 s during the campaign (NTP)".into(),
    });
    w.finish();
}

/// Where the rows of one point attempt go.
pub struct Attempt<'a> {
    /// Point label.
    pub point: &'a str,
    /// 1-based boot order.
    pub order: usize,
    /// 1-based attempt.
    pub attempt: u32,
    /// Kernel label.
    pub kernel: &'a str,
    /// Proven release.
    pub release: &'a str,
    /// Proven boot_id.
    pub boot_id: &'a str,
}

/// A results directory being written, with aba's own journal and samples writers (also used
/// by `compare` to write campaigns of a chosen truth).
pub struct Campaign {
    journal: JournalWriter,
    samples: SampleWriter,
    samples_path: PathBuf,
    /// A fake clock: every record is a second after the one before.
    tick: u32,
}

impl Campaign {
    pub fn create(dest: &Path, recipe: &str, target: &str, points: &[String]) -> Campaign {
        let recipe_path = dest.join("recipe.toml");
        fs::write(&recipe_path, recipe).expect("write recipe.toml");
        let parsed = aba::recipe::parse(&recipe_path, recipe)
            .unwrap_or_else(|e| panic!("fixture recipe is invalid: {e}"));
        let mut journal = JournalWriter::open(&dest.join("journal.jsonl")).expect("journal");
        journal
            .append(&Event::Campaign {
                format: JOURNAL_FORMAT,
                // Not a real aba run: say so wherever the version is shown.
                aba: "0.0.0-fixture".into(),
                name: parsed.name.to_string(),
                recipe_sha256: parsed.sha256.clone(),
                limits: Some(aba::results::journal::Limits::of(&parsed)),
                target: target.into(),
                points: points.to_vec(),
                time: "2026-07-20T00:00:00Z".into(),
            })
            .expect("append");
        let samples_path = dest.join("samples.csv");
        let samples = SampleWriter::open(&samples_path).expect("samples.csv");
        Campaign {
            journal,
            samples,
            samples_path,
            tick: 0,
        }
    }

    fn now(&mut self) -> String {
        self.tick += 1;
        let t = self.tick;
        format!(
            "2026-07-20T{:02}:{:02}:{:02}Z",
            t / 3600,
            (t / 60) % 60,
            t % 60
        )
    }

    fn event(&mut self, event: &Event) {
        self.journal.append(event).expect("append");
    }

    fn reopen_samples(&mut self) {
        self.samples = SampleWriter::open(&self.samples_path).expect("samples.csv");
    }

    /// Starts the attempt `at` and proves its boot (40 s to the proof, 35 s to the login).
    pub fn begin(&mut self, at: &Attempt<'_>) {
        self.start(at.point, at.attempt);
        self.prove(at.point, at.attempt, at.boot_id, at.release, 40.0, 35.0);
    }

    pub fn start(&mut self, point: &str, attempt: u32) {
        let time = self.now();
        self.event(&Event::PointStarted {
            point: point.into(),
            attempt,
            time,
        });
    }

    pub fn prove(
        &mut self,
        point: &str,
        attempt: u32,
        boot: &str,
        release: &str,
        switch_s: f64,
        login_s: f64,
    ) {
        self.event(&Event::BootProven {
            point: point.into(),
            attempt,
            boot_id: boot.into(),
            release: release.into(),
            cmdline: format!("BOOT_IMAGE=/boot/vmlinuz-{release} root=/dev/nvme0n1p2 ro quiet"),
            switch_s,
            login_s,
            proof_s: None,
            proven_at: None,
        });
    }

    /// One ok run per value: a row and a journal record each.
    pub fn samples(
        &mut self,
        at: &Attempt<'_>,
        workload: &str,
        metric: &str,
        unit: &str,
        phase: Phase,
        values: &[f64],
    ) {
        for (i, value) in values.iter().enumerate() {
            let index = u32::try_from(i + 1).expect("small");
            let time = self.now();
            let rows_sha256 = self
                .samples
                .append(&[SampleRow {
                    point: at.point,
                    order: at.order,
                    attempt: at.attempt,
                    kernel: at.kernel,
                    release: at.release,
                    boot_id: at.boot_id,
                    workload,
                    case: "",
                    metric,
                    phase,
                    index,
                    retry: 0,
                    status: Status::Ok,
                    value: Some(*value),
                    unit,
                    time: &time,
                }])
                .expect("append");
            self.event(&Event::Sample {
                point: at.point.into(),
                attempt: at.attempt,
                workload: workload.into(),
                case: String::new(),
                phase,
                index,
                retry: 0,
                status: Status::Ok,
                elapsed_s: 1.25,
                error: None,
                raw: None,
                leftovers: Vec::new(),
                dropped_bytes: None,
                values: Some([(metric.to_owned(), *value)].into()),
                rows_sha256: Some(rows_sha256),
                kept: Vec::new(),
            });
        }
    }

    /// A measured row written as text (a failed run has no value; "NaN" is what a broken
    /// parser could have written).
    #[expect(
        clippy::too_many_arguments,
        reason = "one row's columns, test support only"
    )]
    fn raw_row(
        &mut self,
        at: &Attempt<'_>,
        workload: &str,
        metric: &str,
        unit: &str,
        index: u32,
        retry: u32,
        status: Status,
        value: &str,
    ) {
        let time = self.now();
        let line = format!(
            "{},{},{},{},{},{},{workload},,{metric},sample,{index},{retry},{},{value},{unit},{time}\n",
            at.point,
            at.order,
            at.attempt,
            at.kernel,
            at.release,
            at.boot_id,
            status.as_str()
        );
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&self.samples_path)
            .expect("open samples.csv");
        std::io::Write::write_all(&mut file, line.as_bytes()).expect("append");
        // The writer continues the file's hash chain from what it holds now.
        self.reopen_samples();
    }

    /// The journal record of one measured run: ok, or failed with (error, raw output).
    fn run_event(
        &mut self,
        at: &Attempt<'_>,
        workload: &str,
        index: u32,
        retry: u32,
        failure: Option<(&str, &str)>,
    ) {
        self.event(&Event::Sample {
            point: at.point.into(),
            attempt: at.attempt,
            workload: workload.into(),
            case: String::new(),
            phase: Phase::Sample,
            index,
            retry,
            status: if failure.is_some() {
                Status::Failed
            } else {
                Status::Ok
            },
            elapsed_s: 1.25,
            error: failure.map(|(e, _)| e.to_owned()),
            raw: failure.map(|(_, r)| r.to_owned()),
            leftovers: Vec::new(),
            dropped_bytes: None,
            // Rows written as text are not hashed here: these runs read as an older aba's.
            values: None,
            rows_sha256: None,
            kept: Vec::new(),
        });
    }

    pub fn done(&mut self, point: &str, attempt: u32, dmesg_warnings: u32, failed_units: &[&str]) {
        let time = self.now();
        self.event(&Event::PointDone {
            point: point.into(),
            attempt,
            dmesg_warnings,
            failed_units: failed_units.iter().map(|u| (*u).to_owned()).collect(),
            time,
        });
    }

    pub fn finish(&mut self) {
        let time = self.now();
        self.event(&Event::Finished { time });
    }
}
