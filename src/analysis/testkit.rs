//! Small in-memory campaigns for unit tests: a recipe text and the measured values of each
//! point and workload become an [`Analysis`] through [`analyze_inputs`], with a journal that
//! says every point is done at attempt 1.

use std::{collections::BTreeSet, fmt::Write as _, path::Path};

use crate::{
    analysis::{Analysis, Inputs, analyze_inputs},
    recipe::{parse, resolved::point_labels},
    results::{
        journal::{Event, JOURNAL_FORMAT, Journal},
        samples::{HEADER, SampleTable},
    },
};

/// Analyses `recipe` with `values[(point label, workload)]` as each point's samples (the
/// metric is named after its workload).
pub fn campaign(recipe: &str, values: &[(&str, &str, &[f64])]) -> Analysis {
    let recipe = parse(Path::new("recipe.toml"), recipe).expect("valid test recipe");
    let rows: Vec<Row<'_>> = values
        .iter()
        .map(|(point, workload, xs)| Row {
            point,
            workload,
            case: "",
            metric: workload,
            values: xs,
        })
        .collect();
    campaign_of(&recipe, &rows, "lab")
}

/// One point's samples of one workload case and metric.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    /// Point label.
    pub point: &'a str,
    /// Workload.
    pub workload: &'a str,
    /// Case name (`""` without a matrix).
    pub case: &'a str,
    /// Metric.
    pub metric: &'a str,
    /// The samples, in order.
    pub values: &'a [f64],
}

/// Analyses `recipe` run on `target` with `rows` as its samples, every point done at
/// attempt 1 in its own boot.
pub fn campaign_of(recipe: &crate::recipe::Recipe, rows: &[Row<'_>], target: &str) -> Analysis {
    let labels = point_labels(&recipe.sequence);
    let mut events = vec![Event::Campaign {
        format: JOURNAL_FORMAT,
        aba: "0.0.0".into(),
        name: recipe.name.to_string(),
        recipe_sha256: recipe.sha256.clone(),
        limits: Some(crate::results::journal::Limits::of(recipe)),
        target: target.into(),
        points: labels.clone(),
        time: "t".into(),
    }];
    let mut csv = format!("{}\n", HEADER.join(","));
    for (order, label) in labels.iter().enumerate() {
        events.push(Event::BootProven {
            point: label.clone(),
            attempt: 1,
            boot_id: format!("boot-{order}"),
            release: "r".into(),
            cmdline: "quiet".into(),
            switch_s: 1.0,
            login_s: 1.0,
            proof_s: None,
            proven_at: None,
        });
        events.push(Event::PointDone {
            point: label.clone(),
            attempt: 1,
            dmesg_warnings: 0,
            failed_units: vec![],
            time: "t".into(),
        });
        for row in rows.iter().filter(|r| r.point == label) {
            assert!(
                !row.case.contains([',', '"']),
                "a plain CSV field: {}",
                row.case
            );
            for (i, x) in row.values.iter().enumerate() {
                let _ = writeln!(
                    csv,
                    "{},{},1,k,r,boot-{order},{},{},{},sample,{},0,ok,{x},ns,t",
                    row.point,
                    order + 1,
                    row.workload,
                    row.case,
                    row.metric,
                    i + 1
                );
            }
        }
    }
    events.push(Event::Finished { time: "t".into() });
    let journal = Journal {
        events,
        truncated_tail: false,
    };
    let table = SampleTable::parse(Path::new("samples.csv"), csv.as_bytes()).expect("valid");
    analysed(recipe, &journal, &table, "test")
}

/// The analysis of `table` under `journal`, with no environment records and no profile.
pub fn analysed(
    recipe: &crate::recipe::Recipe,
    journal: &Journal,
    table: &SampleTable,
    directory: &str,
) -> Analysis {
    analyze_inputs(&Inputs {
        recipe,
        journal,
        samples: table,
        directory,
        journal_path: Path::new("journal.jsonl"),
        env_files: &BTreeSet::new(),
        env_records: &std::collections::BTreeMap::new(),
        profile: None,
        no_profile: false,
        accept_edited_limits: false,
    })
    .expect("analysable")
}

/// A measured workload that moves, a control that moves too, and an auxiliary one.
pub const ROLES_RECIPE: &str = r#"
version = 1
name = "roles"
description = "measured, control and auxiliary workloads"
sequence = ["a", "b", "a"]
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
[[workload]]
name = "main"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
[[workload]]
name = "ctl"
role = "control"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
[[workload]]
name = "side"
aux = true
run = "true"
metric = { number = true, unit = "ops/s", better = "higher" }
"#;

pub fn roles() -> crate::analysis::Analysis {
    let flat = |x: f64| [x, x * 1.001, x * 0.999];
    campaign(
        ROLES_RECIPE,
        &[
            ("a-a", "main", &flat(100.0)),
            ("b", "main", &flat(150.0)),
            ("a-b", "main", &flat(100.2)),
            ("a-a", "ctl", &flat(10.0)),
            ("b", "ctl", &flat(20.0)),
            ("a-b", "ctl", &flat(10.0)),
            ("a-a", "side", &flat(1000.0)),
            ("b", "side", &flat(500.0)),
            ("a-b", "side", &flat(1000.0)),
        ],
    )
}

/// A kernel built on the host as the journal records it: release `6.1.192-aba-lab`, build
/// `number` (its `#N` and time), a config whose normalised SHA-256 is `config`, made with
/// `compiler` and GNU ld 2.40, with `patch` (a mail with a Message-ID) when given.
pub fn host_build(
    number: u32,
    config: &str,
    compiler: &str,
    patch: Option<&str>,
) -> crate::build::record::KernelBuild {
    use crate::build::{
        inputs::{BuildInputs, PatchMessage, ReadFrom, Stated},
        record::{HostFile, KernelBuild},
        version::KernelVersion,
    };
    let file = |path: &str, sha: &str| HostFile {
        path: path.into(),
        sha256: sha.into(),
        bytes: 1,
    };
    KernelBuild {
        at: "b.toml:2:10".into(),
        version: KernelVersion::parse_proc(&format!(
            "Linux version 6.1.192-aba-lab (root@vm) #{number} Sun Dec  6 12:11:{number:02} UTC 2026"
        ))
        .expect("valid"),
        image: file("/b/bzImage", &format!("{number}")),
        initrd: None,
        modules: None,
        config: Some(file("/b/config", config)),
        install_dir: String::new(),
        source: None,
        patches: patch.map(|p| file(p, "pp")).into_iter().collect(),
        built: None,
        made_with: Some(BuildInputs {
            compiler: Some(Stated {
                value: compiler.into(),
                from: ReadFrom::Config,
            }),
            linker: Some(Stated {
                value: "GNU ld 2.40".into(),
                from: ReadFrom::Config,
            }),
            config_normalised_sha256: Some(config.into()),
            patch_messages: patch
                .map(|p| PatchMessage {
                    patch: p.into(),
                    message_id: "<1@x>".into(),
                })
                .into_iter()
                .collect(),
            ..BuildInputs::default()
        }),
    }
}
