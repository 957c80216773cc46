//! The call counter around a probe (`ftrace = { functions = [...] }`): the shell that puts a
//! kprobe event on exactly the listed functions, the shell that reads each event's hit count
//! and removes the events, and the reading of those counts.
//!
//! Kprobe events, not the function profiler: the profiler (`CONFIG_FUNCTION_PROFILER`) is
//! off in Debian's kernels, while kprobe events (`CONFIG_KPROBE_EVENTS`) are on in the
//! kernels of every major distribution, and `kprobe_profile` keeps an exact hit count per
//! event whatever the trace buffer does. The events live in aba's own group
//! ([`GROUP`]) and are enabled only in aba's own trace instance, so nobody's filters, tracer
//! or top-level trace buffer are touched.
//!
//! Setup and teardown are commands of their own, not a wrapper around the probe's command:
//! a probe killed at its deadline takes its process group with it, and a trap in that group
//! would die too. aba runs the teardown whatever the probe did, and the teardown checks that
//! nothing stays behind (no event of the group, no instance).
//!
//! Pure text; the engine runs it.

use crate::target::quote::sh_quote;

/// Where tracefs is looked for, in order: its own mount, then its copy under debugfs.
pub const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The kprobe event group, and the name of the trace instance the events are enabled in.
pub const GROUP: &str = "aba_ftrace";

/// The event name of the `index`th function: function names may hold `.` (`b.isra.0`),
/// which an event name may not.
fn event(index: usize) -> String {
    format!("{GROUP}_f{index}")
}

/// Finds the first of `dirs` with kprobe events, into `$T` (the event group into `$G`, the
/// instance into `$I`); exits 3 with the reason when there is none.
fn find_tracefs(dirs: &[&str]) -> String {
    let quoted: Vec<String> = dirs.iter().map(|d| sh_quote(d)).collect();
    format!(
        r#"T=
for d in {}; do
  if [ -e "$d/kprobe_events" ]; then T=$d; break; fi
done
if [ -z "$T" ]; then
  echo "no tracefs with kprobe events (kprobe_events) under {}: is tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing) and the kernel built with CONFIG_KPROBE_EVENTS=y?" >&2
  exit 3
fi
G={GROUP}
I="$T/instances/$G"
"#,
        quoted.join(" "),
        dirs.join(" or ")
    )
}

/// Disables and removes every event of [`GROUP`] and aba's instance: what an earlier setup
/// wrote, on this boot. Idempotent.
const CLEAR: &str = r#"[ -e "$I/events/$G/enable" ] && echo 0 > "$I/events/$G/enable"
[ -e "$T/events/$G/enable" ] && echo 0 > "$T/events/$G/enable"
for e in $(grep "^[pr]:$G/" "$T/kprobe_events" | cut -d' ' -f1); do
  echo "-:${e#*:}" >> "$T/kprobe_events"
done
[ -d "$I" ] && rmdir "$I"
"#;

/// True (exit 0) when something of aba's is still there.
const LEFT: &str = r#"grep -q "^[pr]:$G/" "$T/kprobe_events" || [ -d "$I" ]"#;

/// The shell that puts a kprobe event on each of `functions` and enables them in aba's
/// instance. What an earlier run left (it lost its target before its teardown) is cleared
/// first. A function no kprobe can be put on is named after [`UNTRACEABLE`] and left out;
/// when none can be, it clears what it wrote and fails.
#[must_use]
pub fn setup_script(functions: &[String]) -> String {
    setup_script_in(&TRACEFS, functions)
}

/// [`setup_script`] looking for tracefs in `dirs`.
#[must_use]
pub fn setup_script_in(dirs: &[&str], functions: &[String]) -> String {
    let mut adds = String::new();
    for (i, f) in functions.iter().enumerate() {
        adds.push_str(&format!(
            "if echo {def} >> \"$T/kprobe_events\" 2>/dev/null; then traced=1; else echo {untraceable}; fi\n",
            def = sh_quote(&format!("p:{GROUP}/{} {f}", event(i))),
            untraceable = sh_quote(&format!("{UNTRACEABLE} {f}")),
        ));
    }
    format!(
        r#"{find}{CLEAR}if {LEFT}; then
  echo "kprobe events of group $G or the instance $I remain and cannot be removed" >&2
  exit 4
fi
traced=0
{adds}if [ "$traced" = 0 ]; then
  echo "no kprobe can be put on any of the functions on this kernel (inlined, renamed, or on the kprobe blacklist)" >&2
  exit 5
fi
if ! mkdir "$I" || ! echo 1 > "$I/events/$G/enable"; then
{CLEAR}  echo "cannot enable the kprobe events in the trace instance $I" >&2
  exit 5
fi
echo "$T"
"#,
        find = find_tracefs(dirs),
    )
}

