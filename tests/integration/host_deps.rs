//! Every external program that a test, a benchmark or a lab script starts on the host is
//! installed by `lab/host-deps.sh`, comes with every Debian system (an `Essential` or
//! `required` package), or is one of the machine's own tools that host-deps.sh names.
//!
//! The list of programs is read from the sources, so a new `Command::new("tool")`, a new
//! command in a lab script or a new `// host tools:` / `# host tools:` annotation (for
//! programs started through a variable) fails this test until host-deps.sh covers it. A tool missing from the
//! machine that the tests need would otherwise be found only on a fresh machine, as a failure
//! that looks like a bug (issue 21).

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    process::Command,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `[tool]=package` entries of host-deps.sh's map, and the names in its `machine` list.
fn host_deps() -> (BTreeMap<String, String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(root().join("lab/host-deps.sh")).expect("host-deps.sh");
    let entry =
        regex::Regex::new(r"^\s*\[([A-Za-z0-9_.+-]+)\]=([A-Za-z0-9_.+:-]+)\s*$").expect("regex");
    let map = text
        .lines()
        .filter_map(|l| entry.captures(l))
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect();
    let machine = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("machine=("))
        .map(|rest| {
            rest.trim_end_matches(')')
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .expect("host-deps.sh has a machine=(…) list");
    (map, machine)
}

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            // Build outputs, not sources (src/target/ is a module of aba's).
            if path == root().join("target") || path == root().join("lab/out") {
                continue;
            }
            files_under(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Programs the Rust sources start: `Command::new("x")`, `need("x")`, `have("x")` and
/// `// host tools: x y` annotations.
fn rust_tools(uses: &mut BTreeMap<String, String>) {
    let literal =
        regex::Regex::new(r#"(?:Command::new|need|have)\("([A-Za-z0-9_.+/-]+)"\)"#).expect("re");
    let annotation =
        regex::Regex::new(r"^\s*// host tools:((?:\s+[A-Za-z0-9_.+-]+)+)\s*$").expect("re");
    let mut files = Vec::new();
    for dir in ["src", "tests", "bench"] {
        files_under(&root().join(dir), "rs", &mut files);
    }
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", rel(&file), n + 1);
            let comment = line.trim_start().starts_with("//");
            for c in literal.captures_iter(line).filter(|_| !comment) {
                uses.entry(c[1].to_owned()).or_insert_with(|| at.clone());
            }
            if let Some(c) = annotation.captures(line) {
                for tool in c[1].split_whitespace() {
                    uses.entry(tool.to_owned()).or_insert_with(|| at.clone());
                }
            }
        }
    }
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

const SHELL_WORDS: &[&str] = &[
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "for",
    "while",
    "until",
    "do",
    "done",
    "case",
    "esac",
    "in",
    "function",
    "select",
    "time",
    "!",
    "{",
    "}",
    "[[",
    "]]",
    "[",
    "((",
    "echo",
    "printf",
    "read",
    "cd",
    "pwd",
    "set",
    "unset",
    "shift",
    "return",
    "exit",
    "export",
    "local",
    "declare",
    "readonly",
    "source",
    ".",
    "trap",
    "wait",
    "kill",
    "true",
    "false",
    "eval",
    "test",
    "mapfile",
    "readarray",
    "break",
    "continue",
    "type",
    "hash",
    "getopts",
    "let",
    "exec",
    "command",
    "builtin",
    "umask",
    "ulimit",
    "jobs",
    "disown",
    "shopt",
    "printf",
    "alias",
    "coproc",
    "compgen",
    "complete",
    "caller",
    "enable",
    "fc",
    "bind",
    "dirs",
    "popd",
    "pushd",
    "suspend",
    "times",
    "logout",
];

/// Words that start a new simple command after them (`exec cargo …`, `timeout 5 ssh …`).
const PREFIX_WORDS: &[&str] = &[
    "exec", "nohup", "nice", "setsid", "time", "sudo", "env", "!", "then", "do", "else", "if",
    "while", "until", "elif", "xargs",
];

/// First words of the commands of a shell script, with their lines. Single-quoted text
/// (commands for the guest, python and awk programs), heredoc bodies and comments are left
/// out; `$(…)` is read, also inside double quotes; `((…))`, `$((…))` and `${…}` are not
/// commands; neither are `case` patterns.
fn shell_commands(text: &str) -> Vec<(String, usize)> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
        out: Vec::new(),
        segment: String::new(),
        segment_line: 1,
        heredocs: Vec::new(),
        case_depth: 0,
        in_pattern: false,
    };
    lexer.run(false);
    lexer.out
}

