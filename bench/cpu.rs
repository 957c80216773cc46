//! Item 5: host CPU while one long sample runs. aba runs a campaign with one `sleep S` sample
//! and one with `sleep 0`, on the built-in local target and on the sshd target; `wait4` gives
//! the CPU of aba and every child it waited for (on the local target that includes the
//! workload's `sh` and `sleep`, on the ssh target only aba). The extra CPU of the long
//! campaign over the extra wall time is what aba burns while a sample runs; the total over
//! the whole long campaign is an upper bound that includes start-up and the report.

use std::fs;

use crate::{
    Config, Row,
    overhead::echo_recipe,
    sshd::Sshd,
    util::{Aba, Measured},
};

/// Runs item 5.
pub fn run(cfg: &Config, aba: &Aba, sshd: &Sshd) -> Result<(Vec<Row>, Vec<String>), String> {
    let dir = aba.work.join("cpu");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let inventory = dir.join("targets.toml");
    sshd.inventory(&inventory, &dir.join("remote-work"))?;
    let secs = cfg.pick(3, 10);
    let long = dir.join("long.toml");
    let short = dir.join("short.toml");
    echo_recipe(&long, "bench-sleep", 1, &format!("sleep {secs}; echo 1"))?;
    echo_recipe(&short, "bench-nosleep", 1, "sleep 0; echo 1")?;
    let mut rows = Vec::new();
    let mut details = Vec::new();
    for (label, target) in [("local", None), ("ssh", Some((inventory.as_path(), "box")))] {
        eprintln!("  [5] {label} target, sleep {secs}");
        let base = aba
            .run(&format!("cpu-{label}-0"), &short, target, None)?
            .cost;
        let slow = aba
            .run(&format!("cpu-{label}-{secs}"), &long, target, None)?
            .cost;
        let extra_cpu = slow.cpu().as_secs_f64() - base.cpu().as_secs_f64();
        let extra_wall = slow.wall.as_secs_f64() - base.wall.as_secs_f64();
        let pct = 100.0 * extra_cpu.max(0.0) / extra_wall;
        let bound = pct_of(&slow);
        rows.push(Row::new(
            "5",
            format!("host CPU of aba during a {secs} s `sleep` sample, {label} target"),
            format!("{pct:.3} % (whole run {bound:.2} %)"),
            "~0 % (<= 1 % of a core)",
            Some(pct <= 1.0),
        ));
        details.push(format!(
            "[5] {label}: sleep {secs}: wall {:.3} s, cpu {:.1} ms (user {:.1} + sys {:.1}); \
             sleep 0: wall {:.3} s, cpu {:.1} ms",
            slow.wall.as_secs_f64(),
            slow.cpu().as_secs_f64() * 1e3,
            slow.user.as_secs_f64() * 1e3,
            slow.sys.as_secs_f64() * 1e3,
            base.wall.as_secs_f64(),
            base.cpu().as_secs_f64() * 1e3,
        ));
    }
    Ok((rows, details))
}

fn pct_of(m: &Measured) -> f64 {
    100.0 * m.cpu().as_secs_f64() / m.wall.as_secs_f64()
}
