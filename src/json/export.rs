//! `aba export --json`: the files an export wrote, under the `format` and `kind` every
//! document carries.

use serde::Serialize;

use crate::json::{FORMAT, Kind};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct ExportDoc {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `export`.
    pub kind: Kind,
    /// OUT, as given.
    pub to: String,
    /// Every file written, relative to OUT, in the order written.
    pub files: Vec<String>,
}

impl ExportDoc {
    /// The document of an export into `to` that wrote `files`.
    #[must_use]
    pub fn new(to: String, files: Vec<String>) -> ExportDoc {
        ExportDoc {
            format: FORMAT,
            kind: Kind::Export,
            to,
            files,
        }
    }
}