/// A small lexer for bash: just enough to find where simple commands start.
struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: usize,
    out: Vec<(String, usize)>,
    segment: String,
    segment_line: usize,
    /// Heredoc delimiters waiting for the end of the current line: (word, `<<-`).
    heredocs: Vec<(String, bool)>,
    case_depth: usize,
    /// Between `in`/`;;` and `)` of a case statement: a pattern, not a command.
    in_pattern: bool,
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    /// Lexes until the `)` that closes a command substitution (`nested`) or the end.
    fn run(&mut self, nested: bool) {
        while let Some(c) = self.peek(0) {
            match c {
                '\n' => {
                    self.boundary();
                    self.i += 1;
                    self.line += 1;
                    self.skip_heredocs();
                    self.segment_line = self.line;
                }
                '\\' => {
                    if self.peek(1) == Some('\n') {
                        self.line += 1;
                    }
                    self.i += 2;
                }
                '#' if self.segment.is_empty() || self.segment.ends_with(char::is_whitespace) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                // A quoted word is data, or a command named dynamically: either way not a
                // tool name; the placeholder keeps it glued to its word.
                '\'' => {
                    self.i += 1;
                    self.skip_until('\'');
                    self.segment.push('"');
                }
                '"' => {
                    self.i += 1;
                    self.double_quoted();
                    self.segment.push('"');
                }
                '$' => self.dollar(),
                '`' => {
                    self.boundary();
                    self.i += 1;
                }
                '<' if self.peek(1) == Some('<') && self.peek(2) == Some('<') => {
                    self.i += 3; // a here-string: its word is data
                }
                '<' if self.peek(1) == Some('<') => self.heredoc_start(),
                '(' if self.peek(1) == Some('(') => self.skip_arithmetic(),
                '(' if self.segment.ends_with('=') => {
                    // An array literal `NAME=(…)`: words, not commands.
                    self.i += 1;
                    self.skip_array();
                    self.segment.push('"');
                }
                ')' if nested && !self.in_pattern => {
                    self.boundary();
                    self.i += 1;
                    return;
                }
                ')' => {
                    if self.in_pattern {
                        self.segment.clear();
                        self.in_pattern = false;
                    }
                    self.boundary();
                    self.i += 1;
                }
                ';' if self.peek(1) == Some(';') => {
                    self.boundary();
                    self.in_pattern = self.case_depth > 0;
                    self.i += 2;
                    if self.peek(0) == Some('&') {
                        self.i += 1;
                    }
                }
                ';' | '|' | '&' | '(' | '{' | '}' => {
                    self.boundary();
                    self.i += 1;
                }
                other => {
                    self.segment.push(other);
                    self.i += 1;
                }
            }
        }
        self.boundary();
    }

    fn skip_until(&mut self, end: char) {
        while let Some(c) = self.peek(0) {
            self.i += 1;
            if c == '\n' {
                self.line += 1;
            }
            if c == end {
                return;
            }
        }
    }

    /// Inside `"…"`: only `$(…)` holds commands.
    fn double_quoted(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.i += 2,
                '"' => {
                    self.i += 1;
                    return;
                }
                '$' if self.peek(1) == Some('(') && self.peek(2) != Some('(') => {
                    self.substitution();
                }
                '$' if self.peek(1) == Some('{') => {
                    self.i += 2;
                    self.skip_braces();
                }
                '\n' => {
                    self.line += 1;
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
    }

    /// `$(…)`: a nested command list, lexed with its own segments.
    fn substitution(&mut self) {
        self.i += 2;
        let saved = std::mem::take(&mut self.segment);
        let saved_line = self.segment_line;
        let saved_pattern = std::mem::replace(&mut self.in_pattern, false);
        let saved_case = std::mem::replace(&mut self.case_depth, 0);
        self.segment_line = self.line;
        self.run(true);
        self.segment = saved;
        self.segment.push('$');
        self.segment_line = saved_line;
        self.in_pattern = saved_pattern;
        self.case_depth = saved_case;
    }

    fn dollar(&mut self) {
        match (self.peek(1), self.peek(2)) {
            (Some('('), Some('(')) => {
                self.i += 1;
                self.skip_arithmetic();
                self.segment.push('$');
            }
            (Some('('), _) => self.substitution(),
            (Some('{'), _) => {
                self.i += 2;
                self.skip_braces();
                self.segment.push('$');
            }
            _ => {
                self.segment.push('$');
                self.i += 1;
            }
        }
    }

    /// After `${`: up to the matching `}`, honouring quotes inside.
    fn skip_braces(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => {
                    self.i += 1;
                    self.skip_until('\'');
                    continue;
                }
                '"' => {
                    self.i += 1;
                    self.double_quoted();
                    continue;
                }
                '{' => depth += 1,
                '}' if depth == 0 => {
                    self.i += 1;
                    return;
                }
                '}' => depth -= 1,
                '\n' => self.line += 1,
                _ => {}
            }
            self.i += 1;
        }
    }

    /// After `NAME=(`: up to the matching `)`, honouring quotes and comments inside.
    fn skip_array(&mut self) {
        let mut word_start = true;
        while let Some(c) = self.peek(0) {
            let at_word_start = word_start;
            word_start = c.is_whitespace();
            match c {
                '#' if at_word_start => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                    continue;
                }
                '\'' => {
                    self.i += 1;
                    self.skip_until('\'');
                    continue;
                }
                '"' => {
                    self.i += 1;
                    self.double_quoted();
                    continue;
                }
                ')' => {
                    self.i += 1;
                    return;
                }
                '\n' => self.line += 1,
                _ => {}
            }
            self.i += 1;
        }
    }

    /// At `((`: up to the matching `))`.
    fn skip_arithmetic(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                '\n' => self.line += 1,
                _ => {}
            }
        }
    }

    fn heredoc_start(&mut self) {
        self.i += 2;
        let dash = self.peek(0) == Some('-');
        if dash {
            self.i += 1;
        }
        while self.peek(0) == Some(' ') {
            self.i += 1;
        }
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else if c != '\'' && c != '"' {
                break;
            }
            self.i += 1;
        }
        if !word.is_empty() {
            self.heredocs.push((word, dash));
        }
    }

    /// At the start of a line after a `<<WORD`: skips the body up to its delimiter line.
    fn skip_heredocs(&mut self) {
        for (word, dash) in std::mem::take(&mut self.heredocs) {
            while self.peek(0).is_some() {
                let start = self.i;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                let line: String = self.chars[start..self.i].iter().collect();
                if self.peek(0).is_some() {
                    self.i += 1;
                    self.line += 1;
                }
                let candidate = if dash {
                    line.trim_start()
                } else {
                    line.as_str()
                };
                if candidate == word {
                    break;
                }
            }
        }
    }

    /// The segment so far is one simple command (or nothing): record its first word.
    fn boundary(&mut self) {
        let segment = std::mem::take(&mut self.segment);
        let line = self.segment_line;
        self.segment_line = self.line;
        let tokens: Vec<&str> = segment.split_whitespace().collect();
        if tokens.first() == Some(&"esac") {
            self.case_depth = self.case_depth.saturating_sub(1);
            self.in_pattern = false;
            return;
        }
        if self.in_pattern {
            return;
        }
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            match t {
                "case" => {
                    // `case WORD in` starts the patterns, also when the first one follows on
                    // the same line (`case $x in a | b) …`).
                    self.case_depth += 1;
                    self.in_pattern = tokens[i..].contains(&"in");
                    return;
                }
                "for" | "select" | "[[" | "[" | "command" | "type" | "hash" | "function" => {
                    return;
                }
                _ => {}
            }
            if PREFIX_WORDS.contains(&t) {
                i += 1;
                if t == "nice" || t == "xargs" {
                    while i < tokens.len() && tokens[i].starts_with('-') {
                        i += 1;
                    }
                }
                continue;
            }
            if t == "timeout" {
                self.out.push(("timeout".to_owned(), line));
                i += 1;
                while i < tokens.len() && (tokens[i].starts_with('-') || is_duration(tokens[i])) {
                    i += 1;
                }
                continue;
            }
            if is_assignment(t) || t.starts_with(['>', '<']) || t.starts_with("2>") {
                i += 1;
                continue;
            }
            let plausible = t
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
                && t.starts_with(|c: char| c.is_ascii_alphabetic())
                && !t.ends_with(".sh");
            if plausible && !SHELL_WORDS.contains(&t) {
                self.out.push((t.to_owned(), line));
            }
            return;
        }
    }
}

