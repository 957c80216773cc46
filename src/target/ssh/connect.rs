//! One connection attempt: TCP with keepalive and `TCP_USER_TIMEOUT`, SSH handshake under a
//! per-try limit, host-key verification before anything is sent to the server, then public-key
//! login (key files, then every agent identity). Retrying is the caller's business.
//!
//! A finished [`Connection`] is switched to non-blocking mode for good: the exec loop needs it,
//! and a non-blocking session can be dropped without waiting on a peer that vanished.

use std::{
    net::{SocketAddr, TcpStream, ToSocketAddrs},
    os::fd::{AsRawFd, RawFd},
    time::{Duration, Instant},
};

use ssh2::Session;

use crate::target::{
    ssh::{host_key, probe, target::Resolved},
    transport::TransportError,
};

/// A logged-in session with its socket.
pub(crate) struct Connection {
    pub(crate) session: Session,
    pub(crate) fd: RawFd,
    pub(crate) local: SocketAddr,
    pub(crate) fingerprint: String,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Never wait on the peer here: it may be gone. Non-blocking makes libssh2 give up on
        // the close handshake at once (a blocking drop waits `set_timeout`, or forever).
        self.session.set_blocking(false);
        let _ = self.session.disconnect(None, "aba disconnecting", None);
    }
}

/// The shortest per-step limit a late try still gets, so the last try before a deadline can
/// finish on a healthy network.
const MIN_STEP: Duration = Duration::from_millis(300);

/// Connects, verifies the host key and logs in, each step bounded; `deadline` shortens the
/// per-try limits but a try always gets [`MIN_STEP`] per step. `waiting_since` is when the
/// caller started trying to reach the server (it paces the probes, see `probe`).
pub(crate) fn connect_once(
    t: &Resolved,
    deadline: Instant,
    wait: &mut probe::Wait,
) -> Result<Connection, TransportError> {
    let cap = |limit: Duration| {
        limit.min(
            deadline
                .saturating_duration_since(Instant::now())
                .max(MIN_STEP),
        )
    };
    let fail = |reason: String| TransportError::Connect {
        target: t.describe(),
        reason,
    };
    let addrs: Vec<SocketAddr> = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| fail(format!("cannot resolve {}: {e}", t.host)))?
        .collect();
    // Probes side by side until sshd speaks (see `probe`): a machine coming back is caught
    // when it listens, not when a retransmission timer fires.
    let handshake_limit = cap(wait.handshake_limit(t.handshake_timeout));
    let tcp = probe::first_banner(&addrs, cap(t.connect_timeout), handshake_limit, wait)
        .map_err(|reason| fail(format!("{reason}; sshd may not be up yet")))?;
    tune_socket(&tcp, t).map_err(|e| TransportError::Io {
        context: format!("cannot set socket options for {}", t.describe()),
        source: e,
    })?;
    let fd = tcp.as_raw_fd();
    let local = tcp
        .local_addr()
        .map_err(|e| fail(format!("socket has no local address: {e}")))?;

    let mut session = Session::new().map_err(|e| fail(format!("cannot create session: {e}")))?;
    session.set_timeout(millis(handshake_limit));
    session.set_tcp_stream(tcp);
    if let Err(e) = session.handshake() {
        session.set_blocking(false);
        // sshd answered but did not finish in time: it is loaded, not gone.
        wait.slow_handshakes += 1;
        return Err(fail(format!(
            "SSH handshake failed within {handshake_limit:.1?} ({}); sshd may not be up yet",
            e.message()
        )));
    }
    // Trust first: nothing, not even a user name, goes to a server that is not the target.
    if let Err(reason) = host_key::verify(&session, &t.policy, &t.host, t.port) {
        session.set_blocking(false);
        return Err(TransportError::HostKey {
            target: t.host_port(),
            reason,
        });
    }
    let fingerprint = session
        .host_key()
        .map(|(blob, _)| host_key::fingerprint(blob))
        .unwrap_or_default();
    session.set_timeout(millis(t.call_timeout));
    if let Err(reason) = authenticate(&session, t) {
        session.set_blocking(false);
        return Err(TransportError::Auth {
            target: t.host_port(),
            user: t.user.clone(),
            reason,
        });
    }
    // The SSH keepalive only proves that sshd still answers (the kernel's TCP probes prove
    // the machine is alive, without waking a process on it): see `run::ssh_keepalive` and
    // `run::sshd_silence_limit`.
    let interval = super::run::ssh_keepalive(t.dead_after).as_secs();
    session.set_keepalive(true, u32::try_from(interval).unwrap_or(u32::MAX).max(1));
    session.set_blocking(false);
    Ok(Connection {
        session,
        fd,
        local,
        fingerprint,
    })
}

