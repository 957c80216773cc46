//! Item 4: `aba report` on a synthetic results directory of `points × workloads × samples`
//! rows (100 × 10 × 1,000 = 1,000,000 in the full run), timed with its peak RSS, next to a
//! short Python script (`bench/means.py`: the csv module, and pandas when it is installed)
//! computing the same per-point means and SDs from `samples.csv`; then the linearity
//! measurements of `scaling.rs`.
//!
//! The directory is what aba itself would write for such a campaign, in aba's own formats:
//! `recipe.toml` (100-point sequence over four kernels, ten workloads, `samples = 1000`,
//! `warmup = 0`), `journal.jsonl` (campaign header, then per point `point_started`,
//! `boot_proven`, one `sample` record per run, `point_done`; `finished`) and `samples.csv`.
//! Values are deterministic pseudo-random normals with a different mean per kernel.

use std::{
    fmt::Write as _,
    fs,
    io::{BufWriter, Write as _},
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use aba::{
    recipe::{ident::KernelLabel, resolved::point_labels},
    results::{
        journal::{Event, JOURNAL_FORMAT},
        samples::HEADER,
    },
};

use crate::{
    Config, Row,
    util::{Aba, Measured, measure},
};

const KERNELS: [(&str, &str, f64); 4] = [
    ("a", "6.1.0-47-cloud-amd64", 1000.0),
    ("b", "6.1.0-50-cloud-amd64", 1010.0),
    ("c", "6.1.0-51-cloud-amd64", 995.0),
    ("d", "6.1.0-52-cloud-amd64", 1002.0),
];
const WORKLOADS: usize = 10;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next(), self.next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

fn line(out: &mut impl std::io::Write, event: &Event) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, event).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Writes a complete results directory with `points × WORKLOADS × samples` rows.
pub fn generate(dir: &Path, points: usize, samples: u32) -> std::io::Result<u64> {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir)?;
    let sequence: Vec<&str> = (0..points).map(|i| KERNELS[i % KERNELS.len()].0).collect();
    let labels = point_labels(
        &sequence
            .iter()
            .map(|k| KernelLabel::new(k).expect("valid label"))
            .collect::<Vec<_>>(),
    );
    let mut recipe = format!(
        "version = 1\nname = \"bench-synthetic\"\n\
         description = \"synthetic: {points} points x {WORKLOADS} workloads x {samples} samples\"\n\
         sequence = [{}]\nwarmup = 0\nsamples = {samples}\n\n",
        sequence
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (k, release, _) in KERNELS {
        let _ = write!(recipe, "[kernels.{k}]\nrelease = \"{release}\"\n\n");
    }
    for w in 0..WORKLOADS {
        let _ = write!(
            recipe,
            "[[workload]]\nname = \"w{w}\"\nrun = \"./w{w}\"\n\
             metric = {{ number = true, unit = \"ns\", better = \"lower\" }}\n\n"
        );
    }
    recipe.push_str(
        "[analysis]\nbaseline = \"a\"\ngate_pct = 5.0\nmax_cv_pct = 10.0\nmax_drift_pct = 5.0\n",
    );
    fs::write(dir.join("recipe.toml"), recipe)?;

    let mut journal =
        BufWriter::with_capacity(1 << 20, fs::File::create(dir.join("journal.jsonl"))?);
    let mut csv = BufWriter::with_capacity(1 << 20, fs::File::create(dir.join("samples.csv"))?);
    // The hash chain of the rows, as the writer keeps it (`results::row_chain`).
    let mut chain = aba::results::row_chain::RowChain::default();
    let mut row = format!("{}\n", HEADER.join(","));
    chain.feed(row.as_bytes(), |_, _| {});
    csv.write_all(row.as_bytes())?;
    line(
        &mut journal,
        &Event::Campaign {
            format: JOURNAL_FORMAT,
            aba: env!("CARGO_PKG_VERSION").to_owned(),
            name: "bench-synthetic".into(),
            recipe_sha256: "0".repeat(64),
            limits: Some(aba::results::journal::Limits {
                gate_pct: 5.0,
                drift_margin: 2.0,
                max_drift_pct: Some(5.0),
                max_cv_pct: 10.0,
                scoped: Vec::new(),
            }),
            target: "synthetic".into(),
            points: labels.clone(),
            time: "2026-01-01T00:00:00Z".into(),
        },
    )?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut rows = 0u64;
    let mut second = 0u64;
    let stamp = |s: u64| {
        format!(
            "2026-01-{:02}T{:02}:{:02}:{:02}Z",
            1 + s / 86_400,
            s / 3600 % 24,
            s / 60 % 60,
            s % 60
        )
    };
    for (i, label) in labels.iter().enumerate() {
        let (kernel, release, base) = KERNELS[i % KERNELS.len()];
        let boot_id = format!("{:08x}-0000-4000-8000-{:012x}", i + 1, i + 1);
        line(
            &mut journal,
            &Event::PointStarted {
                point: label.clone(),
                attempt: 1,
                time: stamp(second),
            },
        )?;
        line(
            &mut journal,
            &Event::BootProven {
                point: label.clone(),
                attempt: 1,
                boot_id: boot_id.clone(),
                release: release.into(),
                cmdline: format!("console=ttyS0 quiet aba.kernel={kernel}"),
                switch_s: 60.0,
                login_s: 55.0,
                proof_s: Some(0.01),
                proven_at: None,
            },
        )?;
        for w in 0..WORKLOADS {
            let mean = base * (1.0 + w as f64 * 0.5);
            for index in 1..=samples {
                second += 1;
                let value = (mean + rng.normal() * mean * 0.02) * 1000.0;
                let value = value.round() / 1000.0;
                row.clear();
                writeln!(
                    row,
                    "{label},{},1,{kernel},{release},{boot_id},w{w},,w{w},sample,{index},0,ok,{value},ns,{}",
                    i + 1,
                    stamp(second)
                )
                .map_err(std::io::Error::other)?;
                chain.feed(row.as_bytes(), |_, _| {});
                csv.write_all(row.as_bytes())?;
                line(
                    &mut journal,
                    &Event::Sample {
                        point: label.clone(),
                        attempt: 1,
                        workload: format!("w{w}"),
                        case: String::new(),
                        phase: aba::results::samples::Phase::Sample,
                        index,
                        retry: 0,
                        status: aba::results::samples::Status::Ok,
                        elapsed_s: 0.001 + f64::from(index % 7) * 1e-4,
                        error: None,
                        raw: None,
                        leftovers: Vec::new(),
                        dropped_bytes: None,
                        values: Some([(format!("w{w}"), value)].into()),
                        rows_sha256: Some(chain.hex()),
                        kept: Vec::new(),
                    },
                )?;
                rows += 1;
            }
        }
        line(
            &mut journal,
            &Event::PointDone {
                point: label.clone(),
                attempt: 1,
                dmesg_warnings: 0,
                failed_units: vec![],
                time: stamp(second),
            },
        )?;
    }
    line(
        &mut journal,
        &Event::Finished {
            time: stamp(second),
        },
    )?;
    journal.flush()?;
    csv.flush()?;
    Ok(rows)
}

