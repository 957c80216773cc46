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
    use super::{clean, excerpt};

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

    #[test]
    fn an_empty_log_has_no_excerpt() {
        assert_eq!(excerpt(b""), None);
        assert_eq!(excerpt(b"\n\n"), None);
    }
}
