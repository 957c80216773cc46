//! Summary references (issue 34 item 1): a published table that holds means per point or
//! per kernel, not samples (the btrfs bundle's `per-run-stats.tsv`, the tmpfs bundle's
//! `point-summary.csv`, the fsnotify summaries), read through a small mapping file that
//! says which column is what, since every bundle names its columns its own way.
//!
//! Such a table allows less than a bundle of samples: its means give the published change,
//! but not its noise. So a summary reference is judged by the new campaign's interval alone
//! ([`crate::reproduction::summary_judge`]), and every report says so.
//!
//! The mapping file and the tables are a stranger's files: the mapping is read at most
//! [`crate::input::CONFIG_LIMIT`] bytes and checked at its line and column; a table must be
//! a regular file inside the mapping file's folder, reached through no link; a cell that
//! is not a number is named by file, line and column.

use std::{
    collections::BTreeMap,
    path::{Component, Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::{
    recipe::{diagnostic::Diagnostic, load::Diagnostics},
    reproduction::{error::ReproductionError, evidence::foreign_label, table::Table},
};

/// The mapping file's format version.
pub const VERSION: i64 = 1;

/// The most series one mapping file may map.
pub const MAX_SERIES: usize = 100;

/// A mapping file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryFileSpec {
    version: Spanned<i64>,
    #[serde(default)]
    description: Option<Spanned<String>>,
    #[serde(default)]
    baseline: Option<Spanned<String>>,
    #[serde(default)]
    series: Vec<SeriesSpec>,
}

/// One `[[series]]`: which of the new campaign's series a table gives, and how to read it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeriesSpec {
    workload: Spanned<String>,
    #[serde(default)]
    case: Option<Spanned<String>>,
    #[serde(default)]
    metric: Option<Spanned<String>>,
    file: Spanned<String>,
    /// Rows layout: the column naming each row's kernel (or point).
    #[serde(default)]
    kernel: Option<Spanned<String>>,
    /// Rows layout: the column of each row's mean.
    #[serde(default)]
    mean: Option<Spanned<String>>,
    /// Rows layout: only rows whose cells equal these.
    #[serde(default, rename = "where")]
    filter: BTreeMap<String, Spanned<String>>,
    /// Columns layout: the row (`column = value`) whose cells are the kernels' means.
    #[serde(default)]
    row: BTreeMap<String, Spanned<String>>,
    /// Published name (a row's kernel cell, or a column's name) → the new campaign's kernel.
    #[serde(default)]
    kernels: BTreeMap<String, Spanned<String>>,
    /// Changes layout: the column naming each row's comparison.
    #[serde(default)]
    comparison: Option<Spanned<String>>,
    /// Changes layout: the column of each row's published change, in percent.
    #[serde(default)]
    change: Option<Spanned<String>>,
    /// Changes layout: published comparison name → `"candidate vs baseline"`, the new
    /// campaign's kernels.
    #[serde(default)]
    comparisons: BTreeMap<String, Spanned<String>>,
}

/// A summary reference, read: each series' published kernel means.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryReference {
    /// The mapping file, as given.
    pub path: String,
    /// Its `description`, when it has one.
    pub description: Option<String>,
    /// The kernel every candidate is compared with; `None`: the new campaign's baseline.
    pub baseline: Option<String>,
    /// The tables read, relative to the mapping file's folder.
    pub files: Vec<String>,
    /// Every mapped series.
    pub series: Vec<SummarySeries>,
}

/// One series of a summary reference.
#[derive(Clone, Debug, Serialize)]
pub struct SummarySeries {
    /// The new campaign's workload.
    pub workload: String,
    /// Its case (`""` without a matrix).
    pub case: String,
    /// Its metric.
    pub metric: String,
    /// The table, relative to the mapping file's folder.
    pub file: String,
    /// Each kernel's published mean (the mean of its rows or columns), in table order;
    /// empty for a table of changes.
    pub kernels: Vec<PublishedKernel>,
    /// Each published change (the changes layout), in table order; empty for a table of
    /// means.
    pub changes: Vec<PublishedChange>,
    /// Published names the mapping does not name, which were not used.
    pub unused: Vec<String>,
}

