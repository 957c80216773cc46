//! Issue 17 item 3, in the QEMU lab: what aba does to the target while a sample runs.
//!
//! The workload is `bench/footprint.sh 10`, after one warm-up run of it (right after the VM
//! starts, the guest's sshd still ends the connections the readiness probe opened while it
//! booted, which QEMU's user network handed over late; they are not aba's and the warm-up
//! absorbs them): it snapshots the guest's counters, sleeps 10 s and
//! snapshots again, so the window is the sample itself and nothing of the script's own (but
//! the `sleep`) lands in it. Per second of sample it gives the CPU time and context switches
//! of sshd and of the other processes below an sshd (aba's persistent runner and the run's supervisor), the
//! packets the guest's interface received and sent, and the system's context switches and
//! forks. The same script through a plain `ssh target sh -s 10` (OpenSSH, no keepalive) is
//! the scale: the least a connection costs. Voluntary context switches are wake-ups.
//!
//! Last, a silent sample is frozen halfway (SIGSTOP of the VM's QEMU process) and the time to
//! aba's "connection lost" is measured: QEMU's user network answers TCP for the guest on the
//! host, so this is the SSH keepalive's bound (`ssh_keepalive` + `dead_after`), not the
//! kernel probes'.
//!
//! The sample goes through the persistent runner (item 1), aba's default on SSH targets: the
//! runner and the run's supervisor wait in `read` and `wait` next to it.

use std::{
    collections::BTreeMap,
    fs,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::{
    Config, Row,
    lab::{Vm, lab_dir},
    util::{Aba, write},
};

/// The sample's length.
const SECONDS: u32 = 10;

/// `CLK_TCK` of the guest (Linux on x86 reports 100 ticks per second in /proc).
const TICKS_PER_SECOND: f64 = 100.0;

/// The counters footprint.sh prints, in its order.
const COUNTERS: &[&str] = &[
    "sshd_processes",
    "sshd_ticks",
    "sshd_voluntary",
    "sshd_nonvoluntary",
    "sshd_ns",
    "aba_processes",
    "aba_ticks",
    "aba_voluntary",
    "aba_nonvoluntary",
    "aba_ns",
    "system_ctxt",
    "system_forks",
    "rx_packets",
    "tx_packets",
];

/// Mean counters of several windows.
type Counters = BTreeMap<String, f64>;

fn recipe(path: &Path, samples: u32) -> Result<(), String> {
    let metrics: String = COUNTERS
        .iter()
        .map(|c| {
            format!(
                "[[workload.metric]]\nname = \"{c}\"\nregex = '(?m)^{c} (\\d+)$'\nunit = \"1\"\nbetter = \"lower\"\n\n"
            )
        })
        .collect();
    write(
        path,
        &format!(
            "version = 1\nname = \"bench-footprint\"\n\
             description = \"aba bench: what aba does to the target during a {SECONDS} s sample\"\n\
             sequence = [\"this\"]\nwarmup = 1\nsamples = {samples}\nsettle = \"0s\"\n\n\
             [kernels.this]\nrelease = \"running\"\n\n\
             [files]\n\"footprint.sh\" = \"footprint.sh\"\n\n\
             [[workload]]\nname = \"sleep\"\nrun = \"sh footprint.sh {SECONDS}\"\n\
             timeout = \"120s\"\nestimate = \"{SECONDS}s\"\n\n{metrics}\
             [analysis]\nbaseline = \"this\"\n"
        ),
    )
}

/// The campaign's samples (read once), and the mean of each counter over those whose index
/// `keep` accepts.
struct Windows {
    dir: std::path::PathBuf,
    table: aba::results::samples::SampleTable,
}

impl Windows {
    fn read(dir: &Path) -> Result<Windows, String> {
        let table = aba::results::samples::SampleTable::read(&dir.join("samples.csv"))
            .map_err(|e| e.to_string())?;
        Ok(Windows {
            dir: dir.to_path_buf(),
            table,
        })
    }

    fn mean(&self, keep: impl Fn(u32) -> bool) -> Result<Counters, String> {
        let table = &self.table;
        let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
        for row in &table.rows {
            if row.phase != aba::results::samples::Phase::Sample || !keep(row.index) {
                continue;
            }
            let Some(v) = row.value else { continue };
            let e = sums.entry(table.text(row.metric).to_owned()).or_default();
            e.0 += v;
            e.1 += 1;
        }
        if sums.len() != COUNTERS.len() {
            return Err(format!(
                "{} has {} of the {} counters",
                self.dir.display(),
                sums.len(),
                COUNTERS.len()
            ));
        }
        Ok(sums
            .into_iter()
            .map(|(k, (s, n))| (k, s / f64::from(n)))
            .collect())
    }
}

/// footprint.sh's output as counters.
fn parse(text: &str) -> Result<Counters, String> {
    let mut out = Counters::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(' ')
            && COUNTERS.contains(&k)
        {
            out.insert(
                k.to_owned(),
                v.trim()
                    .parse()
                    .map_err(|e| format!("footprint.sh printed `{line}`: {e}"))?,
            );
        }
    }
    if out.len() != COUNTERS.len() {
        return Err(format!("footprint.sh printed too little:\n{text}"));
    }
    Ok(out)
}

