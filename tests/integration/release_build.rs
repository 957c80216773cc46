//! The binary the tests run is built with the dev-dependencies' features unified in; the one
//! a user installs is not. A feature that changes results, turned on only by a test
//! dependency, makes the tests judge a program nobody runs: `jsonschema` turned on
//! `serde_json`'s correctly rounded float reader, so the tests passed while an installed aba
//! read a 17-digit value back one unit in the last place off and stopped the campaign (the
//! journal and `samples.csv` disagreed). This test compares the two feature sets.

use std::{
    collections::{BTreeMap, BTreeSet},
    process::Command,
};

/// Packages whose features may differ between the two builds, and why that cannot change
/// what aba computes or accepts.
const SAME_RESULTS: &[(&str, &str)] = &[
    ("bitflags", "std adds error trait impls"),
    (
        "hashbrown",
        "a default hasher and API extras; indexmap brings its own hasher and keeps order",
    ),
    ("memchr", "default is std, which the build has"),
    ("num-traits", "default is std, which the build has"),
    ("num-rational", "big integers, which aba never makes"),
    ("rand", "system entropy; aba's simulations are seeded"),
    (
        "regex-automata",
        "search engines and speed-ups, the same matches",
    ),
];

/// Package (`name vVERSION`) → features, as `cargo tree` resolves them for `edges`.
fn features(edges: &str) -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--locked", "--offline", "--prefix", "none"])
        .args(["-e", edges, "-f", "{p}|{f}"])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -e {edges}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((package, list)) = line.split_once('|') else {
            continue;
        };
        let list = list.trim_end_matches(" (*)");
        found
            .entry(package.to_owned())
            .or_default()
            .extend(list.split(',').filter(|f| !f.is_empty()).map(str::to_owned));
    }
    found
}

#[test]
fn an_installed_aba_has_every_feature_the_tests_run_with_that_could_change_a_result() {
    let installed = features("features,no-dev");
    let tested = features("features");
    let json = installed
        .iter()
        .find(|(package, _)| package.starts_with("serde_json v"))
        .map(|(_, features)| features)
        .expect("cargo tree lists serde_json");
    let mut differ = Vec::new();
    for (package, with_tests) in &tested {
        let Some(alone) = installed.get(package) else {
            continue; // a test dependency alone
        };
        let only_in_tests: Vec<&String> = with_tests.difference(alone).collect();
        let name = package.split(' ').next().unwrap_or(package);
        if !only_in_tests.is_empty() && !SAME_RESULTS.iter().any(|(p, _)| *p == name) {
            differ.push(format!("{package}: {only_in_tests:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "features only the test build has (turn them on in [dependencies], or say in \
         SAME_RESULTS why they cannot change a result): {differ:?}"
    );
    assert!(
        json.contains("float_roundtrip"),
        "serde_json reads floats correctly rounded: {json:?}"
    );
}
