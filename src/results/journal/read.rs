//! Reading a journal back: the whole of it, the records an analysis needs, a stream from an
//! offset, or its start records. A journal is untrusted input: every refusal names the file
//! and line, a record longer than [`RECORD_BYTES`] is refused before it is held whole, and a
//! partial last line (a killed writer) is left out and reported.

use std::{
    io::{BufRead, BufReader, Read as _},
    path::{Path, PathBuf},
};

use serde::Deserialize;
use thiserror::Error;

use super::{Event, JOURNAL_FORMAT};
use crate::results::samples::{Phase, Status};

/// Longest journal record read back, in bytes (16 MiB). aba's records are at most a few KiB
/// (a stop reason quotes 40 console lines); a longer line was not written by aba, and is
/// refused after reading that much of it, never held whole.
pub const RECORD_BYTES: usize = 16 << 20;

/// Why the journal could not be read or written.
#[derive(Debug, Error)]
pub enum JournalError {
    /// An I/O error on the journal file.
    #[error("cannot {action} journal {}", path.display())]
    Io {
        /// `read`, `append to`, …
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A complete line that is not a journal record.
    #[error("journal {}:{line}: not a journal record", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A line longer than [`RECORD_BYTES`].
    #[error("journal {}:{line}: a record longer than {} (aba writes records of a few KiB); this journal was not written by aba or is damaged", path.display(), crate::text::bytes(RECORD_BYTES as u64))]
    TooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
    },
    /// The first record is missing or of another format version.
    #[error("journal {} has format {found:?}; this aba reads format {JOURNAL_FORMAT}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What the first record said, if anything.
        found: Option<u32>,
    },
}

/// What the analysis needs to know of a `sample` record to leave it out: valid JSON (checked
/// while parsing), the tag, the status and the retry number. Other fields are skipped
/// unchecked (the analysis reads them from `samples.csv`).
#[derive(Deserialize)]
struct SampleKind<'a> {
    #[serde(borrow)]
    event: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    status: std::borrow::Cow<'a, str>,
    retry: u32,
    #[serde(default)]
    leftovers: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    dropped_bytes: Option<u64>,
    #[serde(default)]
    kept: Option<serde::de::IgnoredAny>,
}

/// A `sample` record (as aba writes them: the event tag first) of a run that succeeded at
/// its first try and left nothing to remark (no leftover processes, no output cut). Anything
/// else, malformed lines included, goes through the full parse, which keeps it or reports it.
fn is_plain_sample(line: &[u8]) -> bool {
    line.starts_with(br#"{"event":"sample","#)
        && serde_json::from_slice::<SampleKind<'_>>(line).is_ok_and(|f| {
            f.event == "sample"
                && f.status == "ok"
                && f.retry == 0
                && f.leftovers.is_none()
                && f.dropped_bytes.is_none()
                && f.kept.is_none()
        })
}

/// A journal as read back.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    /// Every complete record, in order.
    pub events: Vec<Event>,
    /// True when a partial last line was skipped.
    pub truncated_tail: bool,
}

impl Journal {
    /// Reads the journal at `path`; the first record must be a `campaign` record of
    /// [`JOURNAL_FORMAT`].
    pub fn read(path: &Path) -> Result<Journal, JournalError> {
        Journal::read_filtered(path, false)
    }

    /// Like [`Journal::read`], but leaves out the `sample` records of runs that succeeded at
    /// their first try (`status` ok, `retry` 0) once each is known to be valid JSON with that
    /// tag, status and retry: they say nothing `samples.csv` does not, and a campaign of a
    /// million samples has a million of them (about 300 MB as events, and most of the time
    /// `aba report` would spend). The analysis needs only the other records.
    pub fn read_for_analysis(path: &Path) -> Result<Journal, JournalError> {
        Journal::read_filtered(path, true)
    }

    fn read_filtered(path: &Path, skip_plain_samples: bool) -> Result<Journal, JournalError> {
        let mut journal = Journal::default();
        journal.truncated_tail = visit_lines(path, 0, |number, line| {
            if skip_plain_samples && is_plain_sample(line) {
                return Ok(());
            }
            journal.events.push(parse_line(path, number, line)?);
            Ok(())
        })?;
        match journal.events.first() {
            Some(Event::Campaign { format, .. }) if *format == JOURNAL_FORMAT => Ok(journal),
            Some(Event::Campaign { format, .. }) => Err(JournalError::Format {
                path: path.to_path_buf(),
                found: Some(*format),
            }),
            _ => Err(JournalError::Format {
                path: path.to_path_buf(),
                found: None,
            }),
        }
    }
}

/// Calls `f` with every complete record from byte `offset` on, in order, without keeping them:
/// the verification streams a whole journal this way, and reads only the records a point
/// appended (from the length the journal had when the point started). Returns whether a partial
/// last line was left out. A tail read from an offset has no header, so none is required.
pub fn visit_from(
    path: &Path,
    offset: u64,
    mut f: impl FnMut(Event),
) -> Result<bool, JournalError> {
    visit_lines(path, offset, |number, line| {
        f(parse_line(path, number, line)?);
        Ok(())
    })
}

