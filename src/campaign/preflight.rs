//! `aba preflight`: everything a campaign needs from a target, checked without rebooting it,
//! so the overnight run does not die at 2 a.m. on a missing kexec binary or a typo in a sysctl.
//!
//! Each check is a line of the checklist with a fix hint; a failed connection or host key
//! ends the list early, because nothing else can be checked without it.

use std::time::{Duration, Instant};

use crate::{
    campaign::plan::RUNNING_RELEASE,
    inventory::{Switch, Target},
    kernel::proof::read_facts,
    recipe::Recipe,
    target::{
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

const TIMEOUT: Duration = Duration::from_secs(60);

/// Outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Fine.
    Ok,
    /// Will work, but worth knowing (an optional knob is absent).
    Warn,
    /// The campaign would fail here.
    Fail,
}

/// One line of the checklist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// Outcome.
    pub status: Status,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub detail: String,
    /// How to fix it, for `Fail` and `Warn`.
    pub hint: Option<String>,
}

fn item(
    status: Status,
    what: impl Into<String>,
    detail: impl Into<String>,
    hint: Option<&str>,
) -> Item {
    Item {
        status,
        what: what.into(),
        detail: detail.into(),
        hint: hint.map(str::to_owned),
    }
}

/// Runs a check script; `Ok(stdout)` when it exits 0.
fn probe(
    transport: &mut dyn Transport,
    script: &str,
) -> Result<Result<String, String>, TransportError> {
    let out = transport.exec(script, TIMEOUT)?;
    Ok(if out.outcome.success() {
        Ok(out.stdout_text().trim().to_owned())
    } else {
        let err = out.stderr_text();
        let lines: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        Err(if lines.is_empty() {
            out.outcome.to_string()
        } else {
            lines.join("; ")
        })
    })
}

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
) -> Vec<Item> {
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
        items.push(item(Status::Fail, "connect", e.to_string(), Some(hint)));
        return items;
    }
    items.push(item(
        Status::Ok,
        "connect",
        format!("logged in to {} (host key verified)", transport.describe()),
        None,
    ));

    match run_checks(recipe, target, transport, workdir, &mut items) {
        Ok(()) => {}
        Err(e) => items.push(item(
            Status::Fail,
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
    items: &mut Vec<Item>,
) -> Result<(), TransportError> {
    match read_facts(transport) {
        Ok(f) => items.push(item(
            Status::Ok,
            "boot",
            format!(
                "{} (boot_id {}), cmdline: {}",
                f.release, f.boot_id, f.cmdline
            ),
            None,
        )),
        Err(e) => items.push(item(
            Status::Fail,
            "boot",
            e.to_string(),
            Some("aba needs /proc/sys/kernel/random/boot_id, uname and /proc/cmdline"),
        )),
    }
    for tool in [
        "sh", "setsid", "cat", "mkdir", "chmod", "mv", "kill", "uname",
    ] {
        let found = probe(transport, &format!("command -v {tool}"))?;
        if let Err(e) = found {
            items.push(item(
                Status::Fail,
                format!("tool {tool}"),
                e,
                Some("install it on the target (coreutils, util-linux)"),
            ));
        }
    }
    if recipe.workloads.iter().any(|w| w.cpu.is_some()) {
        let t = probe(transport, "command -v taskset")?;
        items.push(match t {
            Ok(p) => item(Status::Ok, "taskset", p, None),
            Err(e) => item(
                Status::Fail,
                "taskset",
                e,
                Some("a workload pins CPUs: install util-linux"),
            ),
        });
    }

    switch_checks(recipe, target, transport, items)?;

    for (name, value) in &recipe.sysctls {
        let path = name.proc_path();
        let r = probe(
            transport,
            &format!("[ -w {p} ] && cat {p}", p = sh_quote(&path)),
        )?;
        items.push(match r {
            Ok(now) => item(
                Status::Ok,
                format!("sysctl {name}"),
                format!("writable, now {now}, will be {value}"),
                None,
            ),
            Err(_) => item(
                Status::Fail,
                format!("sysctl {name}"),
                format!("{path} is missing or not writable"),
                Some("check the name (dotted form) and that aba logs in as root"),
            ),
        });
    }
    knob_checks(recipe, transport, items)?;
    files_and_setup(recipe, transport, workdir, items)
}

fn switch_checks(
    recipe: &Recipe,
    target: &Target,
    transport: &mut dyn Transport,
    items: &mut Vec<Item>,
) -> Result<(), TransportError> {
    match &target.switch {
        Switch::None => {
            let running = recipe
                .kernels
                .values()
                .all(|k| k.release.as_str() == RUNNING_RELEASE);
            items.push(item(
                Status::Ok,
                "switch",
                if running {
                    "none: every point runs on the kernel that is up"
                } else {
                    "none: the proof will require the recipe's release"
                },
                None,
            ));
        }
        Switch::Kexec => {
            let r = probe(transport, "command -v kexec")?;
            items.push(match r {
                Ok(p) => item(Status::Ok, "switch kexec", p, None),
                Err(_) => item(
                    Status::Fail,
                    "switch kexec",
                    "kexec not found",
                    Some("install kexec-tools on the target"),
                ),
            });
            let systemd = probe(
                transport,
                "[ -d /run/systemd/system ] && command -v systemctl",
            )?;
            items.push(item(
                Status::Ok,
                "kexec trigger",
                if systemd.is_ok() {
                    "systemctl kexec"
                } else {
                    "kexec -e (no systemd)"
                },
                None,
            ));
        }
        Switch::GrubReboot { .. } => {
            let r = probe(
                transport,
                "command -v grub-reboot || command -v grub2-reboot",
            )?;
            items.push(match r {
                Ok(p) => item(Status::Ok, "switch grub-reboot", p, None),
                Err(_) => item(
                    Status::Fail,
                    "switch grub-reboot",
                    "grub-reboot not found",
                    Some("install grub or choose another switch"),
                ),
            });
        }
        Switch::Bls { entries } => {
            let r = probe(
                transport,
                &format!("command -v bootctl && [ -w {} ]", sh_quote(entries)),
            )?;
            items.push(match r {
                Ok(p) => item(
                    Status::Ok,
                    "switch bls",
                    format!("{p}, {entries} writable"),
                    None,
                ),
                Err(_) => item(
                    Status::Fail,
                    "switch bls",
                    format!("bootctl missing or {entries} not writable"),
                    Some("systemd-boot and a writable loader/entries directory are needed"),
                ),
            });
        }
        Switch::Power { set_next, cycle } => {
            for cmd in set_next.iter().chain(std::iter::once(cycle)) {
                items.push(host_command_item("switch power", cmd, recipe));
            }
        }
    }
    if !matches!(target.switch, Switch::None | Switch::Power { .. }) {
        for kernel in recipe.kernels.values() {
            let r = probe(
                transport,
                &format!(
                    "ls -l {} {}",
                    sh_quote(kernel.image.as_str()),
                    sh_quote(kernel.initrd.as_str())
                ),
            )?;
            items.push(match r {
                Ok(_) => item(
                    Status::Ok,
                    format!("kernel {}", kernel.label),
                    format!("{} and {} present", kernel.image, kernel.initrd),
                    None,
                ),
                Err(e) => item(
                    Status::Fail,
                    format!("kernel {}", kernel.label),
                    e,
                    Some("install the kernel on the target, or set `image`/`initrd` in [kernels]"),
                ),
            });
        }
    }
    if let Some(cmd) = &target.power_cycle {
        items.push(host_command_item("power_cycle", cmd, recipe));
    } else if target.switch.method() != crate::inventory::SwitchMethod::None {
        items.push(item(
            Status::Warn,
            "power_cycle",
            "not set: a kernel that hangs will stop the campaign at the boot timeout",
            Some("set power_cycle in targets.toml (e.g. an ipmitool chassis power cycle)"),
        ));
    }
    Ok(())
}

/// A host-side switch command, expanded for every kernel of the recipe (not run): a
/// placeholder it cannot fill fails here instead of at the first switch of the night.
fn host_command_item(what: &str, cmd: &str, recipe: &Recipe) -> Item {
    let mut expanded = Vec::new();
    for kernel in recipe.kernels.values() {
        let params = recipe.cmdline_for(&kernel.label).join(" ");
        let vars = [
            ("kernel", kernel.label.as_str()),
            ("release", kernel.release.as_str()),
            ("image", kernel.image.as_str()),
            ("initrd", kernel.initrd.as_str()),
            ("cmdline", params.as_str()),
            ("params", params.as_str()),
        ];
        match crate::target::host::expand(cmd, &vars) {
            Ok(text) => expanded.push(text),
            Err(e) => {
                return item(
                    Status::Fail,
                    what,
                    e.to_string(),
                    Some("use only the placeholders listed in docs/targets.md"),
                );
            }
        }
    }
    item(
        Status::Ok,
        what,
        format!(
            "host command, not run by preflight: {}",
            expanded.first().map_or(cmd, String::as_str)
        ),
        None,
    )
}

fn knob_checks(
    recipe: &Recipe,
    transport: &mut dyn Transport,
    items: &mut Vec<Item>,
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
            (Ok(f), _) => item(
                Status::Ok,
                format!("tuning {name}"),
                format!("{f} writable"),
                None,
            ),
            (Err(_), true) => item(
                Status::Fail,
                format!("tuning {name}"),
                format!("absent ({files})"),
                Some("list it in [tuning] optional if this machine may lack it"),
            ),
            (Err(_), false) => item(
                Status::Warn,
                format!("tuning {name}"),
                "absent; optional, will be skipped",
                None,
            ),
        });
    }
    Ok(())
}

