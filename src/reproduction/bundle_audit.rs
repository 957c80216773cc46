//! The tables a bundle keeps beside its points, read per experiment:
//!
//! ```text
//! run-audit.tsv        experiment point kernel_release … semantic_failures …
//! source-identity.tsv  experiment point|kernel|role … kernel_release compiler preemption
//!                      git_commit config_sha256 canonical_config_sha256 …
//! ```
//!
//! A row is found by its experiment and its point (`run-audit.tsv`) or kernel
//! (`source-identity.tsv`, whose `point` column names the role): a table is never read by the
//! kernel's name alone, since two experiments of one bundle may give one role name to
//! different builds. A table in another layout (a `field value` list) is not used, and the
//! bundle's file list says so with the reason.

use std::{collections::HashMap, path::Path};

use crate::reproduction::{
    error::ReproductionError,
    evidence::{BuildId, IgnoredFile},
    table::Table,
};

/// The per-point audit's file name.
pub const RUN_AUDIT: &str = "run-audit.tsv";
/// The per-kernel identity's file name.
pub const SOURCE_IDENTITY: &str = "source-identity.tsv";

/// What `run-audit.tsv` says of one point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointAudit {
    /// The release the point booted.
    pub release: Option<String>,
    /// Its semantic failures and where that is written (`run-audit.tsv:4`).
    pub semantic_failures: Option<(usize, String)>,
}

/// What `source-identity.tsv` says of one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFacts {
    /// Its release.
    pub release: Option<String>,
    /// Its build identities.
    pub builds: Vec<BuildId>,
    /// Its compiler.
    pub compiler: Option<String>,
    /// Its preemption model.
    pub preemption: Option<String>,
}

/// One side table, keyed by (experiment, point or kernel).
struct Keyed {
    table: Table,
    rows: HashMap<(String, String), usize>,
    used: bool,
}

/// A side table: absent, read, or present in a layout aba does not read (with the reason).
enum Side {
    Absent,
    Read(Keyed),
    Unused(String),
}

/// `run-audit.tsv` and `source-identity.tsv` of one bundle folder.
pub struct SideTables {
    audit: Side,
    identity: Side,
}

impl SideTables {
    /// Reads the side tables of `folder`; a file that does not read as a table is an error
    /// naming it, one in another layout is kept aside with the reason.
    pub fn read(folder: &Path) -> Result<SideTables, ReproductionError> {
        Ok(SideTables {
            audit: side(folder, RUN_AUDIT, &["point"])?,
            identity: side(folder, SOURCE_IDENTITY, &["kernel", "role", "point"])?,
        })
    }

    /// What `run-audit.tsv` says of `point` of `experiment`.
    pub fn audit(
        &mut self,
        experiment: &str,
        point: &str,
    ) -> Result<Option<PointAudit>, ReproductionError> {
        let Some((keyed, row)) = find(&mut self.audit, experiment, point) else {
            return Ok(None);
        };
        let t = &keyed.table;
        let release = text(t, row, &["kernel_release", "release"]);
        let semantic_failures = match t.column("semantic_failures") {
            Some(c) => Some((t.count(row, c)?, format!("{RUN_AUDIT}:{}", t.rows[row].0))),
            None => None,
        };
        Ok(Some(PointAudit {
            release,
            semantic_failures,
        }))
    }

    /// What `source-identity.tsv` says of kernel `kernel` of `experiment`.
    pub fn identity(&mut self, experiment: &str, kernel: &str) -> Option<KernelFacts> {
        let (keyed, row) = find(&mut self.identity, experiment, kernel)?;
        let t = &keyed.table;
        let builds = [
            ("git_commit", BuildId::GitCommit as fn(String) -> BuildId),
            ("config_sha256", BuildId::ConfigSha256),
            ("canonical_config_sha256", BuildId::CanonicalConfigSha256),
        ]
        .into_iter()
        .filter_map(|(column, kind)| text(t, row, &[column]).map(kind))
        .collect();
        Some(KernelFacts {
            release: text(t, row, &["kernel_release", "release"]),
            builds,
            compiler: text(t, row, &["compiler"]),
            preemption: text(t, row, &["preemption"]),
        })
    }

    /// The files used, in name order.
    #[must_use]
    pub fn used(&self) -> Vec<String> {
        [(&self.audit, RUN_AUDIT), (&self.identity, SOURCE_IDENTITY)]
            .into_iter()
            .filter(|(s, _)| matches!(s, Side::Read(k) if k.used))
            .map(|(_, name)| name.to_owned())
            .collect()
    }

