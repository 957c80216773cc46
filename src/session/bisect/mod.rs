//! `aba bisect` in the session layer: the git side of a bisection ([`range`]), its journal
//! ([`journal`]), each step's recipe ([`step_recipe`]), the loop that builds, boots and
//! decides ([`drive`]), and the files a bisection leaves ([`report`], [`steps_tsv`],
//! [`git_log`]). The decision core is [`crate::bisect`], pure and without I/O; the parts here
//! give it the commits and keep what it decided.

pub mod drive;
pub mod failure;
pub mod git_log;
pub mod journal;
pub mod range;
pub mod report;
pub mod status;
pub mod step_recipe;
pub mod steps_tsv;
