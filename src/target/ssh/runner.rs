//! The persistent runner (issue 17): one long-lived POSIX `sh` on the target per connection
//! that receives each workload run over one SSH channel, so that a sample costs no sshd
//! session, no login shell and no exec but the `sh -c` of the workload.
//!
//! The exec path ([`super::run::wrap`]) pays, per command, a channel, sshd's session fork, the
//! login shell, `setsid`, `sh -c` and a `grep` over `/proc/*/environ`; the runner about half
//! of it, on loopback and in the lab (docs/performance.md). It keeps the same guarantees with
//! shell builtins and that one `sh`:
//!
//! - **A run** is `sh -c COMMAND` with `ABA_RUN=<token>` in its environment and `/dev/null`
//!   as stdin, exec'd from a subshell of the runner (one exec, the exec path's `sh -c`); its
//!   stdout and stderr are the channel's. A supervisor subshell waits for it and then writes
//!   the end marker (the runner's secret, `end`, the exit status) on both streams, so the host
//!   knows where the run's output ends.
//! - **What a run leaves behind dies with it**: every process the run started is younger than
//!   the run (its pid is larger, unless pid numbers wrapped, which the newest pid in
//!   `/proc/loadavg` tells; then every process is looked at) and carries the
//!   token in its environment (an exec'd program) or is in the runner's process group (a
//!   subshell): after the run, the supervisor reads `/proc/N/environ` and `/proc/N/stat` of
//!   the processes younger than the run only, kills those and names them on stderr as the
//!   exec path does ([`crate::target::leftovers`]). Where the target has a cgroup v2
//!   hierarchy the runner may create a cgroup in, it moves itself into one of its own
//!   (`aba-runner-<pid>`, beside its cgroup) when it starts: every run is born in it, and the
//!   sweep reads its members instead of every process, so a daemon that both leaves the
//!   process group and clears its environment (`setsid env -i`) is found too. It moves back
//!   and removes the cgroup when it ends; a runner killed first leaves it to the next one,
//!   which removes it and kills what is still in it. Without such a hierarchy that daemon
//!   escapes, as it escapes the exec path's search.
//! - **Deadline and Ctrl-C**: the host sends `kill <token>`; the runner kills every process of
//!   the run the same way (the supervisor excepted, which then reports the status).
//! - **Disconnect**: sshd closes the runner's stdin; the runner kills the run and exits.
//!
//! - **CPUs**: when the recipe pins workloads, the runner and the sshd process serving it are
//!   moved off those CPUs once ([`Runner::place`], the inventory's `runner_cpus`), and each run
//!   goes back to the session's own CPUs (`taskset -c`) before its command.
//!
//! The protocol, one line per message on the runner's stdin: first the secret marker (never
//! in a command line or an environment a workload can read), then `run <token> <lines>
//! [<cpus>]` followed by the command's lines, or `kill <token>`. The runner answers once
//! `<marker> ready <pid> <parent pid> <Cpus_allowed_list>`, and per run `<marker> end
//! <status>` on stdout and `<marker> end` on stderr.
//! A lost runner is a lost connection: the caller reconnects, like after any connection loss.

use std::{
    io::{ErrorKind, Read, Write},
    time::{Duration, Instant},
};

use ssh2::Channel;

use crate::{
    interrupt,
    target::{
        cpu_set::{CpuSet, RunnerCpus},
        quote::sh_quote,
        ssh::run::{Finished, KILL_GRACE, Link, Lost, Stop, Waiter, never_started, read_some},
        transport::{Capped, ExitOutcome, run_token},
    },
};

/// How long the runner may take to start and answer.
const HANDSHAKE: Duration = Duration::from_secs(15);

/// How often `kill` is repeated while a killed run has not reported its end.
const KILL_REPEAT: Duration = Duration::from_secs(1);

