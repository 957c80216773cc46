//! Making a tester's builds ready for a campaign, before any target is touched: each build
//! step runs (its log in the results directory), then the files are read and hashed, the
//! image's version string read, the source identified; and binding them to the recipe's
//! labels: the release becomes the one the image embeds, the image and initrd aba's copies
//! on the target, where the journal's `kernels` record keeps them for resume and report.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::{
    file::{BuildSpec, BuildsFile},
    inputs,
    modules::{self, ModulesError},
    record::{BuildRun, FileError, HostFile, KernelBuild, read_file},
    source,
    step::{self, StepError},
    version::KernelVersion,
};
use crate::{
    inventory::Target,
    kernel::binding::{BoundKernel, apply},
    origin::Origin,
    recipe::{
        Recipe,
        ident::{Release, TargetPath},
    },
};

/// Why a build cannot be used.
#[derive(Debug, Error)]
pub enum BuildError {
    /// The builds file names a kernel the recipe does not have.
    #[error("{at}: the recipe has no kernel `{label}` (its kernels: {known})")]
    UnknownLabel {
        /// Where the table is.
        at: String,
        /// Its label.
        label: String,
        /// The recipe's labels.
        known: String,
    },
    /// The target cannot boot a kernel aba installs.
    #[error(
        "kernel `{label}` is built on this host ({at}), but target `{target}` switches by {method}, which cannot boot a kernel aba installs: use kexec, grub-reboot or bls"
    )]
    Unsupported {
        /// The kernel.
        label: String,
        /// Where its build is.
        at: String,
        /// The target.
        target: String,
        /// Its switch method.
        method: String,
    },
    /// The build step failed.
    #[error(transparent)]
    Step(Box<StepError>),
    /// A file of the build cannot be used.
    #[error("kernel `{label}` ({at})")]
    File {
        /// The kernel.
        label: String,
        /// Where its build is.
        at: String,
        /// Why.
        #[source]
        source: Box<FileError>,
    },
    /// Its modules cannot be used.
    #[error("kernel `{label}` ({at})")]
    Modules {
        /// The kernel.
        label: String,
        /// Where its build is.
        at: String,
        /// Why.
        #[source]
        source: Box<ModulesError>,
    },
    /// Its release is not one aba can prove.
    #[error("kernel `{label}` ({at}): the image says release `{release}`: {reason}")]
    Release {
        /// The kernel.
        label: String,
        /// Where its build is.
        at: String,
        /// What the image says.
        release: String,
        /// Why it is refused.
        reason: String,
    },
    /// Its source tree could not be identified.
    #[error("kernel `{label}` ({at}): cannot identify the source tree: {reason}")]
    Source {
        /// The kernel.
        label: String,
        /// Where its build is.
        at: String,
        /// Why.
        reason: String,
    },
}

impl From<StepError> for BuildError {
    fn from(e: StepError) -> Self {
        BuildError::Step(Box::new(e))
    }
}

/// What happens to the build steps.
pub enum Steps<'a> {
    /// Run each kernel's build command first, its log into `logs/<label>.log`; `say` tells
    /// the tester what runs and how long it took.
    Run {
        /// The folder of the logs (created).
        logs: &'a Path,
        /// Progress lines.
        say: &'a dyn Fn(&str),
        /// Each log's name as the record keeps it (relative to the results directory).
        log_name: &'a dyn Fn(&str) -> String,
    },
    /// Use the files as they are (the build commands are not run).
    Skip,
}

