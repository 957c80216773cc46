//! Which rows of `samples.csv` count: status `ok`, at the point's done attempt (from the
//! journal). Measured rows feed the statistics; warm-up rows are kept for the plot only.
//!
//! Rows of any other attempt (failed, discarded, unfinished) and rows marked `failed` or
//! `discarded` never reach a number; the audit counts them. This module does no statistics.

use std::collections::{BTreeMap, HashMap};

use crate::results::samples::{Phase, SampleTable, Status, Sym};

/// Key of one series at one point: (point, workload, case, metric), interned.
type Key = (Sym, Sym, Sym, Sym);

/// (index, retry, value) of one valid row.
type Entry = (u32, u32, f64);

/// The valid rows of a campaign, grouped by point and series.
#[derive(Debug)]
pub struct ValidRows<'a> {
    symbols: HashMap<&'a str, Sym>,
    samples: HashMap<Key, Vec<Entry>>,
    warmups: HashMap<Key, Vec<Entry>>,
}

/// The values of one series at one point, in index order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointValues {
    /// Measured values.
    pub samples: Vec<f64>,
    /// Warm-up values.
    pub warmups: Vec<f64>,
    /// Indices that appeared more than once (the later retry was kept).
    pub duplicates: usize,
}

impl<'a> ValidRows<'a> {
    /// Selects the valid rows of `table`: `ok`, with the attempt `done` gives for its point.
    /// Points absent from `done` contribute nothing.
    #[must_use]
    pub fn select(table: &'a SampleTable, done: &BTreeMap<String, u32>) -> ValidRows<'a> {
        let symbols: HashMap<&str, Sym> = table
            .strings
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let sym = Sym::try_from(i).expect("invariant: the table interned < 4G strings");
                (s.as_str(), sym)
            })
            .collect();
        let done_by_sym: HashMap<Sym, u32> = done
            .iter()
            .filter_map(|(label, attempt)| Some((*symbols.get(label.as_str())?, *attempt)))
            .collect();
        let mut samples: HashMap<Key, Vec<Entry>> = HashMap::new();
        let mut warmups: HashMap<Key, Vec<Entry>> = HashMap::new();
        for row in &table.rows {
            let Some(value) = row.value else { continue };
            if row.status != Status::Ok || done_by_sym.get(&row.point) != Some(&row.attempt) {
                continue;
            }
            let key = (row.point, row.workload, row.case, row.metric);
            let bucket = match row.phase {
                Phase::Sample => &mut samples,
                Phase::Warmup => &mut warmups,
            };
            bucket
                .entry(key)
                .or_default()
                .push((row.index, row.retry, value));
        }
        ValidRows {
            symbols,
            samples,
            warmups,
        }
    }

    /// The values of (workload, case, metric) at `point`; empty when there are none.
    #[must_use]
    pub fn values(&self, point: &str, workload: &str, case: &str, metric: &str) -> PointValues {
        let sym = |text: &str| self.symbols.get(text).copied();
        let (Some(p), Some(w), Some(c), Some(m)) =
            (sym(point), sym(workload), sym(case), sym(metric))
        else {
            return PointValues::default();
        };
        let key = (p, w, c, m);
        let (samples, dup_samples) = ordered(self.samples.get(&key));
        let (warmups, dup_warmups) = ordered(self.warmups.get(&key));
        PointValues {
            samples,
            warmups,
            duplicates: dup_samples + dup_warmups,
        }
    }
}

/// Values in index order; for an index seen twice the highest retry wins (a retry replaces
/// the try before it). Returns the values and how many duplicates were dropped.
fn ordered(entries: Option<&Vec<Entry>>) -> (Vec<f64>, usize) {
    let Some(entries) = entries else {
        return (Vec::new(), 0);
    };
    let mut sorted = entries.clone();
    sorted.sort_by_key(|&(index, retry, _)| (index, retry));
    let mut values: Vec<f64> = Vec::with_capacity(sorted.len());
    let mut last_index = None;
    let mut duplicates = 0;
    for (index, _, value) in sorted {
        if last_index == Some(index) {
            duplicates += 1;
            *values.last_mut().expect("invariant: an index was seen") = value;
        } else {
            values.push(value);
        }
        last_index = Some(index);
    }
    (values, duplicates)
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeMap, path::Path};

    use super::{PointValues, ValidRows};
    use crate::results::samples::{HEADER, SampleTable};

    /// point,order,attempt,kernel,release,boot_id,workload,case,metric,phase,index,retry,
    /// status,value,unit,time
    fn table(rows: &[&str]) -> SampleTable {
        let text = format!("{}\n{}\n", HEADER.join(","), rows.join("\n"));
        SampleTable::parse(Path::new("samples.csv"), text.as_bytes()).expect("valid")
    }

    #[test]
    fn only_ok_rows_of_the_done_attempt_count() {
        let t = table(&[
            // Attempt 1 was discarded on resume: its rows never count.
            "a,1,1,k,r,b1,w,,m,sample,1,0,discarded,999,ns,t",
            "a,1,2,k,r,b2,w,,m,warmup,1,0,ok,50,ns,t",
            "a,1,2,k,r,b2,w,,m,sample,2,0,ok,12,ns,t",
            // A failed run and its successful retry.
            "a,1,2,k,r,b2,w,,m,sample,1,0,failed,,ns,t",
            "a,1,2,k,r,b2,w,,m,sample,1,1,ok,11,ns,t",
            // An ok row of an attempt the journal never finished.
            "a,1,3,k,r,b3,w,,m,sample,1,0,ok,777,ns,t",
            // A point that is not done at all.
            "b,2,1,k,r,b4,w,,m,sample,1,0,ok,5,ns,t",
        ]);
        let done = BTreeMap::from([("a".to_owned(), 2)]);
        let rows = ValidRows::select(&t, &done);
        assert_eq!(
            rows.values("a", "w", "", "m"),
            PointValues {
                samples: vec![11.0, 12.0],
                warmups: vec![50.0],
                duplicates: 0,
            }
        );
        assert_eq!(rows.values("b", "w", "", "m"), PointValues::default());
        assert_eq!(rows.values("a", "w", "", "other"), PointValues::default());
    }

    #[test]
    fn a_repeated_index_keeps_the_later_retry() {
        let t = table(&[
            "a,1,1,k,r,b,w,c=1,m,sample,1,1,ok,3,ns,t",
            "a,1,1,k,r,b,w,c=1,m,sample,1,0,ok,2,ns,t",
            "a,1,1,k,r,b,w,c=1,m,sample,2,0,ok,4,ns,t",
        ]);
        let done = BTreeMap::from([("a".to_owned(), 1)]);
        let values = ValidRows::select(&t, &done).values("a", "w", "c=1", "m");
        assert_eq!(values.samples, [3.0, 4.0]);
        assert_eq!(values.duplicates, 1);
    }
}
