//! A place of a labgrid coordinator as the lab scheduler of a target
//! (`[targets.NAME.labgrid]`, docs/targets.md "A lab run by labgrid").
//!
//! A team whose boards are booked through labgrid queues for a place with a reservation
//! (`labgrid-client reserve`), waits until the coordinator allocates it, then acquires the
//! place with the reservation's token. Releasing the place is not enough to hand it on: an
//! allocated reservation keeps the place from the next in the queue until it expires (about a
//! minute), so aba cancels its reservation too. This module knows the client's commands and
//! reads its answers; [`crate::campaign::reservation`] runs them at the campaign's start and
//! end. Every command goes through `labgrid-client`, the coordinator's own client, so aba
//! speaks whatever protocol the lab's labgrid release speaks.

pub mod console;
pub mod resources;

use serde::Deserialize;
use toml::Spanned;

use crate::target::host::{HostCommandError, expand};

/// `[targets.NAME.labgrid]` in the inventory.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LabgridTable {
    /// The coordinator, `HOST:PORT` (labgrid's default port is 20408).
    #[schemars(with = "String")]
    pub coordinator: Spanned<String>,
    /// The place's name on the coordinator.
    #[schemars(with = "String")]
    pub place: Spanned<String>,
    /// The reservation's priority against the lab's other reservations (default 0; higher
    /// goes first).
    #[serde(default)]
    pub priority: i32,
    /// The client program, a path (relative to the inventory) or a name on `PATH`
    /// (default `labgrid-client`).
    #[serde(default)]
    pub client: Option<String>,
    /// Power-cycle a machine that does not come back through the place's power resource
    /// (`labgrid-client power cycle`) instead of the inventory's `power_cycle` (default false).
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub power: Option<Spanned<bool>>,
    /// Log the console from the place's `NetworkSerialPort` into the results directory
    /// (`console.log`) while the campaign holds the place, instead of the inventory's
    /// `console_log` (default false).
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub console: Option<Spanned<bool>>,
}

impl Place {
    /// The place a table names, or why not: the span and the message. `rel` resolves a
    /// client path relative to the inventory.
    pub fn from_table(
        table: LabgridTable,
        rel: impl Fn(&str) -> std::path::PathBuf,
    ) -> Result<Place, (std::ops::Range<usize>, String)> {
        for (field, value) in [("coordinator", &table.coordinator), ("place", &table.place)] {
            if !plain_word(value.get_ref()) {
                return Err((
                    value.span(),
                    format!(
                        "invalid labgrid `{field}` `{}`: letters, digits and `._:-[]`, at most 253 characters",
                        crate::text::quoted(value.get_ref())
                    ),
                ));
            }
        }
        let client = match table.client {
            Some(c) if c.contains('/') => rel(&c).to_string_lossy().into_owned(),
            Some(c) => c,
            None => DEFAULT_CLIENT.to_owned(),
        };
        let on = |flag: &Option<Spanned<bool>>| flag.as_ref().is_some_and(|f| *f.get_ref());
        Ok(Place {
            coordinator: table.coordinator.into_inner(),
            place: table.place.into_inner(),
            priority: table.priority,
            client,
            power: on(&table.power),
            console: on(&table.console),
        })
    }
}

/// The client aba runs unless the inventory names another.
pub const DEFAULT_CLIENT: &str = "labgrid-client";

/// `[targets.NAME.labgrid]`: which coordinator, which place, at which priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The coordinator's `HOST:PORT`, as `labgrid-client -x` takes it.
    pub coordinator: String,
    /// The place's name on the coordinator.
    pub place: String,
    /// The reservation's priority against other reservations (labgrid's `--prio`, default 0).
    pub priority: i32,
    /// The client program (a path or a name on `PATH`).
    pub client: String,
    /// Whether a hung machine is power-cycled through the place's power resource.
    pub power: bool,
    /// Whether the console comes from the place's `NetworkSerialPort`.
    pub console: bool,
}

/// What `labgrid-client show` says of a place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// `HOST/USER` holding it, `None` when nobody does.
    pub acquired: Option<String>,
    /// The token of the reservation allocated to it, if any.
    pub reservation: Option<String>,
}

impl Place {
    fn command(&self, tail: &str, token: Option<&str>) -> Result<String, HostCommandError> {
        let priority = self.priority.to_string();
        let vars = [
            ("client", self.client.as_str()),
            ("coordinator", self.coordinator.as_str()),
            ("place", self.place.as_str()),
            ("priority", priority.as_str()),
            ("token", token.unwrap_or("")),
        ];
        expand(&format!("{{client}} -x {{coordinator}} {tail}"), &vars)
    }

    /// Shows the place: who holds it and which reservation is allocated to it.
    pub fn show(&self) -> Result<String, HostCommandError> {
        self.command("-p {place} show", None)
    }

    /// Queues a reservation for the place by its name, printing `export LG_TOKEN=…`.
    pub fn reserve(&self) -> Result<String, HostCommandError> {
        self.command("reserve --shell --prio {priority} name={place}", None)
    }

