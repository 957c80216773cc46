//! kexec: `kexec -l` loads the point's kernel with the command line aba builds, then
//! `systemctl kexec` (where systemd runs, so services stop cleanly) or `kexec -e` starts it,
//! without firmware or boot loader.

use std::time::Duration;

use super::{Cx, Method, SwitchError, SwitchKind, SwitchRequest, Traits, wait::detached};
use crate::{
    recipe::Recipe,
    target::{
        check::{CheckItem, probe, probe_item},
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// The kexec trigger: `systemctl kexec` where systemd runs, else `kexec -e`.
pub const KEXEC_TRIGGER: &str = "if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then systemctl kexec; else kexec -e; fi";

/// `switch = "kexec"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kexec;

/// The kexec load command for a request.
pub fn kexec_load_command(req: &SwitchRequest<'_>) -> String {
    let image = req.kernel.image.as_str();
    let initrd = req.kernel.initrd.as_str();
    format!(
        "for f in {img} {ird}; do [ -r \"$f\" ] || {{ echo \"$f: no such file on the target\" >&2; exit 2; }}; done; command -v kexec >/dev/null || {{ echo 'kexec not found (install kexec-tools)' >&2; exit 2; }}; kexec -l {img} --initrd={ird} --command-line={cmd}",
        img = sh_quote(image),
        ird = sh_quote(initrd),
        cmd = sh_quote(&req.full_cmdline()),
    )
}

impl Method for Kexec {
    fn traits(&self) -> Traits {
        Traits::from_disk(SwitchKind::Kexec, true, Duration::from_secs(30))
    }

    fn preflight(
        &self,
        _recipe: &Recipe,
        transport: &mut dyn Transport,
    ) -> Result<Vec<CheckItem>, TransportError> {
        let found = probe_item(
            transport,
            "switch kexec",
            "command -v kexec || { echo 'kexec not found' >&2; exit 1; }",
            "install kexec-tools on the target",
        )?;
        let systemd = probe(
            transport,
            "[ -d /run/systemd/system ] && command -v systemctl",
        )?;
        let trigger = CheckItem::ok(
            "kexec trigger",
            if systemd.passed() {
                "systemctl kexec"
            } else {
                "kexec -e (no systemd)"
            },
        );
        Ok(vec![found, trigger])
    }

    fn prepare(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        let load = kexec_load_command(cx.req);
        cx.on_target(&load)
    }

    fn trigger(&self, cx: &mut Cx<'_, '_>) -> Result<(), SwitchError> {
        cx.on_target(&detached(KEXEC_TRIGGER))
    }

    /// `kexec -l` reads the image before the switch, so the work directory will do, even
    /// where it does not survive the boot (a tmpfs): the next switch uploads it again.
    fn install_base(&self, workdir: &str) -> Option<String> {
        Some(format!("{}/kernels", workdir.trim_end_matches('/')))
    }
}

#[cfg(test)]
mod tests {
    use super::kexec_load_command;
    use crate::kernel::switch::tests::{kernel, params, request};

    #[test]
    fn kexec_command_line_is_base_plus_params_quoted_once() {
        let k = kernel();
        let params = params();
        let req = request(&k, &params);
        assert_eq!(
            req.full_cmdline(),
            "console=ttyS0,115200 panic=-1 quiet aba.kernel=patched"
        );
        let cmd = kexec_load_command(&req);
        assert!(cmd.ends_with(
            "kexec -l /boot/vmlinuz-6.1.0-50-cloud-amd64 --initrd=/boot/initrd.img-6.1.0-50-cloud-amd64 --command-line='console=ttyS0,115200 panic=-1 quiet aba.kernel=patched'"
        ), "{cmd}");
    }
}
