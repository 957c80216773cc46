//! Campaigns: planning a recipe on a target and running the plan.

pub mod plan;
