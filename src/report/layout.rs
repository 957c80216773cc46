//! Plain-text layout for a mailing-list reply: aligned tables, wrapped paragraphs, and the
//! last-resort pass that keeps every line within [`WIDTH`] columns whatever a template does.
//!
//! Widths are counted in characters (`ν` is one column), never in bytes.

/// The column limit of `report.txt`: what fits in a quoted mail reply without rewrapping.
pub const WIDTH: usize = 72;

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

/// A table of text cells, rendered with two spaces between columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    aligns: Vec<Align>,
    rows: Vec<Line>,
}

/// One line of a table.
#[derive(Clone, Debug)]
enum Line {
    /// Cells, aligned in columns.
    Cells(Vec<String>),
    /// Free text at the table's indent; it does not widen any column.
    Span(String),
}

impl Table {
    /// A table whose columns are aligned as `aligns` says.
    #[must_use]
    pub fn new(aligns: &[Align]) -> Table {
        Table {
            aligns: aligns.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are empty.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows
            .push(Line::Cells(cells.into_iter().map(Into::into).collect()));
    }

    /// Appends a line of free text that ignores the columns (a label too long for them).
    pub fn span(&mut self, text: impl Into<String>) {
        self.rows.push(Line::Span(text.into()));
    }

    /// Whether the table has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rendered lines, each prefixed by `indent` spaces, without trailing spaces.
    #[must_use]
    pub fn render(&self, indent: usize) -> String {
        let columns = self.aligns.len();
        let mut widths = vec![0; columns];
        for row in &self.rows {
            if let Line::Cells(row) = row {
                for (i, cell) in row.iter().enumerate().take(columns) {
                    widths[i] = widths[i].max(cell.chars().count());
                }
            }
        }
        let mut out = String::new();
        for row in &self.rows {
            let mut line = " ".repeat(indent);
            let row = match row {
                Line::Cells(cells) => cells,
                Line::Span(text) => {
                    line.push_str(text);
                    out.push_str(line.trim_end());
                    out.push('\n');
                    continue;
                }
            };
            for (i, width) in widths.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                let pad = width - cell.chars().count();
                if i > 0 {
                    line.push_str("  ");
                }
                match self.aligns[i] {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        line.push_str(&" ".repeat(pad));
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Greedy blocks of columns `[from, to)` that fit in [`WIDTH`]: as many columns of `widths`
/// (two spaces apart) as fit after a first column `first` wide (its indent included), then
/// the next block. Always at least one column per block, so an overwide column still shows.
#[must_use]
pub fn column_blocks(first: usize, widths: &[usize]) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    let mut start = 0;
    let mut used = first;
    for (i, w) in widths.iter().enumerate() {
        if i > start && used + 2 + w > WIDTH {
            blocks.push((start, i));
            start = i;
            used = first;
        }
        used += 2 + w;
    }
    blocks.push((start, widths.len()));
    blocks
}

/// A no-break space: prose joins words with it that must stay on one line (`ν = 4`, an
/// interval); [`wrap`] turns it into a plain space after wrapping.
pub const NBSP: char = '\u{a0}';

/// `text` with its spaces made unbreakable.
#[must_use]
pub fn keep_together(text: &str) -> String {
    text.replace(' ', &NBSP.to_string())
}

/// Wraps `text` into lines of at most `width` columns, each starting with `indent`. Words
/// are never split here (a word longer than a line gets a line of its own; [`fit_width`]
/// breaks it if it must), and words joined by [`NBSP`] stay together.
#[must_use]
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    wrap_hanging(text, width, indent, indent)
}

/// [`wrap`] with a different indent for the first line: `"  - "` then `"    "` makes a
/// list item.
#[must_use]
pub fn wrap_hanging(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let mut indent = first;
    let words = text
        .split([' ', '\n', '\t', '\r'])
        .filter(|w| !w.is_empty());
    for word in words {
        let needed = if line.is_empty() {
            indent.chars().count() + word.chars().count()
        } else {
            line.chars().count() + 1 + word.chars().count()
        };
        if !line.is_empty() && needed > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
            indent = rest;
        }
        if line.is_empty() {
            line.push_str(indent);
        } else {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out.replace(NBSP, " ")
}

/// Makes every line of `text` at most `width` columns: an overlong line is broken at its last
/// space that fits (or, without one, at the limit), and continues indented two columns
/// deeper than it started. Lines that fit are untouched.
#[must_use]
pub fn fit_width(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let lead = line.chars().take_while(|c| *c == ' ').count();
        let continuation = " ".repeat((lead + 2).min(width / 2));
        let mut rest: Vec<char> = line.chars().collect();
        let mut first = true;
        loop {
            let prefix: Vec<char> = if first {
                Vec::new()
            } else {
                continuation.chars().collect()
            };
            let room = width - prefix.len();
            if rest.len() <= room {
                out.extend(prefix);
                out.extend(rest.iter());
                break;
            }
            // Break at the last space within the room that is not part of the indentation.
            let start = if first { lead } else { 0 };
            let cut = (start + 1..=room)
                .rev()
                .find(|&i| rest[i] == ' ')
                .unwrap_or(room);
            out.extend(prefix);
            out.push_str(rest[..cut].iter().collect::<String>().trim_end());
            out.push('\n');
            rest = rest[cut..]
                .iter()
                .copied()
                .skip_while(|c| *c == ' ')
                .collect();
            first = false;
        }
    }
    out
}

/// A table indented by 2 whose last column (a verdict) moves onto its own line under each
/// row, as `  <header>: <value>`, when a row would pass [`WIDTH`] (long names,
/// `AUX_NO_MATERIAL_SIGNAL`).
#[must_use]
pub fn table_last_under(aligns: &[Align], header: &[&str], rows: &[Vec<String>]) -> String {
    let mut wide = Table::new(aligns);
    wide.row(header.iter().copied());
    for r in rows {
        wide.row(r.iter().cloned());
    }
    let rendered = wide.render(2);
    if rendered.lines().all(|l| l.chars().count() <= WIDTH) {
        return rendered;
    }
    let keep = aligns.len() - 1;
    let mut narrow = Table::new(&aligns[..keep]);
    narrow.row(header.iter().take(keep).copied());
    for r in rows {
        narrow.row(r.iter().take(keep).cloned());
        narrow.span(format!("  {}: {}", header[keep], r[keep]));
    }
    narrow.render(2)
}

#[cfg(test)]
mod tests {
    use super::{Align, Table, fit_width, wrap};

    #[test]
    fn tables_align_and_trim() {
        let mut t = Table::new(&[Align::Left, Align::Right]);
        t.row(["series", "ν"]);
        t.row(["a", "12.5"]);
        t.span("a label longer than the column");
        assert_eq!(
            t.render(2),
            "  series     ν\n  a       12.5\n  a label longer than the column\n"
        );
    }

    #[test]
    fn columns_wrap_into_blocks_that_fit() {
        // 10 + 3·(2 + 20) = 76 > 72: the third column starts a block.
        assert_eq!(super::column_blocks(10, &[20, 20, 20]), [(0, 2), (2, 3)]);
        assert_eq!(super::column_blocks(10, &[100]), [(0, 1)]);
        assert_eq!(super::column_blocks(10, &[]), [(0, 0)]);
    }

    #[test]
    fn wrapping_keeps_words() {
        let text = wrap("aaa bbb ccc ddd", 9, "  ");
        assert_eq!(text, "  aaa bbb\n  ccc ddd\n");
        assert_eq!(wrap("", 10, ""), "");
        let kept = format!("aaa {}", super::keep_together("ν = 4"));
        assert_eq!(wrap(&kept, 7, ""), "aaa\nν = 4\n");
        let item = super::wrap_hanging("aaa bbb ccc", 9, "  - ", "    ");
        assert_eq!(item, "  - aaa\n    bbb\n    ccc\n");
    }

    #[test]
    fn overlong_lines_are_broken() {
        let line = format!("  {}", "word ".repeat(20));
        let fitted = fit_width(line.trim_end(), 30);
        assert!(fitted.lines().all(|l| l.chars().count() <= 30), "{fitted}");
        assert!(fitted.lines().skip(1).all(|l| l.starts_with("    word")));
        let solid = "x".repeat(50);
        let fitted = fit_width(&solid, 20);
        assert!(fitted.lines().all(|l| l.chars().count() <= 20), "{fitted}");
        assert_eq!(fitted.replace(['\n', ' '], ""), solid);
        assert_eq!(fit_width("short\n", 20), "short\n");
    }
}
