//! No switch: every point runs on the kernel that is up (null campaigns, the `local` target).
//! Points share one boot, and tuning changes a machine that is not rebooted between them.

use std::time::Duration;

use super::{Cx, Method, SwitchError, SwitchKind, Traits};
use crate::{
    recipe::Recipe,
    target::{
        check::CheckItem,
        transport::{Transport, TransportError},
    },
};

/// `switch = "none"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoSwitch;

impl Method for NoSwitch {
    fn traits(&self) -> Traits {
        Traits {
            kind: SwitchKind::None,
            switches: false,
            builds_cmdline: false,
            boots_target_files: false,
            old_boot_lingers: false,
            chooses_kernel: false,
            works_while_down: false,
            boot_estimate: Duration::ZERO,
        }
    }

    fn preflight(
        &self,
        recipe: &Recipe,
        _transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError> {
        let running = recipe.kernels.values().all(|k| k.release.is_running());
        Ok(vec![CheckItem::ok(
            "switch",
            if running {
                "none: every point runs on the kernel that is up"
            } else {
                "none: the proof will require the recipe's release"
            },
        )])
    }

    fn prepare(&self, _cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        Ok(())
    }

    fn trigger(&self, _cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::NoSwitch;
    use crate::kernel::switch::Method as _;

    #[test]
    fn no_switch_shares_the_boot_and_costs_nothing() {
        assert!(!NoSwitch.switches());
        assert!(!NoSwitch.builds_cmdline() && !NoSwitch.boots_target_files());
        assert!(NoSwitch.boot_estimate().is_zero());
    }
}
