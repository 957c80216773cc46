//! Item 7 (issue 29): the value aba records is the workload's own. The same workload runs by
//! hand and through aba on the same target, interleaved (pairs hand-aba, aba-hand, …, each run
//! on a settled machine), and the paired differences of the values (aba's minus the hand's)
//! must have a 95 % interval that includes 0 and lies within ±0.5 % of the hand's mean: aba
//! adds nothing to what the workload measures of itself and records exactly what it prints.
//!
//! The workload is this bench program itself (`perf --cpu-loop N`): a dependent xorshift
//! chain of N steps timed 31 times over, printing the median nanoseconds per step, a number
//! with its full digits. Its own clock brackets only its own loop, so the comparison is of
//! the value recorded, not of wall time. By hand it is started directly (local) or with the
//! OpenSSH client (`ssh … CMD`, the bench's sshd on 127.0.0.1); through aba it is a campaign
//! of one sample on the built-in local target or on the sshd target, its value read back from
//! `samples.csv`.
//!
//! Both sides run the workload once before the run that counts, as recipes do (`warmup`, 3 by
//! default): by hand `CMD >/dev/null; CMD` in one shell, through aba `warmup = 1`. Without it
//! the comparison is of a first run after aba's own set-up on the target (its environment
//! capture, its journal, the point's work directory) against a first run after nothing:
//! measured on 2026-12-07 on the local target, blocks of 20 samples interleaved with 20 runs
//! by hand (40 pairs), aba's first sample read +0.53 % slower (median of the blocks'
//! differences) and its samples 2 to 20 −0.05 %, and single-sample campaigns read +0.50 % and
//! +0.36 % (160 interleaved pairs each, intervals ±0.31 and ±0.37) against by hand: a cost of
//! the first run after set-up, which the recipe's warm-up absorbs (docs/performance.md).
//!
//! The interval judged is the Hodges–Lehmann estimate of the paired differences with its
//! Wilcoxon signed-rank 95 % interval, not the mean's t interval: on a shared machine a run
//! that another process crowds out reads twice its value whoever started it, and one such
//! pair in 200 doubles the t interval's width while saying nothing about aba. Both are
//! printed; the rank interval answers "does aba shift the typical value", which is the
//! question.

use std::{
    fs,
    hint::black_box,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use aba::{
    results::samples::{Phase, SampleTable},
    stats::{interval::t_quantile_975, rank::hodges_lehmann},
};

use crate::{
    Config, Row,
    sshd::Sshd,
    util::{Aba, write},
};

/// Steps of the loop per timed chunk: about 1.4 ms here.
const STEPS: u64 = 1_000_000;
/// Timed chunks per run; the median is printed (a chunk another process interrupted is
/// one of the slow ones, not the median).
const CHUNKS: usize = 31;

/// `perf --cpu-loop N`: the workload. Prints the median ns per step of `CHUNKS` chunks of `N`
/// steps each.
pub fn workload(steps: u64) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut per_step: Vec<f64> = (0..CHUNKS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..steps {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x = black_box(x);
            }
            started.elapsed().as_nanos() as f64 / steps as f64
        })
        .collect();
    per_step.sort_by(f64::total_cmp);
    black_box(x);
    println!("{}", per_step[CHUNKS / 2]);
}

/// The workload's command line.
fn command_line() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the bench's own path: {e}"))?;
    let exe = exe.to_str().ok_or("the bench's path is not UTF-8")?;
    if exe.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
        return Err(format!("the bench's path needs quoting: {exe}"));
    }
    Ok(format!("{exe} --cpu-loop {STEPS}"))
}

/// The by-hand shell text: one warm-up run whose output is dropped, then the run that counts,
/// as `warmup = 1` does through aba.
fn by_hand_line(line: &str) -> String {
    format!("{line} >/dev/null; {line}")
}

/// Pause before a run, after `sync`.
const SETTLE: Duration = Duration::from_millis(200);

/// Writes back every dirty page (`sync`) and waits [`SETTLE`]: measured on 2026-12-07, a run
/// that followed an aba campaign at once read 0.42 % slower (Hodges–Lehmann, 400 pairs,
/// [+0.01, +0.82]) than one that followed a by-hand run, on the local and the SSH target
/// alike; aba's own runs, which start after its set-up, did not.
fn settle() -> Result<(), String> {
    let status = Command::new("sync")
        .status()
        .map_err(|e| format!("sync: {e}"))?;
    if !status.success() {
        return Err(format!("sync exited {status}"));
    }
    std::thread::sleep(SETTLE);
    Ok(())
}

