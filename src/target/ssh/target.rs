//! What the target inventory says about an SSH machine ([`SshTarget`]), and how it is turned
//! into the concrete address, user, keys and trust policy one connection uses, with
//! `~/.ssh/config` filling only what the inventory left open. No I/O but reading that file.

use std::{env, path::PathBuf, time::Duration};

use crate::target::{
    cpu_set::RunnerCpus,
    ssh::{
        config,
        host_key::{self, HostKeyPolicy},
    },
    transport::TransportError,
};

/// An SSH target as the inventory describes it.
///
/// `host` may be an alias from the OpenSSH client config; every `Option` left `None` is taken
/// from that config (for the alias), then from OpenSSH's defaults. Values set here always win.
/// The timeouts are chosen for a LAN full of benchmark machines that reboot overnight.
#[derive(Clone, Debug)]
pub struct SshTarget {
    /// Host name, address or `~/.ssh/config` alias.
    pub host: String,
    /// TCP port; config `Port`, then 22.
    pub port: Option<u16>,
    /// Remote user; config `User`, then `root` (benchmark targets are driven as root).
    pub user: Option<String>,
    /// Private key file (passphrase-less; keep protected keys in the agent). When `None`, the
    /// config's `IdentityFile`s are tried, else (without `use_agent`) `~/.ssh/id_{ed25519,ecdsa,rsa}`.
    pub identity: Option<PathBuf>,
    /// Also try every identity of the ssh-agent, after the key files.
    pub use_agent: bool,
    /// Agent socket; `None` means `$SSH_AUTH_SOCK`.
    pub agent_socket: Option<PathBuf>,
    /// known_hosts file to trust; config `UserKnownHostsFile`, then `~/.ssh/known_hosts`.
    /// Ignored when `host_key_sha256` is set.
    pub known_hosts: Option<PathBuf>,
    /// Pinned host key fingerprint as `ssh-keygen -lf` prints it (`SHA256:…`). When set, it is
    /// the only key accepted.
    pub host_key_sha256: Option<String>,
    /// OpenSSH client config to read aliases from; `None` means `~/.ssh/config` if it exists.
    /// Point it at `/dev/null` to ignore any config.
    pub ssh_config: Option<PathBuf>,
    /// TCP connect limit for one try.
    pub connect_timeout: Duration,
    /// SSH banner + key exchange limit for one try. A port that accepts but never speaks
    /// (QEMU while the guest boots) costs this much per try.
    pub handshake_timeout: Duration,
    /// Limit for each remaining blocking step (authentication). Never zero: libssh2 reads 0 as
    /// "wait forever".
    pub call_timeout: Duration,
    /// How often to send an SSH keepalive while waiting on the peer (libssh2 rounds 1 s up
    /// to 2 s).
    pub keepalive_interval: Duration,
    /// No byte from the peer for this long while keepalives go out means the peer is dead
    /// (frozen, crashed, rebooted), even if TCP still looks open. Raise it for targets that
    /// are loaded so hard that sshd cannot answer within it.
    pub dead_after: Duration,
    /// Whole-transfer limit for `upload` and `download`.
    pub copy_timeout: Duration,
    /// Where the persistent runner and its sshd session may run (the inventory's
    /// `runner_cpus`): by default off every CPU the recipe pins a workload to.
    pub runner_cpus: RunnerCpus,
}

impl SshTarget {
    /// A target with every optional value open and the default timeouts: connect 2 s,
    /// handshake 5 s, blocking calls 10 s, keepalive 2 s, dead after 5 s, copies 120 s.
    pub fn new(host: impl Into<String>) -> Self {
        SshTarget {
            host: host.into(),
            port: None,
            user: None,
            identity: None,
            use_agent: false,
            agent_socket: None,
            known_hosts: None,
            host_key_sha256: None,
            ssh_config: None,
            connect_timeout: Duration::from_secs(2),
            handshake_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(10),
            keepalive_interval: Duration::from_secs(2),
            dead_after: Duration::from_secs(5),
            copy_timeout: Duration::from_secs(120),
            runner_cpus: RunnerCpus::Auto,
        }
    }

