//! Reading a recipe: file → TOML → [`model`](crate::recipe::model) → cross-field checks →
//! resolved [`Recipe`].
//!
//! Single values were already checked by their types during deserialisation. What is left are
//! the checks that relate two places of the file (a sequence label and the kernels table, a
//! `{placeholder}` and the matrix, an `[[expect]]` and the workloads). They are all run, and
//! every problem is reported at once with its own position, so a recipe is fixed in one pass.

use std::{
    collections::HashSet,
    fmt,
    ops::Range,
    path::{Path, PathBuf},
    time::Duration,
};

use indexmap::IndexMap;
use regex::Regex;
use sha2::{Digest, Sha256};
use thiserror::Error;
use toml::Spanned;

use crate::recipe::{
    diagnostic::{Diagnostic, ticked},
    ident::{CpuList, KernelLabel, TargetPath, check_cmdline_param, check_matrix_value},
    limits,
    model::{
        ExpectSection, ExtendSpec, ExtendUntil, MetricSpec, RecipeFile, Role, SysctlValue,
        TuningKnob, TuningSpec, WorkloadSpec,
    },
    params::{self, BoundParam, NumberOrParam, Param},
    resolved::{
        AnalysisSettings, CaseComparison, Check, Expect, Extend, Extract, FileCopy, Kernel, Knob,
        Metric, REFERENCE_COPY, Recipe, Recovery, Reference, Steps, Tuning, Workload, point_labels,
    },
    scoped_limits::LimitOverrides,
};

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
/// Help for a `[files]` source outside the recipe's folder.
const FILES_OUTSIDE_HELP: &str = "a recipe may only copy files from its own folder, so a recipe from someone else cannot collect yours; move the file there, or allow its folder with `--allow-files-outside DIR` (or `allow_files_outside` in your targets.toml)";
/// Help for a regex that does not compile.
const REGEX_HELP: &str = "patterns use Rust regex syntax (no look-around, no backreferences); write them as TOML literal strings ('…') so backslashes stay as written";

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

/// [`FilesFrom`], owned: how a recipe was read, kept in it so that binding its parameters
/// ([`rebind`]) reads it again the same way.
#[derive(Clone, Debug)]
pub enum FilesSource {
    /// [`FilesFrom::RecipeDir`].
    RecipeDir(Vec<PathBuf>),
    /// [`FilesFrom::Copied`].
    Copied(PathBuf),
}

impl FilesSource {
    fn borrowed(&self) -> FilesFrom<'_> {
        match self {
            FilesSource::RecipeDir(extra) => FilesFrom::RecipeDir(extra),
            FilesSource::Copied(dir) => FilesFrom::Copied(dir),
        }
    }
}

impl FilesFrom<'_> {
    fn owned(self) -> FilesSource {
        match self {
            FilesFrom::RecipeDir(extra) => FilesSource::RecipeDir(extra.to_vec()),
            FilesFrom::Copied(dir) => FilesSource::Copied(dir.to_path_buf()),
        }
    }
}

/// Reads `recipe` again with its parameters bound to `bound` (as [`params::bind`] returns
/// them, or as a journal recorded them): every use is validated for its place, at the
/// recipe's line and column, and the hash stays the recipe's (it covers the text, which
/// binding does not change).
pub fn rebind(recipe: &Recipe, bound: &[BoundParam]) -> Result<Recipe, RecipeError> {
    parse_bound(
        &recipe.path,
        &recipe.source,
        recipe.files_source.borrowed(),
        bound,
    )
}

/// Reads and validates the recipe at `path`; `[files]` sources must lie in its folder.
pub fn load(path: &Path) -> Result<Recipe, RecipeError> {
    load_with(path, FilesFrom::RecipeDir(&[]))
}

/// Reads and validates the recipe at `path`, allowing `[files]` sources in its folder and in
/// the folders `allow_outside` (the tester's opt-in).
pub fn load_allowing(path: &Path, allow_outside: &[PathBuf]) -> Result<Recipe, RecipeError> {
    load_with(path, FilesFrom::RecipeDir(allow_outside))
}