    /// Waits until the coordinator allocates the reservation `token` (it refreshes the
    /// reservation while it waits, so a long queue does not expire it).
    pub fn wait(&self, token: &str) -> Result<String, HostCommandError> {
        self.command("wait {token}", Some(token))
    }

    /// Acquires the place allocated to the reservation `token`.
    pub fn acquire(&self, token: &str) -> Result<String, HostCommandError> {
        // labgrid's `-p +TOKEN` names the place a reservation holds (a quoted token, `+'AB12'`,
        // is the same word to the shell).
        self.command("-p +{token} acquire", Some(token))
    }

    /// Releases the place.
    pub fn release(&self) -> Result<String, HostCommandError> {
        self.command("-p {place} release", None)
    }

    /// Cancels the reservation `token`, so the next in the queue gets the place at once.
    pub fn cancel(&self, token: &str) -> Result<String, HostCommandError> {
        self.command("cancel-reservation {token}", Some(token))
    }

    /// Cuts and restores the power of the acquired place through its power resource
    /// (labgrid's power driver waits its delay, 2 s by default, between off and on). The
    /// braces of the expanded command are escaped: it runs as the target's `power_cycle`,
    /// whose placeholders are expanded once more.
    pub fn power_cycle(&self) -> Result<String, HostCommandError> {
        Ok(self
            .command("-p {place} power cycle", None)?
            .replace('{', "{{")
            .replace('}', "}}"))
    }
}

/// The token of `reserve --shell`'s answer (`export LG_TOKEN=ABC123`); `None` when the
/// answer has none, or one that is not a plain token.
#[must_use]
pub fn token_of(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let token = line.trim().strip_prefix("export LG_TOKEN=")?;
        let token = token.trim_matches(|c| c == '\'' || c == '"');
        (!token.is_empty() && token.len() <= 64 && token.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| token.to_owned())
    })
}

/// The place a `reservation` record names: the client's `acquired place P` and `released
/// place P`, or aba's `place P is still held …`; `None` unless it is a plain word (the record
/// may come from a forged journal).
#[must_use]
pub fn place_of(output: &str) -> Option<String> {
    output.lines().find_map(|l| {
        let rest = l
            .strip_prefix("acquired place ")
            .or_else(|| l.strip_prefix("released place "))
            .or_else(|| l.strip_prefix("place "))?;
        let word = rest.split_whitespace().next()?;
        plain_word(word).then(|| word.to_owned())
    })
}

/// Reads `labgrid-client show`'s answer.
#[must_use]
pub fn shown(output: &str) -> Shown {
    let field = |name: &str| {
        output.lines().find_map(|line| {
            let value = line.trim().strip_prefix(name)?.strip_prefix(':')?.trim();
            (!value.is_empty() && value != "None").then(|| value.to_owned())
        })
    };
    Shown {
        acquired: field("acquired"),
        reservation: field("reservation"),
    }
}

/// Whether `text` is a place name or coordinator address aba passes on: letters, digits and
/// `._:-[]` (an IPv6 address in brackets), at most 253 characters.
#[must_use]
pub fn plain_word(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-[]".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::{Place, Shown, plain_word, shown, token_of};

    fn place() -> Place {
        Place {
            coordinator: "127.0.0.1:20408".to_owned(),
            place: "board-1".to_owned(),
            priority: 2,
            client: "/opt/lg venv/bin/labgrid-client".to_owned(),
            power: true,
            console: false,
        }
    }

    #[test]
    fn commands_quote_every_value_and_name_the_reservation_by_token() {
        let p = place();
        assert_eq!(
            p.reserve().expect("expands"),
            "'/opt/lg venv/bin/labgrid-client' -x 127.0.0.1:20408 reserve --shell --prio 2 name=board-1"
        );
        assert_eq!(
            p.acquire("AB12").expect("expands"),
            "'/opt/lg venv/bin/labgrid-client' -x 127.0.0.1:20408 -p +AB12 acquire"
        );
        assert_eq!(
            p.cancel("AB12").expect("expands"),
            "'/opt/lg venv/bin/labgrid-client' -x 127.0.0.1:20408 cancel-reservation AB12"
        );
    }

    #[test]
    fn the_clients_answers_are_read_and_odd_ones_refused() {
        assert_eq!(
            token_of("export LG_TOKEN=VPWQZPUK38\n").as_deref(),
            Some("VPWQZPUK38")
        );
        assert_eq!(token_of("export LG_TOKEN=$(rm -rf /)"), None);
        assert_eq!(token_of("nothing"), None);
        let text = "Place 'lab1':\n  tags: board=vm\n  acquired: vm/root\n  acquired resources:\n  reservation: JNQPKDHSFC\n";
        assert_eq!(
            shown(text),
            Shown {
                acquired: Some("vm/root".to_owned()),
                reservation: Some("JNQPKDHSFC".to_owned()),
            }
        );
        assert_eq!(shown("  acquired: None\n"), Shown::default());
        assert!(plain_word("[::1]:20408") && plain_word("lab-1.a"));
        assert!(!plain_word("a b") && !plain_word("x;y") && !plain_word(""));
    }
}
