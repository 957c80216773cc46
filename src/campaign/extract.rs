//! Reading numbers out of a workload's output and judging a run: the recipe's metrics (JSON
//! pointer, regex capture, "the output is one number", then divide/multiply) and checks
//! (expected exit status, regexes that must or must not match).
//!
//! Pure functions over bytes, so every failure mode is unit-tested here and the engine only
//! decides what a failure costs.

use crate::{
    recipe::{
        Metric,
        model::Stream,
        resolved::{Check, Extract},
    },
    target::transport::{CommandOutput, ExitOutcome},
};

/// Why a run does not count.
#[derive(Clone, Debug, PartialEq)]
pub enum RunFailure {
    /// The process did not exit as the recipe expects.
    Exit {
        /// What happened.
        outcome: ExitOutcome,
        /// What the recipe expects.
        expected: i32,
    },
    /// A `must_match` regex did not match.
    MissingMatch(String),
    /// A `must_not_match` regex matched.
    ForbiddenMatch {
        /// The regex.
        pattern: String,
        /// The matching line.
        line: String,
    },
    /// A metric could not be read.
    Unparsable {
        /// Metric name.
        metric: String,
        /// Why.
        reason: String,
    },
    /// The check passed on a kernel where the recipe says it must fail
    /// (`check.expect_fail`): that kernel already has what the change adds, or the check
    /// does not test it.
    UnexpectedPass {
        /// The kernel's label.
        kernel: String,
    },
    /// Any of the above, with a remark that explains it (the output was cut).
    Noted {
        /// The failure.
        failure: Box<RunFailure>,
        /// The remark.
        note: String,
    },
}

impl RunFailure {
    /// The same failure with `note` appended to its message.
    #[must_use]
    pub fn with_note(self, note: String) -> RunFailure {
        RunFailure::Noted {
            failure: Box::new(self),
            note,
        }
    }
}

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunFailure::Exit { outcome, expected } => {
                write!(f, "{outcome} (expected exit status {expected})")
            }
            RunFailure::MissingMatch(p) => {
                write!(f, "output does not match `{p}` (check.must_match)")
            }
            RunFailure::ForbiddenMatch { pattern, line } => {
                write!(
                    f,
                    "output matches `{pattern}` (check.must_not_match): {line}"
                )
            }
            RunFailure::Unparsable { metric, reason } => {
                write!(f, "cannot read metric `{metric}`: {reason}")
            }
            RunFailure::UnexpectedPass { kernel } => write!(
                f,
                "the check passed on kernel `{kernel}`, where it must fail (check.expect_fail): \
                 the kernel already has what the change adds, or the check does not test it"
            ),
            RunFailure::Noted { failure, note } => write!(f, "{failure}; {note}"),
        }
    }
}

/// Judges a finished run on `kernel` and extracts every metric, in the recipe's order.
///
/// Where the check must fail on `kernel` (`check.expect_fail`, check workloads only, which
/// have no metric), a run that fails a `must_match` or `must_not_match` is the expected
/// outcome and a run that passes them fails. The exit status must still be `exit`: a run
/// that crashed, timed out or could not set up proved nothing about the kernel, and counting
/// it as the expected failure would let a broken check pass.
pub fn evaluate(
    output: &CommandOutput,
    check: &Check,
    metrics: &[Metric],
    kernel: &str,
) -> Result<Vec<f64>, RunFailure> {
    let verdict = check_output(output, check);
    if check.must_fail_on(kernel) {
        return match verdict {
            Ok(()) => Err(RunFailure::UnexpectedPass {
                kernel: kernel.to_owned(),
            }),
            Err(RunFailure::MissingMatch(_) | RunFailure::ForbiddenMatch { .. }) => Ok(Vec::new()),
            Err(other) => Err(other),
        };
    }
    verdict?;
    let stdout = output.stdout_text();
    let stderr = output.stderr_text();
    metrics
        .iter()
        .map(|m| {
            let text = match m.stream {
                Stream::Stdout => &stdout,
                Stream::Stderr => &stderr,
            };
            extract(m, text).map_err(|reason| RunFailure::Unparsable {
                metric: m.name.to_string(),
                reason,
            })
        })
        .collect()
}

