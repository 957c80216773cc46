//! A published bundle as [`Evidence`]: the layout of lcf0399/linux-regression-evidence, whose
//! figures `tests/fixtures/golden/` transcribes.
//!
//! ```text
//! <name>-points.tsv       order point role commit n mean_<metric>… sd cv_pct values …
//! <name>-comparison.tsv   analysis <figure>… (optional; rows all_<n>_rounds, drop_first_round)
//! run-audit.tsv, source-identity.tsv   per experiment (see [`super::bundle_audit`])
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

use std::path::{Path, PathBuf};

use crate::{
    analysis::{
        analyze::series_label,
        environment::EnvironmentCheck,
        model::SeriesPoint,
        series::{SeriesContext, analyze_series},
    },
    reproduction::{
        bundle_audit::SideTables,
        campaign::distinct,
        error::ReproductionError,
        evidence::{
            BuildId, Environment, Evidence, EvidenceInfo, EvidenceSeries, IgnoredFile,
            KernelIdentity, LimitsOrigin, PublishedChange, Source,
        },
        table::{Table, name_of},
    },
    stats::{Better, VerdictParams, summarize},
};

/// The suffix of an experiment's points file.
pub const POINTS_SUFFIX: &str = "-points.tsv";
/// The suffix of an experiment's comparison file.
pub const COMPARISON_SUFFIX: &str = "-comparison.tsv";

/// Where a bundle's tables are: the folder holding its points files, those files (sorted),
/// and the folder's name when it was found one level below the path named (a bundle's root,
/// `mprotect-shared-dirty-toggle/` with its tables in `bare-metal/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The folder of the points files.
    pub folder: PathBuf,
    /// The points files.
    pub files: Vec<PathBuf>,
    /// The subfolder's name, when the path named is its parent.
    pub below: Option<String>,
}

/// The `*-points.tsv` directly in `dir`, sorted: regular files, and links, which
/// [`super::copy::reference_files`] then refuses by name (never skipped in silence).
fn points_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
                .map(|e| e.path())
                .filter(|p| name_of(p).ends_with(POINTS_SUFFIX))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The bundle `path` names: itself when it is a points file; the `*-points.tsv` of the
/// folder; or, when the folder has none, those of the one subfolder (not a link) that has
/// some. `None` when there is none; [`ReproductionError::SeveralBundles`] when several
/// subfolders have some (which one is meant cannot be told).
pub fn locate(path: &Path) -> Result<Option<Located>, ReproductionError> {
    if path.is_file() {
        return Ok(name_of(path).ends_with(POINTS_SUFFIX).then(|| Located {
            folder: crate::input::folder_of(path),
            files: vec![path.to_path_buf()],
            below: None,
        }));
    }
    let here = points_in(path);
    if !here.is_empty() {
        return Ok(Some(Located {
            folder: path.to_path_buf(),
            files: here,
            below: None,
        }));
    }
    let mut found: Vec<(String, PathBuf, Vec<PathBuf>)> = std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .take(1000)
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .map(|(name, dir)| {
                    let files = points_in(&dir);
                    (name, dir, files)
                })
                .filter(|(_, _, files)| !files.is_empty())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    match found.len() {
        0 => Ok(None),
        1 => {
            let (name, folder, files) = found.remove(0);
            Ok(Some(Located {
                folder,
                files,
                below: Some(name),
            }))
        }
        _ => Err(ReproductionError::SeveralBundles {
            path: path.to_path_buf(),
            folders: found
                .into_iter()
                .map(|(name, _, _)| crate::text::untrusted(&name, 80).into_owned())
                .collect(),
        }),
    }
}

/// The points files `path` names ([`locate`]); empty when there is none or several
/// subfolders have some.
#[must_use]
pub fn points_files(path: &Path) -> Vec<PathBuf> {
    locate(path)
        .ok()
        .flatten()
        .map(|l| l.files)
        .unwrap_or_default()
}

