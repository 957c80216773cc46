//! `aba new NAME [--from TEMPLATE]`: a first recipe (and a target inventory stub) to edit,
//! written by `scaffold`; this layer only says what was written and what comes next.

use std::path::Path;

use crate::{
    error::{Error, exit_code},
    scaffold::{Template, scaffold},
};

/// `aba new NAME [--from TEMPLATE]`, in the current directory: a stub `targets.toml` beside
/// the recipe is the one `aba` finds without `--targets`.
pub fn new(name: &str, template: Template) -> Result<u8, Error> {
    let written = scaffold(Path::new(""), name, template)?;
    let recipe = written.recipe.display();
    println!("wrote {recipe}");
    match &written.targets {
        Some(stub) => println!(
            "wrote {} (a target inventory stub: edit target `box`)",
            stub.display()
        ),
        None => println!("kept the existing targets.toml"),
    }
    if template.needs_switching_target() {
        println!(
            "next: edit the kernel releases, the workloads and the target, then\n  \
             aba check {recipe} --target box\n  aba preflight {recipe} --target box\n  \
             aba run {recipe} --target box"
        );
    } else {
        println!("next: aba run {recipe}   # runs here, on the built-in `local` target");
    }
    Ok(exit_code::OK)
}
