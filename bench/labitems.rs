//! Items 2 and 3, in the QEMU lab: a kexec A-B-A campaign run by the real aba binary, its
//! journal tailed as it is written (each record stamped on arrival) and the VM's serial console
//! read live (each line stamped on arrival), all on the host clock.
//!
//! Per switch: the guest prints `LAB: up … boot_id=X` and then `LAB: sshd ready` the moment
//! sshd listens; aba's `boot_proven` for boot X carries `proven_at` (host time of the completed
//! proof), `proof_s` (the proof's own commands after the login) and `login_s` (trigger to
//! login). Return detection = (proven_at − proof_s) − sshd ready: from "logins possible" to
//! aba's login into the new boot.
//!
//! Campaign overhead, as the issue defines it: the campaign's wall time against the sum, over
//! the same run, of boot-to-login (`login_s` of each `boot_proven`: aba's trigger to its login
//! into the new boot) and the workload runs (`elapsed_s` of every `sample` record); the rest is
//! aba's, and the journal's arrival times split it into steps. A strict variant counts as the
//! machine's only `kexec -e` (1 s after the trigger) to `LAB: sshd ready` and labbench's own
//! timed loop (`wall_ns`), so that the trigger delay, the detection latency and the per-run exec
//! overhead count as aba's too.

use std::{collections::HashMap, fs, path::Path, time::SystemTime};

use aba::results::journal::Event;

use crate::{
    Config, Row,
    lab::{Vm, kernels},
    util::{Aba, JournalTail, median, parse_time, secs_between, write},
};

/// The delay aba's kexec trigger puts before `kexec -e` (`sleep 1` in the detached command,
/// so that the triggering exec returns first).
const TRIGGER_DELAY: f64 = 1.0;

/// One switch as observed.
#[derive(Debug, Default, Clone)]
struct Switch {
    label: String,
    trigger: Option<SystemTime>,
    sshd_ready: Option<SystemTime>,
    logged_in: Option<SystemTime>,
    proven: Option<SystemTime>,
    proof_s: f64,
    login_s: f64,
    switch_s: f64,
}

/// Per-point step times (seconds) from journal arrivals.
#[derive(Debug, Default, Clone)]
struct Steps {
    prepare: f64,
    wait_after_boot: f64,
    proof: f64,
    tune: f64,
    before_first: f64,
    sample_gaps: f64,
    samples: u32,
    elapsed: f64,
    audit_after: f64,
    boot: f64,
}

fn recipe(path: &Path, name: &str, sequence: &str, samples: u32, run: &str) -> Result<(), String> {
    let k = kernels()?;
    let metric = if run.contains("labbench") {
        "{ json = \"/wall_ns\", unit = \"ns\", better = \"lower\" }"
    } else {
        "{ number = true, unit = \"1\", better = \"lower\" }"
    };
    write(
        path,
        &format!(
            "version = 1\nname = \"{name}\"\ndescription = \"aba bench: kexec A-B-A in the lab\"\n\
             sequence = [{sequence}]\nwarmup = 1\nsamples = {samples}\nsettle = \"0s\"\n\n\
             [kernels.a]\nrelease = \"{a}\"\ncmdline = \"aba.kernel=a\"\n\n\
             [kernels.b]\nrelease = \"{b}\"\ncmdline = \"aba.kernel=b\"\n\n\
             [boot]\ncmdline = \"aba.lab=1\"\n\n\
             [sysctl]\n\"kernel.sched_rt_runtime_us\" = 950000\n\n\
             [tuning]\ngovernor = \"performance\"\noptional = [\"governor\"]\n\n\
             [[workload]]\nname = \"work\"\nrun = \"{run}\"\ntimeout = \"120s\"\nestimate = \"1s\"\n\
             metric = {metric}\n\n\
             [analysis]\nbaseline = \"a\"\ngate_pct = 5.0\nmax_cv_pct = 10.0\nmax_drift_pct = 5.0\n",
            a = k[0],
            b = k[1]
        ),
    )
}

/// Sum of the `wall_ns` values of every ok run (warm-ups included) in the campaign's
/// samples.csv: labbench's own timed loop, in seconds.
fn workload_own_time(dir: &Path) -> Result<f64, String> {
    let table = aba::results::samples::SampleTable::read(&dir.join("samples.csv"))
        .map_err(|e| e.to_string())?;
    Ok(table.rows.iter().filter_map(|r| r.value).sum::<f64>() / 1e9)
}

