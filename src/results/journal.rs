//! The journal: an append-only, versioned JSON-lines log of everything a campaign did, fsynced
//! record by record. It is the campaign's state: `status`, `resume` and `report` replay it.
//!
//! A runner killed mid-write leaves at most one partial last line; readers skip it (and say so)
//! and writers cut it off before appending, so the journal always stays parseable.

use std::{
    collections::BTreeMap,
    fs::File,
    io::{BufRead, BufReader, Read as _, Write},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::stats::sequential::{ComparisonState, Decision, Spending};

use crate::{
    kernel::switch::SwitchKind,
    recipe::{
        Recipe,
        scoped_limits::{LimitOverrides, SeriesLimits},
    },
    results::samples::{Phase, Status},
};

/// Journal format version written in the first record; readers refuse other versions.
pub const JOURNAL_FORMAT: u32 = 1;

/// Longest journal record read back, in bytes (16 MiB). aba's records are at most a few KiB
/// (a stop reason quotes 40 console lines); a longer line was not written by aba, and is
/// refused after reading that much of it, never held whole.
pub const RECORD_BYTES: usize = 16 << 20;

/// Why the journal could not be read or written.
#[derive(Debug, Error)]
pub enum JournalError {
    /// An I/O error on the journal file.
    #[error("cannot {action} journal {}", path.display())]
    Io {
        /// `read`, `append to`, …
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A complete line that is not a journal record.
    #[error("journal {}:{line}: not a journal record", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A line longer than [`RECORD_BYTES`].
    #[error("journal {}:{line}: a record longer than {} (aba writes records of a few KiB); this journal was not written by aba or is damaged", path.display(), crate::text::bytes(RECORD_BYTES as u64))]
    TooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
    },
    /// The first record is missing or of another format version.
    #[error("journal {} has format {found:?}; this aba reads format {JOURNAL_FORMAT}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What the first record said, if anything.
        found: Option<u32>,
    },
}

/// Key/value facts about the machine, recorded as they were read.
pub type Facts = BTreeMap<String, String>;

/// The preregistered verdict limits of a campaign, as its journal records them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// `gate_pct`.
    pub gate_pct: f64,
    /// `drift_margin`.
    pub drift_margin: f64,
    /// `max_drift_pct`, when the recipe sets it (older aba recorded its default, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drift_pct: Option<f64>,
    /// `max_cv_pct`.
    pub max_cv_pct: f64,
    /// The limits `[[workload]]` and `[[workload.metric]]` tables set, in recipe order;
    /// absent in journals of older aba, which had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scoped: Vec<ScopedLimits>,
}

/// The limits one workload (`metric` absent) or one of its metrics set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScopedLimits {
    /// Workload name.
    pub workload: String,
    /// Metric name; absent for the workload's own table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `gate_pct`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_pct: Option<f64>,
    /// `max_drift_pct`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drift_pct: Option<f64>,
    /// `max_cv_pct`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cv_pct: Option<f64>,
}

impl ScopedLimits {
    fn new(workload: &str, metric: Option<&str>, o: &LimitOverrides) -> ScopedLimits {
        ScopedLimits {
            workload: workload.to_owned(),
            metric: metric.map(str::to_owned),
            gate_pct: o.gate_pct,
            max_drift_pct: o.max_drift_pct,
            max_cv_pct: o.max_cv_pct,
        }
    }

    /// The overrides as the recipe model holds them.
    #[must_use]
    pub fn overrides(&self) -> LimitOverrides {
        LimitOverrides {
            gate_pct: self.gate_pct,
            max_drift_pct: self.max_drift_pct,
            max_cv_pct: self.max_cv_pct,
        }
    }
}

impl Limits {
    /// The limits `recipe` judges its series with: `[analysis]`'s and every workload's and
    /// metric's own.
    #[must_use]
    pub fn of(recipe: &Recipe) -> Limits {
        let a = &recipe.analysis;
        let mut scoped = Vec::new();
        for w in &recipe.workloads {
            if !w.limits.is_empty() {
                scoped.push(ScopedLimits::new(w.name.as_str(), None, &w.limits));
            }
            for m in w.metrics.iter().filter(|m| !m.limits.is_empty()) {
                scoped.push(ScopedLimits::new(
                    w.name.as_str(),
                    Some(m.name.as_str()),
                    &m.limits,
                ));
            }
        }
        Limits {
            gate_pct: a.gate_pct,
            drift_margin: a.drift_margin,
            max_drift_pct: a.max_drift_pct,
            max_cv_pct: a.max_cv_pct,
            scoped,
        }
    }

    /// What `workload` (and `metric`, when given) sets; nothing when it sets no limit.
    #[must_use]
    pub fn overrides(&self, workload: &str, metric: Option<&str>) -> LimitOverrides {
        self.scoped
            .iter()
            .find(|s| s.workload == workload && s.metric.as_deref() == metric)
            .map(ScopedLimits::overrides)
            .unwrap_or_default()
    }

    /// The limits of `metric` of `workload` as these limits resolve them.
    #[must_use]
    pub fn series(&self, workload: &str, metric: &str) -> SeriesLimits {
        SeriesLimits::resolve(
            self.gate_pct,
            self.max_drift_pct,
            self.max_cv_pct,
            &self.overrides(workload, None),
            &self.overrides(workload, Some(metric)),
        )
    }
}

/// One comparison at a look of an extended campaign.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LookComparison {
    /// `workload[case] metric`.
    pub series: String,
    /// Candidate kernel.
    pub candidate: String,
    /// Where it stood.
    pub state: ComparisonState,
    /// Its change in percent.
    pub change_pct: f64,
    /// Its boot-level interval at the look's level, when bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<(f64, f64)>,
}

/// A point an extended campaign appended to its plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppendedPoint {
    /// Point label, unique in the campaign.
    pub label: String,
    /// 1-based position in the whole sequence.
    pub order: usize,
    /// The kernel.
    pub kernel: String,
}

