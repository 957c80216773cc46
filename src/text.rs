//! Free text that came from someone else's file (a recipe's description, a unit, a value echoed
//! in an error, a target's output): what it may contain, and how it is shown.
//!
//! A recipe is shared between testers, so whatever it holds reaches their terminals, their
//! `report.txt` and the mail they send. Control characters (ESC sequences that recolour or
//! retitle a terminal, BEL, a carriage return that overwrites a line) are refused where the
//! text is read, and escaped where it is shown; a long value is shown once, cut, with its
//! length. This module only formats: it never decides what is valid for a given key.

use std::{borrow::Cow, fmt::Write as _};

/// How many characters of a string from someone else's file (a journal's reason, a label) a
/// report or a terminal shows before cutting it.
pub const UNTRUSTED_CHARS: usize = 400;

/// How many characters of an echoed value an error shows before cutting it.
pub const SHOWN_CHARS: usize = 48;

/// The first control character of `text` (C0, DEL or C1) that is not in `allowed`.
pub fn control_char(text: &str, allowed: &[char]) -> Option<char> {
    text.chars()
        .find(|c| c.is_control() && !allowed.contains(c))
}

/// `'\u{1b}'` for ESC, `'\t'` for a tab: how a control character is named in an error.
pub fn char_name(c: char) -> String {
    format!("{c:?}")
}

/// `text` with every control character except newline written as an escape (`\u{1b}`), so
/// printing it cannot drive the terminal. Tabs are escaped too: they would misalign columns.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`printable`] with newlines escaped as well: for one line of a table or a checklist.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` when it has at most `max` characters; else its first `max` characters, `…` and its
/// length in characters: `aaaa… (100000 characters)`.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!(
            "{}… ({} characters)",
            &text[..end],
            text.chars().count()
        )),
    }
}

/// A value as an error quotes it: cut to [`SHOWN_CHARS`] and Rust-escaped (`\n`, `\u{1b}`),
/// so a hostile value is shown once, short and inert.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.escape_debug().to_string(),
        Some((end, _)) => format!(
            "{}… ({} characters)",
            text[..end].escape_debug(),
            text.chars().count()
        ),
    }
}

/// Text from a file aba did not write (a journal's reason, a bundle's label, a lock record) as
/// a terminal or a report shows it: on one line with every control character escaped, and at
/// most `max` characters, the cut said with the length. Every such string goes through here
/// (or through [`quoted`], its short form for errors) before it is printed or written.
pub fn untrusted(text: &str, max: usize) -> Cow<'_, str> {
    match one_line(text) {
        Cow::Borrowed(line) => cut(line, max),
        Cow::Owned(line) => Cow::Owned(cut(&line, max).into_owned()),
    }
}

/// The last `n` lines of `text` that are not blank, oldest first: the end of a command's
/// stderr, quoted in a message.
pub fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].to_vec()
}

/// A byte count the way people read it: `512 bytes`, `1.0 MiB`, `8.0 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    #[expect(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::{bytes, control_char, cut, last_lines, one_line, printable, quoted, untrusted};

    #[test]
    fn control_characters_are_found_and_escaped() {
        assert_eq!(control_char("plain text\n", &['\n']), None);
        assert_eq!(control_char("a\u{1b}[31mred", &['\n']), Some('\u{1b}'));
        assert_eq!(control_char("bell\u{7}", &[]), Some('\u{7}'));
        assert_eq!(control_char("c1\u{9b}", &[]), Some('\u{9b}'));
        assert_eq!(printable("a\u{1b}[2Jb\nc\td"), "a\\u{1b}[2Jb\nc\\td");
        assert_eq!(one_line("a\nb"), "a\\nb");
        assert!(matches!(printable("clean"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut(&"x".repeat(100_000), 4), "xxxx… (100000 characters)");
        let q = quoted(&format!("{}\u{1b}", "é".repeat(100)));
        assert!(q.ends_with("… (101 characters)"), "{q}");
        assert_eq!(quoted("a\nb"), "a\\nb");
        assert_eq!(untrusted("a\u{1b}[2J\nb", 100), "a\\u{1b}[2J\\nb");
        assert_eq!(untrusted(&"y".repeat(500), 3), "yyy… (500 characters)");
    }

    #[test]
    fn the_last_lines_skip_blank_ones() {
        assert_eq!(last_lines("a\n\nb\n  \nc\nd\n", 3), ["b", "c", "d"]);
        assert_eq!(last_lines("only\n", 3), ["only"]);
        assert!(last_lines(" \n\n", 3).is_empty());
    }

    #[test]
    fn sizes_read_like_sizes() {
        assert_eq!(bytes(512), "512 bytes");
        assert_eq!(bytes(1 << 20), "1.0 MiB");
        assert_eq!(bytes(8 << 30), "8.0 GiB");
    }
}
