//! `[params]`: the declared parameters with their bound values, and their `{params.NAME}`
//! uses, each checked at its place.

use toml::Spanned;

use crate::recipe::{
    model::RecipeFile,
    params::{self, NumberOrParam, Param},
};

use super::Checker;

impl Checker<'_> {
    /// Reads `[params]`: each name with its value, bound over its default.
    pub(super) fn params(&mut self, file: &RecipeFile) -> Vec<Param> {
        file.params
            .iter()
            .map(|(name, spec)| {
                let bound = self.bound.iter().find(|b| &b.name == name.get_ref());
                Param {
                    name: name.get_ref().clone(),
                    means: spec.means.clone(),
                    default: spec.default.get_ref().clone(),
                    value: bound
                        .map_or_else(|| spec.default.get_ref().clone(), |b| b.value.clone()),
                    from: bound.map_or(crate::origin::Origin::Recipe, |b| b.from.clone()),
                }
            })
            .collect()
    }

    /// `text` with its `{params.NAME}` replaced by the values, each through `quote`; an
    /// unknown name is reported at `text`, and `None` returned so that the place's own check
    /// does not report the same mistake twice.
    pub(super) fn expand(
        &mut self,
        text: &Spanned<String>,
        quote: fn(&str) -> String,
    ) -> Option<String> {
        let params = &self.params;
        let used = &mut self.used;
        let rendered = params::render(
            text.get_ref(),
            &mut |name| {
                let p = params.iter().find(|p| p.name.as_str() == name)?;
                used.insert(name.to_owned());
                Some(p.value.to_string())
            },
            quote,
        );
        match rendered {
            Ok(r) => Some(r),
            Err(unknown) => {
                let names: Vec<String> = self.params.iter().map(|p| p.name.to_string()).collect();
                let diag = self.error(
                    text.span(),
                    format!("unknown parameter `{{params.{unknown}}}`"),
                );
                // The suggested parameter is not reported as unused as well: the typo is the
                // one problem.
                let suggested = diag
                    .suggest(&unknown, names.iter().map(String::as_str), |s| {
                        format!("`{{params.{s}}}`")
                    })
                    .map(str::to_owned);
                diag.help.push(if names.is_empty() {
                    "the recipe declares no [params]; declare it there with a default and `means`"
                        .to_owned()
                } else {
                    format!("declared parameters: {}", names.join(", "))
                });
                self.used.extend(suggested);
                None
            }
        }
    }

    /// For a value that failed its place's check: what each parameter `text` uses was, and
    /// where it came from.
    pub(super) fn param_help(&self, text: &str) -> Vec<String> {
        self.params
            .iter()
            .filter(|p| text.contains(&format!("{{{}{}}}", params::PREFIX, p.name)))
            .map(|p| {
                let from = match &p.from {
                    crate::origin::Origin::Recipe => "the recipe's default".to_owned(),
                    from => from.to_string(),
                };
                format!("`{{params.{}}}` is `{}`, from {from}", p.name, p.value)
            })
            .collect()
    }

    /// An `[[expect]]` number: as written, or a parameter that must read as a number.
    pub(super) fn number(&mut self, value: &Spanned<NumberOrParam>, key: &str) -> Option<f64> {
        match value.get_ref() {
            NumberOrParam::Number(n) => Some(*n),
            NumberOrParam::Text(text) => {
                let spanned = Spanned::new(value.span(), text.clone());
                let rendered = self.expand(&spanned, params::verbatim)?;
                if let Ok(n) = rendered.parse::<f64>()
                    && text.contains('{')
                {
                    return Some(n);
                }
                let help = self.param_help(text);
                let diag = self.error(
                    value.span(),
                    format!(
                        "`{key}` must be a number or `\"{{params.NAME}}\"` naming a number, not `{}`",
                        crate::text::quoted(&rendered)
                    ),
                );
                diag.help.extend(help);
                None
            }
        }
    }

    /// Declared parameters that no place uses: a key that parses but does nothing.
    pub(super) fn unused_params(&mut self, file: &RecipeFile) {
        for name in file.params.keys() {
            if !self.used.contains(name.get_ref().as_str()) {
                self.error(
                    name.span(),
                    format!("parameter `{}` is declared but never used", name.get_ref()),
                )
                .help
                .push(format!(
                    "write `{{params.{}}}` where the fact belongs (a workload's `run`, `env` or `cpu`, [setup]/[teardown] `run`, a `cmdline`, an [[expect]] number), or remove it",
                    name.get_ref()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::params::BoundParam;

    use crate::recipe::load::testkit::{MINIMAL, errors};
    use crate::recipe::load::{Loader, Params, RecipeError, parse};

    /// `source` read with `bound` as a journal records them.
    fn read_bound(
        source: &str,
        bound: &[BoundParam],
    ) -> Result<crate::recipe::Recipe, RecipeError> {
        Loader {
            params: Params::Recorded(bound),
            ..Loader::default()
        }
        .parse(Path::new("r.toml"), source)
    }

    #[test]
    fn a_misspelt_placeholder_is_one_problem_not_two() {
        let src = MINIMAL.replace(
            "run = \"echo 1\"",
            "run = \"echo {levle}\"\nmatrix = { level = [\"1\", \"2\"] }",
        );
        let text = errors(&src);
        assert!(!text.contains("is not used"), "{text}");
    }

    /// A recipe with a parameter in every place that takes one.
    const PARAMS: &str = r#"
version = 1
name = "facts"
description = "machine facts"
sequence = ["a", "b", "a"]
[kernels.a]
release = "6.1.0-a"
cmdline = "rcu_nocbs={params.cpu}"
[kernels.b]
release = "6.1.0-b"
[boot]
cmdline = "nohz_full={params.cpu} isolcpus={params.isolation}"
[setup]
run = ["echo setup {params.cpu}"]
[params]
cpu = { default = "3", means = "the isolated CPU" }
isolation = { default = "nohz,domain,3", means = "isolcpus= flags and CPUs" }
tick = { default = "-10", means = "the published tick change on this machine" }
[[workload]]
name = "w"
run = "echo {params.cpu}"
cpu = "{params.cpu}"
env = { CPU = "{params.cpu}", ISO = "{params.isolation}" }
metric = { number = true, unit = "ns", better = "lower" }
[[expect]]
workload = "w"
change_pct = "{params.tick}"
tolerance = 2.5
"#;

    fn bound(name: &str, value: &str) -> BoundParam {
        BoundParam {
            name: crate::recipe::ident::ParamName::new(name).unwrap(),
            value: crate::recipe::ident::ParamValue::new(value).unwrap(),
            from: crate::origin::Origin::Inventory {
                at: "targets.toml:9:1".to_owned(),
            },
        }
    }

    #[test]
    fn parameters_take_their_defaults_everywhere_they_are_used() {
        let r = parse(Path::new("r.toml"), PARAMS).expect("valid");
        assert_eq!(r.workloads[0].run, "echo 3");
        assert_eq!(r.workloads[0].cpu.as_ref().unwrap().as_str(), "3");
        assert_eq!(r.workloads[0].env[0].1, "3");
        assert_eq!(r.boot_cmdline, ["nohz_full=3", "isolcpus=nohz,domain,3"]);
        assert_eq!(r.kernels["a"].cmdline, ["rcu_nocbs=3"]);
        assert_eq!(r.setup.commands, ["echo setup 3"]);
        assert_eq!(
            r.expect[0].value,
            crate::recipe::resolved::Expected::ChangePct(-10.0)
        );
        assert_eq!(r.params[0].line(), "cpu = 3 (the recipe's default)");
    }

    #[test]
    fn bound_values_reach_every_place_and_keep_the_hash() {
        let r = parse(Path::new("r.toml"), PARAMS).expect("valid");
        let b = read_bound(PARAMS, &[bound("cpu", "5"), bound("tick", "-68.5")]).expect("valid");
        assert_eq!(b.sha256, r.sha256);
        // Shell-quoted where a shell reads it (a safe word stays as it is).
        assert_eq!(b.workloads[0].run, "echo 5");
        assert_eq!(b.workloads[0].cpu.as_ref().unwrap().as_str(), "5");
        assert_eq!(b.boot_cmdline[0], "nohz_full=5");
        assert_eq!(
            b.expect[0].value,
            crate::recipe::resolved::Expected::ChangePct(-68.5)
        );
        assert_eq!(
            b.params[0].line(),
            "cpu = 5 (bound by the inventory (targets.toml:9:1); the recipe's default is 3)"
        );
        let q = read_bound(PARAMS, &[bound("isolation", "a=b,3")]).expect("valid");
        assert_eq!(q.boot_cmdline[1], "isolcpus=a=b,3");
        // Quoted in `run`; as it is in an `env` value, which the runner quotes whole.
        let src2 = PARAMS.replace(
            "run = \"echo {params.cpu}\"",
            "run = \"echo {params.isolation}\"",
        );
        let q = read_bound(&src2, &[bound("isolation", "a=b,3")]).expect("valid");
        assert_eq!(q.workloads[0].run, "echo 'a=b,3'");
        assert_eq!(q.workloads[0].env[1].1, "a=b,3");
    }

    #[test]
    fn a_bound_value_is_checked_for_its_place_at_the_recipe_position() {
        let Err(RecipeError::Invalid(d)) = read_bound(PARAMS, &[bound("cpu", "x")]) else {
            panic!("a CPU list `x` is refused");
        };
        let text = d.to_string();
        assert!(text.contains("r.toml:22:7"), "{text}");
        assert!(text.contains("invalid CPU list `x`"), "{text}");
        assert!(
            text.contains("`{params.cpu}` is `x`, from the inventory (targets.toml:9:1)"),
            "{text}"
        );
        let Err(RecipeError::Invalid(d)) = read_bound(PARAMS, &[bound("tick", "fast")]) else {
            panic!("a change `fast` is refused");
        };
        let text = d.to_string();
        assert!(text.contains("r.toml:27:14"), "{text}");
        assert!(text.contains("`change_pct` must be a number"), "{text}");
    }

    #[test]
    fn unknown_and_unused_parameters_are_placed() {
        let text = errors(&PARAMS.replace(
            "run = \"echo {params.cpu}\"",
            "run = \"echo {params.cpus}\"",
        ));
        assert!(text.contains("r.toml:21:7"), "{text}");
        assert!(text.contains("unknown parameter `{params.cpus}`"), "{text}");
        assert!(text.contains("did you mean `{params.cpu}`?"), "{text}");
        let text = errors(&PARAMS.replace(
            "[params]\n",
            "[params]\nspare = { default = \"1\", means = \"nothing\" }\n",
        ));
        assert!(text.contains("r.toml:16:1"), "{text}");
        assert!(
            text.contains("parameter `spare` is declared but never used"),
            "{text}"
        );
        let text = errors(&PARAMS.replace("default = \"3\"", "default = \"3 4\""));
        assert!(text.contains("invalid parameter value `3 4`"), "{text}");
        let text = errors(&PARAMS.replace("means = \"the isolated CPU\"", "mean = \"x\""));
        assert!(text.contains("unknown field `mean`"), "{text}");
        let text = errors(&PARAMS.replace("tolerance = 2.5", "tolerance = \"2.5\""));
        assert!(text.contains("`tolerance` must be a number"), "{text}");
    }
}