/// Creates a fresh private directory under `base` on the target; its path.
fn fresh_dir(
    transport: &mut dyn Transport,
    base: &str,
    name: &str,
) -> Result<Result<String, String>, TransportError> {
    let base = base.trim_end_matches('/');
    let made = probe(
        transport,
        &format!(
            "mkdir -p {b} && mktemp -d {t}",
            b = sh_quote(base),
            t = sh_quote(&format!("{base}/preflight-{name}-XXXXXXXX"))
        ),
    )?;
    Ok(made.and_then(|dir| {
        // Whatever the target printed is used in `rm -rf` later: accept only what mktemp makes.
        let ok = dir.starts_with(&format!("{base}/preflight-{name}-"))
            && crate::recipe::ident::TargetPath::new(&dir).is_ok();
        if ok {
            Ok(dir)
        } else {
            Err(format!("mktemp -d printed `{}`", crate::text::quoted(&dir)))
        }
    }))
}

fn files_and_setup(
    recipe: &Recipe,
    transport: &mut dyn Transport,
    workdir: Workdir<'_>,
    items: &mut Vec<Item>,
) -> Result<(), TransportError> {
    let (workdir, remove) = match workdir {
        Workdir::Given(dir) => (dir.to_owned(), false),
        Workdir::FreshUnder(base) => match fresh_dir(transport, base, recipe.name.as_str())? {
            Ok(dir) => (dir, true),
            Err(e) => {
                items.push(item(
                    Status::Fail,
                    "workdir",
                    format!("cannot create a fresh directory under {base}: {e}"),
                    Some("set `workdir` in targets.toml to a writable directory"),
                ));
                return Ok(());
            }
        },
    };
    items.push(item(
        Status::Ok,
        "workdir",
        format!("{workdir} (fresh, private, removed afterwards)"),
        None,
    ));
    let result = copy_and_setup(recipe, transport, &workdir, items);
    if remove {
        let removed = probe(transport, &format!("rm -rf -- {}", sh_quote(&workdir)))?;
        if let Err(e) = removed {
            items.push(item(
                Status::Warn,
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
    items: &mut Vec<Item>,
) -> Result<(), TransportError> {
    for file in &recipe.files {
        let data = match crate::recipe::load::read_source(&file.local) {
            Ok(d) => d,
            Err(e) => {
                items.push(item(
                    Status::Fail,
                    format!("file {}", file.remote),
                    e.to_string(),
                    None,
                ));
                continue;
            }
        };
        let remote = format!("{workdir}/{}", file.remote);
        if let Some((parent, _)) = remote.rsplit_once('/') {
            let _ = probe(transport, &format!("mkdir -p {}", sh_quote(parent)))?;
        }
        // The source's permission bits, as the campaign copies it: a script stays executable,
        // a data file does not become one.
        let mode = std::fs::metadata(&file.local).map_or(0o644, |m| {
            use std::os::unix::fs::PermissionsExt as _;
            m.permissions().mode() & 0o7777
        });
        items.push(match transport.upload(&data, &remote, mode) {
            Ok(()) => item(
                Status::Ok,
                format!("file {}", file.remote),
                format!("{} bytes copied", data.len()),
                None,
            ),
            Err(e) => item(
                Status::Fail,
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
            item(
                Status::Ok,
                format!("setup {}", i + 1),
                command.clone(),
                None,
            )
        } else {
            let tail: Vec<String> = out
                .stderr_text()
                .lines()
                .rev()
                .take(3)
                .map(str::to_owned)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            item(
                Status::Fail,
                format!("setup {}", i + 1),
                format!("`{command}`: {} {}", out.outcome, tail.join(" / ")),
                Some("fix the command or install what it needs on the target"),
            )
        });
    }
    Ok(())
}
