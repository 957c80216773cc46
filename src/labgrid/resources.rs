//! The resources of an acquired place, as `labgrid-client -p PLACE show` prints them.
//!
//! The client has no machine-readable form of a place's resources (`export` gives only what
//! a local environment's drivers export, and then waits for Ctrl-C), so aba reads `show`:
//! a header `Acquired resource 'NAME' (EXPORTER/GROUP/CLASS/NAME):` followed by the
//! resource's attributes as Python's `pprint` writes a dict. [`literal`] reads that small
//! subset of Python literals (dicts, lists, tuples, strings, numbers, `True`, `False`,
//! `None`), bounded in depth and size: the answer comes from a coordinator aba does not run.

use std::collections::BTreeMap;

/// Most characters of a `show` answer aba reads.
const MAX_ANSWER: usize = 256 * 1024;

/// Deepest nesting of a resource's attributes.
const MAX_DEPTH: usize = 16;

/// A Python literal of the subset `pprint` writes for a resource.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list or a tuple.
    List(Vec<Value>),
    /// A dict with string keys.
    Dict(BTreeMap<String, Value>),
}

impl Value {
    /// The value under `key` of a dict.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(d) => d.get(key),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// One acquired resource: its class (`NetworkSerialPort`), its path
/// (`exporter/group/class/name`) and its attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    /// The class, such as `NetworkSerialPort`.
    pub class: String,
    /// `EXPORTER/GROUP/CLASS/NAME`.
    pub path: String,
    /// The attributes (`params`, `avail`, `acquired`, …).
    pub attributes: Value,
}

/// A serial console served on the network (labgrid's `NetworkSerialPort`, usually ser2net).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SerialPort {
    /// `EXPORTER/GROUP/CLASS/NAME`, for messages and the journal.
    pub path: String,
    /// Host to connect to.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// `raw` or `rfc2217` (telnet with the serial-port option; aba only listens, so it reads
    /// the data and drops the telnet commands).
    pub protocol: String,
}

/// Why a place's console cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConsoleResourceError {
    /// No `NetworkSerialPort` among the acquired resources.
    #[error(
        "place {place} has no NetworkSerialPort among its acquired resources (`labgrid-client -p {place} show`): add the console to the place, or set `console = false`"
    )]
    None {
        /// The place.
        place: String,
    },
    /// More than one, and aba would have to guess.
    #[error("place {place} has {count} NetworkSerialPorts ({paths}): aba reads one console")]
    Several {
        /// The place.
        place: String,
        /// How many.
        count: usize,
        /// Their paths.
        paths: String,
    },
    /// A port whose attributes aba cannot use.
    #[error("place {place}: the console {path} {why}")]
    Unusable {
        /// The place.
        place: String,
        /// The resource.
        path: String,
        /// What is wrong.
        why: String,
    },
}

/// The acquired resources `show`'s answer lists; blocks aba cannot read are left out.
#[must_use]
pub fn acquired(answer: &str) -> Vec<Resource> {
    let answer = match answer.char_indices().nth(MAX_ANSWER) {
        Some((end, _)) => &answer[..end],
        None => answer,
    };
    let mut out = Vec::new();
    let mut rest = answer;
    while let Some(at) = rest.find("Acquired resource '") {
        rest = &rest[at..];
        let header_end = rest.find('\n').unwrap_or(rest.len());
        let header = &rest[..header_end];
        let body = &rest[header_end..];
        rest = body;
        let Some(path) = header
            .rsplit_once('(')
            .and_then(|(_, p)| p.strip_suffix("):"))
        else {
            continue;
        };
        let Some(class) = path.split('/').nth(2) else {
            continue;
        };
        let mut parser = Parser {
            text: body.as_bytes(),
            at: 0,
        };
        if let Ok(attributes) = parser.value(0) {
            out.push(Resource {
                class: class.to_owned(),
                path: path.to_owned(),
                attributes,
            });
            rest = &body[parser.at..];
        }
    }
    out
}

