//! The batch directory's journal, `batch.jsonl`: which campaign started, ended or stopped on
//! which target, in which results directory, so a killed `aba batch` resumes where it stood.
//!
//! Append-only JSON lines, each fsynced before the runner goes on, like a campaign's journal:
//! the first record is the header (format, the plan and every campaign's directory, fixed
//! before anything starts); then one `started` and one `ended` per campaign and target. A
//! campaign's own samples are in its own journal, never here, so this journal cannot lose or
//! duplicate a sample; it only says which campaign directories exist and whether each was
//! left finished. A last line cut by a kill is ignored when read.

use std::{
    collections::BTreeMap,
    fs::{File, OpenOptions},
    io::Write as _,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The journal's file name in the batch directory.
pub const BATCH_JOURNAL: &str = "batch.jsonl";

/// The journal format this aba writes and reads.
pub const BATCH_FORMAT: u32 = 1;

/// Why the batch journal could not be read or written.
#[derive(Debug, Error)]
pub enum BatchJournalError {
    /// The file could not be read or written.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// `read`, `append to` …
        action: &'static str,
        /// The journal.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a record.
    #[error("{}:{line} is not a batch journal record", path.display())]
    Parse {
        /// The journal.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// No header, or another format.
    #[error("{} does not start with a batch header of format {BATCH_FORMAT}", path.display())]
    Header {
        /// The journal.
        path: PathBuf,
    },
}

/// One campaign of the batch as fixed at its start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignEntry {
    /// 1-based position in the plan.
    pub number: usize,
    /// The recipe file (absolute).
    pub recipe: String,
    /// The recipe's name.
    pub name: String,
    /// Its directory in the batch directory: a multi-target parent (`targets.json`).
    pub dir: String,
    /// Its targets in the plan's order; each has `dir/<target>/`.
    pub targets: Vec<String>,
    /// The plan's `allow_tuning`.
    pub allow_tuning: bool,
    /// The plan's `wait`.
    pub wait: bool,
    /// The plan's `yes`.
    pub yes: bool,
    /// The plan's `no_profile`.
    pub no_profile: bool,
    /// The plan's `kernels` (`LABEL=RELEASE`), for a campaign the resume starts.
    pub kernels: Vec<String>,
    /// The plan's `params` (`NAME=VALUE`), likewise; absent in older batch journals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<String>,
}

/// How one campaign ended on one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every point done.
    Finished,
    /// Finished, and a published result was not reproduced (exit 4).
    NotReproduced,
    /// Stopped on a failure: resumable (exit 3).
    Stopped,
    /// Its start was refused: another campaign holds the target, or its reservation was
    /// refused; nothing was created.
    Refused,
    /// Any other error (exit 1): the recipe did not load, the target could not be reached.
    Failed,
    /// Stopped by Ctrl-C or SIGTERM: resumable (exit 130).
    Interrupted,
}

impl Ended {
    /// Whether the campaign ran to its end (nothing for a resume to do).
    #[must_use]
    pub fn complete(self) -> bool {
        matches!(self, Ended::Finished | Ended::NotReproduced)
    }

    /// The word the summary uses.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Ended::Finished => "finished",
            Ended::NotReproduced => "finished, not reproduced",
            Ended::Stopped => "stopped",
            Ended::Refused => "refused",
            Ended::Failed => "failed",
            Ended::Interrupted => "interrupted",
        }
    }
}

/// One record of the batch journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum BatchEvent {
    /// The first record.
    Batch {
        /// [`BATCH_FORMAT`].
        format: u32,
        /// The batch's name.
        name: String,
        /// The plan file as given (absolute).
        plan: String,
        /// The plan's SHA-256 (its copy is `plan.toml` in the batch directory).
        plan_sha256: String,
        /// The aba version.
        aba_version: String,
        /// When (RFC 3339).
        time: String,
        /// Every campaign, in plan order.
        campaigns: Vec<CampaignEntry>,
    },
    /// A campaign started (or resumed) on a target.
    Started {
        /// The campaign's number.
        campaign: usize,
        /// The target.
        target: String,
        /// Its results directory, relative to the batch directory.
        dir: String,
        /// Whether its directory existed already (`aba resume` logic).
        resumed: bool,
        /// When (RFC 3339, microseconds).
        time: String,
    },
    /// A campaign ended on a target.
    Ended {
        /// The campaign's number.
        campaign: usize,
        /// The target.
        target: String,
        /// How.
        outcome: Ended,
        /// aba's exit code for it.
        code: u8,
        /// Why, when it did not finish: the error in one line.
        reason: Option<String>,
        /// When (RFC 3339, microseconds).
        time: String,
    },
    /// The batch-wide `on_finish` / `on_failure` ran.
    Notified {
        /// The command as written.
        command: String,
        /// Why it did not succeed, when it did not.
        error: Option<String>,
        /// When.
        time: String,
    },
}

