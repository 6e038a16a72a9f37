//! `memfs import`: Copy a plain folder of memory files into the store, as one commit.

use clap::Args;

use crate::cli::StoreArgs;

/// Arguments of `memfs import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {}

pub(crate) async fn run(_store: &StoreArgs, _args: ImportArgs) -> anyhow::Result<()> {
    anyhow::bail!("memfs import is not built yet")
}
