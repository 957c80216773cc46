//! Errors that point into a TOML file: `file:line:column`, the dotted key, the line itself with
//! a caret under the culprit, and the valid alternatives.
//!
//! Recipes and target inventories are written by hand and shared between testers, so an error
//! must be fixable without reading aba's source. The toml crate gives us a byte span and a
//! message; we add the key path (found by walking the document's spans) and "did you mean"
//! suggestions, and render everything in one format for parse and validation errors alike.
//!
//! A message may carry its own advice: lines after the first that start with `help: ` (the
//! convention of [`crate::recipe::ident`] and of values' own `Deserialize` errors) become
//! help notes, so advice reaches the user the same way whether it came from toml or from a
//! cross-field check.

use std::{fmt, ops::Range, path::PathBuf};

use toml::de::{DeTable, DeValue};

/// One problem in one TOML file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as the user named it.
    pub file: PathBuf,
    /// 1-based line of the culprit.
    pub line: usize,
    /// 1-based column (in characters) of the culprit.
    pub column: usize,
    /// Dotted key path of the culprit (`workload[2].metric.json`), when it is inside a key.
    pub key: Option<String>,
    /// What is wrong, as a lowercase fragment.
    pub message: String,
    /// The culprit's line, control characters escaped; a long line is cut to a window around
    /// the culprit, marked with `…` at either end.
    pub source_line: String,
    /// Where the caret starts in `source_line`, in characters.
    pub caret_offset: usize,
    /// Width of the caret underline, at least 1.
    pub caret_len: usize,
    /// Suggestions and the list of valid alternatives.
    pub help: Vec<String>,
}

impl Diagnostic {
    /// Builds a diagnostic for the byte range `span` of `source`. `help: ` lines after the
    /// message's first line become help notes.
    pub fn at(
        file: impl Into<PathBuf>,
        source: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        let (message, help) = split_help(&message.into());
        let span = span.unwrap_or(0..0);
        let mut start = span.start.min(source.len());
        while !source.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = span.end.clamp(start, source.len());
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let text = source[line_start..line_end].trim_end_matches('\r');
        let before = &text[..(start - line_start).min(text.len())];
        let culprit =
            &text[before.len()..(end.min(line_end) - line_start).clamp(before.len(), text.len())];
        let after = &text[before.len() + culprit.len()..];
        let window = Window::around(before, culprit, after);
        let key = key_path_at(source, start).map(|k| {
            let k = crate::text::one_line(&k);
            match k.char_indices().nth(300) {
                Some((end, _)) => format!("{}…", &k[..end]),
                None => k.into_owned(),
            }
        });
        Diagnostic {
            file: file.into(),
            line,
            column,
            key,
            message: shown_message(&message),
            source_line: window.line,
            caret_offset: window.caret_offset,
            caret_len: window.caret_len,
            help: help.iter().map(|h| shown_message(h)).collect(),
        }
    }

    /// Adds a help line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// Adds `did you mean …?` when one of `known` is close to `unknown` (shown by `show`, e.g.
    /// in backticks); returns that name.
    pub fn suggest<'k>(
        &mut self,
        unknown: &str,
        known: impl IntoIterator<Item = &'k str>,
        show: impl Fn(&str) -> String,
    ) -> Option<&'k str> {
        let best = did_you_mean(unknown, known)?;
        self.help.push(format!("did you mean {}?", show(best)));
        Some(best)
    }

    /// Builds a diagnostic from a toml error, adding "did you mean" for unknown keys and
    /// unknown variants.
    pub fn from_toml(file: impl Into<PathBuf>, source: &str, err: &toml::de::Error) -> Self {
        let message = err.message().trim().to_owned();
        let mut diag = Diagnostic::at(file, source, err.span(), message.clone());
        if let Some((unknown, expected)) = parse_unknown(&message) {
            diag.suggest(&unknown, expected.iter().map(String::as_str), ticked);
            if !expected.is_empty() {
                let list = expected
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                diag.help.push(format!("valid here: {list}"));
            }
            // toml's message already lists the alternatives; keep the headline short, and the
            // unknown name shown once, cut.
            let what = if message.starts_with("unknown variant") {
                "unknown variant"
            } else {
                "unknown field"
            };
            diag.message = format!("{what} `{}`", crate::text::quoted(&unknown));
        } else if let Some((headline, help)) = type_help(&diag.message) {
            diag.message = headline;
            diag.help.push(help);
        }
        diag
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.message)?;
        let gutter = self.line.to_string().len();
        let pad = " ".repeat(gutter);
        write!(
            f,
            "{pad}--> {}:{}:{}",
            self.file.display(),
            self.line,
            self.column
        )?;
        if let Some(key) = &self.key {
            write!(f, " (key `{key}`)")?;
        }
        writeln!(f)?;
        writeln!(f, "{pad} |")?;
        writeln!(f, "{} | {}", self.line, self.source_line)?;
        write!(
            f,
            "{pad} | {}{}",
            " ".repeat(self.caret_offset),
            "^".repeat(self.caret_len)
        )?;
        for help in &self.help {
            write!(f, "\n{pad} = help: {help}")?;
        }
        Ok(())
    }
}

