//! Binding a shared recipe's kernel labels to this tester's kernels without editing the recipe
//! (whose SHA-256 the journal records): `[targets.NAME.kernels]` in the inventory and
//! `--kernel LABEL=RELEASE` on the command line. The most specific wins, field by field:
//! command line over inventory over recipe. A bound release also moves the image and initrd
//! to their defaults for it (`/boot/vmlinuz-<release>`, `/boot/initrd.img-<release>`) unless
//! the same binding names them: the recipe's paths belonged to the recipe's release.
//!
//! The effective kernels are journaled when a campaign starts ([`Event::Kernels`]); every
//! later reader of the results directory (resume, report) applies that record, never the
//! inventory or command line of the moment.
//!
//! [`Event::Kernels`]: crate::results::journal::Event::Kernels

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::recipe::{
    Recipe,
    ident::{KernelLabel, Release, TargetPath},
};

pub use crate::origin::Origin;

/// One binding of a label: what it replaces, and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelBinding {
    /// The recipe's label it binds.
    pub label: String,
    /// The release `uname -r` must print instead of the recipe's.
    pub release: Option<Release>,
    /// The image instead of the recipe's (or the default for the bound release).
    pub image: Option<TargetPath>,
    /// The initrd instead of the recipe's (or the default for the bound release).
    pub initrd: Option<TargetPath>,
    /// Where it was written.
    pub origin: Origin,
}

impl KernelBinding {
    /// Reads `--kernel LABEL=RELEASE`; the release follows the recipe's rules.
    pub fn from_option(text: &str) -> Result<KernelBinding, String> {
        let (label, release) = text
            .split_once('=')
            .ok_or_else(|| format!("`{}` is not LABEL=RELEASE", crate::text::quoted(text)))?;
        Ok(KernelBinding {
            label: label.to_owned(),
            release: Some(Release::new(release)?),
            image: None,
            initrd: None,
            origin: Origin::CommandLine {
                option: format!("--kernel {text}"),
            },
        })
    }
}

/// A kernel as the campaign uses it, with where each field came from: the journal's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundKernel {
    /// The recipe's label.
    pub label: KernelLabel,
    /// What `uname -r` must print.
    pub release: Release,
    /// Where `release` came from.
    pub release_from: Origin,
    /// The image on the target.
    pub image: TargetPath,
    /// Where `image` came from.
    pub image_from: Origin,
    /// The initrd on the target.
    pub initrd: TargetPath,
    /// Where `initrd` came from.
    pub initrd_from: Origin,
    /// A kernel built on this host: what aba installs and proves (absent in journals of
    /// kernels already on the target, and in those an older aba wrote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Box<crate::build::record::KernelBuild>>,
}

impl BoundKernel {
    /// True when something other than the recipe chose one of its fields.
    pub fn is_bound(&self) -> bool {
        [&self.release_from, &self.image_from, &self.initrd_from]
            .iter()
            .any(|o| **o != Origin::Recipe)
    }

    /// Where the release came from, for a kernel line: `bound by the inventory (…)`, or
    /// `None` for the recipe's.
    pub fn note(&self) -> Option<String> {
        let origin = [&self.release_from, &self.image_from, &self.initrd_from]
            .into_iter()
            .find(|o| **o != Origin::Recipe)?;
        Some(format!("bound by {origin}"))
    }
}

/// A binding that cannot apply.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}: the recipe has no kernel `{label}` to bind (its kernels: {known})", origin.place())]
pub struct BindingError {
    /// The label as written.
    pub label: String,
    /// Where it was written.
    pub origin: Origin,
    /// The recipe's labels, comma-separated.
    pub known: String,
}

