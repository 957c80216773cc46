//! `aba calibrate`'s campaign: a recipe's null campaign, its baseline kernel booted N times
//! with everything else as the recipe says (workloads, cases, metrics, warm-ups, samples,
//! sysctls, tuning, files, setup), so that its analysis measures the noise the recipe's own
//! campaigns will have (issue 10 §1).
//!
//! The calibration recipe is real recipe text, written into the results directory like any
//! recipe copy, so the campaign is an ordinary one: journaled, resumable, reported. It differs
//! from the recipe only in its name, description, sequence and kernels; `[[expect]]` and
//! recovery decompositions, which compare kernels, are left out.

use std::path::PathBuf;

use thiserror::Error;

use crate::recipe::{FilesFrom, Loader, Params, Recipe, RecipeError, params::BoundParam};

/// Boots of a calibration unless `--boots` says otherwise: 6, the fewest that give the
/// profile ν = 5 and the bounds of docs/profiles.md.
pub const DEFAULT_BOOTS: u32 = 6;

/// The suffix of a calibration's recipe name (and so of its results directory).
pub const SUFFIX: &str = "-calibration";

/// Why no calibration recipe could be made.
#[derive(Debug, Error)]
pub enum CalibrateError {
    /// The recipe's text did not read back as a table (it was validated, so this is a bug).
    #[error("cannot rewrite the recipe as its calibration")]
    Rewrite(#[source] toml::de::Error),
    /// The calibration recipe is invalid.
    #[error("the calibration of the recipe is not a valid recipe")]
    Invalid(#[source] RecipeError),
}

/// The calibration recipe of `recipe`: its baseline booted `boots` times. `allowed` are the
/// folders the tester lets `[files]` come from.
pub fn calibration_recipe(
    recipe: &Recipe,
    boots: u32,
    allowed: &[PathBuf],
) -> Result<Recipe, CalibrateError> {
    let mut table: toml::Table = recipe
        .hashed_text
        .parse()
        .map_err(CalibrateError::Rewrite)?;
    let baseline = recipe.analysis.baseline.to_string();
    // A name is at most 64 characters: keep the suffix whole.
    let keep = 64 - SUFFIX.len();
    let name: String = recipe.name.as_str().chars().take(keep).collect();
    table.insert("name".into(), format!("{name}{SUFFIX}").into());
    let description = format!(
        "Calibration of {} (aba calibrate): its baseline {baseline} booted {boots} times for a \
         noise profile. {}",
        recipe.name,
        recipe.description.trim()
    );
    let description: String = description.chars().take(4000).collect();
    table.insert("description".into(), description.into());
    table.insert(
        "sequence".into(),
        toml::Value::Array((0..boots).map(|_| baseline.clone().into()).collect()),
    );
    if let Some(toml::Value::Table(kernels)) = table.get_mut("kernels") {
        kernels.retain(|label, _| *label == baseline);
    }
    table.remove("expect");
    only_on_baseline(&mut table, &baseline);
    keep_used_params(&mut table);
    rebase_analysis(&mut table, &baseline);
    let text = format!(
        "# Calibration of {} by `aba calibrate`: the baseline {baseline} booted {boots} \
         times.\n{}",
        recipe.path.display(),
        toml::to_string(&table).expect("invariant: a TOML table serialises")
    );
    // The calibration measures the machine the recipe's parameters were bound for.
    reparse(recipe, &text, allowed)
}

/// `text`, a rewriting of `recipe`, read as if it were the file at the recipe's path (its
/// `[files]` come from the same folders) with the parameter values `recipe` was bound with.
pub(crate) fn reparse(
    recipe: &Recipe,
    text: &str,
    allowed: &[PathBuf],
) -> Result<Recipe, CalibrateError> {
    let bound: Vec<BoundParam> = recipe.params.iter().map(BoundParam::from).collect();
    Loader {
        files: FilesFrom::RecipeDir(allowed),
        params: Params::Recorded(&bound),
    }
    .parse(&recipe.path, text)
    .map_err(CalibrateError::Invalid)
}

/// Drops the `[params]` a rewritten recipe no longer uses (a parameter only the
/// expectations used would be declared and never used, which a recipe may not do).
pub(crate) fn keep_used_params(table: &mut toml::Table) {
    if let Some(toml::Value::Table(params)) = table.remove("params") {
        let rest = toml::to_string(&table).expect("invariant: a TOML table serialises");
        let used: toml::Table = params
            .into_iter()
            .filter(|(name, _)| rest.contains(&format!("{{params.{name}}}")))
            .collect();
        if !used.is_empty() {
            table.insert("params".into(), toml::Value::Table(used));
        }
    }
}

/// Workloads and probes on chosen kernels (`kernels`) as the baseline alone runs them: those
/// Sets `[analysis] baseline` of a rewritten recipe that boots other kernels than the
/// tester's, and removes what names the tester's kernels there (recovery decompositions,
/// declared comparisons): left in, they would name kernels the rewritten recipe lacks.
pub fn rebase_analysis(table: &mut toml::Table, baseline: &str) {
    let mut analysis = match table.remove("analysis") {
        Some(toml::Value::Table(analysis)) => analysis,
        _ => toml::Table::new(),
    };
    for names_kernels in ["recovery", "comparison"] {
        analysis.remove(names_kernels);
    }
    analysis.insert("baseline".into(), baseline.into());
    table.insert("analysis".into(), toml::Value::Table(analysis));
}

/// that leave it out are dropped, the others lose `kernels`; a check's `expect_fail` keeps
/// the baseline only. The other kernels are not in the calibration's `[kernels]`.
pub(crate) fn only_on_baseline(table: &mut toml::Table, baseline: &str) {
    let on_baseline = |item: &toml::Value| match item.get("kernels") {
        Some(toml::Value::Array(kernels)) => kernels.iter().any(|k| k.as_str() == Some(baseline)),
        _ => true,
    };
    for key in ["workload", "probe"] {
        let Some(toml::Value::Array(items)) = table.get_mut(key) else {
            continue;
        };
        items.retain(on_baseline);
        for item in items.iter_mut().filter_map(toml::Value::as_table_mut) {
            item.remove("kernels");
            if let Some(toml::Value::Table(check)) = item.get_mut("check")
                && let Some(toml::Value::Array(fail)) = check.get_mut("expect_fail")
            {
                fail.retain(|k| k.as_str() == Some(baseline));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::calibration_recipe;
    use crate::{
        campaign::plan::Summary,
        inventory::Target,
        profile::matching::{definition_sha256, requested_tuning},
        recipe::parse,
    };

    const RECIPE: &str = r#"
version = 1
name = "lab-aba"
description = "two kernels"
sequence = ["a", "b", "a"]
warmup = 1
samples = 5
[kernels.a]
release = "running"
cmdline = "aba.kernel=a"
[kernels.b]
release = "running"
[boot]
cmdline = "aba.lab=1"
[sysctl]
"kernel.sched_rt_runtime_us" = 950000
[[workload]]
name = "w"
run = "echo {n}"
matrix = { n = ["1", "2"] }
metric = { number = true, unit = "ns", better = "lower" }
[analysis]
gate_pct = 3.0
[[analysis.recovery]]
name = "r"
gap = ["b", "a"]
path = ["b", "a"]
[[expect]]
workload = "w"
case = "n=1"
change_pct = 1.0
tolerance = 1.0
"#;

    #[test]
    fn the_calibration_boots_the_baseline_with_everything_else_as_the_recipe_says() {
        let recipe = parse(Path::new("r.toml"), RECIPE).expect("valid");
        let calibration = calibration_recipe(&recipe, 6, &[]).expect("valid");
        assert_eq!(calibration.name.as_str(), "lab-aba-calibration");
        assert_eq!(calibration.sequence.len(), 6);
        assert!(calibration.sequence.iter().all(|k| k.as_str() == "a"));
        assert_eq!(calibration.kernels.len(), 1);
        assert!(calibration.expect.is_empty() && calibration.analysis.recovery.is_empty());
        assert_eq!(calibration.analysis.gate_pct, 3.0);
        assert_eq!(
            calibration.cmdline_for(&calibration.analysis.baseline),
            recipe.cmdline_for(&recipe.analysis.baseline)
        );
        assert_eq!(requested_tuning(&calibration), requested_tuning(&recipe));
        // Every series is defined as in the recipe, so its profile entry holds for it.
        for (w, cw) in recipe.workloads.iter().zip(&calibration.workloads) {
            assert_eq!((w.warmup, w.samples), (cw.warmup, cw.samples));
            for (case, ccase) in w.cases().iter().zip(cw.cases()) {
                assert_eq!(
                    definition_sha256(&recipe, w, case, &w.metrics[0]),
                    definition_sha256(&calibration, cw, &ccase, &cw.metrics[0])
                );
            }
        }
        assert!(
            calibration
                .hashed_text
                .starts_with("# Calibration of r.toml")
        );
        // On a target that does not switch, its points share one boot.
        let plan = Summary::new(&calibration, &Target::local()).expect("plannable");
        assert_eq!((plan.points.len(), plan.boots), (6, 0));
    }

    #[test]
    fn workloads_and_probes_on_chosen_kernels_are_calibrated_on_the_baseline_only() {
        let text = RECIPE.replace(
            "[analysis]",
            "[[workload]]\nname = \"only_b\"\nrun = \"echo 1\"\nkernels = [\"b\"]\n\
             metric = { number = true, better = \"lower\" }\n\
             [[workload]]\nname = \"mode\"\nrole = \"check\"\nrun = \"echo x\"\nkernels = [\"a\", \"b\"]\n\
             check = { must_match = [\"y\"], expect_fail = [\"a\", \"b\"] }\n\
             [[probe]]\nname = \"p\"\nrun = \"true\"\nkernels = [\"b\"]\n[analysis]",
        );
        let recipe = parse(Path::new("r.toml"), &text).expect("valid");
        let calibration = calibration_recipe(&recipe, 6, &[]).expect("valid");
        let names: Vec<&str> = calibration
            .workloads
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!(names, ["w", "mode"]);
        assert!(calibration.workloads[1].kernels.is_empty());
        assert!(calibration.workloads[1].check.must_fail_on("a"));
        assert!(calibration.probes.is_empty());
    }
}
