//! The SSH transport: drives a bare-metal machine through one `ssh2` session, survives and
//! detects machines that vanish (kexec, reboot, freeze) and never trusts an unverified host.
//!
//! `target` says what to connect to, `config` reads `~/.ssh/config` aliases, `host_key` decides
//! trust, `connect` makes one connection, `run` drives one command, `runner` drives each
//! workload run through one long-lived shell on the target, and `client` ties them into
//! [`SshTransport`]. Every command dies with its process group on deadline, on a lost
//! connection and when it exits; [`detached`] is the way to schedule work that must outlive its
//! exec (a delayed kexec or reboot). Measured behaviour behind the choices: `shared/SSH.md`.

mod client;
pub mod config;
mod connect;
mod host_key;
mod probe;
mod run;
mod runner;
mod target;

pub use crate::target::quote::detached;
pub use client::SshTransport;
pub use target::SshTarget;
