//! `samples.csv`: the raw data, one row per metric per workload run, warm-ups included, failed
//! runs included, every row labelled with its point, attempt, kernel and boot.
//!
//! Rows are appended and fsynced before the next run starts, by one writer, and never
//! rewritten: which attempt's rows count is the journal's to say (`point_done`, `point_failed`,
//! `point_discarded`), so a row's `status` stays what the run produced. Directories written by
//! aba 0.1 may hold rows rewritten as `discarded`; they are read as rows of an attempt that does
//! not count. The reader interns the repetitive columns, so a million rows fit in a few tens of
//! megabytes.

use std::{
    collections::HashMap,
    fs::File,
    io::{Read as _, Write},
    path::{Path, PathBuf},
};

use thiserror::Error;

use crate::results::{atomic::truncate_partial_line, row_chain::RowChain};

/// The header, which doubles as the format version: a reader refuses any other.
pub const HEADER: [&str; 16] = [
    "point", "order", "attempt", "kernel", "release", "boot_id", "workload", "case", "metric",
    "phase", "index", "retry", "status", "value", "unit", "time",
];

/// Longest field aba reads back, in bytes. aba writes none longer than a few hundred (names
/// of at most 64 characters, case names of at most 8 keys and values, a number, a time);
/// a longer one means the file was not written by aba, and is refused rather than carried
/// into every report.
pub const FIELD_BYTES: usize = 4096;
/// Longest row aba reads back, in bytes: every field at its limit.
pub const ROW_BYTES: u64 = (FIELD_BYTES * HEADER.len() + HEADER.len()) as u64;

/// Warm-up or measured; spelled the same in samples.csv and the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Not analysed; kept to show what the machine did.
    Warmup,
    /// Analysed.
    Sample,
}

impl Phase {
    /// The CSV spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Warmup => "warmup",
            Phase::Sample => "sample",
        }
    }

    /// How a message names it: `warm-up` or `sample`.
    pub fn word(self) -> &'static str {
        match self {
            Phase::Warmup => "warm-up",
            Phase::Sample => "sample",
        }
    }

    /// The spelling in samples.csv and the journal, read back.
    pub(crate) fn parse(text: &[u8]) -> Option<Phase> {
        match text {
            b"warmup" => Some(Phase::Warmup),
            b"sample" => Some(Phase::Sample),
            _ => None,
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a row or a run is worth; spelled the same in samples.csv and the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A valid value (if its point attempt finished).
    Ok,
    /// The run failed (exit status, check, parse, timeout); no value.
    Failed,
    /// Written only by aba 0.1, which rewrote the rows of an attempt that failed or never
    /// finished; today the journal alone says so and rows keep their status.
    Discarded,
}

impl Status {
    /// The CSV spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Discarded => "discarded",
        }
    }

    /// The spelling in samples.csv and the journal, read back.
    pub(crate) fn parse(text: &[u8]) -> Option<Status> {
        match text {
            b"ok" => Some(Status::Ok),
            b"failed" => Some(Status::Failed),
            b"discarded" => Some(Status::Discarded),
            _ => None,
        }
    }
}

/// One row to write.
#[derive(Clone, Debug)]
pub struct SampleRow<'a> {
    /// Point label.
    pub point: &'a str,
    /// 1-based point order.
    pub order: usize,
    /// 1-based attempt of the point.
    pub attempt: u32,
    /// Kernel label.
    pub kernel: &'a str,
    /// Release seen by the proof.
    pub release: &'a str,
    /// boot_id seen by the proof.
    pub boot_id: &'a str,
    /// Workload.
    pub workload: &'a str,
    /// Case (empty without a matrix).
    pub case: &'a str,
    /// Metric.
    pub metric: &'a str,
    /// Warm-up or measured.
    pub phase: Phase,
    /// 1-based index within the phase.
    pub index: u32,
    /// 0 for the first try, 1… for retries.
    pub retry: u32,
    /// Status.
    pub status: Status,
    /// The value, for `ok` rows.
    pub value: Option<f64>,
    /// Unit.
    pub unit: &'a str,
    /// RFC 3339 time the run ended.
    pub time: &'a str,
}

/// Why `samples.csv` could not be read or written.
#[derive(Debug, Error)]
pub enum SamplesError {
    /// I/O.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A malformed file (not a truncated tail: that is tolerated).
    #[error("{}:{line}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        reason: String,
    },
}

