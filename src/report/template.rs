//! Where the layouts of `report.txt` and `README.md` come from, and how they render.
//!
//! Lookup, per template: `$ABA_TEMPLATES/<name>` when the variable is set and that file
//! exists, else the built-in copy of `templates/<name>` compiled into the binary. So a user
//! edits a copy of `templates/report.txt.j2`, points `ABA_TEMPLATES` at its directory, and
//! reruns `aba report DIR`, without touching Rust.
//!
//! Templates are minijinja (Jinja2) with `trim_blocks` and `lstrip_blocks`, the trailing
//! newline kept, and printing an undefined value is an error (a typo must not silently print
//! nothing). A `wrap(width=72, indent="")` filter rewraps prose.

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior, syntax::SyntaxConfig, value::Serde};

use serde::Serialize;

use crate::report::{error::ReportError, layout::wrap};

/// The template of `report.txt`.
pub const REPORT_TXT: &str = "report.txt.j2";
/// The template of `README.md`.
pub const README_MD: &str = "README.md.j2";
/// The template of `aba compare`'s text (and `reproduction.txt`).
pub const REPRODUCTION_TXT: &str = "reproduction.txt.j2";
/// The environment variable naming a directory of user templates.
pub const TEMPLATES_ENV: &str = "ABA_TEMPLATES";

const BUILTIN: [(&str, &str); 3] = [
    (REPORT_TXT, include_str!("../../templates/report.txt.j2")),
    (README_MD, include_str!("../../templates/README.md.j2")),
    (
        REPRODUCTION_TXT,
        include_str!("../../templates/reproduction.txt.j2"),
    ),
];

/// Where templates are looked up.
#[derive(Clone, Debug, Default)]
pub struct Templates {
    /// A directory searched before the built-in templates.
    pub dir: Option<PathBuf>,
}

impl Templates {
    /// Only the built-in templates.
    #[must_use]
    pub fn builtin() -> Templates {
        Templates { dir: None }
    }

    /// `$ABA_TEMPLATES` (when set and not empty), then the built-in templates.
    #[must_use]
    pub fn from_env() -> Templates {
        Templates {
            dir: std::env::var_os(TEMPLATES_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }

    /// The source of template `name` and where it came from (a path, or `built-in`).
    pub fn source(&self, name: &str) -> Result<(String, String), ReportError> {
        if let Some(dir) = &self.dir {
            let path = dir.join(name);
            if path.is_file() {
                let text =
                    std::fs::read_to_string(&path).map_err(|source| ReportError::TemplateRead {
                        path: path.clone(),
                        source,
                    })?;
                return Ok((text, path.display().to_string()));
            }
        }
        let text = BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| (*text).to_owned())
            .expect("invariant: only built-in template names are asked for");
        Ok((text, "built-in".to_owned()))
    }

    /// Renders template `name` with `context` (a report's [`crate::report::context::Context`],
    /// or a comparison's).
    pub fn render<C: Serialize>(&self, name: &str, context: &C) -> Result<String, ReportError> {
        let (source, origin) = self.source(name)?;
        let fail = |source| ReportError::Template {
            name: name.to_owned(),
            origin: origin.clone(),
            source,
        };
        let mut env = environment().map_err(fail)?;
        env.add_template_owned(name.to_owned(), source)
            .map_err(fail)?;
        // Every report text is rendered here: whatever a journal, a bundle or a recipe put
        // in a value, no control character but the newline reaches the file or a terminal.
        env.get_template(name)
            .and_then(|t| t.render(Serde(context)))
            .map(|text| crate::text::printable(&text).into_owned())
            .map_err(fail)
    }
}

fn environment() -> Result<Environment<'static>, minijinja::Error> {
    let mut env = Environment::new();
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()?,
    );
    env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
    env.add_filter(
        "wrap",
        |text: String, width: Option<usize>, indent: Option<String>| {
            wrap(&text, width.unwrap_or(72), indent.as_deref().unwrap_or(""))
                .trim_end()
                .to_owned()
        },
    );
    Ok(env)
}

/// The directory of the built-in templates in the source tree (for documentation and tests).
#[must_use]
pub fn source_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/templates"))
}

#[cfg(test)]
mod tests {
    use super::{REPORT_TXT, Templates};
    use crate::report::{
        context::Context,
        error::ReportError,
        testdata::{fixture, fixture_dir},
    };

    fn render(templates: &Templates) -> Result<String, ReportError> {
        let analysis = fixture("mprotect-exact-cac1");
        let context = Context::new(&analysis, &fixture_dir("mprotect-exact-cac1"));
        templates.render(REPORT_TXT, &context)
    }

    #[test]
    fn a_user_directory_overrides_only_the_files_it_has() {
        let dir = tempfile::tempdir().expect("tempdir");
        let templates = Templates {
            dir: Some(dir.path().to_path_buf()),
        };
        // No file there yet: the built-in template is used.
        let (_, origin) = templates.source(REPORT_TXT).expect("built-in");
        assert_eq!(origin, "built-in");
        assert!(
            render(&templates)
                .expect("renders")
                .starts_with("mprotect-exact-cac1: A/B/A")
        );

        std::fs::write(
            dir.path().join(REPORT_TXT),
            "{{ analysis.campaign.baseline | upper }} {{ text.summary | wrap(30, \"> \") }}\n",
        )
        .expect("write");
        let (_, origin) = templates.source(REPORT_TXT).expect("user file");
        assert!(origin.ends_with("report.txt.j2"));
        let text = render(&templates).expect("renders");
        assert!(text.starts_with("PARENT > mprotect/"), "{text}");
        assert!(
            text.lines()
                .skip(1)
                .all(|l| l.starts_with("> ") && l.chars().count() <= 30),
            "{text}"
        );
    }

    #[test]
    fn printing_an_undefined_value_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(REPORT_TXT),
            "{{ analysis.campaign.nmae }}\n",
        )
        .expect("write");
        let templates = Templates {
            dir: Some(dir.path().to_path_buf()),
        };
        let err = render(&templates).expect_err("undefined");
        assert!(matches!(err, ReportError::Template { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("cannot render template report.txt.j2 (")
        );
    }
}
