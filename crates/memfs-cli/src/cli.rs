//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use memfs::Dialect;

/// memfs: an encrypted, content-addressed store for Claude's memory tool.
///
/// memfs executes the memory tool's commands (view, create, str_replace, insert, delete,
/// rename) on a virtual /memories tree kept encrypted in a folder (or in memory), and answers
/// with the exact strings Claude expects.
///
/// Without --store, commands use the default store in the platform data directory
/// ($XDG_DATA_HOME/memfs/default); `memfs exec` creates it, with a new key file, on first use.
#[derive(Debug, Parser)]
#[command(name = "memfs", version, about, long_about)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) store: StoreArgs,

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
    /// Create a new encrypted store, protected by a passphrase or a new key file.
    ///
    /// With --key-file PATH, a new random key file is written to PATH (mode 0600; it must not
    /// exist). Otherwise the passphrase comes from --passphrase-file, MEMFS_PASSPHRASE, or is
    /// asked for twice on the terminal.
    Init(InitArgs),
}

/// Which store, and how to unlock it. Shared by every command.
#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    /// The store: file:///absolute/path (an encrypted folder) or memory:// (ephemeral, for the
    /// life of the process). Default: the local store in $XDG_DATA_HOME/memfs/default.
    #[arg(long, global = true, env = "MEMFS_STORE", value_name = "URL")]
    pub(crate) store: Option<String>,

    /// Read the passphrase from the first line of this file. (Or set MEMFS_PASSPHRASE.)
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "key_file")]
    pub(crate) passphrase_file: Option<PathBuf>,

    /// Unlock with this key file (32 random bytes). For `init`: where to create it.
    #[arg(long, global = true, env = "MEMFS_KEY_FILE", value_name = "PATH")]
    pub(crate) key_file: Option<PathBuf>,

    /// The agent or user name recorded with every change.
    #[arg(long, global = true, env = "MEMFS_ACTOR", value_name = "NAME", default_value = "")]
    pub(crate) actor: String,
}

#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// Which answer strings to use: `spec` (the documentation page) or `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT")]
    pub(crate) dialect: Dialect,
}

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Argon2id memory cost of a passphrase slot, in KiB (default 65536 = 64 MiB).
    #[arg(long, value_name = "KIB", default_value_t = 65536)]
    pub(crate) kdf_memory_kib: u32,

    /// Argon2id iterations of a passphrase slot.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) kdf_iterations: u32,

    /// Argon2id parallelism of a passphrase slot.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub(crate) kdf_parallelism: u32,
}