/// Appends rows, fsyncing after each batch (one workload run). The one writer of a campaign's
/// `samples.csv`: nothing else writes the file, and nothing rewrites it.
#[derive(Debug)]
pub struct SampleWriter {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    /// Bytes and lines in the file (the header included).
    bytes: u64,
    lines: u64,
    /// The hash chain over the file's records (`row_chain`), continued by every append.
    chain: RowChain,
    /// Tests: how many more appends succeed before every one fails as on a full disk.
    #[cfg(test)]
    pub(crate) fail_after: Option<usize>,
}

impl SampleWriter {
    /// Opens `path` for appending; cuts a partial last line left by a killed writer and writes
    /// the header into a new file.
    pub fn open(path: &Path) -> Result<SampleWriter, SamplesError> {
        let io = |action, source| SamplesError::Io {
            action,
            path: path.to_path_buf(),
            source,
        };
        truncate_partial_line(path).map_err(|e| io("repair", e))?;
        let mut file =
            crate::results::atomic::open_append(path, true).map_err(|e| io("open", e))?;
        let mut bytes = file.metadata().map_err(|e| io("stat", e))?.len();
        let mut chain = RowChain::default();
        if bytes == 0 {
            let mut header = HEADER.join(",");
            header.push('\n');
            file.write_all(header.as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|e| io("write", e))?;
            bytes = header.len() as u64;
            chain.feed(header.as_bytes(), |_, _| {});
        } else {
            chain
                .feed_file(path, bytes, |_, _| {})
                .map_err(|e| io("read", e))?;
        }
        let lines = chain.lines();
        Ok(SampleWriter {
            file,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(4096),
            bytes,
            lines,
            chain,
            #[cfg(test)]
            fail_after: None,
        })
    }

    /// The file's length in bytes and lines: where the next row will start. The verification
    /// of a point reads the file from here on.
    pub fn position(&self) -> (u64, u64) {
        (self.bytes, self.lines)
    }

    /// Appends `rows` in one write and makes them durable before returning; returns the link
    /// of the hash chain after the last of them (hex), which the run's journal record keeps.
    pub fn append(&mut self, rows: &[SampleRow<'_>]) -> Result<String, SamplesError> {
        #[cfg(test)]
        crate::results::atomic::injected_failure(&mut self.fail_after).map_err(|source| {
            SamplesError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            }
        })?;
        self.buf.clear();
        {
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(&mut self.buf);
            for r in rows {
                let value = r.value.map(|v| v.to_string()).unwrap_or_default();
                let record = [
                    r.point,
                    &r.order.to_string(),
                    &r.attempt.to_string(),
                    r.kernel,
                    r.release,
                    r.boot_id,
                    r.workload,
                    r.case,
                    r.metric,
                    r.phase.as_str(),
                    &r.index.to_string(),
                    &r.retry.to_string(),
                    r.status.as_str(),
                    &value,
                    r.unit,
                    r.time,
                ];
                w.write_record(record)
                    .expect("invariant: writing CSV into memory cannot fail");
            }
            w.flush()
                .expect("invariant: flushing into memory cannot fail");
        }
        self.file
            .write_all(&self.buf)
            .and_then(|()| self.file.sync_data())
            .map_err(|source| SamplesError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            })?;
        self.bytes += self.buf.len() as u64;
        self.lines += rows.len() as u64;
        self.chain.feed(&self.buf, |_, _| {});
        Ok(self.chain.hex())
    }
}

/// Rows per batch of [`SampleTable::read_in_batches`].
pub const BATCH_ROWS: usize = 8192;

/// An interned string's index into [`SampleTable::strings`].
pub type Sym = u32;

/// One row as read back; text columns are interned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Point label.
    pub point: Sym,
    /// 1-based point order.
    pub order: u32,
    /// Attempt.
    pub attempt: u32,
    /// Kernel label.
    pub kernel: Sym,
    /// Release.
    pub release: Sym,
    /// boot_id.
    pub boot_id: Sym,
    /// Workload.
    pub workload: Sym,
    /// Case.
    pub case: Sym,
    /// Metric.
    pub metric: Sym,
    /// Phase.
    pub phase: Phase,
    /// Index within the phase.
    pub index: u32,
    /// Retry number.
    pub retry: u32,
    /// Status.
    pub status: Status,
    /// Value (ok rows).
    pub value: Option<f64>,
    /// Unit.
    pub unit: Sym,
    /// 1-based line in the file, for messages.
    pub line: u64,
}

