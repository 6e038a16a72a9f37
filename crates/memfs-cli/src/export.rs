//! `memfs export`: Write the store's /memories tree out as a plain folder.

use clap::Args;

use crate::cli::StoreArgs;

/// Arguments of `memfs export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {}

pub(crate) async fn run(_store: &StoreArgs, _args: ExportArgs) -> anyhow::Result<()> {
    anyhow::bail!("memfs export is not built yet")
}
