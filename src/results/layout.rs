//! The results directory: where everything of one campaign lives, and how it is created.
//!
//! ```text
//! results/<name>-<UTC stamp>/
//!   recipe.toml, files/…   exact copies; resume and report use these, not the originals
//!   journal.jsonl          the campaign's state (append-only)
//!   samples.csv            the raw data (append-only)
//!   profile.toml           the noise profile the campaign uses (a copy), when it uses one
//!   env/<point>-<attempt>.json   environment snapshot per point attempt
//!   raw/…                  output of failed runs
//!   work/                  the local target's work directory
//!   points.tsv comparison.tsv run-audit.tsv report.txt README.md samples.svg
//! ```

use std::{
    io,
    path::{Path, PathBuf},
};

use crate::recipe::{FilesFrom, Loader, Params, Recipe, RecipeError, params::BoundParam};

/// The folder of build logs in a results directory.
pub const BUILD_DIR: &str = "build";

/// A campaign's results directory.
#[derive(Clone, Debug)]
pub struct ResultsDir {
    /// Its root.
    pub root: PathBuf,
}

impl ResultsDir {
    /// Creates `base/<name>-<stamp>/` (with `-2`, `-3`… if it exists) and copies the recipe
    /// and its files into it.
    pub fn create(base: &Path, recipe: &Recipe, stamp: &str) -> io::Result<ResultsDir> {
        let root = new_stamped_dir(base, recipe.name.as_str(), stamp)?;
        ResultsDir::fill(root, recipe)
    }

    /// Creates exactly `root` (which must not exist; its parent must) and copies the recipe
    /// and its files into it: one target's directory inside a multi-target parent.
    pub fn create_at(root: &Path, recipe: &Recipe) -> io::Result<ResultsDir> {
        std::fs::create_dir(root)?;
        ResultsDir::fill(root.to_path_buf(), recipe)
    }

    fn fill(root: PathBuf, recipe: &Recipe) -> io::Result<ResultsDir> {
        let dir = ResultsDir { root };
        dir.copy_recipe(recipe)?;
        for sub in [dir.env_dir(), dir.raw_dir()] {
            std::fs::create_dir_all(sub)?;
        }
        crate::results::atomic::sync_dir(&dir.root)?;
        Ok(dir)
    }

    /// Writes `recipe` and its files as the directory's copy (a new campaign, or an amended
    /// one: files the new recipe no longer lists are removed).
    pub fn copy_recipe(&self, recipe: &Recipe) -> io::Result<()> {
        let files = self.files_dir();
        if files.exists() {
            std::fs::remove_dir_all(&files)?;
        }
        for file in &recipe.files {
            let dest = files.join(file.remote.as_str());
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::copy(&file.local, &dest)?;
        }
        crate::results::atomic::write_atomic(&self.recipe_path(), recipe.hashed_text.as_bytes())
    }

    /// An existing results directory.
    pub fn open(root: &Path) -> ResultsDir {
        ResultsDir {
            root: root.to_path_buf(),
        }
    }

    /// The copied recipe.
    pub fn recipe_path(&self) -> PathBuf {
        self.root.join("recipe.toml")
    }

    /// The copied `[files]`.
    pub fn files_dir(&self) -> PathBuf {
        self.root.join("files")
    }

    /// `journal.jsonl`.
    pub fn journal_path(&self) -> PathBuf {
        self.root.join("journal.jsonl")
    }

    /// `profile.toml`: the copy of the noise profile the campaign uses.
    pub fn profile_path(&self) -> PathBuf {
        self.root.join("profile.toml")
    }

    /// `samples.csv`.
    pub fn samples_path(&self) -> PathBuf {
        self.root.join("samples.csv")
    }

    /// `env/`.
    pub fn env_dir(&self) -> PathBuf {
        self.root.join("env")
    }

    /// `raw/`.
    pub fn raw_dir(&self) -> PathBuf {
        self.root.join("raw")
    }