fn is_duration(t: &str) -> bool {
    let t = t.trim_end_matches(['s', 'm', 'h']);
    !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '[' || c == ']' || c == '+')
    })
}

/// Functions a script defines (`name() {`), which are not external programs.
fn defined_functions(text: &str) -> BTreeSet<String> {
    let def =
        regex::Regex::new(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)").expect("re");
    text.lines()
        .filter_map(|l| def.captures(l))
        .map(|c| c[1].to_owned())
        .collect()
}

fn script_tools(uses: &mut BTreeMap<String, String>) {
    let mut scripts = Vec::new();
    files_under(&root().join("lab"), "sh", &mut scripts);
    files_under(&root().join("bench"), "sh", &mut scripts);
    scripts.push(root().join("test.sh"));
    scripts.push(root().join(".ci/run"));
    let texts: Vec<(PathBuf, String)> = scripts
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).expect("readable script");
            (p, t)
        })
        .collect();
    let functions: BTreeSet<String> = texts
        .iter()
        .flat_map(|(_, t)| defined_functions(t))
        .collect();
    let annotation =
        regex::Regex::new(r"^\s*# host tools:((?:\s+[A-Za-z0-9_.+-]+)+)\s*$").expect("re");
    for (path, text) in &texts {
        // Programs a script starts through a variable (`"$LAB_QEMU"`) are named in a
        // `# host tools:` comment next to the variable.
        for (n, line) in text.lines().enumerate() {
            if let Some(c) = annotation.captures(line) {
                for tool in c[1].split_whitespace() {
                    uses.entry(tool.to_owned())
                        .or_insert_with(|| format!("{}:{}", rel(path), n + 1));
                }
            }
        }
        for (word, line) in shell_commands(text) {
            if functions.contains(&word) {
                continue;
            }
            uses.entry(word)
                .or_insert_with(|| format!("{}:{line}", rel(path)));
        }
    }
}

