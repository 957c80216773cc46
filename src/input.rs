//! Opening files aba did not write itself (a recipe, an inventory, a results directory someone
//! sent): regular files only, opened without blocking, read up to a limit.
//!
//! A FIFO named as a recipe would block `open` until some writer appears, and `/dev/zero`
//! would be read forever; both are refused before a byte is read. The check is made on the
//! path (so a device is never even opened) and again on the open file (so a swap between the
//! two cannot slip through).

use std::{
    fs::{File, Metadata, OpenOptions},
    io::{self, Read as _},
    os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _},
    path::Path,
};

/// Largest recipe or target inventory aba reads: 1 MiB. The largest real recipe is a few KiB.
pub const CONFIG_LIMIT: u64 = 1 << 20;

/// What a file that is not a regular file is, in words.
fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

fn not_regular(meta: &Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", kind(meta)),
    )
}

/// Opens `path` for reading if it is a regular file (symlinks followed), without ever blocking
/// on a FIFO or opening a device.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_checked(path, true)
}

/// [`open_regular`] that refuses a symbolic link: for the raw data of a results directory
/// (journal, samples), which aba never writes as a link and which someone else may have made
/// one to any file of this machine.
pub fn open_data(path: &Path) -> io::Result<File> {
    open_checked(path, false)
}

fn open_checked(path: &Path, follow: bool) -> io::Result<File> {
    let meta = if follow {
        std::fs::metadata(path)?
    } else {
        std::fs::symlink_metadata(path)?
    };
    if meta.file_type().is_symlink() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a symbolic link; aba reads a results or batch directory's raw data only \
             from regular files",
        ));
    }
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    // O_NONBLOCK: a FIFO swapped in after the check above opens at once instead of waiting for
    // a writer; it is then refused by the second check. It has no effect on regular files.
    let no_follow = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | no_follow)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok(file)
}

/// Reads the regular file at `path` as UTF-8 text of at most `limit` bytes; `what` names the
/// kind of file in the error (`recipe`, `target inventory`).
pub fn read_text(path: &Path, limit: u64, what: &str) -> io::Result<String> {
    read_limited(open_regular(path)?, limit, what)
}

/// [`read_text`] of raw data someone else may have written as a link (a batch journal):
/// opened like [`open_data`], never through a link.
pub fn read_data_text(path: &Path, limit: u64, what: &str) -> io::Result<String> {
    read_limited(open_data(path)?, limit, what)
}

/// The UTF-8 text of `file`, at most `limit` bytes (`what` names the file in the error).
fn read_limited(file: File, limit: u64, what: &str) -> io::Result<String> {
    let len = file.metadata()?.len();
    let too_large = |len: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is {}; a {what} file is at most {}",
                crate::text::bytes(len),
                crate::text::bytes(limit)
            ),
        )
    };
    if len > limit {
        return Err(too_large(len));
    }
    let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // One byte more than the limit: a file that grows while it is read is still caught.
    file.take(limit + 1).read_to_end(&mut data)?;
    if data.len() as u64 > limit {
        return Err(too_large(data.len() as u64));
    }
    String::from_utf8(data).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// The folder a file's relative paths resolve from: its parent, `.` for a bare file name.
pub fn folder_of(path: &Path) -> std::path::PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// A path written in a tester's file: `~/…` from the home directory, a relative path from
/// `base` (the file's folder), an absolute one as it is.
pub fn resolve_from(path: &str, base: &Path) -> std::path::PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return std::path::PathBuf::from(home).join(rest);
    }
    let p = std::path::PathBuf::from(path);
    if p.is_absolute() { p } else { base.join(p) }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::read_text;

    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("recipe.toml");
        let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("no NUL");
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a directory entry.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        let err = read_text(&fifo, 1024, "recipe").expect_err("a FIFO");
        assert!(err.to_string().contains("a FIFO"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let err = read_text(std::path::Path::new("/dev/zero"), 1024, "recipe").expect_err("dev");
        assert!(err.to_string().contains("character device"), "{err}");
        let err = read_text(dir.path(), 1024, "recipe").expect_err("a directory");
        assert!(err.to_string().contains("a directory"), "{err}");
    }

    #[test]
    fn size_and_encoding_are_limited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; 2048]).expect("write");
        let err = read_text(&big, 1024, "recipe").expect_err("too large");
        assert_eq!(
            err.to_string(),
            "it is 2.0 KiB; a recipe file is at most 1.0 KiB"
        );
        std::fs::write(&big, b"a = \"\xff\"").expect("write");
        let err = read_text(&big, 1024, "recipe").expect_err("not UTF-8");
        assert!(err.to_string().contains("not UTF-8"), "{err}");
        std::fs::write(&big, "version = 1\n").expect("write");
        assert_eq!(
            read_text(&big, 1024, "recipe").expect("fine"),
            "version = 1\n"
        );
    }
}
