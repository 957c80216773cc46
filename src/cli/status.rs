//! `aba status DIR`: where a campaign stands, from its journal and raw data alone.

use std::{fmt::Write as _, path::Path};

use crate::{
    error::{Error, exit_code},
    results::{
        journal::{Event, Journal},
        layout::ResultsDir,
        samples::{Phase, SampleTable, Status},
    },
};

/// Prints the state of every point.
pub fn status(dir_path: &Path) -> Result<u8, Error> {
    let dir = ResultsDir::open(dir_path);
    let journal = Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir_path.to_path_buf(),
        resumable: false,
        source,
    })?;
    // A campaign that never got to its first point may have no samples.csv yet; one that
    // cannot be read is said so, never counted as no rows.
    let table = match SampleTable::read(&dir.samples_path()) {
        Ok(table) => Some(table),
        Err(_) if !dir.samples_path().exists() => None,
        Err(source) => {
            print!("{}", render(&journal, None));
            return Err(Error::Samples {
                dir: dir_path.to_path_buf(),
                source,
            });
        }
    };
    print!("{}", render(&journal, table.as_ref()));
    Ok(exit_code::OK)
}

/// The status text.
pub fn render(journal: &Journal, table: Option<&SampleTable>) -> String {
    let state = journal.state();
    let mut out = String::new();
    if let Some(Event::Campaign {
        name, target, time, ..
    }) = journal.header()
    {
        let _ = writeln!(out, "campaign {name} on target {target}, started {time}");
    }
    let count = |label: &str, attempt: u32, status: Status| -> String {
        table.map_or_else(
            || "unknown".to_owned(),
            |t| {
                t.rows
                    .iter()
                    .filter(|r| {
                        t.text(r.point) == label
                            && r.attempt == attempt
                            && r.status == status
                            && r.phase == Phase::Sample
                    })
                    .count()
                    .to_string()
            },
        )
    };
    let done = state.points.iter().filter(|p| p.done.is_some()).count();
    for p in &state.points {
        let what = match (p.done, p.open) {
            (Some(a), _) => format!(
                "done (attempt {a}, {} sample rows)",
                count(&p.label, a, Status::Ok)
            ),
            (None, Some(a)) => format!(
                "in progress or interrupted (attempt {a}, {} sample rows so far)",
                count(&p.label, a, Status::Ok)
            ),
            (None, None) if p.attempts > 0 => "failed, to be redone".to_owned(),
            (None, None) => "pending".to_owned(),
        };
        let failures = if p.failures.is_empty() {
            String::new()
        } else {
            format!(
                "; {} failed attempt(s), last: {}",
                p.failures.len(),
                p.failures.last().map_or("", |f| f.1.as_str())
            )
        };
        let _ = writeln!(out, "  {:<24} {what}{failures}", p.label);
    }
    let _ = writeln!(out, "{done}/{} points done", state.points.len());
    if state.finished {
        let _ = writeln!(out, "state: finished");
    } else if let Some(reason) = &state.stopped {
        let _ = writeln!(out, "state: stopped: {reason}");
        let _ = writeln!(out, "(continue with `aba resume DIR`)");
    } else {
        let _ = writeln!(
            out,
            "state: running, or the runner was killed (`aba resume DIR` continues it)"
        );
    }
    if journal.truncated_tail {
        let _ = writeln!(
            out,
            "note: the journal ends in a partial record (the runner was killed mid-write); resume repairs it"
        );
    }
    if let Some(t) = table {
        let failed = t.rows.iter().filter(|r| r.status == Status::Failed).count();
        let discarded = t
            .rows
            .iter()
            .filter(|r| r.status == Status::Discarded)
            .count();
        let _ = writeln!(
            out,
            "samples.csv: {} rows ({failed} failed, {discarded} discarded)",
            t.rows.len()
        );
    }
    out
}