/// Reads the bundle at `path` (a folder or one points file); `shown` is how the user named
/// it, `params` the limits to judge it with (the new campaign's).
pub fn from_bundle(
    path: &Path,
    shown: &str,
    params: &VerdictParams,
) -> Result<Evidence, ReproductionError> {
    let Some(Located {
        folder,
        files,
        below,
    }) = locate(path)?
    else {
        return Err(ReproductionError::NotEvidence {
            path: path.to_path_buf(),
        });
    };
    let mut side = SideTables::read(&folder)?;
    let mut series = Vec::new();
    let mut notes = Vec::new();
    let mut read = Vec::new();
    let mut ignored = Vec::new();
    let mut kernels: Vec<KernelIdentity> = Vec::new();
    for file in &files {
        read.push(name_of(file));
        let experiment = Experiment::read(file, &mut side)?;
        notes.extend(experiment.failures.iter().map(|f| f.note(&experiment.stem)));
        kernels.extend(experiment.kernels(&mut side)?);
        let comparison_name = format!("{}{COMPARISON_SUFFIX}", experiment.stem);
        let comparison = folder.join(&comparison_name);
        let published = if comparison.is_file() {
            Some(Table::read(&comparison)?)
        } else {
            None
        };
        let mut used_comparison = false;
        // An aba export publishes its declared comparisons beside the baseline's.
        let declared = published
            .as_ref()
            .map(|t| experiment.declared_pairs(t))
            .unwrap_or_default();
        for (i, metric) in experiment.metrics.iter().enumerate() {
            match experiment.series(i, params, if i == 0 { &declared } else { &[] })? {
                Ok(mut s) => {
                    if i == 0
                        && let Some(table) = &published
                    {
                        s.published = published_changes(table, &s)?;
                        used_comparison |= !s.published.is_empty();
                    }
                    series.push(s);
                }
                Err(why) => notes.push(format!("{}: {metric} {why}", experiment.stem)),
            }
        }
        if used_comparison {
            read.push(comparison_name);
        } else if published.is_some() {
            ignored.push(IgnoredFile {
                file: comparison_name,
                reason: "no column gives a candidate's change against the baseline \
                         (`<candidate>_vs_<baseline>_midpoint_pct`, `<candidate>_vs_<baseline>_pct` \
                         or `<candidate>_vs_midpoint_pct`)"
                    .to_owned(),
            });
        }
    }
    read.extend(side.used());
    ignored.extend(side.ignored());
    if path.is_dir() {
        ignored.extend(others(&folder, &read, &ignored));
    }
    // Found one level down: names are relative to the folder named, and what else the root
    // holds is listed too.
    if let Some(sub) = &below {
        let prefixed = |name: &mut String| *name = format!("{sub}/{name}");
        read.iter_mut().for_each(prefixed);
        ignored.iter_mut().for_each(|i| prefixed(&mut i.file));
        let root = others(path, std::slice::from_ref(sub), &[]);
        ignored.splice(0..0, root);
    }
    let name = match files.as_slice() {
        [one] => name_of(one).trim_end_matches(POINTS_SUFFIX).to_owned(),
        _ => name_of(&folder),
    };
    Ok(Evidence {
        info: EvidenceInfo {
            path: shown.to_owned(),
            name,
            source: Source::Published {
                files: read,
                ignored,
            },
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

/// Every entry of the folder `dir` that is neither read nor already set aside, with why it
/// is not used, in name order. A folder with many entries is listed up to [`LISTED`].
fn others(dir: &Path, read: &[String], ignored: &[IgnoredFile]) -> Vec<IgnoredFile> {
    const LISTED: usize = 1000;
    let mut names: Vec<(String, bool)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .take(LISTED)
                .map(|e| {
                    let folder = e.file_type().is_ok_and(|t| t.is_dir());
                    (e.file_name().to_string_lossy().into_owned(), folder)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .filter(|(n, _)| !read.contains(n) && !ignored.iter().any(|i| &i.file == n))
        .map(|(name, folder)| IgnoredFile {
            reason: if folder {
                "a folder: a bundle's tables are read from one folder".to_owned()
            } else if name.ends_with(COMPARISON_SUFFIX) {
                "no points file of its experiment beside it".to_owned()
            } else {
                "not a table aba reads as a reference".to_owned()
            },
            file: crate::reproduction::evidence::foreign_label(&name),
        })
        .collect()
}

/// Longest metric name a bundle may use (aba's own are at most 64 characters).
const METRIC_NAME_LIMIT: usize = 256;

/// A point whose run recorded semantic failures (the workload's own checks failed): its
/// values are not averaged in with the others; it is left out and said so.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Failure {
    point: String,
    count: usize,
    /// `exact-cac1-points.tsv:3` or `run-audit.tsv:4`.
    at: String,
}

impl Failure {
    fn note(&self, stem: &str) -> String {
        format!(
            "{stem}: point {} records {} semantic failure{} ({}): it is left out of the \
             analysis",
            self.point,
            self.count,
            if self.count == 1 { "" } else { "s" },
            self.at
        )
    }
}

/// One points file.
struct Experiment {
    stem: String,
    table: Table,
    /// Metric names, in column order.
    metrics: Vec<String>,
    /// `values_<prefix>` columns by prefix (first index).
    values_prefixes: std::collections::HashMap<String, usize>,
    /// Row indices in boot order.
    order: Vec<usize>,
    /// The kernel of the first boot: the baseline, whatever is left out.
    baseline: String,
    /// Points left out for their semantic failures.
    failures: Vec<Failure>,
    /// What `run-audit.tsv` says each point booted, by row index.
    releases: Vec<Option<String>>,
}

impl Experiment {
    fn read(path: &Path, side: &mut SideTables) -> Result<Experiment, ReproductionError> {
        let table = Table::read(path)?;
        let metrics: Vec<String> = table
            .header
            .iter()
            .filter_map(|h| h.strip_prefix("mean_"))
            .map(str::to_owned)
            .collect();
        if metrics.is_empty() {
            return Err(table.error(1, None, "no `mean_<metric>` column".to_owned()));
        }
        // A metric's samples column is looked up by each of its `_`-prefixes: bounded names
        // keep that linear in the file.
        if let Some(long) = metrics
            .iter()
            .find(|m| m.chars().count() > METRIC_NAME_LIMIT)
        {
            return Err(table.error(
                1,
                None,
                format!(
                    "column `mean_{}` names a metric of {} characters; at most \
                     {METRIC_NAME_LIMIT} are read",
                    crate::text::cut(long, 48),
                    long.chars().count()
                ),
            ));
        }
        let mut values_prefixes = std::collections::HashMap::new();
        for (i, name) in table.header.iter().enumerate() {
            if let Some(prefix) = name.strip_prefix("values_") {
                values_prefixes.entry(prefix.to_owned()).or_insert(i);
            }
        }
        let order_col = table.required("order")?;
        let (point, role) = (table.required("point")?, table.required("role")?);
        table.required("n")?;
        let mut keyed = Vec::new();
        for (i, (line, cells)) in table.rows.iter().enumerate() {
            let order: usize = cells[order_col].parse().map_err(|_| {
                table.error(
                    *line,
                    Some(order_col),
                    format!(
                        "`order` is `{}`, not a boot order",
                        crate::text::untrusted(&cells[order_col], 40)
                    ),
                )
            })?;
            keyed.push((order, i));
        }
        keyed.sort_unstable();
        let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
        let Some(&first) = order.first() else {
            return Err(table.error(1, None, "no points".to_owned()));
        };
        let stem = name_of(path).trim_end_matches(POINTS_SUFFIX).to_owned();
        let own = table.column("semantic_failures");
        let mut failures = Vec::new();
        let mut releases = vec![None; table.rows.len()];
        for &row in &order {
            let label = table.label(row, point);
            let audit = side
                .audit(&stem, table.cell(row, point))?
                .unwrap_or_default();
            releases[row] = audit.release;
            let here = match own {
                Some(c) => Some((
                    table.count(row, c)?,
                    format!("{}:{}", name_of(path), table.rows[row].0),
                )),
                None => None,
            };
            if let Some((count, at)) = [here, audit.semantic_failures]
                .into_iter()
                .flatten()
                .find(|(n, _)| *n > 0)
            {
                failures.push(Failure {
                    point: label,
                    count,
                    at,
                });
            }
        }
        Ok(Experiment {
            baseline: table.label(first, role),
            stem,
            order,
            metrics,
            values_prefixes,
            failures,
            releases,
            table,
        })
    }

    fn cell(&self, row: usize, column: usize) -> &str {
        self.table.cell(row, column)
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

    /// The kernels of this experiment in order of first boot: the commit its points file
    /// publishes, the releases `run-audit.tsv` says its points booted, and what
    /// `source-identity.tsv` says of it, each found by this experiment's name.
    fn kernels(&self, side: &mut SideTables) -> Result<Vec<KernelIdentity>, ReproductionError> {
        let role = self.table.required("role")?;
        let commit = self.table.column("commit");
        let mut out: Vec<(String, KernelIdentity)> = Vec::new();
        for &row in &self.order {
            let label = self.table.label(row, role);
            let build = commit
                .map(|c| self.table.label(row, c))
                .filter(|c| !c.is_empty())
                .map(BuildId::GitCommit);
            let release = self.releases[row].clone();
            let slot = match out.iter().position(|(raw, _)| raw == self.cell(row, role)) {
                Some(i) => &mut out[i].1,
                None => {
                    out.push((
                        self.cell(row, role).to_owned(),
                        KernelIdentity {
                            label,
                            experiment: Some(self.stem.clone()),
                            releases: Vec::new(),
                            builds: Vec::new(),
                            preemption: Vec::new(),
                            compilers: Vec::new(),
                            versions: Vec::new(),
                            cmdline: Vec::new(),
                        },
                    ));
                    &mut out.last_mut().expect("invariant: just pushed").1
                }
            };
            if let Some(b) = build
                && !slot.builds.contains(&b)
            {
                slot.builds.push(b);
            }
            slot.releases = distinct(slot.releases.drain(..).chain(release));
        }
        for (raw, k) in &mut out {
            if let Some(facts) = side.identity(&self.stem, raw) {
                k.releases = distinct(k.releases.drain(..).chain(facts.release));
                for b in facts.builds {
                    if !k.builds.contains(&b) {
                        k.builds.push(b);
                    }
                }
                k.preemption = facts.preemption.into_iter().collect();
                k.compilers = facts.compiler.into_iter().collect();
            }
        }
        Ok(out.into_iter().map(|(_, k)| k).collect())
    }

    /// Metric `i` as a series, analysed with `params`; `Err` with why it is not one.
    /// The comparisons a comparison file publishes besides those against the baseline:
    /// `<candidate>_vs_<kernel>_pct` columns where both are roles of this experiment and the
    /// kernel is not its baseline (an aba export's declared comparisons). At most
    /// [`crate::recipe::limits::COMPARISONS`], as a recipe may declare: a stranger's file
    /// with more columns does not buy more analyses.
    fn declared_pairs(&self, table: &Table) -> Vec<(String, String)> {
        let Some(role) = self.table.column("role") else {
            return Vec::new();
        };
        let roles: std::collections::HashSet<String> = self
            .order
            .iter()
            .map(|&row| self.table.label(row, role))
            .collect();
        let mut pairs: Vec<(String, String)> = Vec::new();
        for name in &table.header {
            if pairs.len() == crate::recipe::limits::COMPARISONS {
                break;
            }
            let Some(stem) = name.strip_suffix("_pct") else {
                continue;
            };
            if stem.ends_with("_midpoint") {
                continue;
            }
            for (at, _) in stem.match_indices("_vs_") {
                let (candidate, against) = (&stem[..at], &stem[at + 4..]);
                let pair = (candidate.to_owned(), against.to_owned());
                if against != self.baseline
                    && candidate != against
                    && roles.contains(candidate)
                    && roles.contains(against)
                    && !pairs.contains(&pair)
                {
                    pairs.push(pair);
                }
            }
        }
        pairs
    }

    fn series(
        &self,
        i: usize,
        params: &VerdictParams,
        declared: &[(String, String)],
    ) -> Result<Result<EvidenceSeries, &'static str>, ReproductionError> {
        let Some(values_col) = self.values_column(i) else {
            return Ok(Err(
                "is published as point means only; aba needs its samples to judge it",
            ));
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
            let label = t.label(row, point);
            let values = self
                .cell(row, values_col)
                .split_whitespace()
                .map(|v| t.number(line, values_col, v))
                .collect::<Result<Vec<f64>, _>>()?;
            let Some(all) = summarize(&values) else {
                return Err(t.error(
                    line,
                    Some(values_col),
                    format!("point {label} has no values"),
                ));
            };
            let count = t.count(row, n)?;
            if count != values.len() {
                return Err(t.error(
                    line,
                    Some(n),
                    format!("point {label} has n = {count} but {} values", values.len()),
                ));
            }
            let published = self.cell(row, mean);
            let value = t.number(line, mean, published)?;
            if !agrees(all.mean, value, published) {
                return Err(t.error(
                    line,
                    Some(mean),
                    format!(
                        "point {label} publishes {mean_col} {published}, but its values \
                         average {}",
                        all.mean
                    ),
                ));
            }
            if self.failures.iter().any(|f| f.point == label) {
                continue;
            }
            points.push(SeriesPoint {
                order: order + 1,
                kernel: t.label(row, role),
                label,
                drop_first: summarize(&values[1..]),
                values,
                warmups: Vec::new(),
                all,
            });
        }
        if !points.iter().any(|p| p.kernel == self.baseline) {
            return Ok(Err(
                "is not compared: every point of its baseline records semantic failures",
            ));
        }
        let candidates = distinct(
            points
                .iter()
                .filter(|p| p.kernel != self.baseline)
                .map(|p| p.kernel.clone()),
        );
        let analyses = analyze_series(
            &points,
            &SeriesContext {
                baseline: &self.baseline,
                candidates: &candidates,
                declared,
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
        // An aba export names the workload and case its experiment measured (every row the
        // same), so that the series matches the campaign's by name.
        let named = |column: &str| t.column(column).map(|c| t.label(self.order[0], c));
        let workload = named("workload").unwrap_or_else(|| self.stem.clone());
        let case = named("case").unwrap_or_default();
        Ok(Ok(EvidenceSeries {
            label: series_label(&workload, &case, metric),
            workload,
            case,
            metric: metric.clone(),
            unit: None,
            better: None,
            role: None,
            aux: false,
            experiment: Some(self.stem.clone()),
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
        let mut names = vec![
            format!("{}_vs_{}_midpoint_pct", c.candidate, c.baseline),
            format!("{}_vs_{}_pct", c.candidate, c.baseline),
        ];
        // "Against the midpoint" is the baseline's: never a declared comparison's.
        if !c.declared {
            names.push(format!("{}_vs_midpoint_pct", c.candidate));
        }
        let Some((column, i)) = names
            .into_iter()
            .find_map(|n| table.column(&n).map(|i| (n, i)))
        else {
            continue;
        };
        let text = row[i].clone();
        let value = table.number(*line, i, &text)?;
        out.push(PublishedChange {
            candidate: c.candidate.clone(),
            baseline: c.baseline.clone(),
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
        reproduction::{
            error::ReproductionError,
            evidence::{BuildId, Source},
        },
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
        let Source::Published { files, ignored } = &evidence.info.source else {
            panic!("{:?}", evidence.info.source)
        };
        assert_eq!(
            files,
            &["exact-cac1-points.tsv", "exact-cac1-comparison.tsv"]
        );
        assert_eq!(ignored.len(), 1, "{ignored:?}");
        assert_eq!(
            (ignored[0].file.as_str(), ignored[0].reason.as_str()),
            ("README.md", "not a table aba reads as a reference")
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
        assert_eq!(kernels[0].builds, [BuildId::GitCommit("45199f7".into())]);
        assert_eq!(kernels[0].experiment.as_deref(), Some("exact-cac1"));
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

    /// A bundle's labels (a point, a kernel's role, a commit) of 5000 characters with an
    /// escape sequence are read escaped and cut like every other untrusted string, so no
    /// report, terminal or TSV gets them whole.
    #[test]
    fn a_bundles_labels_are_escaped_and_cut_when_read() {
        let long = |c: char| format!("\u{1b}]0;x\u{7}{}", c.to_string().repeat(5000));
        let points = POINTS
            .replace("parent-a", &long('p'))
            .replace("\tchild\tchild\t", &format!("\tchild\t{}\t", long('k')))
            .replace("cac1db8", &long('c'));
        let dir = bundle(&[("x-points.tsv", &points)]);
        let evidence = from_bundle(dir.path(), "b", &VerdictParams::default()).expect("a bundle");
        let points = &evidence.series[0].result.points;
        let kernels = &evidence.info.environment.kernels;
        let BuildId::GitCommit(commit) = &kernels[1].builds[0] else {
            panic!("{:?}", kernels[1].builds)
        };
        let labels = [
            &points[0].label,
            &points[1].kernel,
            &kernels[1].label,
            commit,
        ];
        for label in labels {
            assert!(label.chars().count() < 450, "{} characters", label.len());
            assert!(label.starts_with("\\u{1b}]0;x\\u{7}"), "{label}");
            assert!(label.ends_with(" characters)"), "{label}");
        }
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
                .ends_with("x-points.tsv:3:6: point child publishes mean_iteration_ns_per_page 53.6, but its values average 53.53333333333333"),
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

    /// Issue 29 item 5: two experiments giving one role name to different builds stay apart;
    /// releases, preemption and semantic failures come from the side tables; a comparison
    /// file none of whose columns is used is listed as not used, with why.
    #[test]
    fn experiments_stay_apart_and_every_file_is_read_or_set_aside_with_its_reason() {
        let points = |commit_base: &str, failures: &str| {
            format!(
                "order\tpoint\trole\tcommit\tn\tmean_ns\tvalues\tsemantic_failures\n\
                 1\tbase-a\tbase\t{commit_base}\t3\t10\t9 10 11\t0\n\
                 2\tcand\tcand\tc0ffee1\t3\t12\t11 12 13\t{failures}\n\
                 3\tbase-b\tbase\t{commit_base}\t3\t10\t10 10 10\t0\n"
            )
        };
        let audit = "experiment\tpoint\tkernel_release\tboot_id\tsemantic_failures\n\
                     one\tbase-a\t6.1-base\tb1\t0\none\tcand\t6.1-cand\tb2\t0\n\
                     one\tbase-b\t6.1-base\tb3\t0\ntwo\tbase-a\t7.0-base\tb4\t0\n\
                     two\tcand\t7.0-cand\tb5\t4\n";
        let identity = "experiment\tpoint\tcanonical_config_sha256\tkernel_release\tcompiler\tpreemption\n\
                        one\tbase\tfeed\t6.1-base\tgcc-15\tdynamic/none\n";
        let dir = bundle(&[
            ("one-points.tsv", &points("aaaaaaa", "0")),
            ("two-points.tsv", &points("bbbbbbb", "0")),
            (
                "two-comparison.tsv",
                "analysis\tcand_vs_other_pct\nall\t1.0\n",
            ),
            ("run-audit.tsv", audit),
            ("source-identity.tsv", identity),
            ("two-components.tsv", "a\n"),
        ]);
        std::fs::create_dir(dir.path().join("patches")).expect("mkdir");
        let evidence = from_bundle(dir.path(), "b", &VerdictParams::default()).expect("bundle");
        let kernels = &evidence.info.environment.kernels;
        let base: Vec<(Option<&str>, &[BuildId], &[String])> = kernels
            .iter()
            .filter(|k| k.label == "base")
            .map(|k| {
                (
                    k.experiment.as_deref(),
                    k.builds.as_slice(),
                    k.releases.as_slice(),
                )
            })
            .collect();
        assert_eq!(
            base,
            [
                (
                    Some("one"),
                    &[
                        BuildId::GitCommit("aaaaaaa".into()),
                        BuildId::CanonicalConfigSha256("feed".into())
                    ][..],
                    &["6.1-base".to_owned()][..]
                ),
                (
                    Some("two"),
                    &[BuildId::GitCommit("bbbbbbb".into())][..],
                    &["7.0-base".to_owned()][..]
                ),
            ]
        );
        assert_eq!(kernels[0].preemption, ["dynamic/none"]);
        // `two`'s candidate has semantic failures (run-audit.tsv): left out and said so.
        assert_eq!(
            evidence.info.notes,
            [
                "two: point cand records 4 semantic failures (run-audit.tsv:6): it is left out of \
              the analysis"
            ]
        );
        let two = evidence
            .series
            .iter()
            .find(|s| s.workload == "two")
            .expect("two");
        assert!(two.result.comparisons.is_empty());
        assert_eq!(two.result.points.len(), 2);
        let Source::Published { files, ignored } = &evidence.info.source else {
            panic!("{:?}", evidence.info.source)
        };
        assert_eq!(
            files,
            &[
                "one-points.tsv",
                "two-points.tsv",
                "run-audit.tsv",
                "source-identity.tsv"
            ]
        );
        let ignored: Vec<(&str, &str)> = ignored
            .iter()
            .map(|i| (i.file.as_str(), i.reason.split(' ').next().unwrap_or("")))
            .collect();
        assert_eq!(
            ignored,
            [
                ("two-comparison.tsv", "no"),
                ("patches", "a"),
                ("two-components.tsv", "not")
            ]
        );
        // The points file's own column counts too, and a count that is not one is an error
        // naming its line and column.
        let dir = bundle(&[("one-points.tsv", &points("aaaaaaa", "x"))]);
        let err = from_bundle(dir.path(), "b", &VerdictParams::default()).expect_err("refused");
        assert!(
            err.to_string()
                .ends_with("one-points.tsv:3:8: `semantic_failures` is `x`, not a count"),
            "{err}"
        );
        let dir = bundle(&[("one-points.tsv", &points("aaaaaaa", "1"))]);
        let evidence = from_bundle(dir.path(), "b", &VerdictParams::default()).expect("bundle");
        assert!(
            evidence.info.notes[0].contains("(one-points.tsv:3)"),
            "{:?}",
            evidence.info.notes
        );
    }

    /// Issue 34 item 1: a bundle's root holds its tables one folder down; they are read
    /// there, named from the root, and what else the root holds is listed as not used. Two
    /// such folders are never merged: the error names them.
    #[test]
    fn a_bundle_root_is_searched_one_level_down() {
        let dir = bundle(&[("README.md", "root")]);
        let bare = dir.path().join("bare-metal");
        std::fs::create_dir(&bare).expect("mkdir");
        std::fs::create_dir(dir.path().join("reproducer")).expect("mkdir");
        std::fs::write(bare.join("exact-cac1-points.tsv"), POINTS).expect("write");
        std::fs::write(bare.join("notes.txt"), "x").expect("write");
        let evidence = from_bundle(dir.path(), "root", &VerdictParams::default()).expect("found");
        assert_eq!(evidence.series.len(), 1);
        let Source::Published { files, ignored } = &evidence.info.source else {
            panic!("{:?}", evidence.info.source)
        };
        assert_eq!(files, &["bare-metal/exact-cac1-points.tsv"]);
        let ignored: Vec<&str> = ignored.iter().map(|i| i.file.as_str()).collect();
        assert_eq!(ignored, ["README.md", "reproducer", "bare-metal/notes.txt"]);
        let other = dir.path().join("vm");
        std::fs::create_dir(&other).expect("mkdir");
        std::fs::write(other.join("x-points.tsv"), POINTS).expect("write");
        let err = from_bundle(dir.path(), "root", &VerdictParams::default()).expect_err("two");
        assert!(
            matches!(&err, ReproductionError::SeveralBundles { folders, .. } if folders == &["bare-metal", "vm"]),
            "{err}"
        );
        assert!(
            crate::error::compare_hint(&err)
                .expect("hint")
                .starts_with("name one of them: ")
        );
    }
}
