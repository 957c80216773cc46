//! Validated names: every recipe value that becomes a path, a CSV cell, a point label or part
//! of a command on the target is checked here, at deserialisation time, so the TOML parser can
//! point at the offending value's line and column.
//!
//! The rule of thumb: names are boring on purpose. A kernel label becomes a directory name and
//! a point label, a sysctl name becomes a `/proc/sys` path, a file name becomes a path under the
//! target's work directory. None of them may carry a shell metacharacter, a path separator
//! where none belongs, or `..`.
//!
//! An error says what is wrong on its first line and what to write instead on a following
//! `help: ` line; the diagnostic renderer turns those lines into `= help:` notes.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// Characters that mean something to a POSIX shell. None of them may appear in a name, and
/// matrix values (which are substituted into `run` unquoted, on purpose) reject them too.
pub const SHELL_METACHARACTERS: &[char] = &[
    ';', '&', '|', '$', '`', '\'', '"', '\\', '<', '>', '(', ')', '{', '}', '[', ']', '*', '?',
    '!', '#', '~', '\n', '\r', '\t',
];

fn check_word(
    value: &str,
    max_len: usize,
    first: impl Fn(char) -> bool,
    rest: impl Fn(char) -> bool,
    allowed: &str,
) -> Result<(), String> {
    if value.is_empty() {
        return Err("it is empty".to_owned());
    }
    if value.chars().count() > max_len {
        return Err(format!("it is longer than {max_len} characters"));
    }
    let mut chars = value.chars();
    if let Some(c) = chars.next()
        && !first(c)
    {
        return Err(format!("it starts with {c:?}\nhelp: {allowed}"));
    }
    let mut bad: Vec<char> = Vec::new();
    for c in value.chars().skip(1).filter(|&c| !rest(c)) {
        if !bad.contains(&c) {
            bad.push(c);
        }
    }
    if !bad.is_empty() {
        return Err(format!("it contains {}\nhelp: {allowed}", char_list(&bad)));
    }
    Ok(())
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
fn char_list(chars: &[char]) -> String {
    let mut quoted: Vec<String> = chars.iter().take(8).map(|c| format!("{c:?}")).collect();
    if chars.len() > 8 {
        quoted.push(format!("{} others", chars.len() - 8));
    }
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

fn label_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        64,
        |c| c.is_ascii_alphanumeric(),
        |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
        "use only letters, digits, `_` and `-`, starting with a letter or digit (it becomes a directory name and a point label)",
    )
}

fn name_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        64,
        |c| c.is_ascii_alphanumeric(),
        |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
        "use only letters, digits, `_`, `-` and `.`, starting with a letter or digit (it becomes a file name and a CSV cell)",
    )
}

fn matrix_key_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        32,
        |c| c.is_ascii_alphabetic() || c == '_',
        |c| c.is_ascii_alphanumeric() || c == '_',
        "use only letters, digits and `_`, starting with a letter or `_` (it is written as `{name}` in `run`)",
    )
}

fn param_name_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        32,
        |c| c.is_ascii_lowercase(),
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_',
        "use only lowercase letters, digits and `_`, starting with a letter (it is written as `{params.name}`)",
    )
}

/// A parameter's value reaches a shell command, a kernel command line, a CPU list or a
/// number, so it is one word of characters none of them treats specially: no spaces, quotes,
/// braces or shell metacharacters. What the place it is used in needs (a CPU list, a number)
/// is checked there.
fn param_value_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        256,
        |c| c.is_ascii_alphanumeric() || "_.,:=+/-".contains(c),
        |c| c.is_ascii_alphanumeric() || "_.,:=+/-".contains(c),
        "use only letters, digits and `_.,:=+/-` (the value is one word of a command or a kernel command line)",
    )
}

fn env_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        64,
        |c| c.is_ascii_alphabetic() || c == '_',
        |c| c.is_ascii_alphanumeric() || c == '_',
        "use only letters, digits and `_`, starting with a letter or `_`",
    )?;
    if value.starts_with("ABA_") {
        return Err(
            "the `ABA_` prefix is reserved for the variables aba sets itself\nhelp: choose a name without it"
                .to_owned(),
        );
    }
    Ok(())
}

