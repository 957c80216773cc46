//! Finding the SSH server fast when a machine comes back: TCP probes side by side until one
//! brings the server's first bytes (its banner), so that the handshake starts on a connection
//! that is known to reach sshd.
//!
//! A machine that reboots or kexecs is silent for a while, and a connection attempt made then
//! waits on a retransmission timer, not on the machine: on bare metal the kernel repeats the
//! unanswered SYN after 1 s, 3 s, …; QEMU's user network accepts the connection at once and
//! repeats the SYN to the guest after 3 s, 9 s, … (measured in the lab: an attempt made while
//! the guest was down sat idle for up to 2 s after sshd listened, until the 5 s handshake limit
//! ran out). So the first probe (the anchor) waits for a banner up to the whole limit, and while
//! none has come a new probe starts every [`HEDGE`]; at most [`MAX_HEDGES`] of them live beside
//! the anchor (the oldest goes first). A fresh probe reaches sshd as soon as it listens. A probe
//! that is refused or reset (the machine is up, sshd is not) is dropped at once. A server that
//! answers within [`HEDGE`], the usual case, costs exactly one connection, as before.
//!
//! Dropped probes cost a machine nothing on real networks (a late SYN-ACK meets a reset). QEMU's
//! user network, which cannot tell a closed probe from a pending one, still delivers them to the
//! guest later: they show up as `Connection closed … [preauth]` in the guest's sshd log.

use std::{
    io::ErrorKind,
    net::{SocketAddr, TcpStream},
    os::fd::{AsRawFd, FromRawFd, OwnedFd},
    time::{Duration, Instant},
};

/// How long a probe may wait without a banner before another one starts beside it, early in
/// a wait. The interval grows with the wait (a sixteenth of it, up to [`MAX_HEDGE`]): a
/// machine that has been away for a minute is not caught 250 ms sooner for 240 more probes.
pub(crate) const HEDGE: Duration = Duration::from_millis(250);

/// The longest interval between probes.
const MAX_HEDGE: Duration = Duration::from_secs(2);

/// The interval between probes after waiting `waited` for the server.
fn hedge_after(waited: Duration) -> Duration {
    (waited / 16).clamp(HEDGE, MAX_HEDGE)
}

/// Probes that may live beside the anchor.
const MAX_HEDGES: usize = 3;

/// Probes one wait for a server may make in all. Each probe QEMU's user network accepted while
/// the guest was down still reaches the guest's sshd once it listens (a `Connection closed …
/// [preauth]` line each), and on a loaded target every one of them costs sshd a fork: a long
/// wait must not become a flood. With the interval growing to [`MAX_HEDGE`], 48 probes cover
/// a minute and a half of waiting; after that the anchor alone waits, renewed when it dies.
const MAX_PROBES: usize = 48;

/// One wait for a server, across the connection tries the caller makes.
#[derive(Debug)]
pub(crate) struct Wait {
    /// When the wait began: it sets the interval between probes.
    pub(crate) since: Instant,
    /// Probes made so far.
    pub(crate) probes: usize,
    /// A banner came in an earlier try: sshd runs. Later tries open one connection at a time
    /// and give the handshake more time, instead of adding connections to a slow server.
    pub(crate) server_seen: bool,
    /// Handshakes that failed after a banner.
    pub(crate) slow_handshakes: u32,
}

impl Wait {
    /// A wait that began at `since`.
    pub(crate) fn new(since: Instant) -> Wait {
        Wait {
            since,
            probes: 0,
            server_seen: false,
            slow_handshakes: 0,
        }
    }

    /// The handshake limit for the next try: `base`, doubled for every handshake that failed
    /// after a banner (a loaded sshd is slow, not gone), at most a minute.
    pub(crate) fn handshake_limit(&self, base: Duration) -> Duration {
        let factor = 1u32 << self.slow_handshakes.min(4);
        (base * factor).min(Duration::from_secs(60).max(base))
    }

    /// Whether another probe may start beside the ones that live.
    fn may_hedge(&self) -> bool {
        !self.server_seen && self.probes < MAX_PROBES
    }
}

