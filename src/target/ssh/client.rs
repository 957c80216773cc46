//! [`SshTransport`]: the [`Transport`] for a machine reached over SSH. It owns one session per
//! target, opens one channel per command, reconnects on request, and turns low-level failures
//! into [`TransportError`]s that name the target and the command.
//!
//! It must not be shared between threads (libssh2's blocking mode is per session) and never
//! reconnects on its own: after `ConnectionLost` the engine decides, then calls `reconnect`.

use std::{
    net::SocketAddr,
    thread,
    time::{Duration, Instant},
};

use crate::{
    interrupt,
    target::{
        cpu_set::CpuSet,
        leftovers::take_marker_lines,
        quote::sh_quote,
        ssh::{
            connect::{Connection, connect_once},
            probe,
            run::{self, Finished, Link, Lost},
            runner::{Placement, RunEnd, Runner, Unavailable},
            target::{Resolved, SshTarget},
        },
        transport::{CommandOutput, ExitOutcome, Transport, TransportError, run_token},
    },
};

/// Pause after the first failed connection try; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// Longest pause between connection tries, so a target is caught soon after sshd is up.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// How much of a command line goes into a message.
const COMMAND_SHOWN: usize = 120;

/// How much stderr goes into a message.
const STDERR_TAIL: usize = 600;

/// What is kept of an upload's own output (a short error message at most).
const COPY_OUTPUT: usize = 64 * 1024;

/// Drives one machine over SSH (see the module docs of [`crate::target::transport`] for the
/// guarantees every transport gives).
pub struct SshTransport {
    target: Resolved,
    connection: Option<Connection>,
    /// The persistent runner on the current connection, once a workload run started it.
    runner: Option<Runner>,
    /// Why the runner cannot be used on this target (workload runs take the exec path).
    runner_refused: Option<String>,
    /// What [`Transport::take_notice`] hands out next.
    notice: Option<String>,
    /// The CPUs the recipe pins workloads to ([`Transport::keep_off_cpus`]).
    avoid: CpuSet,
    /// While the sshd process of the current connection is pinned away from `avoid`: the
    /// session's own CPUs, which every command goes back to.
    restore: Option<CpuSet>,
    /// A failure to pin the runner was said once already.
    pin_noticed: bool,
}

impl SshTransport {
    /// Resolves `target` (config file, defaults, pin syntax) without connecting, so that a
    /// campaign can be validated while its machines are still off.
    pub fn new(target: &SshTarget) -> Result<Self, TransportError> {
        Ok(SshTransport {
            target: target.resolve()?,
            connection: None,
            runner: None,
            runner_refused: None,
            notice: None,
            avoid: CpuSet::default(),
            restore: None,
            pin_noticed: false,
        })
    }

    /// Resolves `target` and makes one connection try (no retries): the usual start.
    pub fn connect(target: &SshTarget) -> Result<Self, TransportError> {
        let mut transport = SshTransport::new(target)?;
        let now = Instant::now();
        transport.connection = Some(connect_once(
            &transport.target,
            now,
            &mut probe::Wait::new(now),
        )?);
        Ok(transport)
    }

    /// True while a logged-in session exists (it may still turn out dead on next use).
    pub fn is_connected(&self) -> bool {
        self.connection.is_some()
    }