fn sysctl_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        128,
        |c| c.is_ascii_alphanumeric(),
        |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
        "use the dotted form, e.g. `kernel.sched_rt_period_us`, with only letters, digits, `_`, `-` and `.`",
    )?;
    if value.split('.').any(str::is_empty) {
        return Err(
            "it has an empty component (`..` or a trailing `.`)\nhelp: use the dotted form, e.g. `kernel.sched_rt_period_us`"
                .to_owned(),
        );
    }
    Ok(())
}

fn remote_file_rule(value: &str) -> Result<(), String> {
    const ALLOWED: &str = "use a relative path of letters, digits, `_`, `-` and `.` separated by `/` (it is created under the target's work directory)";
    if value.is_empty() {
        return Err("it is empty".to_owned());
    }
    if value.len() > 200 {
        return Err("it is longer than 200 characters".to_owned());
    }
    if value.starts_with('/') {
        return Err(format!("it is absolute\nhelp: {ALLOWED}"));
    }
    for part in value.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(format!("it has the component {part:?}\nhelp: {ALLOWED}"));
        }
        if part.starts_with('-') {
            return Err(format!(
                "the component {part:?} starts with `-` and would read as an option\nhelp: {ALLOWED}"
            ));
        }
        if let Some(c) = part
            .chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        {
            return Err(format!("it contains {c:?}\nhelp: {ALLOWED}"));
        }
    }
    Ok(())
}

fn release_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        128,
        |c| c.is_ascii_alphanumeric(),
        |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '~'),
        "a kernel release as `uname -r` prints it: letters, digits, `.`, `_`, `-`, `+` and `~`",
    )
}

fn cpu_list_rule(value: &str) -> Result<(), String> {
    const ALLOWED: &str = "write a CPU list such as `2`, `0-3` or `1,4-7`";
    if value.is_empty() {
        return Err(format!("it is empty\nhelp: {ALLOWED}"));
    }
    for range in value.split(',') {
        let mut ends = range.splitn(2, '-');
        let lo = ends.next().unwrap_or_default();
        let hi = ends.next();
        let parse = |s: &str| {
            s.parse::<u32>()
                .ok()
                .filter(|_| !s.is_empty() && s.len() <= 5)
        };
        match (parse(lo), hi.map(parse)) {
            (Some(_), None) => {}
            (Some(a), Some(Some(b))) if a <= b => {}
            _ => {
                return Err(format!(
                    "{range:?} is not a CPU or a range\nhelp: {ALLOWED}"
                ));
            }
        }
    }
    Ok(())
}

fn abs_path_rule(value: &str) -> Result<(), String> {
    const ALLOWED: &str =
        "write an absolute path on the target of letters, digits and `_ - . / + ~`, without `..`";
    if !value.starts_with('/') {
        return Err(format!("it is not an absolute path\nhelp: {ALLOWED}"));
    }
    if let Some(c) = value
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | '~')))
    {
        return Err(format!("it contains {c:?}\nhelp: {ALLOWED}"));
    }
    if value.split('/').any(|p| p == "..") {
        return Err(format!("it contains `..`\nhelp: {ALLOWED}"));
    }
    Ok(())
}

fn knob_value_rule(value: &str) -> Result<(), String> {
    check_word(
        value,
        64,
        |c| c.is_ascii_alphanumeric(),
        |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'),
        "use only letters, digits, `_` and `-` (e.g. `performance`, `balance_power`)",
    )
}

macro_rules! ident {
    ($(#[$doc:meta])* $name:ident, $what:literal, $rule:path) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Validates `value` and wraps it.
            pub fn new(value: &str) -> Result<Self, String> {
                $rule(value)
                    .map(|()| Self(value.to_owned()))
                    .map_err(|why| format!("invalid {} `{}`: {}", $what, crate::text::quoted(value), why))
            }

            /// The validated text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::new(&text).map_err(serde::de::Error::custom)
            }
        }

        // A string: the rule is a function, not a pattern, so the schema leaves it to aba
        // (a pattern that drifted from the rule would refuse valid recipes in an editor).
        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "description": concat!("A ", $what, ".") })
            }
        }
    };
}