/// One campaign on one target, as the journal tells it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobRecord {
    /// Every start, in order (a resumed job has several).
    pub starts: Vec<String>,
    /// The start its time counts from: the first, or the first after a refused start (a
    /// refused start waited for nothing on the target: the campaign ran from the next one).
    pub counted_start: Option<String>,
    /// The last end: outcome, code, reason, time; `None` when the last start has no end
    /// (running, or the runner was killed) or it never started.
    pub ended: Option<(Ended, u8, Option<String>, String)>,
}

/// A read batch journal.
#[derive(Clone, Debug)]
pub struct BatchJournal {
    /// Every record, header first.
    pub events: Vec<BatchEvent>,
}

impl BatchJournal {
    /// `dir/batch.jsonl`.
    #[must_use]
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(BATCH_JOURNAL)
    }

    /// Whether `dir` is a batch directory.
    #[must_use]
    pub fn is_batch(dir: &Path) -> bool {
        BatchJournal::path_in(dir).is_file()
    }

    /// Reads the journal in `dir`; a last line cut short by a kill is ignored.
    pub fn read(dir: &Path) -> Result<BatchJournal, BatchJournalError> {
        let path = BatchJournal::path_in(dir);
        // Someone else's batch directory may hold a link here (to a tester's file, whose
        // lines a parse error would quote): read only a regular file, never through a link.
        let text =
            crate::input::read_data_text(&path, 64 << 20, "batch journal").map_err(|source| {
                BatchJournalError::Io {
                    action: "read",
                    path: path.clone(),
                    source,
                }
            })?;
        let lines: Vec<&str> = text.lines().collect();
        let mut events = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<BatchEvent>(line) {
                Ok(e) => events.push(e),
                // Only the last line can be cut by a kill between write and fsync.
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
                Err(source) => {
                    return Err(BatchJournalError::Parse {
                        path,
                        line: i + 1,
                        source,
                    });
                }
            }
        }
        match events.first() {
            Some(BatchEvent::Batch { format, .. }) if *format == BATCH_FORMAT => {
                Ok(BatchJournal { events })
            }
            _ => Err(BatchJournalError::Header { path }),
        }
    }

    /// The header's campaigns.
    #[must_use]
    pub fn campaigns(&self) -> &[CampaignEntry] {
        match self.events.first() {
            Some(BatchEvent::Batch { campaigns, .. }) => campaigns,
            _ => &[],
        }
    }

    /// The header's name and start time.
    #[must_use]
    pub fn header(&self) -> (&str, &str) {
        match self.events.first() {
            Some(BatchEvent::Batch { name, time, .. }) => (name, time),
            _ => ("", ""),
        }
    }

    /// Every (campaign, target)'s record.
    #[must_use]
    pub fn jobs(&self) -> BTreeMap<(usize, String), JobRecord> {
        let mut jobs: BTreeMap<(usize, String), JobRecord> = BTreeMap::new();
        for e in &self.events {
            match e {
                BatchEvent::Started {
                    campaign,
                    target,
                    time,
                    ..
                } => {
                    let job = jobs.entry((*campaign, target.clone())).or_default();
                    if job.counted_start.is_none()
                        || matches!(job.ended, Some((Ended::Refused, ..)))
                    {
                        job.counted_start = Some(time.clone());
                    }
                    job.starts.push(time.clone());
                    job.ended = None;
                }
                BatchEvent::Ended {
                    campaign,
                    target,
                    outcome,
                    code,
                    reason,
                    time,
                } => {
                    let job = jobs.entry((*campaign, target.clone())).or_default();
                    job.ended = Some((*outcome, *code, reason.clone(), time.clone()));
                }
                BatchEvent::Batch { .. } | BatchEvent::Notified { .. } => {}
            }
        }
        jobs
    }
}

/// Appends records to the batch journal, each fsynced.
#[derive(Debug)]
pub struct BatchWriter {
    path: PathBuf,
    file: File,
}