/// OpenSSH's client to the VM, running `remote`.
fn ssh(vm: &Vm, remote: &str) -> Command {
    let lab = lab_dir();
    let mut cmd = Command::new("ssh");
    cmd.args(["-F", "/dev/null", "-o", "BatchMode=yes", "-o"])
        .arg(format!(
            "UserKnownHostsFile={}",
            lab.join("known_hosts").display()
        ))
        .arg("-i")
        .arg(lab.join("id_ed25519"))
        .args(["-p", &vm.port.to_string(), "root@127.0.0.1"])
        .arg(remote);
    cmd
}

/// The script through OpenSSH's client, `n` times: the mean counters.
fn plain_ssh(vm: &Vm, script: &Path, n: u32) -> Result<Counters, String> {
    let mut sums = Counters::new();
    for _ in 0..n {
        let out = ssh(vm, &format!("sh -s {SECONDS}"))
            .stdin(fs::File::open(script).map_err(|e| e.to_string())?)
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run ssh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "ssh … sh -s {SECONDS} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        for (k, v) in parse(&String::from_utf8_lossy(&out.stdout))? {
            *sums.entry(k).or_default() += v;
        }
    }
    Ok(sums
        .into_iter()
        .map(|(k, v)| (k, v / f64::from(n)))
        .collect())
}

/// Polls `ready` every 50 ms for at most `limit`; the time it first held.
fn wait_until(limit: Duration, mut ready: impl FnMut() -> bool) -> Option<Instant> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ready() {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Seconds from SIGSTOP of the VM's QEMU process, in the middle of a silent sample, to aba's
/// "connection lost"; the VM is continued and the campaign interrupted afterwards.
fn frozen_target(aba: &Aba, vm: &Vm, inventory: &Path, dir: &Path) -> Result<f64, String> {
    const MARK: &str = "sleep 47";
    let recipe_path = dir.join("freeze.toml");
    write(
        &recipe_path,
        &format!(
            "version = 1\nname = \"bench-freeze\"\ndescription = \"aba bench: a target frozen mid-sample\"\n\
             sequence = [\"this\"]\nwarmup = 0\nsamples = 1\nsettle = \"0s\"\n\n\
             [kernels.this]\nrelease = \"running\"\n\n\
             [[workload]]\nname = \"sleep\"\nrun = \"{MARK}; echo 1\"\ntimeout = \"300s\"\n\
             metric = {{ number = true, unit = \"1\", better = \"lower\" }}\n\n\
             [analysis]\nbaseline = \"this\"\n"
        ),
    )?;
    let parent = aba.results_parent("lab-freeze")?;
    let mut child = aba
        .command("lab-freeze")?
        .arg("run")
        .arg("--results")
        .arg(&parent)
        .arg("--targets")
        .arg(inventory)
        .args(["--target", "lab"])
        .arg(&recipe_path)
        .spawn()
        .map_err(|e| format!("cannot start aba: {e}"))?;
    let log = aba.work.join("lab-freeze.log");
    let result = (|| {
        wait_until(Duration::from_secs(120), || {
            ssh(vm, "ps")
                .stderr(Stdio::null())
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(MARK))
        })
        .ok_or("the frozen-target sample never started on the guest")?;
        // Into the sample, so that the last keepalive answer is anywhere in its cycle.
        std::thread::sleep(Duration::from_millis(2500));
        let pid = fs::read_to_string(lab_dir().join("out/run").join(&vm.name).join("qemu.pid"))
            .map_err(|e| format!("qemu.pid: {e}"))?;
        let pid: i32 = pid.trim().parse().map_err(|e| format!("qemu.pid: {e}"))?;
        // SAFETY: kill(2) on the VM's QEMU process, which this bench started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let frozen = Instant::now();
        let noticed = wait_until(Duration::from_secs(90), || {
            fs::read_to_string(&log).is_ok_and(|t| t.contains("connection lost"))
        });
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        noticed
            .map(|t| t.duration_since(frozen).as_secs_f64())
            .ok_or_else(|| "aba did not notice the frozen target within 90 s".to_owned())
    })();
    // SAFETY: kill(2) on the aba process this bench started.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap_or(0), libc::SIGINT) };
    if wait_until(Duration::from_secs(60), || {
        child.try_wait().is_ok_and(|s| s.is_some())
    })
    .is_none()
    {
        let _ = child.kill();
        let _ = child.wait();
    }
    result
}

