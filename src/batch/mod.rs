//! A night of campaigns (issue 13): a versioned TOML plan listing campaigns in order
//! ([`plan`]), run by `aba batch FILE` into a batch directory with its own journal
//! ([`journal`]), and the morning summary made from that journal and each campaign's own
//! results ([`summary`]). Running the campaigns is the session's job (`aba::session::batch`):
//! this module owns only the formats and what they say.

pub(crate) mod confine;
pub mod holds;
pub mod journal;
pub mod plan;
mod stamps;
pub mod summary;