/// Applies `bindings` (in increasing precedence: inventory first, then command line) to
/// `recipe`'s kernels and returns every kernel with where its fields came from.
pub fn bind(
    recipe: &mut Recipe,
    bindings: &[KernelBinding],
) -> Result<Vec<BoundKernel>, BindingError> {
    let mut bound: Vec<BoundKernel> = recipe
        .kernels
        .values()
        .map(|k| BoundKernel {
            label: k.label.clone(),
            release: k.release.clone(),
            release_from: Origin::Recipe,
            image: k.image.clone(),
            image_from: Origin::Recipe,
            initrd: k.initrd.clone(),
            initrd_from: Origin::Recipe,
            build: None,
        })
        .collect();
    for binding in bindings {
        let Some(k) = bound.iter_mut().find(|k| k.label.as_str() == binding.label) else {
            return Err(BindingError {
                label: binding.label.clone(),
                origin: binding.origin.clone(),
                known: recipe
                    .kernels
                    .keys()
                    .map(KernelLabel::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if let Some(release) = &binding.release {
            k.release = release.clone();
            k.release_from = binding.origin.clone();
            for (path, from, prefix) in [
                (&mut k.image, &mut k.image_from, "vmlinuz"),
                (&mut k.initrd, &mut k.initrd_from, "initrd.img"),
            ] {
                if let Ok(default) = TargetPath::new(&format!("/boot/{prefix}-{release}")) {
                    *path = default;
                    *from = binding.origin.clone();
                }
            }
        }
        if let Some(image) = &binding.image {
            k.image = image.clone();
            k.image_from = binding.origin.clone();
        }
        if let Some(initrd) = &binding.initrd {
            k.initrd = initrd.clone();
            k.initrd_from = binding.origin.clone();
        }
    }
    apply(recipe, &bound);
    Ok(bound)
}

/// Sets `recipe`'s kernels to the recorded `kernels` (labels it no longer has are skipped).
pub fn apply(recipe: &mut Recipe, kernels: &[BoundKernel]) {
    for b in kernels {
        if let Some(k) = recipe.kernels.get_mut(&b.label) {
            k.release = b.release.clone();
            k.image = b.image.clone();
            k.initrd = b.initrd.clone();
            k.build = b.build.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe() -> Recipe {
        let text = r#"
version = 1
name = "bind"
description = "d"
sequence = ["a", "b", "a"]
samples = 2
[kernels.a]
release = "7.2.0-orig"
image = "/boot/custom-orig"
[kernels.b]
release = "7.2.0-new"
[[workload]]
name = "w"
run = "true"
estimate = "1s"
metric = { number = true, better = "higher" }
"#;
        crate::recipe::load::parse(std::path::Path::new("bind.toml"), text)
            .expect("test recipe is valid")
    }

    fn inventory_binding(label: &str, release: &str) -> KernelBinding {
        KernelBinding {
            label: label.to_owned(),
            release: Some(Release::new(release).unwrap()),
            image: None,
            initrd: None,
            origin: Origin::Inventory {
                at: "targets.toml:4:1".to_owned(),
            },
        }
    }

    #[test]
    fn no_binding_keeps_the_recipe() {
        let mut r = recipe();
        let bound = bind(&mut r, &[]).unwrap();
        assert!(bound.iter().all(|k| !k.is_bound()));
        assert_eq!(bound[0].image.as_str(), "/boot/custom-orig");
    }

    #[test]
    fn a_bound_release_moves_the_paths_to_its_defaults() {
        let mut r = recipe();
        let bound = bind(&mut r, &[inventory_binding("a", "6.18.0-orig+")]).unwrap();
        let a = &r.kernels["a"];
        assert_eq!(a.release.as_str(), "6.18.0-orig+");
        assert_eq!(a.image.as_str(), "/boot/vmlinuz-6.18.0-orig+");
        assert_eq!(a.initrd.as_str(), "/boot/initrd.img-6.18.0-orig+");
        assert_eq!(
            bound[0].note().unwrap(),
            "bound by the inventory (targets.toml:4:1)"
        );
        assert_eq!(bound[1].release_from, Origin::Recipe);
    }

    #[test]
    fn the_command_line_wins_over_the_inventory() {
        // The inventory's image belonged to the inventory's release: the option's release
        // moves it to the default for the option's release.
        let mut r = recipe();
        let mut inv = inventory_binding("b", "6.18.0-new");
        inv.image = Some(TargetPath::new("/boot/mine").unwrap());
        let cli = KernelBinding::from_option("b=6.19.0").unwrap();
        let bound = bind(&mut r, &[inv, cli]).unwrap();
        let b = &bound[1];
        assert_eq!(b.release.as_str(), "6.19.0");
        assert!(matches!(b.release_from, Origin::CommandLine { .. }));
        assert_eq!(b.image.as_str(), "/boot/vmlinuz-6.19.0");
        assert!(matches!(b.image_from, Origin::CommandLine { .. }));
        let mut r = recipe();
        let mut inv = inventory_binding("b", "6.18.0-new");
        inv.initrd = Some(TargetPath::new("/boot/mine").unwrap());
        let bound = bind(&mut r, &[inv]).unwrap();
        assert_eq!(bound[1].initrd.as_str(), "/boot/mine");
    }

    #[test]
    fn an_unknown_label_names_where_it_came_from() {
        let mut r = recipe();
        let err = bind(&mut r, &[inventory_binding("c", "1.0")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "targets.toml:4:1: the recipe has no kernel `c` to bind (its kernels: a, b)"
        );
        let err = bind(&mut r, &[KernelBinding::from_option("z=1.0").unwrap()]).unwrap_err();
        assert!(err.to_string().starts_with("--kernel z=1.0: "));
    }

    #[test]
    fn the_option_follows_the_release_rules() {
        assert!(KernelBinding::from_option("a").is_err());
        let err = KernelBinding::from_option("a=6.1 x;rm").unwrap_err();
        assert!(err.contains("invalid kernel release"), "{err}");
    }

    #[test]
    fn the_plan_boots_and_proves_the_bound_releases() {
        use crate::campaign::plan::Plan;
        let inv = crate::inventory::Inventory::parse(
            std::path::Path::new("targets.toml"),
            "[targets.lab]\nhost = \"h\"\nhost_key = \"SHA256:x\"\nswitch = \"kexec\"\n\
             [targets.lab.kernels]\nb = { release = \"6.18.0-new+\" }\n",
        )
        .expect("valid");
        let target = inv.target("lab").expect("defined");
        // `running` cannot be planned on a switching target; a binding makes it a release.
        let text = crate::recipe::load::parse(std::path::Path::new("bind.toml"), &{
            let r = recipe();
            r.hashed_text.replace("7.2.0-orig", "running")
        })
        .expect("valid");
        assert!(Plan::new(&text, &target).is_err());
        let mut r = text;
        let cli = KernelBinding::from_option("a=6.18.0-orig+").unwrap();
        let all: Vec<KernelBinding> = target.kernels.iter().cloned().chain([cli]).collect();
        bind(&mut r, &all).unwrap();
        let plan = Plan::new(&r, &target).expect("plannable once bound");
        let releases: Vec<&str> = plan.points.iter().map(|p| p.release.as_str()).collect();
        assert_eq!(releases, ["6.18.0-orig+", "6.18.0-new+", "6.18.0-orig+"]);
    }

    #[test]
    fn the_record_round_trips_and_reapplies() {
        let mut r = recipe();
        let bound = bind(&mut r, &[inventory_binding("a", "6.18.0-orig+")]).unwrap();
        let json = serde_json::to_string(&bound).unwrap();
        let back: Vec<BoundKernel> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, bound);
        let mut fresh = recipe();
        apply(&mut fresh, &back);
        assert_eq!(fresh.kernels["a"].release.as_str(), "6.18.0-orig+");
    }
}
