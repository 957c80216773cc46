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
    let key = machine_key(&target)
        .map_err(|e| Error::context(format!("cannot use target `{}`", target.name), e))?;
    let mut transport = transport_for(&target)
        .map_err(|e| Error::context(format!("cannot use target `{}`", target.name), e))?;
    if target.lock_file.is_some() {
        transport
            .reconnect(Instant::now() + Duration::from_secs(60))
            .map_err(|e| Error::context(format!("cannot connect to `{}`", target.name), e))?;
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
        Err(e @ LockError::Busy { .. }) => {
            let hint = e.hint();
            let err = Error::context(format!("not unlocked: {e}"), e);
            Err(match hint {
                Some(h) => err.with_hint(h),
                None => err,
            })
        }
        Err(e) => Err(Error::context(
            format!("cannot unlock `{}`", target.name),
            e,
        )),
    }
}
