//! The two environments side by side, fact by fact, each marked the same, different or
//! unknown: the differences a reviewer asks about first ("was it the same config, the same
//! governor?"). A fact one side does not record is unknown, never "different".

use crate::reproduction::{
    evidence::{BuildId, Environment, KernelIdentity},
    model::{Agreement, EnvironmentRow},
};

/// A kernel of the new campaign and the reference's kernel it was compared with, in the
/// reference's experiment when the reference is a bundle (whose experiments may give one role
/// name to different builds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelPair {
    /// The new campaign's label.
    pub new: String,
    /// The reference's label.
    pub reference: String,
    /// The reference's experiment, `None` for a results directory.
    pub experiment: Option<String>,
}

/// One row per fact: target, CPU, each paired kernel's release, build, preemption, compiler
/// and own command line, the command line of every kernel, sysctls, tuning.
#[must_use]
pub fn rows(
    reference: &Environment,
    new: &Environment,
    kernels: &[KernelPair],
) -> Vec<EnvironmentRow> {
    let mut out = Vec::new();
    out.push(row("target", reference.target.clone(), new.target.clone()));
    out.push(row(
        "CPU",
        joined(&reference.cpu_models, "; "),
        joined(&new.cpu_models, "; "),
    ));
    for pair in kernels {
        let r = reference
            .kernels
            .iter()
            .find(|k| {
                k.label == pair.reference
                    && (pair.experiment.is_none() || k.experiment == pair.experiment)
            })
            .cloned();
        let n = new.kernels.iter().find(|k| k.label == pair.new).cloned();
        let name = match (&pair.experiment, pair.new == pair.reference) {
            (None, true) => pair.new.clone(),
            (None, false) => format!("{} ({})", pair.new, pair.reference),
            (Some(e), true) => format!("{} ({e})", pair.new),
            (Some(e), false) => format!("{} ({e}: {})", pair.new, pair.reference),
        };
        let field = |k: &Option<KernelIdentity>, get: fn(&KernelIdentity) -> &Vec<String>| {
            k.as_ref().and_then(|k| joined(get(k), ", "))
        };
        out.push(row(
            &format!("{name} release"),
            field(&r, |k| &k.releases),
            field(&n, |k| &k.releases),
        ));
        let builds =
            |k: &Option<KernelIdentity>| k.as_ref().map(|k| k.builds.clone()).unwrap_or_default();
        out.push(build_row(
            &format!("{name} build"),
            &builds(&r),
            &builds(&n),
        ));
        for (what, get) in [
            (
                "preemption",
                (|k: &KernelIdentity| &k.preemption) as fn(&KernelIdentity) -> &Vec<String>,
            ),
            ("compiler", |k: &KernelIdentity| &k.compilers),
        ] {
            let (rv, nv) = (field(&r, get), field(&n, get));
            if rv.is_some() || nv.is_some() {
                out.push(row(&format!("{name} {what}"), rv, nv));
            }
        }
        let own = |k: &Option<KernelIdentity>| k.as_ref().map(|k| k.cmdline.join(" "));
        if own(&r).is_some_and(|c| !c.is_empty()) || own(&n).is_some_and(|c| !c.is_empty()) {
            out.push(row(&format!("{name} command line"), own(&r), own(&n)));
        }
    }
    let listed = |v: &Option<Vec<String>>, sep: &str| v.as_ref().map(|v| v.join(sep));
    out.push(row(
        "command line",
        listed(&reference.cmdline, " "),
        listed(&new.cmdline, " "),
    ));
    out.push(row(
        "sysctls",
        listed(&reference.sysctls, " "),
        listed(&new.sysctls, " "),
    ));
    out.push(row(
        "tuning",
        listed(&reference.tuning, " "),
        listed(&new.tuning, " "),
    ));
    out
}

