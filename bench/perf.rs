//! aba's speed targets (issue 6), measured as ratios inside one run on this machine.
//!
//! `bench/run.sh [--short]` builds `target/release/aba` and runs this program, which starts
//! what it needs (an sshd on 127.0.0.1 with fresh keys, a QEMU lab VM with its own name and
//! port), measures the real binary doing real campaigns, cleans up, and prints one table with
//! the measured value, the target and whether it was met, then the details behind each figure.
//! It never judges: the exit status is 0 whenever every figure could be measured, met or not.
//!
//! Items: 1 per-sample overhead (`overhead.rs`), 2 return detection after a kexec and
//! 3 campaign overhead (`labitems.rs`), 4 `aba report` on a million samples (`report.rs`;
//! its scaling and a huge field, `scaling.rs`),
//! 5 host CPU during a long sample (`cpu.rs`), 6 (issue 17 item 3) what aba does to the
//! target during a sample, in the lab (`footprint.rs`, `footprint.sh`), 7 (issue 29) the value
//! aba records is the workload's own: an A/A of a CPU loop by hand and through aba, local and
//! over SSH (`aa.rs`). `--short` (CI) uses fewer samples, a shorter
//! lab campaign and 100,000 synthetic samples. `--only 1,4` runs a subset.

mod aa;
mod cpu;
mod footprint;
mod lab;
mod labitems;
mod overhead;
mod report;
mod scaling;
mod sshd;
mod util;

use std::{path::PathBuf, process::ExitCode, time::Instant};

/// What the command line chose.
pub struct Config {
    /// CI's short mode.
    pub short: bool,
}

impl Config {
    /// `short` in short mode, else `full`.
    pub fn pick<T>(&self, short: T, full: T) -> T {
        if self.short { short } else { full }
    }
}

/// One line of the table.
pub struct Row {
    item: &'static str,
    what: String,
    measured: String,
    target: String,
    met: Option<bool>,
}

impl Row {
    /// A row; `met` is `None` for figures without a target.
    pub fn new(
        item: &'static str,
        what: String,
        measured: String,
        target: &str,
        met: Option<bool>,
    ) -> Row {
        Row {
            item,
            what,
            measured,
            target: target.to_owned(),
            met,
        }
    }
}

fn print_table(rows: &[Row]) {
    let w = |f: &dyn Fn(&Row) -> usize, title: &str| {
        rows.iter().map(f).max().unwrap_or(0).max(title.len())
    };
    let (wi, ww, wm, wt) = (
        w(&|r| r.item.len(), "#"),
        w(&|r| r.what.chars().count(), "measure"),
        w(&|r| r.measured.chars().count(), "measured"),
        w(&|r| r.target.chars().count(), "target"),
    );
    let line = |a: &str, b: &str, c: &str, d: &str, e: &str| {
        let pad =
            |s: &str, n: usize| format!("{s}{}", " ".repeat(n.saturating_sub(s.chars().count())));
        println!(
            "| {} | {} | {} | {} | {} |",
            pad(a, wi),
            pad(b, ww),
            pad(c, wm),
            pad(d, wt),
            pad(e, 6)
        );
    };
    line("#", "measure", "measured", "target", "result");
    println!(
        "|{}|{}|{}|{}|{}|",
        "-".repeat(wi + 2),
        "-".repeat(ww + 2),
        "-".repeat(wm + 2),
        "-".repeat(wt + 2),
        "-".repeat(8)
    );
    for r in rows {
        let result = match r.met {
            Some(true) => "met",
            Some(false) => "missed",
            None => "",
        };
        line(r.item, &r.what, &r.measured, &r.target, result);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Item 7's workload is this program: `perf --cpu-loop N`.
    if let [flag, steps, ..] = args.as_slice()
        && flag == "--cpu-loop"
    {
        let Ok(steps) = steps.parse() else {
            eprintln!("perf --cpu-loop N: N is a number of steps");
            return ExitCode::FAILURE;
        };
        aa::workload(steps);
        return ExitCode::SUCCESS;
    }
    let short = args.iter().any(|a| a == "--short");
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').map(str::to_owned).collect());
    let wanted = |item: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == item));
    let cfg = Config { short };
    let started = Instant::now();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_aba"));
    let work = match tempfile::Builder::new().prefix("aba-bench-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("bench: cannot create a temp dir: {e}");
            return ExitCode::FAILURE;
        }
    };
    let keep = std::env::var_os("ABA_BENCH_KEEP").is_some();
    let aba = util::Aba {
        bin,
        work: work.path().to_path_buf(),
    };
    eprintln!(
        "aba bench ({} mode), binary {}, work dir {}",
        if short { "short" } else { "full" },
        aba.bin.display(),
        aba.work.display()
    );
    let mut rows = Vec::new();
    let mut details = Vec::new();
    let mut failures = Vec::new();
    let mut record = |name: &str, result: Result<(Vec<Row>, Vec<String>), String>| match result {
        Ok((r, d)) => {
            rows.extend(r);
            details.extend(d);
        }
        Err(e) => {
            eprintln!("bench: item {name} could not be measured: {e}");
            failures.push(format!("item {name}: {e}"));
        }
    };
    let needs_sshd = wanted("1") || wanted("5") || wanted("7");
    let sshd = if needs_sshd {
        match sshd::Sshd::start(&aba.work.join("sshd")) {
            Ok(s) => Some(s),
            Err(e) => {
                record("1,5,7", Err(e));
                None
            }
        }
    } else {
        None
    };
    if let Some(sshd) = &sshd {
        if wanted("1") {
            eprintln!("[1] per-sample overhead");
            record("1", overhead::run(&cfg, &aba, sshd));
        }
        if wanted("5") {
            eprintln!("[5] host CPU during a long sample");
            record("5", cpu::run(&cfg, &aba, sshd));
        }
        if wanted("7") {
            eprintln!("[7] A/A: the value aba records is the workload's own");
            record("7", aa::run(&cfg, &aba, sshd));
        }
    }
    drop(sshd);
    if wanted("4") {
        eprintln!("[4] aba report on synthetic samples");
        record("4", report::run(&cfg, &aba));
    }
    if wanted("2") || wanted("3") || wanted("6") {
        eprintln!("[2,3,6] lab");
        let items = labitems::Items {
            switching: wanted("2") || wanted("3"),
            footprint: wanted("6"),
        };
        record("2,3,6", labitems::run(&cfg, &aba, items));
    }
    rows.sort_by_key(|r| r.item);
    let commit = std::process::Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "describe",
            "--always",
            "--dirty",
        ])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!(
        "\naba bench, {} mode, commit {commit}, {} CPUs, {:.0} s\n",
        if short { "short" } else { "full" },
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        started.elapsed().as_secs_f64()
    );
    print_table(&rows);
    println!();
    for d in &details {
        println!("{d}");
    }
    if keep {
        let kept = work.keep();
        eprintln!("bench: work dir kept: {}", kept.display());
    }
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("\nnot measured:");
        for f in &failures {
            println!("  {f}");
        }
        ExitCode::FAILURE
    }
}
