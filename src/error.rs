//! The top-level error, its exit code, and how it is shown: `error: …`, the chain of causes,
//! and a hint naming the flag or key that fixes it.

use std::{error::Error as StdError, fmt::Write as _};

use thiserror::Error;

/// Exit codes, documented in the README; scripts around overnight campaigns rely on them.
pub mod exit_code {
    /// Everything worked (for `run`/`resume`: the campaign finished).
    pub const OK: u8 = 0;
    /// Bad input or an error before or outside a campaign.
    pub const ERROR: u8 = 1;
    /// Command-line usage error (clap's convention).
    pub const USAGE: u8 = 2;
    /// The campaign stopped on a failure (a kernel failed, the target vanished, the disk
    /// filled). The results directory is resumable.
    pub const CAMPAIGN_STOPPED: u8 = 3;
    /// The campaign finished but a published result in `[expect]` was not reproduced.
    pub const EXPECT_MISSED: u8 = 4;
    /// `aba verify`: the journal and `samples.csv` disagree (a sample is lost or mislabelled).
    pub const VERIFY_FAILED: u8 = 5;
    /// Interrupted by Ctrl-C / SIGTERM; the results directory is resumable.
    pub const INTERRUPTED: u8 = 130;
}

/// Anything that ends an `aba` command unsuccessfully.
#[derive(Debug, Error)]
pub enum Error {
    /// The recipe is invalid.
    #[error("invalid recipe: {0}")]
    Recipe(#[from] crate::recipe::RecipeError),
    /// The inventory is invalid or lacks the target.
    #[error(transparent)]
    Inventory(#[from] crate::inventory::InventoryError),
    /// The recipe cannot run on the target.
    #[error("cannot plan this recipe: {0}")]
    Plan(#[from] crate::campaign::plan::PlanError),
    /// Something else, with context.
    #[error("{message}")]
    Other {
        /// What failed.
        message: String,
        /// Why.
        #[source]
        source: Option<Box<dyn StdError + Send + Sync>>,
        /// How to fix it.
        hint: Option<String>,
        /// Exit code.
        code: u8,
    },
}

impl Error {
    /// An error with a message and an optional cause.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Other {
            message: message.into(),
            source: None,
            hint: None,
            code: exit_code::ERROR,
        }
    }

    /// Wraps `source` with what was being done.
    pub fn context(
        message: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Error::Other {
            message: message.into(),
            source: Some(Box::new(source)),
            hint: None,
            code: exit_code::ERROR,
        }
    }

    /// Adds a hint (only to `Other`; other variants carry their own).
    #[must_use]
    pub fn with_hint(mut self, text: impl Into<String>) -> Self {
        if let Error::Other { hint, .. } = &mut self {
            *hint = Some(text.into());
        }
        self
    }

    /// Sets the exit code.
    #[must_use]
    pub fn with_code(mut self, exit: u8) -> Self {
        if let Error::Other { code, .. } = &mut self {
            *code = exit;
        }
        self
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Other { code, .. } => *code,
            _ => exit_code::ERROR,
        }
    }

    fn hint(&self) -> Option<String> {
        match self {
            Error::Other { hint, .. } => hint.clone(),
            Error::Inventory(crate::inventory::InventoryError::UnknownTarget {
                known,
                suggestion,
                ..
            }) => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`? known targets: {}", known.join(", ")),
                None => format!(
                    "known targets: {}; define others in targets.toml or pass --targets FILE",
                    known.join(", ")
                ),
            }),
            Error::Plan(_) => Some(
                "run it on a target that switches kernels (see targets.toml), or give every kernel the same release".to_owned(),
            ),
            _ => None,
        }
    }

    /// Renders the error, its causes and the hint, for stderr.
    pub fn render(&self) -> String {
        let mut out = format!("error: {self}");
        let mut source = self.source();
        let mut first = true;
        while let Some(cause) = source {
            // Transparent wrappers repeat their cause's text; print it once.
            let text = cause.to_string();
            if !out.contains(&text) {
                if first {
                    out.push_str("\ncaused by:");
                    first = false;
                }
                let _ = write!(out, "\n  - {text}");
            }
            source = cause.source();
        }
        if let Some(hint) = self.hint() {
            let _ = write!(out, "\n(hint: {hint})");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Error, exit_code};

    #[test]
    fn renders_chain_and_hint() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = Error::context("cannot open results/x/journal.jsonl", io)
            .with_hint("pass the directory `aba run` printed")
            .with_code(exit_code::CAMPAIGN_STOPPED);
        assert_eq!(
            err.render(),
            "error: cannot open results/x/journal.jsonl\ncaused by:\n  - no such file\n(hint: pass the directory `aba run` printed)"
        );
        assert_eq!(err.exit_code(), 3);
    }
}