/// The word before each function the setup could not put a kprobe on (one line each).
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

/// The shell that disables the events, prints `kprobe_profile` after [`COUNTS_MARK`],
/// removes the events and the instance and checks that nothing stays behind (exit 6
/// otherwise).
#[must_use]
pub fn teardown_script() -> String {
    teardown_script_in(&TRACEFS)
}

/// [`teardown_script`] looking for tracefs in `dirs`.
#[must_use]
pub fn teardown_script_in(dirs: &[&str]) -> String {
    format!(
        r#"{find}[ -e "$I/events/$G/enable" ] && echo 0 > "$I/events/$G/enable"
echo {COUNTS_MARK}
cat "$T/kprobe_profile"
{CLEAR}if {LEFT}; then
  echo "kprobe events of group $G or the instance $I remain after aba's teardown" >&2
  exit 6
fi
exit 0
"#,
        find = find_tracefs(dirs),
    )
}

/// Each of `functions`' calls in `text` (what follows [`COUNTS_MARK`]): the hits of its
/// event in `kprobe_profile` plus the missed ones (a call during which the kprobe could not
/// run, say from inside another probe's handler, is still a call). `functions` is the list
/// the setup was given, in its order: the events are named by position. A function whose
/// event is not listed has no count.
#[must_use]
pub fn hit_counts(functions: &[String], text: &str) -> Vec<(String, u64)> {
    let table = text.split_once(COUNTS_MARK).map_or("", |(_, rest)| rest);
    let mut counts = Vec::new();
    for (i, f) in functions.iter().enumerate() {
        let name = event(i);
        let calls = table.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            if words.next() != Some(name.as_str()) {
                return None;
            }
            let hits = words.next()?.parse::<u64>().ok()?;
            let missed = words.next()?.parse::<u64>().ok()?;
            Some(hits.saturating_add(missed))
        });
        if let Some(calls) = calls {
            counts.push((f.clone(), calls));
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::{
        COUNTS_MARK, GROUP, UNTRACEABLE, hit_counts, setup_script, setup_script_in,
        teardown_script, untraceable,
    };

    /// Runs `script` with sh: (exit status, stdout, stderr).
    fn sh(script: &str) -> (i32, String, String) {
        let out = std::process::Command::new("sh")
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

    /// The kernel's side is tested on a real kernel in the lab
    /// (`lab::kexec_aba_in_the_lab_proves_three_boots`); here, what needs none.
    #[test]
    fn without_kprobe_events_the_reason_is_said_and_nothing_is_written() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_str().expect("utf-8");
        let (code, out, err) = sh(&setup_script_in(&[dir], &["schedule".to_owned()]));
        assert_eq!(code, 3, "{out}{err}");
        assert!(err.contains("CONFIG_KPROBE_EVENTS=y"), "{err}");
        assert_eq!(std::fs::read_dir(tmp.path()).expect("ls").count(), 0);
    }

    #[test]
    fn calls_are_hits_and_misses_by_position_and_an_unlisted_event_has_no_count() {
        let text = format!(
            "  {GROUP}_f0 5 0\n{COUNTS_MARK}\n  other_f0                        7 0\n  \
             {GROUP}_f0                                4096               2\n  \
             {GROUP}_f1                                   0               0\n"
        );
        let functions: Vec<String> = ["rebuild_sched_domains", "b.isra.0", "gone"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(
            hit_counts(&functions, &text),
            [
                ("rebuild_sched_domains".to_owned(), 4098),
                ("b.isra.0".to_owned(), 0)
            ]
        );
        // Nothing before the mark counts.
        assert!(hit_counts(&functions, &format!("{GROUP}_f0 5 0\n")).is_empty());
        assert_eq!(
            untraceable(&format!("/t\n{UNTRACEABLE} b.isra.0\n")),
            ["b.isra.0"]
        );
    }

    #[test]
    fn the_scripts_are_valid_shell_that_quote_the_names_and_clear_what_they_set() {
        let setup = setup_script(&["a_fn".to_owned(), "x'; reboot; '".to_owned()]);
        for script in [&setup, &teardown_script()] {
            let status = std::process::Command::new("sh")
                .arg("-n")
                .arg("-c")
                .arg(script)
                .status()
                .expect("sh runs");
            assert!(status.success(), "{script}");
            assert!(script.contains("rmdir \"$I\""), "{script}");
        }
        assert!(
            setup.contains(&format!("'p:{GROUP}/{GROUP}_f1 x'\\''; reboot; '\\'''")),
            "{setup}"
        );
    }
}
