//! `aba compare --json`: the comparison model, under the `format` and `kind` every document
//! carries, so a script that reads several of aba's documents tells them apart the same way.

use serde::Serialize;

use crate::{
    json::{FORMAT, Kind},
    reproduction::Reproduction,
};

/// The whole document: `format`, `kind`, then the [`Reproduction`]'s own fields.
#[derive(Debug, Serialize)]
pub struct CompareDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `compare`.
    pub kind: Kind,
    /// The comparison, its fields at the top level (`new`, `reference`, `series`, …).
    #[serde(flatten)]
    pub reproduction: &'a Reproduction,
}

impl<'a> CompareDoc<'a> {
    /// The document of `reproduction`.
    #[must_use]
    pub fn new(reproduction: &'a Reproduction) -> CompareDoc<'a> {
        CompareDoc {
            format: FORMAT,
            kind: Kind::Compare,
            reproduction,
        }
    }
}

/// `aba compare NEW MAPPING.toml --json`: `format`, `kind`, then the
/// [`SummaryReproduction`]'s own fields.
#[derive(Debug, Serialize)]
pub struct CompareSummaryDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `compare_summary`.
    pub kind: Kind,
    /// The comparison, its fields at the top level (`new`, `reference`, `baseline`,
    /// `series`, `only_reference`, `counts`).
    #[serde(flatten)]
    pub reproduction: &'a crate::reproduction::summary_judge::SummaryReproduction,
}

impl<'a> CompareSummaryDoc<'a> {
    /// The document of `reproduction`.
    #[must_use]
    pub fn new(
        reproduction: &'a crate::reproduction::summary_judge::SummaryReproduction,
    ) -> CompareSummaryDoc<'a> {
        CompareSummaryDoc {
            format: FORMAT,
            kind: Kind::CompareSummary,
            reproduction,
        }
    }
}
