//! Choosing the transport for a target: this machine, or SSH.

use crate::{
    inventory::Target,
    target::{
        local::LocalTransport,
        ssh::{SshTarget, SshTransport},
        transport::{Transport, TransportError},
    },
};

/// A transport for `target`, not yet connected: the engine connects with a deadline.
pub fn transport_for(target: &Target) -> Result<Box<dyn Transport>, TransportError> {
    let Some(facts) = &target.ssh else {
        return Ok(Box::new(LocalTransport::new()));
    };
    let mut ssh = SshTarget::new(&facts.host);
    ssh.port = facts.port;
    ssh.user = facts.user.clone();
    ssh.identity = facts.identity.clone();
    ssh.use_agent = facts.agent;
    ssh.known_hosts = facts.known_hosts.clone();
    ssh.host_key_sha256 = facts.host_key.clone();
    ssh.ssh_config = facts.ssh_config.clone();
    ssh.keepalive_interval = facts.keepalive;
    ssh.dead_after = facts.dead_after;
    ssh.connect_timeout = facts.connect_timeout;
    Ok(Box::new(SshTransport::new(&ssh)?))
}