/// What the verification needs of a `sample` record, borrowed from its line: a journal of a
/// million runs is checked without a million [`Event`]s (their strings, their maps) in memory.
#[derive(Debug, Deserialize)]
pub struct RunRecord<'a> {
    /// The record's tag, checked when read from a line (empty when made from an [`Event`]).
    #[serde(rename = "event", default)]
    pub tag: &'a str,
    /// Point label.
    pub point: &'a str,
    /// Attempt.
    pub attempt: u32,
    /// Workload.
    pub workload: &'a str,
    /// Case.
    pub case: &'a str,
    /// Warm-up or measured.
    pub phase: Phase,
    /// Index within the phase.
    pub index: u32,
    /// Retry.
    pub retry: u32,
    /// Status.
    pub status: Status,
    /// Metric -> value, in the record's order; absent in journals of older aba.
    #[serde(default, borrow, deserialize_with = "value_pairs")]
    pub values: Option<ValuePairs<'a>>,
    /// The link of samples.csv's hash chain after the run's rows; absent in older journals.
    #[serde(default, borrow)]
    pub rows_sha256: Option<&'a str>,
    /// Whether the record lists leftover processes (read only to tell a plain run).
    #[serde(default)]
    pub leftovers: Option<serde::de::IgnoredAny>,
    /// Output bytes dropped, when the record says (read only to tell a plain run).
    #[serde(default)]
    pub dropped_bytes: Option<u64>,
    /// Whether the record lists kept output (a passing check's; read only to tell a plain
    /// run: the analysis and the verification read the full record).
    #[serde(default)]
    pub kept: Option<serde::de::IgnoredAny>,
}

impl RunRecord<'_> {
    /// The run of a `sample` event; `None` for any other.
    #[must_use]
    pub fn of(event: &Event) -> Option<RunRecord<'_>> {
        let Event::Sample {
            point,
            attempt,
            workload,
            case,
            phase,
            index,
            retry,
            status,
            values,
            rows_sha256,
            leftovers,
            dropped_bytes,
            kept,
            ..
        } = event
        else {
            return None;
        };
        Some(RunRecord {
            tag: "",
            point,
            attempt: *attempt,
            workload,
            case,
            phase: *phase,
            index: *index,
            retry: *retry,
            status: *status,
            values: values
                .as_ref()
                .map(|v| v.iter().map(|(m, v)| (m.as_str(), *v)).collect()),
            rows_sha256: rows_sha256.as_deref(),
            leftovers: (!leftovers.is_empty()).then_some(serde::de::IgnoredAny),
            dropped_bytes: *dropped_bytes,
            kept: (!kept.is_empty()).then_some(serde::de::IgnoredAny),
        })
    }
}

/// The `sample` record on `line`, borrowed from it: aba's own layout of a plain run read
/// directly ([`plain_run`](super::plain_run)), any other sample record by serde; `None` for a
/// line that is not a sample record or does not read so (the caller reads it whole).
fn run_of_line(line: &[u8]) -> Option<RunRecord<'_>> {
    if !line.starts_with(br#"{"event":"sample","#) {
        return None;
    }
    super::plain_run::read(line).or_else(|| {
        serde_json::from_slice::<RunRecord<'_>>(line)
            .ok()
            .filter(|record| record.tag == "sample")
    })
}

/// A run's (metric, value) pairs.
pub type ValuePairs<'a> = Vec<(&'a str, f64)>;

/// A `values` map read as (metric, value) pairs borrowed from the line.
fn value_pairs<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<ValuePairs<'de>>, D::Error> {
    struct Pairs;
    impl<'de> serde::de::Visitor<'de> for Pairs {
        type Value = Vec<(&'de str, f64)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of metric names to values")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut pairs = Vec::new();
            while let Some(pair) = map.next_entry::<&'de str, f64>()? {
                pairs.push(pair);
            }
            Ok(pairs)
        }
    }
    d.deserialize_map(Pairs).map(Some)
}

