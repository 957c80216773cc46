//! The target inventory (`targets.toml`): the machine-specific facts a shared recipe must not
//! carry: where the box is, how to log in, how it switches kernels and how it is power-cycled.
//!
//! A built-in target `local` (this machine, no kernel switch) exists without any inventory.
//! Host-side commands in the inventory (`power.cycle`, `power_cycle`, `on_failure`, …) are run
//! by `sh -c` on the host, from the inventory file's directory, with placeholders substituted
//! as quoted words.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use indexmap::IndexMap;
use serde::Deserialize;
use thiserror::Error;
use toml::Spanned;

use crate::kernel::switch::{
    Machine,
    bls::{Bls, BlsTable},
    grub::{GrubReboot, GrubTable},
    kexec::Kexec,
    none::NoSwitch,
    power::{Power, PowerTable},
};
pub use crate::kernel::switch::{SWITCH_PLACEHOLDERS, Switch, SwitchKind};
use crate::recipe::{
    Diagnostics,
    diagnostic::{Diagnostic, did_you_mean},
    ident::{Name, Release, TargetPath},
    range::{
        BootEstimate, BootTimeout, ConnectTimeout, Count, DeadAfter, Dur, Keepalive, Port,
        ReserveTimeout,
    },
};
use crate::{
    kernel::binding::{KernelBinding, Origin},
    recipe::{ident::ParamValue, params::ParamBinding},
    target::cpu_set::RunnerCpus,
};

/// Placeholders of the notification commands (`on_finish`, `on_failure`).
pub const NOTIFY_PLACEHOLDERS: &[&str] = &["dir", "reason", "target"];

/// Placeholders of `reserve` and `release` ([`crate::campaign::reservation`] fills them): the
/// inventory checks them, so they live with it.
pub const RESERVATION_PLACEHOLDERS: &[&str] = &["target", "host", "port", "dir"];

/// How long the inventory's `reserve` may wait for a lab scheduler unless it says otherwise.
pub const DEFAULT_RESERVE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long a connection may be idle before the target's kernel is probed (TCP keepalive)
/// unless the inventory says otherwise: two probes and two answers per five seconds of a
/// silent sample, a frozen machine noticed within `dead_after` (issue 17).
pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(2);

/// The name of the built-in target.
pub const LOCAL: &str = "local";

/// The name of the stand-in target `aba check` plans for without `--target`.
pub const ANY_SWITCHING: &str = "(any)";

/// Where a target records which campaign holds it, unless the inventory says otherwise: a
/// place that survives reboots on a distribution.
pub const DEFAULT_LOCK_FILE: &str = "/var/lib/aba/lock";

