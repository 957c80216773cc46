//! `grub-reboot`: boot the point's kernel once through GRUB, then the machine's default again.
//!
//! By default aba writes a one-shot menu entry with the point's image, initrd and the command
//! line it builds (the default boot's parameters, `[boot] cmdline`, the kernel's own) into
//! `custom.cfg` in GRUB's directory, selects it with `grub-reboot aba-<kernel>` (GRUB's
//! `next_entry` in grubenv, which GRUB clears as it boots it) and reboots. The distribution's
//! generated `grub.cfg` is never edited: Debian's and Fedora's source `custom.cfg` from their
//! `41_custom` script at every boot, with no `grub-mkconfig` run. The file starts with aba's
//! marker, is removed once the boot is proven, and is never written over a `custom.cfg` aba
//! did not write.
//!
//! With `[targets.NAME.grub] entry = "…{release}…"` aba instead selects an existing entry by
//! title or id; that entry brings its own command line, so a recipe's parameters are proven
//! but not applied.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{
    Cx, Method, SwitchError, SwitchKind, SwitchRequest, Traits, classify,
    oneshot::{Located, MARKER, PREFIX, grub_word, locate_script, parse_located},
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

/// GRUB's directory unless the inventory says otherwise (Fedora: `/boot/grub2`).
pub const DEFAULT_DIR: &str = "/boot/grub";

/// `switch = "grub-reboot"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrubReboot {
    /// GRUB's directory on the target (`grub.cfg`, `grubenv`, `custom.cfg`).
    pub dir: String,
    /// An existing entry's title or id template (`{release}`…) to select instead of writing
    /// one; `None`: aba writes the entry.
    pub entry: Option<String>,
}

/// `[targets.NAME.grub]` in the inventory.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrubTable {
    /// An existing entry to select (its own command line), instead of aba's one-shot entry.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub entry: Option<Spanned<String>>,
    /// GRUB's directory.
    #[serde(default)]
    pub dir: Option<String>,
}

impl GrubReboot {
    /// The method as a target's table configures it.
    pub fn from_table(table: Option<GrubTable>) -> GrubReboot {
        let (entry, dir) = match table {
            Some(t) => (t.entry.map(Spanned::into_inner), t.dir),
            None => (None, None),
        };
        GrubReboot {
            dir: dir
                .map(|d| d.trim_end_matches('/').to_owned())
                .unwrap_or_else(|| DEFAULT_DIR.to_owned()),
            entry,
        }
    }

    fn custom_cfg(&self) -> String {
        format!("{}/custom.cfg", self.dir)
    }

    fn grubenv(&self) -> String {
        format!("{}/grubenv", self.dir)
    }

    /// `grub-reboot`'s `--boot-directory` (the directory that holds GRUB's).
    fn boot_directory(&self) -> &str {
        match self.dir.rsplit_once('/') {
            Some(("", _)) | None => "/",
            Some((parent, _)) => parent,
        }
    }
}

/// The id of the one-shot entry for a kernel.
pub fn entry_id(req: &SwitchRequest<'_>) -> String {
    format!("{PREFIX}{}", req.kernel.label)
}

/// `custom.cfg` with one entry that boots `image` (and `initrd`) with `cmdline`.
pub fn custom_cfg(req: &SwitchRequest<'_>, image: &Located, initrd: Option<&Located>) -> String {
    let module = match image.fstype.as_str() {
        "ext2" | "ext3" | "ext4" => "ext2",
        "vfat" | "msdos" => "fat",
        other => other,
    };
    let words: Vec<String> = req
        .full_cmdline()
        .split_whitespace()
        .map(grub_word)
        .collect();
    let mut cfg = format!(
        "{MARKER}\n# campaign one-shot for kernel {label} ({release}); grub-reboot selects it once\nmenuentry {title} --id {id} {{\n\tinsmod part_gpt\n\tinsmod part_msdos\n\tinsmod {module}\n\tsearch --no-floppy --fs-uuid --set=root {uuid}\n\tlinux {image} {cmdline}\n",
        label = req.kernel.label,
        release = req.kernel.release,
        title = grub_word(&format!(
            "aba one-shot: {} ({})",
            req.kernel.label, req.kernel.release
        )),
        id = grub_word(&entry_id(req)),
        uuid = grub_word(&image.uuid),
        image = grub_word(&image.path_on_fs()),
        cmdline = words.join(" "),
    );
    if let Some(initrd) = initrd {
        cfg.push_str(&format!("\tinitrd {}\n", grub_word(&initrd.path_on_fs())));
    }
    cfg.push_str("}\n");
    cfg
}

/// Finds `grub-reboot` and `grub-editenv` (or their `grub2-` names on Fedora) as `$g`, `$e`.
const FIND_TOOLS: &str = "g=$(command -v grub-reboot || command -v grub2-reboot) || { echo 'grub-reboot not found (install grub2-common)' >&2; exit 2; }; e=$(command -v grub-editenv || command -v grub2-editenv) || { echo 'grub-editenv not found' >&2; exit 2; }";