    /// The local end of the current connection, to find the server process serving it.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.connection.as_ref().map(|c| c.local)
    }

    /// `SHA256:` fingerprint of the host key the current connection verified, for the journal.
    pub fn host_key_fingerprint(&self) -> Option<&str> {
        self.connection.as_ref().map(|c| c.fingerprint.as_str())
    }

    /// Forgets the connection and the runner on it, without waiting on the peer.
    fn drop_connection(&mut self) {
        self.runner = None;
        self.connection = None;
        self.restore = None;
    }

    /// Turns the runner off for this target and leaves the notice that says why.
    fn refuse_runner(&mut self, reason: String) {
        self.notice = Some(format!(
            "the persistent runner could not start on {} ({reason}): workload runs use one SSH \
             command each",
            self.target.describe()
        ));
        self.runner_refused = Some(reason);
    }

    /// [`Transport::run_workload`] through the runner; `None` when it cannot be used (the
    /// caller takes the exec path).
    fn run_on_runner(
        &mut self,
        command: &str,
        timeout: Duration,
        max_output: usize,
    ) -> Option<Result<CommandOutput, TransportError>> {
        if self.runner_refused.is_some() {
            return None;
        }
        let deadline = Instant::now() + timeout;
        let connection = self.connection.as_ref()?;
        let link = Link {
            session: &connection.session,
            fd: connection.fd,
            dead_after: self.target.dead_after,
        };
        if self.runner.is_none() {
            let started = Runner::start(&link).and_then(|mut runner| {
                let placement = runner
                    .place(
                        &link,
                        &self.target.runner_cpus,
                        &self.avoid,
                        self.restore.as_ref(),
                    )
                    .map_err(Unavailable::Lost)?;
                Ok((runner, placement))
            });
            match started {
                Ok((runner, placement)) => {
                    match placement {
                        Placement::Stays => {}
                        Placement::Moved(session) => self.restore = Some(session),
                        Placement::Unmoved(reason) if !self.pin_noticed => {
                            self.pin_noticed = true;
                            self.notice = Some(format!(
                                "aba's processes on {} could not be kept off CPUs {} \
                                 (runner_cpus): {reason}; they may wake on a CPU a workload \
                                 measures on",
                                self.target.describe(),
                                self.avoid
                            ));
                        }
                        Placement::Unmoved(_) => {}
                    }
                    self.runner = Some(runner);
                }
                Err(Unavailable::Refused(reason)) => {
                    self.refuse_runner(reason);
                    return None;
                }
                Err(Unavailable::Lost(Lost { reason, .. })) => {
                    self.drop_connection();
                    return Some(Err(self.lost(format!(
                        "{reason}, before running {}",
                        show_command(command)
                    ))));
                }
            }
        }
        let runner = self.runner.as_mut()?;
        let token = run_token();
        let finished = match runner.run(&link, command, &token, deadline, max_output) {
            Ok(RunEnd::Ended(finished)) => finished,
            Ok(RunEnd::Stuck(finished)) => {
                // A run that did not report its end after its kill: never reuse that runner.
                self.runner = None;
                finished
            }
            Err(Lost { reason, stderr }) => {
                self.drop_connection();
                return Some(Err(self.lost(format!(
                    "{reason}, while running {}{}",
                    show_command(command),
                    stderr_tail(&stderr)
                ))));
            }
        };
        if finished.interrupted {
            return Some(Err(TransportError::Interrupted {
                target: self.target.describe(),
            }));
        }
        Some(Ok(output_of(finished, &token)))
    }

    fn lost(&self, reason: String) -> TransportError {
        TransportError::ConnectionLost {
            target: self.target.describe(),
            reason,
        }
    }

    /// Runs already wrapped text; on a lost connection, drops the session (without waiting)
    /// and reports it with the command and the stderr that had arrived.
    fn run(
        &mut self,
        shown: &str,
        exec_text: &str,
        input: Option<&[u8]>,
        deadline: Instant,
        max_output: usize,
    ) -> Result<Finished, TransportError> {
        let Some(connection) = &self.connection else {
            return Err(self.lost(format!(
                "not connected (an earlier connection was lost or dropped; reconnect first), \
                 so {} was not run",
                show_command(shown)
            )));
        };
        let link = Link {
            session: &connection.session,
            fd: connection.fd,
            dead_after: self.target.dead_after,
        };
        match run::run(&link, exec_text, input, deadline, max_output) {
            Ok(finished) if finished.interrupted => Err(TransportError::Interrupted {
                target: self.target.describe(),
            }),
            Ok(finished) => Ok(finished),
            Err(Lost { reason, stderr }) => {
                self.drop_connection();
                Err(self.lost(format!(
                    "{reason}, while running {}{}",
                    show_command(shown),
                    stderr_tail(&stderr)
                )))
            }
        }
    }

    fn copy_error(&self, path: &str, reason: String) -> TransportError {
        TransportError::Copy {
            path: path.to_owned(),
            target: self.target.describe(),
            reason,
        }
    }
}

impl Transport for SshTransport {
    fn describe(&self) -> String {
        self.target.describe()
    }

    fn exec_capped(
        &mut self,
        command: &str,
        timeout: Duration,
        max_output: usize,
    ) -> Result<CommandOutput, TransportError> {
        let deadline = Instant::now() + timeout;
        let token = run_token();
        let finished = self.run(
            command,
            &run::wrap(command, &token, self.restore.as_ref()),
            None,
            deadline,
            max_output,
        )?;
        Ok(output_of(finished, &token))
    }

    fn run_workload(
        &mut self,
        command: &str,
        timeout: Duration,
        max_output: usize,
    ) -> Result<CommandOutput, TransportError> {
        match self.run_on_runner(command, timeout, max_output) {
            Some(result) => result,
            None => self.exec_capped(command, timeout, max_output),
        }
    }

    fn keep_off_cpus(&mut self, cpus: &CpuSet) {
        self.avoid = cpus.clone();
    }

    fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    fn upload(&mut self, data: &[u8], remote_path: &str, mode: u32) -> Result<(), TransportError> {
        let path = safe_path(remote_path);
        let tmp = format!("{path}.aba-upload");
        let (path_q, tmp_q) = (sh_quote(&path), sh_quote(&tmp));
        // `cat` ends at the channel's EOF; a short file (connection lost, deadline) is
        // removed instead of replacing the old one.
        let script = format!(
            "umask 077; if cat > {tmp_q} && n=$(wc -c < {tmp_q}) && \
             {{ [ $n -eq {len} ] || {{ echo \"aba: received $n of {len} bytes\" >&2; false; }}; }} && \
             chmod {mode:o} {tmp_q} && mv -f {tmp_q} {path_q}; then exit 0; fi; rm -f {tmp_q}; exit 1",
            len = data.len(),
            mode = mode & 0o7777,
        );
        let shown = format!("upload of {} bytes to {path}", data.len());
        let deadline = Instant::now() + self.target.copy_timeout;
        let finished = self.run(&shown, &script, Some(data), deadline, COPY_OUTPUT)?;
        match finished.outcome {
            ExitOutcome::Exited(0) => Ok(()),
            outcome => Err(self.copy_error(
                remote_path,
                format!(
                    "upload {}{}",
                    outcome_words(&outcome, self.target.copy_timeout),
                    stderr_tail(&finished.stderr.kept)
                ),
            )),
        }
    }