/// A target inventory file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "aba target inventory",
    description = "An aba target inventory, targets.toml (docs/targets.md)."
)]
struct InventoryFile {
    /// Folders (this tester's) that recipes' `[files]` may copy from besides their own.
    #[serde(default)]
    allow_files_outside: Vec<String>,
    /// Where every target's noise profiles live: `<profiles>/<target>/`.
    #[serde(default)]
    profiles: Option<String>,
    #[serde(default)]
    #[schemars(with = "IndexMap<Name, TargetSpec>")]
    targets: IndexMap<Spanned<Name>, TargetSpec>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TargetSpec {
    #[schemars(with = "String")]
    host: Spanned<String>,
    #[serde(default)]
    port: Option<Count<Port>>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    user: Option<Spanned<String>>,
    #[serde(default)]
    identity: Option<String>,
    #[serde(default)]
    agent: Option<bool>,
    #[serde(default)]
    known_hosts: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    host_key: Option<Spanned<String>>,
    #[serde(default)]
    ssh_config: Option<String>,
    #[schemars(with = "SwitchKind")]
    switch: Spanned<SwitchKind>,
    #[serde(default)]
    boot_timeout: Option<Dur<BootTimeout>>,
    #[serde(default)]
    boot_estimate: Option<Dur<BootEstimate>>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    workdir: Option<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    lock_file: Option<Spanned<String>>,
    #[serde(default)]
    base_cmdline: Option<String>,
    #[serde(default)]
    console_log: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    power_cycle: Option<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    on_finish: Option<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    on_failure: Option<Spanned<String>>,
    /// Host-side command that reserves the machine in a lab scheduler before the campaign
    /// changes it (`{target}`, `{host}`, `{port}`, `{dir}`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    reserve: Option<Spanned<String>>,
    /// Host-side command that gives the machine back, whatever ended the campaign.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    release: Option<Spanned<String>>,
    /// How long `reserve` may take (default 30 min).
    #[serde(default)]
    reserve_timeout: Option<Dur<ReserveTimeout>>,
    #[serde(default)]
    #[schemars(with = "Option<Dur<Keepalive>>")]
    keepalive: Option<Spanned<Dur<Keepalive>>>,
    #[serde(default)]
    #[schemars(with = "Option<Dur<DeadAfter>>")]
    dead_after: Option<Spanned<Dur<DeadAfter>>>,
    #[serde(default)]
    connect_timeout: Option<Dur<ConnectTimeout>>,
    /// Where aba's runner and its sshd session run while workloads run: `auto` (default: off
    /// every CPU the recipe pins a workload to), `off`, or a CPU list.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    runner_cpus: Option<Spanned<String>>,
    #[serde(default)]
    power: Option<PowerTable>,
    #[serde(default)]
    grub: Option<GrubTable>,
    #[serde(default)]
    bls: Option<BlsTable>,
    /// A place of a labgrid coordinator that holds the machine for each campaign
    /// ([`crate::labgrid`]); instead of `reserve` and `release`.
    #[serde(default)]
    labgrid: Option<crate::labgrid::LabgridTable>,
    /// This target's noise profile directory (instead of `<profiles>/<target>/`).
    #[serde(default)]
    profiles: Option<String>,
    /// This tester's kernels for a shared recipe's labels (`aba::kernel::binding`).
    #[serde(default)]
    #[schemars(with = "IndexMap<String, KernelBindingSpec>")]
    kernels: IndexMap<Spanned<String>, KernelBindingSpec>,
    /// This machine's values for shared recipes' `[params]` (`aba::recipe::params`):
    /// `NAME = "VALUE"`, checked against the recipe when a campaign binds them.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, ParamValue>")]
    params: IndexMap<Spanned<String>, ParamValue>,
}

/// `[targets.NAME.kernels] LABEL = { release, image, initrd }`: values follow the recipe's
/// rules for `[kernels.LABEL]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct KernelBindingSpec {
    /// What `uname -r` prints for this tester's build of the label.
    #[serde(default)]
    release: Option<Release>,
    /// Its image on the target; default `/boot/vmlinuz-<release>` when `release` is bound.
    #[serde(default)]
    image: Option<TargetPath>,
    /// Its initrd on the target; default `/boot/initrd.img-<release>` when `release` is bound.
    #[serde(default)]
    initrd: Option<TargetPath>,
}

/// The JSON Schema of `targets.toml`, generated from the types it is read into, so it cannot
/// say other than the parser (`aba schema targets`).
pub fn json_schema(generator: schemars::SchemaGenerator) -> schemars::Schema {
    generator.into_root_schema_for::<InventoryFile>()
}

/// SSH connection facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshFacts {
    /// Host name, address or `~/.ssh/config` alias.
    pub host: String,
    /// Port; `None` lets `~/.ssh/config` (or 22) decide.
    pub port: Option<u16>,
    /// User; `None` lets `~/.ssh/config` (or `root`) decide.
    pub user: Option<String>,
    /// Private key file.
    pub identity: Option<PathBuf>,
    /// Try ssh-agent identities.
    pub agent: bool,
    /// known_hosts file to check the host key against.
    pub known_hosts: Option<PathBuf>,
    /// Pinned `SHA256:…` host-key fingerprint.
    pub host_key: Option<String>,
    /// `~/.ssh/config` file to resolve aliases from.
    pub ssh_config: Option<PathBuf>,
    /// Keepalive interval.
    pub keepalive: Duration,
    /// Silence after which the peer counts as dead.
    pub dead_after: Duration,
    /// Deadline of one connection attempt.
    pub connect_timeout: Duration,
    /// Where the persistent runner and its sshd session may run.
    pub runner_cpus: RunnerCpus,
}

