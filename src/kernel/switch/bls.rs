//! A one-shot Boot Loader Specification entry (systemd-boot).
//!
//! systemd-boot reads entries, kernels and initrds from its own partition only (the ESP, or
//! an XBOOTLDR partition: `bootctl --print-boot-path`), so aba copies the point's image and
//! initrd to `aba/<kernel>/` there, writes `loader/entries/aba-<kernel>.conf` with them and
//! the command line it builds, selects it for the next boot only with `bootctl set-oneshot`
//! (the EFI variable `LoaderEntryOneShot`) and reboots. An entry whose files are not on that
//! partition is skipped by systemd-boot without a word: the box boots its default.
//!
//! The entry starts with aba's marker; it, the copies and an `aba-` one-shot selection are
//! removed once the boot is proven, when the campaign ends and before one starts.

use std::time::Duration;

use serde::Deserialize;

use super::{
    Cx, Method, SwitchError, SwitchKind, SwitchRequest, Traits, classify,
    oneshot::{MARKER, PREFIX},
    wait::detached,
};
use crate::{
    recipe::Recipe,
    target::{
        check::{CheckItem, probe_item},
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// The EFI variable systemd-boot reads the one-shot entry from (and deletes as it boots it).
const ONE_SHOT_VAR: &str =
    "/sys/firmware/efi/efivars/LoaderEntryOneShot-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";

/// Room a switch needs on the boot partition for a kernel and an initrd (MiB).
const MIN_FREE_MIB: u64 = 64;

/// `switch = "bls"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bls {
    /// The boot partition's mount point (that holds `loader/entries`); `None`: the one
    /// `bootctl --print-boot-path` names.
    pub boot_path: Option<String>,
}

/// `[targets.NAME.bls]` in the inventory.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlsTable {
    /// The directory of loader entries, `<boot partition>/loader/entries`.
    #[serde(default)]
    pub entries: Option<String>,
}

impl Bls {
    /// The method as a target's table configures it; `entries` must end in
    /// `/loader/entries` (its partition is where the kernel copies go).
    pub fn from_table(table: Option<BlsTable>) -> Result<Bls, String> {
        let Some(entries) = table.and_then(|t| t.entries) else {
            return Ok(Bls { boot_path: None });
        };
        let trimmed = entries.trim_end_matches('/');
        match trimmed.strip_suffix("/loader/entries") {
            Some(root) if !root.is_empty() => Ok(Bls {
                boot_path: Some(root.to_owned()),
            }),
            _ => Err(format!(
                "[bls] entries = \"{entries}\" must be <boot partition>/loader/entries (e.g. /boot/efi/loader/entries): systemd-boot reads the kernel from that partition"
            )),
        }
    }

    /// Shell that sets `$b` to the boot partition's mount point.
    fn boot_path_script(&self) -> String {
        match &self.boot_path {
            Some(p) => format!("b={}", sh_quote(p)),
            None => "command -v bootctl >/dev/null || { echo 'bootctl not found (systemd-boot)' >&2; exit 2; }; b=$(bootctl --print-boot-path) || { echo 'bootctl finds no boot partition (ESP)' >&2; exit 2; }".to_owned(),
        }
    }

    /// Removes aba's entries, copies and an `aba-` one-shot selection, printing what it removed.
    fn clean_script(&self) -> String {
        let boot = match &self.boot_path {
            Some(p) => format!("b={}", sh_quote(p)),
            None => "b=$(bootctl --print-boot-path 2>/dev/null) || b=".to_owned(),
        };
        format!(
            "{boot}; if [ -n \"$b\" ]; then for f in \"$b\"/loader/entries/{PREFIX}*.conf; do if [ -f \"$f\" ] && [ \"$(head -n 1 \"$f\")\" = {m} ]; then rm -f \"$f\" && echo \"removed $f\"; fi; done; if [ -d \"$b/aba\" ]; then rm -rf \"$b/aba\" && echo \"removed $b/aba\"; fi; fi; v={var}; if [ -f \"$v\" ]; then n=$(tail -c +5 \"$v\" | tr -d '\\000'); case $n in {PREFIX}*) {{ bootctl set-oneshot '' 2>/dev/null || {{ chattr -i \"$v\" 2>/dev/null; rm -f \"$v\"; }}; }} && echo \"cleared LoaderEntryOneShot=$n\";; esac; fi; sync",
            m = sh_quote(MARKER),
            var = sh_quote(ONE_SHOT_VAR),
        )
    }
}

/// The entry's file name for a kernel.
pub fn entry_name(req: &SwitchRequest<'_>) -> String {
    format!("{PREFIX}{}.conf", req.kernel.label)
}

