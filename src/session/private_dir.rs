//! A private temporary directory of the host: preflight's work directory on `local`, the
//! build steps' logs until a results directory keeps them.

use std::path::PathBuf;

/// A fresh private directory on this machine (`mkdtemp`: mode 0700, a name nobody could have
/// prepared), removed with everything in it when dropped.
#[derive(Debug)]
pub struct PrivateDir(pub PathBuf);

impl PrivateDir {
    /// Makes the directory under the system temporary folder, its name starting with `prefix`.
    pub fn new(prefix: &str) -> std::io::Result<PrivateDir> {
        use std::os::unix::ffi::OsStringExt as _;
        let template = std::env::temp_dir().join(format!("{prefix}-XXXXXX"));
        let mut bytes = template.into_os_string().into_vec();
        bytes.push(0);
        // SAFETY: `bytes` is a NUL-terminated template ending in XXXXXX that mkdtemp
        // overwrites in place; it lives across the call.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        bytes.pop();
        Ok(PrivateDir(PathBuf::from(std::ffi::OsString::from_vec(
            bytes,
        ))))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // remove_dir_all does not follow symlinks: what the setup linked to stays untouched.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