/// Which reservation command ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReservationAction {
    /// The machine was reserved before the campaign changed it.
    Reserve,
    /// It was given back.
    Release,
}

/// One journal record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// First record: what this campaign is.
    Campaign {
        /// [`JOURNAL_FORMAT`].
        format: u32,
        /// aba's version.
        aba: String,
        /// Recipe name.
        name: String,
        /// SHA-256 of the recipe and its files.
        recipe_sha256: String,
        /// Target name.
        target: String,
        /// Point labels in plan order.
        points: Vec<String>,
        /// When the campaign was created (RFC 3339, UTC).
        time: String,
        /// The verdict limits of `[analysis]` the campaign ran with, so that `aba report` can
        /// tell which were edited after the run; absent in older journals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limits: Option<Limits>,
    },
    /// Which noise profile the campaign uses (issue 10 §2): copied into the results directory
    /// as `profile.toml`, its SHA-256 recorded so that `aba report` recomputes the same
    /// analysis; or none, and why. Written after the header; absent in older journals.
    Profile {
        /// The target's profile directory that was searched.
        dir: String,
        /// The profile file chosen; absent when none is used.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        /// SHA-256 of the copy's bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha256: Option<String>,
        /// The profiles of the directory that were not chosen, each with why.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        not_used: Vec<String>,
        /// `--no-profile`: none was looked for.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disabled: bool,
    },
    /// The kernels the campaign boots and where each release, image and initrd came from
    /// (recipe, inventory, command line; `aba::kernel::binding`). Written after the header
    /// when something bound a label; absent means "as the recipe said".
    Kernels {
        /// Every kernel of the recipe, in its order.
        kernels: Vec<crate::kernel::binding::BoundKernel>,
    },
    /// The values of the recipe's `[params]` the campaign uses and where each came from
    /// (recipe default, inventory, command line; `aba::recipe::params`). Written after the
    /// header when the recipe declares parameters; resume and report read the recipe with
    /// these values, never with the inventory of the moment.
    Params {
        /// Every parameter of the recipe, in its order.
        params: Vec<crate::recipe::params::BoundParam>,
    },
    /// The campaign is a calibration (`aba calibrate`): the recipe's baseline booted `boots`
    /// times, whose analysis becomes a noise profile when it finishes. Written after the
    /// header.
    Calibration {
        /// The calibrated recipe's name.
        recipe: String,
        /// Its SHA-256 (text and files).
        recipe_sha256: String,
        /// Boots of the baseline.
        boots: u32,
        /// Where the profile is written.
        profile: String,
    },
    /// `aba resume --amend` replaced the recipe copy: only what unfinished points use changed.
    Amended {
        /// SHA-256 of the recipe and files before.
        previous_sha256: String,
        /// SHA-256 of the recipe and files from now on.
        sha256: String,
        /// The file the amended recipe came from.
        recipe: String,
        /// What changed, in words.
        changes: Vec<String>,
        /// When.
        time: String,
    },
    /// The inventory's `reserve` or `release` command ran on the host: a lab scheduler holds
    /// the machine for this campaign, or got it back (`aba::campaign::reservation`).
    Reservation {
        /// Which command.
        action: ReservationAction,
        /// The command as the inventory wrote it.
        command: String,
        /// The last lines of its output (stderr lines start with `stderr: `).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        output: String,
        /// How it failed, when it did (a failed `reserve` never reaches the journal: the
        /// campaign does not start).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// When it ended.
        time: String,
    },
    /// `aba resume` picked the campaign up again.
    Resumed {
        /// When.
        time: String,
    },
    /// The kernel command line of the target's default boot, without `BOOT_IMAGE`/`initrd`,
    /// captured at the first connection; kexec builds every command line from it.
    BaseCmdline {
        /// The parameters.
        cmdline: String,
    },
    /// A point attempt starts.
    PointStarted {
        /// Point label.
        point: String,
        /// 1-based attempt.
        attempt: u32,
        /// When.
        time: String,
    },
    /// The target is switching to the point's kernel.
    Switching {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// `kexec`, `grub-reboot`, `power`, … (aba 0.1 wrote `grubreboot`, read as
        /// `grub-reboot`).
        #[serde(deserialize_with = "method_compat")]
        method: SwitchKind,
        /// `boot_id` before the switch, when known.
        previous_boot_id: Option<String>,
    },
    /// The boot was proven: boot_id, release and cmdline match.
    BootProven {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// `/proc/sys/kernel/random/boot_id`.
        boot_id: String,
        /// `uname -r`.
        release: String,
        /// `/proc/cmdline`.
        cmdline: String,
        /// Seconds from the switch trigger to a completed proof (0 without a switch).
        switch_s: f64,
        /// Seconds from the switch trigger to the login into the new boot.
        login_s: f64,
        /// Seconds the proof's own commands took after that login (reading `boot_id`,
        /// `uname -r` and `/proc/cmdline`); absent without a switch and in older journals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proof_s: Option<f64>,
        /// Host time the proof completed (RFC 3339, UTC, microseconds); absent in older
        /// journals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proven_at: Option<String>,
    },
    /// A kernel built on the host was put on the target before the switch to it (files the
    /// target already held with the same SHA-256 are listed with `sent: false`). `aba clean`
    /// removes what these records list.
    Installed {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// The kernel's label.
        kernel: String,
        /// Each file or folder.
        installed: Vec<crate::build::install::Installed>,
    },
    /// After `boot_proven`, for a kernel built on the host: the running build is the one
    /// installed (`/proc/version` names the image's build; the config's SHA-256 compared).
    BuildProven {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// What proved it.
        #[serde(flatten)]
        proof: crate::build::proof::BuildProof,
    },
    /// Settings applied and read back.
    Tuned {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// Setting → value read back.
        settings: Facts,
        /// Knobs that are absent on this machine and optional in the recipe.
        skipped: Vec<String>,
    },
    /// The values tuning found on this boot, journaled before its first write: what `aba
    /// resume` and `aba restore` put back on a machine that was not rebooted since. Written
    /// once per boot (a later tuning of the same boot would find aba's own values).
    TuningSaved {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// The boot the values belong to: a reboot resets them.
        boot_id: String,
        /// Each file (`/proc/sys/…`, `/sys/…/scaling_governor`) with its content before the
        /// change, in the order they are written.
        values: Vec<SavedValue>,
        /// When.
        time: String,
    },
    /// The values of the last `tuning_saved` were written back (or need not be).
    TuningRestored {
        /// When.
        time: String,
        /// Why nothing was written, when nothing was (the target rebooted since).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// One workload run finished (successfully or not); its rows are in `samples.csv`.
    Sample {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// Workload.
        workload: String,
        /// Case.
        case: String,
        /// Warm-up or measured.
        phase: Phase,
        /// 1-based index within the phase.
        index: u32,
        /// 0 for the first try of this index, then 1, 2, … for retries after failures.
        retry: u32,
        /// `ok` or `failed`.
        status: Status,
        /// Wall seconds of the run.
        elapsed_s: f64,
        /// Why it failed, if it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Saved raw output (relative to the results directory), for failed runs and runs
        /// that left processes behind or printed more than `max_output`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<String>,
        /// Processes the run left behind, killed when it exited (`PID command line`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        leftovers: Vec<String>,
        /// Output bytes beyond `max_output` (stdout and stderr together), counted, not kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dropped_bytes: Option<u64>,
        /// The value of each metric the run measured, as its row in `samples.csv` holds it
        /// (empty for a failed run): `aba verify` compares every row with it. Absent in
        /// journals of older aba, whose rows cannot be verified value by value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<BTreeMap<String, f64>>,
        /// The link of `samples.csv`'s hash chain after the run's last row
        /// (`results::row_chain`, hex): witnesses every byte of the file up to there. Absent
        /// in journals of older aba.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rows_sha256: Option<String>,
    },
    /// The connection dropped; what aba found when it came back.
    ConnectionLost {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// What was observed.
        reason: String,
        /// Whether boot_id was unchanged after reconnecting (None: could not reconnect).
        same_boot: Option<bool>,
    },
    /// A point attempt finished and all its rows are valid.
    PointDone {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// New kernel warnings in dmesg during the point.
        dmesg_warnings: u32,
        /// Failed systemd units at the end of the point.
        failed_units: Vec<String>,
        /// When.
        time: String,
    },
    /// A point attempt failed; its rows are invalid.
    PointFailed {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// Kernel label.
        kernel: String,
        /// What went wrong.
        reason: String,
        /// When.
        time: String,
    },
    /// A point attempt that never finished was discarded on resume; its rows are marked.
    PointDiscarded {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// Rows marked `discarded` in `samples.csv`.
        rows: u64,
    },
    /// aba's one-shot boot-loader files and selections (a GRUB `custom.cfg` and `next_entry`,
    /// a BLS entry, its copies and `LoaderEntryOneShot`) were found and removed: after the
    /// boot they were written for was proven (with its point), or before the first point and
    /// at the end of a run (without one), which is how a killed run's leftovers go.
    BootEntriesRemoved {
        /// Point label, when removed after that point's boot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        point: Option<String>,
        /// Its attempt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
        /// What was removed, one item each (`removed /boot/grub/custom.cfg`).
        removed: Vec<String>,
        /// When.
        time: String,
    },
    /// A remark for the report (a skipped knob, a slow boot, a reconnect).
    Warning {
        /// Point label, if the warning belongs to one.
        point: Option<String>,
        /// The text.
        text: String,
    },
    /// The campaign stopped before the end; it is resumable.
    Stopped {
        /// Why.
        reason: String,
        /// When.
        time: String,
    },
    /// Interrupted by a signal; resumable.
    Interrupted {
        /// When.
        time: String,
    },
    /// A look of a campaign that extends itself (`[analysis] extend`): after the planned
    /// points and after every appended unit, each comparison was judged at the look's
    /// boundary. When the decision is to extend, the appended points are in this record, so
    /// they are journaled before they run and a resumed campaign runs the same ones.
    Look {
        /// 1-based look.
        look: u32,
        /// The most looks the budget allows.
        of: u32,
        /// The spending of the 5% over the looks.
        spending: Spending,
        /// α of this look (two-sided): the intervals were at 1 − α.
        alpha: f64,
        /// What the look decided.
        decision: Decision,
        /// Why, in words.
        reason: String,
        /// Every comparison that drives the decision and where it stood.
        comparisons: Vec<LookComparison>,
        /// The points appended when the decision is to extend, in boot order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        appended: Vec<AppendedPoint>,
        /// When.
        time: String,
    },
    /// Every point is done.
    Finished {
        /// When.
        time: String,
    },
}

