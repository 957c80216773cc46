//! Switching the target to a point's kernel and waiting until it is back: kexec, a one-shot
//! boot-loader entry plus reboot, host-side power commands, or nothing.
//!
//! Every method ends the same way: the old boot must be gone and a fresh login must show a
//! `boot_id` that differs from the previous one. An open port proves nothing (QEMU accepts TCP
//! while the guest is down) and the old kernel may answer for a moment after the trigger, so
//! the wait loop logs in and compares `boot_id`. A boot that never comes back gets the
//! inventory's power-cycle command, once, and the wait starts over.

use std::time::{Duration, Instant};

use crate::{
    interrupt,
    inventory::{Switch, Target},
    kernel::proof::{BootFacts, FactsError, read_facts},
    recipe::Kernel,
    target::{
        host::{HostCommandError, run_host},
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// Deadline for commands that prepare a switch (`kexec -l` reads ~30 MB under emulation).
const PREPARE_TIMEOUT: Duration = Duration::from_secs(180);
/// Deadline for host-side power commands.
const HOST_TIMEOUT: Duration = Duration::from_secs(300);
/// Pause between logins that still reach the old boot.
const OLD_BOOT_PAUSE: Duration = Duration::from_millis(200);
/// How long a detached trigger waits before it runs (`sleep 1; kexec -e`), so that the exec
/// that starts it returns first: the old boot answers at least this long after the trigger.
const TRIGGER_DELAY: Duration = Duration::from_secs(1);
/// After the trigger delay, how long before the first login: `kexec -e` takes the old kernel
/// away within a moment, and a login that meets the old sshd as it dies would wait for the
/// handshake limit instead of a new boot.
const TRIGGER_MARGIN: Duration = Duration::from_millis(300);

/// What the engine wants booted.
#[derive(Clone, Debug)]
pub struct SwitchRequest<'a> {
    /// The kernel.
    pub kernel: &'a Kernel,
    /// Parameters to add (`[boot] cmdline` + the kernel's), each verified afterwards.
    pub params: &'a [String],
    /// The default boot's parameters (kexec builds its command line from them).
    pub base_cmdline: &'a str,
    /// The boot_id of the boot being left, if known.
    pub previous_boot_id: Option<&'a str>,
}

impl SwitchRequest<'_> {
    /// The command line the new kernel gets: the base without the parameters whose names
    /// this point's own kernel sets (its value wins: `mitigations=off` replaces the base's
    /// `mitigations=auto`, `aba.kernel=a` replaces a leftover `aba.kernel=b`), then this
    /// point's parameters. Parameters another kernel of the recipe sets stay as the base has
    /// them: `panic=0` for kernel b does not take `panic=-1` away from kernel a.
    pub fn full_cmdline(&self) -> String {
        let base = crate::kernel::proof::base_cmdline(self.base_cmdline, self.params);
        let mut words: Vec<&str> = base.split_whitespace().collect();
        for p in self.params {
            if !words.contains(&p.as_str()) {
                words.push(p);
            }
        }
        words.join(" ")
    }
}

/// Progress inside a switch, for the progress display and the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchPhase {
    /// Loading the kernel / setting the boot entry.
    Preparing,
    /// The switch was triggered.
    Triggered,
    /// Waiting for a fresh login.
    Waiting,
    /// The boot did not come back; running the power-cycle command.
    PowerCycling,
}

/// A switch that completed with a login to a new boot.
#[derive(Clone, Debug)]
pub struct Switched {
    /// The new boot's facts (not yet proven against the request).
    pub facts: BootFacts,
    /// The boot_id of the boot that was left, as read right before the trigger (`None`
    /// without a switch, or when the machine was unreachable).
    pub previous_boot_id: Option<String>,
    /// Seconds from the trigger to the login into the new boot (0 without a switch).
    pub login_s: f64,
    /// Seconds the facts read after that login took (0 without a switch).
    pub proof_s: f64,
    /// Whether the power-cycle command had to be used.
    pub power_cycled: bool,
}

