//! The report layer: the evidence tables (`points.tsv`, `comparison.tsv`, `run-audit.tsv`),
//! the mail-ready `report.txt`, the bundle's `README.md` and `samples.svg`, all from an
//! [`crate::analysis::Analysis`]; and `aba compare`'s text and TSV from a
//! [`crate::reproduction::Reproduction`] (`reproduction_*`); the published layout of `aba
//! export` (`export`).
//!
//! Rounding happens here and nowhere else (`number`). The layouts of `report.txt` and
//! `README.md` are minijinja templates (`template`); the numbers and text blocks they show
//! are prepared in Rust (`context`). Nothing here computes a statistic or reads raw files.

pub(crate) mod audit_tsv;
pub(crate) mod case_tables;
pub(crate) mod comparison_tsv;
pub mod context;
pub mod error;
pub mod export;
pub mod layout;
pub(crate) mod machine_line;
pub(crate) mod mail_prose;
pub(crate) mod mail_tables;
pub(crate) mod markdown;
pub mod matched_build_tsv;
pub mod number;
pub mod points_tsv;
pub(crate) mod probes;
pub(crate) mod reproduction_prose;
pub(crate) mod reproduction_tables;
pub(crate) mod reproduction_text;
pub(crate) mod reproduction_tsv;
pub(crate) mod rules_moved;
pub(crate) mod source_identity_tsv;
pub mod summary_reproduction;
pub mod svg;
pub mod targets;
pub mod template;
#[cfg(test)]
mod testdata;
pub mod tsv;
pub(crate) mod unit_scale;
pub mod verdict_text;
pub mod write;

pub use error::ReportError;
pub use reproduction_text::{RenderedReproduction, render_reproduction};
pub use template::Templates;
pub use write::{
    FILES, REPRODUCTION_FILES, Reports, render_reports, write_reports, write_reports_with,
    write_reproduction,
};
