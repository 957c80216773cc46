//! A published bundle as [`Evidence`]: the layout of lcf0399/linux-regression-evidence, whose
//! figures `tests/fixtures/golden/` transcribes.
//!
//! ```text
//! <name>-points.tsv       order point role commit n mean_<metric>… sd cv_pct values …
//! <name>-comparison.tsv   analysis <figure>… (optional; rows all_<n>_rounds, drop_first_round)
//! ```
//!
//! One points file is one experiment: a row per boot, `role` naming the kernel booted (the
//! same role at several points is the same kernel), `values` the measured samples in order.
//! A metric is a `mean_<metric>` column; its samples are `values_<metric>`, `values_<prefix>`
//! (`values_mprotect` for `mean_mprotect_ns_per_page`) or, for the first metric, `values`.
//! The baseline is the kernel of the first boot (the sandwich's bread), the candidates the
//! others in order of first boot.
//!
//! The figures are recomputed from the published samples with aba's own statistics (which
//! reproduce every published figure of the golden data), after checking that each published
//! point mean is what its samples give; the comparison file's change of a candidate against
//! the baseline midpoint is shown beside aba's. A metric published as means only has no
//! within-boot noise and no drop-first: it is named, not compared. A bundle records no
//! verdict limits, unit or direction of improvement: it is judged with the new campaign's
//! limits, and reads its unit and direction from the new campaign.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use crate::{
    analysis::{
        analyze::series_label,
        environment::EnvironmentCheck,
        model::SeriesPoint,
        series::{SeriesContext, analyze_series},
    },
    input::read_text,
    reproduction::{
        campaign::distinct,
        error::ReproductionError,
        evidence::{
            Environment, Evidence, EvidenceInfo, EvidenceSeries, KernelIdentity, LimitsOrigin,
            PublishedChange, Source,
        },
    },
    stats::{Better, VerdictParams, summarize},
};

/// The suffix of an experiment's points file.
pub const POINTS_SUFFIX: &str = "-points.tsv";
/// The suffix of an experiment's comparison file.
pub const COMPARISON_SUFFIX: &str = "-comparison.tsv";
/// A bundle's table is a few KiB; a file beyond this is not one.
const FILE_LIMIT: u64 = 16 << 20;