/// A `switching` record's method: the inventory's spelling, or aba 0.1's `grubreboot`.
fn method_compat<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SwitchKind, D::Error> {
    let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
    if text == "grubreboot" {
        return Ok(SwitchKind::GrubReboot);
    }
    SwitchKind::deserialize(serde::de::value::StrDeserializer::<D::Error>::new(&text))
}

/// A file's content before tuning changed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedValue {
    /// The file on the target.
    pub path: String,
    /// Its content before the change.
    pub value: String,
}

/// Values tuning changed that are not restored yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRestore {
    /// The boot they were saved in.
    pub boot_id: String,
    /// (file, previous content), in write order.
    pub values: Vec<(String, String)>,
}

/// What the analysis needs to know of a `sample` record to leave it out: valid JSON (checked
/// while parsing), the tag, the status and the retry number. Other fields are skipped
/// unchecked (the analysis reads them from `samples.csv`).
#[derive(Deserialize)]
struct SampleKind<'a> {
    #[serde(borrow)]
    event: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    status: std::borrow::Cow<'a, str>,
    retry: u32,
    #[serde(default)]
    leftovers: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    dropped_bytes: Option<u64>,
}

/// A `sample` record (as aba writes them: the event tag first) of a run that succeeded at
/// its first try and left nothing to remark (no leftover processes, no output cut). Anything
/// else, malformed lines included, goes through the full parse, which keeps it or reports it.
fn is_plain_sample(line: &[u8]) -> bool {
    line.starts_with(br#"{"event":"sample","#)
        && serde_json::from_slice::<SampleKind<'_>>(line).is_ok_and(|f| {
            f.event == "sample"
                && f.status == "ok"
                && f.retry == 0
                && f.leftovers.is_none()
                && f.dropped_bytes.is_none()
        })
}