enum State {
    /// The TCP handshake is under way (non-blocking connect).
    Connecting,
    /// Connected; waiting for the first byte.
    Connected,
}

struct Probe {
    socket: OwnedFd,
    addr: SocketAddr,
    started: Instant,
    state: State,
}

/// Opens probes to `addrs` (in turn) until one receives data, and returns that connection
/// (nothing read from it yet). A probe gets `connect_limit` to connect; the anchor gets the
/// whole `limit` for its banner. `wait` carries the caller's wait for this server across
/// tries: when it began (which sets the interval between probes), how many probes it made,
/// and whether a banner was already seen (then no probe starts beside the anchor). Fails when
/// `limit` passes without a banner, with the last error seen, and says how many probes were
/// made.
pub(crate) fn first_banner(
    addrs: &[SocketAddr],
    connect_limit: Duration,
    limit: Duration,
    wait: &mut Wait,
) -> Result<TcpStream, String> {
    let waiting_since = wait.since;
    if addrs.is_empty() {
        return Err("no address".into());
    }
    let started = Instant::now();
    let end = started + limit;
    let mut anchor: Option<Probe> = None;
    let mut hedges: Vec<Probe> = Vec::new();
    let mut made = 0usize;
    let mut last_error: Option<String> = None;
    let mut next_start = started;
    loop {
        let now = Instant::now();
        let may_start = anchor.is_none() || wait.may_hedge();
        if now >= next_start && now < end && may_start {
            let addr = addrs[made % addrs.len()];
            made += 1;
            wait.probes += 1;
            match start(addr) {
                Ok(probe) => {
                    if anchor.is_none() {
                        anchor = Some(probe);
                    } else {
                        if hedges.len() >= MAX_HEDGES {
                            hedges.remove(0);
                        }
                        hedges.push(probe);
                    }
                }
                Err(e) => last_error = Some(format!("{addr}: {e}")),
            }
            next_start = now + hedge_after(now.saturating_duration_since(waiting_since));
        }
        // Drop what is dead or out of time, and see whether anyone got a banner.
        let mut live: Vec<&mut Probe> = anchor.iter_mut().chain(hedges.iter_mut()).collect();
        let mut fds: Vec<libc::pollfd> = live
            .iter()
            .map(|p| libc::pollfd {
                fd: p.socket.as_raw_fd(),
                events: match p.state {
                    State::Connecting => libc::POLLOUT,
                    State::Connected => libc::POLLIN,
                },
                revents: 0,
            })
            .collect();
        let wake = next_start.min(end);
        let timeout = wake.saturating_duration_since(Instant::now());
        let timeout = i32::try_from(timeout.as_millis().max(1)).unwrap_or(i32::MAX);
        if fds.is_empty() {
            std::thread::sleep(wake.saturating_duration_since(Instant::now()));
        } else {
            // SAFETY: `fds` is a valid array of pollfd for the duration of the call; every fd
            // is an open socket owned by a probe that outlives the call.
            let _ = unsafe {
                libc::poll(
                    fds.as_mut_ptr(),
                    libc::nfds_t::try_from(fds.len()).unwrap_or(0),
                    timeout,
                )
            };
        }
        let now = Instant::now();
        let mut dead = vec![false; live.len()];
        for (i, (probe, fd)) in live.iter_mut().zip(&fds).enumerate() {
            if fd.revents != 0 {
                match probe.state {
                    State::Connecting => match socket_error(&probe.socket) {
                        Ok(()) => probe.state = State::Connected,
                        Err(e) => {
                            last_error = Some(format!("{}: {e}", probe.addr));
                            dead[i] = true;
                        }
                    },
                    State::Connected => match peek(&probe.socket) {
                        Ok(None) => {}
                        Ok(Some(true)) => {
                            wait.server_seen = true;
                            let winner = probe.socket.try_clone().map_err(|e| e.to_string())?;
                            set_blocking(&winner).map_err(|e| e.to_string())?;
                            return Ok(TcpStream::from(winner));
                        }
                        Ok(Some(false)) => {
                            last_error =
                                Some(format!("{}: connection closed by the server", probe.addr));
                            dead[i] = true;
                        }
                        Err(e) => {
                            last_error = Some(format!("{}: {e}", probe.addr));
                            dead[i] = true;
                        }
                    },
                }
            } else if matches!(probe.state, State::Connecting)
                && now >= probe.started + connect_limit
            {
                last_error = Some(format!(
                    "{}: no TCP connection within {connect_limit:.1?}",
                    probe.addr
                ));
                dead[i] = true;
            }
        }
        drop(live);
        let anchor_dead = anchor.is_some() && dead[0];
        let offset = usize::from(anchor.is_some());
        let mut i = 0;
        hedges.retain(|_| {
            let keep = !dead[offset + i];
            i += 1;
            keep
        });
        if anchor_dead {
            // The oldest hedge, if any, waits on as the anchor.
            anchor = (!hedges.is_empty()).then(|| hedges.remove(0));
        }
        if now >= end {
            let waited = started.elapsed();
            return Err(match last_error {
                Some(e) => format!("{e} ({made} probes in {waited:.1?})"),
                None => format!(
                    "SSH handshake not started: no banner within {waited:.1?} ({made} probes)"
                ),
            });
        }
    }
}

