//! A scripted machine for unit tests of the engine's policy: a [`Transport`] that answers the
//! commands aba sends (boot facts, the environment record, the health check, `mkdir`, kexec)
//! like a small Linux box would, and lets a test script what matters to the policy: how each
//! workload run ends (a value, a failure, a lost connection), what a reconnect finds (the same
//! boot, a new one, a refusal), and what booting a kernel gives (its release, or another).
//!
//! Every call is logged, so a test can assert what was (not) sent. Alongside it, the real
//! `sshd` tests and the QEMU lab prove the same paths against real machines.

use std::{
    collections::VecDeque,
    time::{Duration, Instant},
};

use crate::target::transport::{CommandOutput, ExitOutcome, Transport, TransportError};

const FACTS: &str = "cat /proc/sys/kernel/random/boot_id; uname -r; cat /proc/cmdline";
const FTRACE_COUNTS: &str = "aba-ftrace-counts";

/// How a workload run ends.
#[derive(Clone, Debug)]
pub enum Run {
    /// Exits 0 and prints this.
    Prints(String),
    /// Exits with this status, printing `oops` on stderr.
    Exits(i32),
    /// The connection drops while it runs.
    Lost,
}

/// What the next reconnect finds.
#[derive(Clone, Debug)]
pub enum Reconnect {
    /// The boot that was up.
    SameBoot,
    /// Another boot (the machine rebooted on its own).
    NewBoot,
    /// Nothing answers.
    Unreachable,
    /// The host key changed.
    HostKeyChanged,
}

/// One call the engine made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `exec` of this command.
    Exec(String),
    /// `upload` to this path.
    Upload(String),
    /// `reconnect`.
    Reconnect,
    /// `disconnect`.
    Disconnect,
}

/// A scripted machine.
#[derive(Debug)]
pub struct Scripted {
    /// Current `boot_id`.
    pub boot_id: String,
    /// Current `uname -r`.
    pub release: String,
    /// Current `/proc/cmdline`.
    pub cmdline: String,
    boots: u32,
    connected: bool,
    /// How the next workload runs end, in order; then [`Scripted::default_run`].
    pub runs: VecDeque<Run>,
    /// How a workload run ends when [`Scripted::runs`] is empty.
    pub default_run: Run,
    /// What the next reconnects find, in order; then the same boot.
    pub reconnects: VecDeque<Reconnect>,
    /// What each kexec boots, in order: `None` the loaded kernel, `Some(release)` that release
    /// instead (a kernel that panics and falls back to the default one); then the loaded one.
    pub boots_instead: VecDeque<Option<String>>,
    /// A kexec loaded and triggered: the next reconnect finds this boot (release, cmdline).
    pending: Option<(String, String)>,
    loaded: Option<(String, String)>,
    /// Commands that drop the connection the next time one containing this text runs
    /// (each once, in order of arrival).
    pub lose_on: VecDeque<String>,
    /// Every call, in order.
    pub log: Vec<Call>,
    /// The kernel warning lines every boot logs while it comes up (each boot's dmesg starts
    /// with these).
    pub dmesg_at_boot: Vec<String>,
    /// A kernel warning each workload run logs (numbered, so each line is its own).
    pub dmesg_per_run: Option<String>,
    /// The warning lines in this boot's dmesg.
    dmesg: Vec<String>,
    /// What `/sys/devices/system/cpu/online` says.
    pub cpus_online: String,
    /// What `/proc/loadavg` says.
    pub loadavg: String,
    /// What `kprobe_profile` holds when the ftrace teardown reads it.
    pub kprobe_profile: String,
}

impl Scripted {
    /// A machine up on `release`, whose workload runs print `1`.
    pub fn new(release: &str) -> Scripted {
        Scripted {
            boot_id: "boot-0".to_owned(),
            release: release.to_owned(),
            cmdline: "BOOT_IMAGE=/boot/vmlinuz console=ttyS0 quiet".to_owned(),
            boots: 0,
            connected: false,
            runs: VecDeque::new(),
            default_run: Run::Prints("1\n".to_owned()),
            reconnects: VecDeque::new(),
            boots_instead: VecDeque::new(),
            pending: None,
            loaded: None,
            lose_on: VecDeque::new(),
            log: Vec::new(),
            dmesg_at_boot: Vec::new(),
            dmesg_per_run: None,
            dmesg: Vec::new(),
            cpus_online: "0-3".to_owned(),
            loadavg: "0.10 0.05 0.01 1/100 123".to_owned(),
            kprobe_profile: String::new(),
        }
    }

    /// The workload commands that ran (or were attempted), in order.
    pub fn workload_runs(&self) -> usize {
        self.log
            .iter()
            .filter(|c| matches!(c, Call::Exec(cmd) if is_workload(cmd)))
            .count()
    }

    fn reboot(&mut self, release: Option<String>, cmdline: Option<String>) {
        self.boots += 1;
        self.boot_id = format!("boot-{}", self.boots);
        if let Some(r) = release {
            self.release = r;
        }
        if let Some(c) = cmdline {
            self.cmdline = c;
        }
        self.dmesg.clone_from(&self.dmesg_at_boot);
    }

    fn lost(&mut self) -> TransportError {
        self.connected = false;
        TransportError::ConnectionLost {
            target: self.describe(),
            reason: "scripted loss".to_owned(),
        }
    }