    /// Fills the open values from the config file and defaults, and checks the pin's syntax.
    pub(crate) fn resolve(&self) -> Result<Resolved, TransportError> {
        let home = env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
        let config_path = self.ssh_config.clone().or_else(|| {
            let default = home.join(".ssh/config");
            default.is_file().then_some(default)
        });
        let from_config = match &config_path {
            Some(path) => {
                config::resolve(path, &self.host, &home).map_err(|e| TransportError::Connect {
                    target: self.host.clone(),
                    reason: format!("unusable ssh config: {e}"),
                })?
            }
            None => config::HostConfig::default(),
        };
        let host = from_config.host_name.unwrap_or_else(|| self.host.clone());
        let port = self.port.or(from_config.port).unwrap_or(22);
        let user = self
            .user
            .clone()
            .or(from_config.user)
            .unwrap_or_else(|| "root".into());
        let identities = match &self.identity {
            Some(file) => vec![file.clone()],
            None if !from_config.identity_files.is_empty() => from_config.identity_files,
            None if self.use_agent => Vec::new(),
            None => ["id_ed25519", "id_ecdsa", "id_rsa"]
                .iter()
                .map(|name| home.join(".ssh").join(name))
                .filter(|path| path.is_file())
                .collect(),
        };
        let policy = match &self.host_key_sha256 {
            Some(pin) => HostKeyPolicy::Pinned(host_key::normalize_pin(pin).map_err(|reason| {
                TransportError::HostKey {
                    target: format!("{host}:{port}"),
                    reason,
                }
            })?),
            None => HostKeyPolicy::KnownHosts(
                self.known_hosts
                    .clone()
                    .or(from_config.user_known_hosts_file)
                    .unwrap_or_else(|| home.join(".ssh/known_hosts")),
            ),
        };
        Ok(Resolved {
            alias: self.host.clone(),
            host,
            port,
            user,
            identities,
            use_agent: self.use_agent,
            agent_socket: self.agent_socket.clone(),
            policy,
            connect_timeout: nonzero(self.connect_timeout),
            handshake_timeout: nonzero(self.handshake_timeout),
            call_timeout: nonzero(self.call_timeout),
            keepalive_interval: self.keepalive_interval.max(Duration::from_secs(1)),
            dead_after: nonzero(self.dead_after),
            copy_timeout: nonzero(self.copy_timeout),
            runner_cpus: self.runner_cpus.clone(),
        })
    }
}

/// Zero would mean "no limit" to libssh2; the smallest limit that still means something.
fn nonzero(limit: Duration) -> Duration {
    limit.max(Duration::from_millis(100))
}

/// One target with everything decided.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) alias: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) identities: Vec<PathBuf>,
    pub(crate) use_agent: bool,
    pub(crate) agent_socket: Option<PathBuf>,
    pub(crate) policy: HostKeyPolicy,
    pub(crate) connect_timeout: Duration,
    pub(crate) handshake_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) keepalive_interval: Duration,
    pub(crate) dead_after: Duration,
    pub(crate) copy_timeout: Duration,
    pub(crate) runner_cpus: RunnerCpus,
}

impl Resolved {
    /// `user@host:port`, plus the alias when it differs: for every message.
    pub(crate) fn describe(&self) -> String {
        let base = format!("{}@{}", self.user, self.host_port());
        if self.alias == self.host {
            base
        } else {
            format!("{base} ({})", self.alias)
        }
    }

    /// `host:port` (IPv6 in brackets).
    pub(crate) fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{path::PathBuf, time::Duration};

    use super::SshTarget;
    use crate::target::ssh::host_key::HostKeyPolicy;

    fn with_config(text: &str) -> (tempfile::TempDir, SshTarget) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config");
        std::fs::write(&path, text).expect("write config");
        let mut target = SshTarget::new("bench-a");
        target.ssh_config = Some(path);
        (dir, target)
    }

    #[test]
    fn inventory_values_win_over_the_config() {
        let (_dir, mut target) = with_config(
            "Host bench-a\n HostName 10.0.0.5\n User cfguser\n Port 2222\n IdentityFile /k\n \
             UserKnownHostsFile /kh\n",
        );
        let from_config = target.resolve().expect("resolves");
        assert_eq!(from_config.host, "10.0.0.5");
        assert_eq!(from_config.user, "cfguser");
        assert_eq!(from_config.port, 2222);
        assert_eq!(from_config.identities, vec![PathBuf::from("/k")]);
        assert!(
            matches!(&from_config.policy, HostKeyPolicy::KnownHosts(p) if p == &PathBuf::from("/kh"))
        );
        assert_eq!(from_config.describe(), "cfguser@10.0.0.5:2222 (bench-a)");

        target.port = Some(22);
        target.user = Some("root".into());
        target.identity = Some("/mine".into());
        target.known_hosts = Some("/my_kh".into());
        let explicit = target.resolve().expect("resolves");
        assert_eq!((explicit.port, explicit.user.as_str()), (22, "root"));
        assert_eq!(explicit.identities, vec![PathBuf::from("/mine")]);
        assert!(
            matches!(&explicit.policy, HostKeyPolicy::KnownHosts(p) if p == &PathBuf::from("/my_kh"))
        );
    }

    #[test]
    fn pin_is_validated_and_wins() {
        let (_dir, mut target) = with_config("");
        target.host_key_sha256 = Some("SHA256:nope".into());
        let message = target.resolve().expect_err("bad pin").to_string();
        assert!(message.contains("not a SHA256 fingerprint"), "{message}");
        target.host_key_sha256 = Some(format!("SHA256:{}", "A".repeat(43)));
        assert!(matches!(
            target.resolve().expect("resolves").policy,
            HostKeyPolicy::Pinned(_)
        ));
    }

    #[test]
    fn config_errors_name_the_file_and_zero_timeouts_are_refused() {
        let (_dir, mut target) = with_config("Match all\n");
        let message = target.resolve().expect_err("Match").to_string();
        assert!(message.contains("config:1: `Match`"), "{message}");
        target.ssh_config = Some("/dev/null".into());
        target.call_timeout = Duration::ZERO;
        assert!(target.resolve().expect("resolves").call_timeout > Duration::ZERO);
    }
}