fn millis(limit: Duration) -> u32 {
    u32::try_from(limit.as_millis()).unwrap_or(u32::MAX).max(1)
}

/// Key files first (the inventory's explicit choice), then each agent identity in turn:
/// `userauth_agent` would try only the first one.
fn authenticate(session: &Session, t: &Resolved) -> Result<(), String> {
    let mut tried = Vec::new();
    for key in &t.identities {
        if !key.is_file() {
            tried.push(format!("key file {}: not found", key.display()));
            continue;
        }
        match session.userauth_pubkey_file(&t.user, None, key, None) {
            Ok(()) if session.authenticated() => return Ok(()),
            Ok(()) => tried.push(format!("key file {}: not accepted", key.display())),
            Err(e) => {
                let hint = if e.message().contains("passphrase") || e.message().contains("extract")
                {
                    " (a passphrase-protected key must be loaded into ssh-agent)"
                } else {
                    ""
                };
                tried.push(format!("key file {}: {}{hint}", key.display(), e.message()));
            }
        }
    }
    if t.use_agent {
        match agent_login(session, t, &mut tried) {
            Ok(()) => return Ok(()),
            Err(reason) => tried.push(reason),
        }
    }
    if tried.is_empty() {
        return Err("no identity to try: set `identity` or `agent = true` for this target".into());
    }
    Err(format!("tried {}", tried.join("; ")))
}

fn agent_login(session: &Session, t: &Resolved, tried: &mut Vec<String>) -> Result<(), String> {
    let socket = t
        .agent_socket
        .as_ref()
        .map_or_else(|| "$SSH_AUTH_SOCK".to_owned(), |p| p.display().to_string());
    let mut agent = session
        .agent()
        .map_err(|e| format!("ssh-agent: {}", e.message()))?;
    if let Some(path) = &t.agent_socket {
        agent
            .set_identity_path(path)
            .map_err(|e| format!("ssh-agent at {socket}: {}", e.message()))?;
    }
    agent
        .connect()
        .map_err(|e| format!("ssh-agent at {socket}: cannot connect ({})", e.message()))?;
    let result = (|| {
        agent
            .list_identities()
            .map_err(|e| format!("ssh-agent at {socket}: cannot list keys ({})", e.message()))?;
        let identities = agent
            .identities()
            .map_err(|e| format!("ssh-agent at {socket}: cannot list keys ({})", e.message()))?;
        if identities.is_empty() {
            return Err(format!("ssh-agent at {socket}: holds no keys"));
        }
        for identity in &identities {
            match agent.userauth(&t.user, identity) {
                Ok(()) if session.authenticated() => return Ok(()),
                Ok(()) => tried.push(format!("agent key {:?}: not accepted", identity.comment())),
                Err(e) => tried.push(format!(
                    "agent key {:?}: {}",
                    identity.comment(),
                    e.message()
                )),
            }
        }
        Err(format!(
            "ssh-agent at {socket}: none of its {} key(s) accepted",
            identities.len()
        ))
    })();
    let _ = agent.disconnect();
    result
}

/// Lets the kernel kill a connection whose peer vanished without FIN or RST (a kernel that
/// kexec'd away, a pulled cable) even inside a blocking libssh2 call: TCP keepalive probes for
/// idle sockets, `TCP_USER_TIMEOUT` for unacknowledged data. The probes are also how a run
/// in flight learns that the machine is alive ([`super::run`]): the target's kernel answers
/// them itself, so a silent sample costs one probe and one answer per `keepalive` of idle
/// and no wake-up of any process on the target.
fn tune_socket(tcp: &TcpStream, t: &Resolved) -> std::io::Result<()> {
    tcp.set_nodelay(true)?;
    let fd = tcp.as_raw_fd();
    let secs = |d: Duration| i32::try_from(d.as_secs().max(1)).unwrap_or(i32::MAX);
    set_int(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_KEEPIDLE,
        secs(t.keepalive_interval),
    )?;
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 1)?;
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, secs(t.dead_after))?;
    let user_timeout = u32::try_from((t.dead_after * 2).as_millis()).unwrap_or(u32::MAX);
    set_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_USER_TIMEOUT,
        i32::try_from(user_timeout).unwrap_or(i32::MAX),
    )
}

fn set_int(fd: RawFd, level: i32, name: i32, value: i32) -> std::io::Result<()> {
    // SAFETY: `fd` is an open socket owned by the caller's TcpStream; the option value is a
    // live i32 whose exact size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&raw const value).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