/// The BLS one-shot entry: the copies on the boot partition and the built command line.
pub fn bls_entry(req: &SwitchRequest<'_>, with_initrd: bool) -> String {
    let dir = format!("/aba/{}", req.kernel.label);
    let mut entry = format!(
        "{MARKER}\ntitle aba one-shot: {label} ({release})\nlinux {dir}/linux\n",
        label = req.kernel.label,
        release = req.kernel.release,
    );
    if with_initrd {
        entry.push_str(&format!("initrd {dir}/initrd\n"));
    }
    entry.push_str(&format!("options {}\n", req.full_cmdline()));
    entry
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
        let mut items = vec![probe_item(
            transport,
            "switch bls",
            "command -v bootctl >/dev/null || { echo 'bootctl not found' >&2; exit 1; }; bootctl status 2>/dev/null | grep -q 'One-shot entry control' || { echo 'the running boot loader does not offer one-shot entries (not systemd-boot, or booted without it)' >&2; exit 1; }; echo 'systemd-boot with one-shot entry control'",
            "boot through systemd-boot (bootctl install), or choose another switch",
        )?];
        items.push(probe_item(
            transport,
            "boot partition",
            &format!(
                "{}; [ -d \"$b/loader/entries\" ] && [ -w \"$b/loader/entries\" ] || {{ echo \"$b/loader/entries is not a writable directory\" >&2; exit 1; }}; free=$(df -Pk \"$b\" | awk 'NR == 2 {{ print int($4 / 1024) }}'); [ \"$free\" -ge {MIN_FREE_MIB} ] || {{ echo \"$b has $free MiB free; a kernel and an initrd need about {MIN_FREE_MIB}\" >&2; exit 1; }}; echo \"$b: loader/entries writable, $free MiB free\"",
                self.boot_path_script()
            ),
            "mount the ESP (bootctl --print-esp-path) and make room for one kernel and initrd",
        )?);
        items.push(probe_item(
            transport,
            "one-shot entry",
            &format!(
                "{}; for f in \"$b\"/loader/entries/{PREFIX}*.conf; do [ -f \"$f\" ] && {{ echo \"$f was left by a killed aba campaign\" >&2; exit 1; }}; done; [ -d \"$b/aba\" ] && {{ echo \"$b/aba was left by a killed aba campaign\" >&2; exit 1; }}; v={var}; if [ -f \"$v\" ]; then n=$(tail -c +5 \"$v\" | tr -d '\\000'); case $n in {PREFIX}*) echo \"LoaderEntryOneShot=$n is still set by a killed aba campaign\" >&2; exit 1;; esac; fi; echo \"aba writes $b/loader/entries/{PREFIX}<kernel>.conf and $b/aba/ for each switch and removes them after the boot\"",
                self.boot_path_script(),
                var = sh_quote(ONE_SHOT_VAR),
            ),
            "`aba resume DIR` of the killed campaign (or any new campaign) removes aba's own entries",
        )?);
        Ok(items)
    }

    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        let kernel = cx.req.kernel;
        let image = kernel.image.as_str();
        let initrd = kernel.initrd.as_str();
        let with_initrd = !initrd.is_empty();
        let d = format!("\"$b\"/aba/{}", sh_quote(kernel.label.as_str()));
        let mut copy = format!(
            "{}; [ -r {img} ] || {{ echo {img}': no such file on the target' >&2; exit 2; }}; mkdir -p {d} \"$b/loader/entries\" && {{ cmp -s {img} {d}/linux || {{ cp {img} {d}/linux.new && mv -f {d}/linux.new {d}/linux; }}; }}",
            self.boot_path_script(),
            img = sh_quote(image),
        );
        if with_initrd {
            copy.push_str(&format!(
                " && {{ [ -r {ird} ] || {{ echo {ird}': no such file on the target' >&2; exit 2; }}; }} && {{ cmp -s {ird} {d}/initrd || {{ cp {ird} {d}/initrd.new && mv -f {d}/initrd.new {d}/initrd; }}; }}",
                ird = sh_quote(initrd),
            ));
        }
        copy.push_str(" && sync && printf '%s\\n' \"$b\"");
        let boot = cx.on_target_output(&copy)?;
        let boot = boot.trim();
        let name = entry_name(cx.req);
        let path = format!("{}/loader/entries/{name}", boot.trim_end_matches('/'));
        cx.transport
            .upload(bls_entry(cx.req, with_initrd).as_bytes(), &path, 0o644)
            .map_err(classify)?;
        cx.on_target(&format!("sync && bootctl set-oneshot {}", sh_quote(&name)))
    }

    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        cx.on_target(&detached("reboot"))
    }

    /// Installed under `/boot` like the distribution's own kernels; each switch copies the
    /// image and initrd from there to the ESP, as for any kernel on the target.
    fn install_base(&self, _workdir: &str) -> Option<String> {
        Some(super::INSTALL_BASE.to_owned())
    }

    fn clean(&self, transport: &mut dyn Transport) -> Result<Vec<String>, SwitchError> {
        super::run_clean(transport, &self.clean_script())
    }
}

#[cfg(test)]
mod tests {
    use super::{Bls, BlsTable, bls_entry, entry_name};
    use crate::kernel::switch::{
        oneshot::MARKER,
        tests::{kernel, params, request},
    };

    #[test]
    fn the_entry_boots_the_copies_on_the_boot_partition_with_the_built_command_line() {
        let k = kernel();
        let params = params();
        let req = request(&k, &params);
        let entry = bls_entry(&req, true);
        assert!(entry.starts_with(MARKER), "{entry}");
        assert!(entry.contains("linux /aba/patched/linux\n"), "{entry}");
        assert!(entry.contains("initrd /aba/patched/initrd\n"), "{entry}");
        assert!(
            entry.contains("options console=ttyS0,115200 panic=-1 quiet aba.kernel=patched\n"),
            "{entry}"
        );
        assert!(!bls_entry(&req, false).contains("initrd"));
        assert_eq!(entry_name(&req), "aba-patched.conf");
    }

    #[test]
    fn the_entries_directory_names_the_boot_partition() {
        assert_eq!(Bls::from_table(None).expect("default").boot_path, None);
        let t = |e: &str| {
            Bls::from_table(Some(BlsTable {
                entries: Some(e.to_owned()),
            }))
        };
        assert_eq!(
            t("/boot/efi/loader/entries/")
                .expect("ok")
                .boot_path
                .as_deref(),
            Some("/boot/efi")
        );
        let err = t("/boot/entries").expect_err("not loader/entries");
        assert!(err.contains("loader/entries"), "{err}");
    }
}
