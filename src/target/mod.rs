//! Machines aba drives: the transport seam and its implementations.

pub mod quote;
pub mod transport;
