//! What the user sees while a campaign runs.

pub mod progress;
