//! `aba batch FILE`, `aba batch resume DIR`, `aba batch status DIR`: the options turned into
//! [`crate::session::batch`].

use std::path::Path;

use crate::{
    cli::FilesArgs,
    error::Error,
    session::batch::{self, BatchContext},
};

/// `aba batch FILE`.
pub fn run(
    plan: &Path,
    results: &Path,
    inventory: Option<&Path>,
    files: &FilesArgs,
) -> Result<u8, Error> {
    let files = files.sources();
    batch::run(
        plan,
        results,
        &BatchContext {
            inventory,
            files: &files,
        },
    )
}

/// `aba batch resume DIR`.
pub fn resume(dir: &Path, inventory: Option<&Path>, files: &FilesArgs) -> Result<u8, Error> {
    let files = files.sources();
    batch::resume(
        dir,
        &BatchContext {
            inventory,
            files: &files,
        },
    )
}

/// `aba batch status DIR`.
pub fn status(dir: &Path) -> Result<u8, Error> {
    batch::status(dir)
}
