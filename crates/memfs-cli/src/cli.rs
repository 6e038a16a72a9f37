//! Command-line arguments.

use clap::{Args, Parser, Subcommand};
use memfs::Dialect;

/// memfs: an encrypted, content-addressed store for Claude's memory tool.
///
/// memfs executes the memory tool's commands (view, create, str_replace, insert, delete,
/// rename) on a virtual /memories tree and answers with the exact strings Claude expects.
#[derive(Debug, Parser)]
#[command(name = "memfs", version, about, long_about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Commands,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Run memory-tool calls read as JSON lines from stdin, one JSON answer line each.
    ///
    /// Each input line is a tool input ({"command": "view", "path": "/memories"}) or a whole
    /// tool_use block ({"type":"tool_use","id":"toolu_1","name":"memory","input":{…}}).
    /// Answers: {"content": "…", "is_error": false} for a bare input, and
    /// {"type":"tool_result","tool_use_id":"toolu_1","content":"…","is_error":false} for a
    /// block. A line that is not JSON gets an error line; the stream goes on.
    Exec(ExecArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// Which answer strings to use: `spec` (the documentation page) or `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT")]
    pub(crate) dialect: Dialect,

    /// The store. `memory://` is an empty store that lives as long as the process.
    #[arg(long, default_value = "memory://", env = "MEMFS_STORE")]
    pub(crate) store: String,
}