/// The runner, a POSIX sh program (dash, bash, busybox ash). A run is `sh -c COMMAND` as on
/// the exec path (its own `$$`, nothing of the runner's variables), started from a subshell
/// with one exec.
const SCRIPT: &str = r#"IFS= read -r __aba_m || exit 0
[ -r /proc/self/stat ] || { echo 'aba runner: no /proc on this machine' >&2; exit 1; }
IFS= read -r __aba_st < /proc/self/stat
__aba_st=${__aba_st##*) }
set -- $__aba_st
__aba_pg=$3
__aba_cg= __aba_up=
while read -r __aba_l __aba_mnt __aba_fs __aba_rest; do
  [ "$__aba_fs" = cgroup2 ] && { __aba_up=$__aba_mnt; break; }
done < /proc/mounts 2>/dev/null
if [ -n "$__aba_up" ]; then
  __aba_own=
  while IFS= read -r __aba_l; do
    case $__aba_l in 0::/*) __aba_own=${__aba_l#0::} ;; esac
  done < /proc/self/cgroup
  __aba_up=$__aba_up${__aba_own%/}
  for __aba_d in "$__aba_up"/aba-runner-*; do
    [ -f "$__aba_d/cgroup.procs" ] || continue
    __aba_alive=
    while read -r __aba_q; do
      [ "$__aba_q" = "${__aba_d##*-}" ] && __aba_alive=1
    done < "$__aba_d/cgroup.procs"
    [ -z "$__aba_alive" ] || continue
    while read -r __aba_q; do kill -s KILL "$__aba_q" 2>/dev/null; done < "$__aba_d/cgroup.procs"
    rmdir "$__aba_d" 2>/dev/null
  done
  __aba_cg=$__aba_up/aba-runner-$$
  if mkdir "$__aba_cg" 2>/dev/null && { echo $$ > "$__aba_cg/cgroup.procs"; } 2>/dev/null; then :
  else rmdir "$__aba_cg" 2>/dev/null; __aba_cg=; fi
fi
__aba_sweep() {
  __aba_low=$1 __aba_keep=$2 __aba_tok=$3 __aba_rep=$4 __aba_last=
  read -r __aba_l1 __aba_l2 __aba_l3 __aba_l4 __aba_last 2>/dev/null < /proc/loadavg
  [ "${__aba_last:-0}" -ge "$__aba_low" ] 2>/dev/null || __aba_low=0
  if [ -n "$__aba_cg" ]; then
    __aba_list=
    while read -r __aba_q; do __aba_list="$__aba_list /proc/$__aba_q"; done < "$__aba_cg/cgroup.procs"
  else
    __aba_list=/proc/[0-9]*
  fi
  for __aba_d in $__aba_list; do
    __aba_q=${__aba_d#/proc/}
    [ "$__aba_q" -gt "$__aba_low" ] && [ "$__aba_q" != "$__aba_keep" ] &&
      [ "$__aba_q" != "$$" ] || continue
    __aba_st=
    IFS= read -r __aba_st 2>/dev/null < "$__aba_d/stat"
    [ -n "$__aba_st" ] || continue
    __aba_st=${__aba_st##*) }
    set -- $__aba_st
    [ "$1" != Z ] || continue
    if [ -z "$__aba_cg" ] && [ "$3" != "$__aba_pg" ]; then
      __aba_e=
      IFS= read -r __aba_e 2>/dev/null < "$__aba_d/environ"
      case $__aba_e in *"ABA_RUN=$__aba_tok"*) ;; *) continue ;; esac
    fi
    __aba_n=
    IFS= read -r __aba_n 2>/dev/null < "$__aba_d/comm"
    kill -s KILL "$__aba_q" 2>/dev/null && [ -n "$__aba_rep" ] &&
      printf '\036aba-leftover %s %s %s\n' "$__aba_tok" "$__aba_q" "$__aba_n" >&2
  done
}
__aba_cpus=
while IFS= read -r __aba_l; do
  case $__aba_l in Cpus_allowed_list:*) set -- ${__aba_l#*:}; __aba_cpus=${1-} ;; esac
done < /proc/self/status
printf '%s ready %s %s %s\n' "$__aba_m" "$$" "$PPID" "$__aba_cpus"
__aba_s= __aba_t=
while IFS= read -r __aba_h; do
  case $__aba_h in
  "run "*)
    set -- $__aba_h
    __aba_t=$2 __aba_n=$3 __aba_a=${4-} __aba_c=
    while [ "$__aba_n" -gt 0 ] && IFS= read -r __aba_l; do
      __aba_c="$__aba_c$__aba_l
"
      __aba_n=$((__aba_n - 1))
    done
    (
      IFS= read -r __aba_st < /proc/self/stat
      __aba_me=${__aba_st%% *}
      if [ -n "$__aba_a" ]; then
        ABA_RUN=$__aba_t exec taskset -c "$__aba_a" sh -c "$__aba_c" </dev/null &
      else
        ABA_RUN=$__aba_t exec sh -c "$__aba_c" </dev/null &
      fi
      __aba_p=$!
      wait "$__aba_p" 2>/dev/null
      __aba_x=$?
      __aba_sweep "$__aba_p" "$__aba_me" "$__aba_t" report
      printf '%s end %s\n' "$__aba_m" "$__aba_x"
      printf '%s end\n' "$__aba_m" >&2
    ) &
    __aba_s=$!
    ;;
  "kill "*)
    set -- $__aba_h
    [ -n "$__aba_s" ] && __aba_sweep "$__aba_s" "$__aba_s" "$2"
    ;;
  esac
done
[ -n "$__aba_s" ] && __aba_sweep "$((__aba_s - 1))" 0 "$__aba_t"
if [ -n "$__aba_cg" ]; then
  { echo $$ > "$__aba_up/cgroup.procs"; } 2>/dev/null
  rmdir "$__aba_cg" 2>/dev/null || { sleep 1; rmdir "$__aba_cg" 2>/dev/null; }
fi
exit 0
"#;

/// The exec text that starts the runner: the login shell replaced by `sh` (a login shell may
/// not be POSIX), `$0` naming it.
fn start_text() -> String {
    format!("exec sh -c {} aba-runner", sh_quote(SCRIPT))
}

/// Why the runner could not be used on this connection.
pub(crate) enum Unavailable {
    /// The connection failed: the caller's usual lost-connection path.
    Lost(Lost),
    /// The target refused or did not answer it: the exec path is used instead.
    Refused(String),
}

/// A started runner: its channel and the secret its markers carry.
pub(crate) struct Runner {
    channel: Channel,
    marker: Vec<u8>,
    /// What the runner said about itself in its `ready`.
    facts: Facts,
    /// The CPUs a run goes back to before its command starts, once the runner was pinned
    /// away from them ([`Runner::pin`]): the session's own.
    restore: Option<CpuSet>,
}

/// The runner's pid, its parent's (the sshd process serving the connection) and the CPUs the
/// session may use (`Cpus_allowed_list`; empty on kernels that do not say).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Facts {
    pid: u32,
    sshd: u32,
    allowed: CpuSet,
}

impl Facts {
    /// Reads the rest of the `ready` line: ` PID PPID CPUS`.
    fn parse(line: &str) -> Option<Facts> {
        let mut words = line.split_whitespace();
        let pid = words.next()?.parse().ok()?;
        let sshd = words.next()?.parse().ok()?;
        let allowed = CpuSet::parse(words.next().unwrap_or_default()).ok()?;
        Some(Facts { pid, sshd, allowed })
    }
}

impl Runner {
    /// Opens a channel, starts the runner and waits for its `ready`.
    pub(crate) fn start(link: &Link<'_>) -> Result<Runner, Unavailable> {
        let deadline = Instant::now() + HANDSHAKE;
        let mut waiter = Waiter::new(link);
        let stop = |what: &str, stop: Stop| match stop {
            Stop::Deadline => {
                Unavailable::Refused(format!("{what}: no answer within {HANDSHAKE:?}"))
            }
            Stop::Lost(reason) => Unavailable::Lost(Lost {
                reason: format!("{what}: {reason}"),
                stderr: Vec::new(),
            }),
        };
        let mut channel = waiter
            .retry(deadline, || link.session.channel_session())
            .map_err(|e| stop("cannot open the runner's channel", e))?;
        let text = start_text();
        waiter
            .retry(deadline, || channel.exec(&text))
            .map_err(|e| stop("cannot start the runner", e))?;
        let marker = format!("\u{1e}aba-runner-{}{}", run_token(), run_token()).into_bytes();
        let mut runner = Runner {
            channel,
            marker,
            facts: Facts::default(),
            restore: None,
        };
        let mut hello = runner.marker.clone();
        hello.push(b'\n');
        runner
            .send(&mut waiter, &hello, deadline)
            .map_err(|e| stop("cannot reach the runner", e))?;
        let mut ready = runner.marker.clone();
        ready.extend_from_slice(b" ready");
        let mut seen = Vec::new();
        let mut stderr = Capped::new(4096);
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let mut progress = false;
            let n = read_now(&mut runner.channel.stream(0), &mut buf)
                .map_err(|e| stop("reading the runner's answer", Stop::Lost(e)))?;
            seen.extend_from_slice(&buf[..n]);
            progress |= n > 0;
            progress |= read_some(&mut runner.channel.stderr(), &mut buf, &mut stderr)
                .map_err(|e| stop("reading the runner's answer", Stop::Lost(e)))?;
            // A login shell may print something before `sh` takes over: skip it.
            if let Some(at) = find(&seen, &ready) {
                let rest = &seen[at + ready.len()..];
                if let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                    if nl + 1 != rest.len() {
                        return Err(Unavailable::Refused(
                            "the runner wrote after its `ready`".to_owned(),
                        ));
                    }
                    let line = String::from_utf8_lossy(&rest[..nl]);
                    runner.facts = Facts::parse(&line).ok_or_else(|| {
                        Unavailable::Refused(format!("the runner's `ready` said {line:?}"))
                    })?;
                    return Ok(runner);
                }
            }
            if !progress && runner.channel.eof() {
                let said = String::from_utf8_lossy(&stderr.kept).trim().to_owned();
                return Err(Unavailable::Refused(format!(
                    "the runner exited at its start{}",
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {said}")
                    }
                )));
            }
            if progress {
                continue;
            }
            if Instant::now() >= deadline {
                return Err(Unavailable::Refused(format!(
                    "the runner did not answer within {HANDSHAKE:?}"
                )));
            }
            waiter
                .wait(deadline)
                .map_err(|e| stop("waiting for the runner", Stop::Lost(e)))?;
        }
    }

    /// Keeps the runner and the sshd process serving its connection off `avoid` (the CPUs
    /// workloads are pinned to) as `wanted` (the inventory's `runner_cpus`) says. `moved` is
    /// the session's own CPUs when an earlier runner of this connection already moved sshd:
    /// this runner was forked there, and its runs go back to those CPUs as that one's did.
    pub(crate) fn place(
        &mut self,
        link: &Link<'_>,
        wanted: &RunnerCpus,
        avoid: &CpuSet,
        moved: Option<&CpuSet>,
    ) -> Result<Placement, Lost> {
        if let Some(session) = moved {
            self.restore = Some(session.clone());
            return Ok(Placement::Moved(session.clone()));
        }
        let cpus = match wanted.choose(&self.facts.allowed, avoid) {
            Ok(Some(cpus)) => cpus,
            Ok(None) => return Ok(Placement::Stays),
            Err(reason) => return Ok(Placement::Unmoved(reason)),
        };
        let command = format!(
            "taskset -p -c {cpus} {} >/dev/null && taskset -p -c {cpus} {} >/dev/null",
            self.facts.pid, self.facts.sshd
        );
        let deadline = Instant::now() + HANDSHAKE;
        match self.run(link, &command, &run_token(), deadline, 4096)? {
            RunEnd::Ended(done) if done.outcome.success() => {
                self.restore = Some(self.facts.allowed.clone());
                Ok(Placement::Moved(self.facts.allowed.clone()))
            }
            RunEnd::Ended(done) => Ok(Placement::Unmoved(format!(
                "`{command}`: {}: {}",
                done.outcome,
                String::from_utf8_lossy(&done.stderr.kept).trim()
            ))),
            RunEnd::Stuck(_) => Err(Lost {
                reason: format!("the runner did not finish `{command}`"),
                stderr: Vec::new(),
            }),
        }
    }

    /// Writes all of `data` to the runner's stdin.
    fn send(
        &mut self,
        waiter: &mut Waiter<'_, '_>,
        data: &[u8],
        deadline: Instant,
    ) -> Result<(), Stop> {
        let mut written = 0;
        while written < data.len() {
            match self.channel.write(&data[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(Stop::Deadline);
                    }
                    waiter.wait(deadline).map_err(Stop::Lost)?;
                }
                Err(e) => return Err(Stop::Lost(format!("writing to the runner: {e}"))),
            }
        }
        Ok(())
    }

    /// Runs `command` with `token` until it ends or `deadline` passes (then it is killed, as on
    /// an interrupt). [`RunEnd::Stuck`] when a killed run did not report its end within the
    /// kill grace: the runner must not be used again (the run counts as timed out).
    pub(crate) fn run(
        &mut self,
        link: &Link<'_>,
        command: &str,
        token: &str,
        deadline: Instant,
        max_output: usize,
    ) -> Result<RunEnd, Lost> {
        let started = Instant::now();
        let mut waiter = Waiter::new(link);
        let lost = |reason: String| Lost {
            reason,
            stderr: Vec::new(),
        };
        let request = request(command, token, self.restore.as_ref());
        match self.send(&mut waiter, &request, deadline) {
            Ok(()) => {}
            Err(Stop::Lost(reason)) => return Err(lost(reason)),
            // Not even the request went out before the deadline: nothing ran.
            Err(Stop::Deadline) => return Ok(RunEnd::Stuck(never_started(started, max_output))),
        }
        let mut end = self.marker.clone();
        end.extend_from_slice(b" end");
        let mut out = EndScanner::new(&end, max_output);
        let mut err = EndScanner::new(&end, max_output);
        let mut buf = vec![0u8; 64 * 1024];
        let mut killing: Option<(Instant, Instant)> = None;
        let mut interrupted = false;
        loop {
            let mut progress = false;
            if out.status.is_none() {
                let n = read_now(&mut self.channel.stream(0), &mut buf).map_err(&lost)?;
                out.feed(&buf[..n]);
                progress |= n > 0;
            }
            if err.status.is_none() {
                let n = read_now(&mut self.channel.stderr(), &mut buf).map_err(&lost)?;
                err.feed(&buf[..n]);
                progress |= n > 0;
            }
            // One stream's end came and the other's is on its way: answer at once, so that
            // the target's TCP stack, which may hold the second small segment until the
            // first is acknowledged (Nagle; sshd does not set TCP_NODELAY for a session
            // without a terminal), sends it now rather than after the host's delayed ACK.
            if let (Some(status), Some(_)) = (&out.status, &err.status) {
                let outcome = if killing.is_some() && !interrupted {
                    ExitOutcome::TimedOut
                } else {
                    outcome_of(status)
                };
                return Ok(RunEnd::Ended(Finished {
                    outcome,
                    stdout: out.sink,
                    stderr: err.sink,
                    elapsed: started.elapsed(),
                    interrupted,
                }));
            }
            if progress {
                continue;
            }
            if self.channel.eof() {
                return Err(Lost {
                    reason: "the runner on the target ended in the middle of a run".to_owned(),
                    stderr: err.sink.kept,
                });
            }
            let now = Instant::now();
            let until = match killing {
                Some((end, _)) if now >= end => {
                    return Ok(RunEnd::Stuck(Finished {
                        outcome: ExitOutcome::TimedOut,
                        stdout: out.sink,
                        stderr: err.sink,
                        elapsed: started.elapsed(),
                        interrupted,
                    }));
                }
                Some((end, next)) if now >= next => {
                    self.send_kill(&mut waiter, token, end).map_err(&lost)?;
                    killing = Some((end, now + KILL_REPEAT));
                    continue;
                }
                Some((end, next)) => end.min(next),
                None if now >= deadline || interrupt::requested() => {
                    interrupted = now < deadline;
                    let end = now + KILL_GRACE;
                    self.send_kill(&mut waiter, token, end).map_err(&lost)?;
                    killing = Some((end, now + KILL_REPEAT));
                    continue;
                }
                None => deadline,
            };
            waiter.wait(until).map_err(&lost)?;
        }
    }

    fn send_kill(
        &mut self,
        waiter: &mut Waiter<'_, '_>,
        token: &str,
        until: Instant,
    ) -> Result<(), String> {
        match self.send(waiter, format!("kill {token}\n").as_bytes(), until) {
            Ok(()) | Err(Stop::Deadline) => Ok(()),
            Err(Stop::Lost(reason)) => Err(reason),
        }
    }
}

/// Where [`Runner::place`] left the runner and the sshd process serving it.
pub(crate) enum Placement {
    /// Where they started: no workload is pinned, or they are already where they would go.
    Stays,
    /// Moved off the pinned CPUs; every command goes back to these, the session's own.
    Moved(CpuSet),
    /// Not moved, and why (no CPU left, no `taskset`, a list that names a pinned CPU).
    Unmoved(String),
}

/// How a run through the runner ended.
pub(crate) enum RunEnd {
    /// It reported its end.
    Ended(Finished),
    /// It did not report its end within the kill grace (or its request could not be sent):
    /// the runner must be dropped.
    Stuck(Finished),
}

/// What one stream has now, into `buf`: the number of bytes (0 when nothing is waiting).
fn read_now(stream: &mut impl Read, buf: &mut [u8]) -> Result<usize, String> {
    match stream.read(buf) {
        Ok(n) => Ok(n),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(0),
        Err(e) => Err(format!("reading output: {e}")),
    }
}

/// `run <token> <lines> [<cpus>]` and the command's lines. A command's last line needs no
/// newline of its own; the runner joins the lines with newlines, which `sh -c` text
/// tolerates. With `cpus`, the run goes back to those CPUs (`taskset -c`) before its command.
fn request(command: &str, token: &str, cpus: Option<&CpuSet>) -> Vec<u8> {
    let lines: Vec<&str> = command.split('\n').collect();
    let mut text = format!("run {token} {}", lines.len());
    if let Some(cpus) = cpus {
        text.push_str(&format!(" {cpus}"));
    }
    text.push('\n');
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.into_bytes()
}

/// The exit status as the exec path reports it: 129–192 is a signal's (the shell's 128 + n).
fn outcome_of(status: &str) -> ExitOutcome {
    match status.trim().parse::<i32>() {
        Ok(code) if (129..=192).contains(&code) => ExitOutcome::Signaled(signal_name(code - 128)),
        Ok(code) => ExitOutcome::Exited(code),
        Err(_) => ExitOutcome::Exited(-1),
    }
}

/// Linux's name of signal `n` without `SIG`, as OpenSSH reports an exit signal.
fn signal_name(n: i32) -> String {
    const NAMES: [&str; 31] = [
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
        "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
        "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
    ];
    usize::try_from(n - 1)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("signal {n}"), |s| (*s).to_owned())
}

/// Finds the end marker in one stream: what comes before it is the run's output (kept up to
/// the cap), the rest of the marker's line is the status. Bytes that may be the start of a
/// marker split over two reads are held back until the next read decides.
struct EndScanner<'m> {
    marker: &'m [u8],
    pending: Vec<u8>,
    sink: Capped,
    status: Option<String>,
}

impl<'m> EndScanner<'m> {
    fn new(marker: &'m [u8], max_output: usize) -> Self {
        EndScanner {
            marker,
            pending: Vec::new(),
            sink: Capped::new(max_output),
            status: None,
        }
    }

    fn feed(&mut self, data: &[u8]) {
        if data.is_empty() || self.status.is_some() {
            return;
        }
        self.pending.extend_from_slice(data);
        match find(&self.pending, self.marker) {
            Some(at) => {
                let rest = &self.pending[at + self.marker.len()..];
                if let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                    self.status = Some(String::from_utf8_lossy(&rest[..nl]).into_owned());
                    self.sink.push(&self.pending[..at]);
                    self.pending.clear();
                }
            }
            None => {
                let keep = self.marker.len().saturating_sub(1).min(self.pending.len());
                let flush = self.pending.len() - keep;
                self.sink.push(&self.pending[..flush]);
                self.pending.drain(..flush);
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::{EndScanner, Facts, outcome_of, request};
    use crate::target::{cpu_set::CpuSet, transport::ExitOutcome};

    #[test]
    fn the_end_marker_is_found_across_reads_and_output_before_it_is_kept() {
        let marker = b"\x1eaba-runner-abc end";
        let mut scan = EndScanner::new(marker, 1024);
        scan.feed(b"line one\npartial");
        scan.feed(b"\x1eaba-run");
        assert!(scan.status.is_none());
        scan.feed(b"ner-abc end 3");
        assert!(scan.status.is_none(), "the status line is not complete yet");
        scan.feed(b"\n");
        assert_eq!(scan.status.as_deref(), Some(" 3"));
        assert_eq!(scan.sink.kept, b"line one\npartial");
    }

    #[test]
    fn output_beyond_the_cap_is_counted_and_the_marker_still_found() {
        let marker = b"@end";
        let mut scan = EndScanner::new(marker, 4);
        scan.feed(&[b'x'; 100]);
        scan.feed(b"@end 0\n");
        assert_eq!(scan.sink.kept.len(), 4);
        assert_eq!(scan.sink.dropped, 96);
        assert_eq!(scan.status.as_deref(), Some(" 0"));
    }

    #[test]
    fn requests_carry_every_line_and_statuses_read_like_ssh_exit_signals() {
        assert_eq!(request("a\nb", "t0", None), b"run t0 2\na\nb\n");
        assert_eq!(request("echo 'x'", "t1", None), b"run t1 1\necho 'x'\n");
        let all = CpuSet::parse("0-3").expect("list");
        assert_eq!(request("true", "t2", Some(&all)), b"run t2 1 0-3\ntrue\n");
        let facts = Facts::parse(" 812 790 \t0-3").expect("ready line");
        assert_eq!((facts.pid, facts.sshd, facts.allowed), (812, 790, all));
        assert_eq!(
            Facts::parse(" 812 790 ").map(|f| f.allowed.is_empty()),
            Some(true)
        );
        assert_eq!(Facts::parse(" 812"), None);
        assert_eq!(outcome_of(" 0"), ExitOutcome::Exited(0));
        assert_eq!(outcome_of(" 3"), ExitOutcome::Exited(3));
        assert_eq!(outcome_of(" 137"), ExitOutcome::Signaled("KILL".to_owned()));
        assert_eq!(outcome_of(" 143"), ExitOutcome::Signaled("TERM".to_owned()));
    }
}
