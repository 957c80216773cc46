//! What a failure report quotes from a target's console log: the lines that explain a dead
//! kernel (panic, Oops, BUG, call traces, the last messages of the boot), not the forty lines
//! of SSH probe noise that happen to come last, and never the terminal control bytes a serial
//! console carries (`ESC[6n` reached a tester's terminal once).

/// How much of the end of the log is searched: the failed boot is near the end.
const SEARCH_BYTES: usize = 512 * 1024;
/// Lines kept before a line that matters.
const BEFORE: usize = 3;
/// Lines kept after a line that matters (a call trace follows its header).
const AFTER: usize = 12;
/// Last lines of the boot, shown after the excerpts.
const LAST: usize = 12;
/// At most this many lines in all.
const MAX_LINES: usize = 80;

/// Words that start the lines a kernel developer looks for first.
const MARKS: &[&str] = &[
    "Kernel panic",
    "Oops",
    "BUG:",
    "WARNING:",
    "Call Trace:",
    "RIP:",
    "general protection fault",
    "Unable to handle",
    "Kernel Offset:",
    "---[ end",
    "watchdog: BUG",
    "rcu: INFO",
    "hung_task",
    "Out of memory",
    "No working init found",
    "not syncing",
    "kexec",
    // A kernel that cannot find or mount its root: the initramfs's and the kernel's words,
    // and the reboot that hands the machine to the boot loader's fallback.
    "Gave up waiting",
    "ALERT!",
    "VFS: Cannot open root",
    "Unable to mount root",
    "Dropping to a shell",
    "Rebooting automatically",
    "Rebooting in ",
    "emergency mode",
    "Timed out waiting for device",
];

/// Lines that are only the host probing for SSH while the target boots.
const NOISE: &[&str] = &[
    "kex_exchange_identification",
    "Connection closed by",
    "Connection reset by",
    "banner exchange",
    "Disconnected from",
    "error: kex_exchange",
    "Received disconnect",
];

/// The excerpt of `log` to quote, as indented lines, or `None` when the log has nothing.
pub fn excerpt(log: &[u8]) -> Option<String> {
    let start = log.len().saturating_sub(SEARCH_BYTES);
    let text = clean(&String::from_utf8_lossy(&log[start..]));
    let lines: Vec<&str> = text
        .lines()
        .skip(usize::from(start > 0)) // the first line may be cut
        .filter(|l| !l.trim().is_empty() && !NOISE.iter().any(|n| l.contains(n)))
        .collect();
    if lines.is_empty() {
        return None;
    }
    let mut keep = vec![false; lines.len()];
    let mut marked = false;
    for (i, line) in lines.iter().enumerate() {
        if MARKS.iter().any(|m| line.contains(m)) {
            marked = true;
            let from = i.saturating_sub(BEFORE);
            let to = (i + AFTER + 1).min(lines.len());
            keep[from..to].iter_mut().for_each(|k| *k = true);
        }
    }
    let last_from = lines.len().saturating_sub(LAST);
    keep[last_from..].iter_mut().for_each(|k| *k = true);
    let mut out: Vec<String> = Vec::new();
    let mut gap = false;
    for (line, kept) in lines.iter().zip(&keep) {
        if *kept {
            if gap && !out.is_empty() {
                out.push("…".to_owned());
            }
            gap = false;
            out.push((*line).to_owned());
        } else {
            gap = true;
        }
    }
    // Keep the end (the failure) when there is too much.
    if out.len() > MAX_LINES {
        let cut = out.len() - MAX_LINES;
        out.drain(..cut);
        out.insert(0, format!("… ({cut} earlier excerpt lines left out)"));
    }
    let heading = if marked {
        "the lines that matter (panic, Oops, BUG, traces) and the last lines"
    } else {
        "its last lines"
    };
    Some(format!("{heading}:\n    {}", out.join("\n    ")))
}

/// The part of the console log at `path` written since byte `from` (where it ended when the
/// attempt began), at most the last [`SEARCH_BYTES`] of it, its first line whole. A file
/// shorter than `from` was rotated or truncated since: all of it is then the attempt's.
pub fn since(path: &std::path::Path, from: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let from = if len < from { 0 } else { from };
    let start = from.max(len.saturating_sub(SEARCH_BYTES as u64));
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(len - start).read_to_end(&mut bytes)?;
    if start > from {
        // Cut inside the attempt's part: its first line may be cut too.
        let whole = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..whole);
    }
    Ok(bytes)
}

