//! Switching the target to a point's kernel and waiting until it is back.
//!
//! One module per method: [`none`], [`kexec`], [`grub`] (`grub-reboot`), [`bls`] and
//! [`power`]. Each is a value of [`Switch`] and answers the [`Method`] seam: its name in the
//! inventory and the journal, whether it builds the kernel's command line, its boot estimate,
//! its preflight checks, and how it prepares and triggers a switch. The engine, `aba check`
//! and `aba preflight` ask the method; none of them matches on it.
//!
//! Every method ends the same way ([`switch_to`]): the old boot must be gone and a fresh login
//! must show a `boot_id` that differs from the previous one. An open port proves nothing (QEMU
//! accepts TCP while the guest is down) and the old kernel may answer for a moment after the
//! trigger, so the wait logs in and compares `boot_id`. A boot that never comes back gets the
//! inventory's power-cycle command, once, and the wait starts over.
//!
//! Adding a method: a file here with its struct (what the inventory gives it), its [`Method`]
//! implementation and its tests, plus one variant in [`Switch`] and [`SwitchKind`] (and its
//! table in the inventory's target, if it has one).

pub mod bls;
pub mod grub;
pub mod kexec;
pub mod none;
pub mod oneshot;
pub mod power;
mod wait;

use std::{
    fmt,
    path::Path,
    time::{Duration, Instant},
};

pub use wait::{Answered, wait_for_new_boot};

use crate::{
    kernel::proof::{BootFacts, FactsError},
    recipe::{Kernel, Recipe},
    target::{
        check::CheckItem,
        host::{HostCommandError, run_host},
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
    text::last_lines,
};

/// Placeholders of the switch commands (`power.set_next`, `power.cycle`, `power_cycle`,
/// `grub.entry`), filled from the point's kernel.
pub const SWITCH_PLACEHOLDERS: &[&str] =
    &["kernel", "release", "image", "initrd", "cmdline", "params"];

/// Where the boot-loader methods install kernels built on the host: `/boot`, where the
/// distribution keeps its own, in a folder aba owns (GRUB reads it; `bls` copies from it to
/// the ESP).
pub const INSTALL_BASE: &str = "/boot/aba-kernels";

/// Deadline for commands that prepare a switch (`kexec -l` reads ~30 MB under emulation).
const PREPARE_TIMEOUT: Duration = Duration::from_secs(180);
/// Deadline for host-side power commands.
const HOST_TIMEOUT: Duration = Duration::from_secs(300);

/// Which method a target switches kernels with: `switch = "…"` in the inventory, `method` in
/// the journal's `switching` record. Both are spelled by serde, as [`SwitchKind::name`].
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchKind {
    /// `kexec -l` then `systemctl kexec` / `kexec -e`: fast, no firmware.
    Kexec,
    /// `grub-reboot ENTRY` then `reboot`: a one-shot GRUB entry.
    GrubReboot,
    /// A one-shot Boot Loader Specification entry (systemd-boot) then `reboot`.
    Bls,
    /// Host-side commands: set the next kernel (netboot), then cycle power.
    Power,
    /// No switch: every point runs on the kernel that is up (null campaigns, `local`).
    None,
}

impl SwitchKind {
    /// The name as the inventory and the journal spell it (`grub-reboot`).
    pub fn name(self) -> &'static str {
        match self {
            SwitchKind::Kexec => "kexec",
            SwitchKind::GrubReboot => "grub-reboot",
            SwitchKind::Bls => "bls",
            SwitchKind::Power => "power",
            SwitchKind::None => "none",
        }
    }
}

impl fmt::Display for SwitchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a target switches kernels, with what its method needs from the inventory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Switch {
    /// No switch.
    None(none::NoSwitch),
    /// kexec on the target.
    Kexec(kexec::Kexec),
    /// grub-reboot into an entry.
    GrubReboot(grub::GrubReboot),
    /// A one-shot BLS entry.
    Bls(bls::Bls),
    /// Host-side commands.
    Power(power::Power),
}

impl Switch {
    /// The method, to ask what it does.
    pub fn method(&self) -> &dyn Method {
        match self {
            Switch::None(m) => m,
            Switch::Kexec(m) => m,
            Switch::GrubReboot(m) => m,
            Switch::Bls(m) => m,
            Switch::Power(m) => m,
        }
    }
}

