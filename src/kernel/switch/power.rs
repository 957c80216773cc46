//! Host-side power commands: optionally select the next kernel (a netboot server, a BMC's
//! boot device), then cycle the machine's power. Nothing runs on the target, so a machine that
//! is down before the switch can still be switched.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{Cx, Method, SWITCH_PLACEHOLDERS, SwitchError, SwitchKind, Traits, host_command_check};
use crate::{
    recipe::Recipe,
    target::{
        check::CheckItem,
        transport::{Transport, TransportError},
    },
};

/// `switch = "power"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Power {
    /// Optional command that selects the next kernel.
    pub set_next: Option<String>,
    /// Command that cycles power (and boots what was selected).
    pub cycle: String,
}

/// `[targets.NAME.power]` in the inventory.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PowerTable {
    /// Selects the next kernel.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub set_next: Option<Spanned<String>>,
    /// Cycles power.
    #[schemars(with = "String")]
    pub cycle: Spanned<String>,
}

impl Power {
    /// The method as target `name`'s table configures it.
    pub fn from_table(name: &str, table: Option<PowerTable>) -> Result<Power, String> {
        match table {
            Some(p) => Ok(Power {
                set_next: p.set_next.map(Spanned::into_inner),
                cycle: p.cycle.into_inner(),
            }),
            None => Err(format!(
                "switch = \"power\" needs [targets.{name}.power] cycle = \"…\" (and optionally set_next)"
            )),
        }
    }
}

/// Whether a host command names the point's kernel (`{release}`, `{kernel}`, `{cmdline}`, …),
/// so that running it can choose what boots.
fn names_a_kernel(command: &str) -> bool {
    let mut named = false;
    let _ = crate::placeholders::render_template(command, &mut |name| {
        named |= SWITCH_PLACEHOLDERS.contains(&name);
        Some(String::new())
    });
    named
}

impl Method for Power {
    fn traits(&self) -> Traits {
        Traits {
            kind: SwitchKind::Power,
            switches: true,
            builds_cmdline: false,
            boots_target_files: false,
            old_boot_lingers: false,
            chooses_kernel: self.set_next.is_some() || names_a_kernel(&self.cycle),
            works_while_down: true,
            boot_estimate: Duration::from_secs(120),
        }
    }

    fn preflight(
        &self,
        recipe: &Recipe,
        _transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError> {
        Ok(self
            .set_next
            .iter()
            .chain(std::iter::once(&self.cycle))
            .map(|cmd| host_command_check("switch power", cmd, recipe))
            .collect())
    }

    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        match &self.set_next {
            Some(cmd) => cx.on_host(cmd),
            None => Ok(()),
        }
    }

    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        cx.transport.disconnect();
        cx.on_host(&self.cycle)
    }
}

#[cfg(test)]
mod tests {
    use super::Power;
    use crate::kernel::switch::Method as _;

    #[test]
    fn power_needs_its_cycle_command_and_works_on_a_machine_that_is_down() {
        let refused = Power::from_table("bmc", None).expect_err("no table");
        assert!(refused.contains("[targets.bmc.power] cycle"), "{refused}");
        let power = Power {
            set_next: None,
            cycle: "ipmitool chassis power cycle".to_owned(),
        };
        assert!(power.traits().works_while_down);
        assert!(!power.builds_cmdline() && !power.boots_target_files());
    }

    /// Only `set_next`, or a cycle command that names the kernel, chooses what boots.
    #[test]
    fn a_power_target_chooses_its_kernel_only_with_set_next_or_a_named_kernel() {
        let power = |set_next: Option<&str>, cycle: &str| Power {
            set_next: set_next.map(str::to_owned),
            cycle: cycle.to_owned(),
        };
        assert!(!power(None, "ipmitool chassis power cycle").chooses_kernel());
        assert!(!power(None, "pdu cycle ${PORT} {{x}}").chooses_kernel());
        assert!(power(Some("netboot select {release}"), "pdu cycle").chooses_kernel());
        assert!(power(None, "bmc boot {release}").chooses_kernel());
    }
}
