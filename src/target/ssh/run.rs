//! One command on one channel, driven by a single non-blocking loop: stdout and stderr read
//! as they come (no window deadlock on big outputs), optional stdin data, a whole-command
//! deadline, and a dead-peer check that works even while the command is silent.
//!
//! The remote side of the process-group guarantee is [`wrap`]: every command runs in the
//! process group sshd made for its session, next to a watchdog that kills the whole group when
//! the channel's stdin reaches EOF. The host sends that EOF on deadline; sshd closes stdin when
//! the command exits or when the connection dies, so leftovers never outlive their command.
//! This module never decides what a failure means for the campaign.

use std::{
    io::{ErrorKind, Read, Write},
    os::fd::RawFd,
    time::{Duration, Instant},
};

use ssh2::{Channel, ErrorCode, Session};

use crate::{
    interrupt,
    target::{
        cpu_set::CpuSet,
        leftovers,
        quote::sh_quote,
        transport::{Capped, ExitOutcome},
    },
};

/// libssh2's "would block" (`LIBSSH2_ERROR_EAGAIN`).
pub(crate) const EAGAIN: i32 = -37;

/// How long the group gets to die (and the channel to close) after the kill request.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(3);

/// Longest sleep in `poll`, so keepalives and the liveness check keep their pace.
const TICK: Duration = Duration::from_millis(200);

/// Wraps `command` so that it and everything it starts die with the channel, and so that the
/// run ends when the command's own process exits.
///
/// sshd gives each non-pty session its own session and process group. The wrapper keeps the
/// channel's stdin as fd 3 and starts the command as `sh -c` in a session and process group of
/// its own (`setsid`, where the target has it), with `ABA_RUN=<token>` in its environment and
/// `/dev/null` as stdin (as with `ssh -n`). A watchdog in the background reads fd 3 until EOF
/// (with the `read` builtin: no extra exec) and then kills the command's group and its own:
/// the host sends that EOF on deadline, and sshd closes stdin when the connection dies, so
/// nothing outlives its command. When the command's process exits, the wrapper kills every
/// process that still carries the token (a daemon it started, a `setsid` child holding its
/// stdout open) and the rest of its group, reports each killed process on stderr as a marker
/// line the host takes out again ([`crate::target::leftovers`]), and exits with the command's
/// status (re-raising the signal that killed it). Only POSIX sh is used (dash, bash, busybox
/// ash); it costs two execs beyond the command (`setsid`, and `grep` over
/// `/proc/*/environ`).
///
/// With `cpus`, the command goes back to those CPUs (`taskset -c`) first: the sshd process
/// that forked this shell was moved off the CPUs workloads are pinned to
/// ([`super::runner::Runner::pin`]), and a command must not inherit that.
pub(crate) fn wrap(command: &str, token: &str, cpus: Option<&CpuSet>) -> String {
    let marker = leftovers::marker_prefix(token);
    let var = leftovers::RUN_VAR;
    let on = cpus.map_or_else(String::new, |cpus| format!("taskset -c {cpus} "));
    format!(
        "exec 3<&0 </dev/null; \
         if command -v setsid >/dev/null 2>&1; then {var}={token} setsid {on}sh -c {cmd} 3<&- & \
         else {var}={token} {on}sh -c {cmd} 3<&- & fi; p=$!; \
         {{ while read -r x; do :; done <&3; kill -s KILL -- -$p $p 0; }} >/dev/null 2>&1 & \
         wait $p 2>/dev/null; s=$?; \
         for f in $(grep -l -s -a -F {var}={token} /proc/[0-9]*/environ 2>/dev/null); do \
         q=${{f#/proc/}}; q=${{q%/environ}}; n=$(tr '\\000' ' ' < /proc/$q/cmdline 2>/dev/null); \
         kill -s KILL $q 2>/dev/null && printf '%s%s %s\\n' {marker} \"$q\" \"$n\" >&2; done; \
         kill -s KILL -- -$p 2>/dev/null; \
         if [ $s -gt 128 ] && [ $s -lt 193 ]; then kill -s $((s - 128)) $$ 2>/dev/null; fi; exit $s",
        cmd = sh_quote(command),
        marker = sh_quote(&marker),
    )
}

