//! A point's probes (`[[probe]]`): untimed commands run once before or after the timed
//! samples (never between them), each with its own deadline, its output kept under
//! `probes/<point>/`, its values read with the metric rules, an ftrace call counter set
//! up and torn down around it, and one `probe` record in the journal.
//!
//! A probe never fails its point: what it did not deliver (an unexpected exit, a value not
//! found, a profiler that could not be set up) is a warning of the point. Only what fails
//! any step fails it too: a lost connection that cannot be recovered, an interrupt, a journal
//! that cannot be written.

use std::time::Duration;

use super::{
    AttemptId, Boot, Engine, MAX_RECONNECTS_PER_RUN,
    failure::{PointError, transport_failure},
    shell::run_command,
};
use crate::{
    campaign::{
        events::{Step, Warning},
        extract::read_number,
        ftrace,
    },
    interrupt,
    recipe::{
        model::{ProbeExpect, ProbeWhen, Stream},
        resolved::Probe,
    },
    results::{
        journal::{Event, ProbeReading, now_rfc3339},
        kept::{KeptFile, PROBES_DIR, keep, kept_path},
    },
    target::transport::{CommandOutput, ExitOutcome, TransportError},
};

/// Deadline of the ftrace setup and teardown commands.
const FTRACE_TIMEOUT: Duration = Duration::from_secs(30);

/// What one probe gave.
struct Probed {
    output: CommandOutput,
    /// Each profiled function's hits, when the profile was set up and read.
    hits: Option<Vec<(String, u64)>>,
    problems: Vec<String>,
}