/// Longest message or help line shown; what a hostile value makes longer is cut with its
/// length.
const MESSAGE_CHARS: usize = 600;
/// Characters of the culprit's line shown before and after the culprit.
const CONTEXT_CHARS: usize = 60;
/// Characters of the culprit itself shown.
const CULPRIT_CHARS: usize = 80;

/// A message as shown: control characters escaped, cut when very long.
fn shown_message(text: &str) -> String {
    crate::text::cut(&crate::text::one_line(text), MESSAGE_CHARS).into_owned()
}

/// The part of the culprit's line that is shown, and where the caret goes in it.
struct Window {
    line: String,
    caret_offset: usize,
    caret_len: usize,
}

impl Window {
    fn around(before: &str, culprit: &str, after: &str) -> Window {
        let esc = |t: &str| crate::text::one_line(t).into_owned();
        let (before, culprit, after) = (esc(before), esc(culprit), esc(after));
        let n = |t: &str| t.chars().count();
        let mut line = String::new();
        let skip = n(&before).saturating_sub(CONTEXT_CHARS);
        if skip > 0 {
            line.push('…');
        }
        line.extend(before.chars().skip(skip));
        let caret_offset = n(&line);
        let shown_culprit: String = culprit.chars().take(CULPRIT_CHARS).collect();
        let caret_len = n(&shown_culprit).max(1);
        line.push_str(&shown_culprit);
        if n(&culprit) > CULPRIT_CHARS {
            line.push('…');
        } else {
            line.extend(after.chars().take(CONTEXT_CHARS));
            if n(&after) > CONTEXT_CHARS {
                line.push('…');
            }
        }
        Window {
            line,
            caret_offset,
            caret_len,
        }
    }
}

/// Splits a message into its first line and the `help: ` lines after it; other lines stay in
/// the message, joined by spaces.
fn split_help(message: &str) -> (String, Vec<String>) {
    let mut lines = message.trim().lines();
    let mut text = lines.next().unwrap_or_default().trim_end().to_owned();
    let mut help = Vec::new();
    for line in lines {
        match line.trim().strip_prefix("help: ") {
            Some(h) => help.push(h.to_owned()),
            None => {
                text.push(' ');
                text.push_str(line.trim());
            }
        }
    }
    (text, help)
}

/// serde's "invalid type: string \"9\", expected u32" in plain words (no Rust type names),
/// and what to write instead.
fn type_help(message: &str) -> Option<(String, String)> {
    let rest = message.strip_prefix("invalid type: ")?;
    let (found, expected) = rest.split_once(", expected ")?;
    let wanted = match expected.trim() {
        "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32" | "i64" | "usize" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" | "bool" => "`true` or `false`",
        other => other,
    };
    let help = if found.starts_with("string") && wanted != "a string" {
        format!("this key takes {wanted}: write it without quotes")
    } else if wanted == "a string" {
        "this key takes a string: put the value in quotes".to_owned()
    } else {
        format!("this key takes {wanted}")
    };
    Some((format!("invalid type: {found}, expected {wanted}"), help))
}

/// Splits toml's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant") into the
/// unknown name and the alternatives.
fn parse_unknown(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let end = rest.find('`')?;
    let unknown = rest[..end].to_owned();
    let tail = &rest[end + 1..];
    let expected = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    Some((unknown, expected))
}

/// `name` in backticks, as messages quote names.
pub fn ticked(name: &str) -> String {
    format!("`{name}`")
}

