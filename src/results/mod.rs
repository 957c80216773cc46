//! The results directory and its raw files: layout, the journal, `samples.csv`, and durable
//! writes. Nothing here interprets numbers; the analysis does that.

pub mod atomic;
pub mod journal;
pub mod kept;
pub mod layout;
pub mod manifest;
pub mod row_chain;
pub mod samples;
pub mod verify;
