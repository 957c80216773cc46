//! Host-side commands from the inventory (`power.cycle`, `power.set_next`, `power_cycle`,
//! `on_finish`, `on_failure`): run by `sh -c` on this machine, from the inventory's directory,
//! with `{placeholders}` replaced by quoted words so a value can never become shell syntax.

use std::{path::Path, time::Duration};

use crate::{
    placeholders::render_template,
    target::{
        local::LocalTransport,
        quote::sh_quote,
        transport::{CommandOutput, Transport, TransportError},
    },
};

/// Why a host command did not run to success.
#[derive(Debug, thiserror::Error)]
pub enum HostCommandError {
    /// The template names a placeholder that is not provided.
    #[error("host command `{command}` uses unknown placeholder {{{name}}} (known: {known})")]
    Placeholder {
        /// The template.
        command: String,
        /// The unknown name.
        name: String,
        /// The known names.
        known: String,
    },
    /// It could not be started.
    #[error("cannot run host command `{command}`")]
    Start {
        /// The expanded command.
        command: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// It ran and failed.
    #[error("host command `{command}` failed: {outcome}{}", tail(stderr))]
    Failed {
        /// The expanded command.
        command: String,
        /// How it ended.
        outcome: String,
        /// Its stderr.
        stderr: String,
    },
    /// It ran and exited 0, but its answer is not one aba can use (a labgrid client's answer
    /// without a reservation token, a place without the console the inventory asks for).
    #[error("host command `{command}` answered, but {why}")]
    Answer {
        /// The expanded command.
        command: String,
        /// What is missing or wrong in the answer.
        why: String,
    },
}

fn tail(stderr: &str) -> String {
    let lines = crate::text::last_lines(stderr, 5);
    if lines.is_empty() {
        String::new()
    } else {
        format!("\n    {}", lines.join("\n    "))
    }
}

/// Expands `template` with `vars` (each value shell-quoted).
pub fn expand(template: &str, vars: &[(&str, &str)]) -> Result<String, HostCommandError> {
    render_template(template, &mut |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| sh_quote(v))
    })
    .map_err(|name| HostCommandError::Placeholder {
        command: template.to_owned(),
        name,
        known: vars
            .iter()
            .map(|(k, _)| format!("{{{k}}}"))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Runs `template` on the host from `cwd` and requires exit status 0.
pub fn run_host(
    template: &str,
    vars: &[(&str, &str)],
    cwd: &Path,
    timeout: Duration,
) -> Result<CommandOutput, HostCommandError> {
    let command = expand(template, vars)?;
    let full = format!("cd {} && {command}", sh_quote(&cwd.to_string_lossy()));
    let out = LocalTransport::for_host_commands()
        .exec(&full, timeout)
        .map_err(|source| HostCommandError::Start {
            command: command.clone(),
            source,
        })?;
    if out.outcome.success() {
        Ok(out)
    } else {
        Err(HostCommandError::Failed {
            command,
            outcome: out.outcome.to_string(),
            stderr: out.stderr_text(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::{path::Path, time::Duration};

    use super::{expand, run_host};

    #[test]
    fn placeholders_become_quoted_words() {
        let cmd = expand(
            "echo {release} {cmdline}",
            &[("release", "6.1"), ("cmdline", "a=1 b; touch /tmp/x")],
        )
        .expect("known");
        assert_eq!(cmd, "echo 6.1 'a=1 b; touch /tmp/x'");
        assert!(expand("echo {nope}", &[]).is_err());
    }

    #[test]
    fn runs_in_the_given_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = run_host("pwd", &[], dir.path(), Duration::from_secs(10)).expect("runs");
        assert_eq!(
            Path::new(out.stdout_text().trim()),
            dir.path().canonicalize().expect("path")
        );
        let err = run_host(
            "echo oops >&2; exit 4",
            &[],
            dir.path(),
            Duration::from_secs(10),
        )
        .expect_err("fails");
        assert!(err.to_string().contains("exit status 4"), "{err}");
        assert!(err.to_string().contains("oops"), "{err}");
    }
}