/// Why a switch did not reach a new boot.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The host key changed or is unknown: never talk to this machine again in this run.
    #[error(transparent)]
    HostKey(TransportError),
    /// Ctrl-C / SIGTERM.
    #[error("interrupted")]
    Interrupted,
    /// The target could not be reached to start the switch.
    #[error("cannot reach the target to switch kernels")]
    Unreachable(#[source] TransportError),
    /// Preparing the switch on the target failed (image missing, kexec refused…).
    #[error("`{command}` failed on the target: {outcome}{}", stderr_tail(stderr))]
    Prepare {
        /// The command.
        command: String,
        /// How it ended.
        outcome: String,
        /// Its stderr.
        stderr: String,
    },
    /// A host-side command failed.
    #[error(transparent)]
    Host(#[from] HostCommandError),
    /// No new boot answered before the deadline.
    #[error("no new boot answered within {}s{}", timeout.as_secs(), if *power_cycled { " (even after the power-cycle command)" } else { "" })]
    NoReturn {
        /// The boot timeout.
        timeout: Duration,
        /// Whether the power-cycle command ran.
        power_cycled: bool,
    },
    /// The new boot answered but its facts could not be read.
    #[error(transparent)]
    Facts(FactsError),
}

fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(5);
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines[start..].join(" / "))
    }
}

fn classify(err: TransportError) -> SwitchError {
    match err {
        TransportError::HostKey { .. } => SwitchError::HostKey(err),
        TransportError::Interrupted { .. } => SwitchError::Interrupted,
        other => SwitchError::Unreachable(other),
    }
}

/// Runs a preparation command on the target; a non-zero exit is a `Prepare` error.
fn prepare(transport: &mut dyn Transport, command: &str) -> Result<(), SwitchError> {
    let out = transport.exec(command, PREPARE_TIMEOUT).map_err(classify)?;
    if out.outcome.success() {
        Ok(())
    } else {
        Err(SwitchError::Prepare {
            command: command.to_owned(),
            outcome: out.outcome.to_string(),
            stderr: out.stderr_text(),
        })
    }
}

/// Starts `command` on the target after a second, outside the exec's process group, so the
/// triggering exec returns (and its channel closes) before the machine goes away.
fn detached(command: &str) -> String {
    crate::target::quote::detached(&format!("sleep {}; {command}", TRIGGER_DELAY.as_secs()))
}

/// The kexec load command for a request.
pub fn kexec_load_command(req: &SwitchRequest<'_>) -> String {
    let image = req.kernel.image.as_str();
    let initrd = req.kernel.initrd.as_str();
    format!(
        "for f in {img} {ird}; do [ -r \"$f\" ] || {{ echo \"$f: no such file on the target\" >&2; exit 2; }}; done; command -v kexec >/dev/null || {{ echo 'kexec not found (install kexec-tools)' >&2; exit 2; }}; kexec -l {img} --initrd={ird} --command-line={cmd}",
        img = sh_quote(image),
        ird = sh_quote(initrd),
        cmd = sh_quote(&req.full_cmdline()),
    )
}

/// The kexec trigger: `systemctl kexec` where systemd runs, else `kexec -e`.
pub const KEXEC_TRIGGER: &str = "if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then systemctl kexec; else kexec -e; fi";

/// The BLS one-shot entry file's content.
pub fn bls_entry(req: &SwitchRequest<'_>) -> String {
    format!(
        "title aba {label} ({release})\nlinux {image}\ninitrd {initrd}\noptions {options}\n",
        label = req.kernel.label,
        release = req.kernel.release,
        image = req.kernel.image,
        initrd = req.kernel.initrd,
        options = req.full_cmdline(),
    )
}

