//! Hostile and broken recipes: property tests over the parser, the diagnostics renderer and the
//! planner. Whatever the input, aba answers with a recipe or an error, never a panic, and a
//! recipe it accepts plans into exactly the points and cases it declares.

use std::path::Path;

use aba::{
    campaign::plan::Plan,
    inventory::{Inventory, Target},
    recipe::{RecipeError, parse},
};
use proptest::prelude::*;

const VALID: &str = r#"version = 1
name = "fuzz"
description = "a valid recipe the mutations start from"
sequence = ["a", "b", "a"]
warmup = 1
samples = 3
settle = "1s"
[kernels.a]
release = "6.1.0-47-cloud-amd64"
cmdline = "aba.kernel=a"
[kernels.b]
release = "6.1.0-50-cloud-amd64"
[boot]
cmdline = "quiet"
[sysctl]
"kernel.sched_rt_runtime_us" = 950000
[tuning]
governor = "performance"
optional = ["governor"]
[[workload]]
name = "pipe"
run = "bench --level {level} {flags}"
matrix = { level = ["0", "1"], flags = ["", "-d"] }
metric = [
    { name = "ops", regex = 'ops: (\d+)', better = "higher" },
    { name = "ns", json = "/ns", divide = 4096, better = "lower" },
]
check = { must_match = ["PASS"], must_not_match = ["WARN"] }
[analysis]
baseline = "a"
gate_pct = 5.0
[[analysis.recovery]]
name = "all"
gap = ["b", "a"]
path = ["b", "a"]
[[expect]]
workload = "pipe"
case = "level=0,flags="
metric = "ops"
change_pct = -2.5
tolerance = 1.0
"#;

fn kexec_target() -> Target {
    Inventory::parse(
        Path::new("t.toml"),
        "[targets.lab]\nhost = \"127.0.0.1\"\nhost_key = \"SHA256:x\"\nswitch = \"kexec\"\n",
    )
    .expect("valid inventory")
    .target("lab")
    .expect("defined")
}

/// Parses, renders any error, and plans anything that parsed; panics only on broken invariants.
fn exercise(text: &str) {
    match parse(Path::new("fuzz.toml"), text) {
        Ok(recipe) => {
            for target in [kexec_target(), Target::local()] {
                if let Ok(plan) = Plan::new(&recipe, &target) {
                    assert_eq!(plan.points.len(), recipe.sequence.len());
                    for point in &plan.points {
                        let cases: usize = recipe.workloads.iter().map(|w| w.cases().len()).sum();
                        assert_eq!(point.cases.len(), cases);
                    }
                }
            }
        }
        Err(RecipeError::Invalid(diags)) => {
            let rendered = diags.to_string();
            assert!(!rendered.is_empty());
            for d in &diags.0 {
                assert!(d.line >= 1 && d.column >= 1, "{d:?}");
                assert!(rendered.contains("fuzz.toml:"), "{rendered}");
            }
        }
        Err(other) => panic!("unexpected error kind: {other}"),
    }
}

fn mutation() -> impl Strategy<Value = (usize, usize, String)> {
    (
        0..VALID.len(),
        0..40usize,
        "[ -~\n\u{e9}\u{1F600}\"'\\[\\]{}=#]{0,12}",
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "[ -~\n\t\u{e9}\u{1F600}]{0,400}") {
        exercise(&text);
    }

    #[test]
    fn mutated_valid_recipes_never_panic(edits in proptest::collection::vec(mutation(), 1..4)) {
        let mut text = VALID.to_owned();
        for (at, cut, insert) in edits {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + cut).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(at..end, &insert);
        }
        exercise(&text);
    }

    #[test]
    fn generated_designs_plan_exactly(
        seq in proptest::collection::vec(0..3usize, 1..12),
        levels in proptest::collection::vec("[a-z0-9]{1,4}", 1..4),
        samples in 1u32..20,
        warmup in 0u32..5,
    ) {
        let mut levels = levels;
        levels.sort();
        levels.dedup();
        let labels = ["a", "b", "c"];
        let used: Vec<&str> = labels.iter().copied().filter(|l| seq.iter().any(|i| labels[*i] == *l)).collect();
        let mut text = format!(
            "version = 1\nname = \"g\"\ndescription = \"d\"\nsequence = [{}]\nwarmup = {warmup}\nsamples = {samples}\n",
            seq.iter().map(|i| format!("\"{}\"", labels[*i])).collect::<Vec<_>>().join(", ")
        );
        for (n, l) in used.iter().enumerate() {
            text.push_str(&format!("[kernels.{l}]\nrelease = \"6.1.0-{n}\"\n"));
        }
        text.push_str(&format!(
            "[[workload]]\nname = \"w\"\nrun = \"run {{level}}\"\nmatrix = {{ level = [{}] }}\nmetric = {{ number = true, better = \"lower\" }}\n",
            levels.iter().map(|l| format!("\"{l}\"")).collect::<Vec<_>>().join(", ")
        ));
        let recipe = parse(Path::new("g.toml"), &text).expect("generated recipes are valid");
        let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
        prop_assert_eq!(plan.points.len(), seq.len());
        prop_assert_eq!(plan.boots, seq.len());
        prop_assert_eq!(plan.runs, (seq.len() * levels.len()) as u64 * u64::from(warmup + samples));
        let mut labels_seen = std::collections::HashSet::new();
        for p in &plan.points {
            prop_assert!(labels_seen.insert(p.label.clone()), "duplicate point label {}", p.label);
            prop_assert_eq!(p.cases.len(), levels.len());
        }
    }
}

#[test]
fn the_fuzz_seed_recipe_is_valid() {
    let recipe = parse(Path::new("fuzz.toml"), VALID).expect("valid");
    let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
    assert_eq!(plan.points[0].cases.len(), 4);
    assert_eq!(plan.points[0].cases[1].run, "bench --level 0 -d");
}
