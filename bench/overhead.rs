//! Item 1: aba's per-sample overhead against a real sshd on 127.0.0.1, next to an OpenSSH
//! ControlMaster loop and plain `ssh`.
//!
//! aba is the real binary running two campaigns of one trivial workload on a `switch = "none"`
//! target, one with `small` samples and one with `small + diff`; the difference in wall time
//! over `diff` is what one sample costs through the whole path (build the command, exec over
//! the open session, parse the metric, append + fsync `samples.csv`, append + fsync the
//! journal), with start-up, connection and report cancelling out. A sample needs a number, so
//! aba's workload is `echo 1`; the ssh loops run `true` (both are shell builtins).

use std::{
    fs::{self, OpenOptions},
    io::Write,
    path::Path,
    process::{Command, Stdio},
    time::Instant,
};

use aba::results::journal::{Event, Journal};

use crate::{
    Config, Row,
    sshd::Sshd,
    util::{Aba, median, write},
};

/// The recipe of one trivial-sample campaign.
pub fn echo_recipe(path: &Path, name: &str, samples: u32, run: &str) -> Result<(), String> {
    write(
        path,
        &format!(
            "version = 1\nname = \"{name}\"\ndescription = \"aba bench: {run}\"\n\
             sequence = [\"this\"]\nwarmup = 0\nsamples = {samples}\n\n\
             [kernels.this]\nrelease = \"running\"\n\n\
             [[workload]]\nname = \"trivial\"\nrun = \"{run}\"\ntimeout = \"60s\"\nestimate = \"5ms\"\n\
             metric = {{ number = true, unit = \"1\", better = \"lower\" }}\n"
        ),
    )
}

/// Mean `elapsed_s` of the journal's sample records: the exec round trip as aba timed it.
fn mean_exec(dir: &Path) -> Result<f64, String> {
    let journal = Journal::read(&dir.join("journal.jsonl")).map_err(|e| e.to_string())?;
    let v: Vec<f64> = journal
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Sample { elapsed_s, .. } => Some(*elapsed_s),
            _ => None,
        })
        .collect();
    Ok(v.iter().sum::<f64>() / v.len().max(1) as f64)
}

fn ssh_loop(args: &[std::ffi::OsString], extra: &[&str], n: u32) -> Result<f64, String> {
    let started = Instant::now();
    for _ in 0..n {
        let status = Command::new("ssh")
            .args(extra)
            .args(args)
            .arg("true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("ssh: {e}"))?;
        if !status.success() {
            return Err(format!("ssh {extra:?} … true failed: {status}"));
        }
    }
    Ok(started.elapsed().as_secs_f64() / f64::from(n))
}

/// Cost of one small append + `fdatasync` in `dir` (what each of aba's two writes per sample
/// pays), seconds.
fn fsync_cost(dir: &Path, n: u32) -> Result<f64, String> {
    let path = dir.join("fsync-probe");
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| e.to_string())?;
    let line = [b'x'; 180];
    let started = Instant::now();
    for _ in 0..n {
        f.write_all(&line)
            .and_then(|()| f.sync_data())
            .map_err(|e| e.to_string())?;
    }
    let per = started.elapsed().as_secs_f64() / f64::from(n);
    let _ = fs::remove_file(&path);
    Ok(per)
}

/// Runs item 1 and item-1 details.
pub fn run(cfg: &Config, aba: &Aba, sshd: &Sshd) -> Result<(Vec<Row>, Vec<String>), String> {
    let dir = aba.work.join("overhead");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let inventory = dir.join("targets.toml");
    sshd.inventory(&inventory, &dir.join("remote-work"))?;
    let (small, diff) = (cfg.pick(20, 50), cfg.pick(200, 500));
    let small_recipe = dir.join("small.toml");
    let large_recipe = dir.join("large.toml");
    echo_recipe(&small_recipe, "bench-small", small, "echo 1")?;
    echo_recipe(&large_recipe, "bench-large", small + diff, "echo 1")?;
    let ssh = sshd.ssh_args();
    let sock = dir.join("cm.sock");
    let sock_text = sock.display().to_string();
    let cm = ["-S", sock_text.as_str()];
    let status = Command::new("ssh")
        .args(["-M", "-S", &sock_text, "-fN"])
        .args(&ssh)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("ssh -M: {e}"))?;
    if !status.success() {
        return Err(format!("cannot start the ControlMaster: {status}"));
    }
    let (n_cm, n_plain) = (cfg.pick(200, 500), cfg.pick(10, 50));
    let mut aba_per = Vec::new();
    let mut exec_per = Vec::new();
    let mut cm_per = Vec::new();
    let mut plain_per = Vec::new();
    let rounds = cfg.pick(1, 3);
    let result = (|| {
        for round in 0..rounds {
            eprintln!("  [1] round {}/{rounds}", round + 1);
            let a = aba.run(
                &format!("overhead-small-{round}"),
                &small_recipe,
                Some((&inventory, "box")),
                None,
            )?;
            let b = aba.run(
                &format!("overhead-large-{round}"),
                &large_recipe,
                Some((&inventory, "box")),
                None,
            )?;
            aba_per.push((b.cost.wall.as_secs_f64() - a.cost.wall.as_secs_f64()) / f64::from(diff));
            exec_per.push(mean_exec(&b.dir)?);
            cm_per.push(ssh_loop(&ssh, &cm, n_cm)?);
            plain_per.push(ssh_loop(&ssh, &[], n_plain)?);
        }
        Ok::<(), String>(())
    })();
    let _ = Command::new("ssh")
        .args(["-S", &sock_text, "-O", "exit"])
        .args(&ssh)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    result?;
    let fsync = fsync_cost(&dir, cfg.pick(100, 300))?;
    let (aba_ms, cm_ms, plain_ms, exec_ms) = (
        median(&aba_per) * 1e3,
        median(&cm_per) * 1e3,
        median(&plain_per) * 1e3,
        median(&exec_per) * 1e3,
    );
    let ratio = aba_ms / cm_ms;
    let rows = vec![
        Row::new(
            "1",
            format!("per-sample overhead, aba / ControlMaster ({diff} samples, sshd on 127.0.0.1)"),
            format!("{ratio:.2}x ({aba_ms:.2} / {cm_ms:.2} ms)"),
            "<= 0.15x",
            Some(ratio <= 0.15),
        ),
        Row::new(
            "1",
            "  plain `ssh host true` per command (for scale)".to_owned(),
            format!("{plain_ms:.1} ms ({:.0}x aba)", plain_ms / aba_ms),
            "-",
            None,
        ),
    ];
    let details = vec![
        format!(
            "[1] per sample, median of {rounds} round(s): aba {aba_ms:.2} ms = exec round trip \
             {exec_ms:.2} ms (journal elapsed_s: request to the persistent runner, fork, sh -c, the sweep for leftovers, both end markers back) + host side \
             {:.2} ms (parse, 2 appends with fdatasync, bookkeeping); fdatasync of one small \
             append here: {:.2} ms; ControlMaster {cm_ms:.2} ms ({n_cm} commands); plain ssh \
             {plain_ms:.1} ms ({n_plain} commands)",
            aba_ms - exec_ms,
            fsync * 1e3
        ),
        format!(
            "[1] all rounds: aba {:?} ms, ControlMaster {:?} ms",
            aba_per
                .iter()
                .map(|v| (v * 1e5).round() / 100.0)
                .collect::<Vec<_>>(),
            cm_per
                .iter()
                .map(|v| (v * 1e5).round() / 100.0)
                .collect::<Vec<_>>()
        ),
    ];
    Ok((rows, details))
}
