//! Hostile and broken recipes: property tests over the parser, the diagnostics renderer and the
//! planner. Whatever the input, aba answers with a recipe or an error, never a panic, and a
//! recipe it accepts plans into exactly the points and cases it declares. Durations and counts
//! are accepted exactly within their documented ranges, and a `[files]` source is accepted
//! exactly when it resolves to a file inside the recipe's folder (issue 14).

use std::path::Path;

use aba::{
    campaign::plan::{Plan, Summary},
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
                let summary = Summary::new(&recipe, &target);
                if let Ok(plan) = Plan::new(&recipe, &target) {
                    let summary = summary.expect("a plannable recipe has a summary");
                    assert_eq!(summary.runs, plan.runs);
                    assert_eq!(summary.eta, plan.eta);
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

/// A duration as a hostile recipe might write it: any number with any unit humantime knows,
/// or none.
fn duration_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![0u64..100, 0u64..100_000, any::<u64>()],
        prop::sample::select(vec!["", "ns", "ms", "s", "m", "h", "d", "w", "M", "y", "x"]),
    )
        .prop_map(|(n, unit)| format!("{n}{unit}"))
}

/// Where a duration goes, with its documented range in milliseconds.
const DURATION_KEYS: [(&str, u64, u64); 4] = [
    ("workload.timeout", 1000, 86_400_000),
    ("workload.estimate", 0, 86_400_000),
    ("settle", 0, 3_600_000),
    ("setup.timeout", 1000, 86_400_000),
];

/// Where a count goes, with its documented range.
const COUNT_KEYS: [(&str, i64, i64); 5] = [
    ("samples", 1, 10_000),
    ("warmup", 0, 1000),
    ("point_retries", 0, 10),
    ("workload.retries", 0, 10),
    ("workload.samples", 1, 10_000),
];

