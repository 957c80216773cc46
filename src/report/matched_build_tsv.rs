//! `matched-build.tsv`: every kernel's build against the baseline's, one row per kernel and
//! field (`analysis::matched_build`), in the results directory and in `aba export`'s
//! published layout alike (this one writer serves both). Written only when some kernel could
//! be compared.

use serde::Serialize;

use crate::{
    analysis::matched_build::{MatchedBuilds, Value},
    report::tsv::to_tsv,
};

/// The file's name.
pub const FILE: &str = "matched-build.tsv";

/// The columns.
pub const HEADER: [&str; 7] = [
    "baseline",
    "kernel",
    "field",
    "baseline_value",
    "kernel_value",
    "status",
    "read_from",
];

#[derive(Serialize)]
struct Row {
    baseline: String,
    kernel: String,
    field: &'static str,
    baseline_value: String,
    kernel_value: String,
    status: String,
    read_from: String,
}

/// A cell from a value of the journal's (anyone's text): on one line, escaped.
fn cell(value: Option<&Value>) -> String {
    value.map_or_else(String::new, |v| crate::text::one_line(&v.text).into_owned())
}

/// Where the two values were read: once when the same.
fn read_from(baseline: Option<&Value>, kernel: Option<&Value>) -> String {
    match (baseline.map(|v| v.from), kernel.map(|v| v.from)) {
        (Some(b), Some(k)) if b == k => b.to_owned(),
        (b, k) => format!("{} | {}", b.unwrap_or("-"), k.unwrap_or("-")),
    }
}

/// The file, or `None` when no kernel was compared.
#[must_use]
pub fn render(matched: &MatchedBuilds) -> Option<Vec<u8>> {
    if matched.rows.is_empty() {
        return None;
    }
    let rows: Vec<Row> = matched
        .rows
        .iter()
        .map(|r| Row {
            baseline: matched.baseline.clone(),
            kernel: r.kernel.clone(),
            field: r.field,
            baseline_value: cell(r.baseline.as_ref()),
            kernel_value: cell(r.value.as_ref()),
            status: r.status.to_string(),
            read_from: read_from(r.baseline.as_ref(), r.value.as_ref()),
        })
        .collect();
    Some(to_tsv(&HEADER, &rows))
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::analysis::matched_build::{MatchRow, MatchedBuilds, Status, Value};

    #[test]
    fn each_row_names_both_values_the_status_and_where_each_was_read() {
        assert_eq!(render(&MatchedBuilds::default()), None);
        let value = |text: &str, from| {
            Some(Value {
                text: text.into(),
                from,
            })
        };
        let matched = MatchedBuilds {
            baseline: "original".into(),
            rows: vec![
                MatchRow {
                    kernel: "patched".into(),
                    field: "compiler",
                    baseline: value("gcc 12", "the build's .config"),
                    value: value("gcc\t13\n", "this host's PATH"),
                    status: Status::Differs,
                },
                MatchRow {
                    kernel: "patched".into(),
                    field: "patches",
                    baseline: value("none", "the builds file"),
                    value: value("p.patch=aa", "the builds file"),
                    status: Status::Intended("the patch"),
                },
            ],
        };
        let text = String::from_utf8(render(&matched).expect("rows")).expect("utf-8");
        assert_eq!(
            text,
            "baseline\tkernel\tfield\tbaseline_value\tkernel_value\tstatus\tread_from\n\
             original\tpatched\tcompiler\tgcc 12\tgcc\\t13\\n\tDIFFERS\tthe build's .config | this host's PATH\n\
             original\tpatched\tpatches\tnone\tp.patch=aa\tDIFFERS (intended: the patch)\tthe builds file\n"
        );
    }
}
