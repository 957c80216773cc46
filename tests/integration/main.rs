//! aba integration tests: one binary, one module per area.

mod engine_local;
mod faults_local;
mod golden;
mod lab;
mod recipe_fuzz;
mod recipes;
mod ssh;
mod support;
