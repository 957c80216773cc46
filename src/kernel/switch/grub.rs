//! `grub-reboot`: select an existing GRUB menu entry for the next boot only, then reboot. The
//! entry brings its own command line; aba proves the parameters it expects.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{Cx, Method, SwitchError, SwitchKind, Traits, wait::detached};
use crate::{
    recipe::Recipe,
    target::{
        check::{CheckItem, Probe, probe},
        transport::{Transport, TransportError},
    },
};

/// `switch = "grub-reboot"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrubReboot {
    /// The entry's title (or id) template, with the switch placeholders (`{release}`).
    pub entry: String,
}

/// `[targets.NAME.grub]` in the inventory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrubTable {
    /// Entry template.
    pub entry: Spanned<String>,
}

impl GrubReboot {
    /// The method as target `name`'s table configures it.
    pub fn from_table(name: &str, table: Option<GrubTable>) -> Result<GrubReboot, String> {
        match table {
            Some(g) => Ok(GrubReboot {
                entry: g.entry.into_inner(),
            }),
            None => Err(format!(
                "switch = \"grub-reboot\" needs [targets.{name}.grub] entry = \"…{{release}}…\""
            )),
        }
    }
}

impl Method for GrubReboot {
    fn traits(&self) -> Traits {
        Traits::from_disk(SwitchKind::GrubReboot, false, Duration::from_secs(120))
    }

    fn preflight(
        &self,
        _recipe: &Recipe,
        transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError> {
        let found = match probe(
            transport,
            "command -v grub-reboot || command -v grub2-reboot",
        )? {
            Probe::Passed(path) => CheckItem::ok("switch grub-reboot", path),
            Probe::Failed(_) => CheckItem::fail(
                "switch grub-reboot",
                "grub-reboot not found",
                "install grub or choose another switch",
            ),
        };
        Ok(vec![found])
    }

    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        let entry = crate::target::host::expand(&self.entry, &cx.vars())?;
        cx.on_target(&format!(
            "g=$(command -v grub-reboot || command -v grub2-reboot) || {{ echo 'grub-reboot not found' >&2; exit 2; }}; \"$g\" {entry}"
        ))
    }

    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        cx.on_target(&detached("reboot"))
    }
}

#[cfg(test)]
mod tests {
    use super::GrubReboot;
    use crate::kernel::switch::Method as _;

    #[test]
    fn grub_reboot_needs_its_entry_and_boots_the_entrys_command_line() {
        let refused = GrubReboot::from_table("box", None).expect_err("no table");
        assert!(refused.contains("[targets.box.grub] entry"), "{refused}");
        let grub = GrubReboot {
            entry: "Debian {release}".to_owned(),
        };
        assert!(!grub.builds_cmdline());
        assert!(grub.boots_target_files());
        assert_eq!(grub.kind().name(), "grub-reboot");
    }
}
