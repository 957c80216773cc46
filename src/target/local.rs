//! The built-in `local` target: commands run on this machine through `sh -c`, each in its own
//! process group, with the same deadline and kill semantics as over SSH.

use std::{
    io::Read,
    os::{
        fd::AsRawFd,
        unix::process::{CommandExt, ExitStatusExt},
    },
    path::Path,
    process::{Child, Command, Stdio},
    sync::OnceLock,
    time::{Duration, Instant},
};

use crate::{
    interrupt,
    target::{
        affinity::{self, Mask},
        cpu_set::{CpuSet, RunnerCpus},
        leftovers::{RUN_VAR, kill_marked},
        run_cgroup::RunCgroup,
        transport::{Capped, CommandOutput, ExitOutcome, Transport, TransportError, run_token},
    },
};

/// How often the read loop wakes up to check the deadline and for an interrupt.
const POLL: Duration = Duration::from_millis(100);

/// Runs commands on this machine.
#[derive(Debug, Default)]
pub struct LocalTransport {
    /// Whether what a command started and left running outlives it (see
    /// [`LocalTransport::for_host_commands`]).
    keep_detached: bool,
    /// While aba is moved off the CPUs workloads are pinned to: the CPUs it found, which
    /// every command it starts goes back to.
    restore: Option<Mask>,
    /// What [`Transport::take_notice`] hands out next.
    notice: Option<String>,
}

/// The CPUs this process found at its first [`Transport::keep_off_cpus`], before it moved;
/// `None` when they cannot be read.
fn found_cpus() -> Option<CpuSet> {
    static FOUND: OnceLock<Option<CpuSet>> = OnceLock::new();
    FOUND.get_or_init(|| affinity::own().ok()).clone()
}

impl LocalTransport {
    /// The local transport of the built-in `local` target: like a workload over SSH,
    /// whatever a command leaves running is killed and named when it ends.
    pub fn new() -> Self {
        LocalTransport::default()
    }

    /// The transport for the inventory's host-side commands (power cycle, boot-loader
    /// hooks, notifications). Those legitimately start daemons (a lab's QEMU with
    /// `-daemonize`, a console logger): what leaves the command's process group survives
    /// it, and only a timeout or an interrupt kills the group. Workloads never run here.
    pub fn for_host_commands() -> Self {
        LocalTransport {
            keep_detached: true,
            ..LocalTransport::default()
        }
    }

    /// Moves this process (every thread) off `avoid`, or back where it started when
    /// nothing is to be avoided (an earlier campaign of the same process, `aba batch`, may
    /// have moved it: where it is now is read, not remembered); the reason when it cannot.
    fn place(&mut self, avoid: &CpuSet) -> Result<(), String> {
        let found = found_cpus()
            .ok_or("this process's CPUs cannot be read (sched_getaffinity)".to_owned())?;
        // Where it already is when the pinned CPUs are not this process's.
        let goal = RunnerCpus::Auto.choose(&found, avoid)?;
        let target = goal.as_ref().unwrap_or(&found);
        if affinity::own().ok().as_ref() != Some(target) {
            affinity::move_process(target)
                .map_err(|e| format!("cannot move aba to CPUs {target}: {e}"))?;
        }
        self.restore = goal.map(|_| Mask::of(&found));
        Ok(())
    }
}

fn io_error(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> TransportError {
    let context = context.into();
    move |source| TransportError::Io { context, source }
}

/// Signal number → name without `SIG`, for messages and `ExitOutcome::Signaled`.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGHUP => "HUP",
        libc::SIGINT => "INT",
        libc::SIGQUIT => "QUIT",
        libc::SIGILL => "ILL",
        libc::SIGABRT => "ABRT",
        libc::SIGBUS => "BUS",
        libc::SIGFPE => "FPE",
        libc::SIGKILL => "KILL",
        libc::SIGSEGV => "SEGV",
        libc::SIGPIPE => "PIPE",
        libc::SIGALRM => "ALRM",
        libc::SIGTERM => "TERM",
        libc::SIGUSR1 => "USR1",
        libc::SIGUSR2 => "USR2",
        _ => return signal.to_string(),
    }
    .to_owned()
}