/// What a switch method is: the facts the engine, `aba check` and the ETA read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Traits {
    /// Which method; its name in the inventory and the journal.
    pub kind: SwitchKind,
    /// Whether every point gets a fresh boot (false only without a switch: the points share
    /// the boot that is up, and tuning changes a machine that is not rebooted).
    pub switches: bool,
    /// Whether aba builds the new kernel's command line (the default boot's parameters without
    /// the boot loader's, then the point's) and boots the recipe's `image` and `initrd` by
    /// path. A method that boots a prepared entry (a GRUB menu entry, a netboot image) takes
    /// its command line from there.
    pub builds_cmdline: bool,
    /// Whether the target boots the kernel's `image` and `initrd` from its own disk, so that
    /// they are checked there before the first switch.
    pub boots_target_files: bool,
    /// Whether the old boot still answers for a moment after the trigger (the trigger runs
    /// detached, a second later): the wait for the new boot starts after that moment.
    pub old_boot_lingers: bool,
    /// Whether the method can make the machine boot a given kernel with given parameters.
    /// A power target without `set_next` (whose cycle command names no kernel) only cuts
    /// power: the machine boots what it boots by default, so a recipe of two releases or
    /// per-kernel parameters cannot run on it.
    pub chooses_kernel: bool,
    /// Whether the switch itself can bring back a machine that is down before it starts (a
    /// host-side power cycle does).
    pub works_while_down: bool,
    /// Rough time for one switch, for the ETA before anything was measured.
    pub boot_estimate: Duration,
}

impl Traits {
    /// A method that reboots the target into a kernel it boots from its own disk, triggered
    /// detached on the target (`reboot`, `systemctl kexec`).
    pub const fn from_disk(
        kind: SwitchKind,
        builds_cmdline: bool,
        boot_estimate: Duration,
    ) -> Traits {
        Traits {
            kind,
            switches: true,
            builds_cmdline,
            boots_target_files: true,
            old_boot_lingers: true,
            chooses_kernel: true,
            works_while_down: false,
            boot_estimate,
        }
    }
}

/// What the engine, `aba check` and `aba preflight` ask of a switch method. Every method
/// implements it in its own module.
pub trait Method: fmt::Debug + Send + Sync {
    /// What the method is.
    fn traits(&self) -> Traits;

    /// [`Traits::kind`].
    fn kind(&self) -> SwitchKind {
        self.traits().kind
    }

    /// [`Traits::switches`].
    fn switches(&self) -> bool {
        self.traits().switches
    }

    /// [`Traits::builds_cmdline`].
    fn builds_cmdline(&self) -> bool {
        self.traits().builds_cmdline
    }

    /// [`Traits::chooses_kernel`].
    fn chooses_kernel(&self) -> bool {
        self.traits().chooses_kernel
    }

    /// [`Traits::boots_target_files`].
    fn boots_target_files(&self) -> bool {
        self.traits().boots_target_files
    }

    /// [`Traits::boot_estimate`].
    fn boot_estimate(&self) -> Duration {
        self.traits().boot_estimate
    }

