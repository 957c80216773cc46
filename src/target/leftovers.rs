//! What a command left behind when its own process exited: processes that still carry the
//! command's `ABA_RUN=<token>` in their environment (daemons it started, `setsid` children,
//! background jobs that kept its output open). A run ends when its process exits; these are
//! killed then and named, so that they neither hold the run open nor disturb the next sample.
//!
//! On this machine the search reads `/proc` directly; over SSH the wrapper shell does the same
//! search on the target and reports each process on stderr in a marker line that the host
//! takes out again ([`take_marker_lines`]).

/// The environment variable that names a command's processes.
pub(crate) const RUN_VAR: &str = "ABA_RUN";

/// The start of a marker line: an ASCII record separator, which workload output does not
/// contain by accident, then `aba-leftover <token> `.
pub(crate) fn marker_prefix(token: &str) -> String {
    format!("\u{1e}aba-leftover {token} ")
}

/// Kills every process of this machine whose environment holds `ABA_RUN=<token>`; returns them
/// as `PID command line`.
pub(crate) fn kill_marked(token: &str) -> Vec<String> {
    let wanted = format!("{RUN_VAR}={token}");
    let mut killed = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return killed;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ.split(|&b| b == 0).any(|v| v == wanted.as_bytes()) {
            continue;
        }
        killed.extend(kill_and_name(pid));
    }
    killed.sort();
    killed
}

/// Kills process `pid` of this machine; returns it as `PID command line` when it was killed.
pub(crate) fn kill_and_name(pid: u32) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let raw = i32::try_from(pid).ok()?;
    // SAFETY: kill(2) on a pid read from /proc or a cgroup; no memory-safety preconditions.
    (unsafe { libc::kill(raw, libc::SIGKILL) } == 0).then(|| describe(pid, &cmdline))
}

fn describe(pid: u32, cmdline: &[u8]) -> String {
    let words: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    format!("{pid} {}", words.join(" ")).trim_end().to_owned()
}

/// Removes the wrapper's marker lines for `token` from `stderr` (and reads those in `tail`,
/// what came after the kept part of a capped stream); returns the processes they name.
pub(crate) fn take_marker_lines(stderr: &mut Vec<u8>, tail: &[u8], token: &str) -> Vec<String> {
    let prefix = marker_prefix(token);
    let prefix = prefix.as_bytes();
    let mut found = Vec::new();
    let mut kept = Vec::with_capacity(stderr.len());
    let mut scan = |text: &[u8], keep: Option<&mut Vec<u8>>| {
        let mut keep = keep;
        for line in text.split_inclusive(|&b| b == b'\n') {
            // A marker may follow output that did not end in a newline.
            match find(line, prefix) {
                Some(at) => {
                    if let Some(k) = keep.as_deref_mut() {
                        k.extend_from_slice(&line[..at]);
                    }
                    let rest = &line[at + prefix.len()..];
                    let rest = rest.strip_suffix(b"\n").unwrap_or(rest);
                    found.push(String::from_utf8_lossy(rest).trim_end().to_owned());
                }
                None => {
                    if let Some(k) = keep.as_deref_mut() {
                        k.extend_from_slice(line);
                    }
                }
            }
        }
    };
    scan(stderr, Some(&mut kept));
    scan(tail, None);
    *stderr = kept;
    found
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::{marker_prefix, take_marker_lines};

    #[test]
    fn marker_lines_are_taken_out_of_stderr() {
        let p = marker_prefix("ab12");
        let mut stderr =
            format!("warn: x\npartial{p}123 sleep 600\n{p}124 sh -c x\nlast\n").into_bytes();
        let found = take_marker_lines(&mut stderr, b"", "ab12");
        assert_eq!(found, ["123 sleep 600", "124 sh -c x"]);
        assert_eq!(String::from_utf8_lossy(&stderr), "warn: x\npartiallast\n");
        // Another token's lines are workload output.
        let mut other = format!("{}9 x\n", marker_prefix("zz")).into_bytes();
        assert!(take_marker_lines(&mut other, b"", "ab12").is_empty());
        assert!(!other.is_empty());
    }
}
