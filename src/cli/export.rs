//! `aba export DIR --to OUT`: a results directory written in the published layout
//! ([`crate::report::export`]) into a new folder, every file written with the atomic writers
//! and copied without following a link, so that an export never writes outside OUT.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::{
    analysis::Analysis,
    error::{Error, exit_code},
    input::{open_data, read_text},
    recipe::model::PublishSpec,
    report::{
        ReportError,
        export::{ExportCopy, render},
    },
    reproduction::{
        campaign::read_results,
        copy::{copy_regular, reference_files},
    },
    results::{atomic::write_atomic_no_link, kept::check as check_kept, layout::ResultsDir},
};

/// A patch is a few KiB; a file beyond this is not one.
const PATCH_LIMIT: u64 = 64 << 20;

/// `aba export DIR --to OUT [--json]`.
pub fn export(dir: &Path, to: &Path, json: bool) -> Result<u8, Error> {
    let (analysis, evidence) = read_results(dir, &dir.display().to_string())?;
    let publish = publish_of(&ResultsDir::open(dir).recipe_path())?;
    // The results directory's own files, listed (links refused) before anything is written.
    let results = ResultsDir::open(dir);
    let mut own: Vec<(PathBuf, String)> = reference_files(dir)?
        .into_iter()
        .filter_map(|file| {
            let to = if file.from == results.recipe_path() {
                PathBuf::from("recipe.toml")
            } else if file.from == results.samples_path() {
                PathBuf::from("samples.csv")
            } else if let Ok(rest) = file.to.strip_prefix("files") {
                Path::new("workload").join(rest)
            } else {
                return None;
            };
            Some((file.from, to.to_string_lossy().into_owned()))
        })
        .collect();
    own.extend(kept_evidence(dir, &analysis)?);
    let copied: Vec<String> = own.iter().map(|(_, to)| to.clone()).collect();
    let export = render(&analysis, &evidence, &publish, &copied);
    // Every patch is read and checked before OUT is touched: a changed one writes nothing.
    let patches = export
        .copies
        .iter()
        .map(|c| patch(c).map(|data| (c.to.clone(), data)))
        .collect::<Result<Vec<_>, _>>()?;
    prepare(to)?;
    let mut written = Vec::new();
    for file in &export.files {
        write(to, &file.path, &file.data)?;
        written.push(file.path.clone());
    }
    for (rel, data) in patches {
        write(to, &rel, &data)?;
        written.push(rel);
    }
    for (from, rel) in own {
        let dest = to.join(&rel);
        make_parent(to, &dest)?;
        copy_regular(&from, &dest).map_err(|e| ReportError::ExportCopy {
            from: from.clone(),
            why: e.to_string(),
        })?;
        written.push(rel);
    }
    if json {
        print!(
            "{}",
            crate::json::render(&crate::json::export::ExportDoc::new(
                to.display().to_string(),
                written
            ))
        );
    } else {
        println!(
            "Exported {} to {} ({} files); `aba compare NEW {}` judges a new campaign against it.",
            dir.display(),
            to.display(),
            written.len(),
            crate::target::quote::sh_quote(&crate::text::one_line(&to.to_string_lossy()))
        );
    }
    Ok(exit_code::OK)
}

/// The output the done points kept as evidence (`probes/…`, `checks/…`, as the analysis
/// lists them), each at the same path in OUT, and each checked against the SHA-256 the
/// journal holds for it before anything is written: a file edited since the campaign fails
/// the export, which names it.
fn kept_evidence(dir: &Path, analysis: &Analysis) -> Result<Vec<(PathBuf, String)>, ReportError> {
    analysis
        .probes
        .iter()
        .flat_map(|p| &p.files)
        .chain(&analysis.kept_checks)
        .map(|kept| {
            let from = dir.join(&kept.record.path);
            check_kept(dir, &kept.record).map_err(|e| ReportError::ExportCopy {
                from: from.clone(),
                why: format!(
                    "{}: it is not the output the campaign kept",
                    crate::causes::one_line(&e)
                ),
            })?;
            Ok((from, kept.record.path.clone()))
        })
        .collect()
}

/// The recipe copy's `[publish]`; a copy without one has the empty table.
fn publish_of(recipe: &Path) -> Result<PublishSpec, ReportError> {
    #[derive(serde::Deserialize)]
    struct OnlyPublish {
        #[serde(default)]
        publish: PublishSpec,
    }
    let fail = |what: String| ReportError::ExportRecipe {
        path: recipe.to_path_buf(),
        what,
    };
    let text =
        read_text(recipe, crate::input::CONFIG_LIMIT, "recipe").map_err(|e| fail(e.to_string()))?;
    toml::from_str::<OnlyPublish>(&text)
        .map(|o| o.publish)
        .map_err(|e| fail(crate::text::one_line(&e.to_string()).into_owned()))
}

