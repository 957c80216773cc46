//! Golden test: every published figure in `tests/fixtures/golden/expected.tsv` (424 rows) is
//! recomputed from `points.tsv` through the public `aba::stats` API only, as described in
//! `tests/fixtures/golden/README.md` ("How a Rust test should use this").
//!
//! The fixtures are a vendored, byte-identical copy of `../shared/golden`; when that directory
//! exists next to the repository the copy is checked against it.

use std::{
    collections::HashMap,
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
};

use aba::stats::{
    BootPoint, FsnotifyKind, FsnotifyParams, SdDenominator, Summary, change_pct,
    classify_fsnotify_v1, diff, kernel_mean, kernel_summary, point_change_pct, recovery_pct,
    summarize_with,
};

/// Number of published figures in `expected.tsv`.
const EXPECTED_ROWS: usize = 424;

const FIXTURE_FILES: [&str; 4] = ["README.md", "cases.tsv", "points.tsv", "expected.tsv"];

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden")
}

/// One TSV row as column name → cell.
type Row = HashMap<String, String>;

/// Parses a header-first TSV without quoting (the golden format has no tabs inside cells).
fn read_tsv(name: &str) -> Vec<Row> {
    let path = fixture_dir().join(name);
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split('\t').collect();
    lines
        .filter(|line| !line.is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), header.len(), "{name}: ragged line {line:?}");
            header
                .iter()
                .zip(cells)
                .map(|(k, v)| ((*k).to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

fn cell<'a>(row: &'a Row, column: &str) -> &'a str {
    row.get(column)
        .unwrap_or_else(|| panic!("missing column {column}"))
}

/// The published text of a number formatted with `decimals`, with `-0.000…` read as `0.000…`
/// (a printed negative zero counts as zero, golden README).
fn format_published(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_owned(),
        _ => text,
    }
}

/// One case under one analysis, built from `points.tsv`.
struct Case {
    raw: bool,
    points: Vec<BootPoint>,
    /// Summaries of the raw values (raw cases only), by point label.
    summaries: HashMap<String, Summary>,
    /// Published point CVs (`input_cv_pct`), aligned with `points`.
    cvs: Vec<Option<f64>>,
}

fn parse_f64(text: &str, what: &str) -> Result<f64, String> {
    text.parse()
        .map_err(|e| format!("{what}: cannot parse {text:?}: {e}"))
}

fn build_case(case_row: &Row, rows: &[&Row], drop_first: bool) -> Result<Case, String> {
    let raw = match cell(case_row, "input_kind") {
        "raw" => true,
        "rounded" => false,
        other => return Err(format!("unknown input_kind {other}")),
    };
    let denominator = match cell(case_row, "sd_denominator") {
        "n-1" => SdDenominator::NMinus1,
        "n" => SdDenominator::N,
        other => return Err(format!("unknown sd_denominator {other}")),
    };
    let mut rows = rows.to_vec();
    rows.sort_by_key(|r| cell(r, "order").parse::<usize>().unwrap_or(usize::MAX));
    let mut case = Case {
        raw,
        points: Vec::new(),
        summaries: HashMap::new(),
        cvs: Vec::new(),
    };
    for row in rows {
        let label = cell(row, "point");
        // Some rounded cases (fsnotify focused) leave `kernel` empty: each point is then its
        // own kernel, so kernel-level quantities name the point label.
        let kernel = match cell(row, "kernel") {
            "" => label,
            kernel => kernel,
        };
        let point = if raw {
            let values = cell(row, "values")
                .split(' ')
                .map(|v| parse_f64(v, label))
                .collect::<Result<Vec<f64>, String>>()?;
            let values = if drop_first {
                &values[1..]
            } else {
                &values[..]
            };
            let summary =
                summarize_with(values, denominator).ok_or_else(|| format!("{label}: no values"))?;
            let point = BootPoint::from_summary(label, kernel, &summary);
            case.summaries.insert(label.to_owned(), summary);
            point
        } else {
            let column = if drop_first {
                "input_value_drop_first"
            } else {
                "input_value"
            };
            BootPoint {
                label: label.to_owned(),
                kernel: kernel.to_owned(),
                mean: parse_f64(cell(row, column), &format!("{label} {column}"))?,
                // A published rounded mean: n and SD are unknown.
                n: cell(row, "n").parse().unwrap_or(0),
                sd: None,
            }
        };
        case.points.push(point);
        case.cvs.push(match cell(row, "input_cv_pct") {
            "" => None,
            cv => Some(parse_f64(cv, label)?),
        });
    }
    Ok(case)
}

