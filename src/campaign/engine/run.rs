//! One workload run ([`RunId`]): build its command, execute it (reconnecting after a lost
//! connection, same index), judge its output, save what a reader needs under `raw/`, append its
//! rows to samples.csv and its record to the journal, then retry a failure per the workload's
//! `retries`.

use super::{
    AttemptId, Boot, Engine, MAX_RECONNECTS_PER_RUN,
    failure::{Failure, PointError, transport_failure},
    shell::run_command,
};
use crate::{
    campaign::{
        events::{CampaignEvent, Warning},
        extract::{RunFailure, evaluate},
        plan::PlannedCase,
    },
    interrupt,
    recipe::{Workload, ident::CpuList},
    results::{
        journal::{Event, now_rfc3339},
        kept::{CHECKS_DIR, KeptFile, keep, kept_path},
        layout::path_safe,
        samples::{Phase, SampleRow, Status},
    },
    target::transport::{CommandOutput, TransportError},
};

/// Which run of a point attempt: the case, warm-up or measured, the index (of how many), and
/// the try of that index.
#[derive(Clone, Copy, Debug)]
pub(super) struct RunId<'p> {
    pub(super) case: &'p PlannedCase,
    pub(super) phase: Phase,
    pub(super) index: u32,
    pub(super) of: u32,
    pub(super) retry: u32,
}

impl RunId<'_> {
    /// `workload `w[case]` at point `a` (sample 3)`, as failures name it.
    fn name(&self, at: AttemptId<'_>) -> String {
        format!(
            "workload `{}` at point `{}` ({} {})",
            self.case.display_name(),
            at.point.label,
            self.phase.word(),
            self.index
        )
    }

    /// The folder of its raw output under `raw/<point>-<attempt>/`.
    fn raw_name(&self) -> String {
        let case = &self.case.case.name;
        format!(
            "{}{}-{}{}-try{}",
            self.case.workload_name,
            if case.is_empty() {
                String::new()
            } else {
                format!("-{}", path_safe(case))
            },
            self.phase.as_str(),
            self.index,
            self.retry
        )
    }
}

/// How a run was judged.
struct Judged {
    status: Status,
    values: Vec<Option<f64>>,
    failure: Option<RunFailure>,
    /// Output bytes beyond `max_output`.
    dropped: u64,
}

