//! What a test root holds, to show that aba changed nothing it may not touch.

use std::{
    collections::BTreeMap,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
};

/// Every path under `root` except those under `skip` (relative to `root`), with its mode and,
/// for a file, its size and a content hash, for a link its target: what must not change.
/// Links are listed, never followed.
pub fn listing(root: &Path, skip: &[&str]) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            if skip.iter().any(|s| rel.starts_with(s)) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("stat");
            let content = if meta.is_file() {
                let data = std::fs::read(&path).expect("read");
                format!("{} bytes, {:x}", data.len(), fnv(&data))
            } else if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).expect("link").display())
            } else {
                String::new()
            };
            out.insert(rel, format!("{:o} {content}", meta.mode()));
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    out
}

/// A small non-cryptographic hash, enough to notice a changed file.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
