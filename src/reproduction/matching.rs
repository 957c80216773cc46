//! Which series and which candidates of the new campaign are the reference's.
//!
//! By name first: the same workload, case and metric; the same candidate label. Then, among
//! what is left, the only one of its kind on each side: a published bundle names its
//! experiment (`exact-cac1`) where the recipe names its workload (`mprotect`), and a tester
//! may call the patched kernel `patched` where the reference said `child`. A match that is
//! not unique is never guessed: both stay "only in one of them".

use std::collections::BTreeMap;

use crate::{
    analysis::model::CandidateResult,
    reproduction::{
        evidence::EvidenceSeries,
        model::{KernelMatch, SeriesMatch},
    },
};

/// Matched pairs (new index, reference index, how) and the indices left on each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing<M> {
    /// (index in the new list, index in the reference list, how), in the new list's order.
    pub pairs: Vec<(usize, usize, M)>,
    /// Indices of the new list without a partner.
    pub only_new: Vec<usize>,
    /// Indices of the reference list without a partner.
    pub only_reference: Vec<usize>,
}

/// Pairs `new` with `reference` by `exact`, then the rest by `loose` where its key is unique
/// among the unmatched items of each side (`None`: no loose key).
fn pair<T, K: Ord, L: Ord, M: Copy>(
    new: &[T],
    reference: &[T],
    exact: impl Fn(&T) -> K,
    loose: impl Fn(&T) -> Option<L>,
    (by_exact, by_loose): (M, M),
) -> Pairing<M> {
    let mut taken = vec![false; reference.len()];
    let mut partner: Vec<Option<(usize, M)>> = vec![None; new.len()];
    for (i, n) in new.iter().enumerate() {
        let key = exact(n);
        if let Some(j) = (0..reference.len()).find(|&j| !taken[j] && exact(&reference[j]) == key) {
            taken[j] = true;
            partner[i] = Some((j, by_exact));
        }
    }
    let unique = |items: &mut dyn Iterator<Item = (usize, L)>| -> BTreeMap<L, Option<usize>> {
        let mut map = BTreeMap::new();
        for (i, key) in items {
            map.entry(key)
                .and_modify(|slot: &mut Option<usize>| *slot = None)
                .or_insert(Some(i));
        }
        map
    };
    let left_new = unique(
        &mut (0..new.len())
            .filter(|&i| partner[i].is_none())
            .filter_map(|i| Some((i, loose(&new[i])?))),
    );
    let left_reference = unique(
        &mut (0..reference.len())
            .filter(|&j| !taken[j])
            .filter_map(|j| Some((j, loose(&reference[j])?))),
    );
    for (key, i) in &left_new {
        if let (Some(i), Some(Some(j))) = (i, left_reference.get(key)) {
            taken[*j] = true;
            partner[*i] = Some((*j, by_loose));
        }
    }
    Pairing {
        pairs: partner
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|(j, m)| (i, j, m)))
            .collect(),
        only_new: (0..new.len()).filter(|&i| partner[i].is_none()).collect(),
        only_reference: (0..reference.len()).filter(|&j| !taken[j]).collect(),
    }
}

/// The series of both sides: by workload, case and metric, then by case and metric.
#[must_use]
pub fn pair_series(new: &[EvidenceSeries], reference: &[EvidenceSeries]) -> Pairing<SeriesMatch> {
    pair(
        new,
        reference,
        |s| (s.workload.clone(), s.case.clone(), s.metric.clone()),
        |s| Some((s.case.clone(), s.metric.clone())),
        (SeriesMatch::Name, SeriesMatch::CaseAndMetric),
    )
}

/// The candidates of one series on both sides: by label, then the only one left on each side.
/// A declared comparison (`[[analysis.comparison]]`, against another kernel than the
/// campaign's baseline) matches only the same pair by its labels, never loosely: otherwise
/// it would make the loose match of the baseline comparisons ambiguous, or take their place.
#[must_use]
pub fn pair_candidates(
    new: &[CandidateResult],
    reference: &[CandidateResult],
) -> Pairing<KernelMatch> {
    pair(
        new,
        reference,
        |c| (c.candidate.clone(), c.declared.then(|| c.baseline.clone())),
        |c| (!c.declared).then_some(()),
        (KernelMatch::Label, KernelMatch::OnlyCandidate),
    )
}

#[cfg(test)]
mod tests {
    use super::pair;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum By {
        Exact,
        Loose,
    }

    fn run(new: &[(&str, &str)], reference: &[(&str, &str)]) -> super::Pairing<By> {
        pair(
            new,
            reference,
            |(name, metric)| ((*name).to_owned(), (*metric).to_owned()),
            |(_, metric)| Some((*metric).to_owned()),
            (By::Exact, By::Loose),
        )
    }

    #[test]
    fn names_first_then_unique_keys_never_a_guess() {
        // `w/ns` by name; `mprotect/ns_per_page` and `exact-cac1/ns_per_page` by their metric.
        let p = run(
            &[("w", "ns"), ("mprotect", "ns_per_page"), ("x", "ops")],
            &[("exact-cac1", "ns_per_page"), ("w", "ns"), ("y", "bytes")],
        );
        assert_eq!(p.pairs, [(0, 1, By::Exact), (1, 0, By::Loose)]);
        assert_eq!((p.only_new, p.only_reference), (vec![2], vec![2]));
        // Two reference experiments with the same metric: ambiguous, nothing is paired.
        let p = run(
            &[("mprotect", "ns_per_page")],
            &[("exact-cac1", "ns_per_page"), ("pedro-v3", "ns_per_page")],
        );
        assert!(p.pairs.is_empty());
        assert_eq!((p.only_new, p.only_reference), (vec![0], vec![0, 1]));
    }
}