fn python() -> Option<PathBuf> {
    ["python3", "/usr/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .find(|p| {
            Command::new(p)
                .arg("-c")
                .arg("pass")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

fn time_python(
    py: &Path,
    engine: &str,
    csv: &Path,
    out: &Path,
) -> Result<Option<Measured>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/means.py");
    let file = fs::File::create(out).map_err(|e| e.to_string())?;
    let m = measure(
        Command::new(py)
            .arg(&script)
            .arg(engine)
            .arg(csv)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(Stdio::null()),
    )?;
    match m.code {
        0 => Ok(Some(m)),
        3 => Ok(None), // the engine is not installed
        code => Err(format!("bench/means.py {engine} exited {code}")),
    }
}

/// Checks Python's per-point means against aba's `points.tsv` (`all` rows): the two computed
/// the same thing. Returns how many groups matched.
fn cross_check(points_tsv: &Path, python_out: &Path) -> Result<usize, String> {
    let ours = fs::read_to_string(points_tsv).map_err(|e| e.to_string())?;
    let mut aba = std::collections::HashMap::new();
    let mut lines = ours.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (Some(w), Some(an), Some(p), Some(n), Some(mean), Some(sd)) = (
        col("workload"),
        col("analysis"),
        col("point"),
        col("n"),
        col("mean"),
        col("sd"),
    ) else {
        return Err("points.tsv lacks expected columns".into());
    };
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        if f.get(an) == Some(&"all") {
            aba.insert(
                (f[p].to_owned(), f[w].to_owned()),
                (
                    f[n].parse::<f64>().unwrap_or(-1.0),
                    f[mean].parse::<f64>().unwrap_or(f64::NAN),
                    f[sd].parse::<f64>().unwrap_or(f64::NAN),
                ),
            );
        }
    }
    let theirs = fs::read_to_string(python_out).map_err(|e| e.to_string())?;
    let mut matched = 0;
    for l in theirs.lines() {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() < 7 {
            continue;
        }
        let key = (f[0].to_owned(), f[1].to_owned());
        let (n, m, s): (f64, f64, f64) = (
            f[4].parse().unwrap_or(-2.0),
            f[5].parse().unwrap_or(f64::NAN),
            f[6].parse().unwrap_or(f64::NAN),
        );
        let Some((an, am, asd)) = aba.get(&key) else {
            return Err(format!("python group {key:?} is not in points.tsv"));
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(1.0);
        if (*an - n).abs() > 0.5 || !close(*am, m) || !close(*asd, s) {
            return Err(format!(
                "{key:?}: aba n={an} mean={am} sd={asd}, python n={n} mean={m} sd={s}"
            ));
        }
        matched += 1;
    }
    if matched != aba.len() {
        return Err(format!("python has {matched} groups, aba {}", aba.len()));
    }
    Ok(matched)
}

/// `aba report DIR` once (short mode) or three times, sorted by wall time: the median is the
/// middle one.
pub fn timed_reports(
    cfg: &Config,
    aba: &Aba,
    log: &str,
    dir: &Path,
) -> Result<Vec<Measured>, String> {
    let mut runs = Vec::new();
    for i in 0..cfg.pick(1, 3) {
        runs.push(aba.report(&format!("{log}-{i}"), dir)?);
    }
    runs.sort_by_key(|r| r.wall);
    Ok(runs)
}

/// Runs item 4.
pub fn run(cfg: &Config, aba: &Aba) -> Result<(Vec<Row>, Vec<String>), String> {
    let samples = cfg.pick(100, 1000);
    let points = 100;
    let dir = aba.work.join("synthetic");
    eprintln!("  [4] generating {points} x {WORKLOADS} x {samples} rows");
    let rows = generate(&dir, points, samples).map_err(|e| format!("generate: {e}"))?;
    let size = |name: &str| fs::metadata(dir.join(name)).map_or(0, |m| m.len());
    let (csv_mb, journal_mb) = (
        size("samples.csv") as f64 / 1e6,
        size("journal.jsonl") as f64 / 1e6,
    );
    // The page cache holds both files after generating them, as it would after a campaign.
    eprintln!("  [4] aba report");
    let runs = timed_reports(cfg, aba, "report", &dir)?;
    let best = runs[runs.len() / 2];
    let wall = best.wall.as_secs_f64();
    let rss_mb = runs.iter().map(|r| r.max_rss).max().unwrap_or(0) as f64 / 1e6;
    let svg_kb = size("samples.svg") as f64 / 1e3;
    let mut table = vec![
        Row::new(
            "4",
            format!("`aba report`, {rows} samples: wall time"),
            format!("{wall:.2} s"),
            "<= 1 s",
            Some(wall <= 1.0),
        ),
        Row::new(
            "4",
            format!("`aba report`, {rows} samples: peak RSS"),
            format!("{rss_mb:.0} MB"),
            "<= 200 MB",
            Some(rss_mb <= 200.0),
        ),
    ];
    let mut details = vec![format!(
        "[4] input: samples.csv {csv_mb:.0} MB, journal.jsonl {journal_mb:.0} MB; aba report \
         median of {} run(s): wall {wall:.3} s, user {:.3} s, sys {:.3} s, peak RSS {rss_mb:.0} MB; \
         samples.svg {svg_kb:.0} kB",
        runs.len(),
        best.user.as_secs_f64(),
        best.sys.as_secs_f64()
    )];
    let (linear, linear_details) = crate::scaling::run(cfg, aba, points, samples, (rows, wall))?;
    table.extend(linear);
    details.extend(linear_details);
    let Some(py) = python() else {
        details.push("[4] python3 not found: no Python comparison".into());
        return Ok((table, details));
    };
    for engine in ["csv", "pandas"] {
        eprintln!("  [4] python {engine}");
        let out = aba.work.join(format!("means-{engine}.tsv"));
        match time_python(&py, engine, &dir.join("samples.csv"), &out)? {
            Some(m) => {
                let groups = cross_check(&dir.join("points.tsv"), &out)?;
                let secs = m.wall.as_secs_f64();
                table.push(Row::new(
                    "4",
                    format!("  Python {engine}: per-point means and SDs only"),
                    format!("{secs:.2} s = {:.1}x aba report", secs / wall),
                    "-",
                    None,
                ));
                details.push(format!(
                    "[4] python {engine}: wall {secs:.3} s, peak RSS {:.0} MB; its {groups} \
                     per-point means and SDs equal aba's points.tsv",
                    m.max_rss as f64 / 1e6
                ));
            }
            None => details.push(format!("[4] python {engine}: not installed, skipped")),
        }
    }
    Ok((table, details))
}