    fn download(&mut self, remote_path: &str) -> Result<Vec<u8>, TransportError> {
        let command = format!("cat {}", sh_quote(&safe_path(remote_path)));
        let deadline = Instant::now() + self.target.copy_timeout;
        let token = run_token();
        let finished = self.run(
            &command,
            &run::wrap(&command, &token, None),
            None,
            deadline,
            usize::MAX,
        )?;
        match finished.outcome {
            ExitOutcome::Exited(0) => Ok(finished.stdout.kept),
            outcome => Err(self.copy_error(
                remote_path,
                format!(
                    "download {}{}",
                    outcome_words(&outcome, self.target.copy_timeout),
                    stderr_tail(&finished.stderr.kept)
                ),
            )),
        }
    }

    fn reconnect(&mut self, deadline: Instant) -> Result<(), TransportError> {
        self.drop_connection();
        let started = Instant::now();
        let mut wait = probe::Wait::new(started);
        let mut backoff = FIRST_BACKOFF;
        let mut tries = 0u32;
        loop {
            if interrupt::requested() {
                return Err(TransportError::Interrupted {
                    target: self.target.describe(),
                });
            }
            tries += 1;
            match connect_once(&self.target, deadline, &mut wait) {
                Ok(connection) => {
                    self.connection = Some(connection);
                    return Ok(());
                }
                Err(TransportError::Connect { reason, .. }) => {
                    if Instant::now() + backoff >= deadline {
                        return Err(TransportError::Connect {
                            target: self.target.describe(),
                            reason: format!(
                                "{reason} (gave up after {tries} tries in {:.1?})",
                                started.elapsed()
                            ),
                        });
                    }
                }
                // Wrong host key or refused login: retrying cannot help and may lock us out.
                Err(other) => return Err(other),
            }
            thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    fn disconnect(&mut self) {
        self.drop_connection();
    }
}

/// A finished command as the caller sees it: the leftover marker lines taken out of stderr.
fn output_of(finished: Finished, token: &str) -> CommandOutput {
    let mut stderr = finished.stderr.kept;
    let leftovers = take_marker_lines(&mut stderr, &finished.stderr.tail, token);
    CommandOutput {
        outcome: finished.outcome,
        dropped: [finished.stdout.dropped, finished.stderr.dropped],
        stdout: finished.stdout.kept,
        stderr,
        elapsed: finished.elapsed,
        leftovers,
    }
}

/// A relative path starting with `-` would read as an option to `cat`, `chmod` and `mv`.
fn safe_path(path: &str) -> String {
    if path.starts_with('-') {
        format!("./{path}")
    } else {
        path.to_owned()
    }
}

fn outcome_words(outcome: &ExitOutcome, limit: Duration) -> String {
    match outcome {
        ExitOutcome::TimedOut => format!("timed out after {limit:.0?}"),
        other => format!("failed ({other})"),
    }
}

/// The command for a message: Rust-quoted (control characters visible), cut to a readable size.
fn show_command(command: &str) -> String {
    let mut cut: String = command.chars().take(COMMAND_SHOWN).collect();
    if cut.len() < command.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

/// The end of stderr, between rulers, or nothing when it was empty.
fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim_end();
    if text.is_empty() {
        return String::new();
    }
    let start = text
        .char_indices()
        .map(|(i, _)| i)
        .find(|i| text.len() - i <= STDERR_TAIL)
        .unwrap_or(0);
    let ellipsis = if start > 0 { "…" } else { "" };
    format!("\n--- stderr (end) ---\n{ellipsis}{}\n---", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::{safe_path, show_command, stderr_tail};

    #[test]
    fn commands_are_quoted_and_cut() {
        assert_eq!(show_command("echo 'a'\nrm x"), "\"echo 'a'\\nrm x\"");
        let long = "x".repeat(500);
        let shown = show_command(&long);
        assert!(shown.len() < 140 && shown.contains('…'), "{shown}");
    }

    #[test]
    fn stderr_tail_keeps_the_end() {
        assert_eq!(stderr_tail(b"  \n"), "");
        let tail = stderr_tail(format!("{}END", "é".repeat(1000)).as_bytes());
        assert!(tail.contains("…") && tail.contains("END\n---"), "{tail}");
        assert!(stderr_tail(b"boom\n").contains("\nboom\n"));
    }

    #[test]
    fn option_like_paths_are_made_harmless() {
        assert_eq!(safe_path("-rf"), "./-rf");
        assert_eq!(safe_path("/tmp/x"), "/tmp/x");
    }
}
