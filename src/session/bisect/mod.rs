//! `aba bisect`'s parts in the session layer: the git side of a bisection ([`range`]), its
//! journal ([`journal`]), and the files a bisection leaves ([`steps_tsv`], [`git_log`]). The
//! decision core is [`crate::bisect`], pure and without I/O; the parts here give it the
//! commits and keep what it decided. The command that drives them is not built yet.

pub mod git_log;
pub mod journal;
pub mod range;
pub mod steps_tsv;
