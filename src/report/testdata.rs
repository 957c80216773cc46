//! Analyses of the committed results fixtures (`tests/fixtures/results/`), for the report
//! layer's unit tests. Read-only: nothing is written into the fixtures.

use std::path::PathBuf;

use crate::{
    analysis::{Analysis, analyze},
    results::layout::ResultsDir,
};

/// The fixtures' directory names.
pub const FIXTURES: [&str; 6] = [
    "mprotect-exact-cac1",
    "mprotect-mechanism",
    "mprotect-pedro-v3",
    "local-null",
    "exact-cac1-audit",
    "mail-rt-sysctl",
];

/// The directory of fixture `name`.
pub fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name)
}

/// The analysis of fixture `name`.
pub fn fixture(name: &str) -> Analysis {
    analyze(&ResultsDir::open(&fixture_dir(name)))
        .unwrap_or_else(|e| panic!("fixture {name} does not analyse: {e}"))
}
