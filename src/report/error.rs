//! Why the report files could not be produced. Each variant names the file or template.

use std::path::PathBuf;

use thiserror::Error;

/// Why a report could not be rendered or written.
#[derive(Debug, Error)]
pub enum ReportError {
    /// A template file exists but cannot be read.
    #[error("cannot read template {}", path.display())]
    TemplateRead {
        /// The template file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A template does not parse or fails while rendering.
    #[error("cannot render template {name} ({origin})")]
    Template {
        /// Template name (`report.txt.j2`).
        name: String,
        /// Where it came from: a path, or "built-in".
        origin: String,
        /// minijinja's error, with line and column.
        #[source]
        source: minijinja::Error,
    },
    /// A report file cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl ReportError {
    /// What the user can do about it.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        match self {
            ReportError::TemplateRead { .. } | ReportError::Template { .. } => Some(
                "fix the template, or unset ABA_TEMPLATES to use the built-in templates".to_owned(),
            ),
            ReportError::Write { .. } => None,
        }
    }
}
