//! The probes' evidence: `probes.tsv` (one row per value a probe gave at a point) and the
//! probes block of `report.txt`, shown beside the timed results and never in a verdict.

use serde::Serialize;

use crate::{
    analysis::{Analysis, probes::ProbeResult},
    point_name::point_name,
    report::{
        layout::{WIDTH, wrap},
        number,
        tsv::to_tsv,
    },
};

/// The file's name in a results directory.
pub const FILE: &str = "probes.tsv";

/// The columns.
pub const HEADER: [&str; 6] = ["point", "kernel", "probe", "value_name", "value", "unit"];

#[derive(Serialize)]
struct Row<'a> {
    point: &'a str,
    kernel: &'a str,
    probe: &'a str,
    value_name: &'a str,
    value: String,
    unit: &'a str,
}

/// The file, or `None` when no probe ran at a done point.
#[must_use]
pub fn render_tsv(analysis: &Analysis) -> Option<Vec<u8>> {
    if analysis.probes.is_empty() {
        return None;
    }
    let rows: Vec<Row<'_>> = analysis
        .probes
        .iter()
        .flat_map(|p| {
            p.values.iter().map(move |v| Row {
                point: &p.point,
                kernel: &p.kernel,
                probe: &p.probe,
                value_name: &v.name,
                value: number::tsv(Some(v.value)),
                unit: &v.unit,
            })
        })
        .collect();
    Some(to_tsv(&HEADER, &rows))
}

/// The probes block of `report.txt`: per probe, its values at each point, the files kept
/// (and what was cut), and what it did not deliver; empty when no probe ran.
#[must_use]
pub fn prose(analysis: &Analysis) -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in &analysis.probes {
        if !names.contains(&p.probe.as_str()) {
            names.push(&p.probe);
        }
    }
    let mut out = String::new();
    for name in names {
        let runs: Vec<&ProbeResult> = analysis.probes.iter().filter(|p| p.probe == name).collect();
        let when = runs.first().map_or("after", |p| p.when);
        out.push_str(&wrap(&format!("{name} ({when} the samples):"), WIDTH, ""));
        for p in &runs {
            let at = point_name(&p.point, &p.kernel);
            let values = if p.values.is_empty() {
                "no values".to_owned()
            } else {
                p.values
                    .iter()
                    .map(|v| {
                        let unit = if v.unit.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", v.unit)
                        };
                        format!("{} {}{unit}", v.name, shown(v.value))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push_str(&wrap(
                &format!("{at} (kernel {}): {values}; {}.", p.kernel, p.outcome),
                WIDTH,
                "  ",
            ));
            for f in p.files.iter().filter(|f| f.dropped_bytes > 0) {
                out.push_str(&wrap(
                    &format!(
                        "{}: CUT at max_output, kept the first {} of {} bytes.",
                        f.path,
                        f.bytes,
                        f.bytes + f.dropped_bytes
                    ),
                    WIDTH,
                    "    ",
                ));
            }
            for problem in &p.problems {
                if !problem.contains("was cut at max_output") {
                    out.push_str(&wrap(&format!("note: {problem}"), WIDTH, "    "));
                }
            }
        }
        out.push_str(&wrap(
            &format!("Output kept in probes/<point>/{name}.out and .err."),
            WIDTH,
            "  ",
        ));
    }
    out
}

/// A count as the integer it is (`4096`, `0`), any other value to three significant digits.
fn shown(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        number::fixed(value, 0)
    } else {
        number::significant(value)
    }
}
