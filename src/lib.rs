//! aba runs Linux kernel A-B-A ("sandwich") performance experiments on a bare-metal machine
//! and reports them with the numbers a maintainer asks for.
//!
//! The data flows one way: a [`recipe`] is planned, the campaign engine drives a [`target`],
//! every sample lands in the results directory as it is taken, and the analysis recomputes
//! everything from those raw files.

pub mod analysis;
pub mod batch;
pub mod bisect;
pub mod build;
pub mod campaign;
pub mod causes;
pub mod cli;
pub mod error;
pub mod fingerprint;
pub mod input;
pub mod interrupt;
pub mod inventory;
pub mod json;
pub mod kernel;
pub mod labgrid;
pub mod origin;
pub mod placeholders;
pub mod point_name;
pub mod profile;
pub mod recipe;
pub mod report;
pub mod reproduction;
pub mod results;
pub mod scaffold;
pub mod schema;
pub mod session;
pub mod stats;
pub mod target;
pub mod text;
pub mod ui;

/// Visible, counted skips for unit tests that cannot run on this machine.
#[cfg(test)]
#[path = "../tests/common/skip.rs"]
pub(crate) mod test_skip;
