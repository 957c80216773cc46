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
    /// `aba export`'s destination exists and is not an empty folder (or is a link): an
    /// export never mixes with or replaces files that are already there.
    #[error("{} {why}", path.display())]
    ExportDestination {
        /// The destination.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The results directory's recipe copy has a `[publish]` table that does not read.
    #[error("{}: [publish]: {what}", path.display())]
    ExportRecipe {
        /// The recipe copy.
        path: PathBuf,
        /// What is wrong, as the TOML parser says it (line and column).
        what: String,
    },
    /// A file to copy into an export cannot be read, or is not the one the campaign used.
    #[error("cannot copy {} into the export: {why}", from.display())]
    ExportCopy {
        /// The file.
        from: PathBuf,
        /// Why.
        why: String,
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