impl GrubReboot {
    /// Refuses to go on when `custom.cfg` exists and is not aba's.
    fn foreign_cfg_check(&self) -> String {
        let c = sh_quote(&self.custom_cfg());
        format!(
            "if [ -e {c} ] && [ \"$(head -n 1 {c})\" != {m} ]; then echo {c}' exists and was not written by aba: it is never replaced' >&2; exit 2; fi",
            m = sh_quote(MARKER)
        )
    }

    /// Removes aba's `custom.cfg` and an `aba-` `next_entry`, printing what it removed.
    fn clean_script(&self) -> String {
        let c = sh_quote(&self.custom_cfg());
        let env = sh_quote(&self.grubenv());
        format!(
            "c={c}; if [ -f \"$c\" ] && [ \"$(head -n 1 \"$c\")\" = {m} ]; then rm -f \"$c\" && echo \"removed $c\"; fi; rm -f \"$c.aba-new\"; e=$(command -v grub-editenv || command -v grub2-editenv || true); if [ -n \"$e\" ] && [ -f {env} ]; then n=$(\"$e\" {env} list | sed -n 's/^next_entry=//p'); case $n in {PREFIX}*) \"$e\" {env} unset next_entry && echo \"cleared next_entry=$n in \"{env};; esac; fi; sync",
            m = sh_quote(MARKER),
        )
    }
}

impl Method for GrubReboot {
    fn traits(&self) -> Traits {
        Traits::from_disk(
            SwitchKind::GrubReboot,
            self.entry.is_none(),
            Duration::from_secs(120),
        )
    }

    fn preflight(
        &self,
        _recipe: &Recipe,
        transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError> {
        let mut items = vec![probe_item(
            transport,
            "switch grub-reboot",
            &format!("{FIND_TOOLS}; echo \"$g, $e\""),
            "install GRUB's tools (grub2-common) or choose another switch",
        )?];
        if self.entry.is_some() {
            return Ok(items);
        }
        let cfg = sh_quote(&format!("{}/grub.cfg", self.dir));
        let env = sh_quote(&self.grubenv());
        let custom = sh_quote(&self.custom_cfg());
        items.push(probe_item(
            transport,
            "grub.cfg",
            &format!(
                "[ -r {cfg} ] || {{ echo {cfg}' not readable' >&2; exit 1; }}; grep -q custom.cfg {cfg} || {{ echo {cfg}' does not source custom.cfg: aba'\\''s one-shot entry would not be seen' >&2; exit 1; }}; grep -q next_entry {cfg} || {{ echo {cfg}' does not honour next_entry (grub-reboot)' >&2; exit 1; }}; echo {cfg}' sources custom.cfg and honours next_entry'"
            ),
            "regenerate grub.cfg with the distribution's tool (update-grub, grub2-mkconfig), whose 41_custom sources custom.cfg; or select an existing entry with [targets.NAME.grub] entry = …",
        )?);
        items.push(probe_item(
            transport,
            "grubenv",
            &format!(
                "f={env}; [ -f \"$f\" ] && [ ! -L \"$f\" ] || {{ echo \"$f is not a regular file\" >&2; exit 1; }}; [ \"$(wc -c <\"$f\")\" -eq 1024 ] || {{ echo \"$f is not 1024 bytes: GRUB rewrites it in place\" >&2; exit 1; }}; t=$(findmnt -n -o FSTYPE -T \"$f\"); case $t in ext2|ext3|ext4|vfat) echo \"$f on $t: GRUB clears next_entry as it boots\";; *) echo \"$f is on $t, where GRUB cannot clear next_entry: the one-shot would stay selected\" >&2; exit 1;; esac"
            ),
            "GRUB must be able to write grubenv (ext2/3/4 or vfat, not LVM, RAID or btrfs); choose the bls or kexec switch otherwise",
        )?);
        items.push(probe_item(
            transport,
            "one-shot entry",
            &format!(
                "command -v findmnt >/dev/null || {{ echo 'findmnt not found (util-linux)' >&2; exit 1; }}; c={custom}; if [ -e \"$c\" ]; then if [ \"$(head -n 1 \"$c\")\" = {m} ]; then echo \"$c was left by a killed aba campaign\" >&2; else echo \"$c exists and was not written by aba\" >&2; fi; exit 1; fi; e=$(command -v grub-editenv || command -v grub2-editenv || true); n=$([ -n \"$e\" ] && \"$e\" {env} list 2>/dev/null | sed -n 's/^next_entry=//p'); case $n in {PREFIX}*) echo \"next_entry=$n is still selected by a killed aba campaign\" >&2; exit 1;; esac; echo \"aba writes $c for each switch and removes it after the boot\"",
                m = sh_quote(MARKER),
            ),
            "`aba resume DIR` of the killed campaign (or any new campaign) removes aba's own entry; a custom.cfg of your own: move its entries to /etc/grub.d/40_custom and run update-grub",
        )?);
        Ok(items)
    }

    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        if let Some(entry) = &self.entry {
            let entry = crate::target::host::expand(entry, &cx.vars())?;
            return cx.on_target(&format!(
                "{FIND_TOOLS}; \"$g\" --boot-directory={} {entry} && sync",
                sh_quote(self.boot_directory())
            ));
        }
        let kernel = cx.req.kernel;
        let mut files = vec![kernel.image.as_str()];
        if !kernel.initrd.as_str().is_empty() {
            files.push(kernel.initrd.as_str());
        }
        let locate = format!(
            "{FIND_TOOLS}; {}; {}",
            self.foreign_cfg_check(),
            locate_script(&files)
        );
        let out = cx.on_target_output(&locate)?;
        let located = parse_located(&out).map_err(|reason| SwitchError::Prepare {
            command: locate.clone(),
            outcome: reason,
            stderr: String::new(),
        })?;
        let cfg = custom_cfg(cx.req, &located[0], located.get(1));
        let staged = format!("{}.aba-new", self.custom_cfg());
        cx.transport
            .upload(cfg.as_bytes(), &staged, 0o644)
            .map_err(classify)?;
        let id = entry_id(cx.req);
        cx.on_target(&format!(
            "{FIND_TOOLS}; mv -f {staged} {cfg} && \"$g\" --boot-directory={boot} {id} && sync && \"$e\" {env} list | grep -qx {want} || {{ echo 'grub-reboot did not select '{id} >&2; exit 1; }}",
            staged = sh_quote(&staged),
            cfg = sh_quote(&self.custom_cfg()),
            boot = sh_quote(self.boot_directory()),
            id = sh_quote(&id),
            env = sh_quote(&self.grubenv()),
            want = sh_quote(&format!("next_entry={id}")),
        ))
    }

    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        cx.on_target(&detached("reboot"))
    }

    /// GRUB reads the image from a file system at boot: `/boot`, next to the distribution's
    /// kernels, under a folder aba owns.
    fn install_base(&self, _workdir: &str) -> Option<String> {
        self.entry.is_none().then(|| super::INSTALL_BASE.to_owned())
    }

    fn clean(&self, transport: &mut dyn Transport) -> Result<Vec<String>, SwitchError> {
        if self.entry.is_some() {
            return Ok(Vec::new());
        }
        super::run_clean(transport, &self.clean_script())
    }
}

