//! A `sample` record read without serde, when its line is exactly what aba writes for a run
//! with nothing to remark: the fields in aba's order, no whitespace, strings without escapes.
//! A campaign of a million samples has a million such lines, and reading them is most of what
//! `aba report` and `aba verify` spend on the journal.
//!
//! It can only accept or pass: any byte that is not that layout (another field, an escape, a
//! space, a number written another way, a value that is not a float as serde_json writes
//! one) returns `None`, and the caller reads the line with serde as before. So a line this
//! accepts is one serde reads to the same [`RunRecord`] (the tests hold the two readers to
//! each other), and a damaged or foreign line still gets serde's answer at its line.

use super::read::RunRecord;
use crate::results::samples::{Phase, Status};

/// The record of a plain run, borrowed from `line`; `None` for any line not in aba's layout.
pub(super) fn read(line: &[u8]) -> Option<RunRecord<'_>> {
    let mut at = Cursor { line, pos: 0 };
    at.expect(br#"{"event":"sample","point":"#)?;
    let point = at.string()?;
    at.expect(br#","attempt":"#)?;
    let attempt = at.integer()?;
    at.expect(br#","workload":"#)?;
    let workload = at.string()?;
    at.expect(br#","case":"#)?;
    let case = at.string()?;
    at.expect(br#","phase":"#)?;
    let phase = Phase::parse(at.string()?.as_bytes())?;
    at.expect(br#","index":"#)?;
    let index = at.integer()?;
    at.expect(br#","retry":"#)?;
    let retry = at.integer()?;
    at.expect(br#","status":"#)?;
    let status = Status::parse(at.string()?.as_bytes())?;
    at.expect(br#","elapsed_s":"#)?;
    at.float()?;
    let mut values = None;
    if at.skip(br#","values":{"#) {
        let mut pairs = Vec::with_capacity(1);
        if !at.skip(b"}") {
            loop {
                let metric = at.string()?;
                at.expect(b":")?;
                pairs.push((metric, at.float()?));
                if at.skip(b"}") {
                    break;
                }
                at.expect(b",")?;
            }
        }
        values = Some(pairs);
    }
    let mut rows_sha256 = None;
    if at.skip(br#","rows_sha256":"#) {
        rows_sha256 = Some(at.string()?);
    }
    at.expect(b"}")?;
    // The reader hands each line over with its newline.
    let _ = at.skip(b"\n");
    (at.pos == line.len()).then_some(RunRecord {
        tag: "sample",
        point,
        attempt,
        workload,
        case,
        phase,
        index,
        retry,
        status,
        values,
        rows_sha256,
        leftovers: None,
        dropped_bytes: None,
        kept: None,
    })
}

/// A position in a line being read.
struct Cursor<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Steps over `text` when the line continues with it.
    fn skip(&mut self, text: &[u8]) -> bool {
        let found = self.line[self.pos..].starts_with(text);
        if found {
            self.pos += text.len();
        }
        found
    }

    /// Steps over `text`, which the layout requires here.
    fn expect(&mut self, text: &[u8]) -> Option<()> {
        self.skip(text).then_some(())
    }

    /// A string without escapes or control characters, valid UTF-8; the quotes stepped over.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b"\"")?;
        let rest = &self.line[self.pos..];
        let len = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[len] != b'"' {
            return None;
        }
        let text = std::str::from_utf8(&rest[..len]).ok()?;
        self.pos += len + 1;
        Some(text)
    }

    /// A JSON integer in u32 without sign or leading zero.
    fn integer(&mut self) -> Option<u32> {
        let digits = self.digits();
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    }

    /// A float as serde_json writes an `f64`: JSON's number grammar with a fraction or an
    /// exponent (serde_json writes `1.0`, never `1`), read correctly rounded as serde_json
    /// reads it with `float_roundtrip`.
    fn float(&mut self) -> Option<f64> {
        let start = self.pos;
        self.skip(b"-");
        let whole = self.digits();
        if whole.is_empty() || (whole.len() > 1 && whole[0] == b'0') {
            return None;
        }
        let mut written_as_float = false;
        if self.skip(b".") {
            if self.digits().is_empty() {
                return None;
            }
            written_as_float = true;
        }
        if self.skip(b"e") || self.skip(b"E") {
            let _ = self.skip(b"+") || self.skip(b"-");
            if self.digits().is_empty() {
                return None;
            }
            written_as_float = true;
        }
        if !written_as_float {
            return None;
        }
        let text = std::str::from_utf8(&self.line[start..self.pos]).ok()?;
        text.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// The ASCII digits from here on, stepped over.
    fn digits(&mut self) -> &'a [u8] {
        let rest = &self.line[self.pos..];
        let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        self.pos += len;
        &rest[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers' view of a line, for comparison.
    fn by_serde(line: &[u8]) -> Option<String> {
        serde_json::from_slice::<RunRecord<'_>>(line)
            .ok()
            .map(|r| format!("{r:?}"))
    }

    const PLAIN: &str = r#"{"event":"sample","point":"a-a","attempt":1,"workload":"w0","case":"","phase":"sample","index":2,"retry":0,"status":"ok","elapsed_s":0.0012000000000000001,"values":{"w0":981.715},"rows_sha256":"fab9db3e53fa12533c19f79dff972d5a1a27b07c21b04a51c6e6df3bf908744c"}"#;

    #[test]
    fn aba_s_own_lines_read_as_serde_reads_them() {
        let lines = [
            PLAIN.to_owned(),
            PLAIN.replace(r#""values":{"w0":981.715},"#, ""),
            PLAIN.replace(r#","rows_sha256":"fab9db3e53fa12533c19f79dff972d5a1a27b07c21b04a51c6e6df3bf908744c""#, ""),
            PLAIN.replace(r#"{"w0":981.715}"#, "{}"),
            PLAIN.replace(r#"{"w0":981.715}"#, r#"{"a":1.0,"b":-2.5e-7,"ü":1491.3107553264927,"d":1E+300}"#),
            PLAIN.replace(r#""phase":"sample""#, r#""phase":"warmup""#),
            PLAIN.replace(r#""status":"ok""#, r#""status":"failed""#),
            PLAIN.replace(r#""attempt":1"#, r#""attempt":4294967295"#),
            PLAIN.replace(r#""case":"""#, r#""case":"mode=x""#),
            format!("{PLAIN}\n"),
        ];
        for line in &lines {
            let fast = read(line.as_bytes()).map(|r| format!("{r:?}"));
            assert!(fast.is_some(), "read: {line}");
            assert_eq!(fast, by_serde(line.as_bytes()), "{line}");
        }
        let many = read(lines[4].as_bytes()).expect("read");
        let values = many.values.expect("values");
        assert_eq!(values[2], ("ü", 1_491.310_755_326_492_7));
        assert_eq!(
            values[2].1.to_bits(),
            "1491.3107553264927".parse::<f64>().expect("f64").to_bits()
        );
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        let others = [
            // Other fields, spacing, escapes, order.
            PLAIN.replace(r#""status":"ok","#, r#""status":"ok","error":"x","#),
            PLAIN.replace(r#"}"#, r#","kept":[]}"#),
            PLAIN.replace(r#""retry":0,"#, r#""retry":0,"leftovers":["1 sh"],"#),
            PLAIN.replace(r#""point":"a-a""#, r#""point":"a\u002da""#),
            PLAIN.replace(r#""point":"a-a""#, "\"point\":\"a\ta\""),
            PLAIN.replace(r#","attempt""#, r#", "attempt""#),
            PLAIN.replace(r#""index":2,"retry":0"#, r#""retry":0,"index":2"#),
            format!("{PLAIN} "),
            format!("{PLAIN}\r\n"),
            format!("{PLAIN}\n\n"),
            format!("{PLAIN}}}"),
            // Numbers not as aba writes them.
            PLAIN.replace(r#""attempt":1"#, r#""attempt":01"#),
            PLAIN.replace(r#""attempt":1"#, r#""attempt":4294967296"#),
            PLAIN.replace(r#""attempt":1"#, r#""attempt":1.0"#),
            PLAIN.replace(r#""attempt":1"#, r#""attempt":-1"#),
            PLAIN.replace("981.715", "981"),
            PLAIN.replace("981.715", "-0"),
            PLAIN.replace("981.715", "981."),
            PLAIN.replace("981.715", ".5"),
            PLAIN.replace("981.715", "1e"),
            PLAIN.replace("981.715", "1e999"),
            PLAIN.replace("981.715", "null"),
            PLAIN.replace("981.715", "00.5"),
            // Other tags and words.
            PLAIN.replace(r#""phase":"sample""#, r#""phase":"Sample""#),
            PLAIN.replace(r#""status":"ok""#, r#""status":"fine""#),
            PLAIN.replace(r#""event":"sample""#, r#""event":"probe""#),
            PLAIN[..PLAIN.len() - 1].to_owned(),
        ];
        for line in &others {
            assert!(read(line.as_bytes()).is_none(), "left to serde: {line}");
        }
        // Invalid UTF-8 inside a string.
        let mut bytes = PLAIN.as_bytes().to_vec();
        let at = PLAIN.find("a-a").expect("point");
        bytes[at] = 0xFF;
        assert!(read(&bytes).is_none());
    }

    /// A sample record as the writer serializes it.
    fn written(
        point: String,
        case: String,
        numbers: (u32, u32, u32),
        elapsed_s: f64,
        values: Option<Vec<(String, f64)>>,
        link: bool,
    ) -> String {
        let (attempt, index, retry) = numbers;
        serde_json::to_string(&super::super::Event::Sample {
            point,
            attempt,
            workload: "w".into(),
            case,
            phase: Phase::Sample,
            index,
            retry,
            status: Status::Ok,
            elapsed_s,
            error: None,
            raw: None,
            leftovers: Vec::new(),
            dropped_bytes: None,
            values: values.map(|v| v.into_iter().collect()),
            rows_sha256: link.then(|| "ab".repeat(32)),
            kept: Vec::new(),
        })
        .expect("serializes")
    }

    use proptest::prelude::Strategy as _;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Whatever the writer writes for a plain run is read directly exactly when serde
        /// reads it as a [`RunRecord`], and to the same record.
        #[test]
        fn every_written_plain_run_reads_as_serde_reads_it(
            point in "[a-z0-9#\\-]{1,12}",
            case in "[ -~é\\\"\t]{0,10}",
            numbers in (proptest::prelude::any::<u32>(), proptest::prelude::any::<u32>(), proptest::prelude::any::<u32>()),
            elapsed_s in proptest::prelude::any::<f64>().prop_filter("finite", |v| v.is_finite()),
            values in proptest::option::of(proptest::collection::vec(
                ("[a-z]{1,4}", proptest::prelude::any::<f64>().prop_filter("finite", |v| v.is_finite())),
                0..4,
            )),
            link in proptest::prelude::any::<bool>(),
        ) {
            let line = written(point, case, numbers, elapsed_s, values, link);
            // serde cannot lend a string with escapes: both leave such a line to the whole
            // read; every other written line is read directly.
            for line in [line.clone(), format!("{line}\n")] {
                let fast = read(line.as_bytes()).map(|r| format!("{r:?}"));
                proptest::prop_assert_eq!(fast, by_serde(line.as_bytes()), "{}", line);
            }
        }

        /// A written line with any bytes changed is read directly only as serde reads it.
        #[test]
        fn a_changed_line_reads_as_serde_reads_it_or_is_left_to_serde(
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>(), 0..3u8), 1..4),
        ) {
            let mut line = PLAIN.as_bytes().to_vec();
            for (at, byte, how) in edits {
                let at = at % (line.len() + 1);
                match how {
                    0 if at < line.len() => line[at] = byte,
                    1 if at < line.len() => {
                        line.remove(at);
                    }
                    _ => line.insert(at, byte),
                }
            }
            if let Some(fast) = read(&line) {
                proptest::prop_assert_eq!(
                    Some(format!("{fast:?}")),
                    by_serde(&line),
                    "{}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }
}