/// `samples.csv` as read back.
#[derive(Clone, Debug, Default)]
pub struct SampleTable {
    /// Interned strings.
    pub strings: Vec<String>,
    /// Rows in file order.
    pub rows: Vec<Row>,
    /// Rows rejected because their value is not a finite number: (line, reason).
    pub rejected: Vec<(u64, String)>,
    /// True when a partial last line was skipped.
    pub truncated_tail: bool,
}

impl SampleTable {
    /// The text of an interned string.
    pub fn text(&self, sym: Sym) -> &str {
        &self.strings[sym as usize]
    }

    /// Reads `samples.csv`, streaming: the file is never held in memory whole (a million
    /// rows are about 125 MB of text).
    pub fn read(path: &Path) -> Result<SampleTable, SamplesError> {
        let (complete, truncated_tail) = open_complete(path)?;
        let reader = std::io::BufReader::with_capacity(1 << 20, complete);
        SampleTable::parse_complete(path, reader, truncated_tail, 0, &mut |_| {})
    }

    /// Reads `samples.csv` as [`SampleTable::read`] does, handing its rows over as they are
    /// parsed: every [`BATCH_ROWS`] rows, `batch` gets a table of the strings interned and
    /// the rows parsed since its last call (symbols index the strings of every batch one
    /// after the other). Returns the rest: the last rows, every rejected row, and whether a
    /// partial last line was left out. The batches and the rest put together are what
    /// [`SampleTable::read`] returns; `aba report` checks the first rows against the journal
    /// while the next ones are parsed.
    pub fn read_in_batches(
        path: &Path,
        mut batch: impl FnMut(SampleTable),
    ) -> Result<SampleTable, SamplesError> {
        let (complete, truncated_tail) = open_complete(path)?;
        let reader = std::io::BufReader::with_capacity(1 << 20, complete);
        SampleTable::parse_complete(path, reader, truncated_tail, 0, &mut |table| {
            batch(SampleTable {
                strings: std::mem::take(&mut table.strings),
                rows: std::mem::take(&mut table.rows),
                ..SampleTable::default()
            });
        })
    }

    /// Appends `more`, a batch of [`SampleTable::read_in_batches`] (or its rest), to `self`,
    /// the batches before it.
    pub fn append(&mut self, more: SampleTable) {
        self.strings.extend(more.strings);
        self.rows.extend(more.rows);
        self.rejected.extend(more.rejected);
        self.truncated_tail |= more.truncated_tail;
    }

