//! `memfs man`: the manual page (roff), from the same definitions as `--help`.

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct ManArgs {}

/// Writes the page to stdout: `memfs man > memfs.1`, or `memfs man | man -l -`.
pub(crate) fn run(command: clap::Command, _args: &ManArgs) -> anyhow::Result<()> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    crate::output::stdout(&out)?;
    Ok(())
}
