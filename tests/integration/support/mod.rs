//! Shared helpers for the integration tests.

pub mod cli;
pub mod lab;
pub mod sshd;