    /// Reads the rows appended after byte `offset` (a row boundary: the file's length at some
    /// earlier moment), which start at line `lines_before + 1`. Line numbers in the rows and in
    /// errors are the file's own.
    pub fn read_from(
        path: &Path,
        offset: u64,
        lines_before: u64,
    ) -> Result<SampleTable, SamplesError> {
        if offset == 0 {
            return SampleTable::read(path);
        }
        let io = |source| SamplesError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        };
        let mut file = crate::input::open_data(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let complete = complete_len(&file, len).map_err(io)?;
        if complete <= offset {
            return Ok(SampleTable {
                truncated_tail: complete != len,
                ..SampleTable::default()
            });
        }
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset)).map_err(io)?;
        let mut header = HEADER.join(",");
        header.push('\n');
        let tail = std::io::Cursor::new(header).chain(file.take(complete - offset));
        let reader = std::io::BufReader::with_capacity(1 << 20, tail);
        // The header we put in front is line 1 of what is parsed; the tail's first row is the
        // file's line lines_before + 1.
        SampleTable::parse_complete(
            path,
            reader,
            complete != len,
            lines_before.saturating_sub(1),
            &mut |_| {},
        )
    }

    /// Parses `samples.csv` content (named `path` in errors).
    pub fn parse(path: &Path, data: &[u8]) -> Result<SampleTable, SamplesError> {
        let complete = match data.iter().rposition(|&b| b == b'\n') {
            Some(end) => &data[..=end],
            None => &data[..0],
        };
        SampleTable::parse_complete(path, complete, complete.len() != data.len(), 0, &mut |_| {})
    }

    /// Parses complete lines (a partial last line already cut off; `truncated_tail` says
    /// whether there was one); `line_base` is added to every line number reported. Every
    /// [`BATCH_ROWS`] rows the table so far goes to `flush`, which may take its strings and
    /// rows (symbols keep counting from all strings interned).
    fn parse_complete(
        path: &Path,
        complete: impl std::io::Read,
        truncated_tail: bool,
        line_base: u64,
        flush: &mut dyn FnMut(&mut SampleTable),
    ) -> Result<SampleTable, SamplesError> {
        let malformed = |line: u64, reason: String| SamplesError::Malformed {
            path: path.to_path_buf(),
            line: line + line_base,
            reason,
        };
        let mut table = SampleTable {
            truncated_tail,
            ..SampleTable::default()
        };
        let bounded = RowBound::new(complete);
        let too_long = std::rc::Rc::clone(&bounded.flag);
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .buffer_capacity(1 << 16)
            .from_reader(bounded);
        let row_too_long = |cut: Cut| {
            malformed(
                cut.line,
                format!(
                    "column {}: a row longer than {ROW_BYTES} bytes, cut in {} (aba writes rows of a few hundred bytes, fields of at most {FIELD_BYTES}); this file was not written by aba or is damaged",
                    cut.column,
                    field_name(cut.field)
                ),
            )
        };
        let header = match reader.byte_headers() {
            Ok(h) => h.clone(),
            Err(e) => {
                return Err(match too_long.get() {
                    Some(cut) => row_too_long(cut),
                    None => malformed(1, e.to_string()),
                });
            }
        };
        if header.len() != HEADER.len() || header.iter().zip(HEADER).any(|(a, b)| a != b.as_bytes())
        {
            return Err(malformed(
                1,
                format!("unexpected header; this aba reads `{}`", HEADER.join(",")),
            ));
        }
        let mut interner: HashMap<Vec<u8>, Sym> = HashMap::new();
        // Strings interned so far, those flushed included.
        let mut interned: usize = 0;
        // Rows come in runs that share their labels: each interned column remembers its last
        // field, so most fields are one short comparison instead of a hash lookup.
        let mut last: [(Vec<u8>, Sym); 16] = Default::default();
        let mut seen = [false; 16];
        let mut record = csv::ByteRecord::new();
        let mut line = 1u64;
        loop {
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    return Err(match too_long.get() {
                        Some(cut) => row_too_long(cut),
                        None => malformed(line + 1, e.to_string()),
                    });
                }
            }
            line = record.position().map_or(line + 1, |p| p.line());
            if record.len() != HEADER.len() {
                return Err(malformed(
                    line,
                    format!("{} fields, expected {}", record.len(), HEADER.len()),
                ));
            }
            if let Some(i) = record.iter().position(|f| f.len() > FIELD_BYTES) {
                // The byte column where the field starts (exact for unquoted fields, which is
                // all aba writes for numbers and labels).
                let column = 1 + record.iter().take(i).map(|f| f.len() + 1).sum::<usize>();
                return Err(malformed(
                    line,
                    format!(
                        "column {column}: {} is {} bytes long; aba reads fields of at most {FIELD_BYTES} bytes",
                        field_name(i),
                        record[i].len()
                    ),
                ));
            }
            let mut intern = |i: usize| -> Sym {
                let field = &record[i];
                if seen[i] && last[i].0 == field {
                    return last[i].1;
                }
                let sym = if let Some(&s) = interner.get(field) {
                    s
                } else {
                    let sym = Sym::try_from(interned).expect("invariant: < 4G distinct strings");
                    interned += 1;
                    table
                        .strings
                        .push(String::from_utf8_lossy(field).into_owned());
                    interner.insert(field.to_vec(), sym);
                    sym
                };
                last[i].0.clear();
                last[i].0.extend_from_slice(field);
                last[i].1 = sym;
                seen[i] = true;
                sym
            };
            let (point, kernel, release, boot_id, workload, case, metric, unit) = (
                intern(0),
                intern(3),
                intern(4),
                intern(5),
                intern(6),
                intern(7),
                intern(8),
                intern(14),
            );
            let number = |i: usize, what: &str| -> Result<u32, SamplesError> {
                std::str::from_utf8(&record[i])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| malformed(line, format!("`{what}` is not a number")))
            };
            let phase = Phase::parse(&record[9]).ok_or_else(|| {
                malformed(line, "`phase` is neither warmup nor sample".to_owned())
            })?;
            let status = Status::parse(&record[12]).ok_or_else(|| {
                malformed(line, "`status` is not ok, failed or discarded".to_owned())
            })?;
            let value = if record[13].is_empty() {
                None
            } else {
                let parsed = std::str::from_utf8(&record[13])
                    .ok()
                    .and_then(|s| s.parse::<f64>().ok());
                match parsed {
                    Some(v) if v.is_finite() => Some(v),
                    _ => {
                        table.rejected.push((
                            line + line_base,
                            format!(
                                "value `{}` is not a finite number",
                                crate::text::quoted(&String::from_utf8_lossy(&record[13]))
                            ),
                        ));
                        continue;
                    }
                }
            };
            table.rows.push(Row {
                point,
                order: number(1, "order")?,
                attempt: number(2, "attempt")?,
                kernel,
                release,
                boot_id,
                workload,
                case,
                metric,
                phase,
                index: number(10, "index")?,
                retry: number(11, "retry")?,
                status,
                value,
                unit,
                line: line + line_base,
            });
            if table.rows.len() == BATCH_ROWS {
                flush(&mut table);
            }
        }
        Ok(table)
    }
}