/// Like [`visit_from`], but `sample` records go to `run` as [`RunRecord`]s, borrowed from
/// their line (a record that does not read so, a string with escapes say, is read whole and
/// lent the same way), and every other record to `other`.
pub fn visit_runs_from(
    path: &Path,
    offset: u64,
    mut run: impl FnMut(&RunRecord<'_>),
    mut other: impl FnMut(Event),
) -> Result<bool, JournalError> {
    visit_lines(path, offset, |number, line| {
        if let Some(record) = run_of_line(line) {
            run(&record);
            return Ok(());
        }
        let event = parse_line(path, number, line)?;
        match RunRecord::of(&event) {
            Some(record) => run(&record),
            None => other(event),
        }
        Ok(())
    })
}

/// [`visit_runs_from`] over the whole journal and [`Journal::read_for_analysis`] in one pass:
/// every `sample` record goes to `run`, and the journal the analysis reads is returned with
/// the journal's other records in order (the verification's history). A plain run's record
/// is left out of the analysis's as [`Journal::read_for_analysis`] leaves it out; any line
/// one of the two readers refuses is refused.
pub fn visit_runs_for_analysis(
    path: &Path,
    mut run: impl FnMut(&RunRecord<'_>),
) -> Result<(Journal, Vec<Event>), JournalError> {
    let mut journal = Journal::default();
    let mut others = Vec::new();
    journal.truncated_tail = visit_lines(path, 0, |number, line| {
        if let Some(record) = run_of_line(line) {
            run(&record);
            // What `is_plain_sample` reads, read already: the same verdict.
            let plain = record.status == Status::Ok
                && record.retry == 0
                && record.leftovers.is_none()
                && record.dropped_bytes.is_none()
                && record.kept.is_none();
            if !plain {
                journal.events.push(parse_line(path, number, line)?);
            }
            return Ok(());
        }
        let plain = is_plain_sample(line);
        let event = parse_line(path, number, line)?;
        match RunRecord::of(&event) {
            Some(record) => run(&record),
            None => others.push(event.clone()),
        }
        if !plain {
            journal.events.push(event);
        }
        Ok(())
    })?;
    match journal.events.first() {
        Some(Event::Campaign { format, .. }) if *format == JOURNAL_FORMAT => Ok((journal, others)),
        first => Err(JournalError::Format {
            path: path.to_path_buf(),
            found: match first {
                Some(Event::Campaign { format, .. }) => Some(*format),
                _ => None,
            },
        }),
    }
}

/// How many records after the header may precede [`Event::Kernels`]: it is written with the
/// other start records (profile, calibration), so a reader need not scan a million samples.
const START_RECORDS: usize = 8;

/// The [`Event::Kernels`] record of the journal at `path`, read from its first records only;
/// `None` when there is no journal yet, or no record (the recipe's kernels, as written).
pub fn recorded_kernels(
    path: &Path,
) -> Result<Option<Vec<crate::kernel::binding::BoundKernel>>, JournalError> {
    start_record(path, |e| match e {
        Event::Kernels { kernels } => Some(kernels),
        _ => None,
    })
}

/// The [`Event::Params`] record of the journal at `path`, read from its first records only;
/// `None` when there is no journal yet, or no record (the recipe's defaults).
pub fn recorded_params(
    path: &Path,
) -> Result<Option<Vec<crate::recipe::params::BoundParam>>, JournalError> {
    start_record(path, |e| match e {
        Event::Params { params } => Some(params),
        _ => None,
    })
}

/// The first of the start records `pick` takes.
fn start_record<T>(
    path: &Path,
    pick: impl Fn(Event) -> Option<T>,
) -> Result<Option<T>, JournalError> {
    use std::io::BufRead as _;
    let read_error = |source| JournalError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(read_error(source)),
    };
    let start = (START_RECORDS as u64 + 1) * RECORD_BYTES as u64;
    for (number, line) in std::io::BufReader::new(std::io::Read::take(file, start))
        .split(b'\n')
        .take(START_RECORDS + 1)
        .enumerate()
    {
        let line = line.map_err(read_error)?;
        // A partial line (a crash while writing it) is the reader proper's business.
        if let Some(found) = parse_line(path, number + 1, &line).ok().and_then(&pick) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

fn parse_line(path: &Path, number: usize, line: &[u8]) -> Result<Event, JournalError> {
    serde_json::from_slice(line).map_err(|source| JournalError::Corrupt {
        path: path.to_path_buf(),
        line: number,
        source,
    })
}

/// The 1-based line of the first record that holds `needle` (a cheap filter, as
/// `"tuning_saved"`) and satisfies `pred`: where a message about a record points the reader.
pub fn first_line_of(
    path: &Path,
    needle: &str,
    pred: impl Fn(&Event) -> bool,
) -> Result<Option<usize>, JournalError> {
    let mut found = None;
    visit_lines(path, 0, |number, line| {
        if found.is_none()
            && line.windows(needle.len()).any(|w| w == needle.as_bytes())
            && serde_json::from_slice::<Event>(line).is_ok_and(|e| pred(&e))
        {
            found = Some(number);
        }
        Ok(())
    })?;
    Ok(found)
}

/// Feeds every complete, non-blank line from byte `offset` to `f` with its 1-based number
/// (counted from `offset`); returns whether a partial last line was left out.
fn visit_lines(
    path: &Path,
    offset: u64,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), JournalError>,
) -> Result<bool, JournalError> {
    use std::io::{Seek as _, SeekFrom};
    let io = |source| JournalError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let mut file = crate::input::open_data(path).map_err(io)?;
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        // One byte past the limit tells a record at the limit from a longer one.
        let n = (&mut reader)
            .take(RECORD_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if n == 0 {
            return Ok(false);
        }
        number += 1;
        if line.len() > RECORD_BYTES {
            return Err(JournalError::TooLong {
                path: path.to_path_buf(),
                line: number,
            });
        }
        if line.last() != Some(&b'\n') {
            return Ok(true);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        f(number, &line)?;
    }
}
