//! Kernels built on this host (issue 12): where a tester's builds are (`file`), the build step
//! (`step`), what a campaign records of each build (`record`: the files with their SHA-256,
//! `version`: the version string the image embeds, `source`: the git tree's identity,
//! `modules`, `inputs`: what it was made with, read with `kconfig`), making them ready and binding them to the recipe's labels (`prepare`),
//! installing them on the target and removing them again (`install`), and proving after a
//! boot that the build that runs is the one installed (`proof`).

pub mod file;
pub mod inputs;
pub mod install;
pub mod kconfig;
pub mod modules;
pub mod prepare;
pub mod proof;
pub mod record;
pub mod source;
pub mod step;
pub mod version;
