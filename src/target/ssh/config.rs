//! Host aliases from an OpenSSH client config (`~/.ssh/config`): the few keywords a target needs
//! (`HostName`, `User`, `Port`, `IdentityFile`, `UserKnownHostsFile`), resolved for one alias.
//!
//! This is a deliberately small subset of `ssh_config(5)`. It follows OpenSSH where it matters
//! for picking the right machine: `Host` patterns with `*`, `?` and `!`, the first value wins
//! (`IdentityFile` accumulates), `Include` with a glob in the last path component. Anything it
//! cannot honour for the host being resolved (`Match`, `ProxyJump`, `ProxyCommand`) is an error,
//! never silently skipped: connecting somewhere else than `ssh alias` would is worse than failing.
//! It does not read `/etc/ssh/ssh_config` and does not talk to the network.

use std::{
    fs,
    path::{Path, PathBuf},
};

use thiserror::Error;

/// How deep `Include` may nest, as in OpenSSH (`READCONF_MAX_DEPTH`).
const MAX_INCLUDE_DEPTH: usize = 16;

/// What a config file says about one host alias. `None` or empty means the file is silent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostConfig {
    /// The real host name or address (`HostName`, `%h` expanded).
    pub host_name: Option<String>,
    /// Remote user (`User`).
    pub user: Option<String>,
    /// TCP port (`Port`).
    pub port: Option<u16>,
    /// Private key files in the order given (`IdentityFile`; tokens and `~` expanded).
    pub identity_files: Vec<PathBuf>,
    /// The first `UserKnownHostsFile` (tokens and `~` expanded).
    pub user_known_hosts_file: Option<PathBuf>,
}

/// A config file that cannot be used for the alias being resolved.
#[derive(Debug, Error)]
#[error("{path}:{line}: {message}")]
pub struct SshConfigError {
    /// The file at fault.
    pub path: PathBuf,
    /// 1-based line number; 0 when the whole file is meant.
    pub line: usize,
    /// What is wrong and what to do instead.
    pub message: String,
}

/// Resolves `alias` against the config file at `path`; `home` replaces `~` and `%d`, and anchors
/// relative `Include` paths at `home/.ssh` as OpenSSH does for a user config.
///
/// A missing file is an error here; callers decide whether the default file may be absent.
pub fn resolve(path: &Path, alias: &str, home: &Path) -> Result<HostConfig, SshConfigError> {
    let text = read(path, 0)?;
    resolve_str(&text, path, alias, home)
}

/// Like [`resolve`], for config text already in memory; `origin` names it in errors.
pub fn resolve_str(
    text: &str,
    origin: &Path,
    alias: &str,
    home: &Path,
) -> Result<HostConfig, SshConfigError> {
    let mut state = State {
        alias: alias.to_ascii_lowercase(),
        home: home.to_owned(),
        raw: Raw::default(),
    };
    let mut active = true;
    state.parse(text, origin, &mut active, false, 0)?;
    state.finish(alias)
}

/// Values as written, before token expansion.
#[derive(Default)]
struct Raw {
    host_name: Option<String>,
    user: Option<String>,
    port: Option<u16>,
    identity_files: Vec<String>,
    known_hosts: Option<String>,
    proxy: Option<(String, PathBuf, usize)>,
}

struct State {
    alias: String,
    home: PathBuf,
    raw: Raw,
}

