//! `aba completions bash|zsh|fish` and the hidden `aba targets --names` they call: shell
//! completion scripts generated from the clap definition (`clap_complete`), so they cannot
//! fall behind the commands.
//!
//! clap_complete's stable generators complete values only from fixed lists, and its dynamic
//! engine is behind an unstable feature. So the bash and fish scripts get a few lines after
//! the generated ones, which leave them as they are: a name after `--target`/`-t` comes from
//! `aba targets --names` (the inventory `aba` itself would read, or the one the command line
//! names with `--targets FILE`). The zsh script is the generated one, static: `--target`
//! completes no names there.

use std::path::Path;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::{
    cli::Cli,
    error::{Error, exit_code},
    inventory::{Inventory, LOCAL},
};

/// The shells `aba completions` writes scripts for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    /// Bash: `source <(aba completions bash)`.
    Bash,
    /// Zsh: save as `_aba` in a directory of `$fpath`.
    Zsh,
    /// Fish: save as `~/.config/fish/completions/aba.fish`.
    Fish,
}

/// Bash: after `--target`/`-t`, the inventory's names; anything else to clap's `_aba`.
const BASH_TARGETS: &str = r#"
# aba: complete target names from the inventory after --target/-t (`aba targets --names`).
_aba_targets() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ "$prev" == "--target" || "$prev" == "-t" ]]; then
        local i inventory=()
        for ((i = 1; i < COMP_CWORD - 1; i++)); do
            if [[ "${COMP_WORDS[i]}" == "--targets" ]]; then
                inventory=(--targets "${COMP_WORDS[i+1]}")
            fi
        done
        COMPREPLY=($(compgen -W "$(aba targets --names "${inventory[@]}" 2>/dev/null)" -- "$cur"))
        return 0
    fi
    _aba "$@"
}
if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _aba_targets -o nosort -o bashdefault -o default aba
else
    complete -F _aba_targets -o bashdefault -o default aba
fi
"#;

/// Fish: the names as the arguments of `--target`, next to the generated option.
const FISH_TARGETS: &str = r#"
# aba: complete target names from the inventory after --target/-t (`aba targets --names`).
complete -c aba -n "__fish_seen_subcommand_from check preflight run calibrate unlock" -s t -l target -x -a "(aba targets --names 2>/dev/null)"
"#;

/// The completion script for `shell`.
pub fn script(shell: CompletionShell) -> String {
    let mut command = Cli::command();
    let mut out = Vec::new();
    let (generator, extra) = match shell {
        CompletionShell::Bash => (Shell::Bash, BASH_TARGETS),
        CompletionShell::Zsh => (Shell::Zsh, ""),
        CompletionShell::Fish => (Shell::Fish, FISH_TARGETS),
    };
    clap_complete::generate(generator, &mut command, "aba", &mut out);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push_str(extra);
    text
}

/// `aba completions SHELL`: the script, on stdout.
pub fn completions(shell: CompletionShell) -> Result<u8, Error> {
    print!("{}", script(shell));
    Ok(exit_code::OK)
}

/// `aba targets --names [--targets FILE]`: every target name, `local` first, one per line.
pub fn target_names(targets: Option<&Path>) -> Result<u8, Error> {
    let inventory = Inventory::discover(targets)?;
    println!("{LOCAL}");
    for name in inventory.targets.keys() {
        println!("{name}");
    }
    Ok(exit_code::OK)
}