/// One machine, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Name in the inventory (`local` for the built-in).
    pub name: String,
    /// `None` for the built-in local target.
    pub ssh: Option<SshFacts>,
    /// How kernels are switched.
    pub switch: Switch,
    /// How long a boot may take before it counts as failed.
    pub boot_timeout: Duration,
    /// Expected boot time, for the ETA.
    pub boot_estimate: Duration,
    /// Work directory on the target (files, setup, workloads run there); `None` for local,
    /// whose work directory lives inside the results directory.
    pub workdir: Option<String>,
    /// The file on the target that says which campaign holds it (`None` for local, which
    /// the host-side lock alone covers).
    pub lock_file: Option<String>,
    /// kexec: the parameters every kernel gets before the recipe's, instead of the ones
    /// captured from the running boot's `/proc/cmdline` at the first connection.
    pub base_cmdline: Option<String>,
    /// A host-side file holding the target's console output (serial log), quoted in failure
    /// reports.
    pub console_log: Option<PathBuf>,
    /// Host-side command that power-cycles the machine back to its default kernel when a boot
    /// never comes back.
    pub power_cycle: Option<String>,
    /// Host-side command run when a campaign finishes.
    pub on_finish: Option<String>,
    /// Host-side command run when a campaign stops on a failure.
    pub on_failure: Option<String>,
    /// Host-side command that reserves the machine in a lab scheduler
    /// ([`crate::campaign::reservation`]).
    pub reserve: Option<String>,
    /// Host-side command that gives the reservation back.
    pub release: Option<String>,
    /// How long `reserve` may take (and a labgrid reservation may wait in the queue).
    pub reserve_timeout: Duration,
    /// The labgrid place that holds the machine for each campaign, instead of `reserve` and
    /// `release` ([`crate::labgrid`]).
    pub labgrid: Option<crate::labgrid::Place>,
    /// Directory host-side commands run in (the inventory's).
    pub base_dir: PathBuf,
    /// Where this target's noise profiles live (`aba calibrate` writes there, campaigns read
    /// there): the target's `profiles`, else `<profiles>/<name>/` of the inventory, else
    /// [`default_profiles_dir`].
    pub profiles: PathBuf,
    /// `[targets.NAME.kernels]`: this tester's kernels for recipes' labels, in file order.
    pub kernels: Vec<KernelBinding>,
    /// `[targets.NAME.params]`: this machine's values for recipes' parameters, in file order.
    pub params: Vec<ParamBinding>,
}

/// A target's noise profile directory when the inventory names none:
/// `$XDG_DATA_HOME/aba/profiles/<target>/`, or `~/.local/share/aba/profiles/<target>/`
/// without `XDG_DATA_HOME` (`./aba-profiles/<target>/` without a home either).
#[must_use]
pub fn default_profiles_dir(target: &str) -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .map_or_else(|| PathBuf::from("aba-profiles"), |d| d.join("aba/profiles"));
    base.join(target)
}

impl Target {
    /// The built-in target: this machine, no switch.
    pub fn local() -> Self {
        Target {
            name: LOCAL.to_owned(),
            ssh: None,
            switch: Switch::None(NoSwitch),
            boot_timeout: Duration::ZERO,
            boot_estimate: Duration::ZERO,
            workdir: None,
            lock_file: None,
            base_cmdline: None,
            console_log: None,
            power_cycle: None,
            on_finish: None,
            on_failure: None,
            reserve: None,
            release: None,
            reserve_timeout: DEFAULT_RESERVE_TIMEOUT,
            labgrid: None,
            base_dir: PathBuf::from("."),
            profiles: default_profiles_dir(LOCAL),
            kernels: Vec::new(),
            params: Vec::new(),
        }
    }

    /// A stand-in for "some machine that switches kernels by kexec", for `aba check` without
    /// `--target`: it plans fresh boots with the kexec ETA and is never connected to.
    pub fn any_switching() -> Self {
        Target {
            name: ANY_SWITCHING.to_owned(),
            switch: Switch::Kexec(Kexec),
            boot_estimate: crate::kernel::switch::Method::boot_estimate(&Kexec),
            ..Target::local()
        }
    }

    /// The host-side file holding this machine's console for the campaign in `results`: the
    /// inventory's `console_log`, or the log aba keeps of a labgrid place's console
    /// (`console = true`, [`crate::labgrid::console`]).
    pub fn console_log_in(&self, results: &Path) -> Option<PathBuf> {
        self.console_log.clone().or_else(|| {
            self.labgrid
                .as_ref()
                .filter(|p| p.console)
                .map(|_| results.join(crate::labgrid::console::CONSOLE_FILE))
        })
    }

    /// True for the built-in target.
    pub fn is_local(&self) -> bool {
        self.ssh.is_none()
    }

    /// What the switch code needs to know of this machine.
    pub fn machine(&self) -> Machine<'_> {
        Machine {
            switch: &self.switch,
            boot_timeout: self.boot_timeout,
            connect_window: self.connect_window(),
            power_cycle: self.power_cycle.as_deref(),
            host_dir: &self.base_dir,
        }
    }

    /// How long to keep trying to reach a machine that should be up (not booting): long
    /// enough for a loaded sshd, short enough to notice a dead box.
    pub fn connect_window(&self) -> Duration {
        self.ssh.as_ref().map_or(Duration::from_secs(1), |s| {
            (s.connect_timeout * 5).max(Duration::from_secs(20))
        })
    }
}

