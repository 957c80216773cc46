//! Kernels on the target: switching to a point's kernel and proving which one booted.

pub mod binding;
pub mod console;
pub mod proof;
pub mod switch;