/// A kernel's published mean.
#[derive(Clone, Debug, Serialize)]
pub struct PublishedKernel {
    /// The new campaign's label for it.
    pub kernel: String,
    /// The mean of its published values.
    pub mean: f64,
    /// Where they come from: the published names (rows' kernel cells or columns), with
    /// their lines.
    pub from: Vec<String>,
}

/// A published change: a comparison the table states in percent (the tmpfs bundle's
/// `comparisons.csv`), not derived from means.
#[derive(Clone, Debug, Serialize)]
pub struct PublishedChange {
    /// The new campaign's candidate.
    pub candidate: String,
    /// The new campaign's kernel it is against.
    pub baseline: String,
    /// The change as published, in percent.
    pub pct: f64,
    /// Where: the published comparison's name and its line.
    pub from: String,
}

/// Whether `path` names a mapping file rather than a results directory or bundle: its name
/// ends in `.toml` (by name alone, so that a results directory's copy is found where
/// [`crate::recipe::resolved::reference_copy`] puts it).
#[must_use]
pub fn is_mapping(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// Reads the mapping file at `path` and every table it names.
pub fn read(path: &Path) -> Result<SummaryReference, ReproductionError> {
    let source = crate::input::read_text(path, crate::input::CONFIG_LIMIT, "summary reference")
        .map_err(|source| ReproductionError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
    let invalid = |diags: Vec<Diagnostic>| ReproductionError::SummaryMapping(Diagnostics(diags));
    let spec: SummaryFileSpec = toml::from_str(&source)
        .map_err(|e| invalid(vec![Diagnostic::from_toml(path, &source, &e)]))?;
    let at = |span: std::ops::Range<usize>, message: String| {
        invalid(vec![Diagnostic::at(path, &source, Some(span), message)])
    };
    if *spec.version.get_ref() != VERSION {
        return Err(at(
            spec.version.span(),
            format!(
                "summary reference version {} is not known to this aba (it reads version {VERSION})",
                spec.version.get_ref()
            ),
        ));
    }
    if spec.series.is_empty() {
        return Err(at(
            0..0,
            "a summary reference maps at least one [[series]]".to_owned(),
        ));
    }
    if spec.series.len() > MAX_SERIES {
        return Err(at(
            spec.series[MAX_SERIES].workload.span(),
            format!(
                "{} [[series]]; at most {MAX_SERIES} are read",
                spec.series.len()
            ),
        ));
    }
    let folder = crate::input::folder_of(path);
    let mut files: Vec<String> = Vec::new();
    let mut series = Vec::new();
    for s in &spec.series {
        let file = inside(&folder, s.file.get_ref())
            .map_err(|why| at(s.file.span(), format!("`file` {why}")))?;
        let table = Table::read(&file)?;
        let rel = s.file.get_ref().clone();
        if !files.contains(&rel) {
            files.push(rel.clone());
        }
        let by_changes =
            (s.comparison.is_some() || s.change.is_some() || !s.comparisons.is_empty())
                && s.kernel.is_none()
                && s.mean.is_none()
                && s.row.is_empty()
                && s.kernels.is_empty();
        let read = match (&s.kernel, &s.mean, s.row.is_empty()) {
            _ if by_changes => changes_layout(&table, s).map_err(|e| e.in_mapping(&at))?,
            (Some(kernel), Some(mean), true)
                if s.comparison.is_none() && s.change.is_none() && s.comparisons.is_empty() =>
            {
                rows_layout(&table, s, kernel, mean).map_err(|e| e.in_mapping(&at))?
            }
            (None, None, false)
                if s.comparison.is_none() && s.change.is_none() && s.comparisons.is_empty() =>
            {
                columns_layout(&table, s).map_err(|e| e.in_mapping(&at))?
            }
            _ => {
                return Err(at(
                    s.workload.span(),
                    "a [[series]] reads its table in one layout: by rows (`kernel` and `mean` \
                     columns, optionally `where`), by columns (`row = { column = \"value\" }` \
                     and `kernels` naming the columns), or as published changes (`comparison` \
                     and `change` columns, `comparisons` naming the rows, optionally `where`)"
                        .to_owned(),
                ));
            }
        };
        let Read {
            kernels,
            changes,
            unused,
        } = read;
        if kernels.is_empty() && changes.is_empty() && by_changes {
            return Err(at(
                s.file.span(),
                format!(
                    "no row of {} maps to a comparison: name them in `comparisons`",
                    crate::text::one_line(&rel)
                ),
            ));
        }
        if kernels.is_empty() && !by_changes {
            return Err(at(
                s.file.span(),
                format!(
                    "no row or column of {} maps to a kernel: name them in `kernels`",
                    crate::text::one_line(&rel)
                ),
            ));
        }
        series.push(SummarySeries {
            workload: s.workload.get_ref().clone(),
            case: s
                .case
                .as_ref()
                .map(|c| c.get_ref().clone())
                .unwrap_or_default(),
            metric: s
                .metric
                .as_ref()
                .map_or_else(|| s.workload.get_ref().clone(), |m| m.get_ref().clone()),
            file: rel,
            kernels,
            changes,
            unused,
        });
    }
    Ok(SummaryReference {
        path: path.display().to_string(),
        description: spec
            .description
            .map(|d| crate::text::one_line(d.get_ref()).into_owned()),
        baseline: spec.baseline.map(|b| b.get_ref().clone()),
        files,
        series,
    })
}

/// An error of a table read through the mapping: the table's own (file, line, column), or
/// the mapping's (a column it names that the table lacks) at the key's place.
enum LayoutError {
    Table(ReproductionError),
    Mapping(std::ops::Range<usize>, String),
}

impl LayoutError {
    fn in_mapping(
        self,
        at: &impl Fn(std::ops::Range<usize>, String) -> ReproductionError,
    ) -> ReproductionError {
        match self {
            LayoutError::Table(e) => e,
            LayoutError::Mapping(span, message) => at(span, message),
        }
    }
}

/// The column `name` (from the mapping at `span`) of `table`.
fn column(table: &Table, name: &Spanned<String>, key: &str) -> Result<usize, LayoutError> {
    table.column(name.get_ref()).ok_or_else(|| {
        LayoutError::Mapping(
            name.span(),
            format!(
                "`{key}` names column `{}`, which {} does not have",
                crate::text::one_line(name.get_ref()),
                table.path.display()
            ),
        )
    })
}

/// What one layout read from a table.
#[derive(Default)]
struct Read {
    kernels: Vec<PublishedKernel>,
    changes: Vec<PublishedChange>,
    unused: Vec<String>,
}

/// The `where` filters of `s`: (column index, value) pairs.
fn filters<'s>(table: &Table, s: &'s SeriesSpec) -> Result<Vec<(usize, &'s str)>, LayoutError> {
    let mut filters = Vec::new();
    for (name, value) in &s.filter {
        let at = table.column(name).ok_or_else(|| {
            LayoutError::Mapping(
                value.span(),
                format!(
                    "`where` names column `{}`, which {} does not have",
                    crate::text::one_line(name),
                    table.path.display()
                ),
            )
        })?;
        filters.push((at, value.get_ref().as_str()));
    }
    Ok(filters)
}

/// One row per published comparison: `comparison` names it, `change` holds its change in
/// percent; `comparisons` maps the names used to the new campaign's pairs. A pair given by
/// two rows is refused: which one is the published figure is the tester's choice (`where`).
fn changes_layout(table: &Table, s: &SeriesSpec) -> Result<Read, LayoutError> {
    let missing = |key: &str| {
        LayoutError::Mapping(
            s.file.span(),
            format!("as published changes, `{key}` names the column that holds them"),
        )
    };
    let (comparison, change) = (
        s.comparison.as_ref().ok_or_else(|| missing("comparison"))?,
        s.change.as_ref().ok_or_else(|| missing("change"))?,
    );
    if s.comparisons.is_empty() {
        return Err(LayoutError::Mapping(
            comparison.span(),
            "as published changes, `comparisons` maps each row's comparison to \
             \"candidate vs baseline\", the new campaign's kernels"
                .to_owned(),
        ));
    }
    let mut pairs = BTreeMap::new();
    for (name, pair) in &s.comparisons {
        let parsed = pair
            .get_ref()
            .split_once(" vs ")
            .map(|(c, b)| (c.trim(), b.trim()))
            .filter(|(c, b)| !c.is_empty() && !b.is_empty() && c != b);
        let Some((candidate, baseline)) = parsed else {
            return Err(LayoutError::Mapping(
                pair.span(),
                format!(
                    "`{}` is not \"candidate vs baseline\" (two different kernels of the new campaign)",
                    crate::text::one_line(pair.get_ref())
                ),
            ));
        };
        pairs.insert(name.as_str(), (candidate, baseline, pair.span()));
    }
    let (n, c) = (
        column(table, comparison, "comparison")?,
        column(table, change, "change")?,
    );
    let filters = filters(table, s)?;
    let mut read = Read::default();
    let mut seen: Vec<(String, String, usize)> = Vec::new();
    for (row, (line, cells)) in table.rows.iter().enumerate() {
        if filters.iter().any(|(c, v)| cells[*c] != *v) {
            continue;
        }
        let name = table.cell(row, n);
        let Some((candidate, baseline, span)) = pairs.get(name) else {
            let shown = foreign_label(name);
            if !read.unused.contains(&shown) {
                read.unused.push(shown);
            }
            continue;
        };
        if let Some((.., first)) = seen
            .iter()
            .find(|(c, b, _)| c == candidate && b == baseline)
        {
            return Err(LayoutError::Mapping(
                span.clone(),
                format!(
                    "{candidate} vs {baseline} is given by lines {first} and {line} of {}: \
                     select one row with `where`",
                    table.path.display()
                ),
            ));
        }
        seen.push(((*candidate).to_owned(), (*baseline).to_owned(), *line));
        let pct = table
            .number(*line, c, table.cell(row, c))
            .map_err(LayoutError::Table)?;
        read.changes.push(PublishedChange {
            candidate: foreign_label(candidate),
            baseline: foreign_label(baseline),
            pct,
            from: format!("{} (line {line})", foreign_label(name)),
        });
    }
    Ok(read)
}

/// One row per point or kernel: `kernel` names it, `mean` holds its mean.
fn rows_layout(
    table: &Table,
    s: &SeriesSpec,
    kernel: &Spanned<String>,
    mean: &Spanned<String>,
) -> Result<Read, LayoutError> {
    let (k, m) = (
        column(table, kernel, "kernel")?,
        column(table, mean, "mean")?,
    );
    let filters = filters(table, s)?;
    let mut kernels: Vec<PublishedKernel> = Vec::new();
    let mut sums: Vec<(f64, usize)> = Vec::new();
    let mut unused: Vec<String> = Vec::new();
    for (row, (line, cells)) in table.rows.iter().enumerate() {
        if filters.iter().any(|(c, v)| cells[*c] != *v) {
            continue;
        }
        let name = table.cell(row, k);
        let label = match s.kernels.get(name) {
            Some(label) => label.get_ref().clone(),
            None if s.kernels.is_empty() => name.to_owned(),
            None => {
                let shown = foreign_label(name);
                if !unused.contains(&shown) {
                    unused.push(shown);
                }
                continue;
            }
        };
        let value = table
            .number(*line, m, table.cell(row, m))
            .map_err(LayoutError::Table)?;
        let from = format!("{} (line {line})", foreign_label(name));
        add(&mut kernels, &mut sums, &label, value, from);
    }
    Ok(Read {
        kernels: finish(kernels, &sums),
        changes: Vec::new(),
        unused,
    })
}

/// One row per series, one column per kernel: `row` selects the row, `kernels` names the
/// columns that hold kernels' values.
fn columns_layout(table: &Table, s: &SeriesSpec) -> Result<Read, LayoutError> {
    let mut selectors = Vec::new();
    for (name, value) in &s.row {
        let at = table.column(name).ok_or_else(|| {
            LayoutError::Mapping(
                value.span(),
                format!(
                    "`row` names column `{}`, which {} does not have",
                    crate::text::one_line(name),
                    table.path.display()
                ),
            )
        })?;
        selectors.push((at, value));
    }
    let matching: Vec<usize> = (0..table.rows.len())
        .filter(|&r| {
            selectors
                .iter()
                .all(|(c, v)| table.cell(r, *c) == v.get_ref())
        })
        .collect();
    let first = s
        .row
        .values()
        .next()
        .expect("invariant: the layout has a row");
    let row = match matching.as_slice() {
        [one] => *one,
        [] => {
            return Err(LayoutError::Mapping(
                first.span(),
                format!("no row of {} matches `row`", table.path.display()),
            ));
        }
        more => {
            return Err(LayoutError::Mapping(
                first.span(),
                format!(
                    "{} rows of {} match `row` (lines {}); it must select one",
                    more.len(),
                    table.path.display(),
                    more.iter()
                        .map(|&r| table.rows[r].0.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    };
    if s.kernels.is_empty() {
        return Err(LayoutError::Mapping(
            first.span(),
            "by columns, `kernels` names the columns that hold the kernels' values".to_owned(),
        ));
    }
    let line = table.rows[row].0;
    let mut kernels = Vec::new();
    let mut sums = Vec::new();
    for (column_name, label) in &s.kernels {
        let c = table.column(column_name).ok_or_else(|| {
            LayoutError::Mapping(
                label.span(),
                format!(
                    "`kernels` names column `{}`, which {} does not have",
                    crate::text::one_line(column_name),
                    table.path.display()
                ),
            )
        })?;
        let value = table
            .number(line, c, table.cell(row, c))
            .map_err(LayoutError::Table)?;
        let from = format!("{} (line {line})", foreign_label(column_name));
        add(&mut kernels, &mut sums, label.get_ref(), value, from);
    }
    Ok(Read {
        kernels: finish(kernels, &sums),
        ..Read::default()
    })
}

fn add(
    kernels: &mut Vec<PublishedKernel>,
    sums: &mut Vec<(f64, usize)>,
    label: &str,
    value: f64,
    from: String,
) {
    match kernels.iter().position(|k| k.kernel == label) {
        Some(i) => {
            sums[i].0 += value;
            sums[i].1 += 1;
            kernels[i].from.push(from);
        }
        None => {
            kernels.push(PublishedKernel {
                kernel: foreign_label(label),
                mean: 0.0,
                from: vec![from],
            });
            sums.push((value, 1));
        }
    }
}

/// Each kernel's mean: the mean of its values (a kernel published per point is weighted by
/// point, as aba's boot-weighted kernel mean).
fn finish(mut kernels: Vec<PublishedKernel>, sums: &[(f64, usize)]) -> Vec<PublishedKernel> {
    for (k, (sum, n)) in kernels.iter_mut().zip(sums) {
        k.mean = sum / *n as f64;
    }
    kernels
}

/// `written`, relative to `folder`, as a regular file inside it reached through no link.
fn inside(folder: &Path, written: &str) -> Result<PathBuf, String> {
    let relative = Path::new(written);
    if written.is_empty()
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(format!(
            "`{}` must be a path inside the mapping file's folder (no `..`, not absolute)",
            crate::text::one_line(written)
        ));
    }
    let mut at = folder.to_path_buf();
    for part in relative.components() {
        at.push(part);
        let meta = std::fs::symlink_metadata(&at)
            .map_err(|e| format!("`{}` cannot be read: {e}", crate::text::one_line(written)))?;
        if meta.file_type().is_symlink() {
            return Err(format!(
                "`{}` goes through a symbolic link ({}): aba does not follow links inside a reference",
                crate::text::one_line(written),
                at.display()
            ));
        }
    }
    if !std::fs::metadata(&at).is_ok_and(|m| m.is_file()) {
        return Err(format!(
            "`{}` is not a regular file",
            crate::text::one_line(written)
        ));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::read;

    fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in files {
            fs::write(dir.path().join(name), text).expect("write");
        }
        dir
    }

    /// By rows: a point-summary table (two rows of the parent, one of the child, two of
    /// another release the mapping leaves out); by columns: a row of means per kernel.
    #[test]
    fn rows_and_columns_give_each_kernels_published_mean() {
        let dir = folder(&[
            (
                "point-summary.csv",
                "point,kernel,rows,mean_ns_per_op\nold-a,7.0,15,100.0\nparent-a,7.1-p,15,300.0\n\
                 child,7.1-c,15,200.0\nparent-b,7.1-p,15,310.0\nold-b,7.0,15,101.0\n",
            ),
            (
                "wide.tsv",
                "metric\tparent_a\tchild\tparent_b\tchild_vs_parent_a_pct\n\
                 ns_per_watch\t4000\t4800\t4200\t20.0\nother\t1\t2\t3\t100\n",
            ),
            (
                "map.toml",
                "version = 1\ndescription = \"a published summary\"\n\
                 [[series]]\nworkload = \"w\"\nfile = \"point-summary.csv\"\nkernel = \"point\"\n\
                 mean = \"mean_ns_per_op\"\nkernels = { parent-a = \"parent\", parent-b = \"parent\", child = \"child\" }\n\
                 [[series]]\nworkload = \"watch\"\nmetric = \"ns_per_watch\"\nfile = \"wide.tsv\"\n\
                 row = { metric = \"ns_per_watch\" }\n\
                 kernels = { parent_a = \"parent\", parent_b = \"parent\", child = \"child\" }\n",
            ),
        ]);
        let r = read(&dir.path().join("map.toml")).expect("reads");
        assert_eq!(r.description.as_deref(), Some("a published summary"));
        assert_eq!(r.files, ["point-summary.csv", "wide.tsv"]);
        let means = |i: usize| -> Vec<(String, f64)> {
            r.series[i]
                .kernels
                .iter()
                .map(|k| (k.kernel.clone(), k.mean))
                .collect()
        };
        assert_eq!(
            means(0),
            [("parent".to_owned(), 305.0), ("child".to_owned(), 200.0)]
        );
        assert_eq!(r.series[0].unused, ["old-a", "old-b"]);
        assert_eq!(
            r.series[0].kernels[0].from,
            ["parent-a (line 3)", "parent-b (line 5)"]
        );
        // BTreeMap order of the columns: child, then parent (4000 and 4200).
        assert_eq!(
            means(1),
            [("child".to_owned(), 4800.0), ("parent".to_owned(), 4100.0)]
        );
        assert_eq!(r.series[1].metric, "ns_per_watch");
    }

    /// A stranger's mapping: each mistake at its line and column, a table outside the
    /// folder or through a link refused, a cell that is not a number at its file, line and
    /// column.
    #[test]
    fn a_broken_mapping_is_named_at_its_place() {
        let table = ("t.tsv", "kernel\tmean\nparent\t1\nchild\tfast\n");
        let err = |map: &str| {
            let dir = folder(&[table, ("map.toml", map)]);
            read(&dir.path().join("map.toml"))
                .expect_err("refused")
                .to_string()
        };
        let head = "version = 1\n[[series]]\nworkload = \"w\"\n";
        let e = err(&format!(
            "{head}file = \"../t.tsv\"\nkernel = \"kernel\"\nmean = \"mean\"\n"
        ));
        assert!(e.contains("map.toml:4:8"), "{e}");
        assert!(
            e.contains("must be a path inside the mapping file's folder"),
            "{e}"
        );
        let e = err(&format!(
            "{head}file = \"t.tsv\"\nkernel = \"kernal\"\nmean = \"mean\"\n"
        ));
        assert!(e.contains("map.toml:5:10"), "{e}");
        assert!(e.contains("`kernel` names column `kernal`"), "{e}");
        let e = err(&format!(
            "{head}file = \"t.tsv\"\nkernel = \"kernel\"\nmean = \"mean\"\n"
        ));
        assert!(e.contains("t.tsv:3:2"), "{e}");
        assert!(e.contains("`mean` is `fast`, not a number"), "{e}");
        let e = err(&format!("{head}file = \"t.tsv\"\nmean = \"mean\"\n"));
        assert!(e.contains("in one layout"), "{e}");
        let e = err("version = 2\n");
        assert!(
            e.contains("map.toml:1:11") && e.contains("version 2 is not known"),
            "{e}"
        );
        let e = err(&format!(
            "{head}file = \"t.tsv\"\nkernel = \"kernel\"\nmeans = \"mean\"\n"
        ));
        assert!(e.contains("unknown field `means`"), "{e}");
        // Through a link: refused, whatever it names.
        let dir = folder(&[table]);
        std::os::unix::fs::symlink(dir.path().join("t.tsv"), dir.path().join("l.tsv"))
            .expect("symlink");
        fs::write(
            dir.path().join("map.toml"),
            format!("{head}file = \"l.tsv\"\nkernel = \"kernel\"\nmean = \"mean\"\n"),
        )
        .expect("write");
        let e = read(&dir.path().join("map.toml"))
            .expect_err("a link")
            .to_string();
        assert!(e.contains("goes through a symbolic link"), "{e}");
    }

    /// A table of changes (the tmpfs bundle's comparisons.csv layout): the rows `where`
    /// selects, each named comparison mapped to a pair; a pair two rows give, a pair that is
    /// not "candidate vs baseline", and a missing `change` refused at the mapping's place.
    #[test]
    fn a_table_of_changes_gives_each_pairs_published_change() {
        let table = (
            "comparisons.csv",
            "metric_set,comparison,delta_or_recovery_pct\nmean,v71_vs_v70,54.47\n\
             mean,child_vs_parent,-35.93\nmean,drift,-0.55\ndrop_first_mean,child_vs_parent,-35.87\n",
        );
        let head = "version = 1\n[[series]]\nworkload = \"w\"\nfile = \"comparisons.csv\"\n\
                    comparison = \"comparison\"\nchange = \"delta_or_recovery_pct\"\n";
        let map = format!(
            "{head}where = {{ metric_set = \"mean\" }}\n\
             comparisons = {{ v71_vs_v70 = \"v71 vs v70\", child_vs_parent = \"child vs parent\" }}\n"
        );
        let dir = folder(&[table, ("map.toml", &map)]);
        let r = read(&dir.path().join("map.toml")).expect("reads");
        let s = &r.series[0];
        assert!(s.kernels.is_empty());
        let got: Vec<(&str, &str, f64, &str)> = s
            .changes
            .iter()
            .map(|c| {
                (
                    c.candidate.as_str(),
                    c.baseline.as_str(),
                    c.pct,
                    c.from.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("v71", "v70", 54.47, "v71_vs_v70 (line 2)"),
                ("child", "parent", -35.93, "child_vs_parent (line 3)")
            ]
        );
        assert_eq!(s.unused, ["drift"]);

        let err = |map: &str| {
            let dir = folder(&[table, ("map.toml", map)]);
            read(&dir.path().join("map.toml"))
                .expect_err("refused")
                .to_string()
        };
        let e = err(&format!(
            "{head}comparisons = {{ child_vs_parent = \"child vs parent\" }}\n"
        ));
        assert!(
            e.contains("map.toml:7:35") && e.contains("is given by lines 3 and 5"),
            "{e}"
        );
        let e = err(&format!("{head}comparisons = {{ drift = \"parent\" }}\n"));
        assert!(
            e.contains("map.toml:7:25") && e.contains("is not \"candidate vs baseline\""),
            "{e}"
        );
        let e = err(
            "version = 1\n[[series]]\nworkload = \"w\"\nfile = \"comparisons.csv\"\n\
             comparison = \"comparison\"\ncomparisons = { drift = \"a vs b\" }\n",
        );
        assert!(
            e.contains("map.toml:4:8") && e.contains("`change` names the column"),
            "{e}"
        );
        let e = err(&format!(
            "{head}kernel = \"comparison\"\ncomparisons = {{ drift = \"a vs b\" }}\n"
        ));
        assert!(e.contains("in one layout"), "{e}");
    }
}
