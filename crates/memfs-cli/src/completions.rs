//! `memfs completions SHELL`: a completion script for a shell, from the same definitions as
//! `--help`.

use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

/// Writes the script for `args.shell` to stdout. `command` is memfs's whole command line
/// definition (passed in: the parser's module is the one that names this one).
pub(crate) fn run(mut command: clap::Command, args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "memfs", &mut out);
    crate::output::stdout(&out)?;
    Ok(())
}
