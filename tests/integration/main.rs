//! aba integration tests: one binary, one module per area.

mod engine_local;
mod golden;
mod support;
