//! Machines aba drives: the transport seam and its implementations.

pub(crate) mod affinity;
pub mod check;
pub mod connect;
pub mod cpu_set;
pub mod host;
pub(crate) mod leftovers;
pub mod local;
pub mod quote;
pub(crate) mod run_cgroup;
#[cfg(test)]
pub mod scripted;
pub mod ssh;
pub mod transport;
