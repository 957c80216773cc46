//! The recipe of one bisection step: the tester's recipe with its kernels replaced by `good`
//! and the tested commit, both booted as the recipe boots its baseline (the same initrd,
//! command line, sysctls, tuning, workloads), in the sandwich good/X/good that extends by
//! X/good while the step is undecided. Like a calibration's, it is real recipe text written
//! into the step's results directory, so every step is an ordinary campaign that `aba report`,
//! `aba verify` and `aba compare` read.

use std::path::PathBuf;

use crate::{
    campaign::calibrate::{
        CalibrateError, keep_used_params, only_on_baseline, rebase_analysis, reparse,
    },
    recipe::Recipe,
};

/// The label of the reference kernel in every step.
pub const GOOD: &str = "good";

/// The label of the tested commit in its step: `c` and the first 12 hex digits of its hash
/// (a kernel label cannot be a bare hash: it must start with a letter).
#[must_use]
pub fn commit_label(hash: &str) -> String {
    format!("c{}", &hash[..hash.len().min(12)])
}

/// What a step recipe is made of.
#[derive(Debug)]
pub struct StepSpec<'a> {
    /// The tested commit's kernel label ([`commit_label`]).
    pub label: &'a str,
    /// One line for the description: the step, the commit and its subject.
    pub what: &'a str,
    /// The step's gate, percent.
    pub gate_pct: f64,
    /// The most points the step may boot.
    pub max_points: usize,
}

/// The step recipe of `recipe` (bound for the target; its parameters are kept bound).
/// `allowed` are the folders the tester lets `[files]` come from.
pub fn step_recipe(
    recipe: &Recipe,
    spec: &StepSpec<'_>,
    allowed: &[PathBuf],
) -> Result<Recipe, CalibrateError> {
    let mut table: toml::Table = recipe
        .hashed_text
        .parse()
        .map_err(CalibrateError::Rewrite)?;
    let baseline = recipe.analysis.baseline.to_string();
    const SUFFIX: &str = "-bisect";
    let name: String = recipe
        .name
        .as_str()
        .chars()
        .take(64 - SUFFIX.len())
        .collect();
    table.insert("name".into(), format!("{name}{SUFFIX}").into());
    let description: String = format!(
        "aba bisect of {}: {}. Both kernels boot as the recipe's baseline {baseline} does. {}",
        recipe.name,
        spec.what,
        recipe.description.trim()
    )
    .chars()
    .take(4000)
    .collect();
    table.insert("description".into(), description.into());
    table.insert(
        "sequence".into(),
        toml::Value::Array(vec![GOOD.into(), spec.label.into(), GOOD.into()]),
    );
    if let Some(toml::Value::Table(kernels)) = table.get_mut("kernels") {
        let base = kernels
            .get(&baseline)
            .cloned()
            .unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
        kernels.clear();
        kernels.insert(GOOD.into(), base.clone());
        kernels.insert(spec.label.into(), base);
    }
    table.remove("expect");
    table.remove("publish");
    on_both(&mut table, &baseline);
    keep_used_params(&mut table);
    rebase_analysis(&mut table, GOOD);
    if let Some(toml::Value::Table(analysis)) = table.get_mut("analysis") {
        analysis.insert("gate_pct".into(), spec.gate_pct.into());
        let mut extend = toml::Table::new();
        extend.insert("until".into(), "decided".into());
        extend.insert(
            "max_points".into(),
            i64::try_from(spec.max_points).unwrap_or(i64::MAX).into(),
        );
        analysis.insert("extend".into(), toml::Value::Table(extend));
    }
    let text = format!(
        "# A step of `aba bisect` of {}: {}.\n{}",
        recipe.path.display(),
        spec.what.replace('\n', " "),
        toml::to_string(&table).expect("invariant: a TOML table serialises")
    );
    reparse(recipe, &text, allowed)
}

/// Workloads and probes as both kernels of a step run them: a check whose expected outcome
/// depends on the kernel (`expect_fail`) is dropped, since which side of the range fails it
/// is what the bisection does not know; the rest as the baseline runs them.
fn on_both(table: &mut toml::Table, baseline: &str) {
    let kernel_dependent = |item: &toml::Value| {
        item.get("check")
            .and_then(|c| c.get("expect_fail"))
            .and_then(toml::Value::as_array)
            .is_some_and(|f| !f.is_empty())
    };
    if let Some(toml::Value::Array(items)) = table.get_mut("workload") {
        items.retain(|item| !kernel_dependent(item));
    }
    only_on_baseline(table, baseline);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{StepSpec, commit_label, step_recipe};
    use crate::recipe::parse;

    const RECIPE: &str = r#"
version = 1
name = "lab-built"
description = "three kernels"
sequence = ["original", "patched", "fixed", "original"]
samples = 5
[kernels.original]
release = "6.1.0-lab"
initrd = "/boot/initrd.img"
[kernels.patched]
release = "6.1.0-lab"
[kernels.fixed]
release = "6.1.0-lab"
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, unit = "ns", better = "lower" }
[[workload]]
name = "only-patched"
run = "echo 1"
kernels = ["patched"]
metric = { number = true, unit = "ns", better = "lower" }
[analysis]
baseline = "original"
gate_pct = 10.0
[[analysis.comparison]]
candidate = "fixed"
baseline = "patched"
[[expect]]
workload = "w"
kernel = "patched"
change_pct = 1.0
tolerance = 1.0
"#;

    #[test]
    fn a_step_boots_good_and_the_commit_as_the_baseline_and_extends_until_decided() {
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("valid");
        let label = commit_label("0123456789abcdef0123");
        assert_eq!(label, "c0123456789ab");
        let step = step_recipe(
            &recipe,
            &StepSpec {
                label: &label,
                what: "commit 3 of 16",
                gate_pct: 5.0,
                max_points: 31,
            },
            &[],
        )
        .expect("a valid step recipe");
        let seq: Vec<String> = step.sequence.iter().map(ToString::to_string).collect();
        assert_eq!(seq, ["good", "c0123456789ab", "good"]);
        assert_eq!(step.analysis.baseline.as_str(), "good");
        assert!((step.analysis.gate_pct - 5.0).abs() < 1e-12);
        let extend = step.analysis.extend.as_ref().expect("extends");
        assert_eq!(extend.max_points, 31);
        let unit: Vec<String> = extend.unit.iter().map(ToString::to_string).collect();
        assert_eq!(unit, ["c0123456789ab", "good"]);
        assert_eq!(step.kernels.len(), 2);
        assert!(
            step.kernels
                .values()
                .all(|k| k.initrd.as_str() == "/boot/initrd.img")
        );
        let names: Vec<&str> = step.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(
            names,
            ["w"],
            "a workload that leaves the baseline out is dropped"
        );
        assert!(step.expect.is_empty());
        assert!(
            step.analysis.comparisons.is_empty(),
            "a declared comparison names the tester's kernels"
        );
    }
}