    /// The files present and not used, with the reason.
    #[must_use]
    pub fn ignored(&self) -> Vec<IgnoredFile> {
        [(&self.audit, RUN_AUDIT), (&self.identity, SOURCE_IDENTITY)]
            .into_iter()
            .filter_map(|(s, name)| {
                let reason = match s {
                    Side::Absent => return None,
                    Side::Read(k) if k.used => return None,
                    Side::Read(_) => {
                        "no row names an experiment and point that was read".to_owned()
                    }
                    Side::Unused(why) => why.clone(),
                };
                Some(IgnoredFile {
                    file: name.to_owned(),
                    reason,
                })
            })
            .collect()
    }
}

/// The side table `name` of `folder`, keyed by `experiment` and the first of `keys`.
fn side(folder: &Path, name: &str, keys: &[&str]) -> Result<Side, ReproductionError> {
    let path = folder.join(name);
    // A link was refused before the reference was read (`copy::reference_files`).
    if !path.is_file() {
        return Ok(Side::Absent);
    }
    let table = Table::read(&path)?;
    let (Some(experiment), Some(key)) = (table.column("experiment"), table.any_column(keys)) else {
        return Ok(Side::Unused(format!(
            "not in the per-experiment layout (no `experiment` and `{}` columns)",
            keys.join("`/`")
        )));
    };
    let mut rows = HashMap::with_capacity(table.rows.len());
    for (i, (_, cells)) in table.rows.iter().enumerate() {
        rows.entry((cells[experiment].clone(), cells[key].clone()))
            .or_insert(i);
    }
    Ok(Side::Read(Keyed {
        table,
        rows,
        used: false,
    }))
}

fn find<'a>(side: &'a mut Side, experiment: &str, key: &str) -> Option<(&'a Keyed, usize)> {
    let Side::Read(keyed) = side else {
        return None;
    };
    let row = *keyed.rows.get(&(experiment.to_owned(), key.to_owned()))?;
    keyed.used = true;
    Some((keyed, row))
}

/// The first non-empty cell of row `row` among `columns` (`none` and `-` are empty), as a
/// reader sees it.
fn text(t: &Table, row: usize, columns: &[&str]) -> Option<String> {
    let c = t.any_column(columns)?;
    let cell = t.cell(row, c);
    (!matches!(cell, "" | "-" | "none")).then(|| t.label(row, c))
}

#[cfg(test)]
mod tests {
    use super::{PointAudit, SideTables};
    use crate::reproduction::evidence::BuildId;

    #[test]
    fn rows_are_found_by_experiment_and_key_and_other_layouts_set_aside() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("run-audit.tsv"),
            "experiment\tpoint\tkernel_release\tsemantic_failures\n\
             one\tbase-a\t6.1-b\t0\none\tcand\t6.1-c\t2\ntwo\tbase-a\t7.0-b\t0\n",
        )
        .expect("write");
        std::fs::write(
            dir.path().join("source-identity.tsv"),
            "field\tvalue\nx\ty\n",
        )
        .expect("write");
        let mut side = SideTables::read(dir.path()).expect("read");
        assert_eq!(
            side.audit("two", "base-a").expect("audit"),
            Some(PointAudit {
                release: Some("7.0-b".into()),
                semantic_failures: Some((0, "run-audit.tsv:4".into())),
            })
        );
        assert_eq!(
            side.audit("one", "cand")
                .expect("audit")
                .and_then(|a| a.semantic_failures),
            Some((2, "run-audit.tsv:3".into()))
        );
        assert_eq!(side.audit("three", "base-a").expect("audit"), None);
        assert_eq!(side.identity("one", "base"), None);
        assert_eq!(side.used(), ["run-audit.tsv"]);
        let ignored = side.ignored();
        assert_eq!(ignored[0].file, "source-identity.tsv");
        assert!(ignored[0].reason.contains("no `experiment`"), "{ignored:?}");

        std::fs::write(
            dir.path().join("source-identity.tsv"),
            "experiment\tpoint\tcanonical_config_sha256\tgit_commit\tpreemption\n\
             one\tbase\tabc\tnone\tfull\n",
        )
        .expect("write");
        let mut side = SideTables::read(dir.path()).expect("read");
        let facts = side.identity("one", "base").expect("a row");
        assert_eq!(facts.builds, [BuildId::CanonicalConfigSha256("abc".into())]);
        assert_eq!(facts.preemption.as_deref(), Some("full"));
        assert_eq!(side.ignored()[0].file, "run-audit.tsv");
    }
}
