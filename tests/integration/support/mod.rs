//! Shared helpers for the integration tests.

pub mod cli;
pub mod sshd;
