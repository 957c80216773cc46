//! The hash chain over `samples.csv`'s records: each link is SHA-256 of the previous link and
//! the record's exact bytes (its newline included), starting from 32 zero bytes with the
//! header as the first record.
//!
//! Every journaled run records the link after its last row (and its values), so the journal
//! witnesses the bytes of `samples.csv` up to that row: an edited value, an added or removed
//! row anywhere before it changes the link `aba verify` recomputes. The chain is a function of
//! the file alone, so a writer reopening a file (a resumed campaign, one an older aba started)
//! continues it by reading the file, and rows written without their journal record (a runner
//! killed between the two writes) are simply part of it.

use std::{io::Read as _, path::Path};

use sha2::{Digest as _, Sha256};

/// A link of the chain.
pub type Link = [u8; 32];

/// The chain over the records fed so far, fed in any chunks: a record ends at a newline
/// outside double quotes (as the CSV reader splits them).
#[derive(Clone, Debug)]
pub struct RowChain {
    link: Link,
    hasher: Sha256,
    in_quotes: bool,
    /// Newlines fed: completed physical lines.
    lines: u64,
    /// 1-based physical line where the record being fed starts.
    record_line: u64,
}

impl Default for RowChain {
    fn default() -> Self {
        let link = [0; 32];
        RowChain {
            link,
            hasher: Sha256::new_with_prefix(link),
            in_quotes: false,
            lines: 0,
            record_line: 1,
        }
    }
}

impl RowChain {
    /// Feeds `bytes`; `at_end` gets every record completed by them: the 1-based line where it
    /// starts (the line numbers the CSV reader gives) and the link after it.
    pub fn feed(&mut self, bytes: &[u8], mut at_end: impl FnMut(u64, &Link)) {
        let mut start = 0;
        // Only quotes and newlines matter: found by a vector search (about a tenth of the time
        // of a byte loop over a 125 MB table).
        for i in memchr::memchr2_iter(b'"', b'\n', bytes) {
            match bytes[i] {
                b'"' => self.in_quotes = !self.in_quotes,
                b'\n' => {
                    self.lines += 1;
                    if !self.in_quotes {
                        self.hasher.update(&bytes[start..=i]);
                        self.link = std::mem::take(&mut self.hasher).finalize().into();
                        self.hasher.update(self.link);
                        at_end(self.record_line, &self.link);
                        self.record_line = self.lines + 1;
                        start = i + 1;
                    }
                }
                _ => {}
            }
        }
        self.hasher.update(&bytes[start..]);
    }

    /// The link after the last complete record, as the journal writes it (hex).
    #[must_use]
    pub fn hex(&self) -> String {
        hex::encode(self.link)
    }

    /// Newlines fed so far.
    #[must_use]
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Feeds the first `len` bytes of `path` (a file of complete records), streaming.
    pub fn feed_file(
        &mut self,
        path: &Path,
        len: u64,
        at_end: impl FnMut(u64, &Link),
    ) -> std::io::Result<()> {
        let file = crate::input::open_data(path)?;
        self.feed_reader(file.take(len), at_end)
    }

    /// Feeds everything `reader` holds (complete records), streaming.
    pub fn feed_reader(
        &mut self,
        mut reader: impl std::io::Read,
        mut at_end: impl FnMut(u64, &Link),
    ) -> std::io::Result<()> {
        let mut block = vec![0u8; 1 << 16];
        loop {
            let n = match reader.read(&mut block) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.feed(&block[..n], &mut at_end);
        }
    }
}

/// A journaled link as the journal spells it (64 hex digits, either case), or `None`.
/// Decoded without a branch per digit: a million links are read per `aba report` of a
/// million samples, and random digits made the `hex` crate's decoder (and a `match` per
/// digit) mispredict half of them, a tenth of the whole report.
pub fn parse_link(hex_text: &str) -> Option<Link> {
    /// Each byte's value as a hex digit; 0xFF for every other byte.
    const DIGIT: [u8; 256] = {
        let mut table = [0xFF; 256];
        let mut i = 0;
        while i < 10 {
            table[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            table[b'a' as usize + i] = 10 + i as u8;
            table[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        table
    };
    let digits = hex_text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut link = [0; 32];
    let mut invalid = 0;
    for (byte, pair) in link.iter_mut().zip(digits.chunks_exact(2)) {
        let (high, low) = (DIGIT[usize::from(pair[0])], DIGIT[usize::from(pair[1])]);
        invalid |= high | low;
        *byte = (high << 4) | (low & 0x0F);
    }
    (invalid & 0xF0 == 0).then_some(link)
}

#[cfg(test)]
mod tests {
    use super::{RowChain, parse_link};

    #[test]
    fn a_link_reads_as_the_hex_crate_reads_it() {
        let link: [u8; 32] = std::array::from_fn(|i| (i * 37 + 5) as u8);
        let lower = hex::encode(link);
        assert_eq!(parse_link(&lower), Some(link));
        assert_eq!(parse_link(&lower.to_uppercase()), Some(link));
        for bad in [
            &lower[..62],
            &format!("{lower}00"),
            &format!("g{}", &lower[1..]),
            "",
        ] {
            assert_eq!(parse_link(bad), None, "{bad}");
        }
        assert_eq!(parse_link(&format!("{}é", &lower[..62])), None);
    }

    fn links(text: &[u8], chunk: usize) -> Vec<(u64, String)> {
        let mut chain = RowChain::default();
        let mut found = Vec::new();
        for part in text.chunks(chunk) {
            chain.feed(part, |line, link| found.push((line, hex::encode(link))));
        }
        found
    }

    #[test]
    fn links_depend_on_every_byte_before_them_and_not_on_the_chunks() {
        let text = b"h,v\na,\"x\ny\"\nb,777.41\n";
        let whole = links(text, text.len());
        assert_eq!(
            whole.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [1, 2, 4],
            "records start on lines 1, 2 and 4 (a quoted newline inside the second)"
        );
        assert_eq!(links(text, 1), whole);
        assert_eq!(links(text, 5), whole);
        let edited = links(b"h,v\na,\"x\ny\"\nb,999.0\n", 64);
        assert_eq!(edited[..2], whole[..2]);
        assert_ne!(edited[2], whole[2]);
        let removed = links(b"h,v\nb,777.41\n", 64);
        assert_ne!(removed[1].1, whole[2].1);
    }
}