/// The value of `quantity(args)` for a numeric row.
fn evaluate(case: &Case, quantity: &str, args: &[&str]) -> Result<f64, String> {
    let points = &case.points;
    let summary = |label: &str| {
        case.summaries
            .get(label)
            .ok_or_else(|| format!("no raw values for point {label}"))
    };
    let need = |n: usize| {
        (args.len() == n)
            .then_some(())
            .ok_or_else(|| format!("{quantity} takes {n} args, got {}", args.len()))
    };
    let missing = || format!("{quantity}({}) is undefined", args.join(","));
    match quantity {
        "n" => {
            need(1)?;
            Ok(summary(args[0])?.n as f64)
        }
        "mean" => {
            need(1)?;
            points
                .iter()
                .find(|p| p.label == args[0])
                .map(|p| p.mean)
                .ok_or_else(missing)
        }
        "sd" => {
            need(1)?;
            summary(args[0])?.sd.ok_or_else(missing)
        }
        "cv_pct" => {
            need(1)?;
            summary(args[0])?.cv_pct.ok_or_else(missing)
        }
        "kernel_mean" => {
            need(1)?;
            kernel_mean(points, args[0]).ok_or_else(missing)
        }
        "change_pct" => {
            need(2)?;
            change_pct(points, args[0], args[1]).ok_or_else(missing)
        }
        "diff" => {
            need(2)?;
            diff(points, args[0], args[1]).ok_or_else(missing)
        }
        "drift_pct" => {
            need(1)?;
            kernel_summary(points, args[0])
                .and_then(|k| k.drift_pct)
                .ok_or_else(missing)
        }
        "drift_abs_mid_pct" => {
            need(1)?;
            kernel_summary(points, args[0])
                .and_then(|k| k.drift_abs_mid_pct)
                .ok_or_else(missing)
        }
        "point_change_pct" => {
            need(2)?;
            point_change_pct(points, args[0], args[1]).ok_or_else(missing)
        }
        "recovery_pct" => {
            need(4)?;
            recovery_pct(points, args[0], args[1], args[2], args[3]).ok_or_else(missing)
        }
        other => Err(format!("unknown quantity {other}")),
    }
}

fn fsnotify_params(params: &HashMap<&str, &str>) -> Result<FsnotifyParams, String> {
    let number = |key: &str| {
        params
            .get(key)
            .ok_or_else(|| format!("missing param {key}"))
            .and_then(|v| parse_f64(v, key))
    };
    if params.get("scheme") != Some(&"fsnotify_v1") {
        return Err(format!("unknown scheme {:?}", params.get("scheme")));
    }
    Ok(FsnotifyParams {
        kind: match params.get("kind") {
            Some(&"absolute") => FsnotifyKind::Absolute,
            Some(&"paired") => FsnotifyKind::Paired,
            other => return Err(format!("unknown kind {other:?}")),
        },
        auxiliary: number("auxiliary")? != 0.0,
        signal_pct: number("signal_pct")?,
        max_drift_pct: number("max_drift_pct")?,
        max_cv_pct: number("max_cv_pct")?,
        material_pct: number("material_pct")?,
    })
}