/// The points files `path` names: itself when it is one, or every `*-points.tsv` in the
/// folder, sorted; empty when there is none.
#[must_use]
pub fn points_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return if name_of(path).ends_with(POINTS_SUFFIX) {
            vec![path.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && name_of(p).ends_with(POINTS_SUFFIX))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads the bundle at `path` (a folder or one points file); `shown` is how the user named
/// it, `params` the limits to judge it with (the new campaign's).
pub fn from_bundle(
    path: &Path,
    shown: &str,
    params: &VerdictParams,
) -> Result<Evidence, ReproductionError> {
    let files = points_files(path);
    if files.is_empty() {
        return Err(ReproductionError::NotEvidence {
            path: path.to_path_buf(),
        });
    }
    let mut series = Vec::new();
    let mut notes = Vec::new();
    let mut read = Vec::new();
    let mut kernels: Vec<KernelIdentity> = Vec::new();
    for file in &files {
        read.push(name_of(file));
        let experiment = Experiment::read(file)?;
        let comparison = file.with_file_name(format!("{}{COMPARISON_SUFFIX}", experiment.stem));
        let published = if comparison.is_file() {
            read.push(name_of(&comparison));
            Some(Table::read(&comparison)?)
        } else {
            None
        };
        for identity in experiment.kernels() {
            match kernels.iter_mut().find(|k| k.label == identity.label) {
                Some(k) => k.builds = distinct(k.builds.drain(..).chain(identity.builds)),
                None => kernels.push(identity),
            }
        }
        for (i, metric) in experiment.metrics.iter().enumerate() {
            match experiment.series(i, params)? {
                Some(mut s) => {
                    if i == 0
                        && let Some(table) = &published
                    {
                        s.published = published_changes(table, &s)?;
                    }
                    series.push(s);
                }
                None => notes.push(format!(
                    "{}: {metric} is published as point means only; aba needs its samples to \
                     judge it",
                    experiment.stem
                )),
            }
        }
    }
    let name = match files.as_slice() {
        [one] => name_of(one).trim_end_matches(POINTS_SUFFIX).to_owned(),
        _ => name_of(path),
    };
    Ok(Evidence {
        info: EvidenceInfo {
            path: shown.to_owned(),
            name,
            source: Source::Published { files: read },
            params: params.clone(),
            limits: LimitsOrigin::NewCampaign,
            shared_boot: false,
            environment: Environment {
                kernels,
                ..Environment::default()
            },
            notes,
        },
        series,
    })
}

/// A tab-separated file: its header and its rows with their line numbers.
struct Table {
    path: PathBuf,
    header: Vec<String>,
    /// Each column name's first index: a file may have 100,000 columns, so a column is found
    /// in constant time, never by a scan per metric.
    index: HashMap<String, usize>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    fn read(path: &Path) -> Result<Table, ReproductionError> {
        let text = read_text(path, FILE_LIMIT, "published table").map_err(|source| {
            ReproductionError::Unreadable {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let header: Vec<String> = lines
            .next()
            .map(|(_, l)| l.split('\t').map(|c| c.trim().to_owned()).collect())
            .unwrap_or_default();
        let mut index = HashMap::with_capacity(header.len());
        for (i, name) in header.iter().enumerate() {
            index.entry(name.clone()).or_insert(i);
        }
        let table = Table {
            path: path.to_path_buf(),
            rows: Vec::new(),
            header,
            index,
        };
        let mut rows = Vec::new();
        for (i, line) in lines {
            let cells: Vec<String> = line.split('\t').map(|c| c.trim().to_owned()).collect();
            if cells.len() != table.header.len() {
                return Err(table.error(
                    i + 1,
                    format!(
                        "{} cells, but the header has {} columns",
                        cells.len(),
                        table.header.len()
                    ),
                ));
            }
            rows.push((i + 1, cells));
        }
        Ok(Table { rows, ..table })
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn required(&self, name: &str) -> Result<usize, ReproductionError> {
        self.column(name)
            .ok_or_else(|| self.error(1, format!("no `{name}` column")))
    }

    fn error(&self, line: usize, what: String) -> ReproductionError {
        ReproductionError::Bundle {
            path: self.path.clone(),
            line,
            what,
        }
    }

    fn number(&self, line: usize, column: &str, text: &str) -> Result<f64, ReproductionError> {
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| self.error(line, format!("`{column}` is `{text}`, not a number")))
    }
}

/// Longest metric name a bundle may use (aba's own are at most 64 characters).
const METRIC_NAME_LIMIT: usize = 256;

/// One points file.
struct Experiment {
    stem: String,
    table: Table,
    /// Metric names, in column order.
    metrics: Vec<String>,
    /// `values_<prefix>` columns by prefix (first index).
    values_prefixes: HashMap<String, usize>,
    /// Row indices in boot order.
    order: Vec<usize>,
}

impl Experiment {
    fn read(path: &Path) -> Result<Experiment, ReproductionError> {
        let table = Table::read(path)?;
        let metrics: Vec<String> = table
            .header
            .iter()
            .filter_map(|h| h.strip_prefix("mean_"))
            .map(str::to_owned)
            .collect();
        if metrics.is_empty() {
            return Err(table.error(1, "no `mean_<metric>` column".to_owned()));
        }
        // A metric's samples column is looked up by each of its `_`-prefixes: bounded names
        // keep that linear in the file.
        if let Some(long) = metrics
            .iter()
            .find(|m| m.chars().count() > METRIC_NAME_LIMIT)
        {
            return Err(table.error(
                1,
                format!(
                    "column `mean_{}` names a metric of {} characters; at most \
                     {METRIC_NAME_LIMIT} are read",
                    crate::text::cut(long, 48),
                    long.chars().count()
                ),
            ));
        }
        let mut values_prefixes = HashMap::new();
        for (i, name) in table.header.iter().enumerate() {
            if let Some(prefix) = name.strip_prefix("values_") {
                values_prefixes.entry(prefix.to_owned()).or_insert(i);
            }
        }
        let order_col = table.required("order")?;
        for name in ["point", "role", "n"] {
            table.required(name)?;
        }
        let mut keyed = Vec::new();
        for (i, (line, cells)) in table.rows.iter().enumerate() {
            let order: usize = cells[order_col].parse().map_err(|_| {
                table.error(
                    *line,
                    format!("`order` is `{}`, not a boot order", cells[order_col]),
                )
            })?;
            keyed.push((order, i));
        }
        keyed.sort_unstable();
        if table.rows.is_empty() {
            return Err(table.error(1, "no points".to_owned()));
        }
        Ok(Experiment {
            stem: name_of(path).trim_end_matches(POINTS_SUFFIX).to_owned(),
            order: keyed.into_iter().map(|(_, i)| i).collect(),
            metrics,
            values_prefixes,
            table,
        })
    }

    fn cell(&self, row: usize, column: usize) -> &str {
        &self.table.rows[row].1[column]
    }

    /// The column of metric `i`'s samples.
    fn values_column(&self, i: usize) -> Option<usize> {
        let metric = &self.metrics[i];
        self.values_prefixes
            .get(metric.as_str())
            .copied()
            .or_else(|| {
                // The first column (in file order) whose prefix, followed by `_`, starts the name.
                metric
                    .match_indices('_')
                    .filter_map(|(at, _)| self.values_prefixes.get(&metric[..at]).copied())
                    .min()
                    .or_else(|| (i == 0).then(|| self.table.column("values")).flatten())
            })
    }

    /// The kernels in order of first boot, with their published commits.
    fn kernels(&self) -> Vec<KernelIdentity> {
        let role = self
            .table
            .column("role")
            .expect("invariant: checked by read");
        let commit = self.table.column("commit");
        let mut out: Vec<KernelIdentity> = Vec::new();
        for &row in &self.order {
            let label = self.cell(row, role).to_owned();
            let build = commit
                .map(|c| self.cell(row, c).to_owned())
                .filter(|c| !c.is_empty());
            match out.iter_mut().find(|k| k.label == label) {
                Some(k) => k.builds = distinct(k.builds.drain(..).chain(build)),
                None => out.push(KernelIdentity {
                    label,
                    releases: Vec::new(),
                    builds: build.into_iter().collect(),
                    versions: Vec::new(),
                    cmdline: Vec::new(),
                }),
            }
        }
        out
    }

    /// Metric `i` as a series, analysed with `params`; `None` when it has no samples.
    fn series(
        &self,
        i: usize,
        params: &VerdictParams,
    ) -> Result<Option<EvidenceSeries>, ReproductionError> {
        let Some(values_col) = self.values_column(i) else {
            return Ok(None);
        };
        let metric = &self.metrics[i];
        let mean_col = format!("mean_{metric}");
        let t = &self.table;
        let (point, role, n, mean) = (
            t.required("point")?,
            t.required("role")?,
            t.required("n")?,
            t.required(&mean_col)?,
        );
        let mut points = Vec::new();
        for (order, &row) in self.order.iter().enumerate() {
            let line = t.rows[row].0;
            let label = self.cell(row, point);
            let values = self
                .cell(row, values_col)
                .split_whitespace()
                .map(|v| t.number(line, &t.header[values_col], v))
                .collect::<Result<Vec<f64>, _>>()?;
            let Some(all) = summarize(&values) else {
                return Err(t.error(line, format!("point {label} has no values")));
            };
            let count: usize = self.cell(row, n).parse().map_err(|_| {
                t.error(line, format!("`n` is `{}`, not a count", self.cell(row, n)))
            })?;
            if count != values.len() {
                return Err(t.error(
                    line,
                    format!("point {label} has n = {count} but {} values", values.len()),
                ));
            }
            let published = self.cell(row, mean);
            let value = t.number(line, &mean_col, published)?;
            if !agrees(all.mean, value, published) {
                return Err(t.error(
                    line,
                    format!(
                        "point {label} publishes {mean_col} {published}, but its values \
                         average {}",
                        all.mean
                    ),
                ));
            }
            points.push(SeriesPoint {
                order: order + 1,
                label: label.to_owned(),
                kernel: self.cell(row, role).to_owned(),
                drop_first: summarize(&values[1..]),
                values,
                warmups: Vec::new(),
                all,
            });
        }
        let baseline = points[0].kernel.clone();
        let candidates = distinct(
            points
                .iter()
                .filter(|p| p.kernel != baseline)
                .map(|p| p.kernel.clone()),
        );
        let analyses = analyze_series(
            &points,
            &SeriesContext {
                baseline: &baseline,
                candidates: &candidates,
                params,
                // Which direction is better is not published; it decides no label, only the
                // words, which the comparison takes from the new campaign.
                better: Better::Lower,
                aux: false,
                recoveries: &[],
                prior_all: None,
                prior_drop_first: None,
                environment: &EnvironmentCheck::default(),
                look: None,
            },
        );
        let mut result = analyses
            .all
            .expect("invariant: a series with points has an all-samples analysis");
        for c in &mut result.comparisons {
            c.direction = None;
            c.verdict.direction = None;
        }
        Ok(Some(EvidenceSeries {
            label: series_label(&self.stem, "", metric),
            workload: self.stem.clone(),
            case: String::new(),
            metric: metric.clone(),
            unit: None,
            better: None,
            role: None,
            aux: false,
            result,
            published: Vec::new(),
        }))
    }
}

/// `computed` equals the published `text` to its printed decimals.
fn agrees(computed: f64, value: f64, text: &str) -> bool {
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    let decimals = i32::try_from(decimals).unwrap_or(i32::MAX);
    (computed - value).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9
}

/// The changes of `series`' candidates against the baseline midpoint that the comparison
/// file publishes in its all-samples row: `<c>_vs_<b>_midpoint_pct`, `<c>_vs_<b>_pct` or
/// `<c>_vs_midpoint_pct`.
fn published_changes(
    table: &Table,
    series: &EvidenceSeries,
) -> Result<Vec<PublishedChange>, ReproductionError> {
    let analysis = table.required("analysis")?;
    let Some((line, row)) = table
        .rows
        .iter()
        .find(|(_, cells)| cells[analysis].starts_with("all"))
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for c in &series.result.comparisons {
        let names = [
            format!("{}_vs_{}_midpoint_pct", c.candidate, c.baseline),
            format!("{}_vs_{}_pct", c.candidate, c.baseline),
            format!("{}_vs_midpoint_pct", c.candidate),
        ];
        let Some((column, i)) = names
            .into_iter()
            .find_map(|n| table.column(&n).map(|i| (n, i)))
        else {
            continue;
        };
        let text = row[i].clone();
        let value = table.number(*line, &column, &text)?;
        out.push(PublishedChange {
            candidate: c.candidate.clone(),
            agrees: agrees(c.comparison.change_pct, value, &text),
            column,
            text,
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{from_bundle, points_files};
    use crate::{
        reproduction::{error::ReproductionError, evidence::Source},
        stats::{VerdictLabel, VerdictParams},
    };

    /// exact-cac1 as lcf0399/linux-regression-evidence publishes it (the golden data).
    const POINTS: &str = "order\tpoint\trole\tcommit\tn\tmean_iteration_ns_per_page\tsd\tcv_pct\tvalues\tsemantic_failures\n\
1\tparent-a\tparent\t45199f7\t15\t38.133333\t0.743223\t1.949012\t37 38 38 38 39 37 39 37 38 39 38 38 39 39 38\t0\n\
2\tchild\tchild\tcac1db8\t15\t53.533333\t0.516398\t0.964628\t53 53 54 53 53 54 54 54 53 54 53 53 54 54 54\t0\n\
3\tparent-b\tparent\t45199f7\t15\t38.466667\t0.639940\t1.663623\t37 39 38 39 38 39 38 39 38 39 39 39 38 39 38\t0\n";
    const COMPARISON: &str = "analysis\tparent_a_mean\tchild_mean\tparent_b_mean\tparent_midpoint\tchild_vs_parent_midpoint_pct\tparent_b_vs_parent_a_pct\n\
all_15_rounds\t38.133333\t53.533333\t38.466667\t38.300000\t39.773716\t0.874126\n\
drop_first_round\t38.214286\t53.571429\t38.571429\t38.392857\t39.534884\t0.934579\n";

    fn bundle(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        dir
    }

    #[test]
    fn the_published_layout_reads_as_a_series_with_its_published_change() {
        let dir = bundle(&[
            ("exact-cac1-points.tsv", POINTS),
            ("exact-cac1-comparison.tsv", COMPARISON),
            ("README.md", "not a table"),
        ]);
        let evidence =
            from_bundle(dir.path(), "bundle", &VerdictParams::default()).expect("a bundle");
        assert_eq!(evidence.info.name, "exact-cac1");
        let Source::Published { files } = &evidence.info.source else {
            panic!("{:?}", evidence.info.source)
        };
        assert_eq!(
            files,
            &["exact-cac1-points.tsv", "exact-cac1-comparison.tsv"]
        );
        let s = &evidence.series[0];
        assert_eq!(s.label, "exact-cac1/iteration_ns_per_page");
        assert_eq!((s.unit.as_ref(), s.better), (None, None));
        let c = &s.result.comparisons[0];
        assert_eq!(
            (c.candidate.as_str(), c.baseline.as_str()),
            ("child", "parent")
        );
        assert_eq!(format!("{:.6}", c.comparison.change_pct), "39.773716");
        assert_eq!(c.verdict.label, VerdictLabel::Signal);
        assert_eq!(c.direction, None);
        let published = &s.published[0];
        assert_eq!(published.column, "child_vs_parent_midpoint_pct");
        assert!(published.agrees, "{published:?}");
        let kernels = &evidence.info.environment.kernels;
        assert_eq!(kernels[0].builds, ["45199f7"]);
        assert_eq!(kernels[1].label, "child");
        // A single points file is the same experiment.
        let one = from_bundle(
            &dir.path().join("exact-cac1-points.tsv"),
            "one",
            &VerdictParams::default(),
        )
        .expect("a bundle");
        assert_eq!(one.series.len(), 1);
        assert!(points_files(&dir.path().join("README.md")).is_empty());
    }

    #[test]
    fn a_mean_that_its_values_do_not_give_is_refused_with_its_line() {
        let dir = bundle(&[("x-points.tsv", &POINTS.replace("53.533333", "53.6"))]);
        let err = from_bundle(dir.path(), "b", &VerdictParams::default()).expect_err("refused");
        assert!(
            matches!(err, ReproductionError::Bundle { line: 3, .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .ends_with("x-points.tsv:3: point child publishes mean_iteration_ns_per_page 53.6, but its values average 53.53333333333333"),
            "{err}"
        );
        let dir = bundle(&[("x-points.tsv", "order\tpoint\trole\tn\n1\ta\ta\t1\n")]);
        let err = from_bundle(dir.path(), "b", &VerdictParams::default()).expect_err("refused");
        assert!(
            err.to_string()
                .ends_with("x-points.tsv:1: no `mean_<metric>` column"),
            "{err}"
        );
        let long = format!(
            "order\tpoint\trole\tn\tmean_{}\n1\ta\ta\t1\t1\n",
            "_".repeat(300)
        );
        let dir = bundle(&[("x-points.tsv", &long)]);
        let err = from_bundle(dir.path(), "b", &VerdictParams::default()).expect_err("refused");
        assert!(
            err.to_string()
                .ends_with("names a metric of 300 characters; at most 256 are read"),
            "{err}"
        );
        let dir = bundle(&[("x-points.tsv", "order\tpoint\n1\n")]);
        let err = from_bundle(dir.path(), "b", &VerdictParams::default()).expect_err("refused");
        assert!(
            err.to_string()
                .contains("1 cells, but the header has 2 columns"),
            "{err}"
        );
        let empty = tempfile::tempdir().expect("tempdir");
        let err = from_bundle(empty.path(), "b", &VerdictParams::default()).expect_err("none");
        assert!(
            matches!(err, ReproductionError::NotEvidence { .. }),
            "{err}"
        );
    }

    #[test]
    fn a_metric_published_as_means_only_is_named_and_not_compared() {
        let text = "order\tpoint\trole\tn\tmean_mprotect_ns_per_page\tmean_touch_ns_per_page\tvalues_mprotect\n\
1\ta1\tbase\t3\t23.000000\t11.5\t23 23 23\n\
2\tc\tcand\t3\t38.000000\t11.4\t38 38 38\n\
3\ta2\tbase\t3\t23.000000\t11.2\t23 23 23\n";
        let dir = bundle(&[("large-points.tsv", text)]);
        let evidence = from_bundle(dir.path(), "b", &VerdictParams::default()).expect("bundle");
        assert_eq!(evidence.series.len(), 1);
        assert_eq!(evidence.series[0].metric, "mprotect_ns_per_page");
        assert_eq!(
            evidence.info.notes,
            [
                "large: touch_ns_per_page is published as point means only; aba needs its samples \
              to judge it"
            ]
        );
    }
}