impl Engine<'_> {
    /// Runs the probes of the point's kernel that run `when`, in recipe order.
    pub(super) fn run_probes(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        when: ProbeWhen,
    ) -> Result<(), PointError> {
        let recipe = self.recipe;
        let kernel = at.point.kernel.as_str();
        for probe in recipe
            .probes
            .iter()
            .filter(|p| p.when == when && p.runs_on(kernel))
        {
            if interrupt::requested() {
                return Err(PointError::Interrupted);
            }
            self.step(Step::Probe {
                name: probe.name.to_string(),
                when: when.as_str(),
            });
            let probed = self.probe(at, boot, probe)?;
            self.record_probe(at, probe, probed)?;
        }
        Ok(())
    }

    /// Runs one probe (with its ftrace profile around it); after a lost connection on the
    /// same boot, the profile is torn down and the whole probe repeated.
    fn probe(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        probe: &Probe,
    ) -> Result<Probed, PointError> {
        let doing = format!("probe `{}` at point `{}`", probe.name, at.point.label);
        let mut reconnects = 0;
        // What an earlier try of this probe left to say.
        let mut carried: Vec<String> = Vec::new();
        loop {
            let mut problems = carried.clone();
            let mut untraceable = Vec::new();
            let profiled = if probe.ftrace.is_empty() {
                false
            } else {
                let script = ftrace::setup_script(&probe.ftrace);
                match self.transport.exec(&script, FTRACE_TIMEOUT) {
                    Err(TransportError::ConnectionLost { reason, .. })
                        if reconnects < MAX_RECONNECTS_PER_RUN =>
                    {
                        // Lost half-way: on the same boot, what the setup wrote is aba's, so
                        // the teardown clears it before the probe is tried again; another
                        // boot fails the point (a fresh boot has nothing enabled).
                        reconnects += 1;
                        self.recover_connection(at, boot, &reason)?;
                        if let Err(why) = self.ftrace_teardown(at, boot, &doing)? {
                            carried.push(format!(
                                "the ftrace teardown after a lost connection failed: {why}"
                            ));
                        }
                        continue;
                    }
                    Err(e) => return Err(transport_failure(e, doing)),
                    Ok(out) => match ftrace_answer(out) {
                        Ok(out) => {
                            untraceable = ftrace::untraceable(&out.stdout_text());
                            for f in &untraceable {
                                problems.push(format!(
                                    "no kprobe can be put on `{f}` on this kernel (inlined, renamed or on the kprobe blacklist): it has no count"
                                ));
                            }
                            true
                        }
                        // The setup wrote nothing, cleared what it wrote, or found someone
                        // else's profile, which aba leaves alone: no teardown.
                        Err(why) => {
                            problems.push(format!("the ftrace call counter was not set up: {why}"));
                            false
                        }
                    },
                }
            };
            let env = self.aba_env(at, "probe", None);
            let command = run_command(&self.workdir, &env, None, &probe.run);
            let result = self
                .transport
                .run_workload(&command, probe.timeout, probe.max_output);
            if let Some(notice) = self.transport.take_notice() {
                self.warn(Some(&at.point.label), Warning::Transport(notice))?;
            }
            let lost = match &result {
                Err(TransportError::ConnectionLost { reason, .. }) => Some(reason.clone()),
                _ => None,
            };
            if let Some(reason) = &lost {
                if reconnects >= MAX_RECONNECTS_PER_RUN {
                    return Err(transport_failure(
                        TransportError::ConnectionLost {
                            target: self.transport.describe(),
                            reason: reason.clone(),
                        },
                        doing,
                    ));
                }
                reconnects += 1;
                // Another boot fails the point here; a fresh boot has no profiler enabled.
                self.recover_connection(at, boot, reason)?;
            }
            // Torn down whatever the command did: it may have timed out, failed, lost its
            // connection or been interrupted (a Ctrl-C is set aside for the teardown, as for
            // restoring tuning); nothing stays enabled in tracefs.
            let hits = if profiled {
                match self.ftrace_teardown(at, boot, &doing)? {
                    Ok(out) => {
                        let counts = ftrace::hit_counts(&probe.ftrace, &out.stdout_text());
                        for f in probe.ftrace.iter().filter(|f| !untraceable.contains(f)) {
                            if !counts.iter().any(|(name, _)| name == f) {
                                problems.push(format!(
                                    "the call count of `{f}` is not in kprobe_profile: it has no count"
                                ));
                            }
                        }
                        Some(counts)
                    }
                    Err(why) => {
                        problems.push(format!("the ftrace teardown failed: {why}"));
                        None
                    }
                }
            } else {
                None
            };
            if lost.is_some() {
                continue;
            }
            let output = result.map_err(|e| transport_failure(e, doing.clone()))?;
            return Ok(Probed {
                output,
                hits,
                problems,
            });
        }
    }

    /// Runs the ftrace teardown, with a pending Ctrl-C set aside (as for restoring tuning)
    /// and a lost connection on the same boot recovered (it is idempotent): its output, or
    /// (inner `Err`) why it failed in words; only a transport failure fails the point.
    fn ftrace_teardown(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        doing: &str,
    ) -> Result<Result<CommandOutput, String>, PointError> {
        let script = ftrace::teardown_script();
        let output = interrupt::set_aside(|| {
            self.with_reconnect(at, boot, |e| {
                e.transport.exec(&script, FTRACE_TIMEOUT).map_err(|err| {
                    transport_failure(err, format!("the ftrace teardown of {doing}"))
                })
            })
        })?;
        Ok(ftrace_answer(output))
    }

    /// Keeps the probe's output, reads its values and journals its record; what it did not
    /// deliver is a warning of the point.
    fn record_probe(
        &mut self,
        at: AttemptId<'_>,
        probe: &Probe,
        probed: Probed,
    ) -> Result<(), PointError> {
        let Probed {
            output,
            hits,
            mut problems,
        } = probed;
        let point = at.point.label.to_string();
        let mut kept: Vec<KeptFile> = Vec::new();
        for (stderr, bytes, dropped) in [
            (false, &output.stdout, output.dropped[0]),
            (true, &output.stderr, output.dropped[1]),
        ] {
            let rel = kept_path(PROBES_DIR, &point, probe.name.as_str(), stderr);
            match keep(&self.dir.root, &rel, bytes, dropped) {
                Ok(file) => {
                    if dropped > 0 {
                        problems.push(format!(
                            "{rel} was cut at max_output = {} bytes ({dropped} more bytes were printed)",
                            probe.max_output
                        ));
                    }
                    kept.push(file);
                }
                Err(e) => problems.push(format!("{rel} could not be written: {e}")),
            }
        }
        let as_expected = match (probe.expect, &output.outcome) {
            (ProbeExpect::Success, ExitOutcome::Exited(0)) => true,
            (ProbeExpect::Failure, ExitOutcome::Exited(code)) => *code != 0,
            _ => false,
        };
        if !as_expected {
            problems.push(format!(
                "it ended with {} but `expect = \"{}\"`",
                output.outcome,
                match probe.expect {
                    ProbeExpect::Success => "success",
                    ProbeExpect::Failure => "failure",
                }
            ));
        }
        let mut values: Vec<ProbeReading> = hits
            .unwrap_or_default()
            .into_iter()
            .map(|(name, hits)| ProbeReading {
                name,
                value: count_value(hits),
                unit: "calls".to_owned(),
            })
            .collect();
        let stdout = output.stdout_text();
        let stderr = output.stderr_text();
        for value in &probe.values {
            let text = match value.stream {
                Stream::Stdout => &stdout,
                Stream::Stderr => &stderr,
            };
            match read_number(&value.extract, value.divide, value.multiply, text) {
                Ok(number) => values.push(ProbeReading {
                    name: value.name.to_string(),
                    value: number,
                    unit: value.unit.clone(),
                }),
                Err(why) => problems.push(format!("value `{}`: {why}", value.name)),
            }
        }
        // Shown now; the record keeps them for the report (journaled once, not also as
        // warnings, so report.txt says each once, beside the probe).
        for problem in &problems {
            self.notice(Warning::Probe {
                probe: probe.name.to_string(),
                point: at.point.label.clone(),
                text: problem.clone(),
            });
        }
        self.journal.append(&Event::Probe {
            point,
            attempt: at.attempt,
            kernel: at.point.kernel.to_string(),
            probe: probe.name.to_string(),
            when: probe.when,
            outcome: output.outcome.to_string(),
            as_expected,
            elapsed_s: output.elapsed.as_secs_f64(),
            kept,
            values,
            problems,
            time: now_rfc3339(),
        })?;
        Ok(())
    }
}

/// A hit count as a value: exact below 2^53, which no function reaches in one probe.
#[expect(clippy::cast_precision_loss, reason = "hit counts stay below 2^53")]
fn count_value(hits: u64) -> f64 {
    hits as f64
}

/// An ftrace script's output when it exited 0, else why not in words (its outcome and the
/// last line of its stderr, escaped and cut).
fn ftrace_answer(output: CommandOutput) -> Result<CommandOutput, String> {
    if output.outcome == ExitOutcome::Exited(0) {
        return Ok(output);
    }
    let stderr = output.stderr_text();
    let last = crate::text::last_lines(&stderr, 1).join("");
    Err(format!(
        "{}: {}",
        output.outcome,
        crate::text::untrusted(last.trim(), 300)
    ))
}
