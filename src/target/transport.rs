//! The seam between the campaign engine and a machine: run a shell command with a deadline,
//! copy a file there or back, and reconnect after the machine went away.
//!
//! Every transport (this machine, SSH) gives the same guarantees, so the engine never needs to
//! know which one it drives: a command runs in its own process group, the whole group dies when
//! its deadline passes or when its connection goes away, and stdout and stderr are captured
//! separately as bytes. The engine decides what a failure means; a transport only reports it.

use std::time::{Duration, Instant};

use thiserror::Error;

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

/// What a finished command produced. Bytes stay bytes; decode lossily only for display.
#[derive(Clone, Debug)]
pub struct CommandOutput {
    /// How the command ended.
    pub outcome: ExitOutcome,
    /// Everything the command wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything the command wrote to stderr.
    pub stderr: Vec<u8>,
    /// Wall time from start to the end of output, as seen by the host.
    pub elapsed: Duration,
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
pub trait Transport {
    /// Short human name for messages: `root@127.0.0.1:10022`, `local`.
    fn describe(&self) -> String;

    /// Runs `command` and waits for it, at most `timeout`. On timeout the command's process
    /// group is killed and the outcome is [`ExitOutcome::TimedOut`] (not an error).
    fn exec(&mut self, command: &str, timeout: Duration) -> Result<CommandOutput, TransportError>;

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
