//! Durable file updates: whole-file replacement by rename, and repair of a file whose last line
//! a killed writer left unfinished.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    path::Path,
};

/// Replaces `path` with `data`: write a sibling temporary file, fsync it, rename it over the
/// target, fsync the directory. A reader sees the old or the new file, never a mix.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(data)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Tests: counts down `left`; once it reached zero, every write fails with `ENOSPC`.
#[cfg(test)]
pub(crate) fn injected_failure(left: &mut Option<usize>) -> std::io::Result<()> {
    match left {
        Some(0) => Err(std::io::Error::from_raw_os_error(libc::ENOSPC)),
        Some(n) => {
            *n -= 1;
            Ok(())
        }
        None => Ok(()),
    }
}

/// fsyncs a directory so that a rename or a new file in it survives a crash.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Cuts a trailing partial line (bytes after the last `\n`) off `path`, if it exists. Appending
/// after such a tail would glue two records together.
pub fn truncate_partial_line(path: &Path) -> std::io::Result<()> {
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    // Scan backwards in blocks for the last newline.
    let mut end = len;
    let mut buf = vec![0u8; 8192];
    loop {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..usize::try_from(end - start).expect("invariant: block fits")];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(pos) = chunk.iter().rposition(|&b| b == b'\n') {
            let keep = start + pos as u64 + 1;
            if keep != len {
                file.set_len(keep)?;
                file.sync_all()?;
            }
            return Ok(());
        }
        if start == 0 {
            file.set_len(0)?;
            file.sync_all()?;
            return Ok(());
        }
        end = start;
    }
}

#[cfg(test)]
mod tests {
    use super::{truncate_partial_line, write_atomic};

    #[test]
    fn partial_tails_are_cut_complete_files_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"a\nb\npartial").expect("write");
        truncate_partial_line(&p).expect("truncate");
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nb\n");
        truncate_partial_line(&p).expect("idempotent");
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nb\n");
        std::fs::write(&p, b"no newline at all").expect("write");
        truncate_partial_line(&p).expect("truncate");
        assert_eq!(std::fs::read(&p).expect("read"), b"");
    }

    #[test]
    fn atomic_write_replaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}