/// Makes `to` a new folder, or accepts an empty one; a link or anything else is refused.
fn prepare(to: &Path) -> Result<(), ReportError> {
    prepare_out(to, "an export")
}

/// Makes `to` a new folder for `what` (`an export`), or accepts an empty one; a link or
/// anything else is refused.
pub(super) fn prepare_out(to: &Path, what: &str) -> Result<(), ReportError> {
    let refuse = |why: &str| ReportError::ExportDestination {
        path: to.to_path_buf(),
        why: why.to_owned(),
    };
    match std::fs::symlink_metadata(to) {
        Ok(meta) if meta.file_type().is_symlink() => Err(refuse(
            "is a symbolic link; aba does not write through links",
        )),
        Ok(meta) if meta.is_dir() => {
            let empty = std::fs::read_dir(to)
                .map_err(|e| refuse(&format!("cannot be listed: {e}")))?
                .next()
                .is_none();
            if empty {
                Ok(())
            } else {
                Err(refuse(&format!(
                    "is not empty; {what} is written into a new or empty folder"
                )))
            }
        }
        Ok(_) => Err(refuse("exists and is not a folder")),
        Err(_) => std::fs::create_dir(to).map_err(|source| ReportError::Write {
            path: to.to_path_buf(),
            source,
        }),
    }
}

/// Creates the folders between OUT and `dest` (each new, so none can be a link).
fn make_parent(out: &Path, dest: &Path) -> Result<(), ReportError> {
    let Some(parent) = dest.parent() else {
        return Ok(());
    };
    let mut at = out.to_path_buf();
    for part in parent.strip_prefix(out).unwrap_or(parent).components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() && !meta.file_type().is_symlink() => {}
            Ok(_) => {
                return Err(ReportError::ExportDestination {
                    path: at,
                    why: "is in the way of a folder of the export".to_owned(),
                });
            }
            Err(_) => std::fs::create_dir(&at).map_err(|source| ReportError::Write {
                path: at.clone(),
                source,
            })?,
        }
    }
    Ok(())
}

fn write(out: &Path, rel: &str, data: &[u8]) -> Result<(), ReportError> {
    let dest = out.join(rel);
    make_parent(out, &dest)?;
    write_atomic_no_link(&dest, data).map_err(|source| ReportError::Write { path: dest, source })
}

/// A patch file as the campaign used it: read without following a link, at most
/// [`PATCH_LIMIT`] bytes, with the SHA-256 its build record holds.
fn patch(copy: &ExportCopy) -> Result<Vec<u8>, ReportError> {
    use std::io::Read as _;
    let from = PathBuf::from(&copy.from);
    let fail = |why: String| ReportError::ExportCopy {
        from: from.clone(),
        why,
    };
    let file = open_data(&from).map_err(|e| fail(e.to_string()))?;
    let mut data = Vec::new();
    file.take(PATCH_LIMIT + 1)
        .read_to_end(&mut data)
        .map_err(|e| fail(e.to_string()))?;
    if data.len() as u64 > PATCH_LIMIT {
        return Err(fail(format!(
            "it is larger than {}",
            crate::text::bytes(PATCH_LIMIT)
        )));
    }
    let sha = hex::encode(Sha256::digest(&data));
    match &copy.sha256 {
        Some(want) if !want.eq_ignore_ascii_case(&sha) => Err(fail(format!(
            "its SHA-256 is {sha}, not the {want} the campaign recorded: it changed since"
        ))),
        _ => Ok(data),
    }
}

#[cfg(test)]
mod tests {
    use super::{patch, prepare};
    use crate::report::export::ExportCopy;

    #[test]
    fn a_patch_is_copied_only_as_the_campaign_used_it_and_out_is_new_or_empty() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let fix = tmp.path().join("fix.patch");
        std::fs::write(&fix, "diff\n").expect("write");
        let copy = |sha: &str, from: &std::path::Path| ExportCopy {
            from: from.display().to_string(),
            to: "patches/fix.patch".into(),
            sha256: Some(sha.into()),
        };
        let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"diff\n"));
        assert_eq!(patch(&copy(&sha, &fix)).expect("the same"), b"diff\n");
        let err = patch(&copy("00", &fix)).expect_err("changed");
        assert!(err.to_string().contains("it changed since"), "{err}");
        let link = tmp.path().join("link.patch");
        std::os::unix::fs::symlink(&fix, &link).expect("symlink");
        assert!(
            patch(&copy(&sha, &link)).is_err(),
            "a link is never followed"
        );

        let out = tmp.path().join("out");
        prepare(&out).expect("created");
        prepare(&out).expect("empty is fine");
        std::fs::write(out.join("x"), "").expect("write");
        assert!(
            prepare(&out)
                .expect_err("not empty")
                .to_string()
                .ends_with("is not empty; an export is written into a new or empty folder")
        );
        assert!(prepare(&fix).is_err(), "a file");
        assert!(prepare(&link).is_err(), "a link");
    }
}