/// The run against `[workload.check]`: exit status, then `must_match`, then
/// `must_not_match`.
fn check_output(output: &CommandOutput, check: &Check) -> Result<(), RunFailure> {
    if output.outcome != ExitOutcome::Exited(check.exit) {
        return Err(RunFailure::Exit {
            outcome: output.outcome.clone(),
            expected: check.exit,
        });
    }
    let stdout = output.stdout_text();
    let stderr = output.stderr_text();
    for re in &check.must_match {
        if !re.is_match(&stdout) && !re.is_match(&stderr) {
            return Err(RunFailure::MissingMatch(re.as_str().to_owned()));
        }
    }
    for re in &check.must_not_match {
        for text in [&stdout, &stderr] {
            if let Some(m) = re.find(text) {
                let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
                let end = text[m.end()..]
                    .find('\n')
                    .map_or(text.len(), |i| m.end() + i);
                return Err(RunFailure::ForbiddenMatch {
                    pattern: re.as_str().to_owned(),
                    line: text[start..end].chars().take(200).collect(),
                });
            }
        }
    }
    Ok(())
}

/// Extracts one metric from one stream's text.
pub fn extract(metric: &Metric, text: &str) -> Result<f64, String> {
    read_number(&metric.extract, metric.divide, metric.multiply, text)
}

/// Reads one number from one stream's text the metric way: found by `how`, then divided by
/// `divide` and multiplied by `multiply` (a probe's values use it too).
pub fn read_number(how: &Extract, divide: f64, multiply: f64, text: &str) -> Result<f64, String> {
    let raw = match how {
        Extract::Number => {
            let t = text.trim();
            if t.is_empty() {
                return Err("the output is empty; `number = true` expects one number".to_owned());
            }
            parse_number(t)?
        }
        Extract::Regex(re) => {
            let caps = re
                .captures(text)
                .ok_or_else(|| format!("regex `{}` does not match the output", re.as_str()))?;
            let group = caps.name("value").or_else(|| caps.get(1)).ok_or_else(|| {
                format!(
                    "regex `{}` matched but its capture group did not",
                    re.as_str()
                )
            })?;
            parse_number(group.as_str().trim())?
        }
        Extract::Json(pointer) => {
            let doc: serde_json::Value = serde_json::from_str(text.trim())
                .map_err(|e| format!("the output is not one JSON document: {e}"))?;
            let node = doc
                .pointer(pointer)
                .ok_or_else(|| format!("JSON pointer `{pointer}` finds nothing"))?;
            match node {
                serde_json::Value::Number(n) => n
                    .as_f64()
                    .ok_or_else(|| format!("`{pointer}` is not representable as a number"))?,
                serde_json::Value::String(s) => parse_number(s.trim())?,
                other => return Err(format!("`{pointer}` is {other}, not a number")),
            }
        }
    };
    let value = raw / divide * multiply;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("the value {value} is not finite"))
    }
}

