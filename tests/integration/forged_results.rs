//! Forged results directories, bundles and manifests (issue 30): property tests that feed
//! generated ones to `report`, `compare`, `verify` and `status` in a scratch root. Whatever
//! they hold (control characters and long text in the journal, broken or linked samples,
//! links planted where reports are written, a hand-made manifest, a bundle of random
//! columns), aba answers without a panic, prints no raw control character, and changes
//! nothing outside the results directory (the root's listing, a 0600 file that links name).

use std::path::Path;

use proptest::prelude::*;

use crate::hostile::{Root, mkfifo, results_dir};

/// Text from someone else: printable characters, every C0 control, DEL and a C1 one.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~\\x00-\\x1f\\x7f\u{9b}é]{0,40}",
        ("[\\x1b\\x07A-Z]{1,4}", 300..1200usize).prop_map(|(s, n)| s.repeat(n / s.len().max(1))),
    ]
}

/// What happens to samples.csv.
#[derive(Clone, Debug)]
enum Samples {
    Kept,
    Cut(usize),
    Garbage(String),
    Missing,
    Fifo,
    LinkToVictim,
}

fn samples() -> impl Strategy<Value = Samples> {
    prop_oneof![
        Just(Samples::Kept),
        (0..3000usize).prop_map(Samples::Cut),
        hostile_text().prop_map(Samples::Garbage),
        Just(Samples::Missing),
        Just(Samples::Fifo),
        Just(Samples::LinkToVictim),
    ]
}

/// Names at which a link to the victim is planted in the results directory.
const PLANTED: [&str; 6] = [
    "report.txt",
    "README.md",
    "points.tsv",
    "reproduction.txt",
    ".samples.svg.tmp-1",
    "env",
];

/// One forged campaign directory and bundle.
#[derive(Clone, Debug)]
struct Forged {
    header: (String, String),
    stopped: Option<String>,
    samples: Samples,
    planted: Vec<bool>,
    manifest: Option<(String, String)>,
    bundle_header: Vec<String>,
    bundle_rows: Vec<Vec<String>>,
}

fn forged() -> impl Strategy<Value = Forged> {
    let column = prop_oneof![
        Just("order".to_owned()),
        Just("point".to_owned()),
        Just("role".to_owned()),
        Just("n".to_owned()),
        Just("values".to_owned()),
        "mean_[a-z_]{1,8}",
        "values_[a-z_]{1,8}",
        hostile_text(),
    ];
    let cell = prop_oneof!["[0-9]{1,3}", "[0-9. ]{1,12}", hostile_text()];
    (
        (hostile_text(), hostile_text()),
        prop::option::of(hostile_text()),
        samples(),
        prop::collection::vec(any::<bool>(), PLANTED.len()),
        prop::option::of((hostile_text(), "[a-z./]{0,12}")),
        prop::collection::vec(column, 1..8),
        prop::collection::vec(prop::collection::vec(cell, 1..8), 0..4),
    )
        .prop_map(
            |(header, stopped, samples, planted, manifest, bundle_header, bundle_rows)| Forged {
                header,
                stopped,
                samples,
                planted,
                manifest,
                bundle_header,
                bundle_rows,
            },
        )
}

/// Writes `forged` into `root`: `results/sent` (a campaign) and `results/bundle`.
fn build(root: &Root, forged: &Forged, victim: &Path) {
    let dir = results_dir(root);
    let path = dir.join("journal.jsonl");
    let journal = std::fs::read_to_string(&path).expect("journal");
    let mut lines: Vec<String> = journal.lines().map(str::to_owned).collect();
    let mut header: serde_json::Value = serde_json::from_str(&lines[0]).expect("header");
    header["aba"] = forged.header.0.clone().into();
    header["target"] = forged.header.1.clone().into();
    lines[0] = header.to_string();
    if let Some(reason) = &forged.stopped {
        lines.retain(|l| !l.contains("\"event\":\"finished\""));
        lines.push(
            serde_json::json!({"event": "stopped", "reason": reason, "time": "2026-07-20T00:10:00Z"})
                .to_string(),
        );
    }
    std::fs::write(&path, lines.join("\n") + "\n").expect("journal");
    let samples = dir.join("samples.csv");
    match &forged.samples {
        Samples::Kept => {}
        Samples::Cut(n) => {
            let data = std::fs::read(&samples).expect("samples");
            std::fs::write(&samples, &data[..(*n).min(data.len())]).expect("cut");
        }
        Samples::Garbage(text) => {
            let mut data = std::fs::read_to_string(&samples).expect("samples");
            data.push_str(text);
            data.push('\n');
            std::fs::write(&samples, data).expect("garbage");
        }
        Samples::Missing => std::fs::remove_file(&samples).expect("rm"),
        Samples::Fifo => {
            std::fs::remove_file(&samples).expect("rm");
            mkfifo(&samples);
        }
        Samples::LinkToVictim => {
            std::fs::remove_file(&samples).expect("rm");
            std::os::unix::fs::symlink(victim, &samples).expect("ln");
        }
    }
    for (name, plant) in PLANTED.iter().zip(&forged.planted) {
        if *plant {
            std::os::unix::fs::symlink(victim, dir.join(name)).expect("ln");
        }
    }
    if let Some((target, sub)) = &forged.manifest {
        let manifest = serde_json::json!({
            "format": 1, "recipe": "x", "created": "2026-07-20T00:00:00Z", "aba_version": "0",
            "targets": [{"target": target, "dir": sub}],
        });
        std::fs::write(dir.join("targets.json"), manifest.to_string()).expect("manifest");
    }
    let bundle = root.path().join("results/bundle");
    std::fs::create_dir_all(&bundle).expect("mkdir");
    let mut table = forged.bundle_header.join("\t") + "\n";
    for row in &forged.bundle_rows {
        table.push_str(&row.join("\t"));
        table.push('\n');
    }
    std::fs::write(bundle.join("x-points.tsv"), table).expect("bundle");
}

/// A raw control character other than the newline in `text`, if any.
fn raw_control(text: &str) -> Option<char> {
    text.chars().find(|c| c.is_control() && *c != '\n')
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn forged_results_directories_are_answered_safely(forged in forged()) {
        let root = Root::new();
        let victim = root.write("outside/victim", "the tester's secret\n");
        build(&root, &forged, &victim);
        for args in [
            &["report", "results/sent"][..],
            &["status", "results/sent"],
            &["verify", "results/sent"],
            &["compare", "results/sent", "results/bundle"],
        ] {
            // Checks no panic, bounded memory and time, and nothing changed outside results/.
            let ran = root.aba(args);
            for (what, text) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
                prop_assert!(
                    raw_control(text).is_none(),
                    "{:?}: raw {:?} on {}: {}",
                    args,
                    raw_control(text),
                    what,
                    ran.text()
                );
            }
            prop_assert_eq!(
                std::fs::read_to_string(&victim).expect("victim"),
                "the tester's secret\n"
            );
        }
    }
}
