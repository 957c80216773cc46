//! `aba status --json` and `aba report --json` on a multi-target directory
//! (docs/multi-target.md): each target's own document, the one the command prints for that
//! target's subdirectory, under the target's name; the report adds the combined analysis that
//! report.txt and targets.tsv of the parent are written from.

use serde::Serialize;

use crate::{
    analysis::targets::{TargetState, TargetsAnalysis},
    json::{FORMAT, Kind, report::ReportDoc, status::StatusDoc},
};

/// `aba status PARENT --json`.
#[derive(Debug, Serialize)]
pub struct TargetsStatusDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `targets_status`.
    pub kind: Kind,
    /// The recipe's name, from targets.json.
    pub recipe: &'a str,
    /// When the run was started (RFC 3339), from targets.json.
    pub started: &'a str,
    /// Every target in targets.json order.
    pub targets: Vec<MemberStatus<'a>>,
}

impl<'a> TargetsStatusDoc<'a> {
    /// The document of a parent made by `recipe` at `started`.
    #[must_use]
    pub fn new(recipe: &'a str, started: &'a str, targets: Vec<MemberStatus<'a>>) -> Self {
        TargetsStatusDoc {
            format: FORMAT,
            kind: Kind::TargetsStatus,
            recipe,
            started,
            targets,
        }
    }
}

/// One target of `aba status PARENT --json`.
#[derive(Debug, Serialize)]
pub struct MemberStatus<'a> {
    /// The inventory name.
    pub target: &'a str,
    /// Its subdirectory of the parent.
    pub dir: &'a str,
    /// Where its campaign stands, in a word (`state`: `finished`, `stopped`, `unfinished`,
    /// `not_started`) with its counts or reason: the line `aba status PARENT` prints.
    pub progress: &'a TargetState,
    /// What `aba status DIR --json` prints for its subdirectory; `null` when the campaign
    /// never started.
    pub status: Option<StatusDoc<'a>>,
}

/// `aba report PARENT --json`.
#[derive(Debug, Serialize)]
pub struct TargetsReportDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `targets_report`.
    pub kind: Kind,
    /// The combined analysis: the targets with their states, whether they are the same kind
    /// of machine (fingerprints and the facts that differ) and every comparison side by side
    /// with each target's change, interval, verdict, drift and CV and their agreement.
    pub combined: &'a TargetsAnalysis,
    /// Every target in targets.json order.
    pub targets: Vec<MemberReport<'a>>,
}

impl<'a> TargetsReportDoc<'a> {
    /// The document of `combined` with each target's own report.
    #[must_use]
    pub fn new(combined: &'a TargetsAnalysis, targets: Vec<MemberReport<'a>>) -> Self {
        TargetsReportDoc {
            format: FORMAT,
            kind: Kind::TargetsReport,
            combined,
            targets,
        }
    }
}

/// One target of `aba report PARENT --json`.
#[derive(Debug, Serialize)]
pub struct MemberReport<'a> {
    /// The inventory name.
    pub target: &'a str,
    /// What `aba report DIR --json` prints for its subdirectory; `null` when it has no
    /// analysis (the combined analysis says why).
    pub report: Option<ReportDoc<'a>>,
}

/// `aba report A B --together --json`: linked campaigns side by side.
#[derive(Debug, Serialize)]
pub struct LinkedReportDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `linked_report`.
    pub kind: Kind,
    /// The combined analysis (`grouping` `campaigns`): the campaigns with their states,
    /// whether their environments are the same and every comparison side by side with each
    /// campaign's change, interval, verdict, drift and CV and their agreement.
    pub combined: &'a TargetsAnalysis,
    /// Every campaign in the order given.
    pub campaigns: Vec<LinkedMember<'a>>,
}

/// One campaign of `aba report A B --together --json`.
#[derive(Debug, Serialize)]
pub struct LinkedMember<'a> {
    /// Its name in the combined report (its directory's name).
    pub campaign: &'a str,
    /// Its directory, as given.
    pub dir: &'a str,
    /// What `aba report DIR --json` prints for it; `null` when it has no analysis.
    pub report: Option<ReportDoc<'a>>,
}

impl<'a> LinkedReportDoc<'a> {
    /// The document of `combined` with each campaign's own report.
    #[must_use]
    pub fn new(combined: &'a TargetsAnalysis, campaigns: Vec<LinkedMember<'a>>) -> Self {
        LinkedReportDoc {
            format: FORMAT,
            kind: Kind::LinkedReport,
            combined,
            campaigns,
        }
    }
}
