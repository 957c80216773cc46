//! The ftrace function profiler around a probe (`ftrace = { functions = [...] }`): the shell
//! that enables it for exactly the listed functions, the shell that disables it, reads the
//! per-CPU hit counts and clears the filter, and the reading of those counts.
//!
//! Setup and teardown are commands of their own, not a wrapper around the probe's command:
//! a probe killed at its deadline takes its process group with it, and a trap in that group
//! would die too. aba runs the teardown whatever the probe did, and the teardown checks that
//! nothing stays enabled (`function_profile_enabled` 0, `set_ftrace_filter` empty).
//!
//! Pure text; the engine runs it.

use crate::target::quote::sh_quote;

/// Where tracefs is looked for, in order: its own mount, then its copy under debugfs.
pub const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Finds the first of `dirs` with a function profiler, into `$T`; exits 3 with the reason
/// when there is none.
fn find_tracefs(dirs: &[&str]) -> String {
    let quoted: Vec<String> = dirs.iter().map(|d| sh_quote(d)).collect();
    format!(
        r#"T=
for d in {}; do
  if [ -e "$d/function_profile_enabled" ]; then T=$d; break; fi
done
if [ -z "$T" ]; then
  echo "no tracefs with a function profiler (function_profile_enabled) under {}: is tracefs mounted and the kernel built with CONFIG_FUNCTION_PROFILER=y?" >&2
  exit 3
fi
"#,
        quoted.join(" "),
        dirs.join(" or ")
    )
}

/// True (exit 0) when `$T/set_ftrace_filter` names a function: tracefs shows an empty
/// filter as a `#` comment line.
const FILTERED: &str = r#"grep -v '^#' "$T/set_ftrace_filter" | grep -q ."#;

/// The shell that enables the profiler for `functions`. It refuses a profiler or a filter
/// someone else set (it would change their tracing and count their functions). A function
/// the kernel cannot trace is named after [`UNTRACEABLE`] and left out; when none can be,
/// it clears what it wrote and fails.
#[must_use]
pub fn setup_script(functions: &[String]) -> String {
    setup_script_in(&TRACEFS, functions)
}

/// [`setup_script`] looking for tracefs in `dirs`.
#[must_use]
pub fn setup_script_in(dirs: &[&str], functions: &[String]) -> String {
    let names: Vec<String> = functions.iter().map(|f| sh_quote(f)).collect();
    format!(
        r#"{find}if [ "$(cat "$T/function_profile_enabled")" != 0 ]; then
  echo "the function profiler in $T is already enabled: someone else is profiling; aba leaves it alone" >&2
  exit 4
fi
if {FILTERED}; then
  echo "$T/set_ftrace_filter is not empty: someone else filters functions; aba leaves it alone" >&2
  exit 4
fi
traced=0
for f in {names}; do
  if echo "$f" >> "$T/set_ftrace_filter" 2>/dev/null; then
    traced=1
  else
    echo "{UNTRACEABLE} $f"
  fi
done
if [ "$traced" = 0 ]; then
  echo > "$T/set_ftrace_filter"
  echo "none of the functions can be traced: they are not in $T/available_filter_functions (inlined, renamed or notrace on this kernel)" >&2
  exit 5
fi
if ! echo 1 > "$T/function_profile_enabled"; then
  echo > "$T/set_ftrace_filter"
  echo "cannot enable the function profiler in $T" >&2
  exit 5
fi
echo "$T"
"#,
        find = find_tracefs(dirs),
        names = names.join(" ")
    )
}

/// The word before each function the setup could not put into the filter (one line each).
pub const UNTRACEABLE: &str = "aba-ftrace-untraceable";

/// The functions the setup's output says could not be traced: they have no count (never 0).
#[must_use]
pub fn untraceable(setup_output: &str) -> Vec<String> {
    setup_output
        .lines()
        .filter_map(|l| l.strip_prefix(UNTRACEABLE))
        .map(|f| f.trim().to_owned())
        .collect()
}

/// The line the teardown prints before the counts.
pub const COUNTS_MARK: &str = "aba-ftrace-counts";

/// The shell that disables the profiler, prints every CPU's counts after [`COUNTS_MARK`],
/// clears the filter and checks that nothing stays enabled (exit 6 otherwise).
#[must_use]
pub fn teardown_script() -> String {
    teardown_script_in(&TRACEFS)
}

/// [`teardown_script`] looking for tracefs in `dirs`.
#[must_use]
pub fn teardown_script_in(dirs: &[&str]) -> String {
    format!(
        r#"{find}echo 0 > "$T/function_profile_enabled"
echo {COUNTS_MARK}
for f in "$T"/trace_stat/function[0-9]*; do
  [ -e "$f" ] && cat "$f"
done
echo > "$T/set_ftrace_filter"
if [ "$(cat "$T/function_profile_enabled")" != 0 ] || {FILTERED}; then
  echo "the function profiler in $T is still enabled or filtered after aba's teardown" >&2
  exit 6
fi
"#,
        find = find_tracefs(dirs)
    )
}

