//! Where a bound value came from: the recipe, the target inventory or the command line.
//! Shared by kernel bindings (`aba::kernel::binding`) and parameter bindings
//! (`aba::recipe::params`), and journaled with them. A leaf: it knows nothing of what is bound.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a binding came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Origin {
    /// The recipe as written.
    Recipe,
    /// The target inventory, at `file:line:column`.
    Inventory {
        /// `file:line:column` of the label's key.
        at: String,
    },
    /// A `--kernel LABEL=RELEASE` option.
    CommandLine {
        /// The option as given.
        option: String,
    },
    /// A kernel built on this host, from the builds file at `file:line:column`: the release
    /// is the one its image embeds, the image and initrd are aba's copies on the target.
    Build {
        /// `file:line:column` of the kernel's table in the builds file.
        at: String,
    },
}

impl Origin {
    /// Where it was written, for an error: `file:line:column`, or the option.
    pub fn place(&self) -> &str {
        match self {
            Origin::Recipe => "the recipe",
            Origin::Inventory { at } => at,
            Origin::CommandLine { option } => option,
            Origin::Build { at } => at,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Recipe => f.write_str("the recipe"),
            Origin::Inventory { at } => write!(f, "the inventory ({at})"),
            Origin::CommandLine { option } => write!(f, "the command line ({option})"),
            Origin::Build { at } => write!(f, "a build on this host ({at})"),
        }
    }
}
