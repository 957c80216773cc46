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
            clap_mangen::generate_to(Cli::command(), dir).map_err(|source| Error::Output {
                what: format!("man pages into {}", dir.display()),
                source,
            })?;
            println!("wrote {}", dir.join("aba.1").display());
        }
    }
    Ok(exit_code::OK)
}
