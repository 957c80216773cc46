//! Raw golden points (tests/fixtures/golden/points.tsv) shared by the unit tests of `stats`, so
//! the worked examples of STATISTICS.md are checked where the code lives.

use crate::stats::{
    kernel::BootPoint,
    summary::{SdDenominator, summarize_with},
};

/// Summarizes `(label, kernel, values)` rows into boot points, optionally dropping x₁.
pub(crate) fn points(case: &[(&str, &str, &str)], drop_first: bool) -> Vec<BootPoint> {
    case.iter()
        .map(|(label, kernel, values)| {
            let values: Vec<f64> = values
                .split(' ')
                .map(|v| v.parse().expect("number"))
                .collect();
            let values = if drop_first {
                &values[1..]
            } else {
                &values[..]
            };
            let summary = summarize_with(values, SdDenominator::NMinus1).expect("not empty");
            BootPoint::from_summary(label, kernel, &summary)
        })
        .collect()
}

pub(crate) const EXACT_CAC1: [(&str, &str, &str); 3] = [
    (
        "parent-a",
        "parent",
        "37 38 38 38 39 37 39 37 38 39 38 38 39 39 38",
    ),
    (
        "child",
        "child",
        "53 53 54 53 53 54 54 54 53 54 53 53 54 54 54",
    ),
    (
        "parent-b",
        "parent",
        "37 39 38 39 38 39 38 39 38 39 39 39 38 39 38",
    ),
];
pub(crate) const PEDRO_V3: [(&str, &str, &str); 3] = [
    (
        "parent-a",
        "parent",
        "54 55 55 55 56 56 55 56 55 55 56 55 56 55 56",
    ),
    (
        "child",
        "child",
        "57 58 58 59 58 58 58 58 58 59 59 58 58 59 58",
    ),
    (
        "parent-b",
        "parent",
        "53 54 54 54 54 54 55 54 55 54 55 54 55 55 54",
    ),
];
pub(crate) const LOOKUP_BASE_PAGE: [(&str, &str, &str); 3] = [
    (
        "baseline-a",
        "baseline",
        "56 57 56 57 57 57 57 57 58 57 57 57 57 57 57",
    ),
    (
        "candidate",
        "candidate",
        "46 48 47 47 47 47 47 47 47 48 48 47 47 47 47",
    ),
    (
        "baseline-b",
        "baseline",
        "56 58 58 57 57 57 57 57 57 57 57 57 57 57 58",
    ),
];
pub(crate) const MECHANISM: [(&str, &str, &str); 9] = [
    (
        "parent-a",
        "parent",
        "37 39 39 39 39 39 39 39 39 39 38 39 39 39 38",
    ),
    (
        "child-a",
        "child",
        "52 52 53 53 53 52 53 54 53 53 53 53 53 53 54",
    ),
    (
        "fastpath-a",
        "fastpath",
        "46 47 47 47 47 47 46 47 47 46 47 47 47 47 47",
    ),
    (
        "folioonly-a",
        "folioonly",
        "46 47 47 47 47 47 47 47 47 47 47 47 47 47 47",
    ),
    (
        "nofolio",
        "nofolio",
        "40 40 42 41 40 41 40 41 41 41 40 41 40 41 40",
    ),
    (
        "folioonly-b",
        "folioonly",
        "46 47 47 47 47 47 47 47 47 47 47 47 47 47 46",
    ),
    (
        "fastpath-b",
        "fastpath",
        "46 47 47 47 47 47 47 47 47 47 47 47 47 47 47",
    ),
    (
        "child-b",
        "child",
        "52 53 53 53 53 53 53 53 53 54 53 53 53 53 53",
    ),
    (
        "parent-b",
        "parent",
        "37 39 39 39 39 39 39 39 39 39 39 39 39 39 39",
    ),
];
