//! `aba resume DIR --amend RECIPE`: a campaign stopped by its own recipe (a kernel parameter
//! the kernel refuses, a wrong release) is fixed and continued, instead of started over.
//!
//! Only what no finished point used may change: the definition of a kernel none of whose
//! points is done (release, image, initrd, its command line), or anything at all while no
//! point is done. The analysis (`[analysis]`, the limits workloads and metrics set,
//! `[[expect]]`) and the sequence never change: a limit moved after the data came in is not a
//! preregistered limit. Every amendment is journaled with what changed, and the reports show
//! it at the top.

use std::collections::BTreeSet;

use thiserror::Error;

use crate::recipe::{Recipe, resolved::point_labels};

/// Why an amendment is refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AmendError {
    /// The boot order or the kernels it names changed.
    #[error("the sequence changed ({old} before, {new} now): that is another experiment")]
    Sequence {
        /// Before.
        old: String,
        /// Now.
        new: String,
    },
    /// `[analysis]` or `[[expect]]` changed.
    #[error(
        "{what} changed: the analysis is fixed before the first sample (preregistered), so it cannot be amended"
    )]
    Analysis {
        /// Which part.
        what: String,
    },
    /// Something a finished point used changed.
    #[error("{what} changed, but point `{point}` is finished and was measured with the old one")]
    FinishedPoint {
        /// The finished point.
        point: String,
        /// What changed.
        what: String,
    },
    /// Nothing changed.
    #[error("the amended recipe is the same as the campaign's")]
    Unchanged,
}

/// What `new` changes against `old`, in words, when only unfinished points use it.
/// `done` holds the labels of the finished points.
pub fn amendment(
    old: &Recipe,
    new: &Recipe,
    done: &BTreeSet<String>,
) -> Result<Vec<String>, AmendError> {
    if old.sequence != new.sequence {
        let show = |r: &Recipe| {
            r.sequence
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("-")
        };
        return Err(AmendError::Sequence {
            old: show(old),
            new: show(new),
        });
    }
    if format!("{:?}", old.analysis) != format!("{:?}", new.analysis) {
        return Err(AmendError::Analysis {
            what: "[analysis]".to_owned(),
        });
    }
    // The limits workloads and metrics set are preregistered like `[analysis]`'s.
    if crate::results::journal::Limits::of(old).scoped
        != crate::results::journal::Limits::of(new).scoped
    {
        return Err(AmendError::Analysis {
            what: "a workload's or metric's verdict limits".to_owned(),
        });
    }
    let expected = |r: &Recipe| {
        format!(
            "{:?} {:?}",
            r.expect,
            r.reference.as_ref().map(|r| &r.written)
        )
    };
    if expected(old) != expected(new) {
        return Err(AmendError::Analysis {
            what: "[[expect]]".to_owned(),
        });
    }
    let labels = point_labels(&old.sequence);
    // The first finished point that used something, for the message.
    let finished_with = |kernel: Option<&str>| -> Option<String> {
        labels
            .iter()
            .zip(&old.sequence)
            .find(|(label, k)| {
                done.contains(*label) && kernel.is_none_or(|want| k.as_str() == want)
            })
            .map(|(label, _)| label.clone())
    };
    let mut changes = Vec::new();
    for (what, before, after) in shared_parts(old, new) {
        if before == after {
            continue;
        }
        if let Some(point) = finished_with(None) {
            return Err(AmendError::FinishedPoint { point, what });
        }
        changes.push(what);
    }
    for (label, kernel) in &old.kernels {
        let before = format!("{kernel:?}");
        let after = new.kernels.get(label).map(|k| format!("{k:?}"));
        if after.as_deref() == Some(before.as_str()) {
            continue;
        }
        let what = match new.kernels.get(label) {
            Some(k) => describe_kernel(kernel, k),
            None => format!("kernel `{label}` was removed"),
        };
        if let Some(point) = finished_with(Some(label.as_str())) {
            return Err(AmendError::FinishedPoint { point, what });
        }
        changes.push(what);
    }
    if changes.is_empty() && old.description == new.description {
        return Err(AmendError::Unchanged);
    }
    if old.description != new.description {
        changes.push("the description".to_owned());
    }
    Ok(changes)
}

