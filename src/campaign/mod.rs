//! Campaigns: planning a recipe on a target and running the plan.

pub(crate) mod advice;
pub mod amend;
pub mod calibrate;
pub mod engine;
pub mod environment;
pub mod eta;
pub mod events;
pub mod extract;
pub mod footprint;
pub mod ftrace;
pub(crate) mod judging;
pub mod ledger;
pub mod load;
pub mod lock;
pub(crate) mod lookalikes;
pub mod plan;
pub mod preflight;
pub mod reservation;
pub mod restore;
pub mod tuning;
pub(crate) mod workload_command;