/// The Debian package that owns `tool` on this machine, if it is installed from one.
fn owning_package(tool: &str) -> Option<String> {
    let path = which(tool)?;
    let real = std::fs::canonicalize(&path).unwrap_or(path.clone());
    for candidate in [path, real] {
        let out = Command::new("dpkg")
            .arg("-S")
            .arg(&candidate)
            .output()
            .ok()?;
        if out.status.success() {
            return first_package(&out.stdout);
        }
        // /usr-merged systems: dpkg knows /bin/x, PATH finds /usr/bin/x.
        let alt = candidate
            .to_string_lossy()
            .strip_prefix("/usr")
            .map(PathBuf::from);
        if let Some(alt) = alt {
            let out = Command::new("dpkg").arg("-S").arg(&alt).output().ok()?;
            if out.status.success() {
                return first_package(&out.stdout);
            }
        }
    }
    None
}

/// The package of `dpkg -S` output (`pkg: /path`), past `diversion by …` lines.
fn first_package(stdout: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .find(|l| !l.starts_with("diversion by"))
        .and_then(|l| l.split(':').next())
        .map(|p| p.trim().to_owned())
}

fn which(tool: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Whether `package` comes with every Debian system.
fn base_system(package: &str) -> bool {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Essential} ${Priority}", package])
        .output();
    out.is_ok_and(|o| {
        let text = String::from_utf8_lossy(&o.stdout);
        text.starts_with("yes") || text.ends_with("required")
    })
}

#[test]
fn every_host_program_the_tests_start_is_installed_by_host_deps() {
    // host tools: dpkg dpkg-query
    if !crate::support::skip::need("dpkg-query") {
        return;
    }
    let (map, machine) = host_deps();
    let mut uses = BTreeMap::new();
    rust_tools(&mut uses);
    script_tools(&mut uses);
    let mut problems = Vec::new();
    for (tool, at) in &uses {
        let name = tool.rsplit('/').next().unwrap_or(tool);
        if map.contains_key(name) || machine.contains(name) {
            continue;
        }
        match owning_package(name) {
            Some(pkg) if base_system(&pkg) => {}
            Some(pkg) => problems.push(format!(
                "`{name}` ({at}) comes from package {pkg}, which a fresh Debian machine lacks: add [{name}]={pkg} to lab/host-deps.sh"
            )),
            None => problems.push(format!(
                "`{name}` ({at}) is not installed here and lab/host-deps.sh does not install it"
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The scan must see the programs it is about; an empty scan proves nothing.
    for expected in ["qemu-system-x86_64", "ssh-keygen", "busybox", "cpio"] {
        assert!(
            uses.contains_key(expected),
            "the scan no longer finds `{expected}`: {uses:?}"
        );
    }
}

#[test]
fn the_shell_scanner_reads_commands_not_data() {
    let script = r#"#!/bin/bash
set -euo pipefail
f() { ls; }
x=$(date +%s) y=2 cpio -o < list   # comment: not-a-tool
VARS=(NOT_A_TOOL "also not")
if [[ -e x ]]; then exec cargo test; fi
lab-ssh.sh 1 'uname -r; guest-only-tool'
echo "started $(id -u) at $(hostname)" | tee log
timeout 5 ssh host true
cat <<EOF
heredoc-tool --flag
EOF
read -r x <<<"$y (not-a-tool)"
case $x in
  a) date ;;
esac
case $x in one | two) ;; *) hostname ;; esac
UNITS=(a.service # a comment (with parentheses)
  b.service)
uname
case "$1" in
  --short) shift ;;
  start|stop) "$0" ;;
esac
"#;
    let words: Vec<String> = shell_commands(script).into_iter().map(|(w, _)| w).collect();
    assert_eq!(
        words,
        [
            "f", "ls", "date", "cpio", "cargo", "id", "hostname", "tee", "timeout", "ssh", "cat",
            "date", "hostname", "uname"
        ],
        "{words:?}"
    );
    assert!(defined_functions(script).contains("f"));
}
