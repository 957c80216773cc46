//! The seam between the campaign engine and a machine: run a shell command with a deadline,
//! copy a file there or back, and reconnect after the machine went away.
//!
//! Every transport (this machine, SSH) gives the same guarantees, so the engine never needs to
//! know which one it drives: a command runs in its own process group, the whole group dies when
//! its deadline passes or when its connection goes away, and stdout and stderr are captured
//! separately as bytes. The engine decides what a failure means; a transport only reports it.

use std::time::{Duration, Instant};

use thiserror::Error;

use crate::target::cpu_set::CpuSet;

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitOutcome {
    /// The command exited with this status.
    Exited(i32),
    /// The command was killed by this signal (name without `SIG`, e.g. `KILL`).
    Signaled(String),
    /// The deadline passed; the command's whole process group was killed.
    TimedOut,
}

impl ExitOutcome {
    /// True for `Exited(0)`.
    pub fn success(&self) -> bool {
        *self == ExitOutcome::Exited(0)
    }
}

impl std::fmt::Display for ExitOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitOutcome::Exited(code) => write!(f, "exit status {code}"),
            ExitOutcome::Signaled(sig) => write!(f, "killed by SIG{sig}"),
            ExitOutcome::TimedOut => f.write_str("timed out"),
        }
    }
}

/// What is kept of each output stream of a command run through [`Transport::exec`]; a workload
/// names its own cap with [`Transport::exec_capped`]. Memory per command is bounded by twice the
/// cap plus a small constant, whatever the command prints.
pub const DEFAULT_MAX_OUTPUT: usize = 64 << 20;

/// What a finished command produced. Bytes stay bytes; decode lossily only for display.
#[derive(Clone, Debug, Default)]
pub struct CommandOutput {
    /// How the command ended.
    pub outcome: ExitOutcome,
    /// What the command wrote to stdout, up to the cap.
    pub stdout: Vec<u8>,
    /// What the command wrote to stderr, up to the cap.
    pub stderr: Vec<u8>,
    /// Wall time from start to the end of output, as seen by the host.
    pub elapsed: Duration,
    /// Bytes of stdout and of stderr beyond the cap: counted, not kept.
    pub dropped: [u64; 2],
    /// Processes the command left behind when its own process exited (`PID command line`),
    /// killed then. A run ends when its process exits, not when its last descendant closes
    /// the output.
    pub leftovers: Vec<String>,
}

impl Default for ExitOutcome {
    fn default() -> Self {
        ExitOutcome::Exited(0)
    }
}

/// A stream's bytes up to a cap; the rest is counted.
#[derive(Debug)]
pub(crate) struct Capped {
    pub(crate) kept: Vec<u8>,
    cap: usize,
    pub(crate) dropped: u64,
    /// The last bytes beyond the cap (for protocol lines written after the command's output).
    pub(crate) tail: Vec<u8>,
}

/// How many bytes beyond the cap are remembered in [`Capped::tail`].
const TAIL: usize = 64 * 1024;

impl Capped {
    pub(crate) fn new(cap: usize) -> Capped {
        Capped {
            kept: Vec::new(),
            cap,
            dropped: 0,
            tail: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len()).min(data.len());
        self.kept.extend_from_slice(&data[..room]);
        let rest = &data[room..];
        if rest.is_empty() {
            return;
        }
        self.dropped += rest.len() as u64;
        self.tail.extend_from_slice(rest);
        if self.tail.len() > TAIL {
            let cut = self.tail.len() - TAIL;
            self.tail.drain(..cut);
        }
    }
}

/// A fresh random token naming one command's processes (`ABA_RUN=<token>` in their
/// environment), so that what a command leaves behind can be found and killed.
pub(crate) fn run_token() -> String {
    crate::results::atomic::random_hex()
}