    /// The method's own lines of `aba preflight` (the kernel files and `power_cycle` are
    /// checked by preflight for every method).
    fn preflight(
        &self,
        recipe: &Recipe,
        transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError>;

    /// Readies the target to boot the requested kernel next (loads it, writes a one-shot
    /// entry, selects it on the netboot server). The target is still up afterwards.
    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError>;

    /// Starts the switch prepared by [`Method::prepare`]; returns as soon as it is under way.
    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError>;

    /// Where kernels built on the host are installed on the target (each in a folder of its
    /// own below it), given the target's work directory; `None` when this method cannot boot
    /// a kernel aba installs (it does not switch, or a host-side command boots the kernel).
    fn install_base(&self, _workdir: &str) -> Option<String> {
        None
    }

    /// Removes what [`Method::prepare`] left on the target for one boot (a one-shot entry,
    /// its copies, its selection), only what carries aba's marker; returns what it removed,
    /// in words. Called once a boot is proven, when a campaign ends and before one starts, so
    /// a killed run's leftovers go with the next run on that machine.
    fn clean(&self, _transport: &mut dyn Transport) -> Result<Vec<String>, SwitchError> {
        Ok(Vec::new())
    }
}

/// Runs a cleaning script on the target; each line it prints is one thing it removed.
fn run_clean(transport: &mut dyn Transport, script: &str) -> Result<Vec<String>, SwitchError> {
    Ok(prepare_on(transport, script)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Runs a preparing (or cleaning) command on the target and returns what it printed; a
/// non-zero exit is a [`SwitchError::Prepare`].
fn prepare_on(transport: &mut dyn Transport, command: &str) -> Result<String, SwitchError> {
    let out = transport.exec(command, PREPARE_TIMEOUT).map_err(classify)?;
    if out.outcome.success() {
        Ok(out.stdout_text())
    } else {
        Err(SwitchError::Prepare {
            command: command.to_owned(),
            outcome: out.outcome.to_string(),
            stderr: out.stderr_text(),
        })
    }
}

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

/// What a method works with while it prepares and triggers a switch.
pub struct Cx<'a, 'r> {
    /// The target.
    pub transport: &'a mut dyn Transport,
    /// What to boot.
    pub req: &'a SwitchRequest<'r>,
    /// Where host-side commands run (the inventory's directory).
    pub host_dir: &'a Path,
    cmdline: String,
    params: String,
}

impl<'a, 'r> Cx<'a, 'r> {
    fn new(
        transport: &'a mut dyn Transport,
        req: &'a SwitchRequest<'r>,
        host_dir: &'a Path,
    ) -> Self {
        Cx {
            transport,
            req,
            host_dir,
            cmdline: req.full_cmdline(),
            params: req.params.join(" "),
        }
    }

    /// The values of [`SWITCH_PLACEHOLDERS`] for this request.
    pub fn vars(&self) -> [(&str, &str); 6] {
        kernel_vars(self.req.kernel, &self.cmdline, &self.params)
    }

    /// Runs a preparing command on the target; a non-zero exit is a [`SwitchError::Prepare`].
    pub fn on_target(&mut self, command: &str) -> Result<(), SwitchError> {
        self.on_target_output(command).map(drop)
    }

    /// [`Cx::on_target`], returning what the command printed.
    pub fn on_target_output(&mut self, command: &str) -> Result<String, SwitchError> {
        prepare_on(self.transport, command)
    }

    /// Runs a host-side command with this request's placeholders.
    pub fn on_host(&self, template: &str) -> Result<(), SwitchError> {
        run_host(template, &self.vars(), self.host_dir, HOST_TIMEOUT)?;
        Ok(())
    }
}

/// The placeholders of a host-side switch command for `kernel`.
fn kernel_vars<'k>(
    kernel: &'k Kernel,
    cmdline: &'k str,
    params: &'k str,
) -> [(&'k str, &'k str); 6] {
    [
        ("kernel", kernel.label.as_str()),
        ("release", kernel.release.as_str()),
        ("image", kernel.image.as_str()),
        ("initrd", kernel.initrd.as_str()),
        ("cmdline", cmdline),
        ("params", params),
    ]
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
    /// What aba installed for a kernel built on the host, before the switch (empty for a
    /// kernel already on the target).
    pub installed: Vec<crate::build::install::Installed>,
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
    /// A kernel built on the host could not be installed.
    #[error("cannot install the build of kernel `{label}` on the target")]
    Install {
        /// The kernel.
        label: String,
        /// Why.
        #[source]
        source: crate::build::install::InstallError,
    },
}

fn stderr_tail(stderr: &str) -> String {
    let lines = last_lines(stderr, 5);
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines.join(" / "))
    }
}

/// A transport error met while switching.
fn classify(err: TransportError) -> SwitchError {
    match err {
        TransportError::HostKey { .. } => SwitchError::HostKey(err),
        TransportError::Interrupted { .. } => SwitchError::Interrupted,
        other => SwitchError::Unreachable(other),
    }
}

/// What the switch needs to know of the machine, from the inventory.
#[derive(Clone, Copy, Debug)]
pub struct Machine<'a> {
    /// How it switches.
    pub switch: &'a Switch,
    /// How long a boot may take before it counts as failed.
    pub boot_timeout: Duration,
    /// How long to keep trying to reach it while it should be up.
    pub connect_window: Duration,
    /// Host-side command that power-cycles it back to its default kernel.
    pub power_cycle: Option<&'a str>,
    /// Where host-side commands run.
    pub host_dir: &'a Path,
}