/// The generated-design recipe with `key = value` set (top level, `[setup]` or the workload).
fn recipe_with(key: &str, value: &str) -> String {
    let (top, setup, workload) = match key.split_once('.') {
        Some(("workload", k)) => (String::new(), String::new(), format!("{k} = {value}\n")),
        Some(("setup", k)) => (
            String::new(),
            format!("[setup]\nrun = [\"true\"]\n{k} = {value}\n"),
            String::new(),
        ),
        _ => (format!("{key} = {value}\n"), String::new(), String::new()),
    };
    format!(
        "version = 1\nname = \"r\"\ndescription = \"d\"\nsequence = [\"a\", \"b\", \"a\"]\n{top}[kernels.a]\nrelease = \"6.1.0-1\"\n[kernels.b]\nrelease = \"6.1.0-2\"\n{setup}[[workload]]\nname = \"w\"\nrun = \"run {{level}}\"\nmatrix = {{ level = [\"0\", \"1\"] }}\n{workload}metric = {{ number = true, better = \"lower\" }}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// A duration is accepted exactly when humantime reads it and it lies in the key's range,
    /// and an accepted one plans without overflow.
    #[test]
    fn durations_are_accepted_exactly_within_their_range(
        which in 0..DURATION_KEYS.len(),
        text in duration_text(),
    ) {
        let (key, min, max) = DURATION_KEYS[which];
        let src = recipe_with(key, &format!("{text:?}"));
        let parsed = parse(Path::new("d.toml"), &src);
        let expected = humantime::parse_duration(&text)
            .is_ok_and(|d| d.as_millis() >= u128::from(min) && d.as_millis() <= u128::from(max));
        prop_assert_eq!(parsed.is_ok(), expected, "{} = {:?}: {:?}", key, text, parsed.as_ref().err().map(ToString::to_string));
        match parsed {
            Ok(recipe) => {
                let plan = Plan::new(&recipe, &kexec_target()).expect("plannable");
                prop_assert!(plan.eta >= plan.boot_estimate);
            }
            Err(e) => {
                let text = e.to_string();
                prop_assert!(text.contains("d.toml:"), "{}", text);
                prop_assert!(text.contains(" to "), "the error names the range: {}", text);
            }
        }
    }

    /// An inventory duration is accepted exactly within its range.
    #[test]
    fn inventory_durations_are_accepted_exactly_within_their_range(
        which in 0..4usize,
        text in duration_text(),
    ) {
        let (key, min, max) = [
            ("boot_timeout", 10_000u64, 86_400_000u64),
            ("boot_estimate", 0, 86_400_000),
            ("keepalive", 1000, 600_000),
            ("connect_timeout", 100, 300_000),
        ][which];
        let src = format!(
            "[targets.lab]\nhost = \"127.0.0.1\"\nhost_key = \"SHA256:x\"\nswitch = \"kexec\"\ndead_after = \"2m\"\n{key} = {text:?}\n"
        );
        let parsed = Inventory::parse(Path::new("t.toml"), &src);
        let mut expected = humantime::parse_duration(&text)
            .is_ok_and(|d| d.as_millis() >= u128::from(min) && d.as_millis() <= u128::from(max));
        if key == "keepalive" {
            // dead_after (2m) must be at least twice the keepalive.
            expected &= humantime::parse_duration(&text).is_ok_and(|d| d.as_millis() <= 60_000);
        }
        prop_assert_eq!(parsed.is_ok(), expected, "{} = {:?}", key, text);
    }

    /// A count is accepted exactly within its range.
    #[test]
    fn counts_are_accepted_exactly_within_their_range(
        which in 0..COUNT_KEYS.len(),
        value in prop_oneof![-5i64..20_000, any::<i64>()],
    ) {
        let (key, min, max) = COUNT_KEYS[which];
        let parsed = parse(Path::new("c.toml"), &recipe_with(key, &value.to_string()));
        prop_assert_eq!(parsed.is_ok(), (min..=max).contains(&value), "{} = {}", key, value);
        if let Err(e) = parsed {
            prop_assert!(e.to_string().contains(&format!("from {min} to {max}")), "{}", e);
        }
    }
}

/// A recipe folder with files, subfolders and links in and out, next to a folder of the
/// tester's own.
fn files_fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = tmp.path().join("recipe");
    let o = tmp.path().join("outside");
    for d in [r.join("sub"), o.clone()] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    for f in [r.join("a.txt"), r.join("sub/b.txt"), o.join("x")] {
        std::fs::write(f, "data\n").expect("write");
    }
    let link = |to: &Path, at: &Path| std::os::unix::fs::symlink(to, at).expect("ln");
    link(&o.join("x"), &r.join("link-out"));
    link(Path::new("a.txt"), &r.join("link-in"));
    link(&o, &r.join("dirlink"));
    link(Path::new("../sub"), &r.join("sub/up"));
    link(Path::new("/etc/passwd"), &r.join("passwd"));
    tmp
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// A `[files]` source is accepted exactly when, symlinks followed, it is a file inside
    /// the recipe's folder; an accepted copy is read from inside it.
    #[test]
    fn files_sources_are_accepted_exactly_inside_the_recipe_folder(
        absolute in any::<bool>(),
        parts in proptest::collection::vec(
            prop::sample::select(vec![
                "..", ".", "a.txt", "sub", "b.txt", "link-out", "link-in", "dirlink", "x",
                "outside", "recipe", "up", "passwd", "etc",
            ]),
            1..6,
        ),
    ) {
        let tmp = files_fixture();
        let root = tmp.path().join("recipe");
        let source = format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"));
        let recipe_path = root.join("r.toml");
        let src = format!(
            "version = 1\nname = \"f\"\ndescription = \"d\"\nsequence = [\"a\"]\n[kernels.a]\nrelease = \"running\"\n[files]\n\"copy\" = {source:?}\n[[workload]]\nname = \"w\"\nrun = \"true\"\nmetric = {{ number = true, better = \"lower\" }}\n"
        );
        let parsed = parse(&recipe_path, &src);
        let canonical_root = std::fs::canonicalize(&root).expect("root");
        let inside = std::fs::canonicalize(root.join(&source))
            .is_ok_and(|p| p.starts_with(&canonical_root) && p.is_file());
        prop_assert_eq!(parsed.is_ok(), inside, "{}: {:?}", source, parsed.as_ref().err().map(ToString::to_string));
        if let Ok(recipe) = parsed {
            for file in &recipe.files {
                prop_assert!(file.local.starts_with(&canonical_root), "{}", file.local.display());
            }
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