/// Medians of `n` fresh logins (aba's SSH transport) to the VM and of reading the boot facts
/// right after each, in seconds.
fn settled_login(vm: &Vm, n: u32) -> Result<(f64, f64), String> {
    use aba::{
        kernel::proof::read_facts,
        target::ssh::{SshTarget, SshTransport},
    };
    let lab = crate::lab::lab_dir();
    let mut target = SshTarget::new("127.0.0.1");
    target.port = Some(vm.port);
    target.user = Some("root".into());
    target.identity = Some(lab.join("id_ed25519"));
    target.known_hosts = Some(lab.join("known_hosts"));
    target.ssh_config = Some("/dev/null".into());
    let (mut logins, mut facts) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let started = std::time::Instant::now();
        let mut ssh = SshTransport::new(&target).map_err(|e| e.to_string())?;
        // A generous deadline: it bounds a loaded host's slowest login, never the figure.
        aba::target::transport::Transport::reconnect(
            &mut ssh,
            std::time::Instant::now() + std::time::Duration::from_secs(120),
        )
        .map_err(|e| e.to_string())?;
        logins.push(started.elapsed().as_secs_f64());
        let started = std::time::Instant::now();
        read_facts(&mut ssh).map_err(|e| e.to_string())?;
        facts.push(started.elapsed().as_secs_f64());
    }
    Ok((median(&logins), median(&facts)))
}

/// Console: boot_id → host time of that boot's `LAB: sshd ready`.
fn sshd_ready_by_boot(lines: &[(SystemTime, String)]) -> HashMap<String, SystemTime> {
    let mut map = HashMap::new();
    let mut boot: Option<String> = None;
    for (t, line) in lines {
        if let Some(rest) = line.split("LAB: up ").nth(1) {
            boot = rest
                .split_whitespace()
                .find_map(|w| w.strip_prefix("boot_id="))
                .map(str::to_owned);
        } else if line.contains("LAB: sshd ready")
            && let Some(id) = boot.take()
        {
            map.insert(id, *t);
        }
    }
    map
}

fn analyse(
    records: &[(SystemTime, String)],
    console: &[(SystemTime, String)],
) -> Result<(Vec<Switch>, Vec<Steps>), String> {
    let ready = sshd_ready_by_boot(console);
    let mut switches = Vec::new();
    let mut steps = Vec::new();
    let mut cur_switch = Switch::default();
    let mut cur = Steps::default();
    let mut last: Option<SystemTime> = None;
    let mut proven_arrival: Option<SystemTime> = None;
    for (arrived, text) in records {
        let event: Event =
            serde_json::from_str(text).map_err(|e| format!("journal line {text}: {e}"))?;
        match event {
            Event::PointStarted { point, .. } => {
                cur_switch = Switch {
                    label: point,
                    ..Switch::default()
                };
                cur = Steps::default();
            }
            Event::BootProven {
                boot_id,
                switch_s,
                login_s,
                proof_s,
                proven_at,
                ..
            } => {
                let proven = proven_at
                    .as_deref()
                    .and_then(parse_time)
                    .ok_or("boot_proven has no proven_at: rebuild aba")?;
                let proof = proof_s.unwrap_or(0.0);
                let logged_in = proven - std::time::Duration::from_secs_f64(proof);
                let trigger = logged_in - std::time::Duration::from_secs_f64(login_s);
                cur_switch.trigger = Some(trigger);
                cur_switch.logged_in = Some(logged_in);
                cur_switch.proven = Some(proven);
                cur_switch.sshd_ready = ready.get(&boot_id).copied();
                cur_switch.proof_s = proof;
                cur_switch.login_s = login_s;
                cur_switch.switch_s = switch_s;
                cur.prepare = switch_s - login_s - proof;
                cur.proof = proof;
                if let Some(r) = cur_switch.sshd_ready {
                    cur.boot = secs_between(r, trigger) - TRIGGER_DELAY;
                    cur.wait_after_boot = secs_between(logged_in, r);
                }
                proven_arrival = Some(*arrived);
                last = Some(*arrived);
            }
            Event::Tuned { .. } => {
                if let Some(p) = proven_arrival {
                    cur.tune = secs_between(*arrived, p);
                }
                last = Some(*arrived);
            }
            Event::Sample { elapsed_s, .. } => {
                let started = secs_between(*arrived, last.unwrap_or(*arrived)) - elapsed_s;
                if cur.samples == 0 {
                    cur.before_first = started;
                } else {
                    cur.sample_gaps += started;
                }
                cur.samples += 1;
                cur.elapsed += elapsed_s;
                last = Some(*arrived);
            }
            Event::PointDone { .. } => {
                if let Some(l) = last {
                    cur.audit_after = secs_between(*arrived, l);
                }
                switches.push(cur_switch.clone());
                steps.push(cur.clone());
                proven_arrival = None;
            }
            _ => {}
        }
    }
    Ok((switches, steps))
}