    /// `work/`: the local target's work directory.
    pub fn work_dir(&self) -> PathBuf {
        self.root.join("work")
    }

    /// The campaign's work directory on a target whose inventory sets a `workdir` (`base`):
    /// `<base>/<this directory's name>`, the engine's and `aba clean`'s one rule. `None`
    /// without a base (the local target works in [`ResultsDir::work_dir`]) and for a path
    /// without a name of its own.
    pub fn target_workdir(&self, base: Option<&str>) -> Option<String> {
        let base = base?;
        let name = std::path::absolute(&self.root)
            .ok()?
            .file_name()?
            .to_string_lossy()
            .into_owned();
        (!name.is_empty()).then(|| format!("{}/{name}", base.trim_end_matches('/')))
    }

    /// The environment record of a point attempt.
    pub fn env_path(&self, point: &str, attempt: u32) -> PathBuf {
        self.root.join(env_record_name(point, attempt))
    }

    /// `build/`: the logs of the build steps of kernels built on the host.
    pub fn build_dir(&self) -> PathBuf {
        self.root.join(BUILD_DIR)
    }

    /// The build log of kernel `label`, as the journal names it (relative to the directory).
    pub fn build_log_name(label: &str) -> String {
        format!("{BUILD_DIR}/{label}.log")
    }

    /// The copy of the recipe's `[expect] reference`.
    pub fn reference_dir(&self) -> PathBuf {
        self.root.join(crate::recipe::resolved::REFERENCE_COPY)
    }

    /// Loads the copied recipe with its copied files, its kernels as the journal recorded
    /// them when the campaign started (bound by the inventory or command line of then, never
    /// of now).
    pub fn load_recipe(&self) -> Result<Recipe, RecipeError> {
        self.load_recipe_with(None)
    }

    /// [`ResultsDir::load_recipe`]; with `params`, a new campaign's (whose journal has no
    /// header yet), the copied recipe is read with them and without the journal's records.
    pub fn load_recipe_with(&self, params: Option<&[BoundParam]>) -> Result<Recipe, RecipeError> {
        let files = FilesFrom::Copied(&self.files_dir());
        if let Some(params) = params {
            return Loader {
                files,
                params: Params::Recorded(params),
            }
            .load(&self.recipe_path());
        }
        // Parameters are read with the recipe: the recorded values, over its defaults.
        // An unreadable journal is reported by the journal reader every caller runs next.
        let recorded = crate::results::journal::recorded_params(&self.journal_path())
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut recipe = Loader {
            files,
            params: Params::Recorded(&recorded),
        }
        .load(&self.recipe_path())?;
        if let Ok(Some(kernels)) = crate::results::journal::recorded_kernels(&self.journal_path()) {
            crate::kernel::binding::apply(&mut recipe, &kernels);
        }
        Ok(recipe)
    }
}

/// Creates `base/<name>-<stamp>/` (with `-2`, `-3`… if it exists) and returns it.
pub fn new_stamped_dir(base: &Path, name: &str, stamp: &str) -> io::Result<PathBuf> {
    std::fs::create_dir_all(base)?;
    let mut n = 1;
    loop {
        let root = if n == 1 {
            base.join(format!("{name}-{stamp}"))
        } else {
            base.join(format!("{name}-{stamp}-{n}"))
        };
        // create_dir, not exists(): two runs started in the same second never share one.
        match std::fs::create_dir(&root) {
            Ok(()) => return Ok(root),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// A path component made from free text (a case name): anything but `[A-Za-z0-9._-]` becomes
/// `_`.
pub fn path_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `20261130T004133Z`: sortable, and free of `:` so it works in any file name.
pub fn utc_stamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    )
}

/// The environment record of a point attempt relative to the results directory
/// (`env/<point>-<attempt>.json`), as the audit and the environment check name it.
pub fn env_record_name(point: &str, attempt: u32) -> String {
    format!("env/{point}-{attempt}.json")
}