    fn answer(&mut self, command: &str) -> Result<CommandOutput, TransportError> {
        if command == FACTS {
            return Ok(printed(format!(
                "{}\n{}\n{}\n",
                self.boot_id, self.release, self.cmdline
            )));
        }
        if command.starts_with("echo @@uname") {
            return Ok(printed(format!(
                "@@release\n{}\n@@boot_id\n{}\n@@cpus_online\n{}\n@@loadavg\n{}\n",
                self.release, self.boot_id, self.cpus_online, self.loadavg
            )));
        }
        if command.starts_with("cat /proc/loadavg") {
            return Ok(printed(format!("{}\n{}\n", self.loadavg, self.cpus_online)));
        }
        if command.starts_with("echo @@count") {
            return Ok(printed(format!(
                "@@count\n{}\n@@lines\n{}\n@@units\n",
                self.dmesg.len(),
                self.dmesg.join("\n")
            )));
        }
        // The ftrace teardown, by the mark it prints before the counts (the campaign's
        // `ftrace::COUNTS_MARK`, spelled out: the target layer does not import the campaign).
        if command.contains(FTRACE_COUNTS) {
            return Ok(printed(format!("{FTRACE_COUNTS}\n{}", self.kprobe_profile)));
        }
        if is_workload(command) {
            if let Some(warning) = &self.dmesg_per_run {
                let line = format!("[{}.0] {warning}", 100 + self.dmesg.len());
                self.dmesg.push(line);
            }
            return match self.runs.pop_front().unwrap_or(self.default_run.clone()) {
                Run::Prints(text) => Ok(printed(text)),
                Run::Exits(code) => Ok(CommandOutput {
                    outcome: ExitOutcome::Exited(code),
                    stderr: b"oops\n".to_vec(),
                    ..CommandOutput::default()
                }),
                Run::Lost => Err(self.lost()),
            };
        }
        if let Some(load) = kexec_load(command) {
            self.loaded = Some(load);
        } else if command.contains("systemctl kexec") {
            let (release, cmdline) = self.loaded.take().unwrap_or_default();
            let release = self.boots_instead.pop_front().flatten().unwrap_or(release);
            self.pending = Some((release, cmdline));
        }
        Ok(printed(String::new()))
    }
}

/// A workload run: the only commands with a warm-up or sample phase in their environment.
fn is_workload(command: &str) -> bool {
    command.contains("'ABA_PHASE=warmup'") || command.contains("'ABA_PHASE=sample'")
}

/// The release and command line of a `kexec -l /boot/vmlinuz-RELEASE … --command-line='…'`.
fn kexec_load(command: &str) -> Option<(String, String)> {
    let rest = command.split_once("kexec -l /boot/vmlinuz-")?.1;
    let release = rest.split_whitespace().next()?.to_owned();
    let cmdline = rest
        .split_once("--command-line=")?
        .1
        .trim_matches('\'')
        .to_owned();
    Some((release, cmdline))
}

fn printed(stdout: String) -> CommandOutput {
    CommandOutput {
        outcome: ExitOutcome::Exited(0),
        stdout: stdout.into_bytes(),
        elapsed: Duration::from_millis(1),
        ..CommandOutput::default()
    }
}

impl Transport for Scripted {
    fn describe(&self) -> String {
        "root@scripted:22".to_owned()
    }

    fn exec_capped(
        &mut self,
        command: &str,
        _timeout: Duration,
        _max_output: usize,
    ) -> Result<CommandOutput, TransportError> {
        self.log.push(Call::Exec(command.to_owned()));
        if !self.connected {
            return Err(self.lost());
        }
        if let Some(i) = self
            .lose_on
            .iter()
            .position(|text| command.contains(text.as_str()))
        {
            self.lose_on.remove(i);
            return Err(self.lost());
        }
        self.answer(command)
    }

    fn upload(
        &mut self,
        _data: &[u8],
        remote_path: &str,
        _mode: u32,
    ) -> Result<(), TransportError> {
        self.log.push(Call::Upload(remote_path.to_owned()));
        if self.connected {
            Ok(())
        } else {
            Err(self.lost())
        }
    }

    fn download(&mut self, remote_path: &str) -> Result<Vec<u8>, TransportError> {
        Err(TransportError::Copy {
            path: remote_path.to_owned(),
            target: self.describe(),
            reason: "the scripted machine has no files".to_owned(),
        })
    }

    fn reconnect(&mut self, _deadline: Instant) -> Result<(), TransportError> {
        self.log.push(Call::Reconnect);
        if let Some((release, cmdline)) = self.pending.take() {
            self.reboot(Some(release), Some(cmdline));
            self.connected = true;
            return Ok(());
        }
        match self.reconnects.pop_front().unwrap_or(Reconnect::SameBoot) {
            Reconnect::SameBoot => {}
            Reconnect::NewBoot => self.reboot(None, None),
            Reconnect::Unreachable => {
                return Err(TransportError::Connect {
                    target: self.describe(),
                    reason: "connection refused (scripted)".to_owned(),
                });
            }
            Reconnect::HostKeyChanged => {
                return Err(TransportError::HostKey {
                    target: "scripted:22".to_owned(),
                    reason: "the host key CHANGED to SHA256:scripted".to_owned(),
                });
            }
        }
        self.connected = true;
        Ok(())
    }

    fn disconnect(&mut self) {
        self.log.push(Call::Disconnect);
        self.connected = false;
    }
}
