//! The TSV dialect of the evidence tables: tab-separated, a header line, quoting only where a
//! cell needs it, numbers already formatted by [`crate::report::number`].

use serde::Serialize;

/// `header`, then one line per row (each row serialises to as many cells as `header` has).
#[must_use]
pub fn to_tsv<R: Serialize>(header: &[&str], rows: &[R]) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(b'\t')
        .quote_style(csv::QuoteStyle::Necessary)
        .has_headers(false)
        .from_writer(Vec::new());
    writer
        .write_record(header)
        .expect("invariant: writing into memory cannot fail");
    for row in rows {
        writer
            .serialize(row)
            .expect("invariant: rows of strings serialise into memory");
    }
    writer
        .into_inner()
        .expect("invariant: flushing into memory cannot fail")
}

#[cfg(test)]
mod tests {
    use super::to_tsv;

    #[test]
    fn header_is_written_even_without_rows() {
        let rows: [(String, String); 0] = [];
        assert_eq!(to_tsv(&["a", "b"], &rows), b"a\tb\n");
        let rows = [("x y".to_owned(), "tab\there".to_owned())];
        assert_eq!(to_tsv(&["a", "b"], &rows), b"a\tb\nx y\t\"tab\there\"\n");
    }
}