/// Switches `transport`'s machine to the requested kernel and returns the facts of the boot
/// that answered. Without a switch, returns the current boot's facts.
pub fn switch_to(
    machine: Machine<'_>,
    transport: &mut dyn Transport,
    req: &SwitchRequest<'_>,
    phase: &mut dyn FnMut(SwitchPhase),
) -> Result<Switched, SwitchError> {
    let method = machine.switch.method();
    let (current, mut power_cycled) = boot_being_left(machine, transport, req, phase)?;
    if !method.switches() {
        let Some(facts) = current else {
            return Err(SwitchError::NoReturn {
                timeout: machine.connect_window,
                power_cycled,
            });
        };
        return Ok(Switched {
            facts,
            previous_boot_id: None,
            login_s: 0.0,
            proof_s: 0.0,
            power_cycled,
            installed: Vec::new(),
        });
    }
    let previous: Option<String> = current
        .map(|f| f.boot_id)
        .or_else(|| req.previous_boot_id.map(str::to_owned));

    phase(SwitchPhase::Preparing);
    let installed = match &req.kernel.build {
        Some(build) => crate::build::install::install(transport, build).map_err(|source| {
            SwitchError::Install {
                label: req.kernel.label.to_string(),
                source,
            }
        })?,
        None => Vec::new(),
    };
    let mut cx = Cx::new(transport, req, machine.host_dir);
    method.prepare(&mut cx)?;
    method.trigger(&mut cx)?;
    let triggered = Instant::now();
    phase(SwitchPhase::Triggered);
    transport.disconnect();

    phase(SwitchPhase::Waiting);
    if method.traits().old_boot_lingers {
        // The old boot is still there until its trigger runs: logging into it proves nothing.
        wait::pause_until(triggered + wait::TRIGGER_DELAY + wait::TRIGGER_MARGIN)?;
    }
    let deadline = triggered + machine.boot_timeout;
    let answered = match wait_for_new_boot(transport, previous.as_deref(), deadline) {
        Ok(answered) => answered,
        Err(SwitchError::NoReturn { .. }) if machine.power_cycle.is_some() => {
            phase(SwitchPhase::PowerCycling);
            power_cycle(machine, transport, req)?;
            power_cycled = true;
            phase(SwitchPhase::Waiting);
            let deadline = Instant::now() + machine.boot_timeout;
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
        installed,
    })
}

/// The boot being left, read right before the trigger: the wait accepts only a boot with
/// another boot_id, so an old kernel that still answers is never mistaken for the new one.
/// Also whether the machine had to be power-cycled first (it was down: the last kernel hung).
fn boot_being_left(
    machine: Machine<'_>,
    transport: &mut dyn Transport,
    req: &SwitchRequest<'_>,
    phase: &mut dyn FnMut(SwitchPhase),
) -> Result<(Option<BootFacts>, bool), SwitchError> {
    let method = machine.switch.method();
    match wait::current_facts(machine.connect_window, transport) {
        Ok(facts) => Ok((Some(facts), false)),
        Err(SwitchError::Unreachable(_)) if machine.power_cycle.is_some() && method.switches() => {
            // Bring it back the way the inventory says, then switch from there.
            phase(SwitchPhase::PowerCycling);
            power_cycle(machine, transport, req)?;
            let deadline = Instant::now() + machine.boot_timeout;
            let answered = wait_for_new_boot(transport, req.previous_boot_id, deadline)?;
            Ok((Some(answered.facts), true))
        }
        Err(SwitchError::Unreachable(_)) if method.traits().works_while_down => Ok((None, false)),
        Err(e) => Err(e),
    }
}

/// Runs the inventory's power-cycle command on the host.
fn power_cycle(
    machine: Machine<'_>,
    transport: &mut dyn Transport,
    req: &SwitchRequest<'_>,
) -> Result<(), SwitchError> {
    transport.disconnect();
    let cx = Cx::new(transport, req, machine.host_dir);
    cx.on_host(machine.power_cycle.unwrap_or_default())
}

