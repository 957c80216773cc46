//! The host's sysctls are one shared resource for the whole test process.
//!
//! Several tests tune `/proc/sys/kernel/printk_ratelimit` (or another knob) on this machine
//! through the `local` target and then check the value the workload saw and the value put
//! back. Run at the same time, one test reads the other's tuned value as its "before" or its
//! workload sees the other's setting (CI saw exactly that). Each such test holds this lock
//! for its whole body.

use std::sync::{Mutex, MutexGuard, OnceLock};

/// Serialises the tests that change a sysctl of the machine the tests run on.
pub fn lock() -> MutexGuard<'static, ()> {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    LOCK.get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
