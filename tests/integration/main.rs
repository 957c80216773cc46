//! aba integration tests: one binary, one module per area.

mod batch;
mod check;
mod compare;
mod distro;
mod engine_local;
mod faults_lab;
mod faults_local;
mod faults_ssh;
mod golden;
mod host_deps;
mod hostile;
mod json;
mod kernels;
mod lab;
mod legacy;
mod multi;
mod new;
mod preflight;
mod profiles;
mod recipe_fuzz;
mod recipes;
mod report;
mod schema;
mod shell;
mod ssh;
mod support;
