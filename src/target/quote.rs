//! Quoting for POSIX `sh`: every value aba interpolates into a command that a shell will parse
//! (on the target or on the host) goes through [`sh_quote`], so a recipe value such as
//! `1; touch /tmp/pwned` stays one harmless word.

/// Quotes `value` as a single `sh` word.
///
/// Single quotes make every character literal; a single quote itself is written as `'\''`
/// (close, escaped quote, reopen). Words made only of safe characters stay unquoted so that
/// logs and plans remain readable.
pub fn sh_quote(value: &str) -> String {
    let safe = !value.is_empty()
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'-' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%'
                )
        });
    if safe {
        return value.to_owned();
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for ch in value.chars() {
        if ch == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(ch);
        }
    }
    out.push('\'');
    out
}

/// Quotes each word and joins them with spaces.
pub fn sh_join<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words
        .into_iter()
        .map(sh_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Shell text that starts `command` outside the caller's process group, so that it outlives
/// the exec that starts it: the way to schedule `sleep 1; kexec -e` or a reboot. Output goes
/// to `/dev/null`.
///
/// `nohup cmd &` is not enough: it stays in the exec's group and dies when the exec ends.
/// Here the foreground `setsid` is not a group leader, so it calls setsid() in place (no
/// fork), and only then does its `sh` put `command` in the background, inside the new
/// session. When the exec returns, `command` is already out of reach of the group kill. It
/// also drops `ABA_RUN` from its environment, which is how a transport finds what a command
/// left behind ([`crate::target::leftovers`]): a detached command is left on purpose.
pub fn detached(command: &str) -> String {
    let inner = format!("{{ {command}\n}} </dev/null >/dev/null 2>&1 &");
    format!(
        "unset {}; setsid sh -c {} </dev/null >/dev/null 2>&1",
        crate::target::leftovers::RUN_VAR,
        sh_quote(&inner)
    )
}

#[cfg(test)]
mod tests {
    use super::{sh_join, sh_quote};
    use std::process::Command;

    fn through_sh(word: &str) -> String {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", sh_quote(word)))
            .output()
            .expect("sh runs");
        String::from_utf8(out.stdout).expect("utf-8")
    }

    #[test]
    fn safe_words_stay_bare() {
        assert_eq!(
            sh_quote("kernel.sched_rt_period_us"),
            "kernel.sched_rt_period_us"
        );
        assert_eq!(sh_quote("/boot/vmlinuz-6.1.0-47"), "/boot/vmlinuz-6.1.0-47");
    }

    #[test]
    fn hostile_values_round_trip_through_a_real_shell() {
        for word in [
            "",
            "a b",
            "1; touch /tmp/pwned",
            "$(reboot)",
            "`id`",
            "it's",
            "'",
            "\"double\"",
            "tab\there",
            "new\nline",
            "back\\slash",
            "*",
            "~",
        ] {
            assert_eq!(through_sh(word), word, "word {word:?}");
        }
    }

    #[test]
    fn join_keeps_word_boundaries() {
        assert_eq!(sh_join(["echo", "a b", "c"]), "echo 'a b' c");
    }
}