/// Starts a non-blocking connect to `addr`.
fn start(addr: SocketAddr) -> std::io::Result<Probe> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: socket(2) with constant arguments; the result is checked before use.
    let fd = unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket that nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    let rc = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::sa_family_t::try_from(libc::AF_INET).unwrap_or_default(),
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: a valid sockaddr_in and its exact size.
            unsafe {
                libc::connect(
                    fd,
                    (&raw const sin).cast(),
                    libc::socklen_t::try_from(std::mem::size_of::<libc::sockaddr_in>())
                        .unwrap_or(0),
                )
            }
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::sa_family_t::try_from(libc::AF_INET6).unwrap_or_default(),
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: a valid sockaddr_in6 and its exact size.
            unsafe {
                libc::connect(
                    fd,
                    (&raw const sin6).cast(),
                    libc::socklen_t::try_from(std::mem::size_of::<libc::sockaddr_in6>())
                        .unwrap_or(0),
                )
            }
        }
    };
    let state = if rc == 0 {
        State::Connected
    } else {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(err);
        }
        State::Connecting
    };
    Ok(Probe {
        socket,
        addr,
        started: Instant::now(),
        state,
    })
}

/// The outcome of a non-blocking connect (`SO_ERROR`).
fn socket_error(socket: &OwnedFd) -> std::io::Result<()> {
    let mut value: i32 = 0;
    let mut len = libc::socklen_t::try_from(std::mem::size_of::<i32>()).unwrap_or(0);
    // SAFETY: valid pointers to an i32 and its size for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&raw mut value).cast(),
            &raw mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if value != 0 {
        return Err(std::io::Error::from_raw_os_error(value));
    }
    Ok(())
}

/// `Some(true)` when data is waiting (not consumed), `Some(false)` at end of stream, `None`
/// when nothing is there yet.
fn peek(socket: &OwnedFd) -> std::io::Result<Option<bool>> {
    let mut byte = [0u8; 1];
    // SAFETY: a one-byte buffer that lives for the duration of the call.
    let n = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            byte.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match n {
        0 => Ok(Some(false)),
        n if n > 0 => Ok(Some(true)),
        _ => {
            let err = std::io::Error::last_os_error();
            if err.kind() == ErrorKind::WouldBlock {
                Ok(None)
            } else {
                Err(err)
            }
        }
    }
}

