//! `[kernels]` and `sequence`.

use std::collections::HashSet;

use indexmap::IndexMap;
use toml::Spanned;

use crate::recipe::{
    ident::{KernelLabel, TargetPath},
    limits,
    model::RecipeFile,
    resolved::{Kernel, point_labels},
};

use super::Checker;

impl Checker<'_> {
    pub(super) fn kernels(&mut self, file: &RecipeFile) -> IndexMap<KernelLabel, Kernel> {
        if file.kernels.get_ref().is_empty() {
            self.error(
                file.kernels.span(),
                "[kernels] is empty; declare at least one kernel",
            );
        }
        let mut out = IndexMap::new();
        for (label, spec) in file.kernels.get_ref() {
            let release = spec.release.clone();
            let default_path = |prefix: &str| {
                TargetPath::new(&format!("/boot/{prefix}-{release}"))
                    .expect("invariant: a valid release makes a valid path")
            };
            let cmdline = self.cmdline(&spec.cmdline);
            out.insert(
                label.get_ref().clone(),
                Kernel {
                    label: label.get_ref().clone(),
                    image: spec
                        .image
                        .clone()
                        .unwrap_or_else(|| default_path("vmlinuz")),
                    initrd: spec
                        .initrd
                        .clone()
                        .unwrap_or_else(|| default_path("initrd.img")),
                    release,
                    cmdline,
                    build: None,
                },
            );
        }
        out
    }

    pub(super) fn sequence(
        &mut self,
        file: &RecipeFile,
        known: &[&KernelLabel],
    ) -> Vec<KernelLabel> {
        if file.sequence.get_ref().len() > limits::POINTS {
            self.error(
                file.sequence.span(),
                format!(
                    "`sequence` has {} points; at most {} are allowed\nhelp: every point is a fresh boot; a longer series is several campaigns",
                    file.sequence.get_ref().len(),
                    limits::POINTS
                ),
            );
            return Vec::new();
        }
        let seq: Vec<Spanned<KernelLabel>> = self.labels(file.sequence.get_ref());
        if file.sequence.get_ref().is_empty() {
            self.error(
                file.sequence.span(),
                "`sequence` is empty; list the kernels in boot order, e.g. [\"a\", \"b\", \"a\"]",
            );
        }
        for label in &seq {
            if !known.contains(&label.get_ref()) {
                self.unknown_kernel(label, known, "`sequence`");
            }
        }
        // With an invalid label in `sequence`, which kernel it meant is unknown: say nothing
        // about kernels that look unused.
        let all_valid = seq.len() == file.sequence.get_ref().len();
        for (label, _) in file.kernels.get_ref() {
            if all_valid && !seq.iter().any(|s| s.get_ref() == label.get_ref()) {
                self.error(
                    label.span(),
                    format!(
                        "kernel `{}` is never booted: it is not in `sequence`",
                        label.get_ref()
                    ),
                )
                .help
                .push("add it to `sequence` or remove its [kernels] table".to_owned());
            }
        }
        let sequence: Vec<KernelLabel> = seq.iter().map(|s| s.get_ref().clone()).collect();
        let labels = point_labels(&sequence);
        let mut seen = HashSet::new();
        for label in &labels {
            if !seen.insert(label) {
                self.error(
                    file.sequence.span(),
                    format!("two points would both be labelled `{label}`; rename the kernel whose label ends in `-a`, `-b`, …"),
                );
            }
        }
        sequence
    }
}

#[cfg(test)]
mod tests {
    use crate::recipe::load::testkit::{MINIMAL, errors};

    #[test]
    fn unknown_sequence_label_suggests_the_kernel() {
        let src = MINIMAL.replace(r#"["a", "b", "a"]"#, r#"["a", "bb", "a"]"#);
        let text = errors(&src);
        assert!(text.contains("`sequence` names kernel `bb`"), "{text}");
        assert!(text.contains("did you mean `b`?"), "{text}");
        assert!(text.contains("kernel `b` is never booted"), "{text}");
    }

    #[test]
    fn an_invalid_label_in_a_list_is_reported_at_the_element() {
        let src = MINIMAL.replace(r#"["a", "b", "a"]"#, r#"["a", "b;x", "a"]"#);
        let text = errors(&src);
        assert!(
            text.contains("invalid kernel label `b;x`: it contains ';'"),
            "{text}"
        );
        assert!(text.contains("r.toml:5:18 (key `sequence[2]`)"), "{text}");
        // Which kernel `b;x` meant is unknown, so `b` is not called unused.
        assert!(!text.contains("never booted"), "{text}");
    }
}
