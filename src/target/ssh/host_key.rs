//! Whether the key a server presented is the target's: a pinned `SHA256:` fingerprint, or an
//! OpenSSH `known_hosts` file read with OpenSSH's matching rules.
//!
//! libssh2 never checks host keys by itself, and its `check_port` falls back to plain-host
//! entries (so `[h]:2222 <wrong key>` next to `h <right key>` passes) and knows no wildcards.
//! So plain entries are matched here (`[host]:port` only for ports other than 22, `*`/`?`/`!`
//! patterns, `@revoked`); only hashed `|1|…` names go through libssh2, asked for the exact
//! name. Refusals explain what was seen and exactly how to fix it; nothing is ever accepted
//! or written back on the user's behalf.

use std::{fs, io::ErrorKind};

use base64::{
    Engine,
    engine::general_purpose::{STANDARD, STANDARD_NO_PAD},
};
use sha2::{Digest, Sha256};
use ssh2::{CheckResult, KnownHostFileKind, Session};

use crate::target::ssh::config::wildcard_match;

/// Which keys a target may present.
#[derive(Clone, Debug)]
pub(crate) enum HostKeyPolicy {
    /// Exactly this fingerprint (normalised `SHA256:<43 base64 chars>`).
    Pinned(String),
    /// Any key a `known_hosts` file lists for the host.
    KnownHosts(std::path::PathBuf),
}

/// `SHA256:<base64 without padding>` of a public key blob, as `ssh-keygen -lf` prints it.
pub(crate) fn fingerprint(blob: &[u8]) -> String {
    format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(blob)))
}

/// Checks a pin's syntax and normalises it (prefix case, optional `=` padding).
pub(crate) fn normalize_pin(pin: &str) -> Result<String, String> {
    let pin = pin.trim();
    let body = pin
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case("sha256:"))
        .map(|_| pin[7..].trim_end_matches('='));
    match body {
        Some(b) if STANDARD_NO_PAD.decode(b).is_ok_and(|raw| raw.len() == 32) => {
            Ok(format!("SHA256:{b}"))
        }
        _ => Err(format!(
            "pinned host key `{pin}` is not a SHA256 fingerprint: expected `SHA256:` and 43 \
             base64 characters, as `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` prints \
             on the target"
        )),
    }
}

/// The key type named inside a public key blob (`ssh-ed25519`, `ssh-rsa`, …).
pub(crate) fn key_type(blob: &[u8]) -> String {
    blob.get(..4)
        .map(|len| u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize)
        .and_then(|len| blob.get(4..4 + len))
        .map_or_else(
            || "unknown".into(),
            |t| String::from_utf8_lossy(t).into_owned(),
        )
}

/// The name OpenSSH looks up in `known_hosts`: `host` on port 22, `[host]:port` otherwise.
pub(crate) fn known_hosts_name(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// Verifies the key of a session that has finished its handshake. `Err` carries the reason
/// for [`crate::target::transport::TransportError::HostKey`].
pub(crate) fn verify(
    session: &Session,
    policy: &HostKeyPolicy,
    host: &str,
    port: u16,
) -> Result<(), String> {
    let Some((blob, _)) = session.host_key() else {
        return Err("the server presented no host key".into());
    };
    let seen = fingerprint(blob);
    let kind = key_type(blob);
    let name = known_hosts_name(host, port);
    let line = format!("{name} {kind} {}", STANDARD.encode(blob));
    match policy {
        HostKeyPolicy::Pinned(pin) if *pin == seen => Ok(()),
        HostKeyPolicy::Pinned(pin) => Err(format!(
            "the server presented {kind} key {seen}, but the inventory pins {pin}. \
             WARNING: this may be a man-in-the-middle attack; it is also what a reinstalled \
             target or regenerated host keys look like. If the change is expected, check the \
             new key on the target's console (`ssh-keygen -lf /etc/ssh/ssh_host_{short}_key.pub`) \
             and pin it: host_key = \"{seen}\"",
            short = short_type(&kind),
        )),
        HostKeyPolicy::KnownHosts(path) => {
            let text = match fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) if e.kind() == ErrorKind::NotFound => String::new(),
                Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            };
            let hashed = |hosts: &str| hashed_name_matches(session, hosts, &name, blob);
            let how_to_trust = format!(
                "check the key on the target's console (`ssh-keygen -lf \
                 /etc/ssh/ssh_host_{short}_key.pub`); if it is the same, add this line to {file}:\n  \
                 {line}\nor pin it in the target inventory: host_key = \"{seen}\"",
                short = short_type(&kind),
                file = path.display(),
            );
            match evaluate(&text, &name, blob, hashed) {
                Verdict::Trusted => Ok(()),
                Verdict::Revoked { line: at } => Err(format!(
                    "the server presented {kind} key {seen}, which {}:{at} marks @revoked; \
                     never connect with it. Give the target a new host key",
                    path.display()
                )),
                Verdict::Changed { line: at, expected } => Err(format!(
                    "WARNING: the host key has CHANGED. {}:{at} expects {expected} for {name}, \
                     but the server presented {kind} key {seen}. Someone may be intercepting \
                     the connection (man-in-the-middle); it is also what a reinstalled target \
                     or regenerated host keys look like (keep /etc/ssh the same in every \
                     rootfs). If the change is expected, remove the old entry \
                     (`ssh-keygen -R '{name}' -f {file}`), then {how_to_trust}",
                    path.display(),
                    file = path.display(),
                )),
                Verdict::OtherTypes { types } => Err(format!(
                    "{} lists only {} key(s) for {name}, but the server presented {kind} key \
                     {seen}. To accept it, {how_to_trust}",
                    path.display(),
                    types.join(", ")
                )),
                Verdict::Unknown => Err(format!(
                    "{name} is not in {}{}; the server presented {kind} key {seen}. To trust \
                     it, {how_to_trust}",
                    path.display(),
                    if text.is_empty() {
                        " (missing or empty)"
                    } else {
                        ""
                    },
                )),
            }
        }
    }
}

