//! aba integration tests: one binary, one module per area.

mod golden;
mod recipes;