/// Per second of sample.
fn rate(c: &Counters, key: &str) -> f64 {
    c.get(key).copied().unwrap_or(f64::NAN) / f64::from(SECONDS)
}

/// CPU time in ticks as a percentage of one CPU.
fn cpu_pct(c: &Counters, keys: &[&str]) -> f64 {
    keys.iter().map(|k| rate(c, k)).sum::<f64>() / TICKS_PER_SECOND * 100.0
}

/// Scheduler run time in nanoseconds (`/proc/PID/schedstat`) as a percentage of one CPU.
fn run_pct(c: &Counters, keys: &[&str]) -> f64 {
    keys.iter().map(|k| rate(c, k)).sum::<f64>() / 1e9 * 100.0
}

/// Measures aba's footprint during a sample on `vm` (already up), campaign files in `dir`.
pub fn run(
    cfg: &Config,
    aba: &Aba,
    vm: &Vm,
    dir: &Path,
) -> Result<(Vec<Row>, Vec<String>), String> {
    let dir = dir.join("footprint");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let script = dir.join("footprint.sh");
    write(&script, include_str!("footprint.sh"))?;
    let inventory = dir.join("targets.toml");
    vm.inventory_switching(&inventory, "none")?;
    let samples = cfg.pick(2, 5);
    let recipe_path = dir.join("footprint.toml");
    recipe(&recipe_path, samples)?;
    eprintln!("  [17.3] footprint: {samples} samples of a {SECONDS} s sleep through aba");
    let run = aba.run(
        "lab-footprint",
        &recipe_path,
        Some((&inventory, "lab")),
        None,
    )?;
    let windows = Windows::read(&run.dir)?;
    let with_aba = windows.mean(|_| true)?;
    let first = windows.mean(|i| i == 1)?;
    let later = windows.mean(|i| i > 1)?;
    eprintln!("  [17.3] the same through a plain `ssh target sh -s {SECONDS}`, {samples} times");
    let plain = plain_ssh(vm, &script, samples)?;
    eprintln!("  [17.3] a target frozen (SIGSTOP of QEMU) in the middle of a silent sample");
    let noticed = frozen_target(aba, vm, &inventory, &dir)?;

    let both = ["sshd_ns", "aba_ns"];
    let wakeups = |c: &Counters| rate(c, "sshd_voluntary") + rate(c, "aba_voluntary");
    let aba_cpu = run_pct(&with_aba, &both);
    let aba_wake = wakeups(&with_aba);
    let (rx, tx) = (rate(&with_aba, "rx_packets"), rate(&with_aba, "tx_packets"));
    let rows = vec![
        Row::new(
            "17.3",
            format!(
                "during a {SECONDS} s sample: target CPU of sshd + aba's processes, scheduler run time (plain ssh {:.3} %; in ticks {:.3} %)",
                run_pct(&plain, &both),
                cpu_pct(&with_aba, &["sshd_ticks", "aba_ticks"])
            ),
            format!("{aba_cpu:.3} % of one CPU"),
            "<= 0.1 %",
            Some(aba_cpu <= 0.1),
        ),
        Row::new(
            "17.3",
            format!(
                "  their wake-ups (voluntary context switches; plain ssh {:.1}/s)",
                wakeups(&plain)
            ),
            format!("{aba_wake:.1}/s"),
            "<= 1/s",
            Some(aba_wake <= 1.0),
        ),
        Row::new(
            "17.3",
            format!(
                "  packets to / from the target (plain ssh {:.1} / {:.1} per s)",
                rate(&plain, "rx_packets"),
                rate(&plain, "tx_packets")
            ),
            format!("{rx:.1} / {tx:.1} per s"),
            "<= 1/s each",
            Some(rx <= 1.0 && tx <= 1.0),
        ),
        Row::new(
            "17.3",
            "a target frozen mid-sample (SIGSTOP of QEMU): aba says connection lost after"
                .to_owned(),
            format!("{noticed:.1} s"),
            "<= 10 s",
            Some(noticed <= 10.0),
        ),
    ];
    let line = |name: &str, c: &Counters| {
        format!(
            "[17.3] {name}: per second of sample, sshd {:.0} process(es) {:.4} % CPU run time \
             ({:.3} % in ticks), {:.2} voluntary + {:.2} involuntary switches; other processes \
             below sshd (runner, supervisor, shell) {:.0} process(es) {:.4} % CPU run time \
             ({:.3} % in ticks), {:.2} + {:.2} switches; guest \
             received {:.2} and sent {:.2} packets; system-wide {:.1} context switches and \
             {:.2} forks (the sample's own `sleep` adds one fork per window and a few switches)",
            c.get("sshd_processes").copied().unwrap_or(f64::NAN),
            run_pct(c, &["sshd_ns"]),
            cpu_pct(c, &["sshd_ticks"]),
            rate(c, "sshd_voluntary"),
            rate(c, "sshd_nonvoluntary"),
            c.get("aba_processes").copied().unwrap_or(f64::NAN),
            run_pct(c, &["aba_ns"]),
            cpu_pct(c, &["aba_ticks"]),
            rate(c, "aba_voluntary"),
            rate(c, "aba_nonvoluntary"),
            rate(c, "rx_packets"),
            rate(c, "tx_packets"),
            rate(c, "system_ctxt"),
            rate(c, "system_forks"),
        )
    };
    let window = |c: &Counters| {
        format!(
            "sshd {:.3} % CPU run time, {:.2} wake-ups/s, {:.2} forks/s, {:.2} / {:.2} packets/s",
            run_pct(c, &["sshd_ns"]),
            rate(c, "sshd_voluntary"),
            rate(c, "system_forks"),
            rate(c, "rx_packets"),
            rate(c, "tx_packets")
        )
    };
    let details = vec![
        line("aba (through the persistent runner)", &with_aba),
        format!(
            "[17.3] by window: sample 1 {}; samples 2-{samples} {} (one warm-up run of the \
             script comes first: right after the VM's start, the guest's sshd still ends the \
             connections the readiness probe opened while it booted, which QEMU's user network \
             accepted for it and hands over once sshd listens; they are not aba's)",
            window(&first),
            window(&later)
        ),
        line("plain `ssh target sh -s 10`", &plain),
        format!(
            "[17.3] means of {samples} windows each; CPU as the scheduler's run time \
             (/proc/PID/schedstat, nanoseconds), and from utime+stime at {TICKS_PER_SECOND} \
             ticks/s for comparison (one 10 ms tick in a {SECONDS} s window is 0.1 %, and ticks \
             are sampled: a process that runs 1 ms at a tick is charged 10)"
        ),
    ];
    Ok((rows, details))
}
