//! Recipe parameters: the facts of a machine that a shared recipe cannot know (the isolated
//! CPU to pin to, the `nohz_full=` list, the numbers a published result expects there).
//!
//! A recipe declares each one under `[params]` with a default and what it means, and writes
//! `{params.NAME}` where the fact belongs. A tester binds values without editing the recipe
//! (whose SHA-256 the journal records): `[targets.NAME.params]` in the inventory, then
//! `--param NAME=VALUE`, the most specific winning. The recipe is read with the bound values
//! (`recipe::Loader`, after a check with its defaults), so every use is validated for its
//! place exactly as a literal would be, at the recipe's line and column.
//!
//! The effective values are journaled when a campaign starts
//! ([`crate::results::journal::Event::Params`]); resume and report read the recipe with
//! that record, never with the inventory or command line of the moment.
//!
//! This module owns the declaration, the `{params.NAME}` syntax and the binding; it does not
//! know the places a value is used (`recipe::load` does).

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};
use thiserror::Error;

use crate::{
    origin::Origin,
    recipe::{
        diagnostic::did_you_mean,
        ident::{ParamName, ParamValue},
    },
};

/// The prefix that marks a parameter placeholder: `{params.NAME}`.
pub const PREFIX: &str = "params.";

/// `[params] NAME = { default = "…", means = "…" }`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// The value when neither the inventory nor the command line binds one: the recipe must
    /// run (and `aba check` must judge it) on a machine nobody described.
    #[schemars(with = "ParamValue")]
    pub default: toml::Spanned<ParamValue>,
    /// What the fact is, for the tester who binds it (shown by `aba check` and the report).
    pub means: String,
}

/// A number in `[[expect]]` that may be a parameter: `12.5` or `"{params.NAME}"`.
///
/// A visitor, not `untagged`, so a wrong type keeps its line and column (STYLE.md §5).
#[derive(Clone, Debug, PartialEq)]
pub enum NumberOrParam {
    /// A number as written.
    Number(f64),
    /// Text that must render to a number: `"{params.NAME}"`.
    Text(String),
}

impl<'de> Deserialize<'de> for NumberOrParam {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = NumberOrParam;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, or a string naming a parameter such as \"{params.name}\"")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v))
            }
            #[expect(
                clippy::cast_precision_loss,
                reason = "a percentage written as an integer"
            )]
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v as f64))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Text(v.to_owned()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl schemars::JsonSchema for NumberOrParam {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NumberOrParam".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["number", "string"],
            "description": "A number, or \"{params.NAME}\" naming a [params] entry."
        })
    }
}

/// A declared parameter with the value the campaign uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: ParamName,
    /// `means`.
    pub means: String,
    /// The recipe's default.
    pub default: ParamValue,
    /// The value in effect.
    pub value: ParamValue,
    /// Where `value` came from ([`Origin::Recipe`] for the default).
    pub from: Origin,
}

impl Param {
    /// `name = value (bound by …)` or `name = value (default)`: one line of `aba check` and
    /// the report.
    #[must_use]
    pub fn line(&self) -> String {
        format!("{} = {} ({})", self.name, self.value, self.note())
    }

    /// Where the value came from: `the recipe's default`, or `bound by …; the recipe's
    /// default is …`.
    #[must_use]
    pub fn note(&self) -> String {
        match &self.from {
            Origin::Recipe => "the recipe's default".to_owned(),
            from => format!("bound by {from}; the recipe's default is {}", self.default),
        }
    }
}

/// The journal's record of one parameter: its value and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundParam {
    /// Its name.
    pub name: ParamName,
    /// The value the campaign used.
    pub value: ParamValue,
    /// Where it came from.
    pub from: Origin,
}

impl From<&Param> for BoundParam {
    fn from(p: &Param) -> Self {
        BoundParam {
            name: p.name.clone(),
            value: p.value.clone(),
            from: p.from.clone(),
        }
    }
}

/// One value for a parameter, from the inventory or a `--param` option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamBinding {
    /// The name as written (checked against the recipe by [`bind`]).
    pub name: String,
    /// The value.
    pub value: ParamValue,
    /// Where it was written.
    pub origin: Origin,
}

