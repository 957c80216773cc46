//! What the boot-loader methods share: the marker that makes a file aba's to replace and
//! remove, the file system a kernel file lives on, and words quoted for GRUB's script.
//!
//! aba writes one-shot boot entries (a GRUB `custom.cfg`, a BLS entry and its copies on the
//! ESP) for one boot only. Each file starts with [`MARKER`]: aba never replaces or removes a
//! file without it, and removes every file with it once the boot it was written for is proven,
//! when a campaign ends, and before a campaign (or its resume) starts.

/// The first line of every boot-loader file aba writes.
pub const MARKER: &str = "# aba one-shot boot entry: written and removed by aba, do not edit";

/// The prefix of every entry id and file name aba writes (`aba-<kernel>`); a one-shot
/// selection of a name with it is aba's to clear.
pub const PREFIX: &str = "aba-";

/// A file on the target and the mounted file system that holds it, as `findmnt -T` tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The file as the recipe names it.
    pub path: String,
    /// The file system's UUID.
    pub uuid: String,
    /// Its mount point.
    pub mount: String,
    /// Its type (`ext4`, `vfat`, `xfs`…).
    pub fstype: String,
}

impl Located {
    /// The file's path from the root of its file system, as a boot loader reads it.
    pub fn path_on_fs(&self) -> String {
        let mount = self.mount.trim_end_matches('/');
        match self.path.strip_prefix(mount) {
            Some(rest) if mount.is_empty() => format!("/{}", rest.trim_start_matches('/')),
            Some(rest) if rest.starts_with('/') => rest.to_owned(),
            _ => self.path.clone(),
        }
    }
}

/// The shell that prints one `PATH UUID MOUNT FSTYPE` line per file (after checking each is
/// readable); [`parse_located`] reads it.
pub fn locate_script(paths: &[&str]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| crate::target::quote::sh_quote(p))
        .collect();
    format!(
        "command -v findmnt >/dev/null || {{ echo 'findmnt not found (util-linux)' >&2; exit 2; }}; for f in {}; do [ -r \"$f\" ] || {{ echo \"$f: no such file on the target\" >&2; exit 2; }}; printf '%s ' \"$f\"; findmnt -n -o UUID,TARGET,FSTYPE -T \"$f\" | head -n 1; done",
        quoted.join(" ")
    )
}

/// Reads [`locate_script`]'s output; a file whose file system has no UUID is an error (a
/// boot loader finds file systems by UUID).
pub fn parse_located(stdout: &str) -> Result<Vec<Located>, String> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [path, uuid, mount, fstype] => Ok(Located {
                    path: (*path).to_owned(),
                    uuid: (*uuid).to_owned(),
                    mount: (*mount).to_owned(),
                    fstype: (*fstype).to_owned(),
                }),
                [path, ..] => Err(format!(
                    "cannot tell the file system UUID of {path} (findmnt said `{}`)",
                    words[1..].join(" ")
                )),
                [] => Err("findmnt printed nothing".to_owned()),
            }
        })
        .collect()
}

/// A word of a GRUB script, quoted when it holds anything but plain characters. GRUB
/// unquotes single-quoted words as sh does, so the kernel sees the word itself.
pub fn grub_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.,:/=+-@%^".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::{Located, grub_word, parse_located};

    fn at(path: &str, mount: &str) -> Located {
        Located {
            path: path.to_owned(),
            uuid: "u".to_owned(),
            mount: mount.to_owned(),
            fstype: "ext4".to_owned(),
        }
    }

    #[test]
    fn a_path_is_read_from_the_root_of_its_file_system() {
        assert_eq!(
            at("/boot/vmlinuz-6.1", "/").path_on_fs(),
            "/boot/vmlinuz-6.1"
        );
        assert_eq!(
            at("/boot/vmlinuz-6.1", "/boot").path_on_fs(),
            "/vmlinuz-6.1"
        );
        assert_eq!(
            at("/boot/vmlinuz-6.1", "/boot/").path_on_fs(),
            "/vmlinuz-6.1"
        );
        // a mount point that is only a string prefix is not the file's file system
        assert_eq!(at("/bootx/vmlinuz", "/boot").path_on_fs(), "/bootx/vmlinuz");
    }

    #[test]
    fn findmnt_lines_are_parsed_and_a_missing_uuid_is_named() {
        let found = parse_located(
            "/boot/vmlinuz-6.1 ab0a0001-0000-4000-8000-0000000000a1 / ext4\n/boot/initrd.img-6.1 ab0a0001-0000-4000-8000-0000000000a1 / ext4\n",
        )
        .expect("parsed");
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].path, "/boot/initrd.img-6.1");
        assert_eq!(found[0].uuid, "ab0a0001-0000-4000-8000-0000000000a1");
        let err = parse_located("/boot/vmlinuz / tmpfs\n").expect_err("no uuid");
        assert!(err.contains("/boot/vmlinuz"), "{err}");
    }

    #[test]
    fn grub_words_are_quoted_only_when_needed() {
        assert_eq!(grub_word("nohz_full=2-7"), "nohz_full=2-7");
        assert_eq!(grub_word("console=ttyS0,115200"), "console=ttyS0,115200");
        assert_eq!(grub_word("a$b"), "'a$b'");
        assert_eq!(grub_word("it's"), "'it'\\''s'");
        assert_eq!(grub_word(""), "''");
    }
}
