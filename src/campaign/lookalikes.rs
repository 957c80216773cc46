//! Kernels that a boot cannot tell apart: the same release, image, initrd and command line.
//!
//! The boot proof compares `uname -r` and `/proc/cmdline`; two kernels of a recipe that agree
//! on both (and boot the same files) pass it for each other, so a campaign between them
//! compares a kernel with whichever build happens to be installed under that name: itself,
//! most likely. Only the build proof of `--builds` (`/proc/version` against the image aba
//! installed) separates such kernels, so `aba check` says so when it is run without one.

use std::fmt;

use crate::recipe::{Recipe, ident::KernelLabel};

/// Kernels of one recipe that agree on everything the boot proof reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookalikes {
    /// Two or more labels, in the recipe's order.
    pub kernels: Vec<KernelLabel>,
    /// Their common release.
    pub release: String,
}

/// The groups of two or more kernels that share release, image, initrd and command line and
/// have no build of this host to prove (`built`: the labels a builds file covers, and any
/// kernel already bound to a build). `release = "running"` kernels are left out: they are
/// one boot by design, which the plan's shared-boot warning says.
#[must_use]
pub fn lookalikes(recipe: &Recipe, built: &[KernelLabel]) -> Vec<Lookalikes> {
    let mut groups: Vec<Lookalikes> = Vec::new();
    let mut keys: Vec<(&str, &str, &str, Vec<&str>)> = Vec::new();
    for kernel in recipe.kernels.values() {
        if kernel.release.is_running() || kernel.build.is_some() || built.contains(&kernel.label) {
            continue;
        }
        let mut cmdline: Vec<&str> = kernel.cmdline.iter().map(String::as_str).collect();
        cmdline.sort_unstable();
        let key = (
            kernel.release.as_str(),
            kernel.image.as_str(),
            kernel.initrd.as_str(),
            cmdline,
        );
        match keys.iter().position(|k| *k == key) {
            Some(i) => groups[i].kernels.push(kernel.label.clone()),
            None => {
                keys.push(key);
                groups.push(Lookalikes {
                    kernels: vec![kernel.label.clone()],
                    release: kernel.release.as_str().to_owned(),
                });
            }
        }
    }
    groups.retain(|g| g.kernels.len() > 1);
    groups
}

impl fmt::Display for Lookalikes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.kernels.iter().map(|k| format!("`{k}`")).collect();
        write!(
            f,
            "kernels {} have the same release ({}), image, initrd and command line: without \
             --builds nothing at a boot tells them apart, and the campaign may compare one \
             build with itself; give the builds file that proves each build (--builds FILE), \
             or kernels that differ",
            names.join(", "),
            self.release
        )
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::lookalikes;
    use crate::recipe::{ident::KernelLabel, parse};

    fn recipe(kernels: &str) -> crate::recipe::Recipe {
        let text = format!(
            "version = 1\nname = \"t\"\ndescription = \"d\"\nsequence = [\"a\", \"b\", \"c\", \"a\"]\n\
             {kernels}\n[[workload]]\nname = \"w\"\nrun = \"true\"\nmetric = {{ number = true, better = \"lower\" }}\n"
        );
        parse(Path::new("t.toml"), &text).expect("a valid recipe")
    }

    fn label(s: &str) -> KernelLabel {
        KernelLabel::new(s).expect("a label")
    }

    #[test]
    fn kernels_of_one_release_image_and_cmdline_are_lookalikes() {
        let r = recipe(
            "[kernels.a]\nrelease = \"6.1\"\n[kernels.b]\nrelease = \"6.1\"\n[kernels.c]\nrelease = \"6.1\"\n",
        );
        let groups = lookalikes(&r, &[]);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].kernels, [label("a"), label("b"), label("c")]);
        assert!(
            groups[0]
                .to_string()
                .starts_with("kernels `a`, `b`, `c` have the same release (6.1), image"),
            "{}",
            groups[0]
        );
        // A builds file that covers two of them leaves no pair to confuse.
        assert!(lookalikes(&r, &[label("a"), label("b")]).is_empty());
        assert_eq!(
            lookalikes(&r, &[label("a")])[0].kernels,
            [label("b"), label("c")]
        );
    }

    #[test]
    fn a_release_a_cmdline_or_an_image_of_their_own_tells_kernels_apart() {
        for kernels in [
            "[kernels.a]\nrelease = \"6.1\"\n[kernels.b]\nrelease = \"6.2\"\n[kernels.c]\nrelease = \"6.3\"\n",
            "[kernels.a]\nrelease = \"6.1\"\n[kernels.b]\nrelease = \"6.1\"\ncmdline = \"x=1\"\n[kernels.c]\nrelease = \"6.1\"\ncmdline = \"x=2\"\n",
            "[kernels.a]\nrelease = \"6.1\"\n[kernels.b]\nrelease = \"6.1\"\nimage = \"/boot/b\"\n[kernels.c]\nrelease = \"6.1\"\ninitrd = \"/boot/c\"\n",
        ] {
            assert!(lookalikes(&recipe(kernels), &[]).is_empty(), "{kernels}");
        }
    }
}
