//! The environment records of the done points, compared (issue 10 §5): which fingerprint facts
//! differ between boots of one kernel, or between two kernels beyond the recipe's per-kernel
//! parameters, and which comparisons each difference makes UNSTABLE.
//!
//! The records are read by [`crate::analysis::analyze`]; this module only compares them. A
//! done point without a readable record is named and simply not compared (a campaign of an
//! older aba, or a record someone removed): the report says so rather than guess.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{
    fingerprint::{Difference, PointFacts, differences, of_record},
    recipe::Recipe,
    results::journal::Facts,
};

/// One done point's fingerprint.
#[derive(Clone, Debug, Serialize)]
pub struct PointEnv {
    /// Point label.
    pub point: String,
    /// Kernel label.
    pub kernel: String,
    /// The record, relative to the results directory (`env/a-a-1.json`).
    pub file: String,
    /// Its fingerprint facts.
    pub facts: BTreeMap<String, String>,
}

/// What the environment records say.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EnvironmentCheck {
    /// Done points with a readable record, in boot order.
    pub points: Vec<PointEnv>,
    /// Done points whose record is missing or unreadable, with why. A campaign without any
    /// record (written before aba recorded environments, or converted from published data)
    /// lists none: there is nothing to compare, and the audit shows the records are absent.
    pub unchecked: Vec<String>,
    /// Every difference among the done points.
    pub differences: Vec<Difference>,
}

/// A done point: label, kernel, and the record its done attempt wrote.
#[derive(Clone, Copy, Debug)]
pub struct DonePoint<'a> {
    /// Point label.
    pub label: &'a str,
    /// Kernel label.
    pub kernel: &'a str,
    /// `env/<point>-<attempt>.json`.
    pub file: &'a str,
}

impl EnvironmentCheck {
    /// Compares the records of `done` (boot order); `records` holds each file's facts or why
    /// it could not be read.
    #[must_use]
    pub fn new(
        recipe: &Recipe,
        done: &[DonePoint<'_>],
        records: &BTreeMap<String, Result<Facts, String>>,
    ) -> EnvironmentCheck {
        let mut check = EnvironmentCheck::default();
        let mut read: Vec<(&DonePoint<'_>, &Facts)> = Vec::new();
        let any = done.iter().any(|p| records.contains_key(p.file));
        for point in done {
            match records.get(point.file) {
                Some(Ok(facts)) => read.push((point, facts)),
                Some(Err(why)) => check
                    .unchecked
                    .push(format!("{} ({}): {why}", point.label, point.file)),
                None if !any => {}
                None => check.unchecked.push(format!(
                    "{}: no environment record {}",
                    point.label, point.file
                )),
            }
        }
        let own: BTreeMap<&str, Vec<String>> = recipe
            .kernels
            .values()
            .map(|k| (k.label.as_str(), k.cmdline.clone()))
            .collect();
        let none = Vec::new();
        let facts: Vec<PointFacts<'_>> = read
            .iter()
            .map(|(p, f)| PointFacts {
                point: p.label,
                kernel: p.kernel,
                own_params: own.get(p.kernel).unwrap_or(&none),
                facts: f,
            })
            .collect();
        check.differences = differences(&facts);
        check.points = read
            .iter()
            .map(|(p, f)| PointEnv {
                point: p.label.to_owned(),
                kernel: p.kernel.to_owned(),
                file: p.file.to_owned(),
                facts: of_record(f),
            })
            .collect();
        check
    }

    /// The differences that make the comparison of `candidate` against `baseline` UNSTABLE,
    /// in words: those between boots of either, or between the two.
    #[must_use]
    pub fn affecting(&self, candidate: &str, baseline: &str) -> Vec<String> {
        self.differences
            .iter()
            .filter(|d| {
                d.kernels()
                    .iter()
                    .all(|k| *k == candidate || *k == baseline)
            })
            .map(|d| d.text_named(&|point| self.point_name(point)))
            .collect()
    }

    /// How a compared point reads ([`crate::point_name::point_name`]); a point without a
    /// record is shown as it is.
    #[must_use]
    pub fn point_name(&self, point: &str) -> String {
        self.points.iter().find(|p| p.point == point).map_or_else(
            || point.to_owned(),
            |p| crate::point_name::point_name(point, &p.kernel),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeMap, path::Path};

    use super::{DonePoint, EnvironmentCheck};
    use crate::{recipe::parse, results::journal::Facts};

    /// Done points from (label, kernel, record file).
    fn done_points<'a>(points: &[(&'a str, &'a str, &'a str)]) -> Vec<DonePoint<'a>> {
        points
            .iter()
            .map(|&(label, kernel, file)| DonePoint {
                label,
                kernel,
                file,
            })
            .collect()
    }

    const RECIPE: &str = r#"
version = 1
name = "t"
description = "unit"
sequence = ["a", "b", "a", "c"]
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
[kernels.c]
release = "6.1.0-c"
cmdline = "transparent_hugepage=never"
[[workload]]
name = "w"
run = "true"
metric = { number = true, better = "lower" }
"#;

    fn facts(smt: &str, thp: &str) -> Result<Facts, String> {
        Ok([("smt", smt), ("thp", thp), ("uptime", "1")]
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect())
    }

    #[test]
    fn differences_are_attributed_to_the_comparisons_they_affect() {
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("valid");
        let records: BTreeMap<String, Result<Facts, String>> = [
            ("env/a-a-1.json", facts("on", "always")),
            ("env/b-1.json", facts("on", "always")),
            ("env/a-b-1.json", facts("off", "always")),
            ("env/c-1.json", facts("off", "never")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let done = [
            ("a-a", "a", "env/a-a-1.json"),
            ("b", "b", "env/b-1.json"),
            ("a-b", "a", "env/a-b-1.json"),
            ("c", "c", "env/c-1.json"),
        ];
        let check = EnvironmentCheck::new(&recipe, &done_points(&done), &records);
        let texts: Vec<String> = check.differences.iter().map(|d| d.text()).collect();
        // SMT changed between a's boots; c's THP is set by its own parameter, so only b vs c
        // over SMT remains beside it.
        assert_eq!(
            texts,
            [
                "SMT differs between the boots of a: on at a-a; off at a-b",
                "SMT differs between b and c: on at b; off at c",
            ]
        );
        assert_eq!(check.affecting("b", "a").len(), 1);
        assert_eq!(check.affecting("c", "a").len(), 1);
        assert!(!check.points[0].facts.contains_key("uptime"));
    }

    #[test]
    fn a_missing_or_unreadable_record_is_named_and_not_compared() {
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("valid");
        let mut records = BTreeMap::new();
        // No record at all (a campaign of an older aba): nothing to compare, nothing to say.
        let first = [("a-a", "a", "env/a-a-1.json")];
        assert!(
            EnvironmentCheck::new(&recipe, &done_points(&first), &records)
                .unchecked
                .is_empty()
        );
        records.insert("env/b-1.json".to_owned(), Err("not JSON".to_owned()));
        let done = [("a-a", "a", "env/a-a-1.json"), ("b", "b", "env/b-1.json")];
        let check = EnvironmentCheck::new(&recipe, &done_points(&done), &records);
        assert_eq!(
            check.unchecked,
            [
                "a-a: no environment record env/a-a-1.json",
                "b (env/b-1.json): not JSON"
            ]
        );
        assert!(check.differences.is_empty() && check.points.is_empty());
    }
}