impl Engine<'_> {
    pub(super) fn run_case(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        case: &PlannedCase,
    ) -> Result<(), PointError> {
        for (phase, of) in [(Phase::Warmup, case.warmup), (Phase::Sample, case.samples)] {
            for index in 1..=of {
                let run = RunId {
                    case,
                    phase,
                    index,
                    of,
                    retry: 0,
                };
                self.run_one(at, boot, run)?;
            }
        }
        Ok(())
    }

    /// Runs `run` until it succeeds or has used the workload's retries.
    fn run_one(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        mut run: RunId<'_>,
    ) -> Result<(), PointError> {
        let recipe = self.recipe;
        let workload = &recipe.workloads[run.case.workload];
        loop {
            let (command, output) = self.execute(at, boot, run, workload)?;
            let Some(failure) = self.record(at, boot, run, workload, &command, &output)? else {
                return Ok(());
            };
            if run.retry >= workload.retries {
                return Err(failure.into());
            }
            run.retry += 1;
            self.notice(Warning::Retrying {
                failure: crate::causes::one_line(&failure),
                retry: run.retry,
                retries: workload.retries,
            });
        }
    }

    /// Executes the run's command; a lost connection is recovered and the same run repeated
    /// (a few times at most).
    fn execute(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        run: RunId<'_>,
        workload: &Workload,
    ) -> Result<(String, CommandOutput), PointError> {
        let mut reconnects = 0;
        loop {
            if interrupt::requested() {
                return Err(PointError::Interrupted);
            }
            let env = self.aba_env(at, run.phase.as_str(), Some((run.case, run.index)));
            let command = run_command(
                &self.workdir,
                &env,
                workload.cpu.as_ref().map(CpuList::as_str),
                &run.case.run,
            );
            let result =
                self.transport
                    .run_workload(&command, workload.timeout, workload.max_output);
            if let Some(notice) = self.transport.take_notice() {
                self.warn(Some(&at.point.label), Warning::Transport(notice))?;
            }
            match result {
                Ok(output) => return Ok((command, output)),
                Err(TransportError::ConnectionLost { reason, .. })
                    if reconnects < MAX_RECONNECTS_PER_RUN =>
                {
                    reconnects += 1;
                    self.recover_connection(at, boot, &reason)?;
                }
                Err(e) => {
                    let doing = format!(
                        "workload `{}` at point `{}`",
                        run.case.display_name(),
                        at.point.label
                    );
                    return Err(transport_failure(e, doing));
                }
            }
        }
    }

    /// Writes what the run produced (rows, record, raw output when a reader needs it) and
    /// says whether it failed.
    fn record(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        run: RunId<'_>,
        workload: &Workload,
        command: &str,
        output: &CommandOutput,
    ) -> Result<Option<Failure>, PointError> {
        let time = now_rfc3339();
        let judged = judge(output, workload, at.point.kernel.as_str());
        // A failed run, one that left processes behind and one whose output was cut keep
        // their output for the reader.
        let keep_raw =
            judged.failure.is_some() || !output.leftovers.is_empty() || judged.dropped > 0;
        let raw = keep_raw.then(|| self.save_raw(at, &run.raw_name(), command, output));
        if !output.leftovers.is_empty() {
            self.notice(Warning::LeftBehind {
                run: run.case.display_name(),
                point: at.point.label.clone(),
                phase: run.phase,
                index: run.index,
                processes: output.leftovers.clone(),
            });
        }
        let kept = if workload.is_check() && judged.failure.is_none() {
            self.keep_check_output(at, run, output)
        } else {
            Vec::new()
        };
        let rows_sha256 = self.append_rows(at, boot, run, workload, &judged, &time)?;
        let values = workload
            .metrics
            .iter()
            .zip(&judged.values)
            .filter_map(|(metric, value)| Some((metric.name.to_string(), (*value)?)))
            .collect();
        self.journal.append(&Event::Sample {
            point: at.point.label.to_string(),
            attempt: at.attempt,
            workload: run.case.workload_name.to_string(),
            case: run.case.case.name.clone(),
            phase: run.phase,
            index: run.index,
            retry: run.retry,
            status: judged.status,
            elapsed_s: output.elapsed.as_secs_f64(),
            error: judged.failure.as_ref().map(ToString::to_string),
            raw: raw.clone(),
            leftovers: output.leftovers.clone(),
            dropped_bytes: (judged.dropped > 0).then_some(judged.dropped),
            values: Some(values),
            rows_sha256: Some(rows_sha256),
            kept,
        })?;
        self.observer.event(&CampaignEvent::Run {
            phase: run.phase,
            index: run.index,
            of: run.of,
            status: judged.status,
            elapsed: output.elapsed,
            eta: self.remaining_eta(),
        });
        Ok(judged.failure.map(|failure| Failure::Run {
            run: run.name(at),
            failure,
            raw: self
                .dir
                .root
                .join(raw.as_deref().unwrap_or_default())
                .display()
                .to_string(),
        }))
    }

    /// Keeps a passing check run's output as evidence (`checks/<point>/<name>.out` and
    /// `.err`): its numbers are what the pass rests on. A stream that cannot be written is
    /// said and left out of the record.
    fn keep_check_output(
        &mut self,
        at: AttemptId<'_>,
        run: RunId<'_>,
        output: &CommandOutput,
    ) -> Vec<KeptFile> {
        let mut name = run.case.workload_name.to_string();
        if !run.case.case.name.is_empty() {
            name = format!("{name}-{}", path_safe(&run.case.case.name));
        }
        if run.phase == Phase::Warmup {
            name = format!("{name}-warmup{}", run.index);
        } else if run.of > 1 {
            name = format!("{name}-{}", run.index);
        }
        let point = at.point.label.to_string();
        let mut kept = Vec::new();
        for (stderr, bytes, dropped) in [
            (false, &output.stdout, output.dropped[0]),
            (true, &output.stderr, output.dropped[1]),
        ] {
            let rel = kept_path(CHECKS_DIR, &point, &name, stderr);
            match keep(&self.dir.root, &rel, bytes, dropped) {
                Ok(file) => kept.push(file),
                Err(e) => self.notice(Warning::NotKept(format!("{rel}: {e}"))),
            }
        }
        kept
    }

    /// One row per metric, with the proven boot's facts; returns the link of `samples.csv`'s
    /// hash chain after them.
    fn append_rows(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        run: RunId<'_>,
        workload: &Workload,
        judged: &Judged,
        time: &str,
    ) -> Result<String, PointError> {
        let point = at.point;
        let rows: Vec<SampleRow<'_>> = workload
            .metrics
            .iter()
            .zip(&judged.values)
            .map(|(metric, value)| SampleRow {
                point: &point.label,
                order: point.order,
                attempt: at.attempt,
                kernel: point.kernel.as_str(),
                release: &boot.release,
                boot_id: &boot.boot_id,
                workload: run.case.workload_name.as_str(),
                case: &run.case.case.name,
                metric: metric.name.as_str(),
                phase: run.phase,
                index: run.index,
                retry: run.retry,
                status: judged.status,
                value: *value,
                unit: &metric.unit,
                time,
            })
            .collect();
        Ok(self.samples.append(&rows)?)
    }
}

/// The run's metrics, or why it does not count (noting output beyond `max_output`), on the
/// point's `kernel` (a check may be expected to fail there).
fn judge(output: &CommandOutput, workload: &Workload, kernel: &str) -> Judged {
    let dropped = output.dropped[0] + output.dropped[1];
    match evaluate(output, &workload.check, &workload.metrics, kernel) {
        Ok(values) => Judged {
            status: Status::Ok,
            values: values.into_iter().map(Some).collect(),
            failure: None,
            dropped,
        },
        Err(failure) => Judged {
            status: Status::Failed,
            values: vec![None; workload.metrics.len()],
            failure: Some(if dropped > 0 {
                failure.with_note(format!(
                    "the output was cut at max_output = {} bytes per stream ({dropped} more bytes were printed): what aba looks for may be in the part it did not keep; raise the workload's `max_output` (at most \"1GiB\") to keep it",
                    workload.max_output
                ))
            } else {
                failure
            }),
            dropped,
        },
    }
}