/// Appends records and fsyncs each one before returning.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// Tests: how many more appends succeed before every one fails as on a full disk.
    #[cfg(test)]
    pub(crate) fail_after: Option<usize>,
}

impl JournalWriter {
    /// Opens `path` for appending, creating it; a partial last line (from a killed writer) is
    /// cut off first.
    pub fn open(path: &Path) -> Result<JournalWriter, JournalError> {
        let io = |source| JournalError::Io {
            action: "open",
            path: path.to_path_buf(),
            source,
        };
        crate::results::atomic::truncate_partial_line(path).map_err(io)?;
        let file = crate::results::atomic::open_append(path, true).map_err(io)?;
        Ok(JournalWriter {
            file,
            path: path.to_path_buf(),
            #[cfg(test)]
            fail_after: None,
        })
    }

    /// Appends one record and makes it durable.
    pub fn append(&mut self, event: &Event) -> Result<(), JournalError> {
        #[cfg(test)]
        crate::results::atomic::injected_failure(&mut self.fail_after).map_err(|source| {
            JournalError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            }
        })?;
        let mut line = serde_json::to_vec(event).expect("invariant: events serialise");
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.sync_data())
            .map_err(|source| JournalError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            })
    }
}

/// A journal as read back.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    /// Every complete record, in order.
    pub events: Vec<Event>,
    /// True when a partial last line was skipped.
    pub truncated_tail: bool,
}

impl Journal {
    /// Reads the journal at `path`; the first record must be a `campaign` record of
    /// [`JOURNAL_FORMAT`].
    pub fn read(path: &Path) -> Result<Journal, JournalError> {
        Journal::read_filtered(path, false)
    }

    /// Like [`Journal::read`], but leaves out the `sample` records of runs that succeeded at
    /// their first try (`status` ok, `retry` 0) once each is known to be valid JSON with that
    /// tag, status and retry: they say nothing `samples.csv` does not, and a campaign of a
    /// million samples has a million of them (about 300 MB as events, and most of the time
    /// `aba report` would spend). The analysis needs only the other records.
    pub fn read_for_analysis(path: &Path) -> Result<Journal, JournalError> {
        Journal::read_filtered(path, true)
    }

    fn read_filtered(path: &Path, skip_plain_samples: bool) -> Result<Journal, JournalError> {
        let mut journal = Journal::default();
        journal.truncated_tail = visit_lines(path, 0, |number, line| {
            if skip_plain_samples && is_plain_sample(line) {
                return Ok(());
            }
            journal.events.push(parse_line(path, number, line)?);
            Ok(())
        })?;
        match journal.events.first() {
            Some(Event::Campaign { format, .. }) if *format == JOURNAL_FORMAT => Ok(journal),
            Some(Event::Campaign { format, .. }) => Err(JournalError::Format {
                path: path.to_path_buf(),
                found: Some(*format),
            }),
            _ => Err(JournalError::Format {
                path: path.to_path_buf(),
                found: None,
            }),
        }
    }

    /// The campaign record.
    pub fn header(&self) -> Option<&Event> {
        self.events.first()
    }

    /// The kernels recorded when the campaign started; `None` for a campaign nothing bound,
    /// or written by an aba older than bindings: the recipe's kernels, as written.
    pub fn kernels(&self) -> Option<&[crate::kernel::binding::BoundKernel]> {
        self.events.iter().find_map(|e| match e {
            Event::Kernels { kernels } => Some(kernels.as_slice()),
            _ => None,
        })
    }

    /// The parameter values recorded when the campaign started; `None` for a recipe without
    /// `[params]`, or a journal older than them.
    pub fn params(&self) -> Option<&[crate::recipe::params::BoundParam]> {
        self.events.iter().find_map(|e| match e {
            Event::Params { params } => Some(params.as_slice()),
            _ => None,
        })
    }

