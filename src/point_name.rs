//! How a point is shown to a reader (issue 15 §7): as a boot of its kernel, `a#1`, `b`,
//! `a#2`, never as its identifier `a-a`, `b`, `a-b`, which reads as "a minus a".
//!
//! The identifier ([`crate::recipe::resolved::point_labels`]) is data: it names the point in
//! journal.jsonl, samples.csv, `env/`, `raw/` and the `args` of comparison.tsv, and old
//! results directories must keep reading, so it never changes. Every renderer that shows a
//! point to a reader calls [`point_name`] instead; TSV files keep the identifier in its
//! column and add the name beside it.
//!
//! The name is computed from the identifier and the point's kernel, not from the recipe's
//! sequence, so a bare identifier found in a journal (or in a verdict's reasons) can be
//! named without the plan: a kernel booted once keeps its label (`patched`), the n-th boot
//! of a kernel booted more than once is `label#n` (`original#1`, `original#2`).

/// The name a reader sees for point `point` of kernel `kernel`: `kernel` for its only boot,
/// `kernel#n` for its n-th boot (`kernel-a` → `kernel#1`, `kernel-27` → `kernel#27`); an
/// identifier of any other shape is shown as it is.
#[must_use]
pub fn point_name(point: &str, kernel: &str) -> String {
    let Some(suffix) = point
        .strip_prefix(kernel)
        .and_then(|rest| rest.strip_prefix('-'))
    else {
        return point.to_owned();
    };
    let nth = match suffix.as_bytes() {
        [letter @ b'a'..=b'z'] => Some(usize::from(letter - b'a') + 1),
        _ => suffix
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 26 && !suffix.starts_with('0')),
    };
    nth.map_or_else(|| point.to_owned(), |n| format!("{kernel}#{n}"))
}

#[cfg(test)]
mod tests {
    use super::point_name;
    use crate::recipe::{ident::KernelLabel, resolved::point_labels};

    #[test]
    fn boots_of_a_kernel_are_numbered_and_a_single_boot_keeps_its_label() {
        let seq: Vec<KernelLabel> = ["a", "b", "a", "a"]
            .iter()
            .map(|s| KernelLabel::new(s).expect("valid"))
            .collect();
        let names: Vec<String> = point_labels(&seq)
            .iter()
            .zip(&seq)
            .map(|(id, k)| point_name(id, k.as_str()))
            .collect();
        assert_eq!(names, ["a#1", "b", "a#2", "a#3"]);
    }

    #[test]
    fn past_z_and_odd_identifiers() {
        let seq: Vec<KernelLabel> = std::iter::repeat_n("x", 28)
            .map(|s| KernelLabel::new(s).expect("valid"))
            .collect();
        let ids = point_labels(&seq);
        assert_eq!(point_name(&ids[25], "x"), "x#26");
        assert_eq!(point_name(&ids[26], "x"), "x#27");
        // Not this kernel's identifier shape: shown as it is.
        assert_eq!(point_name("x-a", "y"), "x-a");
        assert_eq!(point_name("x-ab", "x"), "x-ab");
        assert_eq!(point_name("x-3", "x"), "x-3");
        assert_eq!(point_name("x-027", "x"), "x-027");
        // A kernel whose own label ends like a suffix, booted once.
        assert_eq!(point_name("fix-a", "fix-a"), "fix-a");
    }
}
