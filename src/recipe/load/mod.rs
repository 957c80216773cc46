//! Reading a recipe: file → TOML → [`model`](crate::recipe::model) → cross-field checks →
//! resolved [`Recipe`].
//!
//! Single values were already checked by their types during deserialisation. What is left are
//! the checks that relate two places of the file (a sequence label and the kernels table, a
//! `{placeholder}` and the matrix, an `[[expect]]` and the workloads). They are all run, and
//! every problem is reported at once with its own position, so a recipe is fixed in one pass.
//!
//! [`Loader`] is the way in. The checks are one `Checker`, its methods in one file per recipe
//! section (`kernels`, `files`, `workload`, `metrics`, `analysis`, `cases`, `expect`,
//! `parameters`), `resolve` assembling them and `common` holding what several share.

use std::{
    collections::HashSet,
    fmt,
    ops::Range,
    path::{Path, PathBuf},
    time::Duration,
};

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::recipe::{
    diagnostic::Diagnostic,
    limits,
    model::RecipeFile,
    params::{self, BoundParam, Param, ParamBinding, ParamBindingError},
    resolved::{FileCopy, Recipe},
};

mod analysis;
mod cases;
mod common;
mod expect;
mod files;
mod kernels;
mod metrics;
mod parameters;
mod probes;
mod resolve;
mod workload;

/// The only recipe format version this build understands.
pub const RECIPE_VERSION: i64 = 1;

/// What is kept of each output stream of a workload run unless `max_output` says otherwise.
pub const DEFAULT_MAX_OUTPUT: usize = 16 << 20;

/// Default deadline of one workload run.
const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// Default deadline of one setup or teardown command.
const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(600);
/// Default ETA guess for one workload run.
const DEFAULT_ESTIMATE: Duration = Duration::from_secs(1);

/// Default warm-up runs per case per point.
const DEFAULT_WARMUP: u32 = 3;
/// Default measured runs per case per point.
const DEFAULT_SAMPLES: u32 = 9;

/// Why a recipe could not be loaded.
#[derive(Debug, Error)]
pub enum RecipeError {
    /// The file (or a file it names) could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file has problems; each one points at its place.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// A tester's value ([`Params::Bind`]) names no parameter the recipe declares.
    /// Boxed: a diagnostic list is what this error usually carries, and it stays small.
    #[error(transparent)]
    Binding(Box<ParamBindingError>),
}

/// One or more diagnostics, rendered one after the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diag) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n\nerror: ")?;
            }
            write!(f, "{diag}")?;
        }
        if self.0.len() > 1 {
            write!(f, "\n\n({} problems in this file)", self.0.len())?;
        }
        Ok(())
    }
}

/// Where `[files]` entries are read from.
#[derive(Clone, Copy, Debug)]
pub enum FilesFrom<'a> {
    /// Relative to the recipe file, as written (a recipe being authored or run). A source must
    /// resolve, symlinks followed, inside the recipe's folder or inside one of these folders,
    /// which only the tester names (on the command line or in their inventory).
    RecipeDir(&'a [PathBuf]),
    /// `<dir>/<remote name>`: the copies a results directory keeps, so that resume runs the
    /// very programs the campaign started with.
    Copied(&'a Path),
}

/// Which values a recipe's `[params]` take.
#[derive(Clone, Copy, Debug, Default)]
pub enum Params<'a> {
    /// The recipe's defaults.
    #[default]
    Defaults,
    /// Values as a journal recorded them (or as a calibration inherits them from its recipe),
    /// over the defaults; a name the recipe does not declare is ignored (it was checked when
    /// the values were bound).
    Recorded(&'a [BoundParam]),
    /// A tester's values, in increasing precedence (the target's `[targets.NAME.params]`,
    /// then `--param`): each must name a declared parameter ([`params::bind`]), else
    /// [`RecipeError::Binding`].
    Bind(&'a [ParamBinding]),
}

/// How a recipe is read: where its `[files]` come from and which values its parameters take.
/// Every way of reading a recipe goes through it, so that a recipe being authored, one being
/// run with a tester's values and a results directory's copy are checked alike, and a recipe
/// is bound in the one reading that produces it (the target whose values apply is chosen
/// before the recipe is read).
#[derive(Clone, Copy, Debug, Default)]
pub struct Loader<'a> {
    /// Where `[files]` are read from.
    pub files: FilesFrom<'a>,
    /// The values of the recipe's parameters.
    pub params: Params<'a>,
}

impl Default for FilesFrom<'_> {
    /// The recipe alone: `[files]` from its own folder.
    fn default() -> Self {
        FilesFrom::RecipeDir(&[])
    }
}

impl Loader<'_> {
    /// Reads and validates the recipe at `path`. The file must be a regular file of at most
    /// [`limits::FILE_BYTES`]: a FIFO or a device is refused before a byte is read.
    pub fn load(&self, path: &Path) -> Result<Recipe, RecipeError> {
        // A results directory's recipe.toml is aba's own copy, never a link: one planted there
        // could name any file of this machine, and a parse error would quote its first line.
        if matches!(self.files, FilesFrom::Copied(_))
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(RecipeError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it is a symbolic link; a results directory's recipe copy is a regular file",
                ),
            });
        }
        let source =
            crate::input::read_text(path, limits::FILE_BYTES, "recipe").map_err(|source| {
                RecipeError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        self.parse(path, &source)
    }

    /// Validates recipe text as if it were read from `path` (which names the file in errors
    /// and anchors relative `[files]` paths). With parameter values, the text is checked with
    /// its defaults first: a shared recipe must hold on its own, whoever binds it later.
    pub fn parse(&self, path: &Path, source: &str) -> Result<Recipe, RecipeError> {
        let recipe = parse_bound(path, source, self.files, &[])?;
        let bound = match self.params {
            Params::Defaults | Params::Recorded([]) | Params::Bind([]) => return Ok(recipe),
            Params::Recorded(bound) => bound.to_vec(),
            Params::Bind(bindings) => params::bind(&recipe.params, bindings)
                .map_err(|e| RecipeError::Binding(Box::new(e)))?,
        };
        // The defaults' recipe only had to hold; its `[files]` bytes go before the bound one
        // reads them again.
        drop(recipe);
        parse_bound(path, source, self.files, &bound)
    }
}