/// What a finished channel produced.
pub(crate) struct Finished {
    pub(crate) outcome: ExitOutcome,
    pub(crate) stdout: Capped,
    pub(crate) stderr: Capped,
    pub(crate) elapsed: Duration,
    /// An interrupt (Ctrl-C, SIGTERM) stopped the command; its group was killed.
    pub(crate) interrupted: bool,
}

/// The connection failed under a command; what had arrived is kept for the message.
pub(crate) struct Lost {
    pub(crate) reason: String,
    pub(crate) stderr: Vec<u8>,
}

/// Everything the loop needs from the connection.
pub(crate) struct Link<'a> {
    pub(crate) session: &'a Session,
    pub(crate) fd: RawFd,
    pub(crate) dead_after: Duration,
}

/// Runs `exec_text` (already wrapped as needed) until its channel closes or `deadline` passes.
/// With `input`, those bytes are its stdin, followed by EOF; without, stdin stays open (the
/// watchdog of [`wrap`] waits on it). On the deadline the channel's stdin gets EOF, which fires
/// the watchdog (or ends a `cat` reading the input), and the loop waits up to [`KILL_GRACE`]
/// for the channel to close. An interrupt ([`crate::interrupt`]) is handled like the deadline.
pub(crate) fn run(
    link: &Link<'_>,
    exec_text: &str,
    input: Option<&[u8]>,
    deadline: Instant,
    max_output: usize,
) -> Result<Finished, Lost> {
    let started = Instant::now();
    let mut waiter = Waiter {
        link,
        armed: started,
    };
    let lost = |reason: String| Lost {
        reason,
        stderr: Vec::new(),
    };
    let mut channel = match waiter.retry(deadline, || link.session.channel_session()) {
        Ok(channel) => channel,
        Err(Stop::Deadline) => return Ok(never_started(started, max_output)),
        Err(Stop::Lost(why)) => return Err(lost(format!("cannot open a channel: {why}"))),
    };
    match waiter.retry(deadline, || channel.exec(exec_text)) {
        Ok(()) => {}
        Err(Stop::Deadline) => {
            abandon(&mut waiter, &mut channel);
            return Ok(never_started(started, max_output));
        }
        Err(Stop::Lost(why)) => return Err(lost(format!("cannot start the command: {why}"))),
    }
    let mut pump = Pump {
        stdout: Capped::new(max_output),
        stderr: Capped::new(max_output),
        written: 0,
        eof_sent: false,
        remote_eof: false,
        killing_until: None,
        interrupted: false,
    };
    match pump.drive(&mut waiter, &mut channel, input, deadline) {
        Ok(closed) => {
            let elapsed = started.elapsed();
            let outcome = if pump.killing_until.is_some() {
                ExitOutcome::TimedOut
            } else if let Some(signal) = closed.signal {
                ExitOutcome::Signaled(signal)
            } else {
                ExitOutcome::Exited(closed.status)
            };
            if closed.clean {
                // Our CLOSE, so that sshd frees its side of the channel (MaxSessions).
                let _ = waiter.retry(Instant::now() + Duration::from_millis(500), || {
                    channel.close()
                });
            }
            Ok(Finished {
                outcome,
                stdout: pump.stdout,
                stderr: pump.stderr,
                elapsed,
                interrupted: pump.interrupted,
            })
        }
        Err(reason) => Err(Lost {
            reason,
            stderr: pump.stderr.kept,
        }),
    }
}

/// A command that never started before its deadline: timed out, nothing captured.
pub(crate) fn never_started(started: Instant, max_output: usize) -> Finished {
    Finished {
        outcome: ExitOutcome::TimedOut,
        stdout: Capped::new(max_output),
        stderr: Capped::new(max_output),
        elapsed: started.elapsed(),
        interrupted: false,
    }
}