/// Why an inventory could not be used.
#[derive(Debug, Error)]
pub enum InventoryError {
    /// The file could not be read.
    #[error("cannot read target inventory {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file has problems.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// The requested target is not in the inventory.
    #[error("target `{name}` is not defined{}", where_.as_ref().map(|p| format!(" in {}", p.display())).unwrap_or_else(|| " (no target inventory found)".to_owned()))]
    UnknownTarget {
        /// Requested name.
        name: String,
        /// The inventory that was searched, if any.
        where_: Option<PathBuf>,
        /// Known names (with `local`).
        known: Vec<String>,
        /// Closest known name.
        suggestion: Option<String>,
    },
}

/// A parsed inventory.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    /// The file, if one was read.
    pub path: Option<PathBuf>,
    /// Folders recipes' `[files]` may copy from besides their own (`allow_files_outside`,
    /// relative to the inventory's directory, `~/` expanded).
    pub allow_files_outside: Vec<PathBuf>,
    /// Targets by name, in file order.
    pub targets: IndexMap<String, Target>,
    /// The inventory's `profiles` directory (targets' profiles in `<it>/<name>/`), resolved.
    pub profiles: Option<PathBuf>,
}

impl Inventory {
    /// Finds the inventory: `explicit`, else `$ABA_TARGETS`, else `./targets.toml`, else
    /// `$XDG_CONFIG_HOME/aba/targets.toml` (or `~/.config/aba/targets.toml`). No file is not an
    /// error: `local` still exists.
    pub fn discover(explicit: Option<&Path>) -> Result<Inventory, InventoryError> {
        if let Some(path) = explicit {
            return Inventory::load(path);
        }
        let mut candidates = Vec::new();
        if let Some(p) = std::env::var_os("ABA_TARGETS") {
            candidates.push(PathBuf::from(p));
        }
        // The current folder may be anyone's (a downloaded bundle, a shared checkout): a link
        // found there is not followed, since it could name any file, whose first line a parse
        // error would quote. A file named with --targets or $ABA_TARGETS may be a link.
        let here = PathBuf::from("targets.toml");
        if std::fs::symlink_metadata(&here).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(InventoryError::Read {
                path: here,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it is a symbolic link, which aba does not follow when it finds one in the \
                     current folder; name the file with --targets (or $ABA_TARGETS) to use it",
                ),
            });
        }
        candidates.push(here);
        if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME") {
            candidates.push(PathBuf::from(dir).join("aba/targets.toml"));
        } else if let Some(home) = std::env::var_os("HOME") {
            candidates.push(PathBuf::from(home).join(".config/aba/targets.toml"));
        }
        match candidates.into_iter().find(|p| p.is_file()) {
            Some(path) => Inventory::load(&path),
            None => Ok(Inventory::default()),
        }
    }

    /// Reads and validates an inventory file.
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        let source = crate::input::read_text(path, crate::input::CONFIG_LIMIT, "target inventory")
            .map_err(|source| InventoryError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        Inventory::parse(path, &source)
    }

    /// Validates inventory text as if read from `path`.
    pub fn parse(path: &Path, source: &str) -> Result<Inventory, InventoryError> {
        let invalid = |diags| InventoryError::Invalid(Diagnostics(diags));
        let file: InventoryFile = toml::from_str(source)
            .map_err(|e| invalid(vec![Diagnostic::from_toml(path, source, &e)]))?;
        let base_dir = crate::input::folder_of(path);
        let mut diags = Vec::new();
        let mut targets = IndexMap::new();
        for (name, mut spec) in file.targets {
            if name.get_ref().as_str() == LOCAL {
                diags.push(Diagnostic::at(
                    path,
                    source,
                    Some(name.span()),
                    "`local` is the built-in target (this machine); choose another name",
                ));
                continue;
            }
            let profiles = file.profiles.as_deref().map(|p| expand_home(p, &base_dir));
            let kernels = kernel_bindings(path, source, std::mem::take(&mut spec.kernels));
            let params = param_bindings(path, source, std::mem::take(&mut spec.params));
            match resolve_target(
                name.get_ref().as_str(),
                spec,
                &base_dir,
                profiles.as_deref(),
            ) {
                Ok(mut t) => {
                    t.kernels = kernels;
                    t.params = params;
                    targets.insert(t.name.clone(), t);
                }
                Err((span, message)) => {
                    diags.push(Diagnostic::at(
                        path,
                        source,
                        Some(span.unwrap_or(name.span())),
                        message,
                    ));
                }
            }
        }
        if diags.is_empty() {
            Ok(Inventory {
                path: Some(path.to_path_buf()),
                allow_files_outside: file
                    .allow_files_outside
                    .iter()
                    .map(|p| expand_home(p, &base_dir))
                    .collect(),
                targets,
                profiles: file.profiles.as_deref().map(|p| expand_home(p, &base_dir)),
            })
        } else {
            Err(invalid(diags))
        }
    }

    /// The target called `name`; `local` always exists.
    pub fn target(&self, name: &str) -> Result<Target, InventoryError> {
        if name == LOCAL {
            let mut local = Target::local();
            if let Some(base) = &self.profiles {
                local.profiles = base.join(LOCAL);
            }
            return Ok(local);
        }
        self.targets.get(name).cloned().ok_or_else(|| {
            let mut known: Vec<String> = vec![LOCAL.to_owned()];
            known.extend(self.targets.keys().cloned());
            InventoryError::UnknownTarget {
                name: name.to_owned(),
                where_: self.path.clone(),
                suggestion: did_you_mean(name, known.iter().map(String::as_str)).map(str::to_owned),
                known,
            }
        })
    }
}