/// Checks one expected row; `Err` describes the failure.
fn check(row: &Row, case: &Case) -> Result<(), String> {
    let quantity = cell(row, "quantity");
    let args: Vec<&str> = cell(row, "args").split(',').collect();
    let params: HashMap<&str, &str> = cell(row, "params")
        .split(';')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').ok_or_else(|| format!("bad param {p:?}")))
        .collect::<Result<_, _>>()?;
    let published = cell(row, "published");
    let relation = cell(row, "relation");

    if quantity == "classification" {
        if relation != "label" || args.len() != 2 {
            return Err(format!("bad classification row ({relation}, {args:?})"));
        }
        let params = fsnotify_params(&params)?;
        let label = classify_fsnotify_v1(&case.points, &case.cvs, args[0], args[1], &params);
        return (label == published)
            .then_some(())
            .ok_or_else(|| format!("computed {label}"));
    }

    let mut value = evaluate(case, quantity, &args)?;
    for (key, setting) in &params {
        match *key {
            "abs" if *setting == "1" => value = value.abs(),
            "scale" => value *= parse_f64(setting, "scale")?,
            _ => return Err(format!("unknown param {key}={setting}")),
        }
    }
    let expected = parse_f64(published, "published")?;
    let ok = match relation {
        "eq" => {
            let tolerance = parse_f64(cell(row, "tolerance"), "tolerance")?;
            let decimals: usize = cell(row, "decimals")
                .parse()
                .map_err(|e| format!("decimals: {e}"))?;
            let within = (value - expected).abs() <= tolerance;
            let text = format_published(value, decimals);
            if case.raw && text != published {
                return Err(format!("computed {value:.12} prints as {text}"));
            }
            within
        }
        "le" => value <= expected,
        "lt" => value < expected,
        other => return Err(format!("unknown relation {other}")),
    };
    ok.then_some(())
        .ok_or_else(|| format!("computed {value:.12} fails {relation}"))
}

#[test]
fn vendored_fixtures_match_shared_golden() {
    // The shared folder sits beside the repository, or beside the folder of its worktrees.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(shared) = manifest
        .ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("shared/golden"))
        .find(|dir| dir.is_dir())
    else {
        crate::support::skip::skip(
            "../shared/golden (the published figures the vendored copy was taken from) is absent, so the copy was not compared with it",
        );
        return;
    };
    for name in FIXTURE_FILES {
        let vendored = fs::read(fixture_dir().join(name)).expect("vendored fixture");
        let original = fs::read(shared.join(name)).expect("shared golden file");
        assert!(
            vendored == original,
            "tests/fixtures/golden/{name} differs from {}",
            shared.display()
        );
    }
}

#[test]
fn negative_zero_prints_as_zero() {
    assert_eq!(format_published(-0.0000001, 6), "0.000000");
    assert_eq!(format_published(-0.0000006, 6), "-0.000001");
    assert_eq!(format_published(15.0, 0), "15");
}

#[test]
fn golden_reproduces_all_published_figures() {
    let cases: HashMap<String, Row> = read_tsv("cases.tsv")
        .into_iter()
        .map(|r| (cell(&r, "case_id").to_owned(), r))
        .collect();
    let points = read_tsv("points.tsv");
    let expected = read_tsv("expected.tsv");

    let mut built: HashMap<(String, String), Result<Case, String>> = HashMap::new();
    let mut failures = Vec::new();
    for row in &expected {
        let case_id = cell(row, "case_id");
        let analysis = cell(row, "analysis");
        let case = built
            .entry((case_id.to_owned(), analysis.to_owned()))
            .or_insert_with(|| {
                let case_row = cases
                    .get(case_id)
                    .ok_or_else(|| format!("case {case_id} is not in cases.tsv"))?;
                let rows: Vec<&Row> = points
                    .iter()
                    .filter(|p| cell(p, "case_id") == case_id)
                    .collect();
                match analysis {
                    "all" => build_case(case_row, &rows, false),
                    "drop_first" => build_case(case_row, &rows, true),
                    other => Err(format!("unknown analysis {other}")),
                }
            });
        let outcome = case
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|c| check(row, c));
        if let Err(why) = outcome {
            failures.push(format!(
                "{case_id} [{analysis}] {}({}) published {}: {why}",
                cell(row, "quantity"),
                cell(row, "args"),
                cell(row, "published"),
            ));
        }
    }

    let mut report = String::new();
    for failure in &failures {
        writeln!(report, "  {failure}").expect("writing to a String");
    }
    println!(
        "golden: {} rows checked, {} failures",
        expected.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "golden failures:\n{report}");
    assert_eq!(expected.len(), EXPECTED_ROWS, "expected.tsv row count");
}
