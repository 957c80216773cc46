//! `[files]` and `[expect] reference`: sources inside the recipe's folder (or a folder the
//! tester allows), or a results directory's copies.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use toml::Spanned;

use crate::recipe::{
    limits,
    model::{ExpectSection, RecipeFile},
    resolved::{FileCopy, Reference, reference_copy},
};

use super::{Checker, FilesFrom};

/// Help for a `[files]` source outside the recipe's folder.
const FILES_OUTSIDE_HELP: &str = "a recipe may only copy files from its own folder, so a recipe from someone else cannot collect yours; move the file there, or allow its folder with `--allow-files-outside DIR` (or `allow_files_outside` in your targets.toml)";

impl Checker<'_> {
    pub(super) fn files(&mut self, file: &RecipeFile) -> Vec<FileCopy> {
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
                        // Read once the whole recipe holds (`fingerprint`): a recipe with
                        // errors reads no file.
                        content: Arc::from([]),
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
    pub(super) fn recipe_dir(&self) -> &Path {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    }

    /// The folder a `[files]` source or the reference must resolve into, symlinks followed
    /// on both sides, and the extra folders the tester allowed.
    pub(super) fn roots(&self) -> (PathBuf, Vec<PathBuf>) {
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
    pub(super) fn reference(&mut self, file: &RecipeFile) -> Option<Reference> {
        let field = match &file.expect {
            ExpectSection::Reference(spec) => &spec.reference,
            // `[[expect]]` tables may hold one with `reference` alone, beside the figures.
            ExpectSection::Changes(specs) => {
                let mut given = specs.iter().filter_map(|s| s.get_ref().reference.as_ref());
                let first = given.next()?;
                if let Some(second) = given.next() {
                    self.error(
                        second.span(),
                        "a second [[expect]] `reference`: a campaign is compared with one published result",
                    );
                    return None;
                }
                first
            }
        };
        let written = self.free_text(field, "`reference`", limits::REFERENCE_CHARS, &[])?;
        if let FilesFrom::Copied(copies) = self.files {
            // `<results>/files` holds the copied [files]; the reference sits beside it.
            let root = copies.parent().unwrap_or(copies);
            return Some(Reference {
                path: reference_copy(root, &written),
                written,
            });
        }
        let shown = crate::text::quoted(&written);
        let resolved = match std::fs::canonicalize(self.recipe_dir().join(&written)) {
            Ok(r) => r,
            Err(e) => {
                self.error(field.span(), format!("cannot read `{shown}`: {e}"))
                    .help
                    .push(
                        "the reference is relative to the recipe file: an aba results \
                         directory, a published bundle's folder or <name>-points.tsv, or a \
                         summary reference's mapping file (*.toml)"
                            .to_owned(),
                    );
                return None;
            }
        };
        let (root, allowed) = self.roots();
        if !(resolved.starts_with(&root) || allowed.iter().any(|a| resolved.starts_with(a))) {
            self.error(
                field.span(),
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
}

#[cfg(test)]
mod tests {
    use crate::recipe::load::testkit::MINIMAL;
    use crate::recipe::load::{FilesFrom, Loader, RecipeError, parse};

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
        let copied = Loader {
            files: FilesFrom::Copied(&copies),
            ..Loader::default()
        }
        .parse(&recipe, &with("published"))
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

    /// A reference beside `[[expect]]` figures: one more table with `reference` alone.
    #[test]
    fn a_reference_and_figures_in_one_recipe() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("published")).expect("mkdir");
        let recipe = dir.path().join("r.toml");
        let figure = "[[expect]]\nworkload = \"w\"\nchange_pct = 1.0\ntolerance = 1.0\n";
        let reference = "[[expect]]\nreference = \"published\"\n";
        let r = parse(&recipe, &format!("{MINIMAL}{figure}{reference}")).expect("valid");
        assert_eq!(r.reference.expect("a reference").written, "published");
        assert_eq!(r.expect.len(), 1);
        let errors_at = |text: &str| match parse(&recipe, text) {
            Err(RecipeError::Invalid(d)) => d.to_string(),
            other => panic!("expected an error: {other:?}"),
        };
        // MINIMAL ends at line 14; the figure's table is lines 15-18.
        let mixed = errors_at(&format!(
            "{MINIMAL}[[expect]]\nreference = \"published\"\nworkload = \"w\"\n"
        ));
        assert!(mixed.contains("r.toml:16:13"), "{mixed}");
        assert!(
            mixed.contains("an [[expect]] with `reference` holds nothing else"),
            "{mixed}"
        );
        let twice = errors_at(&format!("{MINIMAL}{reference}{reference}"));
        assert!(twice.contains("r.toml:18:13"), "{twice}");
        assert!(twice.contains("a second [[expect]] `reference`"), "{twice}");
        let bare = errors_at(&format!("{MINIMAL}[[expect]]\nchange_pct = 1.0\n"));
        assert!(bare.contains("r.toml:15:1"), "{bare}");
        assert!(
            bare.contains("[[expect]] needs `workload` and `tolerance`"),
            "{bare}"
        );
    }
}
