//! Checker plumbing every section uses: kernel labels, percentages and limit overrides,
//! regexes, free text.

use regex::Regex;
use toml::Spanned;

use crate::recipe::{
    diagnostic::ticked,
    ident::{KernelLabel, check_cmdline_param},
    limits, params,
    resolved::LimitOverrides,
};

use super::Checker;

/// Help for a regex that does not compile.
const REGEX_HELP: &str = "patterns use Rust regex syntax (no look-around, no backreferences); write them as TOML literal strings ('…') so backslashes stay as written";

impl Checker<'_> {
    pub(super) fn unknown_kernel(
        &mut self,
        label: &Spanned<KernelLabel>,
        known: &[&KernelLabel],
        role: &str,
    ) {
        let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
        let list = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let diag = self.error(
            label.span(),
            format!(
                "{role} names kernel `{}`, which is not in [kernels]",
                label.get_ref()
            ),
        );
        diag.suggest(label.get_ref().as_str(), names.iter().copied(), ticked);
        diag.help.push(format!("known kernels: {list}"));
    }

    /// Validates a list of kernel labels, reporting each invalid one at its own position.
    pub(super) fn labels(&mut self, list: &[Spanned<String>]) -> Vec<Spanned<KernelLabel>> {
        list.iter()
            .filter_map(|raw| match KernelLabel::new(raw.get_ref()) {
                Ok(label) => Some(Spanned::new(raw.span(), label)),
                Err(why) => {
                    self.error(raw.span(), why);
                    None
                }
            })
            .collect()
    }

    pub(super) fn cmdline(&mut self, text: &Spanned<String>) -> Vec<String> {
        let rendered = self.expand(text, params::verbatim).unwrap_or_default();
        let tokens: Vec<String> = rendered.split_whitespace().map(str::to_owned).collect();
        for token in &tokens {
            if let Err(why) = check_cmdline_param(token) {
                let help = self.param_help(text.get_ref());
                self.error(text.span(), why).help.extend(help);
            }
        }
        tokens
    }

    pub(super) fn percent(&mut self, value: Option<&Spanned<f64>>, default: f64, key: &str) -> f64 {
        match value {
            None => default,
            Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => *v.get_ref(),
            Some(v) => {
                self.error(v.span(), format!("`{key}` must be a finite number ≥ 0"));
                default
            }
        }
    }

    /// A limit a workload or a metric sets; checked like `[analysis]`'s.
    pub(super) fn override_pct(&mut self, value: Option<&Spanned<f64>>, key: &str) -> Option<f64> {
        value.map(|v| self.percent(Some(v), *v.get_ref(), key))
    }

    /// The `gate_pct`, `max_drift_pct` and `max_cv_pct` a workload or metric table sets.
    pub(super) fn overrides(
        &mut self,
        gate_pct: Option<&Spanned<f64>>,
        max_drift_pct: Option<&Spanned<f64>>,
        max_cv_pct: Option<&Spanned<f64>>,
    ) -> LimitOverrides {
        LimitOverrides {
            gate_pct: self.override_pct(gate_pct, "gate_pct"),
            max_drift_pct: self.override_pct(max_drift_pct, "max_drift_pct"),
            max_cv_pct: self.override_pct(max_cv_pct, "max_cv_pct"),
        }
    }

    pub(super) fn regex(&mut self, pattern: &Spanned<String>) -> Option<Regex> {
        match Regex::new(pattern.get_ref()) {
            Ok(re) => Some(re),
            Err(e) => {
                // regex's message is a multi-line picture ending in "error: <what>".
                let msg = e.to_string();
                let what = msg.lines().last().unwrap_or("invalid regex").trim();
                let what = what.strip_prefix("error: ").unwrap_or(what);
                self.error(
                    pattern.span(),
                    format!("invalid regex: {what}\nhelp: {REGEX_HELP}"),
                );
                None
            }
        }
    }

    /// Free text that reaches terminals and reports: no control characters but `allowed`,
    /// at most `max` characters. `None` (and an error) otherwise.
    pub(super) fn free_text(
        &mut self,
        value: &Spanned<String>,
        what: &str,
        max: usize,
        allowed: &[char],
    ) -> Option<String> {
        let text = value.get_ref().replace("\r\n", "\n");
        if let Some(c) = crate::text::control_char(&text, allowed) {
            self.error(
                value.span(),
                format!(
                    "{what} contains the control character {}\nhelp: free text reaches terminals, report.txt and mail as it is, so control characters (escape sequences, tabs, bells) are not allowed{}",
                    crate::text::char_name(c),
                    if allowed.contains(&'\n') { "; newlines are" } else { "" }
                ),
            );
            return None;
        }
        let n = text.chars().count();
        if n > max {
            self.error(
                value.span(),
                format!("{what} has {n} characters; at most {max} are allowed"),
            );
            return None;
        }
        Some(text)
    }

    pub(super) fn description(&mut self, text: &Spanned<String>) {
        self.free_text(text, "`description`", limits::DESCRIPTION_CHARS, &['\n']);
    }
}
