//! A one-shot Boot Loader Specification entry (systemd-boot): aba writes `aba-<kernel>.conf`
//! with the recipe's image, initrd and the command line it builds, `bootctl set-oneshot`
//! selects it for the next boot only, then the target reboots.

use std::time::Duration;

use serde::Deserialize;

use super::{Cx, Method, SwitchError, SwitchKind, SwitchRequest, Traits, classify, wait::detached};
use crate::{
    recipe::Recipe,
    target::{
        check::{CheckItem, Probe, probe},
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// Where loader entries live unless the inventory says otherwise.
pub const DEFAULT_ENTRIES: &str = "/boot/loader/entries";

/// `switch = "bls"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bls {
    /// Directory of loader entries on the target.
    pub entries: String,
}

/// `[targets.NAME.bls]` in the inventory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlsTable {
    /// Directory of loader entries.
    #[serde(default)]
    pub entries: Option<String>,
}

impl Bls {
    /// The method as a target's table configures it.
    pub fn from_table(table: Option<BlsTable>) -> Bls {
        Bls {
            entries: table
                .and_then(|b| b.entries)
                .unwrap_or_else(|| DEFAULT_ENTRIES.to_owned()),
        }
    }
}

/// The BLS one-shot entry file's content.
pub fn bls_entry(req: &SwitchRequest<'_>) -> String {
    format!(
        "title aba {label} ({release})\nlinux {image}\ninitrd {initrd}\noptions {options}\n",
        label = req.kernel.label,
        release = req.kernel.release,
        image = req.kernel.image,
        initrd = req.kernel.initrd,
        options = req.full_cmdline(),
    )
}

impl Method for Bls {
    fn traits(&self) -> Traits {
        Traits::from_disk(SwitchKind::Bls, true, Duration::from_secs(120))
    }

    fn preflight(
        &self,
        _recipe: &Recipe,
        transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError> {
        let entries = &self.entries;
        let found = match probe(
            transport,
            &format!("command -v bootctl && [ -w {} ]", sh_quote(entries)),
        )? {
            Probe::Passed(path) => {
                CheckItem::ok("switch bls", format!("{path}, {entries} writable"))
            }
            Probe::Failed(_) => CheckItem::fail(
                "switch bls",
                format!("bootctl missing or {entries} not writable"),
                "systemd-boot and a writable loader/entries directory are needed",
            ),
        };
        Ok(vec![found])
    }

    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        let name = format!("aba-{}.conf", cx.req.kernel.label);
        let path = format!("{}/{name}", self.entries.trim_end_matches('/'));
        cx.transport
            .upload(bls_entry(cx.req).as_bytes(), &path, 0o644)
            .map_err(classify)?;
        cx.on_target(&format!("bootctl set-oneshot {}", sh_quote(&name)))
    }

    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        cx.on_target(&detached("reboot"))
    }
}

#[cfg(test)]
mod tests {
    use super::{Bls, DEFAULT_ENTRIES, bls_entry};
    use crate::kernel::switch::tests::{kernel, params, request};

    #[test]
    fn the_entry_boots_the_recipes_files_with_the_built_command_line() {
        let k = kernel();
        let params = params();
        let req = request(&k, &params);
        let entry = bls_entry(&req);
        assert!(
            entry.contains("linux /boot/vmlinuz-6.1.0-50-cloud-amd64\n"),
            "{entry}"
        );
        assert!(
            entry.contains("options console=ttyS0,115200 panic=-1 quiet aba.kernel=patched\n"),
            "{entry}"
        );
        assert_eq!(Bls::from_table(None).entries, DEFAULT_ENTRIES);
    }
}