/// One run by hand: `argv` started directly, its printed number.
fn by_hand(argv: &mut Command) -> Result<f64, String> {
    let out = argv
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("the workload by hand: {e}"))?;
    if !out.status.success() {
        return Err(format!("the workload by hand exited {}", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .map_err(|_| format!("the workload by hand printed {text:?}"))
}

/// One sample through aba: a campaign of one warm-up run and one sample on `target`, the
/// sample's value from samples.csv.
fn through_aba(
    aba: &Aba,
    log: &str,
    recipe: &Path,
    target: Option<(&Path, &str)>,
) -> Result<f64, String> {
    let run = aba.run(log, recipe, target, None)?;
    let table = SampleTable::read(&run.dir.join("samples.csv")).map_err(|e| e.to_string())?;
    let counted: Vec<_> = table
        .rows
        .iter()
        .filter(|row| row.phase == Phase::Sample)
        .collect();
    match counted.as_slice() {
        [row] => row
            .value
            .ok_or_else(|| format!("{log}: the sample has no value")),
        rows => Err(format!("{log}: {} sample rows, expected 1", rows.len())),
    }
}

/// What the pairs of one target show.
struct Pairs {
    hand: Vec<f64>,
    aba: Vec<f64>,
}

impl Pairs {
    /// The differences aba − hand.
    fn differences(&self) -> Vec<f64> {
        self.aba
            .iter()
            .zip(&self.hand)
            .map(|(a, h)| a - h)
            .collect()
    }

    /// What the run before does to a run: the pairs whose runs follow a by-hand run (even
    /// pairs) against those whose runs follow an aba run (odd pairs), for each kind of run
    /// (Hodges–Lehmann of the differences between neighbouring pairs, % of the hand's mean).
    fn after_each_kind(&self, label: &str) -> String {
        let base = self.hand.iter().sum::<f64>() / self.hand.len() as f64;
        let shift = |values: &[f64]| {
            let steps: Vec<f64> = values
                .chunks_exact(2)
                .map(|pair| 100.0 * (pair[1] - pair[0]) / base)
                .collect();
            hodges_lehmann(&steps).map_or_else(
                || "too few pairs".to_owned(),
                |(m, lo, hi)| format!("{m:+.3} % [{lo:+.3}, {hi:+.3}]"),
            )
        };
        let within = |odd: bool| {
            let d: Vec<f64> = self
                .differences()
                .iter()
                .enumerate()
                .filter(|(i, _)| (i % 2 == 1) == odd)
                .map(|(_, d)| *d)
                .collect();
            hodges_lehmann(&d).map_or_else(
                || "too few pairs".to_owned(),
                |(m, lo, hi)| {
                    let pct = |x: f64| 100.0 * x / base;
                    format!("{:+.3} % [{:+.3}, {:+.3}]", pct(m), pct(lo), pct(hi))
                },
            )
        };
        format!(
            "[7] {label}: a run after an aba run against one after a by-hand run: by hand {}, \
             aba {}; aba - hand in pairs after by-hand runs {}, after aba runs {}",
            shift(&self.hand),
            shift(&self.aba),
            within(false),
            within(true)
        )
    }

    /// The Hodges–Lehmann difference with its signed-rank 95 % interval, in % of the hand's
    /// mean.
    fn rank_difference(&self) -> Option<(f64, f64, f64)> {
        let base = self.hand.iter().sum::<f64>() / self.hand.len() as f64;
        let pct = |x: f64| 100.0 * x / base;
        hodges_lehmann(&self.differences()).map(|(m, lo, hi)| (pct(m), pct(lo), pct(hi)))
    }

    /// Mean of the hand's values, and the mean difference (aba − hand) with its 95 % interval,
    /// all three in % of the hand's mean.
    fn difference(&self) -> (f64, f64, f64, f64) {
        let n = self.hand.len() as f64;
        let base = self.hand.iter().sum::<f64>() / n;
        let d: Vec<f64> = self
            .aba
            .iter()
            .zip(&self.hand)
            .map(|(a, h)| a - h)
            .collect();
        let mean = d.iter().sum::<f64>() / n;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let half = t_quantile_975(n - 1.0) * sd / n.sqrt();
        let pct = |x: f64| 100.0 * x / base;
        (base, pct(mean), pct(mean - half), pct(mean + half))
    }
}

/// Runs item 7.
pub fn run(cfg: &Config, aba: &Aba, sshd: &Sshd) -> Result<(Vec<Row>, Vec<String>), String> {
    let dir = aba.work.join("aa");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let inventory = dir.join("targets.toml");
    sshd.inventory(&inventory, &dir.join("remote-work"))?;
    let line = command_line()?;
    let hand_line = by_hand_line(&line);
    let recipe = dir.join("aa.toml");
    write(
        &recipe,
        &format!(
            "version = 1\nname = \"bench-aa\"\ndescription = \"aba bench: A/A of a CPU loop\"\n\
             sequence = [\"this\"]\nwarmup = 1\nsamples = 1\n\n\
             [kernels.this]\nrelease = \"running\"\n\n\
             [[workload]]\nname = \"cpuloop\"\nrun = \"{line}\"\ntimeout = \"60s\"\nestimate = \"50ms\"\n\
             metric = {{ number = true, unit = \"ns/step\", better = \"lower\" }}\n"
        ),
    )?;
    let pairs = cfg.pick(10, 400);
    let mut rows = Vec::new();
    let mut details = Vec::new();
    for (label, target) in [("local", None), ("ssh", Some((inventory.as_path(), "box")))] {
        eprintln!("  [7] {label} target, {pairs} pairs");
        let hand_command = || -> Command {
            match target {
                None => {
                    let mut c = Command::new("sh");
                    c.arg("-c").arg(&hand_line);
                    c
                }
                Some(_) => {
                    let mut c = Command::new("ssh");
                    c.args(sshd.ssh_args()).arg(&hand_line);
                    c
                }
            }
        };
        let mut found = Pairs {
            hand: Vec::new(),
            aba: Vec::new(),
        };
        // Pairs in the order hand-aba, aba-hand, hand-aba, …: the runs go H A A H H A A H,
        // so both runs of a pair follow the same kind of run. What one kind leaves behind for
        // the next run (aba's files and their write-back, say) then falls on both members of
        // a pair alike, where strict alternation (H A H A) put it on every by-hand run.
        // And every run starts on a settled machine: the previous run's files written back
        // and a pause, so that nothing the run before left behind runs beside this one.
        for i in 0..pairs {
            let log = format!("aa-{label}-{i}");
            if i % 2 == 0 {
                settle()?;
                found.hand.push(by_hand(&mut hand_command())?);
                settle()?;
                found.aba.push(through_aba(aba, &log, &recipe, target)?);
            } else {
                settle()?;
                found.aba.push(through_aba(aba, &log, &recipe, target)?);
                settle()?;
                found.hand.push(by_hand(&mut hand_command())?);
            }
        }
        let (base, mean, lo, hi) = found.difference();
        let (hl, hl_lo, hl_hi) = found
            .rank_difference()
            .ok_or_else(|| format!("{label}: {pairs} pairs are too few for a rank interval"))?;
        let met = hl_lo <= 0.0 && hl_hi >= 0.0 && hl_lo >= -0.5 && hl_hi <= 0.5;
        rows.push(Row::new(
            "7",
            format!(
                "A/A value, aba - by hand, {label} target ({pairs} pairs), Hodges-Lehmann, signed-rank 95 % interval"
            ),
            format!("{hl:+.3} % [{hl_lo:+.3}, {hl_hi:+.3}]"),
            "includes 0, within ±0.5 %",
            Some(met),
        ));
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.4}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        details.push(found.after_each_kind(label));
        details.push(format!(
            "[7] {label}: by hand mean {base:.4} ns/step; aba - hand: Hodges-Lehmann {hl:+.3} % \
             (signed-rank 95 % [{hl_lo:+.3}, {hl_hi:+.3}]), mean {mean:+.3} % (t 95 % [{lo:+.3}, {hi:+.3}]); \
             by hand [{}]; aba [{}]",
            list(&found.hand),
            list(&found.aba)
        ));
    }
    Ok((rows, details))
}
