//! `aba new`: a first recipe and a target inventory stub, written from the templates in
//! `templates/new/` (embedded in the binary, so a packaged `aba` needs no data files).
//!
//! Every template passes `aba check` as written (a test checks each one through the real
//! binary), and its comments say what to edit. The recipe is never written over an existing
//! file, and `targets.toml` only when the folder has none: both are a tester's own work.

use std::{
    fs::OpenOptions,
    io::Write,
    path::{Path, PathBuf},
};

use thiserror::Error;

use crate::recipe::ident::Name;

/// The templates `aba new --from` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Template {
    /// A null A-A-A on this machine: runs at once on the built-in `local` target.
    Quickstart,
    /// A-B-A: two kernels, the original booted twice around the patched one.
    Aba,
    /// A-B-A-B-A: two boots of the patched kernel, three of the original.
    Ababa,
    /// A-B-B-A: a palindrome, each kernel booted twice.
    Palindrome,
    /// A-B-A over a matrix of workload cases, with a control workload.
    Matrix,
}

impl Template {
    /// The template's recipe text, `__NAME__` standing for the recipe's name.
    fn text(self) -> &'static str {
        match self {
            Template::Quickstart => include_str!("../templates/new/quickstart.toml"),
            Template::Aba => include_str!("../templates/new/aba.toml"),
            Template::Ababa => include_str!("../templates/new/ababa.toml"),
            Template::Palindrome => include_str!("../templates/new/palindrome.toml"),
            Template::Matrix => include_str!("../templates/new/matrix.toml"),
        }
    }

    /// Whether the recipe needs a target that switches kernels (all but `quickstart`).
    pub fn needs_switching_target(self) -> bool {
        self != Template::Quickstart
    }
}

/// The target inventory stub written beside a new recipe when the folder has none.
const TARGETS_STUB: &str = include_str!("../templates/new/targets.toml");

/// What the placeholder in a template is replaced with: the recipe's name.
const NAME_PLACEHOLDER: &str = "__NAME__";

/// Why `aba new` wrote nothing, or not everything.
#[derive(Debug, Error)]
pub enum ScaffoldError {
    /// NAME is not a recipe name (it becomes a file name and the recipe's `name`).
    #[error("cannot use `{}` as a recipe name: {why}", crate::text::quoted(.name))]
    InvalidName {
        /// What was given.
        name: String,
        /// The rule it breaks.
        why: String,
    },
    /// The recipe file exists already.
    #[error("{} exists already; aba new does not overwrite a file", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What `aba new` wrote.
#[derive(Debug)]
pub struct Scaffolded {
    /// The recipe.
    pub recipe: PathBuf,
    /// The inventory stub, when the folder had no `targets.toml`.
    pub targets: Option<PathBuf>,
}

/// Validates NAME: a recipe name (`[A-Za-z0-9][A-Za-z0-9_.-]*`, at most 64 characters), so
/// `NAME.toml` is a plain file in `dir` and NAME is also the recipe's `name`. A trailing
/// `.toml` is accepted and dropped.
pub fn recipe_name(name: &str) -> Result<Name, ScaffoldError> {
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    Name::new(stem).map_err(|why| ScaffoldError::InvalidName {
        name: name.to_owned(),
        why: why
            .split_once(": ")
            .map_or(why.clone(), |(_, rule)| rule.to_owned()),
    })
}

/// The recipe text of `template` for a recipe called `name`.
pub fn recipe_text(template: Template, name: &Name) -> String {
    template.text().replace(NAME_PLACEHOLDER, name.as_str())
}

/// Writes `dir/NAME.toml` from `template` (refusing an existing file) and `dir/targets.toml`
/// when there is none; an empty `dir` is the current directory, named as `NAME.toml`.
pub fn scaffold(dir: &Path, name: &str, template: Template) -> Result<Scaffolded, ScaffoldError> {
    let name = recipe_name(name)?;
    let recipe = dir.join(format!("{name}.toml"));
    write_new(&recipe, &recipe_text(template, &name))?;
    let stub = dir.join("targets.toml");
    // `exists` follows symlinks; a dangling link counts as present so it is never replaced.
    let targets = if stub.exists() || stub.symlink_metadata().is_ok() {
        None
    } else {
        write_new(&stub, TARGETS_STUB)?;
        Some(stub)
    };
    Ok(Scaffolded { recipe, targets })
}

/// Creates `path` with `text`; an existing file (or a link) is an error, never replaced,
/// decided by the file system itself (`O_EXCL`), not by an earlier look.
fn write_new(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                ScaffoldError::Exists {
                    path: path.to_path_buf(),
                }
            } else {
                ScaffoldError::Write {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|source| ScaffoldError::Write {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{ScaffoldError, TARGETS_STUB, Template, recipe_name, recipe_text};
    use crate::{inventory::Inventory, recipe::parse};

    #[test]
    fn names_must_be_plain_file_names() {
        assert_eq!(recipe_name("sched-fix").expect("ok").as_str(), "sched-fix");
        assert_eq!(recipe_name("v2.toml").expect("ok").as_str(), "v2");
        for bad in ["../x", "a/b", ".hidden", "", "-x", "a b", "x\u{1b}"] {
            let err = recipe_name(bad).expect_err(bad);
            assert!(
                matches!(err, ScaffoldError::InvalidName { .. }),
                "{bad}: {err}"
            );
        }
        let err = recipe_name("a/b").expect_err("slash").to_string();
        assert!(
            err.starts_with("cannot use `a/b` as a recipe name: it contains '/'\nhelp: use only"),
            "{err}"
        );
    }

    #[test]
    fn every_template_is_a_valid_recipe_with_its_name() {
        use clap::ValueEnum;
        for template in Template::value_variants() {
            let name = recipe_name("t1").expect("name");
            let text = recipe_text(*template, &name);
            assert!(!text.contains("__NAME__"), "{template:?}");
            let recipe =
                parse(Path::new("t1.toml"), &text).unwrap_or_else(|e| panic!("{template:?}: {e}"));
            assert_eq!(recipe.name.as_str(), "t1");
        }
    }

    #[test]
    fn the_targets_stub_is_a_valid_inventory() {
        let inventory =
            Inventory::parse(Path::new("targets.toml"), TARGETS_STUB).expect("valid stub");
        assert!(inventory.targets.contains_key("box"));
    }
}
