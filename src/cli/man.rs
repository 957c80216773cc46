//! `aba man [--out DIR]`: the manual page, generated from the clap definition
//! (`clap_mangen`) so that it says what `aba --help` says.

use std::path::Path;

use clap::CommandFactory;

use crate::{
    cli::Cli,
    error::{Error, exit_code},
};

/// The roff text of `aba(1)`.
pub fn page() -> Result<String, Error> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|source| Error::Output {
            what: "the man page".to_owned(),
            source,
        })?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `aba man`: `aba(1)` on stdout; with `--out DIR`, `aba.1` and one `aba-COMMAND.1` per
/// command written into DIR (which must exist).
pub fn man(out: Option<&Path>) -> Result<u8, Error> {
    match out {
        None => print!("{}", page()?),
        Some(dir) => {
            let mut command = Cli::command().disable_help_subcommand(true);
            command.build();
            write_pages(command, dir)?;
            println!("wrote {}", dir.join("aba.1").display());
        }
    }
    Ok(exit_code::OK)
}

/// Writes the page of `command` and of each of its visible subcommands into `dir`, as
/// `clap_mangen::generate_to` names them, each atomically and never through a link.
fn write_pages(command: clap::Command, dir: &Path) -> Result<(), Error> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub.clone(), dir)?;
    }
    let man = clap_mangen::Man::new(command);
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)
        .and_then(|()| crate::results::atomic::write_atomic_no_link(&path, &page))
        .map_err(|source| Error::Output {
            what: format!("the man page {}", path.display()),
            source,
        })
}