/// `ed25519` for `ssh-ed25519`, `ecdsa` for `ecdsa-sha2-nistp256`, for key file names.
fn short_type(kind: &str) -> &str {
    let kind = kind.strip_prefix("ssh-").unwrap_or(kind);
    kind.split('-').next().unwrap_or(kind)
}

/// Asks libssh2 whether a hashed `|1|salt|hash` field names exactly `name`. The key is set
/// to the one being checked so that only the name decides.
fn hashed_name_matches(session: &Session, hosts: &str, name: &str, blob: &[u8]) -> bool {
    let Ok(mut known) = session.known_hosts() else {
        return false;
    };
    let line = format!("{hosts} ssh-ed25519 {}", STANDARD.encode(blob));
    known.read_str(&line, KnownHostFileKind::OpenSSH).is_ok()
        && matches!(known.check(name, blob), CheckResult::Match)
}

/// What a `known_hosts` file says about one name and key.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Trusted,
    Revoked { line: usize },
    Changed { line: usize, expected: String },
    OtherTypes { types: Vec<String> },
    Unknown,
}

/// OpenSSH's decision over a whole file: a revoked match wins, then any exact match, then a
/// same-type entry with another key (changed), then entries of other types only.
fn evaluate(text: &str, name: &str, blob: &[u8], hashed_matches: impl Fn(&str) -> bool) -> Verdict {
    let kind = key_type(blob);
    let (mut trusted, mut changed, mut others) = (false, None, Vec::new());
    for (index, line) in text.lines().enumerate() {
        let mut fields = line.split_whitespace();
        let Some(mut hosts) = fields.next() else {
            continue;
        };
        let mut revoked = false;
        if hosts.starts_with('#') {
            continue;
        }
        if hosts.starts_with('@') {
            // `@cert-authority` needs certificate support, which libssh2 lacks.
            if hosts != "@revoked" {
                continue;
            }
            revoked = true;
            let Some(next) = fields.next() else { continue };
            hosts = next;
        }
        let (Some(entry_type), Some(entry_key)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(entry_blob) = STANDARD.decode(entry_key) else {
            continue;
        };
        let name_matches = if hosts.starts_with("|1|") {
            hashed_matches(hosts)
        } else {
            plain_hosts_match(hosts, name)
        };
        if !name_matches {
            continue;
        }
        if revoked {
            if entry_blob == blob {
                return Verdict::Revoked { line: index + 1 };
            }
        } else if entry_blob == blob {
            trusted = true;
        } else if entry_type == kind {
            changed.get_or_insert((index + 1, fingerprint(&entry_blob)));
        } else if !others.iter().any(|t| t == entry_type) {
            others.push(entry_type.to_owned());
        }
    }
    match (trusted, changed, others.is_empty()) {
        (true, _, _) => Verdict::Trusted,
        (false, Some((line, expected)), _) => Verdict::Changed { line, expected },
        (false, None, false) => Verdict::OtherTypes { types: others },
        (false, None, true) => Verdict::Unknown,
    }
}

/// OpenSSH `match_hostname` over a comma list: a matching `!pattern` vetoes the entry.
fn plain_hosts_match(hosts: &str, name: &str) -> bool {
    let mut matched = false;
    for pattern in hosts.split(',') {
        let pattern = pattern.to_ascii_lowercase();
        if let Some(negated) = pattern.strip_prefix('!') {
            if wildcard_match(negated, name) {
                return false;
            }
        } else if wildcard_match(&pattern, name) {
            matched = true;
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use base64::{Engine, engine::general_purpose::STANDARD};

    use super::{Verdict, evaluate, fingerprint, key_type, known_hosts_name, normalize_pin};

    /// A syntactically valid ssh-ed25519 public key blob with a chosen fill byte.
    fn ed25519(fill: u8) -> Vec<u8> {
        let mut blob = Vec::new();
        blob.extend_from_slice(&11u32.to_be_bytes());
        blob.extend_from_slice(b"ssh-ed25519");
        blob.extend_from_slice(&32u32.to_be_bytes());
        blob.extend_from_slice(&[fill; 32]);
        blob
    }

    fn rsa() -> Vec<u8> {
        let mut blob = Vec::new();
        blob.extend_from_slice(&7u32.to_be_bytes());
        blob.extend_from_slice(b"ssh-rsa");
        blob.extend_from_slice(&[1, 2, 3]);
        blob
    }

    fn entry(hosts: &str, blob: &[u8]) -> String {
        format!(
            "{hosts} {} {} comment\n",
            key_type(blob),
            STANDARD.encode(blob)
        )
    }

    #[track_caller]
    fn verdict(text: &str, name: &str, blob: &[u8]) -> Verdict {
        evaluate(text, name, blob, |_| false)
    }

    #[test]
    fn names_follow_openssh() {
        assert_eq!(known_hosts_name("Bench.Example", 22), "bench.example");
        assert_eq!(known_hosts_name("127.0.0.1", 2222), "[127.0.0.1]:2222");
    }

    #[test]
    fn port_entries_do_not_fall_back_to_plain_host() {
        let (good, bad) = (ed25519(1), ed25519(2));
        let name = "[127.0.0.1]:2222";
        assert_eq!(
            verdict(&entry("127.0.0.1", &good), name, &good),
            Verdict::Unknown
        );
        let text = entry("[127.0.0.1]:2222", &bad) + &entry("127.0.0.1", &good);
        assert_eq!(
            verdict(&text, name, &good),
            Verdict::Changed {
                line: 1,
                expected: fingerprint(&bad)
            }
        );
        assert_eq!(
            verdict(&entry("[127.0.0.1]:2222", &good), name, &good),
            Verdict::Trusted
        );
    }

    #[test]
    fn wildcards_lists_and_negation() {
        let key = ed25519(3);
        let name = "[127.0.0.1]:40000";
        assert_eq!(
            verdict(&entry("[127.0.0.1]:*", &key), name, &key),
            Verdict::Trusted
        );
        assert_eq!(
            verdict(&entry("other,[127.0.0.?]:*", &key), name, &key),
            Verdict::Trusted
        );
        assert_eq!(
            verdict(&entry("[127.0.0.1]:*,![127.0.0.1]:40000", &key), name, &key),
            Verdict::Unknown
        );
        assert_eq!(
            verdict(&entry("bench-*", &key), "bench-a", &key),
            Verdict::Trusted
        );
        assert_eq!(
            verdict(&entry("BENCH-A", &key), "bench-a", &key),
            Verdict::Trusted
        );
    }

    #[test]
    fn markers_comments_and_other_types() {
        let key = ed25519(4);
        let revoked = format!("@revoked {}", entry("h", &key)) + &entry("h", &key);
        assert_eq!(verdict(&revoked, "h", &key), Verdict::Revoked { line: 1 });
        let ca = format!("@cert-authority {}# comment\n\n", entry("h", &key));
        assert_eq!(verdict(&ca, "h", &key), Verdict::Unknown);
        assert_eq!(
            verdict(&entry("h", &rsa()), "h", &key),
            Verdict::OtherTypes {
                types: vec!["ssh-rsa".into()]
            }
        );
        assert_eq!(
            verdict("h ssh-ed25519 not-base64!\n", "h", &key),
            Verdict::Unknown
        );
    }

    #[test]
    fn hashed_entries_are_delegated() {
        let key = ed25519(5);
        let text = entry("|1|c2FsdA==|aGFzaA==", &key);
        assert_eq!(
            evaluate(&text, "h", &key, |hosts| hosts.starts_with("|1|")),
            Verdict::Trusted
        );
        assert_eq!(evaluate(&text, "h", &key, |_| false), Verdict::Unknown);
    }

    #[test]
    fn pins_are_normalised_and_checked() {
        let fp = fingerprint(&ed25519(6));
        assert_eq!(fp.len(), 7 + 43);
        assert_eq!(normalize_pin(&format!(" {fp}= ")), Ok(fp.clone()));
        assert_eq!(
            normalize_pin(&fp.replace("SHA256:", "sha256:")),
            Ok(fp.clone())
        );
        assert!(normalize_pin("MD5:aa:bb").is_err());
        assert!(normalize_pin("SHA256:short").is_err());
    }
}