impl State {
    /// Applies one file. `active` says whether the current `Host` block applies; `never` forces
    /// every `Host` block inactive (an `Include` inside a block that does not apply).
    fn parse(
        &mut self,
        text: &str,
        origin: &Path,
        active: &mut bool,
        never: bool,
        depth: usize,
    ) -> Result<(), SshConfigError> {
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let err = |message: String| SshConfigError {
                path: origin.to_owned(),
                line: number,
                message,
            };
            let Some((keyword, args)) = split_line(line).map_err(err)? else {
                continue;
            };
            let first = || {
                args.first()
                    .cloned()
                    .ok_or_else(|| err(format!("`{keyword}` needs a value")))
            };
            match keyword.to_ascii_lowercase().as_str() {
                "host" => {
                    if args.is_empty() {
                        return Err(err("`Host` needs at least one pattern".into()));
                    }
                    *active = !never && host_matches(&args, &self.alias);
                }
                "match" => {
                    return Err(err(
                        "`Match` blocks are not supported by aba; use `Host` blocks, or set \
                         host, port and user in the target inventory"
                            .into(),
                    ));
                }
                "include" => {
                    if args.is_empty() {
                        return Err(err("`Include` needs a path".into()));
                    }
                    if depth + 1 > MAX_INCLUDE_DEPTH {
                        return Err(err(format!(
                            "`Include` nested deeper than {MAX_INCLUDE_DEPTH} levels"
                        )));
                    }
                    let saved = *active;
                    for pattern in &args {
                        for file in self.include_files(pattern).map_err(err)? {
                            let included = read(&file, depth + 1)?;
                            self.parse(&included, &file, active, never || !saved, depth + 1)?;
                        }
                    }
                    *active = saved;
                }
                _ if !*active => {}
                "hostname" => {
                    let value = first()?;
                    self.raw.host_name.get_or_insert(value);
                }
                "user" => {
                    let value = first()?;
                    self.raw.user.get_or_insert(value);
                }
                "port" => {
                    let value = first()?;
                    let port = value
                        .parse::<u16>()
                        .ok()
                        .filter(|p| *p != 0)
                        .ok_or_else(|| err(format!("bad port `{value}`")))?;
                    self.raw.port.get_or_insert(port);
                }
                "identityfile" => {
                    let value = first()?;
                    if !value.eq_ignore_ascii_case("none") {
                        self.raw.identity_files.push(value);
                    }
                }
                "userknownhostsfile" => {
                    let value = first()?;
                    self.raw.known_hosts.get_or_insert(value);
                }
                "proxyjump" | "proxycommand" => {
                    let value = first()?;
                    if self.raw.proxy.is_none() && !value.eq_ignore_ascii_case("none") {
                        self.raw.proxy = Some((keyword.clone(), origin.to_owned(), number));
                    }
                }
                // Every other keyword is about something aba does not do (forwarding, ciphers…).
                _ => {}
            }
        }
        Ok(())
    }

    /// Files named by one `Include` argument, sorted like glob(3) output.
    fn include_files(&self, pattern: &str) -> Result<Vec<PathBuf>, String> {
        let expanded = expand_tilde(pattern, &self.home);
        let path = if Path::new(&expanded).is_absolute() {
            PathBuf::from(expanded)
        } else {
            self.home.join(".ssh").join(expanded)
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.contains(['*', '?']) {
            // OpenSSH silently skips an Include that matches no file.
            return Ok(if path.is_file() {
                vec![path]
            } else {
                Vec::new()
            });
        }
        let dir = path.parent().unwrap_or(Path::new("/"));
        if dir.to_string_lossy().contains(['*', '?']) {
            return Err(format!(
                "`Include {pattern}`: wildcards are supported only in the last path component"
            ));
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return Ok(Vec::new());
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| wildcard_match(&name, &e.file_name().to_string_lossy()))
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        Ok(files)
    }

    fn finish(self, alias: &str) -> Result<HostConfig, SshConfigError> {
        if let Some((keyword, path, line)) = self.raw.proxy {
            return Err(SshConfigError {
                path,
                line,
                message: format!(
                    "`{keyword}` applies to `{alias}` but aba connects directly; remove it for \
                     this host or give the target's address in the inventory"
                ),
            });
        }
        let host_name = self
            .raw
            .host_name
            .map(|h| expand_tokens(&h, alias, &self.home, None));
        let host = host_name.clone().unwrap_or_else(|| alias.to_owned());
        let user = self.raw.user.clone();
        let file = |raw: &str| {
            PathBuf::from(expand_tilde(
                &expand_tokens(raw, &host, &self.home, user.as_deref()),
                &self.home,
            ))
        };
        Ok(HostConfig {
            identity_files: self.raw.identity_files.iter().map(|f| file(f)).collect(),
            user_known_hosts_file: self.raw.known_hosts.as_deref().map(file),
            host_name,
            user: self.raw.user,
            port: self.raw.port,
        })
    }
}

fn read(path: &Path, line: usize) -> Result<String, SshConfigError> {
    fs::read_to_string(path).map_err(|e| SshConfigError {
        path: path.to_owned(),
        line,
        message: format!("cannot read: {e}"),
    })
}

