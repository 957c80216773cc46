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
    match ssh_target(target) {
        None => Ok(Box::new(LocalTransport::new())),
        Some(ssh) => Ok(Box::new(SshTransport::new(&ssh)?)),
    }
}

/// The machine behind `target`, as the lock knows it: `local`, or the address and port the
/// transport would connect to (after `~/.ssh/config`, with the name resolved), so that two
/// inventory names for one machine are one machine.
pub fn machine_key(target: &Target) -> Result<String, TransportError> {
    let Some(ssh) = ssh_target(target) else {
        return Ok("local".to_owned());
    };
    let resolved = ssh.resolve()?;
    let host = resolved.host.to_ascii_lowercase();
    let address = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), resolved.port))
        .ok()
        .and_then(|mut addrs| addrs.next())
        .map_or_else(|| format!("{host}:{}", resolved.port), |a| a.to_string());
    Ok(address)
}

fn ssh_target(target: &Target) -> Option<SshTarget> {
    let facts = target.ssh.as_ref()?;
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
    ssh.runner_cpus = facts.runner_cpus.clone();
    Some(ssh)
}
