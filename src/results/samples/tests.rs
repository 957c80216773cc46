//! Writing rows and reading them back.

use std::io::Write;

use super::{Phase, SampleRow, SampleTable, SampleWriter, Status};

fn row<'a>(point: &'a str, attempt: u32, index: u32, value: Option<f64>) -> SampleRow<'a> {
    SampleRow {
        point,
        order: 1,
        attempt,
        kernel: "a",
        release: "6.1",
        boot_id: "b1",
        workload: "w",
        case: "level=1,flags=-d",
        metric: "m",
        phase: Phase::Sample,
        index,
        retry: 0,
        status: if value.is_some() {
            Status::Ok
        } else {
            Status::Failed
        },
        value,
        unit: "ns",
        time: "2026-11-30T00:00:00Z",
    }
}

#[test]
fn rows_round_trip_and_partial_tails_are_tolerated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("samples.csv");
    let mut w = SampleWriter::open(&path).expect("open");
    w.append(&[row("a-a", 1, 1, Some(8547.294)), row("a-a", 1, 2, None)])
        .expect("append");
    drop(w);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    f.write_all(b"a-a,1,1,a,6.1,b1,w,").expect("partial");
    drop(f);

    let t = SampleTable::read(&path).expect("read");
    assert!(t.truncated_tail);
    assert_eq!(t.rows.len(), 2);
    assert_eq!(t.rows[0].value, Some(8547.294));
    assert_eq!(t.text(t.rows[0].case), "level=1,flags=-d");
    assert_eq!(t.rows[1].status, Status::Failed);

    // Reopening repairs the tail before appending.
    let mut w = SampleWriter::open(&path).expect("reopen");
    w.append(&[row("b", 1, 1, Some(1.0))]).expect("append");
    let t = SampleTable::read(&path).expect("read");
    assert!(!t.truncated_tail);
    assert_eq!(t.rows.len(), 3);
}

/// An over-long field is refused with its line, byte column and name, whether it fits the
/// row bound or runs past it (then the read stops there: time linear in what was read),
/// also when a quoted field spans lines.
#[test]
fn a_long_field_is_refused_naming_line_column_and_field() {
    let path = std::path::Path::new("samples.csv");
    let head = super::HEADER.join(",");
    let row = |value: &str| {
        format!("a-a,1,1,a,6.1,b1,w,,m,sample,1,0,ok,{value},ns,2026-11-30T00:00:00Z\n")
    };
    let good = row("1.5");
    let text = format!("{head}\n{good}{}", row(&"1".repeat(5000)));
    let e = SampleTable::parse(path, text.as_bytes()).expect_err("refused");
    assert_eq!(
        e.to_string(),
        "samples.csv:3: column 37: field `value` is 5000 bytes long; aba reads fields of at \
             most 4096 bytes"
    );
    let text = format!("{head}\n{good}{}", row(&"1".repeat(1_000_000)));
    let e = SampleTable::parse(path, text.as_bytes()).expect_err("refused");
    assert!(
        e.to_string().starts_with(
            "samples.csv:3: column 65553: a row longer than 65552 bytes, cut in field `value`"
        ),
        "{e}"
    );
    let long_case = format!("\"x\n{}\"", "y".repeat(70_000));
    let text = format!("{head}\n{good}a-a,1,1,a,6.1,b1,w,{long_case},m\n");
    let e = SampleTable::parse(path, text.as_bytes()).expect_err("refused");
    assert!(
        e.to_string().starts_with(
            "samples.csv:4: column 65531: a row longer than 65552 bytes, cut in field `case`"
        ),
        "{e}"
    );
}

/// A partial last line longer than the block the tail is searched in.
#[test]
fn a_long_partial_tail_is_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("samples.csv");
    let mut w = SampleWriter::open(&path).expect("open");
    w.append(&[row("a-a", 1, 1, Some(2.5))]).expect("append");
    drop(w);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    f.write_all(&vec![b'x'; 200_000]).expect("partial");
    drop(f);
    let t = SampleTable::read(&path).expect("read");
    assert!(t.truncated_tail);
    assert_eq!(t.rows.len(), 1);
    assert_eq!(t.rows[0].value, Some(2.5));
    std::fs::write(&path, "no newline at all").expect("write");
    assert!(SampleTable::read(&path).is_err());
}

/// The writer knows where the next row starts, and a read from there sees exactly the
/// rows appended since, with the file's own line numbers.
#[test]
fn a_read_from_a_position_sees_the_rows_appended_since() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("samples.csv");
    let mut w = SampleWriter::open(&path).expect("open");
    w.append(&[row("a-a", 1, 1, Some(1.0)), row("a-a", 1, 2, Some(2.0))])
        .expect("append");
    drop(w);
    let mut w = SampleWriter::open(&path).expect("reopen counts the lines");
    let (bytes, lines) = w.position();
    assert_eq!(bytes, std::fs::metadata(&path).expect("stat").len());
    assert_eq!(lines, 3);
    w.append(&[row("b", 1, 1, Some(3.0)), row("b", 1, 2, None)])
        .expect("append");
    let tail = SampleTable::read_from(&path, bytes, lines).expect("tail");
    let seen: Vec<(u64, Option<f64>)> = tail.rows.iter().map(|r| (r.line, r.value)).collect();
    assert_eq!(seen, [(4, Some(3.0)), (5, None)]);
    assert_eq!(tail.text(tail.rows[0].point), "b");
    let (end, _) = w.position();
    assert!(
        SampleTable::read_from(&path, end, 5)
            .expect("empty tail")
            .rows
            .is_empty()
    );
}

#[test]
fn non_finite_values_are_rejected_with_their_line() {
    let text = format!(
        "{}\na,1,1,a,r,b,w,,m,sample,1,0,ok,NaN,ns,t\na,1,1,a,r,b,w,,m,sample,2,0,ok,2.5,ns,t\n",
        super::HEADER.join(",")
    );
    let t = SampleTable::parse(std::path::Path::new("s.csv"), text.as_bytes()).expect("parse");
    assert_eq!(t.rows.len(), 1);
    assert_eq!(
        t.rejected,
        [(2, "value `NaN` is not a finite number".to_owned())]
    );
}
