//! The builds file: where this tester's kernel builds are, on this host (`--builds FILE`).
//!
//! A recipe is shared between testers, and build paths are facts of one tester's machine
//! (`~/linux/build-patched/arch/x86/boot/bzImage`), so they live in a small file of the
//! tester's own, next to their tree or their inventory, and never in the recipe:
//!
//! ```toml
//! version = 1
//! [kernels.patched]                 # the recipe's kernel label
//! dir = "~/linux"                   # the source tree: the build's cwd, its git identity
//! command = "make O=build-patched -j$(nproc) bzImage"
//! image = "~/linux/build-patched/arch/x86/boot/bzImage"
//! config = "~/linux/build-patched/.config"
//! patches = ["~/mail/v2-0001-sched-fix.patch"]
//! ```
//!
//! Paths are relative to the builds file's folder (`~/` is the home directory). The file is
//! the tester's, so its paths may point anywhere and its `command` runs on this host: that
//! is why none of this may come from a recipe.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use indexmap::IndexMap;
use serde::Deserialize;
use thiserror::Error;
use toml::Spanned;

use crate::recipe::{
    Diagnostics,
    diagnostic::Diagnostic,
    ident::KernelLabel,
    range::{BuildEstimate, BuildTimeout, Dur},
};

/// The only version of the format.
pub const VERSION: u32 = 1;

/// A build command's deadline unless the file says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2 * 3600);

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "aba builds file",
    description = "Where this tester's kernel builds are (docs/recipes.md, \"Kernels built on this host\")."
)]
struct BuildsFileSpec {
    /// The format's version: 1.
    #[schemars(with = "u32")]
    version: Spanned<u32>,
    /// One table per kernel label of the recipe.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, BuildTable>")]
    kernels: IndexMap<Spanned<String>, BuildTable>,
}

/// One kernel's build.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct BuildTable {
    /// The source tree: where `command` runs, and whose git identity is recorded.
    #[serde(default)]
    dir: Option<String>,
    /// The build step: a host shell command (`sh -c`) run in `dir` before any target is
    /// touched.
    #[serde(default)]
    command: Option<String>,
    /// The build command's deadline (default 2h).
    #[serde(default)]
    timeout: Option<Dur<BuildTimeout>>,
    /// The build command's expected length, for the ETA.
    #[serde(default)]
    estimate: Option<Dur<BuildEstimate>>,
    /// The kernel image the build makes (x86: `arch/x86/boot/bzImage`).
    #[schemars(with = "String")]
    image: Spanned<String>,
    /// An initrd to install with it; without one the kernel boots the initrd the recipe names.
    #[serde(default)]
    initrd: Option<String>,
    /// Modules: the folder given to `make modules_install INSTALL_MOD_PATH=…`, or a tar
    /// archive of it (`.tar`, `.tar.gz`, `.tgz`) holding `lib/modules/<release>/`.
    #[serde(default)]
    modules: Option<String>,
    /// The build's `.config`, proven against `/proc/config.gz` or `/boot/config-<release>`.
    #[serde(default)]
    config: Option<String>,
    /// The patch files this build applies, recorded with their SHA-256.
    #[serde(default)]
    patches: Vec<String>,
}

/// The JSON Schema of builds files (`aba schema builds`).
pub fn json_schema(generator: schemars::SchemaGenerator) -> schemars::Schema {
    generator.into_root_schema_for::<BuildsFileSpec>()
}

/// One kernel's build, paths resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildSpec {
    /// The recipe's label.
    pub label: String,
    /// `file:line:column` of its table, for messages and the journal.
    pub at: String,
    /// The source tree (default: the builds file's folder).
    pub dir: PathBuf,
    /// Whether `dir` was given (only then is its git identity recorded).
    pub dir_given: bool,
    /// The build command.
    pub command: Option<String>,
    /// Its deadline.
    pub timeout: Duration,
    /// Its expected length.
    pub estimate: Option<Duration>,
    /// The image.
    pub image: PathBuf,
    /// The initrd to install.
    pub initrd: Option<PathBuf>,
    /// The modules folder or archive.
    pub modules: Option<PathBuf>,
    /// The `.config`.
    pub config: Option<PathBuf>,
    /// The patches.
    pub patches: Vec<PathBuf>,
}

/// A builds file, read and checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildsFile {
    /// The file.
    pub path: PathBuf,
    /// Its kernels, in file order.
    pub kernels: Vec<BuildSpec>,
}

/// A builds file that cannot be used.
#[derive(Debug, Error)]
pub enum BuildsError {
    /// It could not be read.
    #[error("cannot read builds file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It has problems, each at its line and column.
    #[error("{0}")]
    Invalid(Diagnostics),
}

