//! Shared helpers for the integration tests.

pub mod cli;
pub mod cpus;
pub mod distro;
pub mod host_sysctl;
pub mod lab;
pub mod labgrid;
pub mod recipe;
pub mod report_oracle;
#[path = "../../common/skip.rs"]
pub mod skip;
pub mod sshd;
pub mod tree;