/// Splits a config line into its keyword and arguments: `Key value`, `Key=value` or
/// `Key = "quoted value"`. `None` for blank lines and comments.
fn split_line(line: &str) -> Result<Option<(String, Vec<String>)>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let keyword = line[..end].to_owned();
    let mut rest = line[end..].trim_start();
    if let Some(after) = rest.strip_prefix('=') {
        rest = after.trim_start();
    }
    let mut args = Vec::new();
    let mut chars = rest.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut arg = String::new();
        if c == '"' {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(c) => arg.push(c),
                    None => return Err(format!("unterminated quote in `{line}`")),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                arg.push(c);
                chars.next();
            }
        }
        args.push(arg);
    }
    Ok(Some((keyword, args)))
}

/// OpenSSH `match_pattern_list`: any negated pattern that matches vetoes the line; otherwise a
/// positive match is needed. Host names compare case-insensitively.
fn host_matches(patterns: &[String], host: &str) -> bool {
    let mut matched = false;
    for pattern in patterns.iter().flat_map(|p| p.split(',')) {
        let pattern = pattern.to_ascii_lowercase();
        if let Some(negated) = pattern.strip_prefix('!') {
            if wildcard_match(negated, host) {
                return false;
            }
        } else if wildcard_match(&pattern, host) {
            matched = true;
        }
    }
    matched
}

