//! What the user sees while a campaign runs.

pub mod detect;
pub mod progress;

/// Lines of `aba check`'s text (its plan and its detection advice) are at most this wide: it
/// is read in a terminal, beside the recipe, before anything runs.
pub const WIDTH: usize = 100;