impl BatchWriter {
    /// Creates the journal in `dir` with its header.
    pub fn create(dir: &Path, header: &BatchEvent) -> Result<BatchWriter, BatchJournalError> {
        let path = BatchJournal::path_in(dir);
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|source| BatchJournalError::Io {
                action: "create",
                path: path.clone(),
                source,
            })?;
        let mut writer = BatchWriter { path, file };
        writer.append(header)?;
        Ok(writer)
    }

    /// Opens the journal in `dir` for appending.
    pub fn open(dir: &Path) -> Result<BatchWriter, BatchJournalError> {
        let path = BatchJournal::path_in(dir);
        let io = |action, source| BatchJournalError::Io {
            action,
            path: path.clone(),
            source,
        };
        let file = crate::results::atomic::open_append(&path, false).map_err(|e| io("open", e))?;
        // A line cut by a kill is dropped, so the next record starts on its own line and the
        // cut one never becomes a middle line that reads as damage.
        let text = std::fs::read(&path).map_err(|e| io("read", e))?;
        if text.last().is_some_and(|b| *b != b'\n') {
            let keep = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64)
                .and_then(|()| file.sync_data())
                .map_err(|e| io("repair", e))?;
        }
        Ok(BatchWriter { path, file })
    }

    /// Appends `event` and fsyncs.
    pub fn append(&mut self, event: &BatchEvent) -> Result<(), BatchJournalError> {
        let mut line = serde_json::to_string(event).map_err(|source| BatchJournalError::Parse {
            path: self.path.clone(),
            line: 0,
            source,
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|source| BatchJournalError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::{BatchEvent, BatchJournal, BatchWriter, Ended};

    #[test]
    fn a_cut_last_line_is_ignored_and_jobs_are_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let header = BatchEvent::Batch {
            format: 1,
            name: "n".into(),
            plan: "p".into(),
            plan_sha256: "x".into(),
            aba_version: "0".into(),
            time: "t0".into(),
            campaigns: Vec::new(),
        };
        let mut w = BatchWriter::create(dir.path(), &header).expect("create");
        w.append(&BatchEvent::Started {
            campaign: 1,
            target: "a".into(),
            dir: "01-x/a".into(),
            resumed: false,
            time: "t1".into(),
        })
        .expect("append");
        w.append(&BatchEvent::Ended {
            campaign: 1,
            target: "a".into(),
            outcome: Ended::Stopped,
            code: 3,
            reason: Some("lost".into()),
            time: "t2".into(),
        })
        .expect("append");
        drop(w);
        let path = BatchJournal::path_in(dir.path());
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("{\"event\":\"started\",\"camp");
        std::fs::write(&path, text).expect("write");
        let journal = BatchJournal::read(dir.path()).expect("read");
        let jobs = journal.jobs();
        let job = &jobs[&(1, "a".to_owned())];
        assert_eq!(job.counted_start.as_deref(), Some("t1"));
        assert_eq!(job.ended.as_ref().map(|e| e.0), Some(Ended::Stopped));
        // Appending after the cut starts a new line.
        BatchWriter::open(dir.path())
            .expect("open")
            .append(&BatchEvent::Started {
                campaign: 1,
                target: "a".into(),
                dir: "01-x/a".into(),
                resumed: true,
                time: "t3".into(),
            })
            .expect("append");
        let jobs = BatchJournal::read(dir.path()).expect("read").jobs();
        assert_eq!(jobs[&(1, "a".to_owned())].ended, None);
        assert_eq!(jobs[&(1, "a".to_owned())].starts.len(), 2);
    }

    /// A campaign refused at its first start (another campaign held the target) and run by
    /// `batch resume` hours later is timed from the start that ran it (issue 37, item 7): the
    /// summary said it took the hours between.
    #[test]
    fn a_campaign_is_timed_from_the_start_after_a_refused_one() {
        let start = |time: &str| BatchEvent::Started {
            campaign: 1,
            target: "a".into(),
            dir: "01-x/a".into(),
            resumed: false,
            time: time.into(),
        };
        let end = |outcome, time: &str| BatchEvent::Ended {
            campaign: 1,
            target: "a".into(),
            outcome,
            code: 0,
            reason: None,
            time: time.into(),
        };
        let journal = BatchJournal {
            events: vec![
                start("t1"),
                end(Ended::Refused, "t2"),
                start("t3"),
                end(Ended::Stopped, "t4"),
                start("t5"),
                end(Ended::Finished, "t6"),
            ],
        };
        let jobs = journal.jobs();
        let job = &jobs[&(1, "a".to_owned())];
        // A stopped run counts: it ran on the target, and its resume goes on with it.
        assert_eq!(job.counted_start.as_deref(), Some("t3"));
        assert_eq!(job.starts.len(), 3);
    }
}
