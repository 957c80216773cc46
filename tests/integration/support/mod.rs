//! Helpers shared by the integration tests.

pub mod golden_results;