    /// The SHA-256 the recipe copy must have now: the last amendment's, else the header's.
    pub fn recipe_sha256(&self) -> Option<&str> {
        self.events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Amended { sha256, .. } => Some(sha256.as_str()),
                _ => None,
            })
            .or_else(|| match self.header() {
                Some(Event::Campaign { recipe_sha256, .. }) => Some(recipe_sha256.as_str()),
                _ => None,
            })
    }

    /// Replays the records into the state of every point.
    pub fn state(&self) -> CampaignState {
        let mut state = CampaignState::default();
        for event in &self.events {
            match event {
                Event::Campaign { points, .. } => {
                    state.points = points
                        .iter()
                        .map(|p| PointState {
                            label: PointLabel::new(p.clone()),
                            ..PointState::default()
                        })
                        .collect();
                }
                Event::BaseCmdline { cmdline } => state.base_cmdline = Some(cmdline.clone()),
                Event::Look {
                    look,
                    decision,
                    appended,
                    ..
                } => {
                    state.looks.push((*look, *decision));
                    for point in appended {
                        state.appended.push(point.clone());
                        state.points.push(PointState {
                            label: PointLabel::new(point.label.clone()),
                            ..PointState::default()
                        });
                    }
                }
                Event::PointStarted { point, attempt, .. } => {
                    if let Some(p) = state.point_mut(point) {
                        p.attempts = p.attempts.max(*attempt);
                        p.open = Some(*attempt);
                    }
                }
                Event::BootProven {
                    point,
                    attempt,
                    boot_id,
                    release,
                    ..
                } => {
                    if let Some(p) = state.point_mut(point) {
                        p.boots.push(ProvenBoot {
                            attempt: *attempt,
                            boot_id: boot_id.clone(),
                            release: release.clone(),
                        });
                    }
                }
                Event::PointDone { point, attempt, .. } => {
                    if let Some(p) = state.point_mut(point) {
                        p.done = Some(*attempt);
                        p.open = None;
                    }
                }
                Event::PointFailed {
                    point,
                    attempt,
                    reason,
                    ..
                } => {
                    if let Some(p) = state.point_mut(point) {
                        p.failures.push((*attempt, reason.clone()));
                        p.open = None;
                    }
                }
                Event::PointDiscarded { point, attempt, .. } => {
                    if let Some(p) = state.point_mut(point) {
                        p.discarded.push(*attempt);
                        if p.open == Some(*attempt) {
                            p.open = None;
                        }
                    }
                }
                // The first record of a boot holds the machine's own values.
                Event::TuningSaved {
                    boot_id, values, ..
                } if state
                    .pending_restore
                    .as_ref()
                    .is_none_or(|p| p.boot_id != *boot_id) =>
                {
                    state.pending_restore = Some(PendingRestore {
                        boot_id: boot_id.clone(),
                        values: values
                            .iter()
                            .map(|v| (v.path.clone(), v.value.clone()))
                            .collect(),
                    });
                }
                Event::TuningRestored { .. } => state.pending_restore = None,
                Event::Finished { .. } => state.finished = true,
                Event::Stopped { reason, .. } => state.stopped = Some(reason.clone()),
                Event::Interrupted { .. } => state.stopped = Some("interrupted".to_owned()),
                Event::Resumed { .. } => state.stopped = None,
                _ => {}
            }
        }
        state
    }
}

/// Calls `f` with every complete record from byte `offset` on, in order, without keeping them:
/// the verification streams a whole journal this way, and reads only the records a point
/// appended (from the length the journal had when the point started). Returns whether a partial
/// last line was left out. A tail read from an offset has no header, so none is required.
pub fn visit_from(
    path: &Path,
    offset: u64,
    mut f: impl FnMut(Event),
) -> Result<bool, JournalError> {
    visit_lines(path, offset, |number, line| {
        f(parse_line(path, number, line)?);
        Ok(())
    })
}

/// What the verification needs of a `sample` record, borrowed from its line: a journal of a
/// million runs is checked without a million [`Event`]s (their strings, their maps) in memory.
#[derive(Debug, Deserialize)]
pub struct RunRecord<'a> {
    /// The record's tag, checked when read from a line (empty when made from an [`Event`]).
    #[serde(rename = "event", default)]
    pub tag: &'a str,
    /// Point label.
    pub point: &'a str,
    /// Attempt.
    pub attempt: u32,
    /// Workload.
    pub workload: &'a str,
    /// Case.
    pub case: &'a str,
    /// Warm-up or measured.
    pub phase: Phase,
    /// Index within the phase.
    pub index: u32,
    /// Retry.
    pub retry: u32,
    /// Status.
    pub status: Status,
    /// Metric -> value, in the record's order; absent in journals of older aba.
    #[serde(default, borrow, deserialize_with = "value_pairs")]
    pub values: Option<ValuePairs<'a>>,
    /// The link of samples.csv's hash chain after the run's rows; absent in older journals.
    #[serde(default, borrow)]
    pub rows_sha256: Option<&'a str>,
}

impl RunRecord<'_> {
    /// The run of a `sample` event; `None` for any other.
    #[must_use]
    pub fn of(event: &Event) -> Option<RunRecord<'_>> {
        let Event::Sample {
            point,
            attempt,
            workload,
            case,
            phase,
            index,
            retry,
            status,
            values,
            rows_sha256,
            ..
        } = event
        else {
            return None;
        };
        Some(RunRecord {
            tag: "",
            point,
            attempt: *attempt,
            workload,
            case,
            phase: *phase,
            index: *index,
            retry: *retry,
            status: *status,
            values: values
                .as_ref()
                .map(|v| v.iter().map(|(m, v)| (m.as_str(), *v)).collect()),
            rows_sha256: rows_sha256.as_deref(),
        })
    }
}

/// A run's (metric, value) pairs.
pub type ValuePairs<'a> = Vec<(&'a str, f64)>;

/// A `values` map read as (metric, value) pairs borrowed from the line.
fn value_pairs<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<ValuePairs<'de>>, D::Error> {
    struct Pairs;
    impl<'de> serde::de::Visitor<'de> for Pairs {
        type Value = Vec<(&'de str, f64)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of metric names to values")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut pairs = Vec::new();
            while let Some(pair) = map.next_entry::<&'de str, f64>()? {
                pairs.push(pair);
            }
            Ok(pairs)
        }
    }
    d.deserialize_map(Pairs).map(Some)
}

