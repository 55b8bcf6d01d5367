//! The command-line conventions of a Unix tool: `schedlab completions bash|zsh|fish`
//! (clap_complete) and `schedlab man` (clap_mangen), both generated from the same clap
//! definition as the parser, so they are current by construction.

use std::path::PathBuf;

use clap::CommandFactory;

use super::Cli;
use crate::output;

/// Arguments of `schedlab completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to print the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `schedlab man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write `schedlab.1` and one `schedlab-SUBCOMMAND.1` per sub-command into DIR (created
    /// when missing) instead of printing `schedlab.1` on stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Print the completion script of `args.shell` on stdout.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "schedlab", &mut script);
    Ok(output::write_stdout(&String::from_utf8_lossy(&script))?)
}

/// The man page of `cmd` (roff).
fn man_page(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    Ok(page)
}

/// Print `schedlab.1`, or write it and one page per sub-command into `--out`.
pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    cmd.build();
    let Some(dir) = &args.out else {
        let page = man_page(cmd)?;
        return Ok(output::write_stdout(&String::from_utf8_lossy(&page))?);
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        crate::error::InputError::with_key("--out", dir.display().to_string(), e.to_string())
    })?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        // After `build()` a sub-command's display name is `schedlab-NAME`: the page's title.
        let name = format!("schedlab-{}", sub.get_name());
        let page = man_page(sub.clone())?;
        output::write_atomic("--out", &dir.join(format!("{name}.1")), &page)?;
    }
    output::write_atomic("--out", &dir.join("schedlab.1"), &man_page(cmd)?)?;
    Ok(())
}