/// Runs the inventory's power-cycle command with the placeholders a switch to `kernel` with
/// `params` would fill, and returns the command as it ran (`None`: the inventory has none).
/// `aba resume` uses it for a target that does not answer: the killed runner may have left it
/// in a boot that hung.
pub fn power_cycle_for(
    machine: Machine<'_>,
    transport: &mut dyn Transport,
    kernel: &Kernel,
    params: &[String],
    base_cmdline: &str,
) -> Result<Option<String>, SwitchError> {
    let Some(template) = machine.power_cycle else {
        return Ok(None);
    };
    let req = SwitchRequest {
        kernel,
        params,
        base_cmdline,
        previous_boot_id: None,
    };
    power_cycle(machine, transport, &req)?;
    let cx = Cx::new(transport, &req, machine.host_dir);
    Ok(Some(crate::target::host::expand(template, &cx.vars())?))
}

/// The kernel files of `kernels` that are not readable on the target, one line each
/// (`kernel `a` (6.1.0-50): /boot/vmlinuz-…`), in one round trip.
pub fn missing_kernel_files<'k>(
    transport: &mut dyn Transport,
    kernels: impl IntoIterator<Item = &'k Kernel>,
) -> Result<Vec<String>, TransportError> {
    let mut script = String::new();
    for kernel in kernels {
        for path in kernel.files_on_target() {
            script.push_str(&format!(
                "[ -r {q} ] || echo {m}; ",
                q = sh_quote(path),
                m = sh_quote(&format!(
                    "kernel `{}` ({}): {path}",
                    kernel.label, kernel.release
                )),
            ));
        }
    }
    script.push_str("true");
    let out = transport.exec(&script, Duration::from_secs(60))?;
    Ok(out
        .stdout_text()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect())
}

/// A host-side switch command, expanded for every kernel of the recipe (not run): a
/// placeholder it cannot fill fails here instead of at the first switch of the night.
pub fn host_command_check(what: &str, cmd: &str, recipe: &Recipe) -> CheckItem {
    let mut expanded = Vec::new();
    for kernel in recipe.kernels.values() {
        let params = recipe.cmdline_for(&kernel.label).join(" ");
        match crate::target::host::expand(cmd, &kernel_vars(kernel, &params, &params)) {
            Ok(text) => expanded.push(text),
            Err(e) => {
                return CheckItem::fail(
                    what,
                    e.to_string(),
                    "use only the placeholders listed in docs/targets.md",
                );
            }
        }
    }
    CheckItem::ok(
        what,
        format!(
            "host command, not run by preflight: {}",
            expanded.first().map_or(cmd, String::as_str)
        ),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{SwitchKind, SwitchRequest};
    use crate::recipe::{
        Kernel,
        ident::{KernelLabel, Release, TargetPath},
    };

    pub(crate) fn kernel() -> Kernel {
        Kernel {
            label: KernelLabel::new("patched").expect("valid"),
            release: Release::new("6.1.0-50-cloud-amd64").expect("valid"),
            image: TargetPath::new("/boot/vmlinuz-6.1.0-50-cloud-amd64").expect("valid"),
            initrd: TargetPath::new("/boot/initrd.img-6.1.0-50-cloud-amd64").expect("valid"),
            cmdline: vec![],
            build: None,
        }
    }

    /// `quiet aba.kernel=patched`: parameters a point asks for.
    pub(crate) fn params() -> Vec<String> {
        vec!["quiet".to_owned(), "aba.kernel=patched".to_owned()]
    }

    /// A request for `kernel` with `params` on a serial-console base command line.
    pub(crate) fn request<'a>(kernel: &'a Kernel, params: &'a [String]) -> SwitchRequest<'a> {
        SwitchRequest {
            kernel,
            params,
            base_cmdline: "console=ttyS0,115200 panic=-1 quiet",
            previous_boot_id: None,
        }
    }

    /// The name the journal and the messages use is the one serde reads in the inventory.
    #[test]
    fn every_method_is_named_as_the_inventory_spells_it() {
        for kind in [
            SwitchKind::Kexec,
            SwitchKind::GrubReboot,
            SwitchKind::Bls,
            SwitchKind::Power,
            SwitchKind::None,
        ] {
            let serde = serde_json::to_string(&kind).expect("serialises");
            assert_eq!(serde, format!("\"{}\"", kind.name()));
            assert_eq!(kind.to_string(), kind.name());
        }
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