/// Which lab items to measure on the one VM.
#[derive(Clone, Copy, Debug)]
pub struct Items {
    /// Items 2 and 3: kexec switches and campaign overhead.
    pub switching: bool,
    /// Item 6: the footprint during a sample (`footprint.rs`).
    pub footprint: bool,
}

/// Runs the lab items `items` names on one VM.
pub fn run(cfg: &Config, aba: &Aba, items: Items) -> Result<(Vec<Row>, Vec<String>), String> {
    let dir = aba.work.join("lab");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    eprintln!("  [lab] starting lab VM");
    let vm = Vm::start(&format!("bench{}", std::process::id()))?;
    let (mut table, mut details) = if items.footprint {
        crate::footprint::run(cfg, aba, &vm, &dir)?
    } else {
        (Vec::new(), Vec::new())
    };
    if items.switching {
        let (t, d) = switching(cfg, aba, &vm, &dir)?;
        table.extend(t);
        details.extend(d);
    }
    drop(vm);
    Ok((table, details))
}

/// Items 2 and 3 on `vm`.
fn switching(
    cfg: &Config,
    aba: &Aba,
    vm: &Vm,
    dir: &Path,
) -> Result<(Vec<Row>, Vec<String>), String> {
    let inventory = dir.join("targets.toml");
    vm.inventory(&inventory)?;
    let tail = JournalTail::start();
    let mut switches = Vec::new();
    let mut details = Vec::new();

    // Item 3: the A-B-A.
    let (samples, mloops) = (cfg.pick(3, 10), cfg.pick(500, 2500));
    let aba_recipe = dir.join("aba.toml");
    recipe(
        &aba_recipe,
        "bench-lab-aba",
        "\"a\", \"b\", \"a\"",
        samples,
        &format!("labbench {mloops} --json"),
    )?;
    eprintln!("  [3] lab A-B-A: 3 points x (1 warm-up + {samples} x labbench {mloops})");
    let run = aba.run(
        "lab-aba",
        &aba_recipe,
        Some((&inventory, "lab")),
        Some(&tail),
    )?;
    let records = tail.take();
    let (sw, steps) = analyse(&records, &vm.lines())?;
    switches.extend(sw.iter().cloned());
    let wall = run.cost.wall.as_secs_f64();
    let boot: f64 = steps.iter().map(|s| s.boot).sum();
    let work: f64 = steps.iter().map(|s| s.elapsed).sum();
    let login: f64 = sw.iter().map(|s| s.login_s).sum();
    let own = workload_own_time(&run.dir)?;
    let overhead = 100.0 * (wall - login - work) / (login + work);
    let strict = 100.0 * (wall - boot - own) / (boot + own);
    let n = steps.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Steps) -> f64| steps.iter().map(f).sum::<f64>() / n;
    let aba_per_point = (wall - login - work) / n;
    let runs = steps.iter().map(|s| s.samples).sum::<u32>();
    let listed =
        mean(&|s| s.prepare + s.proof + s.tune + s.before_first + s.sample_gaps + s.audit_after);
    let rows = vec![
        Row::new(
            "3",
            format!(
                "lab A-B-A overhead: wall {wall:.1} s vs trigger-to-login {login:.1} s + runs {work:.1} s"
            ),
            format!("{overhead:.1} %"),
            "<= 3 %",
            Some(overhead <= 3.0),
        ),
        Row::new(
            "3",
            format!(
                "  strict: vs kexec-to-sshd-ready {boot:.1} s + labbench's own time {own:.1} s"
            ),
            format!("{strict:.1} %"),
            "-",
            None,
        ),
    ];
    details.push(format!(
        "[3] {} points, {runs} runs (1 warm-up + {samples} samples of labbench {mloops} each per point); \
         aba's own time outside trigger-to-login and the runs: {:.1} s = {aba_per_point:.2} s per \
         point: switch preparation (boot facts, kexec -l, trigger) {:.2} s, proof {:.2} s, tuning \
         and read-back {:.2} s, environment record + work directory + audit before the first run \
         {:.2} s, between runs {:.1} ms x {} per point, audit after the last run {:.2} s, the rest \
         (start, connection, bookkeeping, report) {:.2} s. Inside trigger-to-login: the trigger's \
         1 s delay and sshd ready -> login {:.2} s per point. Inside the runs' elapsed time: \
         {:.0} ms per run of exec overhead (elapsed_s minus labbench's wall_ns). At {aba_per_point:.2} s \
         per point, 3 % needs {:.0} s of boot + workload per point.",
        steps.len(),
        wall - login - work,
        mean(&|s| s.prepare),
        mean(&|s| s.proof),
        mean(&|s| s.tune),
        mean(&|s| s.before_first),
        1e3 * mean(&|s| s.sample_gaps / f64::from(s.samples.saturating_sub(1).max(1))),
        runs / u32::try_from(steps.len().max(1)).unwrap_or(1),
        mean(&|s| s.audit_after),
        aba_per_point - listed,
        mean(&|s| s.wait_after_boot),
        1e3 * (work - own) / f64::from(runs.max(1)),
        aba_per_point / 0.03,
    ));

    // Item 2: more switches in the full run.
    if !cfg.short {
        let switch_recipe = dir.join("switch.toml");
        recipe(
            &switch_recipe,
            "bench-lab-switch",
            "\"a\", \"b\", \"a\", \"b\", \"a\", \"b\"",
            1,
            "echo 1",
        )?;
        eprintln!("  [2] 6 more kexec switches");
        aba.run(
            "lab-switch",
            &switch_recipe,
            Some((&inventory, "lab")),
            Some(&tail),
        )?;
        let (sw, _) = analyse(&tail.take(), &vm.lines())?;
        switches.extend(sw);
    }
    // For scale: what one login and the proof's facts cost on this guest once it has settled.
    let (login_ref, facts_ref) = settled_login(vm, cfg.pick(5, 10))?;
    details.push(format!(
        "[2] for scale, on the settled guest (median of {}): a fresh login (TCP, SSH handshake, \
         authentication) {login_ref:.2} s, then the proof's facts {facts_ref:.2} s",
        cfg.pick(5, 10)
    ));
    let detect: Vec<f64> = switches
        .iter()
        .filter_map(|s| Some(secs_between(s.logged_in?, s.sshd_ready?)))
        .collect();
    let proofs: Vec<f64> = switches.iter().map(|s| s.proof_s).collect();
    if detect.len() != switches.len() {
        details.push(format!(
            "[2] {} of {} switches had no `LAB: sshd ready` line for their boot_id",
            switches.len() - detect.len(),
            switches.len()
        ));
    }
    let med = median(&detect);
    let worst = detect.iter().copied().fold(f64::NAN, f64::max);
    let mut table = vec![
        Row::new(
            "2",
            format!(
                "return detection after kexec: sshd ready → aba logged in (median of {}, max)",
                detect.len()
            ),
            format!("{med:.2} s, max {worst:.2} s"),
            "<= 0.5 s",
            Some(med <= 0.5),
        ),
        Row::new(
            "2",
            "  + the proof's own commands (facts read after the login), median".to_owned(),
            format!("{:.2} s", median(&proofs)),
            "-",
            None,
        ),
    ];
    table.extend(rows);
    for s in &switches {
        let t = |x: Option<SystemTime>| x.and_then(|x| Some(secs_between(x, s.trigger?)));
        details.push(format!(
            "[2] {}: from trigger: sshd ready {:.2} s, logged in {:.2} s, proven {:.2} s \
             (proof {:.3} s); preparation before the trigger {:.2} s",
            s.label,
            t(s.sshd_ready).unwrap_or(f64::NAN),
            t(s.logged_in).unwrap_or(f64::NAN),
            t(s.proven).unwrap_or(f64::NAN),
            s.proof_s,
            s.switch_s - s.login_s - s.proof_s,
        ));
    }
    Ok((table, details))
}
