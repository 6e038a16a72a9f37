//! `memfs mcp`: Serve the memory tool over MCP (stdio by default, or streamable HTTP with --http ADDR).

use clap::Args;

use crate::cli::StoreArgs;

/// Arguments of `memfs mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {}

pub(crate) async fn run(_store: &StoreArgs, _args: McpArgs) -> anyhow::Result<()> {
    anyhow::bail!("memfs mcp is not built yet")
}