ident!(
    /// A kernel's label in a recipe (`original`, `patched`): a directory name and the stem of
    /// point labels.
    KernelLabel,
    "kernel label",
    label_rule
);
ident!(
    /// A recipe's or a target's name; it becomes part of a results directory name.
    Name,
    "name",
    name_rule
);
ident!(
    /// A workload's name.
    WorkloadName,
    "workload name",
    name_rule
);
ident!(
    /// A metric's name within a workload.
    MetricName,
    "metric name",
    name_rule
);
ident!(
    /// A matrix dimension, substituted as `{key}` in `run` and `env`.
    MatrixKey,
    "matrix key",
    matrix_key_rule
);
ident!(
    /// The name of a recipe parameter (`[params]`), a fact of the machine a shared recipe
    /// runs on.
    ParamName,
    "parameter name",
    param_name_rule
);
ident!(
    /// A parameter's value: a default, an inventory's or a `--param` option's.
    ParamValue,
    "parameter value",
    param_value_rule
);
ident!(
    /// An environment variable a workload sets.
    EnvName,
    "environment variable name",
    env_rule
);
ident!(
    /// A sysctl in dotted form; it maps to a file under `/proc/sys`.
    SysctlName,
    "sysctl name",
    sysctl_rule
);
ident!(
    /// A file's path relative to the target's work directory.
    RemoteFileName,
    "file name",
    remote_file_rule
);
/// A kernel release as `uname -r` prints it, or `running`: whatever kernel is up (only a
/// target without a switch runs it; the proof pins the release seen at the first point).
#[derive(Clone, Debug)]
pub enum Release {
    /// `release = "running"`.
    Running,
    /// A release `uname -r` must print.
    Named(String),
}

impl Release {
    /// How a recipe writes [`Release::Running`].
    pub const RUNNING: &'static str = "running";

    /// Validates `value` and wraps it.
    pub fn new(value: &str) -> Result<Self, String> {
        release_rule(value)
            .map(|()| {
                if value == Release::RUNNING {
                    Release::Running
                } else {
                    Release::Named(value.to_owned())
                }
            })
            .map_err(|why| {
                format!(
                    "invalid kernel release `{}`: {}",
                    crate::text::quoted(value),
                    why
                )
            })
    }

    /// The recipe's text: the release, or `running`.
    pub fn as_str(&self) -> &str {
        match self {
            Release::Running => Release::RUNNING,
            Release::Named(text) => text,
        }
    }

    /// True for [`Release::Running`].
    pub fn is_running(&self) -> bool {
        matches!(self, Release::Running)
    }
}

impl PartialEq for Release {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Release {}

impl std::hash::Hash for Release {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for Release {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Release {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for Release {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Release {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl serde::Serialize for Release {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl schemars::JsonSchema for Release {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Release".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A kernel release as `uname -r` prints it, or `running`."
        })
    }
}

impl<'de> Deserialize<'de> for Release {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::new(&text).map_err(serde::de::Error::custom)
    }
}

/// A point's label: its kernel's label when the kernel is booted once, else `label-a`,
/// `label-b`, … in boot order. It names the point in the journal, samples.csv, `env/` and
/// `raw/`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
#[serde(transparent)]
pub struct PointLabel(String);

impl PointLabel {
    /// Wraps a label made by [`crate::recipe::resolved::point_labels`] or read from a journal.
    pub fn new(label: impl Into<String>) -> Self {
        PointLabel(label.into())
    }

