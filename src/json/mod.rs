//! The machine-readable output of `aba check`, `aba status`, `aba preflight`, `aba report`
//! and `aba compare` (`--json`): one typed document per command (two more for `status` and
//! `report` on a multi-target directory), documented field by field
//! in docs/json.md.
//!
//! Each document is a view over the values the text is printed from (the plan's
//! [`Summary`](crate::campaign::plan::Summary), the journal's state, the preflight checklist,
//! the [`Analysis`](crate::analysis::Analysis)): nothing is recomputed here, so the JSON and
//! the text cannot disagree. Durations are seconds (`_s`), percentages `_pct`, every number
//! unrounded. Adding a field keeps [`FORMAT`]; renaming or removing one bumps it.

pub mod check;
pub mod compare;
pub mod export;
pub mod preflight;
pub mod report;
pub mod status;
pub mod targets;

use serde::Serialize;

/// The version of every document's layout: `"format": 1`.
pub const FORMAT: u32 = 1;

/// Which command wrote a document: its `"kind"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `aba check --json`.
    Check,
    /// `aba status --json`.
    Status,
    /// `aba preflight --json`.
    Preflight,
    /// `aba report --json`.
    Report,
    /// `aba compare --json`.
    Compare,
    /// `aba export --json`.
    Export,
    /// `aba status --json` on a multi-target directory.
    TargetsStatus,
    /// `aba report --json` on a multi-target directory.
    TargetsReport,
    /// `aba report A B --together --json`: linked campaigns.
    LinkedReport,
    /// `aba compare NEW MAPPING.toml --json`: a campaign against a summary reference.
    CompareSummary,
}

/// A document as printed: pretty JSON with a final newline.
#[must_use]
pub fn render<T: Serialize>(document: &T) -> String {
    // The documents hold strings, numbers, booleans and lists only (no map with non-string
    // keys), which serde_json always serialises.
    let mut text =
        serde_json::to_string_pretty(document).expect("invariant: a JSON document serialises");
    text.push('\n');
    text
}
