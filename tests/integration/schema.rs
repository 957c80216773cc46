//! The JSON Schemas (`aba schema recipe|targets|batch`): the shipped `schema/*.schema.json` are what
//! the binary prints, every recipe and inventory of the repository validates against them,
//! and what the parser refuses by its types (an unknown key, a wrong type) they refuse too.

use std::{
    fs,
    path::{Path, PathBuf},
};

use crate::support::cli::{aba, text};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn printed(of: &str) -> String {
    let out = aba(&root(), &["schema", of]);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).expect("utf-8 schema")
}

fn validator(of: &str) -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(&printed(of)).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// TOML text as the JSON document the schema describes.
fn as_json(toml_text: &str) -> serde_json::Value {
    toml::from_str(toml_text).expect("valid TOML")
}

fn errors(validator: &jsonschema::Validator, toml_text: &str) -> Vec<String> {
    validator
        .iter_errors(&as_json(toml_text))
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Every `*.toml` under `dir` whose file name passes `keep`, recursively, sorted.
fn tomls(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                // Build outputs and the lab's downloads are not the repository's files.
                if !matches!(name, "target" | "out" | ".git") {
                    stack.push(path);
                }
            } else if name.ends_with(".toml") && keep(name) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_shipped_schemas_are_what_aba_schema_prints() {
    for of in ["recipe", "targets", "batch", "builds"] {
        let shipped = root().join(format!("schema/{of}.schema.json"));
        let file =
            fs::read_to_string(&shipped).unwrap_or_else(|e| panic!("{}: {e}", shipped.display()));
        assert!(
            file == printed(of),
            "{} differs from `aba schema {of}`: regenerate it with \
             `cargo run -- schema {of} > schema/{of}.schema.json`",
            shipped.display()
        );
    }
}

#[test]
fn every_recipe_and_template_validates_against_the_recipe_schema() {
    let validator = validator("recipe");
    let mut files = tomls(&root().join("recipes"), &|n| !n.ends_with("builds.toml"));
    files.extend(tomls(&root().join("templates/new"), &|n| {
        n != "targets.toml"
    }));
    assert!(files.len() >= 12, "{files:?}");
    for path in files {
        let source = fs::read_to_string(&path)
            .expect("read")
            .replace("__NAME__", "t");
        let errors = errors(&validator, &source);
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
}

#[test]
fn every_builds_file_validates_against_the_builds_schema_and_a_typo_does_not() {
    let validator = validator("builds");
    let files = tomls(&root().join("recipes"), &|n| n.ends_with("builds.toml"));
    assert!(!files.is_empty());
    for path in &files {
        let source = fs::read_to_string(path).expect("read");
        let errors = errors(&validator, &source);
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
    let typo = "version = 1\n[kernels.a]\nimage = \"x\"\nimgae = \"y\"\n";
    assert!(!errors(&validator, typo).is_empty());
    let missing = "version = 1\n[kernels.a]\ncommand = \"make\"\n";
    assert!(!errors(&validator, missing).is_empty());
}

#[test]
fn every_inventory_validates_against_the_targets_schema() {
    let validator = validator("targets");
    let files = tomls(&root(), &|n| n == "targets.toml");
    assert!(
        files.iter().any(|p| p.ends_with("lab/targets.toml")),
        "{files:?}"
    );
    assert!(files.len() >= 2, "{files:?}");
    for path in files {
        let errors = errors(&validator, &fs::read_to_string(&path).expect("read"));
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
}

const RECIPE: &str = r#"
version = 1
name = "x"
description = "d"
sequence = ["a", "b", "a"]
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
[[workload]]
name = "w"
run = "true"
metric = { number = true, better = "lower" }
"#;

#[test]
fn the_recipe_schema_refuses_unknown_keys_and_wrong_types() {
    let validator = validator("recipe");
    assert_eq!(errors(&validator, RECIPE), Vec::<String>::new());
    for (what, bad) in [
        (
            "unknown top-level key",
            RECIPE.replace("version = 1", "version = 1\nsampels = 9"),
        ),
        (
            "unknown workload key",
            RECIPE.replace("run = \"true\"", "run = \"true\"\ncpus = \"1\""),
        ),
        (
            "unknown metric key",
            RECIPE.replace("number = true,", "number = true, units = \"ns\","),
        ),
        (
            "wrong type",
            RECIPE.replace("version = 1", "version = 1\nsamples = \"nine\""),
        ),
        (
            "out of range",
            RECIPE.replace("version = 1", "version = 1\nsamples = 0"),
        ),
        (
            "unknown enum value",
            RECIPE.replace("better = \"lower\"", "better = \"smaller\""),
        ),
        (
            "missing required key",
            RECIPE.replace("run = \"true\"\n", ""),
        ),
    ] {
        assert!(
            !errors(&validator, &bad).is_empty(),
            "{what} passed:\n{bad}"
        );
        // The parser refuses it too: the schema is not stricter than aba.
        let tmp = tempfile::tempdir().expect("tempdir");
        fs::write(tmp.path().join("r.toml"), &bad).expect("write");
        let out = aba(tmp.path(), &["check", "r.toml"]);
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
    }
}

#[test]
fn the_targets_schema_refuses_unknown_keys_and_wrong_types() {
    let validator = validator("targets");
    let good = "[targets.box]\nhost = \"box.example\"\nswitch = \"kexec\"\nport = 22\n";
    assert_eq!(errors(&validator, good), Vec::<String>::new());
    for (what, bad) in [
        ("unknown key", good.replace("port = 22", "prot = 22")),
        ("wrong type", good.replace("port = 22", "port = \"22\"")),
        ("out of range", good.replace("port = 22", "port = 70000")),
        ("unknown switch", good.replace("\"kexec\"", "\"teleport\"")),
        ("missing host", good.replace("host = \"box.example\"\n", "")),
    ] {
        assert!(
            !errors(&validator, &bad).is_empty(),
            "{what} passed:\n{bad}"
        );
    }
}

#[test]
fn a_batch_plan_validates_against_the_batch_schema_and_a_typo_does_not() {
    let validator = validator("batch");
    let plan = "version = 1\nname = \"nightly\"\n[[campaign]]\nrecipe = \"a.toml\"\n\
                targets = [\"r750\", \"xr8620t\"]\nyes = true\nkernels = [\"b=7.2.0\"]\n";
    let found = errors(&validator, plan);
    assert!(found.is_empty(), "{found:#?}");
    let typo = plan.replace("targets =", "target =");
    assert!(!errors(&validator, &typo).is_empty());
}