/// Switches `transport`'s machine to the requested kernel per `target.switch` and returns the
/// facts of the boot that answered. `Switch::None` returns the current boot's facts.
pub fn switch_to(
    target: &Target,
    transport: &mut dyn Transport,
    req: &SwitchRequest<'_>,
    phase: &mut dyn FnMut(SwitchPhase),
) -> Result<Switched, SwitchError> {
    let full = req.full_cmdline();
    let params = req.params.join(" ");
    let vars: Vec<(&str, &str)> = vec![
        ("kernel", req.kernel.label.as_str()),
        ("release", req.kernel.release.as_str()),
        ("image", req.kernel.image.as_str()),
        ("initrd", req.kernel.initrd.as_str()),
        ("cmdline", &full),
        ("params", &params),
    ];

    // The boot being left, read right before the trigger: the wait below accepts only a
    // boot with another boot_id, so an old kernel that still answers is never mistaken for
    // the new one.
    let mut power_cycled = false;
    let current = match current_facts(target, transport) {
        Ok(facts) => Some(facts),
        Err(SwitchError::Unreachable(_))
            if target.power_cycle.is_some() && target.switch != Switch::None =>
        {
            // The machine is gone before the switch even starts (the last kernel hung):
            // bring it back the way the inventory says, then switch from there.
            phase(SwitchPhase::PowerCycling);
            power_cycle(target, transport, &vars)?;
            power_cycled = true;
            let deadline = Instant::now() + target.boot_timeout;
            Some(wait_for_new_boot(transport, req.previous_boot_id, deadline)?.facts)
        }
        Err(SwitchError::Unreachable(_)) if matches!(target.switch, Switch::Power { .. }) => None,
        Err(e) => return Err(e),
    };
    if target.switch == Switch::None {
        let Some(facts) = current else {
            return Err(SwitchError::NoReturn {
                timeout: target.connect_window(),
                power_cycled,
            });
        };
        return Ok(Switched {
            facts,
            previous_boot_id: None,
            login_s: 0.0,
            proof_s: 0.0,
            power_cycled,
        });
    }
    let previous: Option<String> = current
        .map(|f| f.boot_id)
        .or_else(|| req.previous_boot_id.map(str::to_owned));

    phase(SwitchPhase::Preparing);
    trigger(target, transport, req, &vars)?;
    let triggered = Instant::now();
    phase(SwitchPhase::Triggered);
    transport.disconnect();

    phase(SwitchPhase::Waiting);
    let deadline = triggered + target.boot_timeout;
    if matches!(
        target.switch,
        Switch::Kexec | Switch::GrubReboot { .. } | Switch::Bls { .. }
    ) {
        // The old boot is still there until its trigger runs: logging into it proves nothing.
        pause_until(triggered + TRIGGER_DELAY + TRIGGER_MARGIN)?;
    }
    let answered = match wait_for_new_boot(transport, previous.as_deref(), deadline) {
        Ok(answered) => answered,
        Err(SwitchError::NoReturn { .. }) if target.power_cycle.is_some() => {
            phase(SwitchPhase::PowerCycling);
            power_cycle(target, transport, &vars)?;
            power_cycled = true;
            phase(SwitchPhase::Waiting);
            let deadline = Instant::now() + target.boot_timeout;
            wait_for_new_boot(transport, previous.as_deref(), deadline).map_err(|e| match e {
                SwitchError::NoReturn { timeout, .. } => SwitchError::NoReturn {
                    timeout,
                    power_cycled: true,
                },
                other => other,
            })?
        }
        Err(e) => return Err(e),
    };
    Ok(Switched {
        facts: answered.facts,
        previous_boot_id: previous,
        login_s: answered
            .logged_in
            .saturating_duration_since(triggered)
            .as_secs_f64(),
        proof_s: answered.facts_read.as_secs_f64(),
        power_cycled,
    })
}

