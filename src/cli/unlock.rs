//! `aba unlock --target T`: release a target whose lock a killed campaign left behind. Refuses
//! while a campaign on this host still runs on it; says what it removed.

use std::time::{Duration, Instant};

use crate::{
    campaign::lock::{LockError, release_stale},
    cli::TargetArgs,
    error::{Error, exit_code},
    target::connect::{machine_key, transport_for},
};

/// `aba unlock`.
pub fn unlock(target_args: &TargetArgs) -> Result<u8, Error> {
    let target = target_args.resolve()?;
    let unusable = |source| Error::Target {
        target: target.name.clone(),
        source,
    };
    let key = machine_key(&target).map_err(unusable)?;
    let mut transport = transport_for(&target).map_err(unusable)?;
    if target.lock_file.is_some() {
        transport
            .reconnect(Instant::now() + Duration::from_secs(60))
            .map_err(|source| Error::Connect {
                target: target.name.clone(),
                source,
            })?;
    }
    match release_stale(&target, &key, transport.as_mut()) {
        Ok(released) if released.is_empty() => {
            println!("target `{}` was not locked", target.name);
            Ok(exit_code::OK)
        }
        Ok(released) => {
            for what in released {
                println!("released: {what}");
            }
            Ok(exit_code::OK)
        }
        Err(e @ (LockError::Busy { .. } | LockError::Starting { .. })) => {
            Err(Error::lock("not unlocked", e))
        }
        Err(e) => Err(Error::lock(format!("cannot unlock `{}`", target.name), e)),
    }
}