/// A reader that fails once one CSV record (newlines inside quotes included, as the csv
/// crate reads them) exceeds [`ROW_BYTES`], so a hostile file is refused after reading one
/// row's worth of it, never held in memory whole, and in time linear in what was read.
/// `flag` keeps where the long row was cut: the 1-based line and byte column of the byte past
/// the bound, and the 0-based field it fell in, so the message can name all three.
struct RowBound<R> {
    inner: R,
    in_record: u64,
    in_quotes: bool,
    /// Newlines seen: completed physical lines.
    lines: u64,
    /// Bytes since the last newline.
    column: u64,
    /// Field separators outside quotes since the record started.
    field: usize,
    flag: std::rc::Rc<std::cell::Cell<Option<Cut>>>,
}

/// Where [`RowBound`] cut a row.
#[derive(Clone, Copy, Debug)]
struct Cut {
    line: u64,
    column: u64,
    field: usize,
}

impl<R> RowBound<R> {
    fn new(inner: R) -> Self {
        RowBound {
            inner,
            in_record: 0,
            in_quotes: false,
            lines: 0,
            column: 0,
            field: 0,
            flag: std::rc::Rc::default(),
        }
    }
}

impl<R: std::io::Read> std::io::Read for RowBound<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            self.in_record += 1;
            self.column += 1;
            match b {
                b'"' => self.in_quotes = !self.in_quotes,
                b',' if !self.in_quotes => self.field += 1,
                b'\n' => {
                    self.lines += 1;
                    self.column = 0;
                    if !self.in_quotes {
                        self.in_record = 0;
                        self.field = 0;
                    }
                }
                _ => {}
            }
            if self.in_record > ROW_BYTES {
                self.flag.set(Some(Cut {
                    line: self.lines + 1,
                    column: self.column,
                    field: self.field,
                }));
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "row too long",
                ));
            }
        }
        Ok(n)
    }
}

/// How a message names the 0-based field `i`: field `value`.
fn field_name(i: usize) -> String {
    match HEADER.get(i) {
        Some(name) => format!("field `{name}`"),
        None => format!("field {} (past the last of {})", i + 1, HEADER.len()),
    }
}

/// `path` opened for reading its complete lines (a partial last line left out), and whether
/// there was a partial last line.
pub(crate) fn open_complete(path: &Path) -> Result<(std::io::Take<File>, bool), SamplesError> {
    let io = |source| SamplesError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let file = crate::input::open_data(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let complete = complete_len(&file, len).map_err(io)?;
    Ok((file.take(complete), complete != len))
}

/// The length of `file` up to and including its last newline (0 without one), read from the
/// end in blocks.
fn complete_len(file: &File, len: u64) -> std::io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut end = len;
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..usize::try_from(end - start).expect("invariant: <= 64 KiB")];
        file.read_exact_at(chunk, start)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

#[cfg(test)]
mod tests;