/// The one `NetworkSerialPort` of `place`'s acquired resources in `show`'s `answer`.
///
/// # Errors
/// None, several, or one without a usable host and port, or one that needs labgrid's SSH
/// proxy (aba connects directly).
pub fn serial_port(place: &str, answer: &str) -> Result<SerialPort, ConsoleResourceError> {
    let ports: Vec<Resource> = acquired(answer)
        .into_iter()
        .filter(|r| r.class == "NetworkSerialPort")
        .collect();
    let port = match ports.as_slice() {
        [] => {
            return Err(ConsoleResourceError::None {
                place: place.to_owned(),
            });
        }
        [one] => one,
        many => {
            return Err(ConsoleResourceError::Several {
                place: place.to_owned(),
                count: many.len(),
                paths: many
                    .iter()
                    .map(|r| crate::text::quoted(&r.path))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    let unusable = |why: &str| ConsoleResourceError::Unusable {
        place: place.to_owned(),
        path: crate::text::quoted(&port.path),
        why: why.to_owned(),
    };
    let params = port
        .attributes
        .get("params")
        .ok_or_else(|| unusable("has no params"))?;
    let host = params
        .get("host")
        .and_then(Value::as_str)
        .filter(|h| super::plain_word(h))
        .ok_or_else(|| unusable("has no plain host name or address"))?;
    let number = params
        .get("port")
        .and_then(Value::as_int)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| unusable("has no TCP port"))?;
    let protocol = params
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or("rfc2217");
    if !matches!(protocol, "raw" | "rfc2217") {
        return Err(unusable(&format!(
            "speaks `{}`, not raw or rfc2217",
            crate::text::quoted(protocol)
        )));
    }
    let proxied = params
        .get("extra")
        .and_then(|e| e.get("proxy_required"))
        .is_some_and(|v| *v == Value::Bool(true));
    if proxied {
        return Err(unusable(
            "is reachable only through labgrid's SSH proxy (an isolated exporter); aba connects to it directly",
        ));
    }
    Ok(SerialPort {
        path: port.path.clone(),
        host: host.to_owned(),
        port: number,
        protocol: protocol.to_owned(),
    })
}

/// Reads one Python literal.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_space();
        if self.text.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ()> {
        if depth > MAX_DEPTH {
            return Err(());
        }
        self.skip_space();
        match *self.text.get(self.at).ok_or(())? {
            b'{' => {
                self.at += 1;
                let mut dict = BTreeMap::new();
                loop {
                    if self.eat(b'}') {
                        return Ok(Value::Dict(dict));
                    }
                    let Value::Str(key) = self.value(depth + 1)? else {
                        return Err(());
                    };
                    if !self.eat(b':') {
                        return Err(());
                    }
                    let value = self.value(depth + 1)?;
                    dict.insert(key, value);
                    if self.eat(b'}') {
                        return Ok(Value::Dict(dict));
                    }
                    if !self.eat(b',') {
                        return Err(());
                    }
                }
            }
            open @ (b'[' | b'(') => {
                self.at += 1;
                let close = if open == b'[' { b']' } else { b')' };
                let mut items = Vec::new();
                loop {
                    if self.eat(close) {
                        return Ok(Value::List(items));
                    }
                    items.push(self.value(depth + 1)?);
                    if self.eat(close) {
                        return Ok(Value::List(items));
                    }
                    if !self.eat(b',') {
                        return Err(());
                    }
                }
            }
            quote @ (b'\'' | b'"') => self.string(quote),
            _ => self.word(),
        }
    }

    /// A string in `quote`s with Python's common escapes; pprint splits a long string into
    /// adjacent literals inside parentheses, which arrive here as a tuple of strings.
    fn string(&mut self, quote: u8) -> Result<Value, ()> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let c = *self.text.get(self.at).ok_or(())?;
            self.at += 1;
            match c {
                b'\\' => {
                    let e = *self.text.get(self.at).ok_or(())?;
                    self.at += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        other => other,
                    });
                }
                b'\n' => return Err(()),
                c if c == quote => break,
                c => out.push(c),
            }
        }
        String::from_utf8(out).map(Value::Str).map_err(|_| ())
    }

    fn word(&mut self) -> Result<Value, ()> {
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"+-._".contains(b))
        {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.text[start..self.at]).map_err(|_| ())?;
        match word {
            "None" => Ok(Value::None),
            "True" => Ok(Value::Bool(true)),
            "False" => Ok(Value::Bool(false)),
            _ => word
                .parse::<i64>()
                .map(Value::Int)
                .or_else(|_| word.parse::<f64>().map(Value::Float))
                .map_err(|_| ()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConsoleResourceError, SerialPort, Value, acquired, serial_port};

    /// What labgrid 26.0.1's client printed for a place of the lab's exporter.
    const SHOWN: &str = "Place 'p1':
  matches:
    exp1/lab1/*
  acquired: vm/root
  acquired resources:
    exp1/lab1/NetworkPowerPort/NetworkPowerPort
    exp1/lab1/NetworkSerialPort/NetworkSerialPort
  created: 2026-12-06 12:10:58.997762
Acquired resource 'NetworkPowerPort' (exp1/lab1/NetworkPowerPort/NetworkPowerPort):
  {'acquired': 'p1',
   'avail': True,
   'cls': 'NetworkPowerPort',
   'params': {'extra': {'proxy': 'localhost', 'proxy_required': False},
              'host': 'http://127.0.0.1:15556/power/{index}/{value}',
              'index': 0,
              'model': 'simplerest'}}
Acquired resource 'NetworkSerialPort' (exp1/lab1/NetworkSerialPort/NetworkSerialPort):
  {'acquired': 'p1',
   'avail': True,
   'cls': 'NetworkSerialPort',
   'params': {'extra': {'proxy': 'localhost', 'proxy_required': False},
              'host': '127.0.0.1',
              'port': 15555,
              'protocol': 'raw',
              'speed': 115200}}
";

    #[test]
    fn the_clients_show_is_read_resource_by_resource() {
        let resources = acquired(SHOWN);
        assert_eq!(resources.len(), 2);
        assert_eq!(resources[0].class, "NetworkPowerPort");
        assert_eq!(
            resources[0]
                .attributes
                .get("params")
                .and_then(|p| p.get("index")),
            Some(&Value::Int(0))
        );
        assert_eq!(
            serial_port("p1", SHOWN),
            Ok(SerialPort {
                path: "exp1/lab1/NetworkSerialPort/NetworkSerialPort".to_owned(),
                host: "127.0.0.1".to_owned(),
                port: 15555,
                protocol: "raw".to_owned(),
            })
        );
    }

    #[test]
    fn a_place_without_one_usable_console_is_refused_with_the_reason() {
        let power_only = SHOWN
            .split("Acquired resource 'NetworkSerialPort'")
            .next()
            .expect("head");
        assert!(matches!(
            serial_port("p1", power_only),
            Err(ConsoleResourceError::None { .. })
        ));
        let proxied = SHOWN.replace(
            "'proxy_required': False},\n              'host': '127",
            "'proxy_required': True},\n              'host': '127",
        );
        let e = serial_port("p1", &proxied).expect_err("proxied");
        assert!(e.to_string().contains("SSH proxy"), "{e}");
        let odd_host = SHOWN.replace("'host': '127.0.0.1'", "'host': '$(reboot)'");
        assert!(serial_port("p1", &odd_host).is_err());
        let telnet = SHOWN.replace("'raw'", "'telnet'");
        assert!(serial_port("p1", &telnet).is_err());
        // Forged answers: unbalanced, deep, huge: no panic, nothing read.
        for forged in [
            "Acquired resource 'x' (a/b/NetworkSerialPort/x):\n  {'params': {",
            &format!(
                "Acquired resource 'x' (a/b/NetworkSerialPort/x):\n {}",
                "[".repeat(10_000)
            ),
            &"Acquired resource '".repeat(100_000),
        ] {
            assert!(serial_port("p1", forged).is_err());
        }
    }
}