/// `text` without terminal control sequences (CSI, OSC, other ESC sequences), carriage
/// returns or other control characters; tabs become spaces.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte @..~
                Some('[') => {
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \
                Some(']') => {
                    while let Some(d) = chars.next() {
                        if d == '\u{7}' {
                            break;
                        }
                        if d == '\u{1b}' {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' => out.push('\n'),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{SEARCH_BYTES, clean, excerpt, since};

    #[test]
    fn control_sequences_are_removed() {
        assert_eq!(
            clean("a\u{1b}[6nb\u{1b}[1;31mred\u{1b}[0m\r\n\u{1b}]0;title\u{7}c\u{7}d\u{1b}c"),
            "abred\ncd"
        );
    }

    /// The panic 300 lines before the end is quoted, the probe noise after it is not.
    #[test]
    fn the_panic_is_quoted_not_the_probe_noise() {
        let mut log = String::new();
        for i in 0..50 {
            log.push_str(&format!("[    1.{i:03}] booting line {i}\n"));
        }
        log.push_str("[    2.000] Kernel panic - not syncing: No working init found.\n");
        log.push_str("[    2.001] CPU: 0 PID: 1 Comm: swapper/0\n");
        log.push_str(
            "[    2.002] Call Trace:\n[    2.003]  <TASK>\n[    2.004]  dump_stack_lvl+0x44/0x5c\n",
        );
        for i in 0..40 {
            log.push_str(&format!("[    3.{i:03}] boot message {i}\n"));
        }
        for _ in 0..300 {
            log.push_str(
                "sshd[99]: kex_exchange_identification: Connection closed by remote host\n",
            );
        }
        log.push_str("\u{1b}[6n");
        let text = excerpt(log.as_bytes()).expect("an excerpt");
        assert!(text.contains("Kernel panic - not syncing"), "{text}");
        assert!(text.contains("dump_stack_lvl"), "{text}");
        assert!(text.contains("boot message 39"), "the last lines: {text}");
        assert!(!text.contains("kex_exchange_identification"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(text.contains("…"), "gaps are marked: {text}");
        assert!(text.lines().count() < 60, "{text}");
    }

    /// A root that does not exist: the initramfs's lines are quoted, though none is a panic.
    #[test]
    fn a_missing_root_is_quoted() {
        let mut log = String::new();
        log.push_str("Begin: Running /scripts/local-block ... done.\n");
        log.push_str("Gave up waiting for root file system device.  Common problems:\n");
        for i in 0..30 {
            log.push_str(&format!(" - hint {i}\n"));
        }
        log.push_str("ALERT!  UUID=0000 does not exist.  Dropping to a shell!\n");
        log.push_str("Rebooting automatically due to panic= boot argument\n");
        for i in 0..40 {
            log.push_str(&format!("[    1.{i:03}] the fallback boot's line {i}\n"));
        }
        let text = excerpt(log.as_bytes()).expect("an excerpt");
        for line in [
            "Gave up waiting",
            "ALERT!  UUID=0000",
            "Rebooting automatically",
        ] {
            assert!(text.contains(line), "{line}: {text}");
        }
        assert!(text.contains("line 39"), "{text}");
    }

    /// Only what was written since the attempt began is read; a log rotated since is whole.
    #[test]
    fn only_the_attempts_part_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("console.log");
        std::fs::write(&path, "Kernel panic - an earlier campaign\nthis attempt\n").expect("write");
        let from = "Kernel panic - an earlier campaign\n".len() as u64;
        assert_eq!(since(&path, from).expect("read"), b"this attempt\n");
        assert_eq!(since(&path, 10_000).expect("read").len(), 48);
        let mut big = "x".repeat(100);
        big.push('\n');
        big.push_str(&"y\n".repeat(SEARCH_BYTES / 2 + 10));
        std::fs::write(&path, &big).expect("write");
        let read = since(&path, 0).expect("read");
        assert!(read.len() <= SEARCH_BYTES, "{}", read.len());
        assert!(read.starts_with(b"y\n"), "starts on a whole line");
    }

    #[test]
    fn an_empty_log_has_no_excerpt() {
        assert_eq!(excerpt(b""), None);
        assert_eq!(excerpt(b"\n\n"), None);
    }
}