/// Each function's hits summed over the CPUs' `trace_stat/functionN` tables in `text` (what
/// follows [`COUNTS_MARK`]): a function no CPU lists was not called (the profiler lists only
/// functions with hits).
#[must_use]
pub fn hit_counts(functions: &[String], text: &str) -> Vec<(String, u64)> {
    let tables = text.split_once(COUNTS_MARK).map_or("", |(_, rest)| rest);
    let mut counts: Vec<(String, u64)> = functions.iter().map(|f| (f.clone(), 0)).collect();
    for line in tables.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(hits)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(hits) = hits.parse::<u64>() else {
            continue;
        };
        if let Some((_, n)) = counts.iter_mut().find(|(f, _)| f == name) {
            *n = n.saturating_add(hits);
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use std::{path::Path, process::Command};

    use super::{
        COUNTS_MARK, hit_counts, setup_script, setup_script_in, teardown_script, teardown_script_in,
    };

    /// Runs `script` with sh: (exit status, stdout, stderr).
    fn sh(script: &str) -> (i32, String, String) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .output()
            .expect("sh runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A tracefs stand-in: regular files where tracefs has its controls, an empty filter
    /// shown as tracefs shows it.
    fn fake_tracefs(root: &Path) {
        std::fs::create_dir_all(root.join("trace_stat")).expect("mkdir");
        std::fs::write(root.join("function_profile_enabled"), "0\n").expect("write");
        std::fs::write(
            root.join("set_ftrace_filter"),
            "#### all functions enabled ####\n",
        )
        .expect("write");
    }

    #[test]
    fn setup_enables_exactly_the_functions_and_teardown_leaves_nothing_enabled() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = tmp.path().join("tracing");
        fake_tracefs(&t);
        let dirs = ["/nonexistent/tracing", t.to_str().expect("utf-8")];
        let functions = vec!["rebuild_sched_domains".to_owned(), "b.isra.0".to_owned()];
        let (code, out, err) = sh(&setup_script_in(&dirs, &functions));
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), t.to_str().expect("utf-8"));
        assert!(super::untraceable(&out).is_empty());
        let read = |f: &str| std::fs::read_to_string(t.join(f)).expect("read");
        assert_eq!(read("function_profile_enabled").trim(), "1");
        assert!(read("set_ftrace_filter").contains("rebuild_sched_domains\nb.isra.0\n"));
        // A second profile while this one runs is refused: it would reset the counts.
        let (code, _, err) = sh(&setup_script_in(&dirs, &functions));
        assert_eq!(code, 4, "{err}");
        assert!(err.contains("already enabled"), "{err}");

        std::fs::write(
            t.join("trace_stat/function0"),
            "  Function  Hit  Time\n  --------  ---  ----\n  rebuild_sched_domains  4096  1.0 us\n",
        )
        .expect("write");
        let (code, out, err) = sh(&teardown_script_in(&dirs));
        assert_eq!(code, 0, "{err}");
        assert_eq!(hit_counts(&functions, &out)[0].1, 4096);
        assert_eq!(
            super::untraceable(&format!("/t\n{} b.isra.0\n", super::UNTRACEABLE)),
            ["b.isra.0"]
        );
        assert_eq!(read("function_profile_enabled").trim(), "0");
        assert!(read("set_ftrace_filter").trim().is_empty());
        // A filter someone else set is left alone.
        std::fs::write(t.join("set_ftrace_filter"), "schedule\n").expect("write");
        let (code, _, err) = sh(&setup_script_in(&dirs, &functions));
        assert_eq!(code, 4, "{err}");
        assert_eq!(read("set_ftrace_filter"), "schedule\n");
        // Without tracefs, the reason is said.
        let (code, _, err) = sh(&setup_script_in(&["/nonexistent"], &functions));
        assert_eq!(code, 3);
        assert!(err.contains("CONFIG_FUNCTION_PROFILER=y"), "{err}");
    }

    #[test]
    fn hits_are_summed_over_the_cpus_and_a_silent_function_counts_zero() {
        let text = format!(
            "{COUNTS_MARK}\n  Function                               Hit    Time            Avg             s^2\n  \
             --------                               ---    ----            ---             ---\n  \
             rebuild_sched_domains                 4096    8123.4 us       1.983 us        0.1 us\n  \
             Function                               Hit\n  --------                               ---\n  \
             rebuild_sched_domains                    3\n  other_fn 7\n"
        );
        let functions = vec![
            "rebuild_sched_domains".to_owned(),
            "sched_rt_handler".to_owned(),
        ];
        assert_eq!(
            hit_counts(&functions, &text),
            [
                ("rebuild_sched_domains".to_owned(), 4099),
                ("sched_rt_handler".to_owned(), 0)
            ]
        );
        // Nothing before the mark counts.
        assert_eq!(hit_counts(&functions, "rebuild_sched_domains 5\n")[0].1, 0);
    }

    #[test]
    fn the_scripts_are_valid_shell_that_clear_what_they_set() {
        for script in [
            setup_script(&["a_fn".to_owned(), "b.isra.0".to_owned()]),
            teardown_script(),
        ] {
            let status = std::process::Command::new("sh")
                .arg("-n")
                .arg("-c")
                .arg(&script)
                .status()
                .expect("sh runs");
            assert!(status.success(), "{script}");
        }
        assert!(teardown_script().contains("echo > \"$T/set_ftrace_filter\""));
    }
}