/// The closest candidate by edit distance, when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // No name aba suggests is long: a hostile megabyte-long key gets no (quadratic) search.
    if wrong.len() > 128 {
        return None;
    }
    let wrong_lower = wrong.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&wrong_lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(wrong.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance over characters, counting a swap of two neighbours as one edit (optimal
/// string alignment): `levle` is one typo away from `level`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The dotted key path of the innermost key or value whose span contains `offset`.
///
/// Parsing twice costs microseconds and keeps the serde model free of spans it does not need.
pub fn key_path_at(source: &str, offset: usize) -> Option<String> {
    let doc = DeTable::parse(source).ok()?;
    let mut path = String::new();
    walk_table(doc.get_ref(), offset, &mut path).then_some(path)
}

fn walk_table(table: &DeTable<'_>, offset: usize, path: &mut String) -> bool {
    for (key, value) in table {
        let key_span = key.span();
        let value_span = value.span();
        let in_key = key_span.start <= offset && offset < key_span.end.max(key_span.start + 1);
        let in_value =
            value_span.start <= offset && offset < value_span.end.max(value_span.start + 1);
        if in_key || in_value || contains_nested(value.get_ref(), offset) {
            if !path.is_empty() {
                path.push('.');
            }
            push_key(path, key.get_ref());
            if !in_key {
                walk_value(value.get_ref(), offset, path);
            }
            return true;
        }
    }
    false
}

/// Appends a key as TOML writes it: bare when it can be, quoted otherwise
/// (`files."bench.c"`, not `files.bench.c`).
fn push_key(path: &mut String, key: &str) {
    // A long key is named in the message; the path only needs to be recognisable.
    let short: String;
    let key = match key.char_indices().nth(128) {
        Some((end, _)) => {
            short = format!("{}…", &key[..end]);
            short.as_str()
        }
        None => key,
    };
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        path.push_str(key);
    } else {
        path.push_str(&format!("{key:?}"));
    }
}

fn walk_value(value: &DeValue<'_>, offset: usize, path: &mut String) {
    match value {
        DeValue::Table(table) => {
            walk_table(table, offset, path);
        }
        DeValue::Array(array) => {
            for (i, item) in array.iter().enumerate() {
                let span = item.span();
                if (span.start <= offset && offset < span.end)
                    || contains_nested(item.get_ref(), offset)
                {
                    path.push_str(&format!("[{}]", i + 1));
                    walk_value(item.get_ref(), offset, path);
                    return;
                }
            }
        }
        _ => {}
    }
}

/// Tables declared with `[header]` syntax have spans that do not cover their keys, so look
/// inside them explicitly.
fn contains_nested(value: &DeValue<'_>, offset: usize) -> bool {
    match value {
        DeValue::Table(table) => table.iter().any(|(k, v)| {
            let (ks, vs) = (k.span(), v.span());
            (ks.start <= offset && offset < ks.end)
                || (vs.start <= offset && offset < vs.end)
                || contains_nested(v.get_ref(), offset)
        }),
        DeValue::Array(array) => array.iter().any(|item| {
            let s = item.span();
            (s.start <= offset && offset < s.end) || contains_nested(item.get_ref(), offset)
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{Diagnostic, did_you_mean, key_path_at};

    #[test]
    fn suggestions_catch_typos_only() {
        let keys = ["warmup", "samples", "sequence"];
        assert_eq!(did_you_mean("warmpu", keys), Some("warmup"));
        assert_eq!(did_you_mean("sample", keys), Some("samples"));
        assert_eq!(did_you_mean("colour", keys), None);
    }

    #[test]
    fn key_paths_follow_headers_and_arrays() {
        let src = "name = \"x\"\n[kernels.a]\nrelease = \"1\"\n[[workload]]\nname = \"w\"\n[[workload]]\nname = \"v\"\nmetric = { json = \"/x\" }\n";
        let at = |needle: &str| key_path_at(src, src.find(needle).expect("needle"));
        assert_eq!(at("release").as_deref(), Some("kernels.a.release"));
        assert_eq!(at("\"v\"").as_deref(), Some("workload[2].name"));
        assert_eq!(at("\"/x\"").as_deref(), Some("workload[2].metric.json"));
    }

    #[test]
    fn help_lines_in_a_message_become_help_notes() {
        let src = "samples = \"9\"\n";
        let diag = Diagnostic::at("r.toml", src, Some(10..13), "bad value\nhelp: write 9");
        assert_eq!(diag.message, "bad value");
        assert_eq!(diag.help, ["write 9"]);
    }

    #[test]
    fn wrong_types_get_advice() {
        let (headline, help) =
            super::type_help("invalid type: string \"9\", expected u32").expect("a type error");
        assert_eq!(headline, "invalid type: string \"9\", expected an integer");
        assert_eq!(help, "this key takes an integer: write it without quotes");
        let (_, help) =
            super::type_help("invalid type: integer `1`, expected a string").expect("a type error");
        assert_eq!(help, "this key takes a string: put the value in quotes");
        assert_eq!(super::type_help("unknown field `x`"), None);
    }

    /// A culprit deep in a megabyte-long line is shown in a window, escaped, with the caret
    /// under it; the location still names the true column.
    #[test]
    fn long_lines_are_windowed_and_escaped() {
        let src = format!(
            "x = \"{}\u{1b}BAD{}\"\n",
            "a".repeat(100_000),
            "b".repeat(100_000)
        );
        let start = src.find('\u{1b}').expect("present");
        let diag = Diagnostic::at("r.toml", &src, Some(start..start + 4), "bad");
        assert_eq!(diag.column, 100_006);
        assert!(diag.source_line.len() < 300, "{}", diag.source_line);
        assert!(diag.source_line.starts_with('…') && diag.source_line.ends_with('…'));
        let shown: String = diag
            .source_line
            .chars()
            .skip(diag.caret_offset)
            .take(diag.caret_len)
            .collect();
        assert_eq!(shown, "\\u{1b}BAD");
    }

    #[test]
    fn renders_file_line_column_key_and_caret() {
        let src = "version = 1\nwarmpu = 3\n";
        let start = src.find("warmpu").expect("present");
        let diag = Diagnostic::at(
            "r.toml",
            src,
            Some(start..start + 6),
            "unknown field `warmpu`",
        )
        .with_help("did you mean `warmup`?");
        assert_eq!(
            diag.to_string(),
            "unknown field `warmpu`\n --> r.toml:2:1 (key `warmpu`)\n  |\n2 | warmpu = 3\n  | ^^^^^^\n  = help: did you mean `warmup`?"
        );
    }
}