impl ParamBinding {
    /// Reads `--param NAME=VALUE`; the value follows [`ParamValue`]'s rules.
    pub fn from_option(text: &str) -> Result<ParamBinding, String> {
        let (name, value) = text
            .split_once('=')
            .ok_or_else(|| format!("`{}` is not NAME=VALUE", crate::text::quoted(text)))?;
        Ok(ParamBinding {
            name: name.to_owned(),
            value: ParamValue::new(value)?,
            origin: Origin::CommandLine {
                option: format!("--param {text}"),
            },
        })
    }
}

/// A binding that names no parameter of the recipe.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}: the recipe has no parameter `{name}` to bind ({}){}", origin.place(), known_list(.known), suggestion.as_ref().map(|s| format!("\n(hint: did you mean `{s}`?)")).unwrap_or_default())]
pub struct ParamBindingError {
    /// The name as written.
    pub name: String,
    /// Where it was written.
    pub origin: Origin,
    /// The recipe's parameters.
    pub known: Vec<String>,
    /// A close known name.
    pub suggestion: Option<String>,
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "it declares no [params]".to_owned()
    } else {
        format!("its parameters: {}", known.join(", "))
    }
}

/// Applies `bindings` (in increasing precedence: inventory first, then command line) over the
/// declared `params`' defaults, and returns every parameter's value with its origin.
pub fn bind(
    params: &[Param],
    bindings: &[ParamBinding],
) -> Result<Vec<BoundParam>, ParamBindingError> {
    let mut bound: IndexMap<&str, BoundParam> = params
        .iter()
        .map(|p| {
            let mut b = BoundParam::from(p);
            // Binding starts from the recipe's defaults, not from values bound earlier.
            b.value = p.default.clone();
            b.from = Origin::Recipe;
            (p.name.as_str(), b)
        })
        .collect();
    for binding in bindings {
        let Some(b) = bound.get_mut(binding.name.as_str()) else {
            let known: Vec<String> = params.iter().map(|p| p.name.to_string()).collect();
            return Err(ParamBindingError {
                suggestion: did_you_mean(&binding.name, known.iter().map(String::as_str))
                    .map(str::to_owned),
                name: binding.name.clone(),
                origin: binding.origin.clone(),
                known,
            });
        };
        b.value = binding.value.clone();
        b.from = binding.origin.clone();
    }
    Ok(bound.into_values().collect())
}

