//! `run-audit.tsv`: one row per point attempt (done, failed, discarded or unfinished) with
//! its boot, command line, tuning read-back, row counts, failed and retried runs, kernel
//! warnings and failed units; then `note` rows (point `-`) for what belongs to no attempt:
//! rejected rows, campaign warnings, partial last lines, a boot shared by every point.
//! `point` is the identifier of journal.jsonl; the last column, `point_name`, is how the
//! reports show it (`a#1`, [`crate::point_name`]), last so that older readers' columns stay.

use serde::Serialize;

use crate::{
    analysis::{Analysis, AttemptAudit, RunIssue},
    point_name::point_name,
    report::{number::tsv, tsv::to_tsv},
};

/// The columns.
pub const HEADER: [&str; 27] = [
    "order",
    "point",
    "attempt",
    "kernel",
    "outcome",
    "reason",
    "boot_id",
    "release",
    "cmdline",
    "switch_s",
    "login_s",
    "tuning",
    "skipped_knobs",
    "samples_ok",
    "warmups_ok",
    "rows_failed",
    "rows_discarded",
    "failed_runs",
    "retried_runs",
    "left_behind",
    "output_cut",
    "dmesg_warnings",
    "failed_units",
    "connection_lost",
    "warnings",
    "env_file",
    "point_name",
];

#[derive(Serialize, Default)]
struct Row {
    order: String,
    point: String,
    attempt: String,
    kernel: String,
    outcome: String,
    reason: String,
    boot_id: String,
    release: String,
    cmdline: String,
    switch_s: String,
    login_s: String,
    tuning: String,
    skipped_knobs: String,
    samples_ok: String,
    warmups_ok: String,
    rows_failed: String,
    rows_discarded: String,
    failed_runs: String,
    retried_runs: String,
    left_behind: String,
    output_cut: String,
    dmesg_warnings: String,
    failed_units: String,
    connection_lost: String,
    warnings: String,
    env_file: String,
    point_name: String,
}

/// `workload[case] phase index, retry r: error (raw)`.
#[must_use]
pub fn describe_run(run: &RunIssue) -> String {
    let mut text = run.workload.clone();
    if !run.case.is_empty() {
        text = format!("{text}[{}]", run.case);
    }
    text = format!("{text} {} {}", run.phase, run.index);
    if run.retry > 0 {
        text = format!("{text} retry {}", run.retry);
    }
    if let Some(error) = &run.error {
        text = format!("{text}: {error}");
    }
    if let Some(raw) = &run.raw {
        text = format!("{text} ({raw})");
    }
    text
}

fn or_dash(text: Option<&str>) -> String {
    text.map_or_else(|| "-".to_owned(), str::to_owned)
}

fn list(items: &[String], separator: &str) -> String {
    items.join(separator)
}

fn attempt_row(a: &AttemptAudit) -> Row {
    let runs = |runs: &[RunIssue]| {
        runs.iter()
            .map(describe_run)
            .collect::<Vec<_>>()
            .join(" | ")
    };
    Row {
        order: if a.order == usize::MAX {
            "-".to_owned()
        } else {
            a.order.to_string()
        },
        point: a.point.clone(),
        attempt: a.attempt.to_string(),
        kernel: a.kernel.clone(),
        outcome: a.outcome.as_str().to_owned(),
        reason: or_dash(a.reason.as_deref()),
        boot_id: or_dash(a.boot_id.as_deref()),
        release: or_dash(a.release.as_deref()),
        cmdline: or_dash(a.cmdline.as_deref()),
        switch_s: tsv(a.switch_s),
        login_s: tsv(a.login_s),
        tuning: a
            .tuning
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
        skipped_knobs: list(&a.skipped_knobs, " "),
        samples_ok: a.samples_ok.to_string(),
        warmups_ok: a.warmups_ok.to_string(),
        rows_failed: a.rows_failed.to_string(),
        rows_discarded: a.rows_discarded.to_string(),
        failed_runs: runs(&a.failed_runs),
        retried_runs: runs(&a.retried_runs),
        left_behind: list(&a.left_behind, " | "),
        output_cut: list(&a.output_cut, " | "),
        dmesg_warnings: a
            .dmesg_warnings
            .map_or_else(|| "-".to_owned(), |n| n.to_string()),
        failed_units: list(&a.failed_units, " "),
        connection_lost: list(&a.connection_lost, " | "),
        warnings: list(&a.warnings, " | "),
        env_file: or_dash(a.env_file.as_deref()),
        point_name: point_name(&a.point, &a.kernel),
    }
}

fn note(text: String) -> Row {
    Row {
        order: "-".to_owned(),
        point: "-".to_owned(),
        point_name: "-".to_owned(),
        attempt: "-".to_owned(),
        outcome: "note".to_owned(),
        reason: text,
        ..Row::default()
    }
}

/// Renders `run-audit.tsv`.
#[must_use]
pub fn render(analysis: &Analysis) -> Vec<u8> {
    let audit = &analysis.audit;
    let mut rows: Vec<Row> = audit.attempts.iter().map(attempt_row).collect();
    let prereg = &analysis.preregistration;
    for e in &prereg.edited {
        rows.push(note(format!(
            "limit edited after the run: {} (the verdicts use the edited value)",
            crate::report::number::limit_edit_words(e)
        )));
    }
    if prereg.limits_unknown {
        rows.push(note(
            "recipe.toml changed after the run and the journal does not record its limits"
                .to_owned(),
        ));
    }
    if let Some(shared) = &audit.shared_boot {
        rows.push(note(format!(
            "all {} done points share boot {} (target {}): no kernel switch, drift is run-to-run noise",
            shared.points, shared.boot_id, analysis.campaign.target
        )));
    }
    for d in &analysis.environment.differences {
        rows.push(note(format!(
            "environment differs: {}",
            d.text_named(&|p| analysis.point_name(p))
        )));
    }
    for why in &analysis.environment.unchecked {
        rows.push(note(format!("environment not compared: {why}")));
    }
    let profile = &analysis.profile;
    if let Some(file) = &profile.file {
        let status = if profile.used && profile.reasons.is_empty() {
            "pooled".to_owned()
        } else {
            format!("not used: {}", profile.reasons.join("; "))
        };
        rows.push(note(format!(
            "noise profile {file} (copy profile.toml, sha256 {}): {status}",
            profile.sha256.as_deref().unwrap_or("-")
        )));
    } else if !profile.reasons.is_empty() {
        rows.push(note(format!(
            "no noise profile: {}",
            profile.reasons.join("; ")
        )));
    }
    for r in &audit.rejected_rows {
        rows.push(note(format!("samples.csv:{}: {}", r.line, r.reason)));
    }
    for w in &audit.warnings {
        rows.push(note(format!("warning: {w}")));
    }
    if audit.duplicate_rows > 0 {
        rows.push(note(format!(
            "{} valid rows repeated an index; the later retry was used",
            audit.duplicate_rows
        )));
    }
    if audit.journal_truncated {
        rows.push(note(
            "journal.jsonl ends in a partial line (a killed writer); it was skipped".to_owned(),
        ));
    }
    if audit.samples_truncated {
        rows.push(note(
            "samples.csv ends in a partial line (a killed writer); it was skipped".to_owned(),
        ));
    }
    to_tsv(&HEADER, &rows)
}
