//! Noise profiles (issue 10): what many boots of one kernel on one machine say about a
//! workload's noise, written once by `aba calibrate` and reused by every campaign that
//! matches it.
//!
//! | module | owns |
//! | --- | --- |
//! | `model` | the file format: versioned, checksummed, every value checked with its field named |
//! | `file` | reading a profile file (size-limited, errors naming the file and field), writing one, the target's profile directory |
//! | `build` | a profile from a finished calibration campaign's analysis |
//! | `matching` | whether a profile holds for a campaign: statically (recipe and target) and at run time (what the boots recorded) |
//! | `select` | which profile of a target's directory a new campaign copies, and why the others not |

pub mod build;
pub mod file;
pub mod matching;
pub mod model;
pub mod select;
#[cfg(test)]
pub(crate) mod testdata;

pub use file::{ProfileError, read_profile, scan_dir, write_profile};
pub use model::{PROFILE_FORMAT, Profile, Scope};