    /// The label.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for PointLabel {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PointLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::borrow::Borrow<str> for PointLabel {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for PointLabel {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for PointLabel {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for PointLabel {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl From<PointLabel> for String {
    fn from(label: PointLabel) -> String {
        label.0
    }
}

ident!(
    /// A CPU list for pinning (`taskset -c`).
    CpuList,
    "CPU list",
    cpu_list_rule
);
ident!(
    /// An absolute path on the target (kernel image, initrd).
    TargetPath,
    "target path",
    abs_path_rule
);
ident!(
    /// A cpufreq governor or EPP value.
    KnobValue,
    "tuning value",
    knob_value_rule
);

impl SysctlName {
    /// The file under `/proc/sys` that holds this sysctl.
    pub fn proc_path(&self) -> String {
        format!("/proc/sys/{}", self.0.replace('.', "/"))
    }
}

/// Checks a kernel command-line parameter: it is passed to `kexec --command-line` and looked up
/// in `/proc/cmdline`, so it may not contain quotes or shell metacharacters.
pub fn check_cmdline_param(token: &str) -> Result<(), String> {
    if let Some(c) = token
        .chars()
        .find(|c| SHELL_METACHARACTERS.contains(c) || c.is_control())
    {
        return Err(format!(
            "invalid kernel parameter `{}`: it contains {c:?}\nhelp: aba passes parameters to `kexec --command-line` and looks them up in /proc/cmdline, so quotes and shell metacharacters are not allowed",
            crate::text::quoted(token)
        ));
    }
    Ok(())
}

/// Checks a matrix value: it is substituted into `run` without quotes (so `-d -w` can expand
/// to two arguments), so it may not contain anything a shell would interpret.
pub fn check_matrix_value(value: &str) -> Result<(), String> {
    if value.len() > 128 {
        return Err(
            "invalid matrix value: longer than 128 characters\nhelp: move long arguments into a script listed in [files]"
                .to_owned(),
        );
    }
    if let Some(c) = value
        .chars()
        .find(|c| SHELL_METACHARACTERS.contains(c) || c.is_control())
    {
        return Err(format!(
            "invalid matrix value `{}`: it contains {c:?}\nhelp: matrix values are substituted into `run` unquoted (so `-d -w` stays two arguments), which is why shell metacharacters are not allowed",
            crate::text::quoted(value)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{
        CpuList, EnvName, KernelLabel, RemoteFileName, SysctlName, TargetPath, check_matrix_value,
    };

    #[test]
    fn kernel_labels_are_directory_safe() {
        assert!(KernelLabel::new("original").is_ok());
        assert!(KernelLabel::new("v6_12-rc1").is_ok());
        for bad in ["", "6.9/rc1", "a b", "-x", "x;y", "../x", "é"] {
            assert!(KernelLabel::new(bad).is_err(), "{bad:?}");
        }
        let err = KernelLabel::new("6.9/rc1").unwrap_err();
        assert!(
            err.starts_with("invalid kernel label `6.9/rc1`: it contains '.' and '/'\nhelp: "),
            "{err}"
        );
    }

    #[test]
    fn sysctl_names_map_to_proc_sys() {
        let name = SysctlName::new("kernel.sched_rt_period_us").expect("valid");
        assert_eq!(name.proc_path(), "/proc/sys/kernel/sched_rt_period_us");
        for bad in [
            "kernel..x",
            "kernel.x;touch",
            "/proc/sys/x",
            "kernel.x ",
            "x.",
            "$(id)",
        ] {
            assert!(SysctlName::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn remote_files_stay_under_the_work_dir() {
        assert!(RemoteFileName::new("bin/rt_read.c").is_ok());
        for bad in ["/etc/passwd", "../x", "a//b", "a/./b", "-rf", "a b", "x;y"] {
            assert!(RemoteFileName::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cpu_lists() {
        for good in ["2", "0-3", "1,4-7", "0,2,4"] {
            assert!(CpuList::new(good).is_ok(), "{good:?}");
        }
        for bad in ["", "3-1", "a", "1,,2", "1-", "-1", "1;2"] {
            assert!(CpuList::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn env_names_keep_the_aba_prefix_for_aba() {
        assert!(EnvName::new("KS_ALLOW_SYSCTL_TIMING").is_ok());
        assert!(EnvName::new("ABA_POINT").is_err());
        assert!(EnvName::new("1X").is_err());
    }

    #[test]
    fn target_paths_are_absolute_and_plain() {
        assert!(TargetPath::new("/boot/vmlinuz-6.1.0-47-cloud-amd64").is_ok());
        assert!(TargetPath::new("boot/vmlinuz").is_err());
        assert!(TargetPath::new("/boot/../etc").is_err());
        assert!(TargetPath::new("/boot/x y").is_err());
    }

    #[test]
    fn matrix_values_may_hold_flags_but_no_shell() {
        assert!(check_matrix_value("-d -w").is_ok());
        assert!(check_matrix_value("").is_ok());
        assert!(check_matrix_value("; touch /tmp/pwned").is_err());
        assert!(check_matrix_value("$(id)").is_err());
    }
}
