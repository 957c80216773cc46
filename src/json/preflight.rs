//! `aba preflight --json`: the checklist, item by item, as the text prints it.

use serde::Serialize;

use crate::{
    json::{FORMAT, Kind},
    target::check::{CheckItem, CheckStatus},
};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct PreflightDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `preflight`.
    pub kind: Kind,
    /// The recipe file, as given on the command line.
    pub recipe: String,
    /// The target's inventory name.
    pub target: &'a str,
    /// No check failed: `aba run` can start (warnings do not stop it).
    pub passed: bool,
    /// How many checks failed.
    pub failed: usize,
    /// Every check in the order it ran: `status` (`ok`, `warn`, `fail`), `what`, `detail`
    /// (what was found) and `fix` (for `warn` and `fail`; `null` otherwise).
    pub checks: &'a [CheckItem],
}

impl<'a> PreflightDoc<'a> {
    /// The document of `checks` for `recipe` on `target`.
    #[must_use]
    pub fn new(
        recipe: &std::path::Path,
        target: &'a str,
        checks: &'a [CheckItem],
    ) -> PreflightDoc<'a> {
        let failed = checks
            .iter()
            .filter(|c| c.status == CheckStatus::Fail)
            .count();
        PreflightDoc {
            format: FORMAT,
            kind: Kind::Preflight,
            recipe: recipe.to_string_lossy().into_owned(),
            target,
            passed: failed == 0,
            failed,
            checks,
        }
    }
}