impl CommandOutput {
    /// stdout decoded lossily, for parsing text and for messages.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// stderr decoded lossily.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Why a transport could not run a command or move a file.
///
/// `ConnectionLost` is the one the engine treats specially: the machine may have rebooted, so it
/// reconnects and compares `boot_id` before deciding whether to retry the step or redo the point.
#[derive(Debug, Error)]
pub enum TransportError {
    /// No connection could be made (refused, unreachable, handshake or login failed in time).
    #[error("cannot connect to {target}: {reason}")]
    Connect {
        /// `user@host:port` or `local`.
        target: String,
        /// What went wrong, in words.
        reason: String,
    },
    /// The target's host key is unknown or differs from the pinned one. Never retried.
    #[error("host key of {target} is not trusted: {reason}")]
    HostKey {
        /// `host:port`.
        target: String,
        /// Fingerprint seen and what to do about it.
        reason: String,
    },
    /// Authentication was refused for every identity that was tried.
    #[error("login to {target} as {user} refused: {reason}")]
    Auth {
        /// `host:port`.
        target: String,
        /// User name.
        user: String,
        /// Identities tried and the last error.
        reason: String,
    },
    /// The connection died while a command or copy was in flight (peer gone, reset, keepalive
    /// unanswered). The command's fate is unknown.
    #[error("connection to {target} lost: {reason}")]
    ConnectionLost {
        /// `user@host:port`.
        target: String,
        /// What was observed.
        reason: String,
    },
    /// A file could not be copied.
    #[error("cannot copy {path} on {target}: {reason}")]
    Copy {
        /// Remote path.
        path: String,
        /// `user@host:port` or `local`.
        target: String,
        /// What went wrong.
        reason: String,
    },
    /// An interrupt (Ctrl-C, SIGTERM) was requested; the command's process group was killed.
    #[error("interrupted while running a command on {target}")]
    Interrupted {
        /// `user@host:port` or `local`.
        target: String,
    },
    /// A local I/O error (spawning a process, reading a key file, …).
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl TransportError {
    /// True when the machine may simply be gone (rebooting, crashed, network): worth a
    /// reconnect and a `boot_id` check. Host-key and auth errors are never transient.
    pub fn is_connection_lost(&self) -> bool {
        matches!(self, TransportError::ConnectionLost { .. })
    }
}

/// A machine the engine can drive.
///
/// Commands are POSIX shell text run by `sh -c` on the machine; the caller quotes every value it
/// interpolates (see `crate::target::quote`).
pub trait Transport: Send {
    /// Short human name for messages: `root@127.0.0.1:10022`, `local`.
    fn describe(&self) -> String;

    /// Runs `command` and waits for it, at most `timeout`. On timeout the command's process
    /// group is killed and the outcome is [`ExitOutcome::TimedOut`] (not an error). Keeps at
    /// most [`DEFAULT_MAX_OUTPUT`] bytes of each stream.
    fn exec(&mut self, command: &str, timeout: Duration) -> Result<CommandOutput, TransportError> {
        self.exec_capped(command, timeout, DEFAULT_MAX_OUTPUT)
    }

    /// [`Transport::exec`] keeping at most `max_output` bytes of each stream (the rest is
    /// counted in [`CommandOutput::dropped`]). The run ends when the command's own process
    /// exits; processes it left behind are killed and named in [`CommandOutput::leftovers`].
    fn exec_capped(
        &mut self,
        command: &str,
        timeout: Duration,
        max_output: usize,
    ) -> Result<CommandOutput, TransportError>;

    /// Runs one workload run (a warm-up or a sample): [`Transport::exec_capped`]'s contract,
    /// through the quietest and cheapest path the transport has (over SSH, the persistent
    /// runner: no session, no login shell per run).
    fn run_workload(
        &mut self,
        command: &str,
        timeout: Duration,
        max_output: usize,
    ) -> Result<CommandOutput, TransportError> {
        self.exec_capped(command, timeout, max_output)
    }

    /// Keeps aba's own processes on the target (the persistent runner and the SSH session
    /// that carries it) off `cpus`, the CPUs the recipe pins workloads to, as far as the
    /// target's `runner_cpus` allows; what fails is said through [`Transport::take_notice`].
    /// Transports without processes of their own on the target ignore it.
    fn keep_off_cpus(&mut self, cpus: &CpuSet) {
        let _ = cpus;
    }

    /// Something the transport decided that the campaign should record once (the runner
    /// could not start and runs go through the exec path); `None` when there is nothing new.
    fn take_notice(&mut self) -> Option<String> {
        None
    }

    /// Writes `data` to `remote_path` with permission bits `mode`, replacing any old file.
    fn upload(&mut self, data: &[u8], remote_path: &str, mode: u32) -> Result<(), TransportError>;

    /// Reads the whole file at `remote_path`.
    fn download(&mut self, remote_path: &str) -> Result<Vec<u8>, TransportError>;

    /// Drops any existing connection without waiting on the peer, then connects afresh,
    /// retrying until `deadline`. A no-op for transports without connections.
    fn reconnect(&mut self, deadline: Instant) -> Result<(), TransportError>;

    /// Drops the connection at once, without waiting on a peer that may be gone.
    fn disconnect(&mut self);
}