#[cfg(test)]
mod tests {
    use super::{GrubReboot, custom_cfg};
    use crate::kernel::switch::{
        Method as _,
        oneshot::{Located, MARKER},
        tests::{kernel, params, request},
    };

    fn on(path: &str, mount: &str) -> Located {
        Located {
            path: path.to_owned(),
            uuid: "ab0a0001-0000-4000-8000-0000000000a1".to_owned(),
            mount: mount.to_owned(),
            fstype: "ext4".to_owned(),
        }
    }

    #[test]
    fn the_one_shot_entry_boots_the_recipes_files_with_the_built_command_line() {
        let k = kernel();
        let params = params();
        let req = request(&k, &params);
        let cfg = custom_cfg(
            &req,
            &on("/boot/vmlinuz-6.1.0-50-cloud-amd64", "/boot"),
            Some(&on("/boot/initrd.img-6.1.0-50-cloud-amd64", "/boot")),
        );
        assert!(cfg.starts_with(MARKER), "{cfg}");
        assert!(cfg.contains("--id aba-patched {"), "{cfg}");
        assert!(
            cfg.contains(
                "search --no-floppy --fs-uuid --set=root ab0a0001-0000-4000-8000-0000000000a1\n"
            ),
            "{cfg}"
        );
        assert!(
            cfg.contains(
                "\tlinux /vmlinuz-6.1.0-50-cloud-amd64 console=ttyS0,115200 panic=-1 quiet aba.kernel=patched\n"
            ),
            "{cfg}"
        );
        assert!(
            cfg.contains("\tinitrd /initrd.img-6.1.0-50-cloud-amd64\n"),
            "{cfg}"
        );
        assert!(cfg.contains("insmod ext2"), "{cfg}");
    }

    #[test]
    fn aba_writes_the_entry_unless_an_existing_one_is_named() {
        let grub = GrubReboot::from_table(None);
        assert!(grub.builds_cmdline());
        assert!(grub.boots_target_files());
        assert_eq!(grub.dir, "/boot/grub");
        assert_eq!(grub.boot_directory(), "/boot");
        assert_eq!(grub.kind().name(), "grub-reboot");
        let existing = GrubReboot {
            dir: "/boot/grub2".to_owned(),
            entry: Some("Debian {release}".to_owned()),
        };
        assert!(!existing.builds_cmdline());
        assert_eq!(existing.boot_directory(), "/boot");
    }
}
