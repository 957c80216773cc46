//! One table of a published bundle, read as a stranger's input: at most [`FILE_LIMIT`]
//! bytes, every cell on one line with its control characters escaped, a ragged row refused
//! naming its line, and every error naming the file, line, column and field.
//!
//! Bundles write tab-separated files (`*.tsv`) and comma-separated ones (`*.csv`, without
//! quoting: their cells are names and numbers); the separator is chosen by the file's name.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use crate::{input::read_text, reproduction::error::ReproductionError};

/// A bundle's table is a few KiB; a file beyond this is not one.
pub const FILE_LIMIT: u64 = 16 << 20;

/// A delimited file: its header and its rows with their line numbers.
#[derive(Debug)]
pub struct Table {
    /// The file.
    pub path: PathBuf,
    /// Column names, in file order.
    pub header: Vec<String>,
    /// Each column name's first index: a file may have 100,000 columns, so a column is found
    /// in constant time, never by a scan per metric.
    index: HashMap<String, usize>,
    /// (1-based line, cells), blank lines left out.
    pub rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    /// Reads `path`, tab- or comma-separated by its name (`.csv`: commas).
    pub fn read(path: &Path) -> Result<Table, ReproductionError> {
        let text = read_text(path, FILE_LIMIT, "published table").map_err(|source| {
            ReproductionError::Unreadable {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let separator = if path.extension().is_some_and(|e| e == "csv") {
            ','
        } else {
            '\t'
        };
        let split = |line: &str| -> Vec<String> {
            line.split(separator)
                .map(|c| crate::text::one_line(c.trim()).into_owned())
                .collect()
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let header: Vec<String> = lines.next().map(|(_, l)| split(l)).unwrap_or_default();
        let mut index = HashMap::with_capacity(header.len());
        for (i, name) in header.iter().enumerate() {
            index.entry(name.clone()).or_insert(i);
        }
        let mut table = Table {
            path: path.to_path_buf(),
            header,
            index,
            rows: Vec::new(),
        };
        for (i, line) in lines {
            let cells = split(line);
            if cells.len() != table.header.len() {
                return Err(table.error(
                    i + 1,
                    None,
                    format!(
                        "{} cells, but the header has {} columns",
                        cells.len(),
                        table.header.len()
                    ),
                ));
            }
            table.rows.push((i + 1, cells));
        }
        Ok(table)
    }

    /// The first column named `name`.
    #[must_use]
    pub fn column(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The first of `names` the table has.
    #[must_use]
    pub fn any_column(&self, names: &[&str]) -> Option<usize> {
        names.iter().find_map(|n| self.column(n))
    }

    /// The column `name`, or an error naming the header.
    pub fn required(&self, name: &str) -> Result<usize, ReproductionError> {
        self.column(name)
            .ok_or_else(|| self.error(1, None, format!("no `{name}` column")))
    }

    /// An error at `line` (and 0-based `column`, when one cell is at fault).
    #[must_use]
    pub fn error(&self, line: usize, column: Option<usize>, what: String) -> ReproductionError {
        ReproductionError::Bundle {
            path: self.path.clone(),
            line,
            column: column.map(|c| c + 1),
            what,
        }
    }

    /// The cell of row `row` (an index into `rows`) and column `column`.
    #[must_use]
    pub fn cell(&self, row: usize, column: usize) -> &str {
        &self.rows[row].1[column]
    }

    /// The cell as a label a reader sees ([`crate::reproduction::evidence::foreign_label`]).
    #[must_use]
    pub fn label(&self, row: usize, column: usize) -> String {
        crate::reproduction::evidence::foreign_label(self.cell(row, column))
    }

    /// `text` at `line`, column `column`, as a finite number.
    pub fn number(&self, line: usize, column: usize, text: &str) -> Result<f64, ReproductionError> {
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                self.error(
                    line,
                    Some(column),
                    format!(
                        "`{}` is `{}`, not a number",
                        self.header[column],
                        crate::text::untrusted(text, 40)
                    ),
                )
            })
    }

    /// The cell of row `row` and column `column` as a count.
    pub fn count(&self, row: usize, column: usize) -> Result<usize, ReproductionError> {
        let text = self.cell(row, column);
        text.parse().map_err(|_| {
            self.error(
                self.rows[row].0,
                Some(column),
                format!(
                    "`{}` is `{}`, not a count",
                    self.header[column],
                    crate::text::untrusted(text, 40)
                ),
            )
        })
    }
}

/// A file's name as text.
#[must_use]
pub fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn cells_are_escaped_and_errors_name_line_and_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.tsv");
        std::fs::write(&path, "a\tb\n\n1\tx\x1b[31m\n2\t3\n").expect("write");
        let t = Table::read(&path).expect("a table");
        assert_eq!(t.rows[0].0, 3);
        assert_eq!(t.cell(0, 1), "x\\u{1b}[31m");
        let err = t.number(3, 1, t.cell(0, 1)).expect_err("not a number");
        assert!(
            err.to_string()
                .ends_with("t.tsv:3:2: `b` is `x\\u{1b}[31m`, not a number"),
            "{err}"
        );
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "a,b\n1,2\n3\n").expect("write");
        let err = Table::read(&csv).expect_err("ragged");
        assert!(
            err.to_string()
                .ends_with("t.csv:3: 1 cells, but the header has 2 columns"),
            "{err}"
        );
    }
}
