//! Results directories are user data: a campaign an older aba reported and this one
//! re-reports may be judged differently, because the verdict rules changed (issue 28: the
//! compared kernels' boot spread no longer makes a comparison UNSTABLE unless the recipe
//! sets a drift gate, and NO_MATERIAL_SIGNAL must be earned). Before the reports are
//! rewritten, the verdicts of the `comparison.tsv` in the directory are read back; when it was
//! written under other rules, every verdict that moved is named at the top of report.txt and
//! README.md.
//!
//! The old file is a stranger's input: read no-follow and bounded, its fields escaped and cut
//! when printed, and a file that cannot be read or parsed only means nothing is said.

use std::{collections::BTreeMap, path::Path};

use crate::{
    analysis::Analysis,
    report::comparison_tsv::{HEADER, RULES},
};

/// The largest `comparison.tsv` read back: larger ones are skipped, not read.
const LIMIT: u64 = 64 << 20;

/// `(workload, case, metric, args)` of one verdict row of the `all` analysis.
type Key = (String, String, String, String);

/// One verdict the rules moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moved {
    /// `workload[case]/metric: b vs a`.
    pub what: String,
    /// The verdict written before.
    pub then: String,
    /// The verdict now.
    pub now: String,
}

/// The verdicts of the previous `comparison.tsv` in `root` that differ from `analysis`'s,
/// when that file was written under other rules; empty when it was written under these, is
/// absent, unreadable, or its rows do not parse.
#[must_use]
pub fn moved(root: &Path, analysis: &Analysis) -> Vec<Moved> {
    let Ok(text) = crate::input::read_text(&root.join("comparison.tsv"), LIMIT, "comparison")
    else {
        return Vec::new();
    };
    let Some((then, rules)) = verdicts(&text) else {
        return Vec::new();
    };
    if rules.as_deref() == Some(RULES) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for series in &analysis.series {
        let Some(all) = &series.all else { continue };
        for c in &all.comparisons {
            let key = (
                series.workload.clone(),
                series.case.clone(),
                series.metric.clone(),
                format!("{},{}", c.candidate, c.baseline),
            );
            if let Some(old) = then.get(&key)
                && *old != c.label
            {
                out.push(Moved {
                    what: format!("{}: {} vs {}", series.label, c.candidate, c.baseline),
                    then: crate::text::untrusted(old, crate::text::SHOWN_CHARS).into_owned(),
                    now: c.label.clone(),
                });
            }
        }
    }
    out
}

/// The `all` verdicts of a `comparison.tsv` and its `verdict_rules` value; `None` when the
/// header is not the one aba writes.
fn verdicts(text: &str) -> Option<(BTreeMap<Key, String>, Option<String>)> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split('\t').collect();
    if header[..] != HEADER[..] {
        return None;
    }
    let mut out = BTreeMap::new();
    let mut rules = None;
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let [
            workload,
            case,
            metric,
            _unit,
            "all",
            quantity,
            args,
            value,
            ..,
        ] = f[..]
        else {
            continue;
        };
        match quantity {
            "verdict" => {
                let key = (workload.into(), case.into(), metric.into(), args.into());
                out.insert(key, value.to_owned());
            }
            "verdict_rules" => rules = Some(value.to_owned()),
            _ => {}
        }
    }
    Some((out, rules))
}

/// The notice at the top of report.txt and README.md; empty when nothing moved.
#[must_use]
pub fn notice(moved: &[Moved]) -> String {
    if moved.is_empty() {
        return String::new();
    }
    let list: Vec<String> = moved
        .iter()
        .map(|m| format!("{} {} -> {}", m.what, m.then, m.now))
        .collect();
    format!(
        "The verdict rules changed since this directory was last reported (docs/statistics.md \
         §5: a compared kernel's boot spread is no longer a stability limit unless the recipe \
         sets max_drift_pct, and NO_MATERIAL_SIGNAL now needs the interval inside the gate). \
         Verdicts that moved: {}.",
        list.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::{HEADER, RULES, moved, notice};

    #[test]
    fn an_older_report_names_the_verdicts_the_new_rules_moved() {
        let analysis = crate::analysis::testkit::campaign(
            "version = 1\nname = \"r\"\ndescription = \"t\"\nsequence = [\"a\", \"b\", \"a\"]\n\
             warmup = 0\nsamples = 3\n[kernels.a]\nrelease = \"6.1.0-a\"\n\
             [kernels.b]\nrelease = \"6.1.0-b\"\n[[workload]]\nname = \"w\"\nrun = \"true\"\n\
             metric = { number = true, unit = \"ns\", better = \"lower\" }\n",
            &[
                ("a-a", "w", &[100.0, 100.1, 99.9]),
                ("b", "w", &[101.0, 101.1, 100.9]),
                ("a-b", "w", &[103.0, 103.1, 102.9]),
            ],
        );
        let now = &analysis.series[0].all.as_ref().expect("values").comparisons[0];
        let dir = tempfile::tempdir().expect("tempdir");
        let header = HEADER.join("\t");
        let row = |q: &str, v: &str| format!("w\t\tw\tns\tall\t{q}\tb,a\t{v}\tb,a\n");
        // Written by an older aba: no verdict_rules row, the old verdict UNSTABLE.
        let old = format!("{header}\n{}", row("verdict", "UNSTABLE"));
        std::fs::write(dir.path().join("comparison.tsv"), &old).expect("write");
        let m = moved(dir.path(), &analysis);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(
            (m[0].then.as_str(), m[0].now.as_str()),
            ("UNSTABLE", now.label.as_str())
        );
        assert!(notice(&m).contains(&format!("w: b vs a UNSTABLE -> {}", now.label)));
        // Written under these rules: nothing moved by the rules.
        let same = format!("{old}{}", row("verdict_rules", RULES));
        std::fs::write(dir.path().join("comparison.tsv"), same).expect("write");
        assert!(moved(dir.path(), &analysis).is_empty());
        // A link, garbage or no file: nothing is said, nothing fails.
        std::fs::remove_file(dir.path().join("comparison.tsv")).expect("rm");
        assert!(moved(dir.path(), &analysis).is_empty());
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("comparison.tsv")).expect("ln");
        assert!(moved(dir.path(), &analysis).is_empty());
    }
}