/// The bindings of one target, each placed at its label's `file:line:column` so that one
/// naming a label a recipe lacks is reported where it was written.
fn kernel_bindings(
    path: &Path,
    source: &str,
    specs: IndexMap<Spanned<String>, KernelBindingSpec>,
) -> Vec<KernelBinding> {
    specs
        .into_iter()
        .map(|(label, spec)| {
            let at = Diagnostic::at(path, source, Some(label.span()), "");
            KernelBinding {
                label: label.get_ref().clone(),
                release: spec.release,
                image: spec.image,
                initrd: spec.initrd,
                origin: Origin::Inventory {
                    at: format!("{}:{}:{}", path.display(), at.line, at.column),
                },
            }
        })
        .collect()
}

/// The parameter values of one target, each placed at its name's `file:line:column` so that
/// one naming a parameter a recipe lacks is reported where it was written.
fn param_bindings(
    path: &Path,
    source: &str,
    specs: IndexMap<Spanned<String>, ParamValue>,
) -> Vec<ParamBinding> {
    specs
        .into_iter()
        .map(|(name, value)| {
            let at = Diagnostic::at(path, source, Some(name.span()), "");
            ParamBinding {
                name: name.get_ref().clone(),
                value,
                origin: Origin::Inventory {
                    at: format!("{}:{}:{}", path.display(), at.line, at.column),
                },
            }
        })
        .collect()
}

type SpanError = (Option<std::ops::Range<usize>>, String);

