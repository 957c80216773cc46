//! Appending to a journal: one record at a time, each durable before the next.

use std::{
    fs::File,
    io::Write,
    path::{Path, PathBuf},
};

use super::{Event, JournalError};

/// Appends records and fsyncs each one before returning.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// Tests: how many more appends succeed before every one fails as on a full disk.
    #[cfg(test)]
    pub(crate) fail_after: Option<usize>,
}

impl JournalWriter {
    /// Opens `path` for appending, creating it; a partial last line (from a killed writer) is
    /// cut off first.
    pub fn open(path: &Path) -> Result<JournalWriter, JournalError> {
        let io = |source| JournalError::Io {
            action: "open",
            path: path.to_path_buf(),
            source,
        };
        crate::results::atomic::truncate_partial_line(path).map_err(io)?;
        let file = crate::results::atomic::open_append(path, true).map_err(io)?;
        Ok(JournalWriter {
            file,
            path: path.to_path_buf(),
            #[cfg(test)]
            fail_after: None,
        })
    }

    /// Appends one record and makes it durable.
    pub fn append(&mut self, event: &Event) -> Result<(), JournalError> {
        #[cfg(test)]
        crate::results::atomic::injected_failure(&mut self.fail_after).map_err(|source| {
            JournalError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            }
        })?;
        let mut line = serde_json::to_vec(event).expect("invariant: events serialise");
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.sync_data())
            .map_err(|source| JournalError::Io {
                action: "append to",
                path: self.path.clone(),
                source,
            })
    }
}

/// Now, as RFC 3339 UTC with seconds.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc())
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The current UTC time as RFC 3339 with microseconds, for records that time host-side events
/// precisely (`boot_proven`'s `proven_at`).
pub fn now_rfc3339_micros() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.replace_nanosecond(now.nanosecond() / 1000 * 1000)
        .unwrap_or(now)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
