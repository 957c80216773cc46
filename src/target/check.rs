//! One line of a checklist (`aba preflight`) and the probe that fills most of them: a short
//! script run on the target whose exit status says whether the check passed.

use std::time::Duration;

use crate::target::transport::{Transport, TransportError};

/// How long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Outcome of one check (`ok`, `warn`, `fail` in `aba preflight --json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Fine.
    Ok,
    /// Will work, but worth knowing (an optional knob is absent).
    Warn,
    /// The campaign would fail here.
    Fail,
}

/// One line of the checklist (serialised as is by `aba preflight --json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CheckItem {
    /// Outcome.
    pub status: CheckStatus,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub detail: String,
    /// How to fix it, for `Fail` and `Warn` (`fix` in JSON, as the text says it).
    #[serde(rename = "fix")]
    pub hint: Option<String>,
}

impl CheckItem {
    /// A line of the checklist.
    pub fn new(
        status: CheckStatus,
        what: impl Into<String>,
        detail: impl Into<String>,
        hint: Option<&str>,
    ) -> CheckItem {
        CheckItem {
            status,
            what: what.into(),
            detail: detail.into(),
            hint: hint.map(str::to_owned),
        }
    }

    /// A check that passed.
    pub fn ok(what: impl Into<String>, detail: impl Into<String>) -> CheckItem {
        CheckItem::new(CheckStatus::Ok, what, detail, None)
    }

    /// A check that failed, with the fix.
    pub fn fail(what: impl Into<String>, detail: impl Into<String>, hint: &str) -> CheckItem {
        CheckItem::new(CheckStatus::Fail, what, detail, Some(hint))
    }
}

/// What a probe script reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// It exited 0; its stdout, trimmed.
    Passed(String),
    /// It failed; its stderr lines joined by `; `, or how it ended when it printed nothing.
    Failed(String),
}

impl Probe {
    /// True for [`Probe::Passed`].
    pub fn passed(&self) -> bool {
        matches!(self, Probe::Passed(_))
    }
}

/// Runs a check script on the target. Only a transport failure is an error: a script that
/// fails is a [`Probe::Failed`] answer.
pub fn probe(transport: &mut dyn Transport, script: &str) -> Result<Probe, TransportError> {
    let out = transport.exec(script, PROBE_TIMEOUT)?;
    if out.outcome.success() {
        return Ok(Probe::Passed(out.stdout_text().trim().to_owned()));
    }
    let err = out.stderr_text();
    let lines: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Ok(Probe::Failed(if lines.is_empty() {
        out.outcome.to_string()
    } else {
        lines.join("; ")
    }))
}

/// A checklist line from a check script: what it printed when it exits 0, else what it said
/// on stderr, with `hint`.
pub fn probe_item(
    transport: &mut dyn Transport,
    what: &str,
    script: &str,
    hint: &str,
) -> Result<CheckItem, TransportError> {
    Ok(match probe(transport, script)? {
        Probe::Passed(found) => CheckItem::ok(what, found),
        Probe::Failed(why) => CheckItem::fail(what, why, hint),
    })
}
