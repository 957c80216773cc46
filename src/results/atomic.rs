//! Durable file updates: whole-file replacement by rename, and repair of a file whose last line
//! a killed writer left unfinished.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    os::unix::fs::OpenOptionsExt as _,
    path::{Path, PathBuf},
};

/// Replaces `path` with `data`: write a sibling temporary file, fsync it, rename it over the
/// target, fsync the directory. A reader sees the old or the new file, never a mix.
///
/// The folder may be someone else's (a results directory that was sent): the temporary file
/// has a random name and is created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a file or link
/// planted at any name is never written through; a name that exists is skipped for another.
/// `rename` replaces a link at `path` itself, never what it points to.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (mut file, tmp) = create_temporary(dir, &name)?;
    let result = (|| {
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

/// How many random names [`create_temporary`] tries before giving up: each one that exists
/// was planted or is another writer's, and 64 random bits do not collide by chance.
const TEMPORARY_ATTEMPTS: usize = 16;

/// Creates a new file `.<name>.tmp-<random>` in `dir` that did not exist (never a link).
fn create_temporary(dir: &Path, name: &str) -> std::io::Result<(File, PathBuf)> {
    let mut last = None;
    for _ in 0..TEMPORARY_ATTEMPTS {
        let tmp = dir.join(format!(".{name}.tmp-{}", random_hex()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(file) => return Ok((file, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::AlreadyExists)))
}

/// 16 random hex digits (`getrandom`; the clock and pid if it fails).
pub(crate) fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != 8 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        #[expect(clippy::cast_possible_truncation, reason = "the low bits vary")]
        let low = nanos as u64;
        bytes = (u64::from(std::process::id()) ^ low).to_le_bytes();
    }
    hex::encode(bytes)
}

/// Creates (or truncates) the regular file `path` for writing, refusing a symbolic link there
/// (`O_NOFOLLOW`: a link planted in a shared folder would have its target overwritten) and
/// anything that is not a regular file. For a log that is written as it goes.
pub fn create_log(path: &Path) -> std::io::Result<File> {
    let file = open_regular_no_link(
        OpenOptions::new().write(true).create(true).truncate(false),
        path,
    )?;
    file.set_len(0)?;
    Ok(file)
}

/// Opens the regular file `path` for appending, creating it (with `create`); a symbolic link
/// there is refused (`O_NOFOLLOW`), so a journal or samples.csv planted as a link in a
/// results directory someone sent never gets records appended to the file it names.
pub fn open_append(path: &Path, create: bool) -> std::io::Result<File> {
    open_regular_no_link(OpenOptions::new().append(true).create(create), path)
}

/// Opens `path` with `options` (a new file is 0666 before the umask) without following a
/// link, blocking on a FIFO or taking a terminal; `Err` unless it is a regular file.
fn open_regular_no_link(options: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    let file = options
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                link_refused()
            } else {
                e
            }
        })?;
    regular(&file)?;
    Ok(file)
}

/// `Err` unless `file` is a regular file.
fn regular(file: &File) -> std::io::Result<()> {
    if file.metadata()?.is_file() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ))
    }
}

/// [`write_atomic`] that refuses to replace a symbolic link: for a path the user named (a
/// manual page, a TSV), where a link is more likely a mistake than something to replace.
pub fn write_atomic_no_link(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(link_refused());
    }
    write_atomic(path, data)
}

fn link_refused() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "it is a symbolic link; aba does not write through links (remove it)",
    )
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
    // Not through a link, not a FIFO: see [`open_append`].
    let mut file = match open_regular_no_link(OpenOptions::new().read(true).write(true), path) {
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
    use super::{open_append, truncate_partial_line, write_atomic};

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

    /// Links planted at the temporary names an older aba used (`.f.tmp-<pid>`) and at a
    /// name that exists are never written through: the victim keeps its content.
    #[test]
    fn planted_links_at_temporary_names_are_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"secret").expect("write");
        let sent = dir.path().join("sent");
        std::fs::create_dir(&sent).expect("mkdir");
        std::os::unix::fs::symlink(&victim, sent.join(format!(".f.tmp-{}", std::process::id())))
            .expect("ln");
        let p = sent.join("f");
        write_atomic(&p, b"report").expect("write");
        assert_eq!(std::fs::read(&victim).expect("read"), b"secret");
        assert_eq!(std::fs::read(&p).expect("read"), b"report");
        // A link at the target itself is replaced, not written through.
        std::fs::remove_file(&p).expect("rm");
        std::os::unix::fs::symlink(&victim, &p).expect("ln");
        write_atomic(&p, b"again").expect("write");
        assert_eq!(std::fs::read(&victim).expect("read"), b"secret");
        assert!(
            !std::fs::symlink_metadata(&p)
                .expect("stat")
                .file_type()
                .is_symlink()
        );
    }

    /// A journal or samples.csv planted as a link: neither repaired nor appended to.
    #[test]
    fn appends_and_repairs_refuse_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"line\npartial").expect("write");
        let link = dir.path().join("journal.jsonl");
        std::os::unix::fs::symlink(&victim, &link).expect("ln");
        let err = truncate_partial_line(&link).expect_err("a link");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let err = open_append(&link, true).expect_err("a link");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read(&victim).expect("read"), b"line\npartial");
        open_append(&dir.path().join("new"), true).expect("created");
    }
}
