//! Untimed correctness workloads (`role = "check"`): what each proved on each kernel.
//!
//! A check has no metric, so no series and no verdict. Its runs are judged by the engine
//! (`campaign::extract::evaluate`): a run whose check does not have the expected outcome on
//! the point's kernel (pass, or fail its regexes where `check.expect_fail` names the kernel)
//! fails, and
//! after its retries fails the point. So a done point is the proof that every run of the
//! check had the expected outcome there, and a point that is not done proves nothing; why
//! it failed is in the run audit.

use crate::{
    analysis::model::{CheckOutcome, Expected, KernelCheck, PointInfo},
    recipe::Recipe,
};

/// The outcome of every check workload of `recipe` over `points`.
#[must_use]
pub fn check_outcomes(recipe: &Recipe, points: &[PointInfo]) -> Vec<CheckOutcome> {
    let mut kernels: Vec<&str> = Vec::new();
    for p in points {
        if !kernels.contains(&p.kernel.as_str()) {
            kernels.push(&p.kernel);
        }
    }
    recipe
        .workloads
        .iter()
        .filter(|w| w.is_check())
        .map(|w| CheckOutcome {
            workload: w.name.to_string(),
            kernels: kernels
                .iter()
                .filter(|k| w.runs_on(k))
                .map(|k| {
                    let of = |done: bool| {
                        points
                            .iter()
                            .filter(|p| p.kernel == *k && p.done_attempt.is_some() == done)
                            .map(|p| p.label.clone())
                            .collect()
                    };
                    KernelCheck {
                        kernel: (*k).to_owned(),
                        expected: if w.check.must_fail_on(k) {
                            Expected::Fail
                        } else {
                            Expected::Pass
                        },
                        held_at: of(true),
                        unproven_at: of(false),
                    }
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::check_outcomes;
    use crate::{
        analysis::{
            model::{Expected, PointInfo},
            testkit::ROLES_RECIPE,
        },
        recipe::parse,
    };

    #[test]
    fn a_done_point_holds_the_expected_outcome_and_one_not_done_proves_nothing() {
        // The roles campaign (kernels a and b) with a check that must fail on a.
        let text = format!(
            "{ROLES_RECIPE}[[workload]]\nname = \"mode\"\nrole = \"check\"\nrun = \"./mode\"\n\
             check = {{ must_match = [\"mode: custom\"], expect_fail = [\"a\"] }}\n"
        );
        let recipe = parse(Path::new("r.toml"), &text).expect("valid");
        let point = |order: usize, label: &str, kernel: &str, done: bool| PointInfo {
            order,
            label: label.into(),
            kernel: kernel.into(),
            done_attempt: done.then_some(1),
            boot_id: None,
            release: None,
            cmdline: None,
        };
        let points = [
            point(1, "a-a", "a", true),
            point(2, "b", "b", false),
            point(3, "a-b", "a", true),
        ];
        let outcomes = check_outcomes(&recipe, &points);
        assert_eq!(outcomes.len(), 1, "the timed workloads are no checks");
        let c = &outcomes[0];
        assert_eq!(c.workload, "mode");
        assert_eq!(c.kernels[0].expected, Expected::Fail);
        assert_eq!(c.kernels[0].held_at, ["a-a", "a-b"]);
        assert_eq!(c.kernels[1].expected, Expected::Pass);
        assert!(c.kernels[1].held_at.is_empty());
        assert_eq!(c.kernels[1].unproven_at, ["b"]);
    }
}
