//! The records of a journal: [`Event`], one per line, and the values they carry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Limits;
use crate::{
    kernel::switch::SwitchKind,
    results::samples::{Phase, Status},
    stats::sequential::{ComparisonState, Decision, Spending},
};

/// Key/value facts about the machine, recorded as they were read.
pub type Facts = BTreeMap<String, String>;

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
        /// [`super::JOURNAL_FORMAT`].
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
        /// The output of a passing check run, kept as evidence (`checks/<point>/…`): stdout,
        /// then stderr. Empty for other runs and in journals of older aba.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<crate::results::kept::KeptFile>,
    },
    /// A probe (`[[probe]]`) ran at the point, before or after its timed samples: its output
    /// kept under `probes/<point>/`, the values read from it. Never part of a verdict; a
    /// probe that did not end as expected is said, not a failed point.
    Probe {
        /// Point label.
        point: String,
        /// Attempt.
        attempt: u32,
        /// The point's kernel.
        kernel: String,
        /// The probe's name.
        probe: String,
        /// Before or after the timed samples.
        when: crate::recipe::model::ProbeWhen,
        /// How the command ended (`exit status 0`, `timed out after 30s`).
        outcome: String,
        /// Whether it ended as the recipe's `expect` says.
        as_expected: bool,
        /// Wall seconds of the command.
        elapsed_s: f64,
        /// The kept stdout and stderr, in that order (a stream that could not be written is
        /// missing, and said in `problems`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<crate::results::kept::KeptFile>,
        /// The values read, in the recipe's order (ftrace functions first).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        values: Vec<ProbeReading>,
        /// What went wrong short of failing the point: a value not found, the ftrace
        /// profiler not set up, a stream not kept.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        problems: Vec<String>,
        /// When it ended.
        time: String,
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
        /// The boot that answered when it was not the one asked for (a kernel that could not
        /// boot and the boot loader's fallback that did): what the proof read of it, for
        /// run-audit.tsv. Absent when no boot answered, and in journals before it was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answered: Option<crate::kernel::proof::BootFacts>,
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

/// One value a probe's output gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeReading {
    /// The value's name (a function's, for an ftrace profile).
    pub name: String,
    /// The number.
    pub value: f64,
    /// Its unit.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
}

/// A file's content before tuning changed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedValue {
    /// The file on the target.
    pub path: String,
    /// Its content before the change.
    pub value: String,
}