fn resolve_target(
    name: &str,
    spec: TargetSpec,
    base: &Path,
    profiles: Option<&Path>,
) -> Result<Target, SpanError> {
    let rel = |p: &str| expand_home(p, base);
    let host = spec.host.get_ref().trim().to_owned();
    if host.is_empty()
        || host.len() > 255
        || host.contains(|c: char| c.is_whitespace() || c.is_control())
        || host.starts_with('-')
    {
        return Err((
            Some(spec.host.span()),
            format!(
                "invalid host `{}`: a host name, an address or an ssh config alias of at most 255 characters, without spaces or control characters, not starting with `-`",
                crate::text::quoted(&host)
            ),
        ));
    }
    if let Some(fp) = &spec.host_key
        && !fp.get_ref().starts_with("SHA256:")
    {
        return Err((
            Some(fp.span()),
            "`host_key` is a fingerprint as `ssh-keygen -lf` prints it: `SHA256:…`".to_owned(),
        ));
    }
    if spec.known_hosts.is_none() && spec.host_key.is_none() {
        return Err((
            Some(spec.host.span()),
            format!(
                "target `{name}` has neither `known_hosts` nor `host_key`: aba checks every host key and never accepts one blindly"
            ),
        ));
    }
    if let Some(user) = &spec.user {
        let u = user.get_ref();
        if u.is_empty()
            || u.len() > 64
            || u.starts_with('-')
            || u.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err((
                Some(user.span()),
                format!(
                    "invalid user `{}`: a login name of at most 64 characters, without spaces or control characters",
                    crate::text::quoted(u)
                ),
            ));
        }
    }
    if let (Some(k), Some(d)) = (&spec.keepalive, &spec.dead_after)
        && d.get_ref().get() < k.get_ref().get() * 2
    {
        return Err((
            Some(d.span()),
            format!(
                "`dead_after` ({}) must be at least twice `keepalive` ({}), or a live target would be declared dead between two keepalives",
                humantime::format_duration(d.get_ref().get()),
                humantime::format_duration(k.get_ref().get())
            ),
        ));
    }
    let runner_cpus = match &spec.runner_cpus {
        None => RunnerCpus::Auto,
        Some(text) => RunnerCpus::parse(text.get_ref()).map_err(|reason| {
            (
                Some(text.span()),
                format!(
                    "invalid runner_cpus `{}`: {reason}; write `auto`, `off` or a CPU list such as `0-1`",
                    crate::text::quoted(text.get_ref())
                ),
            )
        })?,
    };
    let switch_commands = [
        spec.power.as_ref().and_then(|p| p.set_next.as_ref()),
        spec.power.as_ref().map(|p| &p.cycle),
        spec.power_cycle.as_ref(),
        spec.grub.as_ref().and_then(|g| g.entry.as_ref()),
    ];
    for cmd in switch_commands.into_iter().flatten() {
        check_placeholders(cmd, SWITCH_PLACEHOLDERS)?;
    }
    for cmd in [spec.on_finish.as_ref(), spec.on_failure.as_ref()]
        .into_iter()
        .flatten()
    {
        check_placeholders(cmd, NOTIFY_PLACEHOLDERS)?;
    }
    for cmd in [spec.reserve.as_ref(), spec.release.as_ref()]
        .into_iter()
        .flatten()
    {
        check_placeholders(cmd, RESERVATION_PLACEHOLDERS)?;
    }
    if spec.labgrid.is_some()
        && let Some(hook) = spec.reserve.as_ref().or(spec.release.as_ref())
    {
        return Err((
            Some(hook.span()),
            "a target with `[targets.NAME.labgrid]` is reserved through the coordinator: remove `reserve` and `release`".to_owned(),
        ));
    }
    if let Some(table) = &spec.labgrid {
        if let (Some(power), Some(own)) = (table.power.as_ref(), spec.power_cycle.as_ref())
            && *power.get_ref()
        {
            return Err((
                Some(own.span()),
                "a target whose labgrid place powers it (`power = true`) is power-cycled through the coordinator: remove `power_cycle`".to_owned(),
            ));
        }
        if let Some(console) = table.console.as_ref()
            && *console.get_ref()
            && spec.console_log.is_some()
        {
            return Err((
                Some(console.span()),
                "a target whose console comes from its labgrid place (`console = true`) has no `console_log`: remove one of them".to_owned(),
            ));
        }
    }
    let labgrid = match spec.labgrid {
        Some(table) => Some(
            crate::labgrid::Place::from_table(table, rel)
                .map_err(|(span, message)| (Some(span), message))?,
        ),
        None => None,
    };
    let power_cycle = match labgrid.as_ref().filter(|p| p.power) {
        Some(place) => Some(place.power_cycle().map_err(|e| (None, e.to_string()))?),
        None => spec.power_cycle.map(Spanned::into_inner),
    };
    let kind = *spec.switch.get_ref();
    let at_switch = |message: String| (Some(spec.switch.span()), message);
    let switch = match kind {
        SwitchKind::Kexec => Switch::Kexec(Kexec),
        SwitchKind::None => Switch::None(NoSwitch),
        SwitchKind::GrubReboot => Switch::GrubReboot(GrubReboot::from_table(spec.grub)),
        SwitchKind::Bls => Switch::Bls(Bls::from_table(spec.bls).map_err(at_switch)?),
        SwitchKind::Power => Switch::Power(Power::from_table(name, spec.power).map_err(at_switch)?),
    };
    let workdir = match spec.workdir {
        Some(w) => {
            let text = w.get_ref().clone();
            if crate::recipe::ident::TargetPath::new(&text).is_err() {
                return Err((
                    Some(w.span()),
                    format!(
                        "invalid workdir `{text}`: an absolute path of letters, digits and `_ - . / + ~`"
                    ),
                ));
            }
            text
        }
        None => "/tmp/aba".to_owned(),
    };
    let lock_file = match spec.lock_file {
        Some(l) => {
            let text = l.get_ref().clone();
            if crate::recipe::ident::TargetPath::new(&text).is_err() {
                return Err((
                    Some(l.span()),
                    format!(
                        "invalid lock_file `{text}`: an absolute path of letters, digits and `_ - . / + ~`"
                    ),
                ));
            }
            text
        }
        None => DEFAULT_LOCK_FILE.to_owned(),
    };
    Ok(Target {
        name: name.to_owned(),
        ssh: Some(SshFacts {
            host,
            port: spec
                .port
                .map(|p| u16::try_from(p.get()).expect("invariant: a port is at most 65535")),
            user: spec.user.map(Spanned::into_inner),
            identity: spec.identity.as_deref().map(rel),
            agent: spec.agent.unwrap_or(spec.identity.is_none()),
            known_hosts: spec.known_hosts.as_deref().map(rel),
            host_key: spec.host_key.map(Spanned::into_inner),
            ssh_config: spec.ssh_config.as_deref().map(rel),
            keepalive: spec
                .keepalive
                .map_or(DEFAULT_KEEPALIVE, |d| d.get_ref().get()),
            dead_after: spec
                .dead_after
                .map_or(Duration::from_secs(5), |d| d.get_ref().get()),
            connect_timeout: spec
                .connect_timeout
                .map_or(Duration::from_secs(2), |d| d.get()),
            runner_cpus,
        }),
        boot_timeout: spec
            .boot_timeout
            .map_or(Duration::from_secs(600), |d| d.get()),
        boot_estimate: spec
            .boot_estimate
            .map_or(switch.method().boot_estimate(), |d| d.get()),
        switch,
        workdir: Some(workdir),
        lock_file: Some(lock_file),
        base_cmdline: spec.base_cmdline,
        console_log: spec.console_log.as_deref().map(rel),
        power_cycle,
        on_finish: spec.on_finish.map(Spanned::into_inner),
        on_failure: spec.on_failure.map(Spanned::into_inner),
        reserve: spec.reserve.map(Spanned::into_inner),
        release: spec.release.map(Spanned::into_inner),
        reserve_timeout: spec
            .reserve_timeout
            .map_or(DEFAULT_RESERVE_TIMEOUT, |d| d.get()),
        labgrid,
        base_dir: base.to_path_buf(),
        profiles: match (&spec.profiles, profiles) {
            (Some(own), _) => rel(own),
            (None, Some(all)) => all.join(name),
            (None, None) => default_profiles_dir(name),
        },
        kernels: Vec::new(),
        params: Vec::new(),
    })
}

