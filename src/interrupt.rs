//! Ctrl-C and SIGTERM: a flag the engine and the transports poll, so an interrupted campaign
//! kills the running workload, finishes the write in progress, restores tuning and leaves a
//! resumable results directory instead of dying mid-write.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM. A second Ctrl-C still only sets the flag; the
/// engine reaches a safe point within one poll interval.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int);
    // SAFETY: `on_signal` only performs an atomic store, which is async-signal-safe, and the
    // sigaction struct is fully initialised before use.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// True once an interrupt was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Clears the flag (tests run several campaigns in one process).
pub fn reset() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// Sets the flag as a signal would (tests).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Runs clean-up `f` (putting tuning back, removing the lock marker, releasing a
/// reservation) with a pending interrupt set aside, so that the Ctrl-C that ended the run
/// does not also cut its clean-up short; then puts it back, so that what comes after (the
/// next campaign of a batch lane, another target's thread) still sees it. A second Ctrl-C
/// during `f` stops `f`.
pub fn set_aside<T>(f: impl FnOnce() -> T) -> T {
    let pending = REQUESTED.swap(false, Ordering::SeqCst);
    let value = f();
    if pending {
        request();
    }
    value
}