fn parse_number(text: &str) -> Result<f64, String> {
    let shown: String = text.chars().take(60).collect();
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("`{shown}` is not a finite number")),
        Err(_) => Err(format!("`{shown}` is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use regex::Regex;

    use super::{RunFailure, evaluate, extract};
    use crate::{
        recipe::{
            Metric,
            ident::MetricName,
            model::{BetterSpec, Stream},
            resolved::{Check, Extract},
        },
        target::transport::{CommandOutput, ExitOutcome},
    };

    fn metric(extract: Extract, divide: f64) -> Metric {
        Metric {
            name: MetricName::new("m").expect("valid"),
            extract,
            stream: Stream::Stdout,
            divide,
            multiply: 1.0,
            unit: "ns".into(),
            better: BetterSpec::Lower,
            limits: crate::recipe::resolved::LimitOverrides::default(),
        }
    }

    fn output(code: i32, stdout: &str) -> CommandOutput {
        CommandOutput {
            outcome: ExitOutcome::Exited(code),
            stdout: stdout.as_bytes().to_vec(),
            elapsed: Duration::from_millis(1),
            ..CommandOutput::default()
        }
    }

    #[test]
    fn json_pointer_with_division() {
        let m = metric(Extract::Json("/wall_ns".into()), 4096.0);
        let v = extract(&m, "{\"wall_ns\": 35008316, \"reads\": 4096}\n").expect("number");
        assert!((v - 35_008_316.0 / 4096.0).abs() < 1e-9);
        assert!(
            extract(&m, "{\"x\":1}")
                .expect_err("missing")
                .contains("finds nothing")
        );
        assert!(
            extract(&m, "garbage")
                .expect_err("bad")
                .contains("not one JSON document")
        );
    }

    #[test]
    fn regex_uses_named_or_first_group() {
        let out = "Finish up\nRan for 105278 times\nTotal wait time: 7.657703  (avg: 0.000072)\n";
        let ran = metric(
            Extract::Regex(Regex::new(r"Ran for (\d+) times").expect("re")),
            1.0,
        );
        assert_eq!(extract(&ran, out), Ok(105_278.0));
        let wait = metric(
            Extract::Regex(Regex::new(r"wait time: (?P<value>[0-9.]+)").expect("re")),
            1.0,
        );
        assert_eq!(extract(&wait, out), Ok(7.657_703));
    }

    #[test]
    fn whole_output_number() {
        let m = metric(Extract::Number, 1.0);
        assert_eq!(extract(&m, " 42.5\n"), Ok(42.5));
        assert!(extract(&m, "").is_err());
        assert!(
            extract(&m, "NaN")
                .expect_err("nan")
                .contains("not a finite number")
        );
        assert!(extract(&m, "4 2").is_err());
    }

    #[test]
    fn checks_run_before_metrics() {
        let m = [metric(Extract::Number, 1.0)];
        let check = Check {
            exit: 0,
            must_match: vec![Regex::new("RESULT: PASS").expect("re")],
            must_not_match: vec![Regex::new("WARNING").expect("re")],
            expect_fail: Vec::new(),
        };
        assert_eq!(
            evaluate(&output(1, "1"), &check, &m, "a"),
            Err(RunFailure::Exit {
                outcome: ExitOutcome::Exited(1),
                expected: 0
            })
        );
        assert!(matches!(
            evaluate(&output(0, "1"), &check, &m, "a"),
            Err(RunFailure::MissingMatch(_))
        ));
        let bad = evaluate(&output(0, "RESULT: PASS\nWARNING: x\n"), &check, &m, "a");
        assert!(
            matches!(bad, Err(RunFailure::ForbiddenMatch { ref line, .. }) if line == "WARNING: x")
        );
    }

    #[test]
    fn a_check_that_must_fail_on_a_kernel_fails_when_it_passes_there() {
        let check = Check {
            exit: 0,
            must_match: vec![Regex::new("RESULT: PASS").expect("re")],
            must_not_match: Vec::new(),
            expect_fail: vec![crate::recipe::ident::KernelLabel::new("a").expect("valid")],
        };
        // On `a` a failed check is the expected outcome, a pass is a failure of the run.
        assert_eq!(
            evaluate(&output(0, "RESULT: FAIL"), &check, &[], "a"),
            Ok(Vec::new())
        );
        // A run that did not exit as `exit` says never proves the failure.
        assert!(matches!(
            evaluate(&output(1, "RESULT: FAIL"), &check, &[], "a"),
            Err(RunFailure::Exit { .. })
        ));
        let pass = evaluate(&output(0, "RESULT: PASS"), &check, &[], "a");
        assert_eq!(pass, Err(RunFailure::UnexpectedPass { kernel: "a".into() }));
        assert!(
            pass.expect_err("fails")
                .to_string()
                .contains("the check passed on kernel `a`, where it must fail"),
        );
        // A timeout proves nothing about the kernel.
        let mut hung = output(0, "");
        hung.outcome = ExitOutcome::TimedOut;
        assert!(matches!(
            evaluate(&hung, &check, &[], "a"),
            Err(RunFailure::Exit { .. })
        ));
        // On `b` it must pass as usual.
        assert_eq!(
            evaluate(&output(0, "RESULT: PASS"), &check, &[], "b"),
            Ok(Vec::new())
        );
        assert!(evaluate(&output(1, "RESULT: FAIL"), &check, &[], "b").is_err());
    }
}