/// Checks that every kernel of `builds` is one of `recipe`'s and that `target` can boot it.
pub fn check(builds: &BuildsFile, recipe: &Recipe, target: &Target) -> Result<(), BuildError> {
    for spec in &builds.kernels {
        if !recipe.kernels.keys().any(|k| k.as_str() == spec.label) {
            return Err(BuildError::UnknownLabel {
                at: spec.at.clone(),
                label: spec.label.clone(),
                known: recipe
                    .kernels
                    .keys()
                    .map(|k| k.as_str().to_owned())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        install_base(spec, target)?;
    }
    Ok(())
}

fn install_base(spec: &BuildSpec, target: &Target) -> Result<String, BuildError> {
    let method = target.switch.method();
    let workdir = target.workdir.as_deref().unwrap_or("/tmp/aba");
    method
        .switches()
        .then(|| method.install_base(workdir))
        .flatten()
        .ok_or_else(|| BuildError::Unsupported {
            label: spec.label.clone(),
            at: spec.at.clone(),
            target: target.name.clone(),
            method: method.kind().name().to_owned(),
        })
}

/// Makes every kernel of `builds` ready, in file order: its build step (per `steps`), then
/// its record (the install folder is chosen per target, by [`bind`]).
pub fn make_all(builds: &BuildsFile, steps: &Steps<'_>) -> Result<Vec<KernelBuild>, BuildError> {
    builds
        .kernels
        .iter()
        .map(|spec| make(spec, steps))
        .collect()
}

/// Makes one kernel ready: runs its build step (per `steps`) and records its files.
pub fn make(spec: &BuildSpec, steps: &Steps<'_>) -> Result<KernelBuild, BuildError> {
    let built = match (steps, &spec.command) {
        (
            Steps::Run {
                logs,
                say,
                log_name,
            },
            Some(command),
        ) => {
            std::fs::create_dir_all(logs).map_err(|source| StepError::Start {
                label: spec.label.clone(),
                command: command.clone(),
                dir: logs.to_path_buf(),
                source,
            })?;
            let log = logs.join(format!("{}.log", spec.label));
            say(&format!(
                "building kernel {}: `{command}` in {} (log {})",
                spec.label,
                spec.dir.display(),
                log.display()
            ));
            let took = step::run(&spec.label, command, &spec.dir, spec.timeout, &log)?;
            say(&format!(
                "built kernel {} in {}",
                spec.label,
                humantime::format_duration(std::time::Duration::from_secs(took.as_secs()))
            ));
            Some(BuildRun {
                command: command.clone(),
                millis: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
                log: log_name(&spec.label),
            })
        }
        _ => None,
    };
    record(spec, built)
}

/// Records a kernel's files as they are now.
fn record(spec: &BuildSpec, built: Option<BuildRun>) -> Result<KernelBuild, BuildError> {
    let file_error = |source| BuildError::File {
        label: spec.label.clone(),
        at: spec.at.clone(),
        source: Box::new(source),
    };
    let data = read_file(&spec.image, "image").map_err(file_error)?;
    let version = KernelVersion::from_image(&data).map_err(|source| {
        file_error(FileError::Version {
            path: spec.image.clone(),
            source,
        })
    })?;
    let image = HostFile::of(&spec.image, &data);
    drop(data);
    let optional = |path: &Option<PathBuf>, what| {
        path.as_deref()
            .map(|p| HostFile::read(p, what))
            .transpose()
            .map_err(file_error)
    };
    let initrd = optional(&spec.initrd, "initrd")?;
    let (config, config_text) = match &spec.config {
        Some(path) => {
            let data = read_file(path, "config").map_err(file_error)?;
            let text = String::from_utf8_lossy(&data).into_owned();
            (Some(HostFile::of(path, &data)), Some(text))
        }
        None => (None, None),
    };
    let patches = spec
        .patches
        .iter()
        .map(|p| HostFile::read(p, "patch"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(file_error)?;
    let modules = spec
        .modules
        .as_deref()
        .map(|p| modules::record(p, &version.release))
        .transpose()
        .map_err(|source| BuildError::Modules {
            label: spec.label.clone(),
            at: spec.at.clone(),
            source: Box::new(source),
        })?;
    let source_error = |reason| BuildError::Source {
        label: spec.label.clone(),
        at: spec.at.clone(),
        reason,
    };
    let source = if spec.dir_given {
        source::identify(&spec.dir).map_err(source_error)?
    } else {
        None
    };
    let mut made_with =
        inputs::record(spec, &version, config_text.as_deref()).map_err(file_error)?;
    if spec.dir_given && source.is_none() {
        made_with.source_snapshot = Some(source::snapshot(&spec.dir).map_err(source_error)?);
    }
    Ok(KernelBuild {
        at: spec.at.clone(),
        version,
        image,
        initrd,
        modules,
        config,
        install_dir: String::new(),
        source,
        patches,
        built,
        made_with: Some(made_with),
    })
}

/// Binds `builds` (made from `file`, in its order) to the recipe's kernels for `target`:
/// the release is the image's, the image (and the initrd, when the build has one) aba's copy
/// in the build's own folder on the target, each from `Origin::Build`.
pub fn bind(
    recipe: &mut Recipe,
    bound: &mut [BoundKernel],
    file: &BuildsFile,
    builds: &[KernelBuild],
    target: &Target,
) -> Result<(), BuildError> {
    check(file, recipe, target)?;
    for (spec, build) in file.kernels.iter().zip(builds) {
        let label = &spec.label;
        let Some(k) = bound.iter_mut().find(|k| k.label.as_str() == label) else {
            continue;
        };
        let mut build = build.clone();
        build.install_dir = format!(
            "{}/{label}-{}",
            install_base(spec, target)?,
            &build.image.sha256[..12]
        );
        let refused = |reason: String| BuildError::Release {
            label: label.clone(),
            at: build.at.clone(),
            release: build.version.release.clone(),
            reason,
        };
        let origin = Origin::Build {
            at: build.at.clone(),
        };
        // An initrd left at the default of the recipe's release follows the image's release
        // (`/boot/initrd.img-<release>`, where `make install` puts one); one the recipe or a
        // binding named stays.
        let default_initrd = format!("/boot/initrd.img-{}", k.release);
        k.release = Release::new(&build.version.release).map_err(&refused)?;
        k.release_from = origin.clone();
        if build.initrd.is_none() && k.initrd.as_str() == default_initrd {
            k.initrd =
                TargetPath::new(&format!("/boot/initrd.img-{}", k.release)).map_err(&refused)?;
            k.initrd_from = origin.clone();
        }
        k.image = TargetPath::new(&build.target_image()).map_err(&refused)?;
        k.image_from = origin.clone();
        if let Some(initrd) = build.target_initrd() {
            k.initrd = TargetPath::new(&initrd).map_err(&refused)?;
            k.initrd_from = origin;
        }
        k.build = Some(Box::new(build));
    }
    apply(recipe, bound);
    Ok(())
}
