//! Choosing the transport for a target: this machine, or SSH.

use crate::{
    inventory::Target,
    target::{local::LocalTransport, transport::Transport},
};

/// A transport for `target`, not yet connected (the engine connects with a deadline).
pub fn transport_for(target: &Target) -> Result<Box<dyn Transport>, String> {
    match &target.ssh {
        None => Ok(Box::new(LocalTransport::new())),
        Some(_) => Err(format!(
            "target `{}`: SSH transport not built yet",
            target.name
        )),
    }
}
