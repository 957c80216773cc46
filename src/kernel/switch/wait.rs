//! Waiting for the boot a switch started: the boot being left is read first, the trigger runs
//! detached a moment later, and only a login that shows another `boot_id` ends the wait.

use std::time::{Duration, Instant};

use super::{SwitchError, classify};
use crate::{
    interrupt,
    kernel::proof::{BootFacts, FactsError, read_facts},
    target::transport::{Transport, TransportError},
};

/// Pause between logins that still reach the old boot.
const OLD_BOOT_PAUSE: Duration = Duration::from_millis(200);
/// How long a detached trigger waits before it runs (`sleep 1; kexec -e`), so that the exec
/// that starts it returns first: the old boot answers at least this long after the trigger.
pub(super) const TRIGGER_DELAY: Duration = Duration::from_secs(1);
/// After the trigger delay, how long before the first login: `kexec -e` takes the old kernel
/// away within a moment, and a login that meets the old sshd as it dies would wait for the
/// handshake limit instead of a new boot.
pub(super) const TRIGGER_MARGIN: Duration = Duration::from_millis(300);

/// Starts `command` on the target after [`TRIGGER_DELAY`], outside the exec's process group,
/// so the triggering exec returns (and its channel closes) before the machine goes away.
pub(super) fn detached(command: &str) -> String {
    crate::target::quote::detached(&format!("sleep {}; {command}", TRIGGER_DELAY.as_secs()))
}

/// The current boot's facts, reconnecting first (within `window`) if the connection was lost
/// since the last command (a long idle gap, a previous reboot).
pub(super) fn current_facts(
    window: Duration,
    transport: &mut dyn Transport,
) -> Result<BootFacts, SwitchError> {
    match read_facts(transport) {
        Ok(facts) => return Ok(facts),
        Err(FactsError::Transport(
            TransportError::ConnectionLost { .. } | TransportError::Connect { .. },
        )) => {}
        Err(e) => return Err(facts_error(e)),
    }
    transport.disconnect();
    transport
        .reconnect(Instant::now() + window)
        .map_err(classify)?;
    read_facts(transport).map_err(facts_error)
}

fn facts_error(e: FactsError) -> SwitchError {
    match e {
        FactsError::Transport(t) => classify(t),
        other => SwitchError::Facts(other),
    }
}

/// Sleeps until `when`, waking for an interrupt.
pub(super) fn pause_until(when: Instant) -> Result<(), SwitchError> {
    loop {
        if interrupt::requested() {
            return Err(SwitchError::Interrupted);
        }
        let left = when.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// A boot that answered [`wait_for_new_boot`].
#[derive(Clone, Debug)]
pub struct Answered {
    /// Its facts.
    pub facts: BootFacts,
    /// When the login that read them completed.
    pub logged_in: Instant,
    /// How long reading them took after that login.
    pub facts_read: Duration,
}

/// Logs in again and again until a boot other than `previous` answers, or `deadline`.
pub fn wait_for_new_boot(
    transport: &mut dyn Transport,
    previous: Option<&str>,
    deadline: Instant,
) -> Result<Answered, SwitchError> {
    let timeout = deadline.saturating_duration_since(Instant::now());
    loop {
        if interrupt::requested() {
            return Err(SwitchError::Interrupted);
        }
        if Instant::now() >= deadline {
            return Err(SwitchError::NoReturn {
                timeout,
                power_cycled: false,
            });
        }
        match transport.reconnect(deadline) {
            Ok(()) => {}
            Err(e @ TransportError::HostKey { .. }) => return Err(SwitchError::HostKey(e)),
            Err(TransportError::Interrupted { .. }) => return Err(SwitchError::Interrupted),
            Err(_) => continue,
        }
        let logged_in = Instant::now();
        match read_facts(transport) {
            Ok(facts) if Some(facts.boot_id.as_str()) != previous => {
                return Ok(Answered {
                    facts,
                    logged_in,
                    facts_read: logged_in.elapsed(),
                });
            }
            Ok(_) => {
                // The old kernel still answers: it has not gone down yet.
                transport.disconnect();
                std::thread::sleep(OLD_BOOT_PAUSE);
            }
            Err(FactsError::Transport(e @ TransportError::HostKey { .. })) => {
                return Err(SwitchError::HostKey(e));
            }
            Err(FactsError::Transport(TransportError::Interrupted { .. })) => {
                return Err(SwitchError::Interrupted);
            }
            Err(_) => transport.disconnect(),
        }
    }
}