impl BuildsFile {
    /// Reads and checks the builds file at `path` (a regular file of at most 1 MiB).
    pub fn load(path: &Path) -> Result<BuildsFile, BuildsError> {
        let source = crate::input::read_text(path, crate::input::CONFIG_LIMIT, "builds file")
            .map_err(|source| BuildsError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        BuildsFile::parse(path, &source)
    }

    /// Checks builds-file text as if read from `path`.
    pub fn parse(path: &Path, source: &str) -> Result<BuildsFile, BuildsError> {
        let invalid = |diags| BuildsError::Invalid(Diagnostics(diags));
        let spec: BuildsFileSpec = toml::from_str(source)
            .map_err(|e| invalid(vec![Diagnostic::from_toml(path, source, &e)]))?;
        let base = crate::input::folder_of(path);
        let mut diags = Vec::new();
        if *spec.version.get_ref() != VERSION {
            diags.push(Diagnostic::at(
                path,
                source,
                Some(spec.version.span()),
                format!(
                    "builds file version {} is not known to this aba (it reads version {VERSION})",
                    spec.version.get_ref()
                ),
            ));
        }
        let mut kernels = Vec::new();
        for (label, table) in spec.kernels {
            let at = Diagnostic::at(path, source, Some(label.span()), "");
            if let Err(e) = KernelLabel::new(label.get_ref()) {
                diags.push(Diagnostic::at(path, source, Some(label.span()), e));
                continue;
            }
            for (what, text) in [("image", Some(table.image.get_ref()))].into_iter().chain([
                ("initrd", table.initrd.as_ref()),
                ("modules", table.modules.as_ref()),
                ("config", table.config.as_ref()),
                ("dir", table.dir.as_ref()),
            ]) {
                if text.is_some_and(|t| t.trim().is_empty() || t.contains('\0')) {
                    diags.push(Diagnostic::at(
                        path,
                        source,
                        Some(label.span()),
                        format!("`{what}` of kernel `{}` is not a path", label.get_ref()),
                    ));
                }
            }
            if table
                .command
                .as_ref()
                .is_some_and(|c| c.trim().is_empty() || c.contains('\0'))
            {
                diags.push(Diagnostic::at(
                    path,
                    source,
                    Some(label.span()),
                    format!("`command` of kernel `{}` is empty", label.get_ref()),
                ));
            }
            let dir = table.dir.as_deref().map(|d| resolve(d, &base));
            kernels.push(BuildSpec {
                label: label.get_ref().clone(),
                at: format!("{}:{}:{}", path.display(), at.line, at.column),
                dir_given: dir.is_some(),
                dir: dir.unwrap_or_else(|| base.clone()),
                command: table.command,
                timeout: table.timeout.map_or(DEFAULT_TIMEOUT, |t| t.get()),
                estimate: table.estimate.map(|e| e.get()),
                image: resolve(table.image.get_ref(), &base),
                initrd: table.initrd.as_deref().map(|p| resolve(p, &base)),
                modules: table.modules.as_deref().map(|p| resolve(p, &base)),
                config: table.config.as_deref().map(|p| resolve(p, &base)),
                patches: table.patches.iter().map(|p| resolve(p, &base)).collect(),
            });
        }
        if diags.is_empty() {
            Ok(BuildsFile {
                path: path.to_path_buf(),
                kernels,
            })
        } else {
            Err(invalid(diags))
        }
    }

    /// The build of kernel `label`, if the file has one.
    pub fn kernel(&self, label: &str) -> Option<&BuildSpec> {
        self.kernels.iter().find(|k| k.label == label)
    }
}

use crate::input::resolve_from as resolve;

#[cfg(test)]
mod tests {
    use std::{path::Path, time::Duration};

    use super::{BuildsError, BuildsFile, DEFAULT_TIMEOUT};

    #[test]
    fn a_builds_file_resolves_paths_from_its_folder() {
        let text = r#"
version = 1
[kernels.patched]
dir = "linux"
command = "make O=build-patched bzImage"
estimate = "4m"
image = "linux/build-patched/arch/x86/boot/bzImage"
config = "/srv/build/.config"
patches = ["p/0001.patch"]
[kernels.original]
image = "orig/bzImage"
"#;
        let file = BuildsFile::parse(Path::new("/home/t/builds.toml"), text).expect("valid");
        let patched = file.kernel("patched").expect("patched");
        assert_eq!(patched.dir, Path::new("/home/t/linux"));
        assert!(patched.dir_given);
        assert_eq!(
            patched.image,
            Path::new("/home/t/linux/build-patched/arch/x86/boot/bzImage")
        );
        assert_eq!(
            patched.config.as_deref(),
            Some(Path::new("/srv/build/.config"))
        );
        assert_eq!(patched.patches, [Path::new("/home/t/p/0001.patch")]);
        assert_eq!(patched.estimate, Some(Duration::from_secs(240)));
        assert_eq!(patched.timeout, DEFAULT_TIMEOUT);
        assert_eq!(patched.at, "/home/t/builds.toml:3:10");
        let original = file.kernel("original").expect("original");
        assert_eq!(original.dir, Path::new("/home/t"));
        assert!(!original.dir_given);
        assert_eq!(original.command, None);
    }

    #[test]
    fn problems_are_named_at_their_line_and_column() {
        let err = |text: &str| match BuildsFile::parse(Path::new("b.toml"), text) {
            Err(BuildsError::Invalid(d)) => d.to_string(),
            other => panic!("{other:?}"),
        };
        let e = err("version = 2\n");
        assert!(e.contains("b.toml:1:11"), "{e}");
        assert!(e.contains("version 2 is not known"), "{e}");
        let e = err("version = 1\n[kernels.a]\nimage = \"x\"\nimgae = \"y\"\n");
        assert!(e.contains("b.toml:4:1"), "{e}");
        assert!(e.contains("imgae"), "{e}");
        let e = err("version = 1\n[kernels.a]\ncommand = \"make\"\n");
        assert!(e.contains("image"), "{e}");
        let e = err("version = 1\n[kernels.\"a/b\"]\nimage = \"x\"\n");
        assert!(e.contains("b.toml:2:10"), "{e}");
        let e = err("version = 1\n[kernels.a]\nimage = \"x\"\ntimeout = \"0s\"\n");
        assert!(e.contains("b.toml:4:11"), "{e}");
        let e = err("version = 1\n[kernels.a]\nimage = \"x\"\ncommand = \" \"\n");
        assert!(e.contains("`command` of kernel `a` is empty"), "{e}");
    }
}