fn set_blocking(socket: &OwnedFd) -> std::io::Result<()> {
    let fd = socket.as_raw_fd();
    // SAFETY: fcntl on an open fd we own; flags are read before being changed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{
        io::Write,
        net::{SocketAddr, TcpListener},
        thread,
        time::{Duration, Instant},
    };

    use super::{HEDGE, MAX_HEDGE, MAX_PROBES, Wait, first_banner, hedge_after};

    /// A server that holds its first connections silently (as QEMU's user network does while
    /// the guest is down) and greets the later ones: a later probe wins, and quickly.
    #[test]
    fn a_fresh_probe_wins_over_a_held_one() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = thread::spawn(move || {
            let mut held = Vec::new();
            for (i, stream) in listener.incoming().enumerate() {
                let mut stream = stream.expect("accept");
                if i < 2 {
                    held.push(stream);
                } else {
                    stream.write_all(b"SSH-2.0-test\r\n").expect("greet");
                    held.push(stream);
                    return held.len();
                }
            }
            0
        });
        let started = Instant::now();
        let mut wait = Wait::new(Instant::now());
        let stream = first_banner(
            &[addr],
            Duration::from_secs(2),
            Duration::from_secs(5),
            &mut wait,
        )
        .expect("a banner");
        assert!(wait.server_seen);
        let took = started.elapsed();
        assert!(took >= 2 * HEDGE && took < 4 * HEDGE, "took {took:?}");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stream), &mut line).expect("read");
        assert_eq!(line, "SSH-2.0-test\r\n");
        assert_eq!(server.join().expect("server"), 3);
    }

    #[test]
    fn probes_thin_out_as_the_wait_grows() {
        assert_eq!(hedge_after(Duration::ZERO), HEDGE);
        assert_eq!(hedge_after(Duration::from_secs(4)), HEDGE);
        assert_eq!(hedge_after(Duration::from_secs(16)), Duration::from_secs(1));
        assert_eq!(hedge_after(Duration::from_secs(600)), MAX_HEDGE);
    }

    /// Nobody listening: refused probes, and an error naming the address, within the limit.
    #[test]
    fn refused_probes_fail_within_the_limit() {
        let addr: SocketAddr = {
            let l = TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr")
        };
        let started = Instant::now();
        let err = first_banner(
            &[addr],
            Duration::from_secs(1),
            Duration::from_millis(600),
            &mut Wait::new(Instant::now()),
        )
        .expect_err("nothing listens");
        assert!(started.elapsed() < Duration::from_secs(1), "{err}");
        assert!(err.contains("refused") && err.contains("probes"), "{err}");
    }

    /// A server that holds every connection silently (a guest that is down behind QEMU's user
    /// network): a wait makes at most MAX_PROBES probes, and after a banner was seen one
    /// connection at a time, however long it lasts.
    #[test]
    fn a_long_wait_is_bounded_and_a_seen_server_gets_one_probe() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let counter = thread::spawn(move || {
            listener.set_nonblocking(true).expect("nonblocking");
            let mut held = Vec::new();
            let until = Instant::now() + Duration::from_secs(4);
            while Instant::now() < until {
                match listener.accept() {
                    Ok((s, _)) => held.push(s),
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
            held.len()
        });
        // As if the wait had gone on for long already, with most probes made.
        let mut wait = Wait::new(Instant::now());
        wait.probes = MAX_PROBES - 2;
        let _ = first_banner(
            &[addr],
            Duration::from_secs(1),
            Duration::from_secs(2),
            &mut wait,
        );
        assert_eq!(wait.probes, MAX_PROBES, "no probe beyond the bound");
        let mut seen = Wait::new(Instant::now());
        seen.server_seen = true;
        let _ = first_banner(
            &[addr],
            Duration::from_secs(1),
            Duration::from_secs(1),
            &mut seen,
        );
        assert_eq!(
            seen.probes, 1,
            "a server that spoke gets one connection at a time"
        );
        assert_eq!(counter.join().expect("counter"), 3);
        assert_eq!(
            seen.handshake_limit(Duration::from_secs(5)),
            Duration::from_secs(5)
        );
        seen.slow_handshakes = 2;
        assert_eq!(
            seen.handshake_limit(Duration::from_secs(5)),
            Duration::from_secs(20)
        );
        seen.slow_handshakes = 9;
        assert_eq!(
            seen.handshake_limit(Duration::from_secs(5)),
            Duration::from_secs(60)
        );
    }
}