/// Validates recipe text as if it were read from `path`, `[files]` from its folder and its
/// parameters' defaults: [`Loader::default`], for text that has no file (tests, fuzzing).
pub fn parse(path: &Path, source: &str) -> Result<Recipe, RecipeError> {
    Loader::default().parse(path, source)
}

/// Validates recipe text, taking `[files]` from `files` and parameter values from `bound`
/// (over the defaults; a name the recipe does not declare is ignored, [`params::bind`]
/// having reported it).
fn parse_bound(
    path: &Path,
    source: &str,
    files: FilesFrom<'_>,
    bound: &[BoundParam],
) -> Result<Recipe, RecipeError> {
    let file: RecipeFile = toml::from_str(source).map_err(|err| {
        RecipeError::Invalid(Diagnostics(vec![Diagnostic::from_toml(path, source, &err)]))
    })?;
    let mut checker = Checker {
        path,
        source,
        files,
        diags: Vec::new(),
        dropped: 0,
        spare: Diagnostic::at(path, "", None, ""),
        bound,
        params: Vec::new(),
        used: HashSet::new(),
    };
    let recipe = checker.resolve(file);
    if checker.dropped > 0
        && let Some(last) = checker.diags.last_mut()
    {
        last.help.push(format!(
            "{} more problems in this file are not shown; fix these first",
            checker.dropped
        ));
    }
    if checker.diags.is_empty() {
        let mut recipe = recipe;
        recipe.sha256 = fingerprint(source, &mut recipe.files)?;
        Ok(recipe)
    } else {
        Err(RecipeError::Invalid(Diagnostics(checker.diags)))
    }
}

/// Reads every `[files]` source once, keeps its bytes in its [`FileCopy`] (what the series
/// definition hashes are taken over, so analysis never reads them again), and returns the
/// SHA-256 over the recipe text and those bytes, so that a changed workload program counts as
/// a changed experiment.
fn fingerprint(source: &str, files: &mut [FileCopy]) -> Result<String, RecipeError> {
    let mut hasher = Sha256::new();
    hasher.update(source.as_bytes());
    for file in files {
        let data = read_source(&file.local).map_err(|source| RecipeError::Read {
            path: file.local.clone(),
            source,
        })?;
        hasher.update(file.remote.as_str().as_bytes());
        hasher.update([0]);
        hasher.update((data.len() as u64).to_le_bytes());
        hasher.update(&data);
        file.content = data.into();
    }
    Ok(hex::encode(hasher.finalize()))
}

/// A `[files]` source: a regular file (never a FIFO or a device), at most
/// [`limits::FILE_SOURCE_BYTES`].
pub fn read_source(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = crate::input::open_regular(path)?;
    let mut data = Vec::new();
    file.take(limits::FILE_SOURCE_BYTES + 1)
        .read_to_end(&mut data)?;
    if data.len() as u64 > limits::FILE_SOURCE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is larger than {}, the limit of a [files] source",
                crate::text::bytes(limits::FILE_SOURCE_BYTES)
            ),
        ));
    }
    Ok(data)
}

/// Problems reported in full; further ones are counted.
const MAX_DIAGNOSTICS: usize = 50;

struct Checker<'a> {
    path: &'a Path,
    source: &'a str,
    files: FilesFrom<'a>,
    /// Parameter values bound over the defaults.
    bound: &'a [BoundParam],
    /// The declared parameters with their values, read first.
    params: Vec<Param>,
    /// Parameters some place uses; a declared one nobody uses is an error.
    used: HashSet<String>,
    diags: Vec<Diagnostic>,
    /// Problems past [`MAX_DIAGNOSTICS`].
    dropped: usize,
    /// Where help for a dropped problem goes.
    spare: Diagnostic,
}

impl Checker<'_> {
    /// Records a problem. Past [`MAX_DIAGNOSTICS`] problems are only counted: a hostile recipe
    /// with a million bad values gets a bounded answer, not a million carets.
    fn error(&mut self, span: Range<usize>, message: impl Into<String>) -> &mut Diagnostic {
        if self.diags.len() >= MAX_DIAGNOSTICS {
            self.dropped += 1;
            self.spare = Diagnostic::at(self.path, "", None, "");
            return &mut self.spare;
        }
        self.diags
            .push(Diagnostic::at(self.path, self.source, Some(span), message));
        self.diags.last_mut().expect("invariant: just pushed")
    }
}

#[cfg(test)]
mod testkit {
    //! What the section tests share: a minimal valid recipe and the errors of a broken one.

    use std::path::Path;

    use super::{RecipeError, parse};

    pub const MINIMAL: &str = r#"
version = 1
name = "null"
description = "noise floor"
sequence = ["a", "b", "a"]
[kernels.a]
release = "6.1.0-47-cloud-amd64"
[kernels.b]
release = "6.1.0-50-cloud-amd64"
cmdline = "aba.kernel=b"
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, unit = "ns", better = "lower" }
"#;

    pub fn errors(src: &str) -> String {
        match parse(Path::new("r.toml"), src) {
            Err(RecipeError::Invalid(d)) => d.to_string(),
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error for:\n{src}"),
        }
    }
}