fn kill_group(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for the
        // child; it has no memory-safety preconditions.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a file descriptor we own; failure leaves it blocking, which poll()
    // still handles because we only read after POLLIN.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

impl Transport for LocalTransport {
    fn describe(&self) -> String {
        "local".to_owned()
    }

    fn exec_capped(
        &mut self,
        command: &str,
        timeout: Duration,
        max_output: usize,
    ) -> Result<CommandOutput, TransportError> {
        let start = Instant::now();
        let deadline = start + timeout;
        let token = run_token();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(command);
        if self.keep_detached {
            cmd.env_remove(RUN_VAR);
        } else {
            cmd.env(RUN_VAR, &token);
        }
        // Every process the command starts is born in its cgroup (where one can be made), so
        // that what leaves the session and the token is still found. The child joins it
        // between fork and exec: from here, after the spawn, the shell may already have
        // forked.
        let cgroup = if self.keep_detached {
            None
        } else {
            RunCgroup::create(&token)
        };
        let join = cgroup.as_ref().map(RunCgroup::join_fd);
        let mask = self.restore.clone();
        if join.is_some() || mask.is_some() {
            // SAFETY: between fork and exec the closure makes at most two system calls and
            // allocates nothing (the descriptor was opened and the mask built before the fork).
            unsafe {
                cmd.pre_exec(move || {
                    if let Some(fd) = join {
                        // A failed move leaves the child where it was: the token still holds.
                        let _ = libc::write(fd, b"0".as_ptr().cast(), 1);
                    }
                    match &mask {
                        Some(mask) => mask.apply(0),
                        None => Ok(()),
                    }
                });
            }
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(io_error(format!("cannot start `sh -c {command}`")))?;
        let mut pipes = [
            child.stdout.take().map(|p| Box::new(p) as Box<dyn ReadFd>),
            child.stderr.take().map(|p| Box::new(p) as Box<dyn ReadFd>),
        ];
        for p in pipes.iter().flatten() {
            set_nonblocking(p.fd());
        }
        let mut out = [Capped::new(max_output), Capped::new(max_output)];
        let mut buf = vec![0u8; 64 * 1024];
        let mut status = None;
        let mut timed_out = false;
        loop {
            let open: Vec<usize> = (0..2).filter(|&i| pipes[i].is_some()).collect();
            if open.is_empty() {
                break;
            }
            if interrupt::requested() {
                if let Some(cgroup) = &cgroup {
                    cgroup.kill_members(child.id());
                }
                kill_group(&child);
                let _ = child.wait();
                return Err(TransportError::Interrupted {
                    target: "local".to_owned(),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                kill_group(&child);
                timed_out = true;
                break;
            }
            // Once the leader exited, whatever still holds the pipes is a leftover of the
            // command: drain what is there, then the group is killed below.
            if status.is_none() {
                status = child
                    .try_wait()
                    .map_err(io_error("cannot wait for a local command"))?;
            }
            let mut fds: Vec<libc::pollfd> = open
                .iter()
                .map(|&i| libc::pollfd {
                    fd: pipes[i].as_ref().map_or(-1, |p| p.fd()),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            let wait = if status.is_some() {
                0
            } else {
                POLL.min(deadline - now)
                    .as_millis()
                    .try_into()
                    .unwrap_or(100)
            };
            // SAFETY: `fds` is a valid, initialised array of pollfd of the given length.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait) };
            if ready < 0 {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                kill_group(&child);
                return Err(io_error("poll failed")(err));
            }
            let mut progressed = false;
            for (slot, pfd) in open.iter().zip(&fds) {
                if pfd.revents == 0 {
                    continue;
                }
                let Some(pipe) = pipes[*slot].as_mut() else {
                    continue;
                };
                match pipe.read(&mut buf) {
                    Ok(0) => pipes[*slot] = None,
                    Ok(n) => {
                        out[*slot].push(&buf[..n]);
                        progressed = true;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => pipes[*slot] = None,
                }
            }
            if status.is_some() && !progressed && ready == 0 {
                break;
            }
        }
        let leftovers = if self.keep_detached && !timed_out {
            Vec::new()
        } else {
            // Named first, then the group: a member still in the group is named like one
            // that left it (setsid, a daemon), which still carries the token.
            let mut named = kill_marked(&token);
            if let Some(cgroup) = &cgroup {
                // What left the session and cleared its environment is still a member.
                for (pid, text) in cgroup.kill_members(child.id()) {
                    let pid = format!("{pid} ");
                    if !named
                        .iter()
                        .any(|n| n.starts_with(&pid) || *n == pid.trim_end())
                    {
                        named.push(text);
                    }
                }
                named.sort();
            }
            kill_group(&child);
            named
        };
        let exit = match status {
            Some(s) => s,
            None => child
                .wait()
                .map_err(io_error("cannot wait for a local command"))?,
        };
        let outcome = if timed_out {
            ExitOutcome::TimedOut
        } else if let Some(code) = exit.code() {
            ExitOutcome::Exited(code)
        } else {
            ExitOutcome::Signaled(signal_name(exit.signal().unwrap_or(0)))
        };
        let [stdout, stderr] = out;
        Ok(CommandOutput {
            outcome,
            dropped: [stdout.dropped, stderr.dropped],
            stdout: stdout.kept,
            stderr: stderr.kept,
            elapsed: start.elapsed(),
            leftovers,
        })
    }

    fn upload(&mut self, data: &[u8], remote_path: &str, mode: u32) -> Result<(), TransportError> {
        use std::os::unix::fs::PermissionsExt;
        let path = Path::new(remote_path);
        let copy_err = |reason: String| TransportError::Copy {
            path: remote_path.to_owned(),
            target: "local".to_owned(),
            reason,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| copy_err(e.to_string()))?;
        }
        std::fs::write(path, data).map_err(|e| copy_err(e.to_string()))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| copy_err(e.to_string()))
    }

    fn download(&mut self, remote_path: &str) -> Result<Vec<u8>, TransportError> {
        std::fs::read(remote_path).map_err(|e| TransportError::Copy {
            path: remote_path.to_owned(),
            target: "local".to_owned(),
            reason: e.to_string(),
        })
    }

    /// aba runs on this machine: it moves off the pinned CPUs itself (the `auto` rule of
    /// an SSH target's `runner_cpus`), and every command goes back to the CPUs it found.
    fn keep_off_cpus(&mut self, cpus: &CpuSet) {
        if self.keep_detached {
            return;
        }
        if let Err(reason) = self.place(cpus) {
            self.notice = Some(format!(
                "aba could not keep itself off CPUs {cpus} on this machine: {reason}; its \
                 poll loop may wake on a CPU a workload measures on"
            ));
        }
    }

    fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    fn reconnect(&mut self, _deadline: Instant) -> Result<(), TransportError> {
        Ok(())
    }

    fn disconnect(&mut self) {}
}

/// A readable pipe with its raw fd.
trait ReadFd: Read {
    fn fd(&self) -> i32;
}

impl ReadFd for std::process::ChildStdout {
    fn fd(&self) -> i32 {
        self.as_raw_fd()
    }
}

impl ReadFd for std::process::ChildStderr {
    fn fd(&self) -> i32 {
        self.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::LocalTransport;
    use crate::target::transport::{ExitOutcome, Transport};
    // host tools: setsid pgrep pkill

    #[test]
    fn captures_streams_and_status() {
        let mut t = LocalTransport::new();
        let out = t
            .exec("echo out; echo err >&2; exit 3", Duration::from_secs(10))
            .expect("runs");
        assert_eq!(out.outcome, ExitOutcome::Exited(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn large_output_on_both_streams_does_not_deadlock() {
        let mut t = LocalTransport::new();
        let out = t
            .exec(
                "head -c 5000000 /dev/zero; head -c 5000000 /dev/zero >&2",
                Duration::from_secs(30),
            )
            .expect("runs");
        assert_eq!(out.stdout.len(), 5_000_000);
        assert_eq!(out.stderr.len(), 5_000_000);
    }

    #[test]
    fn deadline_kills_the_whole_group() {
        let marker = format!("aba-local-timeout-{}", std::process::id());
        let mut t = LocalTransport::new();
        let start = Instant::now();
        let out = t
            .exec(
                &format!("sh -c 'sleep 30; echo {marker}' & sleep 30"),
                Duration::from_millis(300),
            )
            .expect("runs");
        assert_eq!(out.outcome, ExitOutcome::TimedOut);
        assert!(start.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(100));
        let left = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .expect("pgrep");
        assert!(
            left.stdout.is_empty(),
            "survivors: {:?}",
            String::from_utf8_lossy(&left.stdout)
        );
    }

    #[test]
    fn signals_are_reported_by_name() {
        let mut t = LocalTransport::new();
        let out = t
            .exec("kill -TERM $$", Duration::from_secs(10))
            .expect("runs");
        assert_eq!(out.outcome, ExitOutcome::Signaled("TERM".to_owned()));
    }

    /// A child that leaves the process group and keeps stdout open (`setsid … &`) neither
    /// holds the run nor survives it, and is named.
    #[test]
    fn a_detached_child_holding_stdout_is_killed_and_named() {
        let marker = format!("aba-local-detached-{}", std::process::id());
        let mut t = LocalTransport::new();
        let start = Instant::now();
        let out = t
            .exec(
                // The command waits until the detached child has left the group, so that
                // the test does not race its setsid on a loaded machine.
                &format!(
                    "f=$(mktemp); setsid sh -c \"echo up > $f; sleep 600; echo {marker}\" & \
                     (sleep 500 &); while [ ! -s \"$f\" ]; do sleep 0.05; done; rm -f \"$f\"; \
                     echo done"
                ),
                Duration::from_secs(30),
            )
            .expect("runs");
        assert_eq!(out.outcome, ExitOutcome::Exited(0));
        assert_eq!(out.stdout, b"done\n");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert!(
            out.leftovers.iter().any(|l| l.contains(&marker)),
            "{:?}",
            out.leftovers
        );
        std::thread::sleep(Duration::from_millis(100));
        let left = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .expect("pgrep");
        assert!(left.stdout.is_empty(), "the detached child survived");
    }

    /// A daemon that leaves the session and clears its environment (`setsid env -i`) has
    /// neither the token nor the group: the command's cgroup still holds it, so it is killed
    /// and named, and the cgroup goes with the command.
    #[test]
    fn a_daemon_that_clears_its_environment_is_killed_and_named() {
        // host tools: setsid env pgrep
        let Some(probe) = crate::target::run_cgroup::RunCgroup::create("probe") else {
            crate::test_skip::skip(
                "no cgroup v2 hierarchy this user may create a cgroup in (a command's processes are then found by token and group only)",
            );
            return;
        };
        drop(probe);
        let marker = format!("aba-local-envless-{}", std::process::id());
        let mut t = LocalTransport::new();
        let out = t
            .exec(
                &format!(
                    "f=$(mktemp); setsid env -i sh -c \"echo up > $f; sleep 600; echo {marker}\" & \
                     while [ ! -s \"$f\" ]; do sleep 0.05; done; rm -f \"$f\"; echo done"
                ),
                Duration::from_secs(30),
            )
            .expect("runs");
        assert_eq!(out.stdout, b"done\n");
        assert!(
            out.leftovers.iter().any(|l| l.contains(&marker)),
            "{:?}",
            out.leftovers
        );
        std::thread::sleep(Duration::from_millis(100));
        let left = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .expect("pgrep");
        assert!(left.stdout.is_empty(), "the daemon survived");
    }

    /// Output beyond the cap is counted, not kept.
    #[test]
    fn output_beyond_the_cap_is_counted_not_kept() {
        let mut t = LocalTransport::new();
        let out = t
            .exec_capped(
                "head -c 3000000 /dev/zero; echo tail >&2",
                Duration::from_secs(30),
                1000,
            )
            .expect("runs");
        assert_eq!(out.stdout.len(), 1000);
        assert_eq!(out.dropped, [2_999_000, 0]);
        assert_eq!(out.stderr, b"tail\n");
    }

    /// A host command (a lab's power cycle) may start a daemon: it survives the command.
    #[test]
    fn a_host_command_may_leave_a_daemon_running() {
        let marker = format!("aba-local-daemon-{}", std::process::id());
        let mut t = LocalTransport::for_host_commands();
        let out = t
            .exec(
                &format!("setsid sh -c 'sleep 60; echo {marker}' >/dev/null 2>&1 & echo done"),
                Duration::from_secs(30),
            )
            .expect("runs");
        assert_eq!(out.outcome, ExitOutcome::Exited(0));
        assert!(out.leftovers.is_empty(), "{:?}", out.leftovers);
        std::thread::sleep(Duration::from_millis(100));
        let left = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .expect("pgrep");
        assert!(!left.stdout.is_empty(), "the daemon was killed");
        let _ = std::process::Command::new("pkill")
            .args(["-f", &marker])
            .status();
    }

    #[test]
    fn leftover_background_processes_do_not_hold_the_run() {
        let mut t = LocalTransport::new();
        let start = Instant::now();
        let out = t
            .exec("sleep 20 & echo done", Duration::from_secs(10))
            .expect("runs");
        assert_eq!(out.outcome, ExitOutcome::Exited(0));
        assert_eq!(out.stdout, b"done\n");
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
