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
pub(crate) mod causes;
pub mod cli;
pub mod error;
pub(crate) mod fingerprint;
pub(crate) mod input;
pub(crate) mod interrupt;
pub mod inventory;
pub(crate) mod json;
pub mod kernel;
pub(crate) mod labgrid;
pub mod origin;
pub(crate) mod placeholders;
pub(crate) mod point_name;
pub mod profile;
pub mod recipe;
pub mod report;
pub mod reproduction;
pub mod results;
pub(crate) mod scaffold;
pub(crate) mod schema;
pub mod session;
pub mod stats;
pub mod target;
pub mod text;
pub(crate) mod ui;

/// Visible, counted skips for unit tests that cannot run on this machine.
#[cfg(test)]
#[path = "../tests/common/skip.rs"]
pub(crate) mod test_skip;
