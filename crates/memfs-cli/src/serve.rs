//! `memfs serve`: Serve the memory tool as a JSON endpoint over HTTP, behind bearer tokens.

use clap::Args;

use crate::cli::StoreArgs;

/// Arguments of `memfs serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {}

pub(crate) async fn run(_store: &StoreArgs, _args: ServeArgs) -> anyhow::Result<()> {
    anyhow::bail!("memfs serve is not built yet")
}