/// The parts of a recipe every point uses, as comparable text: (name, before, after).
fn shared_parts(old: &Recipe, new: &Recipe) -> Vec<(String, String, String)> {
    let files = |r: &Recipe| -> String {
        r.files
            .iter()
            .map(|f| {
                let digest = std::fs::read(&f.local)
                    .map(|d| {
                        use sha2::Digest as _;
                        hex::encode(sha2::Sha256::digest(d))
                    })
                    .unwrap_or_default();
                format!("{}={digest}", f.remote)
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    vec![
        (
            "[boot] cmdline".to_owned(),
            format!("{:?}", old.boot_cmdline),
            format!("{:?}", new.boot_cmdline),
        ),
        (
            "settle".to_owned(),
            format!("{:?}", old.settle),
            format!("{:?}", new.settle),
        ),
        (
            "[sysctl]".to_owned(),
            format!("{:?}", old.sysctls),
            format!("{:?}", new.sysctls),
        ),
        (
            "[tuning]".to_owned(),
            format!("{:?}", old.tuning),
            format!("{:?}", new.tuning),
        ),
        ("[files]".to_owned(), files(old), files(new)),
        (
            "[setup]".to_owned(),
            format!("{:?}", old.setup),
            format!("{:?}", new.setup),
        ),
        (
            "[teardown]".to_owned(),
            format!("{:?}", old.teardown),
            format!("{:?}", new.teardown),
        ),
        (
            "the workloads".to_owned(),
            format!("{:?}", old.workloads),
            format!("{:?}", new.workloads),
        ),
        (
            "the probes".to_owned(),
            format!("{:?}", old.probes),
            format!("{:?}", new.probes),
        ),
        (
            "point_retries".to_owned(),
            old.point_retries.to_string(),
            new.point_retries.to_string(),
        ),
    ]
}

fn describe_kernel(old: &crate::recipe::Kernel, new: &crate::recipe::Kernel) -> String {
    let mut parts = Vec::new();
    if old.release != new.release {
        parts.push(format!("release {} → {}", old.release, new.release));
    }
    if old.image != new.image {
        parts.push(format!("image {} → {}", old.image, new.image));
    }
    if old.initrd != new.initrd {
        parts.push(format!("initrd {} → {}", old.initrd, new.initrd));
    }
    if old.cmdline != new.cmdline {
        parts.push(format!(
            "cmdline `{}` → `{}`",
            old.cmdline.join(" "),
            new.cmdline.join(" ")
        ));
    }
    if parts.is_empty() {
        parts.push("its definition".to_owned());
    }
    format!("kernel `{}`: {}", old.label, parts.join(", "))
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, path::Path};

    use super::{AmendError, amendment};
    use crate::recipe::{Recipe, parse};

    const RECIPE: &str = r#"
version = 1
name = "amend"
description = "d"
sequence = ["a", "b", "a"]
samples = 3
[kernels.a]
release = "ra"
[kernels.b]
release = "rb"
cmdline = "panic=0 bad.param=1"
[[workload]]
name = "w"
run = "x"
metric = { number = true, better = "lower" }
[analysis]
baseline = "a"
max_drift_pct = 1.0
"#;

    fn recipe(text: &str) -> Recipe {
        parse(Path::new("r.toml"), text).expect("valid recipe")
    }

    fn done(points: &[&str]) -> BTreeSet<String> {
        points.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn an_unfinished_kernels_cmdline_may_change() {
        let old = recipe(RECIPE);
        let new = recipe(&RECIPE.replace("panic=0 bad.param=1", "panic=0"));
        assert_eq!(
            amendment(&old, &new, &done(&["a-a"])),
            Ok(vec![
                "kernel `b`: cmdline `panic=0 bad.param=1` → `panic=0`".to_owned()
            ])
        );
    }

    #[test]
    fn what_a_finished_point_used_and_the_analysis_may_not() {
        let old = recipe(RECIPE);
        let a_changed = recipe(&RECIPE.replace("release = \"ra\"", "release = \"ra2\""));
        assert!(matches!(
            amendment(&old, &a_changed, &done(&["a-a"])),
            Err(AmendError::FinishedPoint { point, .. }) if point == "a-a"
        ));
        let workload = recipe(&RECIPE.replace("run = \"x\"", "run = \"y\""));
        assert!(matches!(
            amendment(&old, &workload, &done(&["a-a"])),
            Err(AmendError::FinishedPoint { .. })
        ));
        // Before any point finished, the workloads may change too.
        assert_eq!(
            amendment(&old, &workload, &done(&[])),
            Ok(vec!["the workloads".to_owned()])
        );
        let limits = recipe(&RECIPE.replace("max_drift_pct = 1.0", "max_drift_pct = 5.0"));
        assert!(matches!(
            amendment(&old, &limits, &done(&[])),
            Err(AmendError::Analysis { .. })
        ));
        let scoped = recipe(&RECIPE.replace("run = \"x\"", "run = \"x\"\nmax_cv_pct = 9.0"));
        assert!(matches!(
            amendment(&old, &scoped, &done(&[])),
            Err(AmendError::Analysis { what }) if what.contains("verdict limits")
        ));
        let order =
            recipe(&RECIPE.replace("[\"a\", \"b\", \"a\"]", "[\"a\", \"b\", \"a\", \"b\"]"));
        assert!(matches!(
            amendment(&old, &order, &done(&[])),
            Err(AmendError::Sequence { .. })
        ));
        assert_eq!(
            amendment(&old, &old, &done(&[])),
            Err(AmendError::Unchanged)
        );
    }
}
