//! The evidence a path on the command line names, opened as what it is
//! ([`crate::reproduction::kind`]): the new campaign, the reference, and the two compared.

use std::path::Path;

use crate::{
    reproduction::{
        bundle::from_bundle,
        campaign::from_results,
        compare::compare,
        copy::reference_files,
        error::ReproductionError,
        evidence::Evidence,
        kind::{Kind, kind},
        model::Reproduction,
    },
    stats::VerdictParams,
};

/// The new campaign at `path`: an aba results directory.
pub fn open_new(path: &Path) -> Result<Evidence, ReproductionError> {
    match kind(path)? {
        Kind::Results => from_results(path, &path.display().to_string()),
        Kind::Bundle => Err(ReproductionError::BundleAsNew {
            path: path.to_path_buf(),
        }),
    }
}

/// The reference at `path`: a results directory, or a bundle judged with `params` (the new
/// campaign's limits, since a bundle records none). A link inside it is refused (see
/// [`reference_files`]) before anything is read, so `aba check` says so too.
pub fn open_reference(path: &Path, params: &VerdictParams) -> Result<Evidence, ReproductionError> {
    reference_files(path)?;
    let shown = path.display().to_string();
    match kind(path)? {
        Kind::Results => from_results(path, &shown),
        Kind::Bundle => from_bundle(path, &shown, params),
    }
}

/// Reads the new campaign at `new` and the reference at `reference` (judged with the new
/// campaign's limits when it is a bundle) and compares them.
pub fn compare_paths(new: &Path, reference: &Path) -> Result<Reproduction, ReproductionError> {
    let new = open_new(new)?;
    let reference = open_reference(reference, &new.info.params)?;
    compare(&new, &reference)
}

#[cfg(test)]
mod tests {
    use super::open_new;
    use crate::reproduction::{
        error::ReproductionError,
        kind::{Kind, kind},
    };

    #[test]
    fn a_path_is_a_results_directory_a_bundle_or_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = kind(dir.path()).expect_err("empty");
        assert_eq!(
            err.to_string(),
            format!(
                "{} is neither an aba results directory (it has no journal.jsonl) nor a \
                 published bundle (it has no *-points.tsv)",
                dir.path().display()
            )
        );
        let missing = dir.path().join("gone");
        assert!(matches!(
            kind(&missing),
            Err(ReproductionError::Unreadable { .. })
        ));
        std::fs::write(dir.path().join("x-points.tsv"), "order\n").expect("write");
        assert_eq!(kind(dir.path()).expect("a bundle"), Kind::Bundle);
        let err = open_new(dir.path()).expect_err("a bundle is never the new campaign");
        assert!(
            matches!(err, ReproductionError::BundleAsNew { .. }),
            "{err}"
        );
        std::fs::write(dir.path().join("journal.jsonl"), "").expect("write");
        assert_eq!(kind(dir.path()).expect("results"), Kind::Results);
    }
}