/// Like [`visit_from`], but `sample` records go to `run` as [`RunRecord`]s, borrowed from
/// their line (a record that does not read so, a string with escapes say, is read whole and
/// lent the same way), and every other record to `other`.
pub fn visit_runs_from(
    path: &Path,
    offset: u64,
    mut run: impl FnMut(&RunRecord<'_>),
    mut other: impl FnMut(Event),
) -> Result<bool, JournalError> {
    visit_lines(path, offset, |number, line| {
        if line.starts_with(br#"{"event":"sample","#)
            && let Ok(record) = serde_json::from_slice::<RunRecord<'_>>(line)
            && record.tag == "sample"
        {
            run(&record);
            return Ok(());
        }
        let event = parse_line(path, number, line)?;
        match RunRecord::of(&event) {
            Some(record) => run(&record),
            None => other(event),
        }
        Ok(())
    })
}

/// How many records after the header may precede [`Event::Kernels`]: it is written with the
/// other start records (profile, calibration), so a reader need not scan a million samples.
const START_RECORDS: usize = 8;

/// The [`Event::Kernels`] record of the journal at `path`, read from its first records only;
/// `None` when there is no journal yet, or no record (the recipe's kernels, as written).
pub fn recorded_kernels(
    path: &Path,
) -> Result<Option<Vec<crate::kernel::binding::BoundKernel>>, JournalError> {
    start_record(path, |e| match e {
        Event::Kernels { kernels } => Some(kernels),
        _ => None,
    })
}

/// The [`Event::Params`] record of the journal at `path`, read from its first records only;
/// `None` when there is no journal yet, or no record (the recipe's defaults).
pub fn recorded_params(
    path: &Path,
) -> Result<Option<Vec<crate::recipe::params::BoundParam>>, JournalError> {
    start_record(path, |e| match e {
        Event::Params { params } => Some(params),
        _ => None,
    })
}

/// The first of the start records `pick` takes.
fn start_record<T>(
    path: &Path,
    pick: impl Fn(Event) -> Option<T>,
) -> Result<Option<T>, JournalError> {
    use std::io::BufRead as _;
    let read_error = |source| JournalError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(read_error(source)),
    };
    let start = (START_RECORDS as u64 + 1) * RECORD_BYTES as u64;
    for (number, line) in std::io::BufReader::new(std::io::Read::take(file, start))
        .split(b'\n')
        .take(START_RECORDS + 1)
        .enumerate()
    {
        let line = line.map_err(read_error)?;
        // A partial line (a crash while writing it) is the reader proper's business.
        if let Some(found) = parse_line(path, number + 1, &line).ok().and_then(&pick) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

fn parse_line(path: &Path, number: usize, line: &[u8]) -> Result<Event, JournalError> {
    serde_json::from_slice(line).map_err(|source| JournalError::Corrupt {
        path: path.to_path_buf(),
        line: number,
        source,
    })
}

/// The 1-based line of the first record that holds `needle` (a cheap filter, as
/// `"tuning_saved"`) and satisfies `pred`: where a message about a record points the reader.
pub fn first_line_of(
    path: &Path,
    needle: &str,
    pred: impl Fn(&Event) -> bool,
) -> Result<Option<usize>, JournalError> {
    let mut found = None;
    visit_lines(path, 0, |number, line| {
        if found.is_none()
            && line.windows(needle.len()).any(|w| w == needle.as_bytes())
            && serde_json::from_slice::<Event>(line).is_ok_and(|e| pred(&e))
        {
            found = Some(number);
        }
        Ok(())
    })?;
    Ok(found)
}

/// Feeds every complete, non-blank line from byte `offset` to `f` with its 1-based number
/// (counted from `offset`); returns whether a partial last line was left out.
fn visit_lines(
    path: &Path,
    offset: u64,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), JournalError>,
) -> Result<bool, JournalError> {
    use std::io::{Seek as _, SeekFrom};
    let io = |source| JournalError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let mut file = crate::input::open_data(path).map_err(io)?;
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        // One byte past the limit tells a record at the limit from a longer one.
        let n = (&mut reader)
            .take(RECORD_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if n == 0 {
            return Ok(false);
        }
        number += 1;
        if line.len() > RECORD_BYTES {
            return Err(JournalError::TooLong {
                path: path.to_path_buf(),
                line: number,
            });
        }
        if line.last() != Some(&b'\n') {
            return Ok(true);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        f(number, &line)?;
    }
}

use crate::recipe::ident::PointLabel;

/// What the journal says about one point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointState {
    /// Point label.
    pub label: PointLabel,
    /// Highest attempt number started.
    pub attempts: u32,
    /// The attempt whose rows are valid, once the point is done.
    pub done: Option<u32>,
    /// An attempt that started and neither finished, failed nor was discarded: the runner
    /// died during it.
    pub open: Option<u32>,
    /// Failed attempts with their reasons.
    pub failures: Vec<(u32, String)>,
    /// Attempts discarded on resume.
    pub discarded: Vec<u32>,
    /// Proven boots, in journal order.
    pub boots: Vec<ProvenBoot>,
}

/// A boot the journal records as proven for a point attempt (`boot_proven`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvenBoot {
    /// The attempt.
    pub attempt: u32,
    /// Its `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// Its `uname -r`.
    pub release: String,
}

/// What the journal says about the whole campaign.
#[derive(Clone, Debug, Default)]
pub struct CampaignState {
    /// Points in plan order.
    pub points: Vec<PointState>,
    /// The captured default cmdline (kexec targets).
    pub base_cmdline: Option<String>,
    /// Every point is done.
    pub finished: bool,
    /// Why the last run stopped, if it did not finish.
    pub stopped: Option<String>,
    /// Settings changed on a boot and not yet put back.
    pub pending_restore: Option<PendingRestore>,
    /// The points an extended campaign appended, in boot order (also in `points`).
    pub appended: Vec<AppendedPoint>,
    /// Every look of an extended campaign and what it decided.
    pub looks: Vec<(u32, Decision)>,
}

impl CampaignState {
    fn point_mut(&mut self, label: &str) -> Option<&mut PointState> {
        self.points.iter_mut().find(|p| p.label == label)
    }

    /// The point with this label.
    pub fn point(&self, label: &str) -> Option<&PointState> {
        self.points.iter().find(|p| p.label == label)
    }

    /// The valid attempt of each finished point.
    pub fn done_attempts(&self) -> BTreeMap<String, u32> {
        self.points
            .iter()
            .filter_map(|p| p.done.map(|a| (p.label.to_string(), a)))
            .collect()
    }
}

/// Now, as RFC 3339 UTC with seconds.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc())
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The current UTC time as RFC 3339 with microseconds, for records that time host-side events
/// precisely (`boot_proven`'s `proven_at`).
pub fn now_rfc3339_micros() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.replace_nanosecond(now.nanosecond() / 1000 * 1000)
        .unwrap_or(now)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::{Event, JOURNAL_FORMAT, Journal, JournalWriter};
    use crate::{
        kernel::switch::SwitchKind,
        results::samples::{Phase, Status},
    };

    fn header() -> Event {
        Event::Campaign {
            format: JOURNAL_FORMAT,
            aba: "0".into(),
            name: "t".into(),
            recipe_sha256: "x".into(),
            limits: None,
            target: "local".into(),
            points: vec!["a-a".into(), "b".into()],
            time: "t".into(),
        }
    }

    #[test]
    fn limits_of_older_aba_read_without_scoped_ones_and_scoped_ones_round_trip() {
        let old: super::Limits = serde_json::from_str(
            r#"{"gate_pct":5.0,"drift_margin":2.0,"max_drift_pct":1.0,"max_cv_pct":2.0}"#,
        )
        .expect("an older header's limits");
        assert!(old.scoped.is_empty());
        assert_eq!(old.series("w", "m").max_cv_pct.value, 2.0);
        // None set: the record is what older aba wrote.
        assert!(
            !serde_json::to_string(&old)
                .expect("json")
                .contains("scoped")
        );
        let mut new = old.clone();
        new.scoped.push(super::ScopedLimits {
            workload: "w".into(),
            metric: Some("m".into()),
            gate_pct: None,
            max_drift_pct: None,
            max_cv_pct: Some(10.0),
        });
        let text = serde_json::to_string(&new).expect("json");
        assert!(
            text.ends_with(r#""scoped":[{"workload":"w","metric":"m","max_cv_pct":10.0}]}"#),
            "{text}"
        );
        let back: super::Limits = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, new);
        assert_eq!(back.series("w", "m").max_cv_pct.value, 10.0);
        assert_eq!(back.series("w", "other").max_cv_pct.value, 2.0);
    }

    #[test]
    fn the_params_record_round_trips_and_an_old_journal_has_none() {
        use crate::{
            origin::Origin,
            recipe::{
                ident::{ParamName, ParamValue},
                params::BoundParam,
            },
        };
        let params = vec![BoundParam {
            name: ParamName::new("isolated_cpu").unwrap(),
            value: ParamValue::new("5").unwrap(),
            from: Origin::Inventory {
                at: "targets.toml:9:1".to_owned(),
            },
        }];
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("new.jsonl");
        let mut w = JournalWriter::open(&path).expect("open");
        w.append(&header()).expect("append");
        w.append(&Event::Params {
            params: params.clone(),
        })
        .expect("append");
        drop(w);
        let journal = Journal::read(&path).expect("reads");
        assert_eq!(journal.params(), Some(params.as_slice()));
        assert_eq!(super::recorded_params(&path).expect("reads"), Some(params));
        let old = dir.path().join("old.jsonl");
        let mut w = JournalWriter::open(&old).expect("open");
        w.append(&header()).expect("append");
        drop(w);
        assert_eq!(super::recorded_params(&old).expect("reads"), None);
        assert_eq!(Journal::read(&old).expect("reads").params(), None);
    }

    #[test]
    fn the_kernels_record_round_trips_and_an_old_journal_has_none() {
        use crate::kernel::binding::{BoundKernel, Origin};
        use crate::recipe::ident::{KernelLabel, Release, TargetPath};
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal.jsonl");
        // Written by an aba older than bindings: the recipe's kernels, as written.
        std::fs::write(
            &path,
            "{\"event\":\"campaign\",\"format\":1,\"aba\":\"0.1.0\",\"name\":\"t\",\
             \"recipe_sha256\":\"x\",\"target\":\"local\",\"points\":[\"a\"],\"time\":\"t\"}\n",
        )
        .expect("write");
        assert_eq!(Journal::read(&path).expect("reads").kernels(), None);
        assert_eq!(super::recorded_kernels(&path).expect("reads"), None);
        assert_eq!(
            super::recorded_kernels(&dir.path().join("none.jsonl")).expect("no journal yet"),
            None
        );

        let kernels = vec![BoundKernel {
            label: KernelLabel::new("a").unwrap(),
            release: Release::new("6.18.0-orig+").unwrap(),
            release_from: Origin::CommandLine {
                option: "--kernel a=6.18.0-orig+".into(),
            },
            image: TargetPath::new("/boot/vmlinuz-a").unwrap(),
            image_from: Origin::Inventory {
                at: "targets.toml:6:1".into(),
            },
            initrd: TargetPath::new("/boot/initrd.img-a").unwrap(),
            initrd_from: Origin::Recipe,
            build: None,
        }];
        let path = dir.path().join("new.jsonl");
        let mut w = JournalWriter::open(&path).expect("open");
        w.append(&header()).expect("append");
        w.append(&Event::Kernels {
            kernels: kernels.clone(),
        })
        .expect("append");
        drop(w);
        let journal = Journal::read(&path).expect("reads");
        assert_eq!(journal.kernels(), Some(kernels.as_slice()));
        assert_eq!(
            super::recorded_kernels(&path).expect("reads"),
            Some(kernels)
        );
    }

    #[test]
    fn a_build_on_the_host_its_install_and_its_proof_round_trip() {
        use crate::build::{
            install::Installed,
            proof::{BuildProof, ConfigProof},
            record::{HostFile, KernelBuild},
            version::KernelVersion,
        };
        use crate::kernel::binding::{BoundKernel, Origin};
        use crate::recipe::ident::{KernelLabel, Release, TargetPath};
        let file = |path: &str, sha: &str| HostFile {
            path: path.into(),
            sha256: sha.repeat(64),
            bytes: 5,
        };
        let build = KernelBuild {
            at: "builds.toml:2:10".into(),
            version: KernelVersion::parse_proc(
                "Linux version 6.1.158-aba-lab (root@b) (gcc 12) #2 SMP Thu Dec  3 10:12:54 UTC 2026",
            )
            .unwrap(),
            image: file("/b/bzImage", "a"),
            initrd: None,
            modules: None,
            config: Some(file("/b/.config", "c")),
            install_dir: "/tmp/aba/kernels/patched-aaaaaaaaaaaa".into(),
            source: None,
            patches: vec![file("/p/x.patch", "d")],
            built: None,
        };
        let kernels = vec![BoundKernel {
            label: KernelLabel::new("patched").unwrap(),
            release: Release::new("6.1.158-aba-lab").unwrap(),
            release_from: Origin::Build {
                at: "builds.toml:2:10".into(),
            },
            image: TargetPath::new("/tmp/aba/kernels/patched-aaaaaaaaaaaa/vmlinuz").unwrap(),
            image_from: Origin::Build {
                at: "builds.toml:2:10".into(),
            },
            initrd: TargetPath::new("/boot/initrd.img").unwrap(),
            initrd_from: Origin::Recipe,
            build: Some(Box::new(build)),
        }];
        let events = vec![
            header(),
            Event::Kernels {
                kernels: kernels.clone(),
            },
            Event::Installed {
                point: "patched".into(),
                attempt: 1,
                kernel: "patched".into(),
                installed: vec![Installed {
                    path: "/tmp/aba/kernels/patched-aaaaaaaaaaaa/vmlinuz".into(),
                    sha256: "a".repeat(64),
                    sent: true,
                }],
            },
            Event::BuildProven {
                point: "patched".into(),
                attempt: 1,
                proof: BuildProof {
                    version: "Linux version 6.1.158-aba-lab (root@b) (gcc 12) #2 SMP".into(),
                    config: ConfigProof::Matched {
                        source: "/proc/config.gz".into(),
                    },
                },
            },
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal.jsonl");
        let mut w = JournalWriter::open(&path).expect("open");
        for e in &events {
            w.append(e).expect("append");
        }
        drop(w);
        let journal = Journal::read(&path).expect("reads");
        assert_eq!(journal.events, events);
        assert_eq!(journal.kernels(), Some(kernels.as_slice()));
        let text = std::fs::read_to_string(&path).expect("text");
        assert!(
            text.contains(r#""config":"matched","source":"/proc/config.gz""#),
            "{text}"
        );
    }

    #[test]
    fn a_partial_last_line_is_skipped_then_cut_before_appending() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal.jsonl");
        let mut w = JournalWriter::open(&path).expect("open");
        w.append(&header()).expect("append");
        w.append(&Event::PointStarted {
            point: "a-a".into(),
            attempt: 1,
            time: "t".into(),
        })
        .expect("append");
        drop(w);
        // A killed writer left half a record.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b"{\"event\":\"point_do").expect("write");
        drop(f);

        let j = Journal::read(&path).expect("readable");
        assert!(j.truncated_tail);
        assert_eq!(j.state().point("a-a").expect("point").open, Some(1));

        let mut w = JournalWriter::open(&path).expect("reopen");
        w.append(&Event::PointDone {
            point: "a-a".into(),
            attempt: 1,
            dmesg_warnings: 0,
            failed_units: vec![],
            time: "t".into(),
        })
        .expect("append");
        let j = Journal::read(&path).expect("readable");
        assert!(!j.truncated_tail);
        let state = j.state();
        assert_eq!(state.point("a-a").expect("point").done, Some(1));
        assert_eq!(state.point("b").expect("point").done, None);
    }

    /// The switch method is written as the inventory spells it; aba 0.1's `grubreboot` still
    /// reads.
    #[test]
    fn the_switch_method_is_spelled_as_the_inventory_spells_it() {
        let record = Event::Switching {
            point: "b".into(),
            attempt: 1,
            method: SwitchKind::GrubReboot,
            previous_boot_id: None,
        };
        let line = serde_json::to_string(&record).expect("serialises");
        assert!(line.contains(r#""method":"grub-reboot""#), "{line}");
        let old = line.replace("grub-reboot", "grubreboot");
        assert_eq!(serde_json::from_str::<Event>(&old).expect("reads"), record);
        assert!(serde_json::from_str::<Event>(&line.replace("grub-reboot", "grub")).is_err());
    }

    fn sample(index: u32, retry: u32, status: Status) -> Event {
        Event::Sample {
            point: "a-a".into(),
            attempt: 1,
            workload: "w".into(),
            case: String::new(),
            phase: Phase::Sample,
            index,
            retry,
            status,
            elapsed_s: 0.5,
            error: (status == Status::Failed).then(|| "exit status 1".into()),
            raw: None,
            leftovers: Vec::new(),
            dropped_bytes: None,
            values: Some(std::collections::BTreeMap::from([("m".to_owned(), 1.5)])),
            rows_sha256: Some("ab".repeat(32)),
        }
    }

    /// The analysis's read leaves out exactly the sample records of first-try successes and
    /// still rejects a malformed line.
    #[test]
    fn reading_for_analysis_leaves_out_plain_samples_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal.jsonl");
        let mut w = JournalWriter::open(&path).expect("open");
        let events = [
            header(),
            sample(1, 0, Status::Ok),
            sample(2, 0, Status::Failed),
            sample(2, 1, Status::Ok),
            sample(3, 0, Status::Ok),
        ];
        for e in &events {
            w.append(e).expect("append");
        }
        drop(w);
        let all = Journal::read(&path).expect("readable");
        assert_eq!(all.events, events);
        let some = Journal::read_for_analysis(&path).expect("readable");
        assert_eq!(
            some.events,
            [events[0].clone(), events[2].clone(), events[3].clone()]
        );

        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b"{\"event\":\"sample\",\"status\":\"ok\",\"retry\":0,}\n")
            .expect("write");
        drop(f);
        assert!(Journal::read_for_analysis(&path).is_err());
    }
}