/// Best effort: tell the server we are done with a channel, without waiting for it.
fn abandon(waiter: &mut Waiter<'_, '_>, channel: &mut Channel) {
    let _ = waiter.retry(Instant::now() + Duration::from_millis(200), || {
        channel.send_eof()
    });
    let _ = channel.close();
}

struct Closed {
    status: i32,
    signal: Option<String>,
    /// The server closed the channel (false: the kill grace ran out first).
    clean: bool,
}

struct Pump {
    stdout: Capped,
    stderr: Capped,
    written: usize,
    eof_sent: bool,
    remote_eof: bool,
    /// Set once the deadline passed or an interrupt came: the end of the kill grace.
    killing_until: Option<Instant>,
    /// The kill was for an interrupt, not the deadline.
    interrupted: bool,
}

impl Pump {
    fn drive(
        &mut self,
        waiter: &mut Waiter<'_, '_>,
        channel: &mut Channel,
        input: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<Closed, String> {
        let data = input.unwrap_or_default();
        let mut buf = vec![0u8; 64 * 1024];
        let mut out = channel.stream(0);
        let mut err = channel.stderr();
        loop {
            let mut progress = false;
            if !self.remote_eof {
                progress |= read_some(&mut out, &mut buf, &mut self.stdout)?;
                progress |= read_some(&mut err, &mut buf, &mut self.stderr)?;
            }
            if self.written < data.len() && self.killing_until.is_none() {
                let end = data.len().min(self.written + 32 * 1024);
                match channel.write(&data[self.written..end]) {
                    Ok(n) => {
                        self.written += n;
                        progress |= n > 0;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("sending input: {e}")),
                }
            }
            let want_eof =
                (input.is_some() && self.written == data.len()) || self.killing_until.is_some();
            if want_eof && !self.eof_sent {
                match channel.send_eof() {
                    Ok(()) => self.eof_sent = true,
                    Err(e) if would_block(&e) => {}
                    Err(e) => return Err(format!("sending EOF: {}", e.message())),
                }
            }
            if !progress && !self.remote_eof && channel.eof() {
                self.remote_eof = true;
            }
            if self.remote_eof {
                match channel.wait_close() {
                    Ok(()) => {
                        return Ok(Closed {
                            status: channel.exit_status().unwrap_or(-1),
                            signal: channel.exit_signal().ok().and_then(|s| s.exit_signal),
                            clean: true,
                        });
                    }
                    Err(e) if would_block(&e) => {}
                    Err(e) => return Err(format!("waiting for the exit status: {}", e.message())),
                }
            }
            if progress {
                continue;
            }
            let now = Instant::now();
            let until = match self.killing_until {
                Some(end) if now >= end => {
                    return Ok(Closed {
                        status: -1,
                        signal: None,
                        clean: false,
                    });
                }
                Some(end) => end,
                None if now >= deadline || interrupt::requested() => {
                    self.interrupted = now < deadline;
                    self.killing_until = Some(now + KILL_GRACE);
                    continue;
                }
                None => deadline,
            };
            waiter.wait(until)?;
        }
    }
}

/// Reads what one stream has now. `Ok(true)` when bytes arrived.
pub(crate) fn read_some(
    stream: &mut impl Read,
    buf: &mut [u8],
    sink: &mut Capped,
) -> Result<bool, String> {
    match stream.read(buf) {
        Ok(0) => Ok(false),
        Ok(n) => {
            sink.push(&buf[..n]);
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(format!("reading output: {e}")),
    }
}

pub(crate) fn would_block(e: &ssh2::Error) -> bool {
    e.code() == ErrorCode::Session(EAGAIN)
}

pub(crate) enum Stop {
    /// The deadline passed first.
    Deadline,
    /// The connection failed.
    Lost(String),
}

/// Waits on the socket between non-blocking calls and decides when the peer is dead.
pub(crate) struct Waiter<'l, 'a> {
    link: &'l Link<'a>,
    /// Silence is measured from here at the earliest: a session idle between commands has
    /// received nothing for long, which says nothing about the peer now.
    armed: Instant,
}

impl<'l, 'a> Waiter<'l, 'a> {
    /// A waiter whose silence is measured from now.
    pub(crate) fn new(link: &'l Link<'a>) -> Self {
        Waiter {
            link,
            armed: Instant::now(),
        }
    }

    /// Calls `op` until it stops reporting EAGAIN.
    pub(crate) fn retry<T>(
        &mut self,
        deadline: Instant,
        mut op: impl FnMut() -> Result<T, ssh2::Error>,
    ) -> Result<T, Stop> {
        loop {
            match op() {
                Ok(value) => return Ok(value),
                Err(e) if would_block(&e) => {}
                Err(e) => return Err(Stop::Lost(e.message().to_owned())),
            }
            if Instant::now() >= deadline {
                return Err(Stop::Deadline);
            }
            self.wait(deadline).map_err(Stop::Lost)?;
        }
    }

    /// Sends an SSH keepalive if one is due (one per `dead_after`), checks that the peer still
    /// answers, and sleeps until the socket is ready, `until` or one [`TICK`], whichever comes
    /// first.
    ///
    /// Two silences, because a sample must stay quiet (issue 17): the machine is dead when its
    /// kernel acknowledged nothing for `dead_after` (the socket's TCP keepalive probes, sent
    /// after `keepalive` of idle, are answered by the kernel alone: a frozen, crashed or
    /// rebooting machine is noticed within `dead_after` of its last answer); sshd is dead when
    /// it sent no SSH data for [`sshd_silence_limit`] although a keepalive ([`ssh_keepalive`])
    /// went out in that time (a hung or starved sshd on a live kernel, or a machine behind a
    /// relay that answers TCP for it, like QEMU's user network).
    pub(crate) fn wait(&mut self, until: Instant) -> Result<(), String> {
        let session = self.link.session;
        match session.keepalive_send() {
            Ok(_) => {}
            Err(e) if would_block(&e) => {}
            Err(e) => return Err(format!("sending keepalive: {}", e.message())),
        }
        let heard = last_heard(self.link.fd);
        let armed = self.armed.elapsed();
        let machine_silent = armed.min(heard.data).min(heard.ack);
        if machine_silent > self.link.dead_after {
            return Err(format!(
                "no answer from the target's kernel for {machine_silent:.1?} although TCP \
                 keepalive probes were sent (frozen, crashed or rebooting)"
            ));
        }
        let sshd_silent = armed.min(heard.data);
        if sshd_silent > sshd_silence_limit(self.link.dead_after) {
            return Err(format!(
                "no byte from the target for {sshd_silent:.1?} although SSH keepalives were \
                 sent, while its TCP connection is still acknowledged (by its kernel, or by a \
                 relay in front of it: QEMU's user network answers for a frozen VM); sshd may \
                 be hung or starved of CPU, or the machine frozen behind such a relay"
            ));
        }
        let mut events = libc::POLLIN;
        if session.block_directions() == ssh2::BlockDirections::Outbound
            || session.block_directions() == ssh2::BlockDirections::Both
        {
            events |= libc::POLLOUT;
        }
        let timeout = until
            .saturating_duration_since(Instant::now())
            .min(TICK)
            .as_millis();
        let mut pfd = libc::pollfd {
            fd: self.link.fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call; the fd belongs to the live
        // session. A failed or interrupted poll only ends this sleep early.
        let _ = unsafe { libc::poll(&raw mut pfd, 1, i32::try_from(timeout).unwrap_or(200)) };
        Ok(())
    }
}

/// How often an SSH keepalive goes out while a command runs: once per `dead_after` (whole
/// seconds, at least one: libssh2 counts seconds). Each one wakes sshd on the target, so
/// there is one per `dead_after`, not one per second.
pub(crate) fn ssh_keepalive(dead_after: Duration) -> Duration {
    Duration::from_secs(dead_after.as_secs().max(1))
}

/// How long sshd may send nothing while keepalives go out before it counts as dead:
/// 2 × `dead_after` − 1 s (9 s for the default 5 s), at least one second beyond the keepalive
/// interval. Only the silence counts, not when the keepalive went out, so a frozen sshd is
/// noticed at most this long after its last answer; the keepalive goes out at `dead_after`
/// of it and leaves sshd `dead_after` − 1 s to answer (a live one answers in milliseconds).
/// It went out one second earlier until 2026-12-05: a fifth more wake-ups of sshd during a
/// silent sample for the same bound (docs/performance.md).
pub(crate) fn sshd_silence_limit(dead_after: Duration) -> Duration {
    (dead_after * 2)
        .saturating_sub(Duration::from_secs(1))
        .max(ssh_keepalive(dead_after) + Duration::from_secs(1))
}

/// How long ago the socket last heard from the peer (`TCP_INFO`).
#[derive(Clone, Copy, Debug)]
struct Heard {
    /// Since the last data (SSH packets: sshd is alive).
    data: Duration,
    /// Since the last acknowledgement (the peer's kernel is alive: it answers keepalive probes
    /// by itself).
    ack: Duration,
}

/// How long ago the kernel last received data and acknowledgements on the socket; zero if
/// unknown, so that a failed query never declares a peer dead.
fn last_heard(fd: RawFd) -> Heard {
    // SAFETY: tcp_info is plain old data; getsockopt writes at most `len` bytes into it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: valid pointers to `info` and `len` for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast(),
            &raw mut len,
        )
    };
    if rc == 0 {
        Heard {
            data: Duration::from_millis(u64::from(info.tcpi_last_data_recv)),
            ack: Duration::from_millis(u64::from(info.tcpi_last_ack_recv)),
        }
    } else {
        Heard {
            data: Duration::ZERO,
            ack: Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{
        process::{Command, Stdio},
        time::Duration,
    };

    use super::{ssh_keepalive, sshd_silence_limit, wrap};

    /// One keepalive per `dead_after`; sshd dead after 2 × `dead_after` − 1 s of silence,
    /// always at least a second after a keepalive went out.
    #[test]
    fn keepalives_go_out_once_per_dead_after_and_sshd_has_the_rest_to_answer() {
        let s = Duration::from_secs;
        assert_eq!(
            (ssh_keepalive(s(5)), sshd_silence_limit(s(5))),
            (s(5), s(9))
        );
        assert_eq!(
            (ssh_keepalive(s(2)), sshd_silence_limit(s(2))),
            (s(2), s(3))
        );
        assert_eq!(
            (ssh_keepalive(s(120)), sshd_silence_limit(s(120))),
            (s(120), s(239))
        );
        let odd = Duration::from_millis(2500);
        assert_eq!((ssh_keepalive(odd), sshd_silence_limit(odd)), (s(2), s(4)));
        assert_eq!(ssh_keepalive(Duration::from_millis(100)), s(1));
    }

    /// The wrapper is shell text for the login shell; it must parse and run the command with
    /// the right status in every POSIX shell a target may have (sshd's setsid is emulated).
    #[test]
    fn wrapper_runs_in_posix_shells() {
        // host tools: sh dash bash busybox setsid
        for shell in ["sh", "dash", "bash", "busybox"] {
            if !crate::test_skip::need(shell) {
                continue;
            }
            let mut args = vec![];
            if shell == "busybox" {
                args.push("sh");
            }
            let text = wrap(
                "echo \"it's $((6*7))\"; echo err >&2; exit 3",
                "t0ken",
                None,
            );
            // stdin stays open while the command runs, as the channel's does; its EOF is
            // the watchdog's signal.
            let mut child = Command::new("setsid")
                .arg("-w")
                .arg(shell)
                .args(&args)
                .arg("-c")
                .arg(&text)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("setsid (util-linux) starts");
            let stdin = child.stdin.take();
            let out = child.wait_with_output().expect("shell runs");
            drop(stdin);
            assert_eq!(String::from_utf8_lossy(&out.stdout), "it's 42\n", "{shell}");
            assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n", "{shell}");
            assert_eq!(out.status.code(), Some(3), "{shell}");
        }
    }
}