/// Prepares and triggers the switch; returns as soon as it is under way.
fn trigger(
    target: &Target,
    transport: &mut dyn Transport,
    req: &SwitchRequest<'_>,
    vars: &[(&str, &str)],
) -> Result<(), SwitchError> {
    match &target.switch {
        Switch::None => {}
        Switch::Kexec => {
            prepare(transport, &kexec_load_command(req))?;
            prepare(transport, &detached(KEXEC_TRIGGER))?;
        }
        Switch::GrubReboot { entry } => {
            let entry = crate::target::host::expand(entry, vars)?;
            prepare(
                transport,
                &format!(
                    "g=$(command -v grub-reboot || command -v grub2-reboot) || {{ echo 'grub-reboot not found' >&2; exit 2; }}; \"$g\" {entry}"
                ),
            )?;
            prepare(transport, &detached("reboot"))?;
        }
        Switch::Bls { entries } => {
            let name = format!("aba-{}.conf", req.kernel.label);
            let path = format!("{}/{name}", entries.trim_end_matches('/'));
            transport
                .upload(bls_entry(req).as_bytes(), &path, 0o644)
                .map_err(classify)?;
            prepare(
                transport,
                &format!("bootctl set-oneshot {}", sh_quote(&name)),
            )?;
            prepare(transport, &detached("reboot"))?;
        }
        Switch::Power { set_next, cycle } => {
            if let Some(cmd) = set_next {
                run_host(cmd, vars, &target.base_dir, HOST_TIMEOUT)?;
            }
            transport.disconnect();
            run_host(cycle, vars, &target.base_dir, HOST_TIMEOUT)?;
        }
    }
    Ok(())
}

/// Runs the inventory's power-cycle command on the host.
fn power_cycle(
    target: &Target,
    transport: &mut dyn Transport,
    vars: &[(&str, &str)],
) -> Result<(), SwitchError> {
    transport.disconnect();
    let cmd = target.power_cycle.as_deref().unwrap_or_default();
    run_host(cmd, vars, &target.base_dir, HOST_TIMEOUT)?;
    Ok(())
}

/// The current boot's facts, reconnecting first if the connection was lost since the last
/// command (a long idle gap, a previous reboot).
fn current_facts(target: &Target, transport: &mut dyn Transport) -> Result<BootFacts, SwitchError> {
    match read_facts(transport) {
        Ok(facts) => return Ok(facts),
        Err(FactsError::Transport(
            TransportError::ConnectionLost { .. } | TransportError::Connect { .. },
        )) => {}
        Err(e) => return Err(facts_error(e)),
    }
    transport.disconnect();
    transport
        .reconnect(Instant::now() + target.connect_window())
        .map_err(classify)?;
    read_facts(transport).map_err(facts_error)
}

fn facts_error(e: FactsError) -> SwitchError {
    match e {
        FactsError::Transport(t) => classify(t),
        other => SwitchError::Facts(other),
    }
}

