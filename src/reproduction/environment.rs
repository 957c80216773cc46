//! The two environments side by side, fact by fact, each marked the same, different or
//! unknown: the differences a reviewer asks about first ("was it the same config, the same
//! governor?"). A fact one side does not record is unknown, never "different".

use crate::reproduction::{
    evidence::{Environment, KernelIdentity},
    model::{Agreement, EnvironmentRow},
};

/// One row per fact: target, CPU, each paired kernel's release, build and own command line,
/// the command line of every kernel, sysctls, tuning. `kernels` pairs the new campaign's
/// kernel labels with the reference's.
#[must_use]
pub fn rows(
    reference: &Environment,
    new: &Environment,
    kernels: &[(String, String)],
) -> Vec<EnvironmentRow> {
    let mut out = Vec::new();
    out.push(row("target", reference.target.clone(), new.target.clone()));
    out.push(row(
        "CPU",
        joined(&reference.cpu_models, "; "),
        joined(&new.cpu_models, "; "),
    ));
    for (new_label, reference_label) in kernels {
        let find = |env: &Environment, label: &str| -> Option<KernelIdentity> {
            env.kernels.iter().find(|k| k.label == label).cloned()
        };
        let (r, n) = (find(reference, reference_label), find(new, new_label));
        let name = if new_label == reference_label {
            new_label.clone()
        } else {
            format!("{new_label} ({reference_label})")
        };
        let field = |k: &Option<KernelIdentity>, get: fn(&KernelIdentity) -> &Vec<String>| {
            k.as_ref().and_then(|k| joined(get(k), ", "))
        };
        out.push(row(
            &format!("{name} release"),
            field(&r, |k| &k.releases),
            field(&n, |k| &k.releases),
        ));
        out.push(row(
            &format!("{name} build"),
            field(&r, |k| &k.builds),
            field(&n, |k| &k.builds),
        ));
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
    use super::rows;
    use crate::reproduction::{
        evidence::{Environment, KernelIdentity},
        model::Agreement,
    };

    fn kernel(label: &str, release: &str, build: &str) -> KernelIdentity {
        KernelIdentity {
            label: label.to_owned(),
            releases: vec![release.to_owned()],
            builds: vec![build.to_owned()],
            versions: Vec::new(),
            cmdline: Vec::new(),
        }
    }

    #[test]
    fn facts_are_same_different_or_unknown() {
        let reference = Environment {
            target: Some("lab1".into()),
            cpu_models: vec!["i7-12700KF".into()],
            kernels: vec![kernel("original", "7.2.0-orig", "config aa")],
            cmdline: Some(vec!["preempt=full".into(), "quiet".into()]),
            sysctls: Some(Vec::new()),
            tuning: None,
        };
        let new = Environment {
            target: Some("lab2".into()),
            cpu_models: Vec::new(),
            kernels: vec![kernel("a", "7.2.0-orig", "config bb")],
            cmdline: Some(vec!["quiet".into(), "preempt=full".into()]),
            sysctls: Some(Vec::new()),
            tuning: Some(vec!["governor=performance".into()]),
        };
        let rows = rows(&reference, &new, &[("a".into(), "original".into())]);
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
}
