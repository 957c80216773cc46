//! A connection lost in the middle of a point: reconnect, and read `boot_id`. The same boot
//! means the machine only dropped the connection, so the interrupted step is repeated (its
//! partial run left no row); another boot means it rebooted on its own, so the point fails and
//! is redone from a fresh boot.

use std::time::{Duration, Instant};

use super::{
    AttemptId, Boot, Engine, MAX_RECONNECTS_PER_RUN, RECONNECT_WINDOW,
    failure::{Failure, PointError, transport_failure},
};
use crate::{
    campaign::events::Warning, kernel::proof::read_facts, results::journal::Event,
    target::transport::TransportError,
};

impl Engine<'_> {
    /// Runs `step`, and after a dropped connection reconnects, checks that the machine did
    /// not reboot and runs it again (a few times at most).
    pub(super) fn with_reconnect<T>(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        mut step: impl FnMut(&mut Self) -> Result<T, PointError>,
    ) -> Result<T, PointError> {
        let mut reconnects = 0;
        loop {
            match step(self) {
                Err(PointError::Failed(f)) if reconnects < MAX_RECONNECTS_PER_RUN => {
                    let Some(reason) = f.connection_lost().map(str::to_owned) else {
                        return Err(PointError::Failed(f));
                    };
                    reconnects += 1;
                    self.recover_connection(at, boot, &reason)?;
                }
                other => return other,
            }
        }
    }

    /// After a dropped connection: reconnect, and carry on only if the machine did not reboot.
    pub(super) fn recover_connection(
        &mut self,
        at: AttemptId<'_>,
        boot: &Boot,
        reason: &str,
    ) -> Result<(), PointError> {
        let point = &at.point.label;
        self.notice(Warning::ConnectionLost {
            point: point.clone(),
            reason: reason.to_owned(),
        });
        self.transport.disconnect();
        let deadline = Instant::now()
            + RECONNECT_WINDOW.min(self.target.boot_timeout.max(Duration::from_secs(30)));
        let answered: Result<String, Box<dyn std::error::Error + Send + Sync>> =
            match self.transport.reconnect(deadline) {
                Ok(()) => match read_facts(self.transport) {
                    Ok(facts) => Ok(facts.boot_id),
                    // A Ctrl-C while the boot is read is an interrupt, not a lost target:
                    // the point is neither failed nor tried again.
                    Err(crate::kernel::proof::FactsError::Transport(
                        TransportError::Interrupted { .. },
                    )) => return Err(PointError::Interrupted),
                    Err(e) => Err(e.into()),
                },
                Err(e) => match transport_failure(e, "reconnecting") {
                    PointError::Interrupted => return Err(PointError::Interrupted),
                    PointError::Failed(f) if matches!(*f, Failure::HostKey { .. }) => {
                        return Err(PointError::Failed(f));
                    }
                    PointError::Failed(f) => Err(f),
                },
            };
        let same_boot = answered.as_ref().ok().map(|id| *id == boot.boot_id);
        self.journal.append(&Event::ConnectionLost {
            point: point.to_string(),
            attempt: at.attempt,
            reason: reason.to_owned(),
            same_boot,
        })?;
        match answered {
            Ok(id) if id == boot.boot_id => {
                self.info("reconnected to the same boot; repeating the interrupted run");
                Ok(())
            }
            Ok(_) => Err(Failure::Rebooted {
                point: point.clone(),
            }
            .into()),
            Err(source) => Err(Failure::Unreachable {
                point: point.clone(),
                reason: reason.to_owned(),
                source,
            }
            .into()),
        }
    }
}