/// A host command may only use the placeholders aba fills in for it: an unknown one would
/// otherwise fail only when the command runs, in the middle of a night.
fn check_placeholders(cmd: &Spanned<String>, known: &[&str]) -> Result<(), SpanError> {
    crate::placeholders::render_template(cmd.get_ref(), &mut |name| {
        known.contains(&name).then(String::new)
    })
    .map(|_| ())
    .map_err(|unknown| {
        let list = known
            .iter()
            .map(|k| format!("{{{k}}}"))
            .collect::<Vec<_>>()
            .join(", ");
        let suggestion = did_you_mean(&unknown, known.iter().copied())
            .map(|s| format!("\nhelp: did you mean `{{{s}}}`?"))
            .unwrap_or_default();
        (
            Some(cmd.span()),
            format!(
                "unknown placeholder `{{{}}}`{suggestion}\nhelp: this command may use {list}; write `{{{{` and `}}}}` for literal braces",
                crate::text::quoted(&unknown)
            ),
        )
    })
}

/// `~/x` → `$HOME/x`; relative paths are taken relative to `base` (the inventory's directory).
fn expand_home(path: &str, base: &Path) -> PathBuf {
    crate::input::resolve_from(path, base)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{Inventory, InventoryError, Switch, SwitchKind};
    use crate::kernel::switch::kexec::Kexec;

    const LAB: &str = r#"
[targets.lab]
host = "127.0.0.1"
port = 10022
user = "root"
identity = "id_ed25519"
known_hosts = "known_hosts"
switch = "kexec"
boot_timeout = "90s"

[targets.netboot]
host = "127.0.0.1"
host_key = "SHA256:abc"
switch = "power"
[targets.netboot.power]
cycle = "./power-cycle.sh lab1 10022 {release}"
"#;

    const BOUND: &str = r#"[targets.box]
host = "box"
host_key = "SHA256:abc"
switch = "kexec"
[targets.box.kernels]
orig = { release = "6.18.0-orig+", image = "/boot/vmlinuz-orig" }
patched = { release = "6.18.0-rtfix+" }
"#;

    #[test]
    fn kernel_bindings_are_placed_where_they_were_written() {
        use crate::kernel::binding::Origin;
        let inv = Inventory::parse(Path::new("targets.toml"), BOUND).expect("valid");
        let kernels = inv.target("box").expect("defined").kernels;
        assert_eq!(kernels.len(), 2);
        assert_eq!(kernels[0].label, "orig");
        assert_eq!(
            kernels[0].release.as_ref().unwrap().as_str(),
            "6.18.0-orig+"
        );
        assert_eq!(
            kernels[0].image.as_ref().unwrap().as_str(),
            "/boot/vmlinuz-orig"
        );
        assert_eq!(
            kernels[1].origin,
            Origin::Inventory {
                at: "targets.toml:7:1".to_owned()
            }
        );
    }

    #[test]
    fn param_values_are_placed_where_they_were_written() {
        let text = format!("{BOUND}[targets.box.params]\nisolated_cpu = \"5\"\n");
        let inv = Inventory::parse(Path::new("targets.toml"), &text).expect("valid");
        let params = inv.target("box").expect("defined").params;
        assert_eq!(params[0].name, "isolated_cpu");
        assert_eq!(params[0].value.as_str(), "5");
        assert_eq!(
            params[0].origin,
            crate::origin::Origin::Inventory {
                at: "targets.toml:9:1".to_owned()
            }
        );
        let bad = format!("{BOUND}[targets.box.params]\nisolated_cpu = \"5 6\"\n");
        let err = Inventory::parse(Path::new("targets.toml"), &bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("targets.toml:9:16"), "{err}");
        assert!(err.contains("invalid parameter value `5 6`"), "{err}");
    }

    #[test]
    fn a_kernel_binding_follows_the_recipe_rules() {
        for (bad, line, column, what) in [
            (
                "orig = { release = \"6.1 x\" }",
                6,
                20,
                "invalid kernel release",
            ),
            ("orig = { image = \"boot/x\" }", 6, 18, "absolute"),
            (
                "orig = { release = \"6.1\", cmdline = \"x\" }",
                6,
                27,
                "cmdline",
            ),
        ] {
            let text = BOUND.replace(
                "orig = { release = \"6.18.0-orig+\", image = \"/boot/vmlinuz-orig\" }",
                bad,
            );
            let Err(InventoryError::Invalid(diags)) =
                Inventory::parse(Path::new("targets.toml"), &text)
            else {
                panic!("{bad} should be refused");
            };
            let d = &diags.0[0];
            assert_eq!((d.line, d.column), (line, column), "{bad}: {d:?}");
            assert!(diags.to_string().contains(what), "{bad}: {diags}");
        }
    }

    #[test]
    fn targets_resolve_relative_to_the_inventory() {
        let inv = Inventory::parse(Path::new("lab/targets.toml"), LAB).expect("valid");
        let lab = inv.target("lab").expect("defined");
        let ssh = lab.ssh.as_ref().expect("ssh");
        assert_eq!(ssh.identity.as_deref(), Some(Path::new("lab/id_ed25519")));
        assert_eq!(lab.switch, Switch::Kexec(Kexec));
        assert_eq!(lab.boot_timeout.as_secs(), 90);
        // Profiles: the inventory's directory per target, unless a target names its own.
        assert_eq!(lab.profiles, super::default_profiles_dir("lab"));
        let with = format!("profiles = \"prof\"\n{LAB}").replace(
            "boot_timeout = \"90s\"",
            "boot_timeout = \"90s\"\nprofiles = \"~/lab-profiles\"",
        );
        let inv2 = Inventory::parse(Path::new("lab/targets.toml"), &with).expect("valid");
        let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("home"));
        assert_eq!(
            inv2.target("lab").expect("defined").profiles,
            home.join("lab-profiles")
        );
        assert_eq!(
            inv2.target("netboot").expect("defined").profiles,
            Path::new("lab/prof/netboot")
        );
        assert_eq!(
            inv2.target("local").expect("built in").profiles,
            Path::new("lab/prof/local")
        );
        let net = inv.target("netboot").expect("defined");
        assert_eq!(net.switch.method().kind(), SwitchKind::Power);
        assert!(inv.target("local").expect("built in").is_local());
    }

    #[test]
    fn unknown_target_suggests() {
        let inv = Inventory::parse(Path::new("t.toml"), LAB).expect("valid");
        match inv.target("lba") {
            Err(InventoryError::UnknownTarget {
                suggestion, known, ..
            }) => {
                assert_eq!(suggestion.as_deref(), Some("lab"));
                assert_eq!(known, ["local", "lab", "netboot"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_target_without_host_key_checking_is_refused() {
        let src = "[targets.x]\nhost = \"127.0.0.1\"\nswitch = \"kexec\"\n";
        let err = Inventory::parse(Path::new("t.toml"), src).expect_err("invalid");
        assert!(
            err.to_string().contains("never accepts one blindly"),
            "{err}"
        );
    }

    #[test]
    fn power_switch_needs_its_commands() {
        let src = "[targets.x]\nhost = \"h\"\nhost_key = \"SHA256:x\"\nswitch = \"power\"\n";
        let err = Inventory::parse(Path::new("t.toml"), src).expect_err("invalid");
        assert!(err.to_string().contains("needs [targets.x.power]"), "{err}");
    }
}
