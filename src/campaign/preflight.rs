//! `aba preflight`: everything a campaign needs from a target, checked without rebooting it,
//! so the overnight run does not die at 2 a.m. on a missing kexec binary or a typo in a sysctl.
//!
//! Each check is a line of the checklist with a fix hint; a failed connection or host key
//! ends the list early, because nothing else can be checked without it.

use std::time::Instant;

pub use crate::target::check::{CheckItem, CheckStatus};
use crate::{
    campaign::load::Load,
    inventory::Target,
    kernel::{proof::read_facts, switch::host_command_check},
    recipe::Recipe,
    target::{
        check::{Probe, probe, probe_item},
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// Where preflight copies the files and runs setup. Never a predictable, reusable path: a
/// directory someone else created (with a symlink planted in it) would make aba write where
/// it points.
#[derive(Clone, Copy, Debug)]
pub enum Workdir<'a> {
    /// A fresh directory the caller created for this preflight (mode 0700) and removes
    /// afterwards: the local target's.
    Given(&'a str),
    /// Create a fresh directory under this base on the target with `mktemp -d` (mode 0700),
    /// and remove it at the end.
    FreshUnder(&'a str),
}

/// Checks `recipe` against `target` through `transport`; `workdir` is where files and setup go.
pub fn preflight(
    recipe: &Recipe,
    target: &Target,
    transport: &mut dyn Transport,
    workdir: Workdir<'_>,
) -> Vec<CheckItem> {
    let mut items = Vec::new();
    let deadline = Instant::now() + target.connect_window();
    if let Err(e) = transport.reconnect(deadline) {
        let hint = match e {
            TransportError::HostKey { .. } => {
                "the message above says which line to add or which key to pin"
            }
            TransportError::Auth { .. } => {
                "check `identity`/`agent` and the target's authorized_keys"
            }
            _ => "check host, port and that the machine is up",
        };
        items.push(CheckItem::new(
            CheckStatus::Fail,
            "connect",
            e.to_string(),
            Some(hint),
        ));
        return items;
    }
    // Only an SSH login has a host key to verify: the local target runs commands here.
    let connected = if target.ssh.is_some() {
        format!("logged in to {} (host key verified)", transport.describe())
    } else {
        format!(
            "{}: commands run on this machine, no login and no host key",
            transport.describe()
        )
    };
    items.push(CheckItem::new(CheckStatus::Ok, "connect", connected, None));

    match run_checks(recipe, target, transport, workdir, &mut items) {
        Ok(()) => {}
        Err(e) => items.push(CheckItem::new(
            CheckStatus::Fail,
            "connection",
            e.to_string(),
            Some("the target went away during preflight"),
        )),
    }
    transport.disconnect();
    items
}

fn run_checks(
    recipe: &Recipe,
    target: &Target,
    transport: &mut dyn Transport,
    workdir: Workdir<'_>,
    items: &mut Vec<CheckItem>,
) -> Result<(), TransportError> {
    match read_facts(transport) {
        Ok(f) => items.push(CheckItem::new(
            CheckStatus::Ok,
            "boot",
            format!(
                "{} (boot_id {}), cmdline: {}",
                f.release, f.boot_id, f.cmdline
            ),
            None,
        )),
        Err(e) => items.push(CheckItem::new(
            CheckStatus::Fail,
            "boot",
            e.to_string(),
            Some("aba needs /proc/sys/kernel/random/boot_id, uname and /proc/cmdline"),
        )),
    }
    items.push(load_check(transport)?);
    for tool in [
        "sh", "setsid", "cat", "mkdir", "chmod", "mv", "kill", "uname",
    ] {
        let found = probe(transport, &format!("command -v {tool}"))?;
        if let Probe::Failed(e) = found {
            items.push(CheckItem::new(
                CheckStatus::Fail,
                format!("tool {tool}"),
                e,
                Some("install it on the target (coreutils, util-linux)"),
            ));
        }
    }
    if recipe.workloads.iter().any(|w| w.cpu.is_some()) {
        items.push(probe_item(
            transport,
            "taskset",
            "command -v taskset",
            "a workload pins CPUs: install util-linux",
        )?);
    }

    switch_checks(recipe, target, transport, items)?;

    for (name, value) in &recipe.sysctls {
        let path = name.proc_path();
        let r = probe(
            transport,
            &format!("[ -w {p} ] && cat {p}", p = sh_quote(&path)),
        )?;
        items.push(match r {
            Probe::Passed(now) => CheckItem::new(
                CheckStatus::Ok,
                format!("sysctl {name}"),
                format!("writable, now {now}, will be {value}"),
                None,
            ),
            Probe::Failed(_) => CheckItem::new(
                CheckStatus::Fail,
                format!("sysctl {name}"),
                format!("{path} is missing or not writable"),
                Some("check the name (dotted form) and that aba logs in as root"),
            ),
        });
    }
    knob_checks(recipe, transport, items)?;
    files_and_setup(recipe, transport, workdir, items)
}

/// The load of the last minute against the CPUs online: a warning when other work would
/// compete with the workloads. It does not stop a campaign (the work may end before it
/// starts), but the noise it brings should not first show in the report.
fn load_check(transport: &mut dyn Transport) -> Result<CheckItem, TransportError> {
    let found = probe(
        transport,
        "cat /proc/loadavg && cat /sys/devices/system/cpu/online",
    )?;
    let read = match &found {
        Probe::Passed(text) => {
            let mut lines = text.lines();
            Load::read(lines.next().unwrap_or(""), lines.next().unwrap_or(""))
        }
        Probe::Failed(_) => None,
    };
    let hint = "wait for the other work on the target to end, or stop it, before the campaign";
    Ok(match read {
        Some(load) => match load.clone().overload() {
            Some(overload) => {
                CheckItem::new(CheckStatus::Warn, "load", overload.to_string(), Some(hint))
            }
            None => CheckItem::ok(
                "load",
                format!(
                    "the load average of the last minute, {}, is within the {} CPU(s) online",
                    load.load, load.cpus
                ),
            ),
        },
        None => CheckItem::new(
            CheckStatus::Warn,
            "load",
            "/proc/loadavg and /sys/devices/system/cpu/online could not be read: whether \
             other work competes for the CPUs is unknown"
                .to_owned(),
            Some("aba reads both files on the target: mount /proc and /sys there"),
        ),
    })
}

fn switch_checks(
    recipe: &Recipe,
    target: &Target,
    transport: &mut dyn Transport,
    items: &mut Vec<CheckItem>,
) -> Result<(), TransportError> {
    let method = target.switch.method();
    items.extend(method.preflight(recipe, transport)?);
    if method.boots_target_files() {
        for kernel in recipe.kernels.values() {
            let what = format!("kernel {}", kernel.label);
            if let Some(build) = &kernel.build {
                items.push(crate::build::install::preflight(transport, &what, build)?);
            }
            let files = kernel.files_on_target();
            if files.is_empty() {
                continue;
            }
            let quoted: Vec<String> = files.iter().map(|f| sh_quote(f)).collect();
            let r = probe(transport, &format!("ls -l {}", quoted.join(" ")))?;
            items.push(match r {
                Probe::Passed(_) => CheckItem::ok(what, format!("{} present", files.join(" and "))),
                Probe::Failed(e) => CheckItem::fail(
                    what,
                    e,
                    "install the kernel on the target, or set `image`/`initrd` in [kernels]",
                ),
            });
        }
    }
    if let Some(cmd) = &target.power_cycle {
        items.push(host_command_check("power_cycle", cmd, recipe));
    } else if method.switches() {
        items.push(CheckItem::new(
            CheckStatus::Warn,
            "power_cycle",
            "not set: a kernel that hangs will stop the campaign at the boot timeout",
            Some("set power_cycle in targets.toml (e.g. an ipmitool chassis power cycle)"),
        ));
    }
    Ok(())
}

fn knob_checks(
    recipe: &Recipe,
    transport: &mut dyn Transport,
    items: &mut Vec<CheckItem>,
) -> Result<(), TransportError> {
    let t = &recipe.tuning;
    let knobs: [(&str, Option<bool>, &str); 3] = [
        (
            "governor",
            t.governor.as_ref().map(|k| k.required),
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        ),
        (
            "epp",
            t.epp.as_ref().map(|k| k.required),
            "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference",
        ),
        (
            "turbo",
            t.turbo.as_ref().map(|k| k.required),
            "/sys/devices/system/cpu/intel_pstate/no_turbo /sys/devices/system/cpu/cpufreq/boost",
        ),
    ];
    for (name, required, files) in knobs {
        let Some(required) = required else { continue };
        let r = probe(
            transport,
            &format!("for f in {files}; do [ -w \"$f\" ] && echo \"$f\" && exit 0; done; exit 1"),
        )?;
        items.push(match (r, required) {
            (Probe::Passed(f), _) => CheckItem::new(
                CheckStatus::Ok,
                format!("tuning {name}"),
                format!("{f} writable"),
                None,
            ),
            (Probe::Failed(_), true) => CheckItem::new(
                CheckStatus::Fail,
                format!("tuning {name}"),
                format!("absent ({files})"),
                Some("list it in [tuning] optional if this machine may lack it"),
            ),
            (Probe::Failed(_), false) => CheckItem::new(
                CheckStatus::Warn,
                format!("tuning {name}"),
                "absent; optional, will be skipped",
                None,
            ),
        });
    }
    Ok(())
}

/// Creates a fresh private directory under `base` on the target; its path, or why not.
fn fresh_dir(
    transport: &mut dyn Transport,
    base: &str,
    name: &str,
) -> Result<Probe, TransportError> {
    let base = base.trim_end_matches('/');
    let made = probe(
        transport,
        &format!(
            "mkdir -p {b} && mktemp -d {t}",
            b = sh_quote(base),
            t = sh_quote(&format!("{base}/preflight-{name}-XXXXXXXX"))
        ),
    )?;
    Ok(match made {
        // Whatever the target printed is used in `rm -rf` later: accept only what mktemp makes.
        Probe::Passed(dir)
            if !(dir.starts_with(&format!("{base}/preflight-{name}-"))
                && crate::recipe::ident::TargetPath::new(&dir).is_ok()) =>
        {
            Probe::Failed(format!("mktemp -d printed `{}`", crate::text::quoted(&dir)))
        }
        other => other,
    })
}

fn files_and_setup(
    recipe: &Recipe,
    transport: &mut dyn Transport,
    workdir: Workdir<'_>,
    items: &mut Vec<CheckItem>,
) -> Result<(), TransportError> {
    let (workdir, remove) = match workdir {
        Workdir::Given(dir) => (dir.to_owned(), false),
        Workdir::FreshUnder(base) => match fresh_dir(transport, base, recipe.name.as_str())? {
            Probe::Passed(dir) => (dir, true),
            Probe::Failed(e) => {
                items.push(CheckItem::new(
                    CheckStatus::Fail,
                    "workdir",
                    format!("cannot create a fresh directory under {base}: {e}"),
                    Some("set `workdir` in targets.toml to a writable directory"),
                ));
                return Ok(());
            }
        },
    };
    items.push(CheckItem::ok(
        "workdir",
        format!("{workdir} (fresh, private, removed afterwards)"),
    ));
    let result = copy_and_setup(recipe, transport, &workdir, items);
    if remove {
        let removed = probe(transport, &format!("rm -rf -- {}", sh_quote(&workdir)))?;
        if let Probe::Failed(e) = removed {
            items.push(CheckItem::new(
                CheckStatus::Warn,
                "workdir",
                format!("could not remove {workdir}: {e}"),
                None,
            ));
        }
    }
    result
}

fn copy_and_setup(
    recipe: &Recipe,
    transport: &mut dyn Transport,
    workdir: &str,
    items: &mut Vec<CheckItem>,
) -> Result<(), TransportError> {
    for file in &recipe.files {
        let data = match crate::recipe::load::read_source(&file.local) {
            Ok(d) => d,
            Err(e) => {
                items.push(CheckItem::new(
                    CheckStatus::Fail,
                    format!("file {}", file.remote),
                    e.to_string(),
                    None,
                ));
                continue;
            }
        };
        let remote = format!("{workdir}/{}", file.remote);
        if let Some((parent, _)) = remote.rsplit_once('/')
            && let Probe::Failed(e) = probe(transport, &format!("mkdir -p {}", sh_quote(parent)))?
        {
            items.push(CheckItem::new(
                CheckStatus::Fail,
                format!("file {}", file.remote),
                format!("cannot create {parent}: {e}"),
                None,
            ));
            continue;
        }
        items.push(match transport.upload(&data, &remote, file.mode()) {
            Ok(()) => CheckItem::ok(
                format!("file {}", file.remote),
                format!("{} bytes copied", data.len()),
            ),
            Err(e) => CheckItem::new(
                CheckStatus::Fail,
                format!("file {}", file.remote),
                e.to_string(),
                None,
            ),
        });
    }
    for (i, command) in recipe.setup.commands.iter().enumerate() {
        let out = transport.exec(
            &format!("cd {} && sh -c {}", sh_quote(workdir), sh_quote(command)),
            recipe.setup.timeout,
        )?;
        items.push(if out.outcome.success() {
            CheckItem::ok(format!("setup {}", i + 1), command.clone())
        } else {
            let stderr = out.stderr_text();
            let tail = crate::text::last_lines(&stderr, 3);
            CheckItem::new(
                CheckStatus::Fail,
                format!("setup {}", i + 1),
                format!("`{command}`: {} {}", out.outcome, tail.join(" / ")),
                Some("fix the command or install what it needs on the target"),
            )
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{CheckItem, CheckStatus, Workdir, preflight};
    use crate::{inventory::Target, recipe::parse, target::scripted::Scripted};

    const RECIPE: &str = r#"
version = 1
name = "p"
description = "d"
sequence = ["a"]
[kernels.a]
release = "running"
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, better = "lower" }
"#;

    fn load_item(loadavg: &str, cpus_online: &str) -> CheckItem {
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("valid recipe");
        let mut machine = Scripted::new("6.1.0-47");
        machine.loadavg = loadavg.to_owned();
        machine.cpus_online = cpus_online.to_owned();
        let items = preflight(
            &recipe,
            &Target::local(),
            &mut machine,
            Workdir::Given("/w"),
        );
        items
            .into_iter()
            .find(|i| i.what == "load")
            .expect("a load check")
    }

    /// Issue 29: a load above the CPUs online is a warning of preflight, with what to do;
    /// within them, a passed check that says both numbers.
    #[test]
    fn a_machine_busier_than_its_cpus_is_a_warning() {
        let busy = load_item("3.10 2.00 1.50 5/127 30274", "0-1");
        assert_eq!(busy.status, CheckStatus::Warn, "{busy:?}");
        assert!(
            busy.detail
                .starts_with("the load average of the last minute was 3.10 with 2 CPUs online"),
            "{busy:?}"
        );
        assert!(busy.hint.is_some(), "{busy:?}");
        let quiet = load_item("0.87 1.46 1.31 5/127 30274", "0-1");
        assert_eq!(
            quiet,
            CheckItem::ok(
                "load",
                "the load average of the last minute, 0.87, is within the 2 CPU(s) online"
            )
        );
        let unknown = load_item("", "");
        assert_eq!(unknown.status, CheckStatus::Warn, "{unknown:?}");
    }
}