/// Replaces each `{params.NAME}` in `template` with `lookup(NAME)`, quoted by `quote`; leaves
/// every other brace as written, `{{`/`}}` pairs included (they are the matrix syntax's
/// literal braces, for `crate::placeholders` to undo later), as is `${…}`.
///
/// Returns the first name `lookup` does not know as the error.
pub fn render(
    template: &str,
    lookup: &mut dyn FnMut(&str) -> Option<String>,
    quote: fn(&str) -> String,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..2]);
            rest = &tail[2..];
            continue;
        }
        let after_dollar = out.ends_with('$');
        if let Some(inner) = tail
            .strip_prefix('{')
            .and_then(|t| t.split_once('}'))
            .map(|(inner, _)| inner)
            .and_then(|inner| inner.strip_prefix(PREFIX))
            .filter(|name| !after_dollar && !name.is_empty())
            .filter(|name| name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            match lookup(inner) {
                Some(value) => out.push_str(&quote(&value)),
                None => return Err(inner.to_owned()),
            }
            rest = &tail[1 + PREFIX.len() + inner.len() + 1..];
            continue;
        }
        out.push_str(&tail[..1]);
        rest = &tail[1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Leaves a value as it is: for a kernel command line, a CPU list or a number, where the
/// value's own rules ([`ParamValue`]) and the place's keep it one word.
#[must_use]
pub fn verbatim(value: &str) -> String {
    value.to_owned()
}

#[cfg(test)]
mod tests {
    use super::{BoundParam, NumberOrParam, Param, ParamBinding, bind, render, verbatim};
    use crate::{
        origin::Origin,
        recipe::ident::{ParamName, ParamValue},
        target::quote::sh_quote,
    };

    fn param(name: &str, default: &str) -> Param {
        Param {
            name: ParamName::new(name).unwrap(),
            means: "m".to_owned(),
            default: ParamValue::new(default).unwrap(),
            value: ParamValue::new(default).unwrap(),
            from: Origin::Recipe,
        }
    }

    fn lookup(name: &str) -> Option<String> {
        (name == "cpu").then(|| "5".to_owned())
    }

    #[test]
    fn only_params_placeholders_render() {
        let r = |t: &str| render(t, &mut lookup, verbatim);
        assert_eq!(r("-c {params.cpu} -d 10").as_deref(), Ok("-c 5 -d 10"));
        assert_eq!(r("nohz_full={params.cpu}").as_deref(), Ok("nohz_full=5"));
        // Matrix placeholders, literal braces, shell text and `${…}` stay for later.
        assert_eq!(
            r("{level} {{params.cpu}}").as_deref(),
            Ok("{level} {{params.cpu}}")
        );
        assert_eq!(
            r("awk '{print $1}' ${params.cpu}").as_deref(),
            Ok("awk '{print $1}' ${params.cpu}")
        );
        assert_eq!(
            r("{params.}{params.a-b}").as_deref(),
            Ok("{params.}{params.a-b}")
        );
        assert_eq!(r("x {params.cpus}").unwrap_err(), "cpus");
        assert_eq!(
            render(
                "echo {params.cpu}",
                &mut |_| Some("a=b".to_owned()),
                sh_quote
            )
            .as_deref(),
            Ok("echo 'a=b'")
        );
    }

    #[test]
    fn the_command_line_wins_over_the_inventory_over_the_default() {
        let params = [param("cpu", "3"), param("tick_limit", "80")];
        let inventory = ParamBinding {
            name: "cpu".to_owned(),
            value: ParamValue::new("5").unwrap(),
            origin: Origin::Inventory {
                at: "targets.toml:7:1".to_owned(),
            },
        };
        let bound = bind(&params, std::slice::from_ref(&inventory)).unwrap();
        assert_eq!(bound[0].value.as_str(), "5");
        assert_eq!(bound[0].from, inventory.origin);
        assert_eq!(bound[1].from, Origin::Recipe);
        let cli = ParamBinding::from_option("cpu=7").unwrap();
        let bound = bind(&params, &[inventory, cli]).unwrap();
        assert_eq!(bound[0].value.as_str(), "7");
        assert!(matches!(bound[0].from, Origin::CommandLine { .. }));
        let none = bind(&params, &[]).unwrap();
        assert_eq!(none[0].value.as_str(), "3");
    }

    #[test]
    fn an_unknown_name_is_placed_and_suggested() {
        let params = [param("isolated_cpu", "3")];
        let err = bind(
            &params,
            &[ParamBinding::from_option("isolated_cpus=5").unwrap()],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--param isolated_cpus=5: the recipe has no parameter `isolated_cpus` to bind \
             (its parameters: isolated_cpu)\n(hint: did you mean `isolated_cpu`?)"
        );
        let err = bind(&[], &[ParamBinding::from_option("x=1").unwrap()]).unwrap_err();
        assert!(err.to_string().contains("it declares no [params]"), "{err}");
    }

    #[test]
    fn option_values_follow_the_value_rules() {
        assert!(ParamBinding::from_option("cpu").is_err());
        let err = ParamBinding::from_option("cpu=5;reboot").unwrap_err();
        assert!(err.contains("invalid parameter value"), "{err}");
        assert!(ParamBinding::from_option("cpu=5 6").is_err());
        assert!(ParamBinding::from_option("iso=nohz,domain,2-3").is_ok());
    }

    #[test]
    fn the_record_round_trips() {
        let b = BoundParam {
            name: ParamName::new("cpu").unwrap(),
            value: ParamValue::new("5").unwrap(),
            from: Origin::Inventory {
                at: "t.toml:1:1".to_owned(),
            },
        };
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<BoundParam>(&json).unwrap(), b);
    }

    #[test]
    fn numbers_or_text() {
        #[derive(serde::Deserialize)]
        struct T {
            a: NumberOrParam,
            b: NumberOrParam,
            c: NumberOrParam,
        }
        let t: T = toml::from_str("a = 1\nb = 2.5\nc = \"{params.x}\"").unwrap();
        assert_eq!(t.a, NumberOrParam::Number(1.0));
        assert_eq!(t.b, NumberOrParam::Number(2.5));
        assert_eq!(t.c, NumberOrParam::Text("{params.x}".to_owned()));
        let err = toml::from_str::<T>("a = true\nb = 1\nc = 1").err().unwrap();
        assert!(err.to_string().contains("line 1, column 5"), "{err}");
    }
}