/// Reads and validates the recipe at `path`, taking `[files]` from `files`. The file must be
/// a regular file of at most [`limits::FILE_BYTES`]: a FIFO or a device is refused before a
/// byte is read.
pub fn load_with(path: &Path, files: FilesFrom<'_>) -> Result<Recipe, RecipeError> {
    // A results directory's recipe.toml is aba's own copy, never a link: one planted there
    // could name any file of this machine, and a parse error would quote its first line.
    if matches!(files, FilesFrom::Copied(_))
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
    let source = crate::input::read_text(path, limits::FILE_BYTES, "recipe").map_err(|source| {
        RecipeError::Read {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse_with(path, &source, files)
}

/// Validates recipe text as if it were read from `path` (which names the file in errors and
/// anchors relative `[files]` paths).
pub fn parse(path: &Path, source: &str) -> Result<Recipe, RecipeError> {
    parse_with(path, source, FilesFrom::RecipeDir(&[]))
}

/// Validates recipe text, taking `[files]` from `files`; parameters take their defaults.
pub fn parse_with(path: &Path, source: &str, files: FilesFrom<'_>) -> Result<Recipe, RecipeError> {
    parse_bound(path, source, files, &[])
}

/// Validates recipe text, taking `[files]` from `files` and parameter values from `bound`
/// (over the defaults; a name the recipe does not declare is ignored, [`params::bind`]
/// having reported it).
pub fn parse_bound(
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
        recipe.sha256 = fingerprint(source, &recipe.files)?;
        Ok(recipe)
    } else {
        Err(RecipeError::Invalid(Diagnostics(checker.diags)))
    }
}

/// SHA-256 over the recipe text and every file it copies, so that a changed workload program
/// counts as a changed experiment.
fn fingerprint(source: &str, files: &[FileCopy]) -> Result<String, RecipeError> {
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

    fn unknown_kernel(&mut self, label: &Spanned<KernelLabel>, known: &[&KernelLabel], role: &str) {
        let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
        let list = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let diag = self.error(
            label.span(),
            format!(
                "{role} names kernel `{}`, which is not in [kernels]",
                label.get_ref()
            ),
        );
        diag.suggest(label.get_ref().as_str(), names.iter().copied(), ticked);
        diag.help.push(format!("known kernels: {list}"));
    }

    /// Validates a list of kernel labels, reporting each invalid one at its own position.
    fn labels(&mut self, list: &[Spanned<String>]) -> Vec<Spanned<KernelLabel>> {
        list.iter()
            .filter_map(|raw| match KernelLabel::new(raw.get_ref()) {
                Ok(label) => Some(Spanned::new(raw.span(), label)),
                Err(why) => {
                    self.error(raw.span(), why);
                    None
                }
            })
            .collect()
    }

    fn cmdline(&mut self, text: &Spanned<String>) -> Vec<String> {
        let rendered = self.expand(text, params::verbatim).unwrap_or_default();
        let tokens: Vec<String> = rendered.split_whitespace().map(str::to_owned).collect();
        for token in &tokens {
            if let Err(why) = check_cmdline_param(token) {
                let help = self.param_help(text.get_ref());
                self.error(text.span(), why).help.extend(help);
            }
        }
        tokens
    }

    /// Reads `[params]`: each name with its value, bound over its default.
    fn params(&mut self, file: &RecipeFile) -> Vec<Param> {
        file.params
            .iter()
            .map(|(name, spec)| {
                let bound = self.bound.iter().find(|b| &b.name == name.get_ref());
                Param {
                    name: name.get_ref().clone(),
                    means: spec.means.clone(),
                    default: spec.default.get_ref().clone(),
                    value: bound
                        .map_or_else(|| spec.default.get_ref().clone(), |b| b.value.clone()),
                    from: bound.map_or(crate::origin::Origin::Recipe, |b| b.from.clone()),
                }
            })
            .collect()
    }

    /// `text` with its `{params.NAME}` replaced by the values, each through `quote`; an
    /// unknown name is reported at `text`, and `None` returned so that the place's own check
    /// does not report the same mistake twice.
    fn expand(&mut self, text: &Spanned<String>, quote: fn(&str) -> String) -> Option<String> {
        let params = &self.params;
        let used = &mut self.used;
        let rendered = params::render(
            text.get_ref(),
            &mut |name| {
                let p = params.iter().find(|p| p.name.as_str() == name)?;
                used.insert(name.to_owned());
                Some(p.value.to_string())
            },
            quote,
        );
        match rendered {
            Ok(r) => Some(r),
            Err(unknown) => {
                let names: Vec<String> = self.params.iter().map(|p| p.name.to_string()).collect();
                let diag = self.error(
                    text.span(),
                    format!("unknown parameter `{{params.{unknown}}}`"),
                );
                // The suggested parameter is not reported as unused as well: the typo is the
                // one problem.
                let suggested = diag
                    .suggest(&unknown, names.iter().map(String::as_str), |s| {
                        format!("`{{params.{s}}}`")
                    })
                    .map(str::to_owned);
                diag.help.push(if names.is_empty() {
                    "the recipe declares no [params]; declare it there with a default and `means`"
                        .to_owned()
                } else {
                    format!("declared parameters: {}", names.join(", "))
                });
                self.used.extend(suggested);
                None
            }
        }
    }

    /// For a value that failed its place's check: what each parameter `text` uses was, and
    /// where it came from.
    fn param_help(&self, text: &str) -> Vec<String> {
        self.params
            .iter()
            .filter(|p| text.contains(&format!("{{{}{}}}", params::PREFIX, p.name)))
            .map(|p| {
                let from = match &p.from {
                    crate::origin::Origin::Recipe => "the recipe's default".to_owned(),
                    from => from.to_string(),
                };
                format!("`{{params.{}}}` is `{}`, from {from}", p.name, p.value)
            })
            .collect()
    }

    /// An `[[expect]]` number: as written, or a parameter that must read as a number.
    fn number(&mut self, value: &Spanned<NumberOrParam>, key: &str) -> Option<f64> {
        match value.get_ref() {
            NumberOrParam::Number(n) => Some(*n),
            NumberOrParam::Text(text) => {
                let spanned = Spanned::new(value.span(), text.clone());
                let rendered = self.expand(&spanned, params::verbatim)?;
                if let Ok(n) = rendered.parse::<f64>()
                    && text.contains('{')
                {
                    return Some(n);
                }
                let help = self.param_help(text);
                let diag = self.error(
                    value.span(),
                    format!(
                        "`{key}` must be a number or `\"{{params.NAME}}\"` naming a number, not `{}`",
                        crate::text::quoted(&rendered)
                    ),
                );
                diag.help.extend(help);
                None
            }
        }
    }

    /// Declared parameters that no place uses: a key that parses but does nothing.
    fn unused_params(&mut self, file: &RecipeFile) {
        for name in file.params.keys() {
            if !self.used.contains(name.get_ref().as_str()) {
                self.error(
                    name.span(),
                    format!("parameter `{}` is declared but never used", name.get_ref()),
                )
                .help
                .push(format!(
                    "write `{{params.{}}}` where the fact belongs (a workload's `run`, `env` or `cpu`, [setup]/[teardown] `run`, a `cmdline`, an [[expect]] number), or remove it",
                    name.get_ref()
                ));
            }
        }
    }

    fn percent(&mut self, value: Option<&Spanned<f64>>, default: f64, key: &str) -> f64 {
        match value {
            None => default,
            Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => *v.get_ref(),
            Some(v) => {
                self.error(v.span(), format!("`{key}` must be a finite number ≥ 0"));
                default
            }
        }
    }

    /// A limit a workload or a metric sets; checked like `[analysis]`'s.
    fn override_pct(&mut self, value: Option<&Spanned<f64>>, key: &str) -> Option<f64> {
        value.map(|v| self.percent(Some(v), *v.get_ref(), key))
    }

    /// The `gate_pct`, `max_drift_pct` and `max_cv_pct` a workload or metric table sets.
    fn overrides(
        &mut self,
        gate_pct: Option<&Spanned<f64>>,
        max_drift_pct: Option<&Spanned<f64>>,
        max_cv_pct: Option<&Spanned<f64>>,
    ) -> LimitOverrides {
        LimitOverrides {
            gate_pct: self.override_pct(gate_pct, "gate_pct"),
            max_drift_pct: self.override_pct(max_drift_pct, "max_drift_pct"),
            max_cv_pct: self.override_pct(max_cv_pct, "max_cv_pct"),
        }
    }

    fn regex(&mut self, pattern: &Spanned<String>) -> Option<Regex> {
        match Regex::new(pattern.get_ref()) {
            Ok(re) => Some(re),
            Err(e) => {
                // regex's message is a multi-line picture ending in "error: <what>".
                let msg = e.to_string();
                let what = msg.lines().last().unwrap_or("invalid regex").trim();
                let what = what.strip_prefix("error: ").unwrap_or(what);
                self.error(
                    pattern.span(),
                    format!("invalid regex: {what}\nhelp: {REGEX_HELP}"),
                );
                None
            }
        }
    }

    fn resolve(&mut self, file: RecipeFile) -> Recipe {
        if *file.version.get_ref() != RECIPE_VERSION {
            let help = if *file.version.get_ref() > RECIPE_VERSION {
                "the recipe was written for a newer aba; upgrade aba to run it"
            } else {
                "version 1 is the first recipe format; write `version = 1`"
            };
            self.error(
                file.version.span(),
                format!(
                    "unsupported recipe version {}; this aba reads version {RECIPE_VERSION}\nhelp: {help}",
                    file.version.get_ref(),
                ),
            );
        }

        self.params = self.params(&file);
        let kernels = self.kernels(&file);
        let known: Vec<&KernelLabel> = kernels.keys().collect();
        let sequence = self.sequence(&file, &known);
        self.description(&file.description);

        let files = self.files(&file);
        let tuning = self.tuning(&file.tuning);
        let workloads = self.workloads(&file);
        // Cases are expanded below only when their number is within the limits.
        let sized = self.size(&file, &workloads, sequence.len());
        let analysis = self.analysis(&file, &sequence, &known);
        let mut analysis = analysis;
        let expect = if sized {
            analysis.case_comparisons = self.case_comparisons(&file, &workloads);
            self.expect(&file, &workloads, &analysis, &sequence, &known)
        } else {
            Vec::new()
        };
        let reference = self.reference(&file);

        let boot_cmdline = self.cmdline(&file.boot.cmdline);
        let setup = self.steps(&file.setup.run);
        let teardown = self.steps(&file.teardown.run);
        self.unused_params(&file);
        Recipe {
            path: self.path.to_path_buf(),
            source: self.source.to_owned(),
            sha256: String::new(),
            name: file.name,
            description: file.description.into_inner(),
            sequence,
            kernels,
            boot_cmdline,
            settle: file.settle.map_or(Duration::ZERO, |d| d.get()),
            point_retries: file.point_retries.map_or(1, |c| c.get()),
            sysctls: file
                .sysctl
                .into_iter()
                .map(|(name, value)| {
                    let text = match value.into_inner() {
                        SysctlValue::Integer(i) => i.to_string(),
                        SysctlValue::Text(t) => t,
                    };
                    (name, text)
                })
                .collect(),
            tuning,
            files,
            setup: Steps {
                commands: setup,
                timeout: file.setup.timeout.map_or(DEFAULT_STEP_TIMEOUT, |d| d.get()),
            },
            teardown: Steps {
                commands: teardown,
                timeout: file
                    .teardown
                    .timeout
                    .map_or(DEFAULT_STEP_TIMEOUT, |d| d.get()),
            },
            workloads,
            analysis,
            expect,
            reference,
            params: std::mem::take(&mut self.params),
            files_source: self.files.owned(),
        }
    }

    /// `[setup]` / `[teardown]` commands with their parameters in, shell-quoted.
    fn steps(&mut self, commands: &[Spanned<String>]) -> Vec<String> {
        commands
            .iter()
            .map(|c| {
                self.expand(c, crate::target::quote::sh_quote)
                    .unwrap_or_else(|| c.get_ref().clone())
            })
            .collect()
    }

    fn kernels(&mut self, file: &RecipeFile) -> IndexMap<KernelLabel, Kernel> {
        if file.kernels.get_ref().is_empty() {
            self.error(
                file.kernels.span(),
                "[kernels] is empty; declare at least one kernel",
            );
        }
        let mut out = IndexMap::new();
        for (label, spec) in file.kernels.get_ref() {
            let release = spec.release.clone();
            let default_path = |prefix: &str| {
                TargetPath::new(&format!("/boot/{prefix}-{release}"))
                    .expect("invariant: a valid release makes a valid path")
            };
            let cmdline = self.cmdline(&spec.cmdline);
            out.insert(
                label.get_ref().clone(),
                Kernel {
                    label: label.get_ref().clone(),
                    image: spec
                        .image
                        .clone()
                        .unwrap_or_else(|| default_path("vmlinuz")),
                    initrd: spec
                        .initrd
                        .clone()
                        .unwrap_or_else(|| default_path("initrd.img")),
                    release,
                    cmdline,
                    build: None,
                },
            );
        }
        out
    }

    fn sequence(&mut self, file: &RecipeFile, known: &[&KernelLabel]) -> Vec<KernelLabel> {
        if file.sequence.get_ref().len() > limits::POINTS {
            self.error(
                file.sequence.span(),
                format!(
                    "`sequence` has {} points; at most {} are allowed\nhelp: every point is a fresh boot; a longer series is several campaigns",
                    file.sequence.get_ref().len(),
                    limits::POINTS
                ),
            );
            return Vec::new();
        }
        let seq: Vec<Spanned<KernelLabel>> = self.labels(file.sequence.get_ref());
        if file.sequence.get_ref().is_empty() {
            self.error(
                file.sequence.span(),
                "`sequence` is empty; list the kernels in boot order, e.g. [\"a\", \"b\", \"a\"]",
            );
        }
        for label in &seq {
            if !known.contains(&label.get_ref()) {
                self.unknown_kernel(label, known, "`sequence`");
            }
        }
        // With an invalid label in `sequence`, which kernel it meant is unknown: say nothing
        // about kernels that look unused.
        let all_valid = seq.len() == file.sequence.get_ref().len();
        for (label, _) in file.kernels.get_ref() {
            if all_valid && !seq.iter().any(|s| s.get_ref() == label.get_ref()) {
                self.error(
                    label.span(),
                    format!(
                        "kernel `{}` is never booted: it is not in `sequence`",
                        label.get_ref()
                    ),
                )
                .help
                .push("add it to `sequence` or remove its [kernels] table".to_owned());
            }
        }
        let sequence: Vec<KernelLabel> = seq.iter().map(|s| s.get_ref().clone()).collect();
        let labels = point_labels(&sequence);
        let mut seen = HashSet::new();
        for label in &labels {
            if !seen.insert(label) {
                self.error(
                    file.sequence.span(),
                    format!("two points would both be labelled `{label}`; rename the kernel whose label ends in `-a`, `-b`, …"),
                );
            }
        }
        sequence
    }

    fn files(&mut self, file: &RecipeFile) -> Vec<FileCopy> {
        let mut out = Vec::new();
        if file.files.is_empty() {
            return out;
        }
        if file.files.len() > limits::FILES {
            let first = file
                .files
                .values()
                .nth(limits::FILES)
                .map_or(0..0, Spanned::span);
            self.error(
                first,
                format!(
                    "[files] lists {} files; at most {} are allowed\nhelp: pack them into an archive and unpack it in [setup]",
                    file.files.len(),
                    limits::FILES
                ),
            );
            return out;
        }
        let dir = self.recipe_dir().to_path_buf();
        let (root, allowed) = self.roots();
        let mut total = 0u64;
        for (remote, local) in &file.files {
            let path = match self.files {
                FilesFrom::RecipeDir(_) => dir.join(local.get_ref()),
                FilesFrom::Copied(copies) => copies.join(remote.as_str()),
            };
            let shown = crate::text::quoted(local.get_ref());
            let resolved = match std::fs::canonicalize(&path) {
                Ok(r) => r,
                Err(e) => {
                    self.error(local.span(), format!("cannot read `{shown}`: {e}"))
                        .help
                        .push("paths in [files] are relative to the recipe file".to_owned());
                    continue;
                }
            };
            let inside =
                resolved.starts_with(&root) || allowed.iter().any(|a| resolved.starts_with(a));
            if !inside {
                let copied = matches!(self.files, FilesFrom::Copied(_));
                let diag = self.error(
                    local.span(),
                    format!(
                        "`{shown}` resolves to {}, outside the recipe's folder {}",
                        crate::text::one_line(&resolved.to_string_lossy()),
                        crate::text::one_line(&root.to_string_lossy())
                    ),
                );
                if copied {
                    diag.help.push("a results directory keeps its own copies under files/; a link out of it is refused".to_owned());
                } else {
                    diag.help.push(FILES_OUTSIDE_HELP.to_owned());
                }
                continue;
            }
            match std::fs::metadata(&resolved) {
                Ok(meta) if meta.is_file() => {
                    if meta.len() > limits::FILE_SOURCE_BYTES {
                        self.error(
                            local.span(),
                            format!(
                                "`{shown}` is {}; a [files] source is at most {}",
                                crate::text::bytes(meta.len()),
                                crate::text::bytes(limits::FILE_SOURCE_BYTES)
                            ),
                        );
                        continue;
                    }
                    total = total.saturating_add(meta.len());
                    out.push(FileCopy {
                        remote: remote.clone(),
                        local: resolved,
                    });
                }
                Ok(_) => {
                    self.error(
                        local.span(),
                        format!(
                            "`{shown}` ({}) is not a regular file",
                            crate::text::one_line(&resolved.to_string_lossy())
                        ),
                    );
                }
                Err(e) => {
                    self.error(local.span(), format!("cannot read `{shown}`: {e}"));
                }
            }
        }
        if total > limits::FILES_TOTAL_BYTES {
            self.error(
                file.files.values().next().map_or(0..0, Spanned::span),
                format!(
                    "the [files] sources add up to {}; at most {} are allowed",
                    crate::text::bytes(total),
                    crate::text::bytes(limits::FILES_TOTAL_BYTES)
                ),
            );
        }
        out
    }

    /// The recipe's folder (`.` for a bare file name).
    fn recipe_dir(&self) -> &Path {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    }

    /// The folder a `[files]` source or the reference must resolve into, symlinks followed
    /// on both sides, and the extra folders the tester allowed.
    fn roots(&self) -> (PathBuf, Vec<PathBuf>) {
        let dir = self.recipe_dir();
        match self.files {
            FilesFrom::RecipeDir(extra) => (
                std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
                extra
                    .iter()
                    .filter_map(|p| std::fs::canonicalize(p).ok())
                    .collect(),
            ),
            FilesFrom::Copied(root) => (
                std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
                Vec::new(),
            ),
        }
    }

    /// `[expect] reference`: resolved from the recipe's folder (and inside it, like
    /// `[files]`: a recipe from someone else cannot make aba copy what lies elsewhere), or,
    /// for a results directory's copy of the recipe, its own copy of the reference.
    fn reference(&mut self, file: &RecipeFile) -> Option<Reference> {
        let ExpectSection::Reference(spec) = &file.expect else {
            return None;
        };
        let written =
            self.free_text(&spec.reference, "`reference`", limits::REFERENCE_CHARS, &[])?;
        if let FilesFrom::Copied(copies) = self.files {
            // `<results>/files` holds the copied [files]; the reference sits beside it.
            let root = copies.parent().unwrap_or(copies);
            return Some(Reference {
                written,
                path: root.join(REFERENCE_COPY),
            });
        }
        let shown = crate::text::quoted(&written);
        let resolved = match std::fs::canonicalize(self.recipe_dir().join(&written)) {
            Ok(r) => r,
            Err(e) => {
                self.error(spec.reference.span(), format!("cannot read `{shown}`: {e}"))
                    .help
                    .push(
                        "the reference is relative to the recipe file: an aba results \
                         directory, or a published bundle's folder or <name>-points.tsv"
                            .to_owned(),
                    );
                return None;
            }
        };
        let (root, allowed) = self.roots();
        if !(resolved.starts_with(&root) || allowed.iter().any(|a| resolved.starts_with(a))) {
            self.error(
                spec.reference.span(),
                format!(
                    "`{shown}` resolves to {}, outside the recipe's folder {}",
                    crate::text::one_line(&resolved.to_string_lossy()),
                    crate::text::one_line(&root.to_string_lossy())
                ),
            )
            .help
            .push(FILES_OUTSIDE_HELP.to_owned());
            return None;
        }
        Some(Reference {
            written,
            path: resolved,
        })
    }

    /// Free text that reaches terminals and reports: no control characters but `allowed`,
    /// at most `max` characters. `None` (and an error) otherwise.
    fn free_text(
        &mut self,
        value: &Spanned<String>,
        what: &str,
        max: usize,
        allowed: &[char],
    ) -> Option<String> {
        let text = value.get_ref().replace("\r\n", "\n");
        if let Some(c) = crate::text::control_char(&text, allowed) {
            self.error(
                value.span(),
                format!(
                    "{what} contains the control character {}\nhelp: free text reaches terminals, report.txt and mail as it is, so control characters (escape sequences, tabs, bells) are not allowed{}",
                    crate::text::char_name(c),
                    if allowed.contains(&'\n') { "; newlines are" } else { "" }
                ),
            );
            return None;
        }
        let n = text.chars().count();
        if n > max {
            self.error(
                value.span(),
                format!("{what} has {n} characters; at most {max} are allowed"),
            );
            return None;
        }
        Some(text)
    }

    fn description(&mut self, text: &Spanned<String>) {
        self.free_text(text, "`description`", limits::DESCRIPTION_CHARS, &['\n']);
    }

    /// Cases, runs, rows and plan size within [`limits`]; false when the cases are too many
    /// to expand.
    fn size(&mut self, file: &RecipeFile, workloads: &[Workload], points: usize) -> bool {
        let points = points as u64;
        let mut cases = 0u64;
        let mut runs = 0u64;
        let mut rows = 0u64;
        let mut bytes = 0u64;
        let mut biggest: Option<(&Workload, u64)> = None;
        for w in workloads {
            let n = w.case_count();
            cases = cases.saturating_add(n);
            if biggest.is_none_or(|(_, b)| n > b) {
                biggest = Some((w, n));
            }
            let per_case = u64::from(w.warmup) + u64::from(w.samples);
            let r = n.saturating_mul(per_case).saturating_mul(points);
            runs = runs.saturating_add(r);
            rows = rows.saturating_add(r.saturating_mul(w.metrics.len() as u64));
            // What the plan keeps per case: the command, the environment and the name, each
            // with its values substituted (at most 128 characters per value).
            let keys = w.matrix.len() as u64;
            let per = (w.run.len()
                + w.env
                    .iter()
                    .map(|(k, v)| k.as_str().len() + v.len())
                    .sum::<usize>()) as u64
                + keys * (32 + 2 + 128) * (1 + w.env.len() as u64 + 1);
            bytes = bytes.saturating_add(n.saturating_mul(per));
        }
        let anchor = |file: &RecipeFile, w: Option<&Workload>| {
            w.and_then(|w| {
                file.workloads
                    .get_ref()
                    .iter()
                    .find(|s| s.name.get_ref() == &w.name)
                    .map(|s| s.name.span())
            })
            .unwrap_or_else(|| file.workloads.span())
        };
        if cases > limits::CASES {
            let (w, n) = biggest.expect("invariant: cases come from workloads");
            let span = anchor(file, Some(w));
            self.error(
                span,
                format!(
                    "the recipe has {cases} workload cases (workload `{}` alone has {n}); at most {} are allowed\nhelp: every case is measured at every point; measure fewer matrix values, or split the experiment into several recipes",
                    w.name,
                    limits::CASES
                ),
            );
            return false;
        }
        if runs > limits::RUNS || rows > limits::ROWS {
            self.error(
                file.sequence.span(),
                format!(
                    "the campaign would take {runs} workload runs ({rows} samples.csv rows: {points} points × {cases} cases × warm-ups + samples × metrics); at most {} runs and {} rows are allowed\nhelp: lower `samples`/`warmup`, the number of cases or of points",
                    limits::RUNS,
                    limits::ROWS
                ),
            );
        }
        if bytes > limits::PLAN_BYTES {
            self.error(
                anchor(file, biggest.map(|(w, _)| w)),
                format!(
                    "the plan would hold about {} of expanded commands ({cases} cases × `run` and `env`); at most {} are allowed\nhelp: move long commands into a script listed in [files]",
                    crate::text::bytes(bytes),
                    crate::text::bytes(limits::PLAN_BYTES)
                ),
            );
            return false;
        }
        true
    }

    fn tuning(&mut self, spec: &TuningSpec) -> Tuning {
        let optional: Vec<TuningKnob> = spec.optional.iter().map(|k| *k.get_ref()).collect();
        let set = |knob: TuningKnob| match knob {
            TuningKnob::Governor => spec.governor.is_some(),
            TuningKnob::Epp => spec.epp.is_some(),
            TuningKnob::Turbo => spec.turbo.is_some(),
        };
        for knob in &spec.optional {
            if !set(*knob.get_ref()) {
                let name = knob.get_ref().as_str();
                self.error(
                    knob.span(),
                    format!(
                        "`optional` lists `{name}`, which [tuning] does not set\nhelp: set `{name}` in [tuning] or remove it from `optional`"
                    ),
                );
            }
        }
        let required = |knob| !optional.contains(&knob);
        Tuning {
            governor: spec.governor.clone().map(|value| Knob {
                value,
                required: required(TuningKnob::Governor),
            }),
            epp: spec.epp.clone().map(|value| Knob {
                value,
                required: required(TuningKnob::Epp),
            }),
            turbo: spec.turbo.map(|value| Knob {
                value,
                required: required(TuningKnob::Turbo),
            }),
        }
    }

    fn workloads(&mut self, file: &RecipeFile) -> Vec<Workload> {
        let list = file.workloads.get_ref();
        if list.is_empty() {
            self.error(
                file.workloads.span(),
                "the recipe has no [[workload]]; add at least one",
            );
        }
        if list.len() > limits::WORKLOADS {
            self.error(
                list[limits::WORKLOADS].name.span(),
                format!(
                    "the recipe declares {} workloads; at most {} are allowed\nhelp: split the experiment into several recipes",
                    list.len(),
                    limits::WORKLOADS
                ),
            );
            return Vec::new();
        }
        let mut names = HashSet::new();
        let mut out = Vec::new();
        for spec in list {
            if !names.insert(spec.name.get_ref().clone()) {
                self.error(
                    spec.name.span(),
                    format!("workload `{}` is declared twice", spec.name.get_ref()),
                );
            }
            out.push(self.workload(file, spec));
        }
        out
    }

    fn workload(&mut self, file: &RecipeFile, spec: &WorkloadSpec) -> Workload {
        let mut matrix = Vec::new();
        if spec.matrix.len() > limits::MATRIX_KEYS {
            self.error(
                spec.name.span(),
                format!(
                    "workload `{}` has {} matrix keys; at most {} are allowed",
                    spec.name.get_ref(),
                    spec.matrix.len(),
                    limits::MATRIX_KEYS
                ),
            );
        }
        for (key, values) in &spec.matrix {
            if values.get_ref().is_empty() {
                self.error(values.span(), format!("matrix `{key}` has no values"));
            }
            if values.get_ref().len() > limits::MATRIX_VALUES {
                self.error(
                    values.span(),
                    format!(
                        "matrix `{key}` lists {} values; at most {} are allowed",
                        values.get_ref().len(),
                        limits::MATRIX_VALUES
                    ),
                );
                continue;
            }
            let mut seen = HashSet::new();
            for value in values.get_ref() {
                if let Err(why) = check_matrix_value(value.get_ref()) {
                    self.error(value.span(), why);
                }
                if !seen.insert(value.get_ref().clone()) {
                    self.error(
                        value.span(),
                        format!("matrix `{key}` lists `{}` twice", value.get_ref()),
                    );
                }
            }
            matrix.push((
                key.clone(),
                values
                    .get_ref()
                    .iter()
                    .map(|v| v.get_ref().clone())
                    .collect(),
            ));
        }

        // Every template must only name matrix keys, and every key must be used somewhere,
        // or two cases would run the same command under different names.
        let keys: Vec<&str> = spec.matrix.keys().map(|k| k.as_str()).collect();
        let mut used = HashSet::new();
        // A key suggested for a misspelt placeholder is not reported as unused as well: the
        // typo is the one problem.
        let mut suggested = HashSet::new();
        let templates = std::iter::once(&spec.run).chain(spec.env.values());
        for template in templates {
            let probe = crate::placeholders::render_template(template.get_ref(), &mut |name| {
                keys.contains(&name).then(|| {
                    used.insert(name.to_owned());
                    String::new()
                })
            });
            if let Err(unknown) = probe {
                let diag = self.error(
                    template.span(),
                    format!("unknown placeholder `{{{unknown}}}`"),
                );
                if let Some(s) =
                    diag.suggest(&unknown, keys.iter().copied(), |s| format!("`{{{s}}}`"))
                {
                    suggested.insert(s.to_owned());
                }
                diag.help.push(if keys.is_empty() {
                    "this workload has no matrix; write `{{` and `}}` for literal braces".to_owned()
                } else {
                    format!(
                        "matrix keys: {}; write `{{{{` and `}}}}` for literal braces",
                        keys.join(", ")
                    )
                });
            }
        }
        for key in &keys {
            if !used.contains(*key) && !suggested.contains(*key) {
                self.error(
                    spec.run.span(),
                    format!("matrix key `{key}` is not used in `run` or `env`; its cases would all run the same command"),
                )
                .help
                .push(format!("write `{{{key}}}` where the value belongs"));
            }
        }

        let is_check = spec.role == Role::Check;
        let metrics = if is_check {
            self.no_metric_for_a_check(spec);
            Vec::new()
        } else {
            self.metrics(spec)
        };
        let check = self.check(file, spec);
        // A check proves a fact of the kernel once per boot unless its own table asks for
        // more; the top-level counts are sized for timings.
        let (samples, warmup) = if is_check {
            (
                spec.samples.map_or(1, |c| c.get()),
                spec.warmup.map_or(0, |c| c.get()),
            )
        } else {
            (
                spec.samples
                    .or(file.samples)
                    .map_or(DEFAULT_SAMPLES, |c| c.get()),
                spec.warmup
                    .or(file.warmup)
                    .map_or(DEFAULT_WARMUP, |c| c.get()),
            )
        };
        // Parameters are shell-quoted into `run` now, and put into `env` values as they are
        // (the runner quotes each whole `NAME=value`); matrix placeholders stay for each case
        // (a value has no braces, so it cannot become one).
        let run = self
            .expand(&spec.run, crate::target::quote::sh_quote)
            .unwrap_or_else(|| spec.run.get_ref().clone());
        let env = spec
            .env
            .iter()
            .map(|(k, v)| {
                let value = self.expand(v, params::verbatim);
                (k.clone(), value.unwrap_or_else(|| v.get_ref().clone()))
            })
            .collect();
        let cpu = spec.cpu.as_ref().and_then(|text| {
            let rendered = self.expand(text, params::verbatim)?;
            CpuList::new(&rendered)
                .map_err(|why| {
                    let help = self.param_help(text.get_ref());
                    self.error(text.span(), why).help.extend(help);
                })
                .ok()
        });
        Workload {
            name: spec.name.get_ref().clone(),
            run,
            env,
            cpu,
            timeout: spec.timeout.map_or(DEFAULT_RUN_TIMEOUT, |d| d.get()),
            estimate: spec.estimate.map_or(DEFAULT_ESTIMATE, |d| d.get()),
            max_output: spec.max_output.map_or(DEFAULT_MAX_OUTPUT, |s| s.0),
            warmup,
            samples,
            // A check that flips is a finding about the kernel, not noise to retry away.
            retries: spec.retries.map_or(u32::from(!is_check), |c| c.get()),
            role: spec.role,
            aux: spec.aux,
            matrix,
            metrics,
            check,
            limits: self.overrides(
                spec.gate_pct.as_ref(),
                spec.max_drift_pct.as_ref(),
                spec.max_cv_pct.as_ref(),
            ),
        }
    }

    fn metrics(&mut self, spec: &WorkloadSpec) -> Vec<Metric> {
        let list = &spec.metric.get_ref().0;
        if list.is_empty() {
            let span = if spec.metric.span().is_empty() {
                spec.name.span()
            } else {
                spec.metric.span()
            };
            self.error(
                span,
                format!("workload `{}` declares no metric", spec.name.get_ref()),
            )
            .help
            .push(
                "add a `[[workload.metric]]`, or make it an untimed correctness check with `role = \"check\"`"
                    .to_owned(),
            );
        }
        if list.len() > limits::METRICS {
            self.error(
                spec.metric.span(),
                format!(
                    "workload `{}` declares {} metrics; at most {} are allowed",
                    spec.name.get_ref(),
                    list.len(),
                    limits::METRICS
                ),
            );
            return Vec::new();
        }
        let mut names = HashSet::new();
        let mut out = Vec::new();
        for m in list {
            let name = match (&m.name, list.len()) {
                (Some(n), _) => n.get_ref().clone(),
                (None, 1) => crate::recipe::ident::MetricName::new(spec.name.get_ref().as_str())
                    .expect("invariant: workload names satisfy the metric name rule"),
                (None, _) => {
                    self.error(
                        spec.metric.span(),
                        "a workload with several metrics must name each one (`name = …`)",
                    );
                    continue;
                }
            };
            if !names.insert(name.clone()) {
                let span = m.name.as_ref().map_or(spec.metric.span(), Spanned::span);
                self.error(span, format!("metric `{name}` is declared twice"));
            }
            if let Some(metric) = self.metric(spec, m, name) {
                out.push(metric);
            }
        }
        out
    }

    fn metric(
        &mut self,
        spec: &WorkloadSpec,
        m: &MetricSpec,
        name: crate::recipe::ident::MetricName,
    ) -> Option<Metric> {
        let number = m.number.as_ref().filter(|n| *n.get_ref());
        let ways: Vec<(&str, std::ops::Range<usize>)> = [
            m.json.as_ref().map(|j| ("json", j.span())),
            m.regex.as_ref().map(|r| ("regex", r.span())),
            number.map(|n| ("number", n.span())),
        ]
        .into_iter()
        .flatten()
        .collect();
        if ways.len() != 1 {
            let (message, anchor) = match ways.as_slice() {
                [] => (
                    format!("metric `{name}` does not say how to read its number"),
                    m.name.as_ref().map_or(spec.metric.span(), Spanned::span),
                ),
                [first, rest @ ..] => {
                    let others: Vec<String> = rest.iter().map(|(k, _)| format!("`{k}`")).collect();
                    (
                        format!(
                            "metric `{name}` sets `{}` and {}: it can read its number only one way",
                            first.0,
                            others.join(" and ")
                        ),
                        rest[0].1.clone(),
                    )
                }
            };
            self.error(
                anchor,
                format!(
                    "{message}\nhelp: keep exactly one of `json = \"/pointer\"` (one JSON document), `regex = '…(\\d+)…'` (a capture group) or `number = true` (the whole output)"
                ),
            );
            return None;
        }
        let extract = if let Some(pointer) = &m.json {
            if !(pointer.get_ref().is_empty() || pointer.get_ref().starts_with('/')) {
                self.error(
                    pointer.span(),
                    "a JSON pointer starts with `/` (e.g. \"/wall_ns\")",
                );
                return None;
            }
            Extract::Json(pointer.get_ref().clone())
        } else if let Some(pattern) = &m.regex {
            let re = self.regex(pattern)?;
            if re.captures_len() < 2 {
                self.error(
                    pattern.span(),
                    "the regex has no capture group, so it does not say which part is the number\nhelp: put the number in a group, e.g. '(\\d+) ops/sec', or name it `(?P<value>…)` when the pattern needs other groups",
                );
                return None;
            }
            Extract::Regex(re)
        } else {
            Extract::Number
        };
        let factor = |this: &mut Self, v: &Option<Spanned<f64>>, key: &str| match v {
            None => Some(1.0),
            Some(x) if x.get_ref().is_finite() && *x.get_ref() != 0.0 => Some(*x.get_ref()),
            Some(x) => {
                this.error(
                    x.span(),
                    format!("`{key}` must be a finite, non-zero number"),
                );
                None
            }
        };
        let divide = factor(self, &m.divide, "divide")?;
        let multiply = factor(self, &m.multiply, "multiply")?;
        let unit = match &m.unit {
            None => String::new(),
            Some(u) => self.free_text(u, "`unit`", limits::UNIT_CHARS, &[])?,
        };
        Some(Metric {
            name,
            extract,
            stream: m.stream,
            divide,
            multiply,
            unit,
            better: m.better,
            limits: self.overrides(
                m.gate_pct.as_ref(),
                m.max_drift_pct.as_ref(),
                m.max_cv_pct.as_ref(),
            ),
        })
    }

    /// A check workload is judged by its `[workload.check]` alone.
    fn no_metric_for_a_check(&mut self, spec: &WorkloadSpec) {
        if !spec.metric.get_ref().0.is_empty() {
            self.error(
                spec.metric.span(),
                format!(
                    "workload `{}` is a check (`role = \"check\"`) and declares a metric",
                    spec.name.get_ref()
                ),
            )
            .help
            .push(
                "a check is pass/fail only; measure the number in a workload of its own".to_owned(),
            );
        }
        if spec.aux {
            self.error(
                spec.name.span(),
                format!(
                    "workload `{}` is a check (`role = \"check\"`) and `aux`; a check has no verdict to keep out of the summary",
                    spec.name.get_ref()
                ),
            );
        }
    }

    /// `expect_fail`: kernels of `[kernels]`, on a check workload only.
    fn expect_fail(&mut self, file: &RecipeFile, spec: &WorkloadSpec) -> Vec<KernelLabel> {
        let labels = self.labels(&spec.check.expect_fail);
        if spec.role != Role::Check
            && let Some(first) = spec.check.expect_fail.first()
        {
            self.error(
                first.span(),
                format!(
                    "workload `{}` expects its check to fail, but only a check (`role = \"check\"`) may: a failed run of a timed workload has no value to analyse",
                    spec.name.get_ref()
                ),
            );
        }
        if let Some(first) = spec.check.expect_fail.first()
            && spec.check.must_match.is_empty()
            && spec.check.must_not_match.is_empty()
        {
            self.error(
                first.span(),
                format!(
                    "workload `{}` expects its check to fail but has no `must_match` or `must_not_match` to fail",
                    spec.name.get_ref()
                ),
            )
            .help
            .push("the exit status must be `exit` on every kernel (a crash proves nothing); say with a regex what the failing kernel prints, e.g. `must_match = ['mode: custom']`".to_owned());
        }
        let known: Vec<&KernelLabel> = file
            .kernels
            .get_ref()
            .keys()
            .map(Spanned::get_ref)
            .collect();
        let mut out = Vec::new();
        for label in labels {
            if known.contains(&label.get_ref()) {
                out.push(label.into_inner());
            } else {
                self.unknown_kernel(&label, &known, "`check.expect_fail`");
            }
        }
        out
    }

    fn check(&mut self, file: &RecipeFile, workload: &WorkloadSpec) -> Check {
        let spec = &workload.check;
        Check {
            expect_fail: self.expect_fail(file, workload),
            exit: spec.exit.unwrap_or(0),
            must_match: spec
                .must_match
                .iter()
                .filter_map(|p| self.regex(p))
                .collect(),
            must_not_match: spec
                .must_not_match
                .iter()
                .filter_map(|p| self.regex(p))
                .collect(),
        }
    }

    fn analysis(
        &mut self,
        file: &RecipeFile,
        sequence: &[KernelLabel],
        known: &[&KernelLabel],
    ) -> AnalysisSettings {
        let spec = &file.analysis;
        let baseline = match &spec.baseline {
            Some(label) => {
                if !known.contains(&label.get_ref()) {
                    self.unknown_kernel(label, known, "`analysis.baseline`");
                }
                label.get_ref().clone()
            }
            None => sequence
                .first()
                .cloned()
                .or_else(|| known.first().map(|k| (*k).clone()))
                .unwrap_or_else(|| KernelLabel::new("baseline").expect("invariant: valid label")),
        };
        let mut recovery = Vec::new();
        for rec in &spec.recovery {
            let gap = self.labels(rec.gap.get_ref());
            let path = self.labels(rec.path.get_ref());
            if gap.len() != rec.gap.get_ref().len() || path.len() != rec.path.get_ref().len() {
                continue;
            }
            for label in gap.iter().chain(path.iter()) {
                if !known.contains(&label.get_ref()) {
                    self.unknown_kernel(label, known, "`analysis.recovery`");
                }
            }
            if gap.len() != 2 {
                self.error(
                    rec.gap.span(),
                    "`gap` names exactly two kernels: [from, to]",
                );
                continue;
            }
            if path.len() < 2 || path[0].get_ref() != gap[0].get_ref() {
                self.error(
                    rec.path.span(),
                    format!(
                        "`path` lists at least two kernels and starts at `{}` (gap[0])",
                        gap[0].get_ref()
                    ),
                );
                continue;
            }
            recovery.push(Recovery {
                name: rec.name.clone(),
                gap: (gap[0].get_ref().clone(), gap[1].get_ref().clone()),
                path: path.iter().map(|p| p.get_ref().clone()).collect(),
            });
        }
        let extend = spec
            .extend
            .as_ref()
            .and_then(|e| self.extend(e, sequence, &baseline));
        AnalysisSettings {
            baseline,
            gate_pct: self.percent(spec.gate_pct.as_ref(), 5.0, "gate_pct"),
            drift_margin: self.percent(spec.drift_margin.as_ref(), 2.0, "drift_margin"),
            max_drift_pct: spec
                .max_drift_pct
                .as_ref()
                .map(|v| self.percent(Some(v), 1.0, "max_drift_pct")),
            max_cv_pct: self.percent(spec.max_cv_pct.as_ref(), 2.0, "max_cv_pct"),
            require_boot_ci: spec.require_boot_ci,
            detect_pct: spec.detect_pct.as_ref().and_then(|v| {
                if v.get_ref().is_finite() && *v.get_ref() > 0.0 {
                    Some(*v.get_ref())
                } else {
                    self.error(v.span(), "`detect_pct` must be a finite number > 0");
                    None
                }
            }),
            recovery,
            // Checked against the workloads once their cases are known (`case_comparisons`).
            case_comparisons: Vec::new(),
            extend,
        }
    }

    /// `[analysis] extend`: the unit is every candidate in order of first boot, then the
    /// baseline; `max_points` must leave room for one unit, or the key would do nothing.
    fn extend(
        &mut self,
        spec: &ExtendSpec,
        sequence: &[KernelLabel],
        baseline: &KernelLabel,
    ) -> Option<Extend> {
        let ExtendUntil::Decided = spec.until;
        let mut unit: Vec<KernelLabel> = Vec::new();
        for k in sequence {
            if k != baseline && !unit.contains(k) {
                unit.push(k.clone());
            }
        }
        if unit.is_empty() {
            self.error(
                spec.max_points.span(),
                "`extend` needs a candidate kernel besides the baseline: there is nothing to decide",
            );
            return None;
        }
        unit.push(baseline.clone());
        let max = *spec.max_points.get_ref();
        let least = sequence.len() + unit.len();
        let names: Vec<&str> = unit.iter().map(KernelLabel::as_str).collect();
        match usize::try_from(max) {
            Ok(n) if n >= least && n <= limits::POINTS => Some(Extend {
                max_points: n,
                unit,
            }),
            _ => {
                self.error(
                    spec.max_points.span(),
                    format!(
                        "`max_points` must be an integer from {least} (the {} planned points and one appended unit {}) to {}, not {max}",
                        sequence.len(),
                        names.join("-"),
                        limits::POINTS
                    ),
                );
                None
            }
        }
    }

    /// `case` when `workload` has a case of that name; otherwise an error at it that lists
    /// the workload's cases (the first ten).
    fn case_of(&mut self, workload: &Workload, case: &Spanned<String>) -> Option<String> {
        let count = usize::try_from(workload.case_count()).unwrap_or(usize::MAX);
        if (0..count).any(|i| &workload.case_at(i).name == case.get_ref()) {
            return Some(case.get_ref().clone());
        }
        let mut names: Vec<String> = (0..count.min(10))
            .map(|i| format!("`{}`", workload.case_at(i).name))
            .collect();
        if count > 10 {
            names.push(format!("… ({count} cases)"));
        }
        self.error(
            case.span(),
            format!(
                "workload `{}` has no case `{}`",
                workload.name,
                crate::text::quoted(case.get_ref())
            ),
        )
        .help
        .push(format!("cases: {}", names.join(", ")));
        None
    }

    /// The timed workload `name` names; otherwise an error at it (`field` says which key).
    fn timed_workload<'w>(
        &mut self,
        workloads: &'w [Workload],
        name: &Spanned<crate::recipe::ident::WorkloadName>,
        field: &str,
    ) -> Option<&'w Workload> {
        let Some(workload) = workloads.iter().find(|w| &w.name == name.get_ref()) else {
            let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
            let diag = self.error(
                name.span(),
                format!(
                    "{field} names workload `{}`, which the recipe does not declare",
                    name.get_ref()
                ),
            );
            diag.suggest(name.get_ref().as_str(), names.iter().copied(), ticked);
            diag.help.push(format!("workloads: {}", names.join(", ")));
            return None;
        };
        if workload.is_check() {
            self.error(
                name.span(),
                format!(
                    "{field} names workload `{}`, a check (`role = \"check\"`): it has no metric to compare",
                    workload.name
                ),
            );
            return None;
        }
        Some(workload)
    }

    /// `[[analysis.case_comparison]]`: both workloads exist and are timed, both cases exist,
    /// the two are not the same case, and they share at least one metric (same name, unit
    /// and `better`: a metric whose unit or direction differs compares nothing).
    fn case_comparisons(
        &mut self,
        file: &RecipeFile,
        workloads: &[Workload],
    ) -> Vec<CaseComparison> {
        let specs = &file.analysis.case_comparison;
        if specs.len() > limits::CASE_COMPARISONS {
            self.error(
                specs[limits::CASE_COMPARISONS].workload.span(),
                format!(
                    "the recipe lists {} [[analysis.case_comparison]] tables; at most {} are allowed",
                    specs.len(),
                    limits::CASE_COMPARISONS
                ),
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for spec in specs {
            let field = "[[analysis.case_comparison]] `workload`";
            let Some(workload) = self.timed_workload(workloads, &spec.workload, field) else {
                continue;
            };
            let control_workload = match &spec.control_workload {
                Some(name) => {
                    let field = "[[analysis.case_comparison]] `control_workload`";
                    match self.timed_workload(workloads, name, field) {
                        Some(w) => w,
                        None => continue,
                    }
                }
                None => workload,
            };
            let treatment = self.case_of(workload, &spec.treatment);
            let control = self.case_of(control_workload, &spec.control);
            let (Some(treatment), Some(control)) = (treatment, control) else {
                continue;
            };
            if control_workload.name == workload.name && control == treatment {
                self.error(
                    spec.control.span(),
                    format!(
                        "`control` and `treatment` are the same case `{}` of workload `{}`: a case compared with itself shows nothing",
                        crate::text::quoted(&control),
                        workload.name
                    ),
                );
                continue;
            }
            let mut metrics = Vec::new();
            let mut mismatched = Vec::new();
            for metric in &workload.metrics {
                let Some(other) = control_workload
                    .metrics
                    .iter()
                    .find(|m| m.name == metric.name)
                else {
                    continue;
                };
                if other.unit == metric.unit && other.better == metric.better {
                    metrics.push(metric.name.clone());
                } else {
                    mismatched.push(format!(
                        "`{}` ({}, better = {:?} vs {}, better = {:?})",
                        metric.name, metric.unit, metric.better, other.unit, other.better
                    ));
                }
            }
            if metrics.is_empty() {
                let at = spec
                    .control_workload
                    .as_ref()
                    .map_or(spec.workload.span(), Spanned::span);
                let diag = self.error(
                    at,
                    format!(
                        "workloads `{}` and `{}` have no metric in common (same name, unit and `better`), so the case comparison compares nothing",
                        workload.name, control_workload.name
                    ),
                );
                if !mismatched.is_empty() {
                    diag.help.push(format!(
                        "unit or direction differs: {}",
                        mismatched.join(", ")
                    ));
                }
                continue;
            }
            out.push(CaseComparison {
                workload: workload.name.clone(),
                treatment,
                control_workload: control_workload.name.clone(),
                control,
                metrics,
            });
        }
        out
    }

    fn expect(
        &mut self,
        file: &RecipeFile,
        workloads: &[Workload],
        analysis: &AnalysisSettings,
        sequence: &[KernelLabel],
        known: &[&KernelLabel],
    ) -> Vec<Expect> {
        let mut out = Vec::new();
        let ExpectSection::Changes(specs) = &file.expect else {
            return out;
        };
        if specs.len() > limits::EXPECTS {
            self.error(
                specs[limits::EXPECTS].workload.span(),
                format!(
                    "the recipe lists {} [[expect]] tables; at most {} are allowed",
                    specs.len(),
                    limits::EXPECTS
                ),
            );
            return out;
        }
        for spec in specs {
            let Some(workload) = workloads
                .iter()
                .find(|w| &w.name == spec.workload.get_ref())
            else {
                let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
                let diag = self.error(
                    spec.workload.span(),
                    format!(
                        "[[expect]] names workload `{}`, which the recipe does not declare",
                        spec.workload.get_ref()
                    ),
                );
                diag.suggest(
                    spec.workload.get_ref().as_str(),
                    names.iter().copied(),
                    ticked,
                );
                diag.help.push(format!("workloads: {}", names.join(", ")));
                continue;
            };
            let count = usize::try_from(workload.case_count()).unwrap_or(usize::MAX);
            let case = match &spec.case {
                Some(c) => match self.case_of(workload, c) {
                    Some(case) => case,
                    None => continue,
                },
                None if count == 1 => workload.case_at(0).name,
                None => {
                    self.error(
                        spec.workload.span(),
                        format!("workload `{}` has a matrix; say which `case` this expectation is about", workload.name),
                    );
                    continue;
                }
            };
            if workload.is_check() {
                self.error(
                    spec.workload.span(),
                    format!("workload `{}` is a check (`role = \"check\"`): it has no metric whose change could be expected", workload.name),
                );
                continue;
            }
            let metric = match &spec.metric {
                Some(m) if workload.metric_names().any(|n| n == m.get_ref()) => m.get_ref().clone(),
                Some(m) => {
                    let names: Vec<&str> = workload.metric_names().map(|n| n.as_str()).collect();
                    self.error(
                        m.span(),
                        format!(
                            "workload `{}` has no metric `{}`",
                            workload.name,
                            m.get_ref()
                        ),
                    )
                    .help
                    .push(format!("metrics: {}", names.join(", ")));
                    continue;
                }
                None if workload.metrics.len() == 1 => workload.metrics[0].name.clone(),
                None => {
                    self.error(
                        spec.workload.span(),
                        format!("workload `{}` has several metrics; say which `metric` this expectation is about", workload.name),
                    );
                    continue;
                }
            };
            let kernel = match &spec.kernel {
                Some(k) if known.contains(&k.get_ref()) => k.get_ref().clone(),
                Some(k) => {
                    self.unknown_kernel(k, known, "[[expect]] `kernel`");
                    continue;
                }
                None => {
                    let mut others: Vec<&KernelLabel> = sequence
                        .iter()
                        .filter(|k| **k != analysis.baseline)
                        .collect();
                    others.dedup();
                    let unique: HashSet<&&KernelLabel> = others.iter().collect();
                    if unique.len() != 1 {
                        self.error(
                            spec.workload.span(),
                            "the recipe has several candidate kernels; say which `kernel` this expectation is about",
                        );
                        continue;
                    }
                    others[0].clone()
                }
            };
            let change_pct = self.number(&spec.change_pct, "change_pct");
            let tolerance = self.number(&spec.tolerance, "tolerance");
            let (Some(change_pct), Some(tolerance)) = (change_pct, tolerance) else {
                continue;
            };
            if !change_pct.is_finite() {
                let help = self.param_help(&format!("{:?}", spec.change_pct.get_ref()));
                self.error(
                    spec.change_pct.span(),
                    "`change_pct` must be a finite number",
                )
                .help
                .extend(help);
                continue;
            }
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                let help = self.param_help(&format!("{:?}", spec.tolerance.get_ref()));
                self.error(
                    spec.tolerance.span(),
                    "`tolerance` must be a finite number ≥ 0",
                )
                .help
                .extend(help);
                continue;
            }
            out.push(Expect {
                workload: workload.name.clone(),
                case,
                metric,
                kernel,
                change_pct,
                tolerance,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{RecipeError, parse};

    const MINIMAL: &str = r#"
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

    fn errors(src: &str) -> String {
        match parse(Path::new("r.toml"), src) {
            Err(RecipeError::Invalid(d)) => d.to_string(),
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error for:\n{src}"),
        }
    }

    #[test]
    fn extend_resolves_its_unit_and_refuses_bad_values_by_field() {
        let src =
            format!("{MINIMAL}[analysis]\nextend = {{ until = \"decided\", max_points = 9 }}\n");
        let r = parse(Path::new("r.toml"), &src).expect("valid");
        let extend = r.analysis.extend.as_ref().expect("extends");
        assert_eq!(extend.max_points, 9);
        let unit: Vec<&str> = extend.unit.iter().map(|k| k.as_str()).collect();
        assert_eq!(unit, ["b", "a"]);
        assert_eq!(extend.boundary(3).points, [3, 5, 7, 9]);
        assert!(
            parse(Path::new("r.toml"), MINIMAL)
                .expect("valid")
                .analysis
                .extend
                .is_none()
        );

        let with = |value: &str| format!("{MINIMAL}[analysis]\nextend = {value}\n");
        // One unit must fit, or the key would do nothing.
        let e = errors(&with(r#"{ until = "decided", max_points = 4 }"#));
        assert!(
            e.contains("r.toml:16:44 (key `analysis.extend.max_points`)"),
            "{e}"
        );
        assert!(
            e.contains(
                "`max_points` must be an integer from 5 (the 3 planned points and one appended unit b-a) to 100, not 4"
            ),
            "{e}"
        );
        let e = errors(&with(r#"{ until = "decided", max_points = -3 }"#));
        assert!(e.contains("`max_points` must be an integer from 5"), "{e}");
        assert!(e.contains("not -3"), "{e}");
        let e = errors(&with(r#"{ until = "decided", max_points = 101 }"#));
        assert!(e.contains("to 100, not 101"), "{e}");
        let e = errors(&with(r#"{ until = "decided", max_points = "9" }"#));
        assert!(e.contains("max_points"), "{e}");
        let e = errors(&with(r#"{ until = "forever", max_points = 9 }"#));
        assert!(e.contains("unknown variant `forever`"), "{e}");
        assert!(e.contains("decided"), "{e}");
        let e = errors(&with(r#"{ max_points = 9 }"#));
        assert!(e.contains("missing field `until`"), "{e}");
        let e = errors(&with(r#"{ until = "decided", max_point = 9 }"#));
        assert!(e.contains("unknown field `max_point`"), "{e}");
        // A campaign of the baseline alone has nothing to decide.
        let null = MINIMAL.replace(r#"sequence = ["a", "b", "a"]"#, r#"sequence = ["a", "a"]"#);
        let e = errors(&format!(
            "{null}[analysis]\nextend = {{ until = \"decided\", max_points = 9 }}\n"
        ));
        assert!(e.contains("`extend` needs a candidate kernel"), "{e}");
    }

    #[test]
    fn a_case_comparison_names_existing_timed_cases_with_a_metric_in_common() {
        let cases = "[[workload]]\nname = \"pipe\"\nrun = \"echo {level}\"\n\
                     matrix = { level = [\"root\", \"1\"] }\n\
                     metric = { number = true, unit = \"ns\", better = \"lower\" }\n";
        let with = |table: &str| format!("{MINIMAL}{cases}[[analysis.case_comparison]]\n{table}");
        let r = parse(
            Path::new("r.toml"),
            &with("workload = \"pipe\"\ncontrol = \"level=root\"\ntreatment = \"level=1\"\n"),
        )
        .expect("valid");
        let c = &r.analysis.case_comparisons[0];
        assert_eq!(
            (
                c.workload.as_str(),
                c.control_workload.as_str(),
                c.control.as_str(),
                c.treatment.as_str()
            ),
            ("pipe", "pipe", "level=root", "level=1")
        );
        assert_eq!(c.metrics.len(), 1);
        assert_eq!(c.metrics[0].as_str(), "pipe");
        // Across workloads: `w` (no matrix, case "") against `pipe`'s metric `pipe`: no
        // metric in common by name.
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol_workload = \"w\"\ncontrol = \"\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("r.toml:22:20")
                && text.contains("workloads `pipe` and `w` have no metric in common"),
            "{text}"
        );
        // An unknown case, at its position, with the cases listed.
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol = \"level=2\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("r.toml:22:11")
                && text.contains("workload `pipe` has no case `level=2`")
                && text.contains("cases: `level=root`, `level=1`"),
            "{text}"
        );
        // An unknown workload, with a suggestion.
        let text = errors(&with(
            "workload = \"pip\"\ncontrol = \"level=root\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("r.toml:21:12")
                && text.contains("[[analysis.case_comparison]] `workload` names workload `pip`, which the recipe does not declare")
                && text.contains("`pipe`"),
            "{text}"
        );
        // A case against itself, and an unknown key.
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol = \"level=1\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("a case compared with itself shows nothing"),
            "{text}"
        );
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol = \"level=1\"\ntreatmnt = \"level=1\"\n",
        ));
        assert!(text.contains("unknown field `treatmnt`"), "{text}");
    }

    #[test]
    fn minimal_recipe_resolves_defaults() {
        let r = parse(Path::new("r.toml"), MINIMAL).expect("valid");
        assert_eq!(r.sequence.len(), 3);
        assert_eq!(r.analysis.baseline.as_str(), "a");
        let b = &r.kernels["b"];
        assert_eq!(b.image.as_str(), "/boot/vmlinuz-6.1.0-50-cloud-amd64");
        assert_eq!(b.initrd.as_str(), "/boot/initrd.img-6.1.0-50-cloud-amd64");
        assert_eq!(r.workloads[0].warmup, 3);
        assert_eq!(r.workloads[0].samples, 9);
        assert_eq!(r.workloads[0].metrics[0].name.as_str(), "w");
        assert_eq!(r.sha256.len(), 64);
    }

    #[test]
    fn an_expect_table_names_a_reference_inside_the_recipe_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("published")).expect("mkdir");
        let recipe = dir.path().join("r.toml");
        let with = |reference: &str| format!("{MINIMAL}[expect]\nreference = \"{reference}\"\n");
        let r = parse(&recipe, &with("published")).expect("valid");
        let reference = r.reference.expect("a reference");
        assert_eq!(reference.written, "published");
        assert_eq!(
            reference.path,
            std::fs::canonicalize(dir.path().join("published")).expect("exists")
        );
        assert!(r.expect.is_empty());
        // A results directory's copy reads its own copy of the reference.
        let copies = dir.path().join("results/r-1/files");
        let copied = super::parse_with(
            &recipe,
            &with("published"),
            super::FilesFrom::Copied(&copies),
        )
        .expect("valid");
        assert_eq!(
            copied.reference.expect("a reference").path,
            dir.path().join("results/r-1/reference")
        );
        let errors_at = |text: &str| match parse(&recipe, text) {
            Err(RecipeError::Invalid(d)) => d.to_string(),
            other => panic!("expected an error, got {other:?}"),
        };
        let missing = errors_at(&with("gone"));
        assert!(missing.contains("cannot read `gone`"), "{missing}");
        assert!(
            missing.contains("the reference is relative to the recipe file"),
            "{missing}"
        );
        let outside = errors_at(&with("/"));
        assert!(outside.contains("outside the recipe's folder"), "{outside}");
        // `[expect]` holds only `reference`, and says which forms exist when it is neither.
        let typo = errors_at(&format!("{MINIMAL}[expect]\nrefrence = \"published\"\n"));
        assert!(typo.contains("unknown field `refrence`"), "{typo}");
        assert!(
            typo.contains("r.toml:16:1 (key `expect.refrence`)"),
            "{typo}"
        );
        assert!(typo.contains("did you mean `reference`?"), "{typo}");
        let wrong = errors_at(&format!("expect = 3\n{MINIMAL}"));
        assert!(
            wrong.contains("[[expect]] tables (one published change each) or one [expect] table"),
            "{wrong}"
        );
        // [[expect]] tables keep working, spans included.
        let bad = errors_at(&format!(
            "{MINIMAL}[[expect]]\nworkload = \"nope\"\nchange_pct = 1.0\ntolerance = 1.0\n"
        ));
        assert!(bad.contains("[[expect]] names workload `nope`"), "{bad}");
        assert!(bad.contains("r.toml:16:12"), "{bad}");
    }

    #[test]
    fn a_workload_and_its_metrics_may_set_their_own_limits() {
        let src = MINIMAL.replace(
            "metric = { number = true, unit = \"ns\", better = \"lower\" }",
            "max_cv_pct = 4.0\nmax_drift_pct = 3.0\n\
             metric = { number = true, unit = \"ticks\", better = \"lower\", max_cv_pct = 10.0, gate_pct = 20.0 }",
        );
        let r = parse(Path::new("r.toml"), &src).expect("valid");
        let w = &r.workloads[0];
        assert_eq!(w.limits.max_cv_pct, Some(4.0));
        assert_eq!(w.limits.max_drift_pct, Some(3.0));
        assert_eq!(w.limits.gate_pct, None);
        let l = crate::recipe::scoped_limits::SeriesLimits::of(&r.analysis, w, &w.metrics[0]);
        assert_eq!(
            (
                l.gate_pct.value,
                l.max_drift_pct.map(|d| d.value),
                l.max_cv_pct.value
            ),
            (20.0, Some(3.0), 10.0)
        );
        let text = errors(&src.replace("max_cv_pct = 10.0", "max_cv_pct = -1.0"));
        assert!(
            text.contains("`max_cv_pct` must be a finite number ≥ 0"),
            "{text}"
        );
        assert!(text.contains("r.toml:16:"), "{text}");
        let text = errors(&src.replace("max_drift_pct = 3.0", "max_drift_pct = nan"));
        assert!(
            text.contains("r.toml:15:17 (key `workload[1].max_drift_pct`)"),
            "{text}"
        );
    }

    #[test]
    fn a_check_workload_has_no_metric_and_may_expect_to_fail_on_a_kernel() {
        let check = "[[workload]]\nname = \"mode\"\nrole = \"check\"\nrun = \"./mode\"\n\
                     [workload.check]\nmust_match = [\"mode: custom\"]\nexpect_fail = [\"a\"]\n";
        let r = parse(Path::new("r.toml"), &format!("{MINIMAL}{check}")).expect("valid");
        let w = &r.workloads[1];
        assert!(w.is_check() && w.metrics.is_empty());
        assert_eq!((w.samples, w.warmup, w.retries), (1, 0, 0));
        assert!(w.check.must_fail_on("a") && !w.check.must_fail_on("b"));
        let text = errors(&format!("{MINIMAL}{}", check.replace("[\"a\"]", "[\"c\"]")));
        assert!(
            text.contains("`check.expect_fail` names kernel `c`, which is not in [kernels]"),
            "{text}"
        );
        assert!(text.contains("r.toml:21:16"), "{text}");
        let text = errors(&format!(
            "{MINIMAL}{}",
            check.replace("must_match = [\"mode: custom\"]\n", "")
        ));
        assert!(
            text.contains("has no `must_match` or `must_not_match` to fail"),
            "{text}"
        );
        // A timed workload cannot expect to fail: its failed runs have no value.
        let text = errors(&format!(
            "{MINIMAL}[workload.check]\nexpect_fail = [\"a\"]\n"
        ));
        assert!(
            text.contains("only a check (`role = \"check\"`) may"),
            "{text}"
        );
        // A check declares no metric; a timed workload declares one.
        let text = errors(&format!(
            "{MINIMAL}{}",
            check.replace(
                "run = ",
                "metric = { number = true, better = \"lower\" }\nrun = "
            )
        ));
        assert!(
            text.contains("is a check (`role = \"check\"`) and declares a metric"),
            "{text}"
        );
        let text = errors(&format!(
            "{MINIMAL}{}",
            check.replace("role = \"check\"\n", "")
        ));
        assert!(
            text.contains("workload `mode` declares no metric"),
            "{text}"
        );
        assert!(text.contains("role = \"check\""), "{text}");
        assert!(text.contains("r.toml:16:8"), "{text}");
    }

    #[test]
    fn unknown_sequence_label_suggests_the_kernel() {
        let src = MINIMAL.replace(r#"["a", "b", "a"]"#, r#"["a", "bb", "a"]"#);
        let text = errors(&src);
        assert!(text.contains("`sequence` names kernel `bb`"), "{text}");
        assert!(text.contains("did you mean `b`?"), "{text}");
        assert!(text.contains("kernel `b` is never booted"), "{text}");
    }

    #[test]
    fn an_invalid_label_in_a_list_is_reported_at_the_element() {
        let src = MINIMAL.replace(r#"["a", "b", "a"]"#, r#"["a", "b;x", "a"]"#);
        let text = errors(&src);
        assert!(
            text.contains("invalid kernel label `b;x`: it contains ';'"),
            "{text}"
        );
        assert!(text.contains("r.toml:5:18 (key `sequence[2]`)"), "{text}");
        // Which kernel `b;x` meant is unknown, so `b` is not called unused.
        assert!(!text.contains("never booted"), "{text}");
    }

    #[test]
    fn a_misspelt_placeholder_is_one_problem_not_two() {
        let src = MINIMAL.replace(
            "run = \"echo 1\"",
            "run = \"echo {levle}\"\nmatrix = { level = [\"1\", \"2\"] }",
        );
        let text = errors(&src);
        assert!(!text.contains("is not used"), "{text}");
    }

    #[test]
    fn placeholders_must_name_matrix_keys() {
        let src = MINIMAL.replace(
            "run = \"echo 1\"",
            "run = \"echo {levle}\"\nmatrix = { level = [\"1\", \"2\"] }",
        );
        let text = errors(&src);
        assert!(text.contains("unknown placeholder `{levle}`"), "{text}");
        assert!(text.contains("did you mean `{level}`?"), "{text}");
    }

    /// A recipe with a parameter in every place that takes one.
    const PARAMS: &str = r#"
version = 1
name = "facts"
description = "machine facts"
sequence = ["a", "b", "a"]
[kernels.a]
release = "6.1.0-a"
cmdline = "rcu_nocbs={params.cpu}"
[kernels.b]
release = "6.1.0-b"
[boot]
cmdline = "nohz_full={params.cpu} isolcpus={params.isolation}"
[setup]
run = ["echo setup {params.cpu}"]
[params]
cpu = { default = "3", means = "the isolated CPU" }
isolation = { default = "nohz,domain,3", means = "isolcpus= flags and CPUs" }
tick = { default = "-10", means = "the published tick change on this machine" }
[[workload]]
name = "w"
run = "echo {params.cpu}"
cpu = "{params.cpu}"
env = { CPU = "{params.cpu}", ISO = "{params.isolation}" }
metric = { number = true, unit = "ns", better = "lower" }
[[expect]]
workload = "w"
change_pct = "{params.tick}"
tolerance = 2.5
"#;

    fn bound(name: &str, value: &str) -> super::BoundParam {
        super::BoundParam {
            name: crate::recipe::ident::ParamName::new(name).unwrap(),
            value: crate::recipe::ident::ParamValue::new(value).unwrap(),
            from: crate::origin::Origin::Inventory {
                at: "targets.toml:9:1".to_owned(),
            },
        }
    }

    #[test]
    fn parameters_take_their_defaults_everywhere_they_are_used() {
        let r = parse(Path::new("r.toml"), PARAMS).expect("valid");
        assert_eq!(r.workloads[0].run, "echo 3");
        assert_eq!(r.workloads[0].cpu.as_ref().unwrap().as_str(), "3");
        assert_eq!(r.workloads[0].env[0].1, "3");
        assert_eq!(r.boot_cmdline, ["nohz_full=3", "isolcpus=nohz,domain,3"]);
        assert_eq!(r.kernels["a"].cmdline, ["rcu_nocbs=3"]);
        assert_eq!(r.setup.commands, ["echo setup 3"]);
        assert!((r.expect[0].change_pct - -10.0).abs() < 1e-9);
        assert_eq!(r.params[0].line(), "cpu = 3 (the recipe's default)");
    }

    #[test]
    fn bound_values_reach_every_place_and_keep_the_hash() {
        let r = parse(Path::new("r.toml"), PARAMS).expect("valid");
        let b = super::rebind(&r, &[bound("cpu", "5"), bound("tick", "-68.5")]).expect("valid");
        assert_eq!(b.sha256, r.sha256);
        // Shell-quoted where a shell reads it (a safe word stays as it is).
        assert_eq!(b.workloads[0].run, "echo 5");
        assert_eq!(b.workloads[0].cpu.as_ref().unwrap().as_str(), "5");
        assert_eq!(b.boot_cmdline[0], "nohz_full=5");
        assert!((b.expect[0].change_pct - -68.5).abs() < 1e-9);
        assert_eq!(
            b.params[0].line(),
            "cpu = 5 (bound by the inventory (targets.toml:9:1); the recipe's default is 3)"
        );
        let q = super::rebind(&r, &[bound("isolation", "a=b,3")]).expect("valid");
        assert_eq!(q.boot_cmdline[1], "isolcpus=a=b,3");
        // Quoted in `run`; as it is in an `env` value, which the runner quotes whole.
        let r2 = parse(
            Path::new("r.toml"),
            &PARAMS.replace(
                "run = \"echo {params.cpu}\"",
                "run = \"echo {params.isolation}\"",
            ),
        )
        .expect("valid");
        let q = super::rebind(&r2, &[bound("isolation", "a=b,3")]).expect("valid");
        assert_eq!(q.workloads[0].run, "echo 'a=b,3'");
        assert_eq!(q.workloads[0].env[1].1, "a=b,3");
    }

    #[test]
    fn a_bound_value_is_checked_for_its_place_at_the_recipe_position() {
        let r = parse(Path::new("r.toml"), PARAMS).expect("valid");
        let Err(RecipeError::Invalid(d)) = super::rebind(&r, &[bound("cpu", "x")]) else {
            panic!("a CPU list `x` is refused");
        };
        let text = d.to_string();
        assert!(text.contains("r.toml:22:7"), "{text}");
        assert!(text.contains("invalid CPU list `x`"), "{text}");
        assert!(
            text.contains("`{params.cpu}` is `x`, from the inventory (targets.toml:9:1)"),
            "{text}"
        );
        let Err(RecipeError::Invalid(d)) = super::rebind(&r, &[bound("tick", "fast")]) else {
            panic!("a change `fast` is refused");
        };
        let text = d.to_string();
        assert!(text.contains("r.toml:27:14"), "{text}");
        assert!(text.contains("`change_pct` must be a number"), "{text}");
    }

    #[test]
    fn unknown_and_unused_parameters_are_placed() {
        let text = errors(&PARAMS.replace(
            "run = \"echo {params.cpu}\"",
            "run = \"echo {params.cpus}\"",
        ));
        assert!(text.contains("r.toml:21:7"), "{text}");
        assert!(text.contains("unknown parameter `{params.cpus}`"), "{text}");
        assert!(text.contains("did you mean `{params.cpu}`?"), "{text}");
        let text = errors(&PARAMS.replace(
            "[params]\n",
            "[params]\nspare = { default = \"1\", means = \"nothing\" }\n",
        ));
        assert!(text.contains("r.toml:16:1"), "{text}");
        assert!(
            text.contains("parameter `spare` is declared but never used"),
            "{text}"
        );
        let text = errors(&PARAMS.replace("default = \"3\"", "default = \"3 4\""));
        assert!(text.contains("invalid parameter value `3 4`"), "{text}");
        let text = errors(&PARAMS.replace("means = \"the isolated CPU\"", "mean = \"x\""));
        assert!(text.contains("unknown field `mean`"), "{text}");
        let text = errors(&PARAMS.replace("tolerance = 2.5", "tolerance = \"2.5\""));
        assert!(text.contains("`tolerance` must be a number"), "{text}");
    }
}