/// The build identities of one kernel on both sides: compared kind by kind (a git commit
/// with a git commit, a config hash with a config hash of the same kind); when the two sides
/// recorded no kind in common the row is [`Agreement::NotComparable`], never "differs".
fn build_row(what: &str, reference: &[BuildId], new: &[BuildId]) -> EnvironmentRow {
    let shown = |ids: &[BuildId]| {
        (!ids.is_empty()).then(|| {
            ids.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let compared: Vec<bool> = reference
        .iter()
        .filter_map(|r| {
            let same_kind: Vec<bool> = new.iter().filter_map(|n| r.same_as(n)).collect();
            (!same_kind.is_empty()).then(|| same_kind.contains(&true))
        })
        .chain(new.iter().filter_map(|n| {
            let same_kind: Vec<bool> = reference.iter().filter_map(|r| n.same_as(r)).collect();
            (!same_kind.is_empty()).then(|| same_kind.contains(&true))
        }))
        .collect();
    let agreement = if reference.is_empty() || new.is_empty() {
        Agreement::Unknown
    } else if compared.is_empty() {
        Agreement::NotComparable
    } else if compared.iter().all(|same| *same) {
        Agreement::Same
    } else {
        Agreement::Differs
    };
    EnvironmentRow {
        what: what.to_owned(),
        reference: shown(reference),
        new: shown(new),
        agreement,
    }
}

/// `items` joined, `None` when there are none (nothing recorded).
fn joined(items: &[String], separator: &str) -> Option<String> {
    (!items.is_empty()).then(|| items.join(separator))
}

fn row(what: &str, reference: Option<String>, new: Option<String>) -> EnvironmentRow {
    // Word order is not a difference: `quiet ro` is the command line `ro quiet`.
    let words = |s: &str| {
        let mut w: Vec<&str> = s.split_whitespace().collect();
        w.sort_unstable();
        w.join(" ")
    };
    let agreement = match (&reference, &new) {
        (Some(r), Some(n)) if words(r) == words(n) => Agreement::Same,
        (Some(_), Some(_)) => Agreement::Differs,
        _ => Agreement::Unknown,
    };
    EnvironmentRow {
        what: what.to_owned(),
        reference,
        new,
        agreement,
    }
}

#[cfg(test)]
mod tests {
    use super::{KernelPair, rows};
    use crate::reproduction::{
        evidence::{BuildId, Environment, KernelIdentity},
        model::Agreement,
    };

    fn kernel(label: &str, release: &str, build: BuildId) -> KernelIdentity {
        KernelIdentity {
            label: label.to_owned(),
            experiment: None,
            releases: vec![release.to_owned()],
            builds: vec![build],
            preemption: Vec::new(),
            compilers: Vec::new(),
            versions: Vec::new(),
            cmdline: Vec::new(),
        }
    }

    fn pair(new: &str, reference: &str, experiment: Option<&str>) -> KernelPair {
        KernelPair {
            new: new.to_owned(),
            reference: reference.to_owned(),
            experiment: experiment.map(str::to_owned),
        }
    }

    #[test]
    fn facts_are_same_different_or_unknown() {
        let reference = Environment {
            target: Some("lab1".into()),
            cpu_models: vec!["i7-12700KF".into()],
            kernels: vec![kernel(
                "original",
                "7.2.0-orig",
                BuildId::ConfigSha256("aa".into()),
            )],
            cmdline: Some(vec!["preempt=full".into(), "quiet".into()]),
            sysctls: Some(Vec::new()),
            tuning: None,
        };
        let new = Environment {
            target: Some("lab2".into()),
            cpu_models: Vec::new(),
            kernels: vec![kernel(
                "a",
                "7.2.0-orig",
                BuildId::ConfigSha256("bb".into()),
            )],
            cmdline: Some(vec!["quiet".into(), "preempt=full".into()]),
            sysctls: Some(Vec::new()),
            tuning: Some(vec!["governor=performance".into()]),
        };
        let rows = rows(&reference, &new, &[pair("a", "original", None)]);
        let got: Vec<(&str, Agreement)> = rows
            .iter()
            .map(|r| (r.what.as_str(), r.agreement))
            .collect();
        assert_eq!(
            got,
            [
                ("target", Agreement::Differs),
                ("CPU", Agreement::Unknown),
                ("a (original) release", Agreement::Same),
                ("a (original) build", Agreement::Differs),
                ("command line", Agreement::Same),
                ("sysctls", Agreement::Same),
                ("tuning", Agreement::Unknown),
            ]
        );
    }

    /// Issue 29 item 5: a bundle's git commit against the new side's config hash is not
    /// comparable; two experiments' `parent` are never merged; the preemption a bundle
    /// records is shown.
    #[test]
    fn builds_compare_like_with_like_and_experiments_stay_apart() {
        let mut exact = kernel(
            "parent",
            "6.16-p",
            BuildId::GitCommit("45199f715b74aa".into()),
        );
        exact.experiment = Some("exact".into());
        exact.preemption = vec!["dynamic/none".into()];
        let mut other = kernel("parent", "7.1-q", BuildId::GitCommit("19999e479c2a".into()));
        other.experiment = Some("other".into());
        let reference = Environment {
            kernels: vec![other, exact],
            ..Environment::default()
        };
        let new = Environment {
            kernels: vec![kernel("a", "6.16-p", BuildId::ConfigSha256("66".into()))],
            ..Environment::default()
        };
        let rows = rows(&reference, &new, &[pair("a", "parent", Some("exact"))]);
        let find = |what: &str| rows.iter().find(|r| r.what == what).expect(what);
        assert_eq!(find("a (exact: parent) release").agreement, Agreement::Same);
        let build = find("a (exact: parent) build");
        assert_eq!(build.agreement, Agreement::NotComparable);
        assert_eq!(build.reference.as_deref(), Some("commit 45199f715b74aa"));
        let preemption = find("a (exact: parent) preemption");
        assert_eq!(
            (preemption.reference.as_deref(), preemption.agreement),
            (Some("dynamic/none"), Agreement::Unknown)
        );
        // The same kind is compared; an abbreviated commit is the same commit.
        let mut new = new;
        new.kernels[0]
            .builds
            .push(BuildId::GitCommit("45199F7".into()));
        let rows = super::rows(&reference, &new, &[pair("a", "parent", Some("exact"))]);
        let build = rows
            .iter()
            .find(|r| r.what.ends_with("build"))
            .expect("build");
        assert_eq!(build.agreement, Agreement::Same);
        new.kernels[0].builds = vec![
            BuildId::GitCommit("1999".into()),
            BuildId::GitCommit("deadbeef0".into()),
        ];
        let rows = super::rows(&reference, &new, &[pair("a", "parent", Some("exact"))]);
        let build = rows
            .iter()
            .find(|r| r.what.ends_with("build"))
            .expect("build");
        assert_eq!(build.agreement, Agreement::Differs);
    }
}
