//! How big a recipe may be. Every limit is documented in docs/recipes.md ("Limits"), checked
//! when the recipe is read or planned, and reported with the value, the limit and where it
//! comes from.
//!
//! The limits keep what a recipe costs proportional to what the file says: a recipe of a few
//! lines can ask for a million cases (six matrix keys of ten values), and without these the
//! planner would build them all, `check` would print them all, and a night would not end.
//! They sit far above any real experiment (the largest seed recipe has 8 cases).

use std::time::Duration;

/// Recipe and target inventory files are at most this long (1 MiB).
pub const FILE_BYTES: u64 = crate::input::CONFIG_LIMIT;
/// Points (boots) in `sequence`.
pub const POINTS: usize = 100;
/// `[[workload]]` tables.
pub const WORKLOADS: usize = 100;
/// Matrix keys of one workload.
pub const MATRIX_KEYS: usize = 8;
/// Values of one matrix key.
pub const MATRIX_VALUES: usize = 1000;
/// Cases of all workloads together (each is measured at every point).
pub const CASES: u64 = 10_000;
/// Metrics of one workload.
pub const METRICS: usize = 32;
/// Workload runs of a whole campaign, warm-ups included.
pub const RUNS: u64 = 1_000_000;
/// Rows of `samples.csv` of a whole campaign (runs × metrics).
pub const ROWS: u64 = 2_000_000;
/// Bytes of expanded commands and environments the plan holds (cases × `run` and `env`).
pub const PLAN_BYTES: u64 = 64 << 20;
/// `[[expect]]` tables.
pub const EXPECTS: usize = 100;
/// `[[analysis.case_comparison]]` tables.
pub const CASE_COMPARISONS: usize = 100;
/// `[[analysis.comparison]]` tables.
pub const COMPARISONS: usize = 100;
/// `[files]` entries.
pub const FILES: usize = 256;
/// Size of one `[files]` source (they are hashed, kept in the results directory and copied
/// to the target after every boot).
pub const FILE_SOURCE_BYTES: u64 = 64 << 20;
/// All `[files]` sources together (a loaded recipe holds their bytes, so that analysis
/// hashes what was loaded without reading the disk again).
pub const FILES_TOTAL_BYTES: u64 = 256 << 20;
/// Characters of `description`.
pub const DESCRIPTION_CHARS: usize = 4000;
/// Longest `[expect] reference` path, in characters (PATH_MAX).
pub const REFERENCE_CHARS: usize = 4096;
/// Characters of a metric's `unit`.
pub const UNIT_CHARS: usize = 32;
/// A plan whose ETA exceeds this needs `--yes` to run, and `check` says so.
pub const ETA_CONFIRM: Duration = Duration::from_secs(24 * 3600);
/// A plan of more workload runs than this (warm-ups included) needs `--yes` to run, and
/// `check` says so: far below [`RUNS`], which refuses a recipe, but past any seed experiment
/// (the largest makes a few thousand), so a matrix typed one key too wide is caught before
/// a night is spent on it even when its estimates are short.
pub const RUNS_CONFIRM: u64 = 100_000;
/// Case lines `aba check` prints before it summarises the rest.
pub const CASE_LINES: usize = 40;
/// `[[probe]]` tables.
pub const PROBES: usize = 32;
/// Functions of one probe's `ftrace` profile.
pub const FTRACE_FUNCTIONS: usize = 32;