/// Sleeps until `when`, waking for an interrupt.
fn pause_until(when: Instant) -> Result<(), SwitchError> {
    loop {
        if interrupt::requested() {
            return Err(SwitchError::Interrupted);
        }
        let left = when.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// A boot that answered [`wait_for_new_boot`].
#[derive(Clone, Debug)]
pub struct Answered {
    /// Its facts.
    pub facts: BootFacts,
    /// When the login that read them completed.
    pub logged_in: Instant,
    /// How long reading them took after that login.
    pub facts_read: Duration,
}

/// Logs in again and again until a boot other than `previous` answers, or `deadline`.
pub fn wait_for_new_boot(
    transport: &mut dyn Transport,
    previous: Option<&str>,
    deadline: Instant,
) -> Result<Answered, SwitchError> {
    let timeout = deadline.saturating_duration_since(Instant::now());
    loop {
        if interrupt::requested() {
            return Err(SwitchError::Interrupted);
        }
        if Instant::now() >= deadline {
            return Err(SwitchError::NoReturn {
                timeout,
                power_cycled: false,
            });
        }
        match transport.reconnect(deadline) {
            Ok(()) => {}
            Err(e @ TransportError::HostKey { .. }) => return Err(SwitchError::HostKey(e)),
            Err(TransportError::Interrupted { .. }) => return Err(SwitchError::Interrupted),
            Err(_) => continue,
        }
        let logged_in = Instant::now();
        match read_facts(transport) {
            Ok(facts) if Some(facts.boot_id.as_str()) != previous => {
                return Ok(Answered {
                    facts,
                    logged_in,
                    facts_read: logged_in.elapsed(),
                });
            }
            Ok(_) => {
                // The old kernel still answers: it has not gone down yet.
                transport.disconnect();
                std::thread::sleep(OLD_BOOT_PAUSE);
            }
            Err(FactsError::Transport(e @ TransportError::HostKey { .. })) => {
                return Err(SwitchError::HostKey(e));
            }
            Err(FactsError::Transport(TransportError::Interrupted { .. })) => {
                return Err(SwitchError::Interrupted);
            }
            Err(_) => transport.disconnect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SwitchRequest, bls_entry, kexec_load_command};
    use crate::recipe::{
        Kernel,
        ident::{KernelLabel, Release, TargetPath},
    };

    fn kernel() -> Kernel {
        Kernel {
            label: KernelLabel::new("patched").expect("valid"),
            release: Release::new("6.1.0-50-cloud-amd64").expect("valid"),
            image: TargetPath::new("/boot/vmlinuz-6.1.0-50-cloud-amd64").expect("valid"),
            initrd: TargetPath::new("/boot/initrd.img-6.1.0-50-cloud-amd64").expect("valid"),
            cmdline: vec![],
        }
    }

    #[test]
    fn kexec_command_line_is_base_plus_params_quoted_once() {
        let k = kernel();
        let params = vec!["quiet".to_owned(), "aba.kernel=patched".to_owned()];
        let req = SwitchRequest {
            kernel: &k,
            params: &params,
            base_cmdline: "console=ttyS0,115200 panic=-1 quiet",
            previous_boot_id: None,
        };
        assert_eq!(
            req.full_cmdline(),
            "console=ttyS0,115200 panic=-1 quiet aba.kernel=patched"
        );
        let cmd = kexec_load_command(&req);
        assert!(cmd.ends_with(
            "kexec -l /boot/vmlinuz-6.1.0-50-cloud-amd64 --initrd=/boot/initrd.img-6.1.0-50-cloud-amd64 --command-line='console=ttyS0,115200 panic=-1 quiet aba.kernel=patched'"
        ), "{cmd}");
        assert!(
            bls_entry(&req)
                .contains("options console=ttyS0,115200 panic=-1 quiet aba.kernel=patched\n")
        );
    }

    /// Issue 19: `panic=0` set only for kernel b must not take `panic=-1` away from kernel a;
    /// a parameter a point's kernel sets replaces the base's value for that point only.
    #[test]
    fn the_base_loses_only_what_this_points_kernel_sets() {
        let k = kernel();
        let base = "console=ttyS0,115200 panic=-1 mitigations=auto quiet";
        let for_a = vec!["aba.kernel=a".to_owned()];
        let for_b = vec!["aba.kernel=b".to_owned(), "panic=0".to_owned()];
        let line = |params: &[String]| {
            SwitchRequest {
                kernel: &k,
                params,
                base_cmdline: base,
                previous_boot_id: None,
            }
            .full_cmdline()
        };
        assert_eq!(
            line(&for_a),
            "console=ttyS0,115200 panic=-1 mitigations=auto quiet aba.kernel=a"
        );
        assert_eq!(
            line(&for_b),
            "console=ttyS0,115200 mitigations=auto quiet aba.kernel=b panic=0"
        );
        // A leftover of an earlier campaign's kernel is replaced by this point's value.
        let leftover = SwitchRequest {
            kernel: &k,
            params: &for_a,
            base_cmdline: "quiet aba.kernel=b",
            previous_boot_id: None,
        };
        assert_eq!(leftover.full_cmdline(), "quiet aba.kernel=a");
    }
}
