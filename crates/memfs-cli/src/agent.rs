//! `memfs agent`: Talk to Claude with this store as its memory: the Messages API loop.

use clap::Args;

use crate::cli::StoreArgs;

/// Arguments of `memfs agent`.
#[derive(Debug, Args)]
pub(crate) struct AgentArgs {}

pub(crate) async fn run(_store: &StoreArgs, _args: AgentArgs) -> anyhow::Result<()> {
    anyhow::bail!("memfs agent is not built yet")
}