/// Glob match with `*` (any run, also empty) and `?` (one character), nothing else special.
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was and how much text it has swallowed so far, for backtracking.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Expands `%h` (host), `%d` (home), `%r` (remote user, when known) and `%%`; other tokens stay
/// literal, as a path that looks odd in an error beats a guess.
fn expand_tokens(value: &str, host: &str, home: &Path, user: Option<&str>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('h') => out.push_str(host),
            Some('d') => out.push_str(&home.to_string_lossy()),
            Some('r') if user.is_some() => out.push_str(user.unwrap_or_default()),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `~` and `~/…` become the home directory (`~user` is left alone).
fn expand_tilde(value: &str, home: &Path) -> String {
    if value == "~" {
        home.to_string_lossy().into_owned()
    } else if let Some(rest) = value.strip_prefix("~/") {
        home.join(rest).to_string_lossy().into_owned()
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{HostConfig, resolve, resolve_str, wildcard_match};

    const HOME: &str = "/home/tester";

    #[track_caller]
    fn resolved(text: &str, alias: &str) -> HostConfig {
        resolve_str(text, Path::new("config"), alias, Path::new(HOME)).expect("config resolves")
    }

    #[track_caller]
    fn error(text: &str, alias: &str) -> String {
        resolve_str(text, Path::new("config"), alias, Path::new(HOME))
            .expect_err("config is refused")
            .to_string()
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("bench-*", "bench-a"));
        assert!(wildcard_match("bench-?", "bench-a"));
        assert!(!wildcard_match("bench-?", "bench-ab"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("[127.0.0.1]:*", "[127.0.0.1]:2222"));
        assert!(!wildcard_match("[127.0.0.1]:*", "127.0.0.1"));
        assert!(wildcard_match("a*b*c", "aXXbYbZc"));
        assert!(!wildcard_match("a*b*c", "aXXbYbZ"));
    }

    #[test]
    fn alias_resolves_with_first_value_winning() {
        let text = "\
# comment
Host bench-a
    HostName 10.0.0.5
    User root
    Port 2222
    IdentityFile ~/.ssh/bench_ed25519

Host bench-*
    HostName ignored.example
    User nobody
    IdentityFile %d/.ssh/second

Host *
    Port 22
";
        let cfg = resolved(text, "bench-a");
        assert_eq!(cfg.host_name.as_deref(), Some("10.0.0.5"));
        assert_eq!(cfg.user.as_deref(), Some("root"));
        assert_eq!(cfg.port, Some(2222));
        assert_eq!(
            cfg.identity_files,
            vec![
                PathBuf::from("/home/tester/.ssh/bench_ed25519"),
                PathBuf::from("/home/tester/.ssh/second")
            ]
        );
        let other = resolved(text, "bench-b");
        assert_eq!(other.host_name.as_deref(), Some("ignored.example"));
        assert_eq!(other.port, Some(22));
        assert_eq!(resolved(text, "elsewhere").host_name, None);
    }

    #[test]
    fn negation_vetoes_and_case_is_ignored() {
        let text = "Host bench-* !bench-excluded\n  User root\nHost=BENCH-EXCLUDED\n  User=other\n";
        assert_eq!(resolved(text, "bench-1").user.as_deref(), Some("root"));
        assert_eq!(
            resolved(text, "bench-excluded").user.as_deref(),
            Some("other")
        );
        assert_eq!(resolved(text, "Bench-1").user.as_deref(), Some("root"));
    }

    #[test]
    fn settings_before_the_first_host_apply_everywhere() {
        let text = "User early\nHost x\n  User late\n  HostName %h.lab.example\n";
        let cfg = resolved(text, "x");
        assert_eq!(cfg.user.as_deref(), Some("early"));
        assert_eq!(cfg.host_name.as_deref(), Some("x.lab.example"));
    }

    #[test]
    fn quoted_values_and_tokens() {
        let text = "Host q\n  IdentityFile \"~/my keys/%h_%r\"\n  User bob\n  HostName real\n";
        let cfg = resolved(text, "q");
        assert_eq!(
            cfg.identity_files,
            vec![PathBuf::from("/home/tester/my keys/real_bob")]
        );
        assert!(error("Host q\n  User \"open\n", "q").contains("unterminated quote"));
    }

    #[test]
    fn match_is_a_clear_error() {
        let message = error("Host a\n  User x\nMatch host a\n  User y\n", "a");
        assert!(message.contains("config:3"), "{message}");
        assert!(
            message.contains("`Match` blocks are not supported"),
            "{message}"
        );
    }

    #[test]
    fn proxies_are_refused_only_for_hosts_they_apply_to() {
        let text = "Host jumped\n  ProxyJump bastion\nHost direct\n  ProxyCommand none\n";
        assert!(error(text, "jumped").contains("`ProxyJump` applies to `jumped`"));
        assert_eq!(resolved(text, "direct"), HostConfig::default());
    }

    #[test]
    fn bad_port_is_an_error() {
        assert!(error("Port 99999\n", "a").contains("bad port `99999`"));
        assert!(error("Host a\n  Port\n", "a").contains("`Port` needs a value"));
    }

    #[test]
    fn include_with_glob_relative_to_dot_ssh() {
        let home = tempfile::tempdir().expect("temp dir");
        let dir = home.path().join(".ssh/conf.d");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("10-lab.conf"), "Host lab\n  HostName 10.1.1.1\n").expect("write");
        std::fs::write(dir.join("20-all.conf"), "User fromglob\n").expect("write");
        std::fs::write(dir.join("ignored.txt"), "User wrong\n").expect("write");
        let main = home.path().join(".ssh/config");
        std::fs::write(
            &main,
            "Include conf.d/*.conf\nHost other\n  Include conf.d/10-lab.conf\nHost lab\n  Port 2200\n",
        )
        .expect("write");
        let cfg = resolve(&main, "lab", home.path()).expect("resolves");
        assert_eq!(cfg.host_name.as_deref(), Some("10.1.1.1"));
        assert_eq!(
            cfg.port,
            Some(2200),
            "the block after the Include still applies"
        );
        // 20-all.conf is read after a `Host lab` line of 10-lab.conf, so it applies to lab only.
        assert_eq!(cfg.user.as_deref(), Some("fromglob"));
        let other = resolve(&main, "other", home.path()).expect("resolves");
        assert_eq!(other.host_name, None);
        assert_eq!(
            other.user, None,
            "20-all.conf follows `Host lab`, so it is not for other"
        );
    }

    #[test]
    fn include_inside_an_inactive_block_never_matches() {
        let home = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(home.path().join(".ssh")).expect("mkdir");
        std::fs::write(home.path().join(".ssh/x.conf"), "Host lab\n  User never\n").expect("write");
        let main = home.path().join(".ssh/config");
        std::fs::write(&main, "Host other\n  Include x.conf\nHost *\n  User last\n")
            .expect("write");
        let cfg = resolve(&main, "lab", home.path()).expect("resolves");
        assert_eq!(cfg.user.as_deref(), Some("last"));
    }

    #[test]
    fn missing_file_names_the_path() {
        let message = resolve(Path::new("/nonexistent/cfg"), "a", Path::new(HOME))
            .expect_err("missing file")
            .to_string();
        assert!(
            message.starts_with("/nonexistent/cfg:0: cannot read"),
            "{message}"
        );
    }
}
