//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use memfs::Dialect;

use crate::parse_error::Refused;

/// memfs: an encrypted, content-addressed store for Claude's memory tool.
///
/// memfs executes the memory tool's commands (view, create, str_replace, insert, delete,
/// rename) on a virtual /memories tree kept encrypted in a folder, a bucket (S3, GCS, Azure) or
/// memory, and answers with the exact strings Claude expects: to JSON lines (`exec`), MCP
/// clients such as Claude Code and Claude Desktop (`mcp`), programs in any language over HTTP
/// (`serve`), or Claude itself through the Messages API (`agent`).
///
/// Without --store, commands use the default store in the platform data directory
/// ($XDG_DATA_HOME/memfs/default); `memfs exec` creates it, with a new key file, on first use.
///
/// Every change is a commit that records its parent, time, actor and command: `log`, `show`
/// and `diff` read history, `restore` and `undo` bring back a past state as a new commit,
/// `check` verifies every object and `gc` applies retention and frees space.
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
    /// Show the history, newest first.
    ///
    /// One entry per commit: `@GENERATION ID TIME ACTOR COMMAND`, where ID is the first 12 hex
    /// digits of the commit id, TIME is RFC 3339 in UTC and ACTOR is `-` when none was given;
    /// then one indented line per change: `A PATH` (created), `M PATH` (modified), `D PATH`
    /// (deleted), `R FROM -> TO` (renamed).
    #[command(after_long_help = REVISIONS)]
    Log(LogArgs),
    /// Print a commit, or a file or directory as it was at a commit.
    ///
    /// `memfs show REV` prints the commit as `memfs log` does; `memfs show REV:PATH` prints a
    /// file's content exactly as stored, or a directory's entries one per line, directories
    /// ending in `/`.
    #[command(after_long_help = REVISIONS)]
    Show(ShowArgs),
    /// List the files that differ between two commits.
    ///
    /// One line per file, in tree order: `A PATH` (added), `M PATH` (modified), `D PATH`
    /// (deleted); an empty directory that appears or disappears ends in `/`. With --patch, each
    /// file is followed by its unified diff, headed `--- @GEN:PATH` and `+++ @GEN:PATH`.
    #[command(after_long_help = REVISIONS)]
    Diff(DiffArgs),
    /// Make the whole tree, or PATH, what it was at a revision or a time, as a new commit.
    ///
    /// Nothing is committed when it already is. Older commits stay in history.
    #[command(after_long_help = REVISIONS)]
    Restore(RestoreArgs),
    /// Undo the newest commit, as a new commit whose tree is the one before it.
    ///
    /// Undoing an undo redoes.
    Undo,
    /// Verify every object reachable from the head; exit with status 1 on any problem.
    ///
    /// The head, every commit back to the first (or the retention horizon) and every directory
    /// of their trees are opened and authenticated; every file content is checked for presence
    /// and exact size, or, with --read-data, opened and compared with its id. Each bad object
    /// is reported by name.
    Check(CheckArgs),
    /// Apply retention and delete unreachable objects, safely while other writers run.
    ///
    /// Without --keep-days or --keep-commits all history is kept. An object found unreachable
    /// is first recorded as pending; a later gc deletes it once it has been pending for the
    /// grace period and is still unreachable, so a writer's new objects (reachable within
    /// seconds) are never deleted.
    Gc(GcArgs),
    /// List, add or remove the key slots that unlock the store.
    ///
    /// A store's master key is wrapped once per slot (a passphrase or a key file). Adding or
    /// removing a slot rewrites only the small `memfs.keys` object; no data is touched. Changes
    /// are unlocked with the usual options (MEMFS_PASSPHRASE, --passphrase-file, --key-file).
    #[command(subcommand)]
    Key(KeyCommand),
    /// Show or change the store's policy: size limits, view pagination, filter, expiration
    ///
    /// The policy is stored encrypted with the store and applies to every client. Each change
    /// is a commit (see `memfs log`). Keys:
    ///
    ///   max-file-bytes N|none             largest file (default 16 MiB)
    ///   max-store-bytes N|none            largest total of file contents (default 1 GiB)
    ///   max-files N|none                  most files (default 100000)
    ///   view-max-chars N|none             most characters one view returns (default 16000, at least 10000)
    ///   sensitive off|warn|redact|reject  what a write containing a secret gets (default warn)
    ///   expire-unused-after Nd|off        expire files unused for N days on their own (default off)
    ///   rule.NAME REGEX                   a custom sensitive-data detector, marked [REDACTED:custom:NAME]
    ///
    /// Sizes take the suffixes KiB, MiB, GiB, KB, MB and GB (`64KiB`).
    #[command(subcommand, verbatim_doc_comment)]
    Policy(PolicyCommand),
    /// Remove files nobody has read or written for a while, as one commit.
    ///
    /// A file's last-access day is updated when it is viewed or written (recorded with the next
    /// commit, or at the end of a `memfs exec` session). Expired files stay in history
    /// (`memfs show`, `memfs restore`) until `memfs gc` retention drops them; to erase a file
    /// from history too, use `memfs purge`. MEMFS_TODAY=YYYY-MM-DD sets the day used as today.
    Expire(ExpireArgs),
    /// Erase a file from the live tree and from all history (right to erasure).
    ///
    /// Every version the path ever held (followed through renames) is removed from every kept
    /// commit, along with the commands that carried its text, and so is every other path that
    /// held the same content in history only; then the objects that held it are deleted at
    /// once, a local folder's log is compacted, and memfs checks that none remains (exit status
    /// 1 if one does). Only the new purge commit still names the path.
    ///
    /// Live files elsewhere that hold the same content (equal contents are stored once) or
    /// that the path was renamed to are someone's data: purge refuses and names them, unless
    /// --all-copies erases them too. It shows what it will erase and asks first on a
    /// terminal; --yes skips the question (required when stdin is not a terminal).
    Purge(PurgeArgs),
    /// Serve the memory tool over MCP (Model Context Protocol), for Claude Code, Claude Desktop
    /// and other MCP clients: stdio by default, streamable HTTP with --http ADDR.
    Mcp(crate::mcp::McpArgs),
    /// Serve the memory tool as a JSON endpoint over HTTP, for fleets in any language.
    Serve(crate::serve::ServeArgs),
    /// Talk to Claude with this store as its memory: the Messages API loop.
    Agent(crate::agent::AgentArgs),
    /// Copy a plain folder of memory files into the store's /memories, as one commit.
    ///
    /// Every file goes through the same checks as a `create`: the path rules, the size limits
    /// and the sensitive-data filter of the store's policy (a warning is printed on stderr per
    /// file). All or nothing: a symbolic link anywhere, a file that is not UTF-8 text, a name the
    /// store refuses, a file that exists in the store (without --overwrite) or one the policy
    /// refuses makes the whole import fail, naming the path, and nothing is written. Empty
    /// folders are imported too; files already in the store with the same content are left
    /// alone.
    Import(crate::import::ImportArgs),
    /// Write the store's /memories tree out as a plain folder.
    ///
    /// The files leave the encrypted store as plaintext: DIR is created 0700, files 0600,
    /// folders 0700, and a warning says so on stderr. `memfs import DIR` brings the same tree
    /// back.
    Export(crate::export::ExportArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Print every setting, one `KEY VALUE` line each.
    Show,
    /// Set KEY to VALUE, as a commit.
    Set {
        /// The setting (see `memfs policy --help`).
        key: String,
        /// Its new value.
        value: String,
    },
    /// Put KEY back to its default, or remove the custom rule rule.NAME, as a commit.
    Unset {
        /// The setting.
        key: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ExpireArgs {
    /// How long unused, in days: `90d`.
    #[arg(long, value_name = "DAYS", value_parser = parse_days)]
    pub(crate) unused_for: memfs::Day,

    /// List what would expire; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

fn parse_days(s: &str) -> Result<memfs::Day, Refused> {
    memfs::parse_days(s).ok_or(Refused("expected a number of days such as 90d"))
}

#[derive(Debug, Args)]
pub(crate) struct PurgeArgs {
    /// The file or directory to erase (under /memories).
    pub(crate) path: String,

    /// Also erase the live files elsewhere that hold the same content or that the path was
    /// renamed to (without it, purge refuses and names them).
    #[arg(long)]
    pub(crate) all_copies: bool,

    /// Show what would be erased (paths, versions, commits, objects); change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Do not ask before erasing (needed when stdin is not a terminal).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Print each slot as `ID KIND` (passphrase or key-file).
    List,
    /// Add a slot: a new key file (--new-key-file) or a new passphrase (--new-passphrase-file,
    /// or asked for twice on the terminal).
    Add(KeyAddArgs),
    /// Remove the slot with this id (the last slot is never removed).
    Remove {
        /// The slot's id, as `memfs key list` prints it.
        id: u32,
    },
}

#[derive(Debug, Args)]
pub(crate) struct KeyAddArgs {
    /// Create a new random key file here (mode 0600; it must not exist) and add a slot for it.
    #[arg(long, value_name = "PATH", conflicts_with = "new_passphrase_file")]
    pub(crate) new_key_file: Option<PathBuf>,

    /// Add a passphrase slot for the first line of this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) new_passphrase_file: Option<PathBuf>,

    /// Argon2id memory cost of a new passphrase slot, in KiB (default 65536 = 64 MiB).
    #[arg(long, value_name = "KIB", default_value_t = 65536)]
    pub(crate) kdf_memory_kib: u32,

    /// Argon2id iterations of a new passphrase slot.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) kdf_iterations: u32,

    /// Argon2id parallelism of a new passphrase slot.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub(crate) kdf_parallelism: u32,
}

/// How revisions are written, shown under `--help` of the commands that take one.
const REVISIONS: &str = "\
Revisions:
  HEAD          the newest commit
  HEAD~N        N commits before the newest (HEAD~ is HEAD~1)
  @N            the commit of generation N (the first commit is @1; see `memfs log`)
  0a1b2c3d...   the commit whose id starts with these hex digits (at least 8)

Times (restore --at):
  2025-06-01T12:00:00Z   RFC 3339, any offset; without a fraction it covers the whole second
  1748779200             unix seconds (refused if the digits also start a commit id)
  The newest commit made at or before the time is used.";

/// Which store, and how to unlock it. Shared by every command.
#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    /// The store: file:///absolute/path (an encrypted folder), s3://bucket/prefix,
    /// gs://bucket/prefix, az://container/prefix, or memory:// (ephemeral, for the life of the
    /// process). Default: the local store in $XDG_DATA_HOME/memfs/default.
    ///
    /// Cloud stores read the usual environment variables (AWS_*, GOOGLE_*, AZURE_*); see
    /// docs/CLOUD.md for AWS, GCS, Azure, R2 and MinIO.
    #[arg(long, global = true, env = "MEMFS_STORE", value_name = "URL")]
    pub(crate) store: Option<String>,

    /// An option of a cloud store, as KEY=VALUE (repeatable; wins over the environment), such
    /// as aws_endpoint=https://…, aws_region=eu-west-1, timeout=30s, max_retries=4. An unknown
    /// key is refused. Values are never printed.
    #[arg(long = "store-option", global = true, value_name = "KEY=VALUE", value_parser = parse_store_option)]
    pub(crate) store_options: Vec<(String, String)>,

    /// A tenant's namespace: its own store, with its own master key, under PREFIX/ns/NAME of
    /// the store URL. Each namespace is created with `memfs init`.
    #[arg(long, global = true, env = "MEMFS_NAMESPACE", value_name = "NAME")]
    pub(crate) namespace: Option<String>,

    /// Answer reads from a head up to this old (30s, 500ms, 2m) without asking the store: a
    /// warm read then costs no round trip, but may miss what other clients committed that
    /// long ago. Writes stay safe (compare-and-swap). Default: every command checks the head.
    #[arg(long, global = true, env = "MEMFS_MAX_STALENESS", value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) max_staleness: Option<std::time::Duration>,

    /// Also keep fetched objects (sealed, as stored) in this folder, so a new process reads
    /// them without a round trip; verified on every read. Default: memory only.
    #[arg(long, global = true, env = "MEMFS_CACHE_DIR", value_name = "PATH")]
    pub(crate) cache_dir: Option<PathBuf>,

    /// Read the passphrase from the first line of this file. (Or set MEMFS_PASSPHRASE.)
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "key_file")]
    pub(crate) passphrase_file: Option<PathBuf>,

    /// Unlock with this key file (32 random bytes). For `init`: where to create it.
    #[arg(long, global = true, env = "MEMFS_KEY_FILE", value_name = "PATH")]
    pub(crate) key_file: Option<PathBuf>,

    /// Accept the store's head even if it does not descend from the newest commit this
    /// client has seen (the answer to a "fork detected" or "rollback detected" error): give
    /// the commit id the error names (at least 8 hex digits). From then on that commit is the
    /// one remembered. Check what the store holds first (`memfs check`, `memfs log`).
    #[arg(long, global = true, env = "MEMFS_TRUST_HEAD", value_name = "COMMIT")]
    pub(crate) trust_head: Option<String>,

    /// The agent or user name recorded with every change.
    #[arg(long, global = true, env = "MEMFS_ACTOR", value_name = "NAME", default_value = "")]
    pub(crate) actor: String,
}

#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// Which answer strings to use: `spec` (the documentation page) or `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT", value_parser = parse_dialect)]
    pub(crate) dialect: Dialect,

    /// At the end, print on stderr what the session did: commands, commits, and conflicts
    /// (races for the head lost to another writer, each re-run on the new head).
    #[arg(long)]
    pub(crate) stats: bool,
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

#[derive(Debug, Args)]
pub(crate) struct LogArgs {
    /// Only commits that changed this path (or something below it).
    #[arg(value_name = "PATH")]
    pub(crate) path: Option<String>,

    /// At most this many commits.
    #[arg(short = 'n', long, value_name = "N")]
    pub(crate) limit: Option<usize>,

    /// One JSON object per line, with the full ids, the time in milliseconds and RFC 3339, the
    /// command as JSON and the changes.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// REV, or REV:PATH (for example HEAD~1:/memories/notes.md).
    #[arg(value_name = "REV[:PATH]")]
    pub(crate) spec: String,
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The older commit.
    #[arg(value_name = "REV")]
    pub(crate) from: String,

    /// The newer commit (default HEAD).
    #[arg(value_name = "REV")]
    pub(crate) to: Option<String>,

    /// Follow each file with its unified diff.
    #[arg(short, long)]
    pub(crate) patch: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The revision or time to restore from.
    #[arg(long, value_name = "REV|TIME")]
    pub(crate) at: String,

    /// The file or directory to restore (default: the whole tree). If it did not exist then,
    /// it is deleted.
    #[arg(value_name = "PATH")]
    pub(crate) path: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Also open every file content and verify it against its id.
    #[arg(long)]
    pub(crate) read_data: bool,
}

#[derive(Debug, Args)]
pub(crate) struct GcArgs {
    /// Keep the commits of the last N days (by the writers' clocks).
    #[arg(long, value_name = "N")]
    pub(crate) keep_days: Option<u64>,

    /// Keep the N newest commits (with --keep-days: keep what either keeps).
    #[arg(long, value_name = "N")]
    pub(crate) keep_commits: Option<u64>,

    /// Delete an unreachable object only once it has been pending this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub(crate) grace: u64,
}

/// Parses `KEY=VALUE` for --store-option; the message names the key only.
fn parse_store_option(s: &str) -> Result<(String, String), Refused> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(Refused("expected KEY=VALUE, as in aws_region=eu-west-1")),
    }
}

/// A dialect name; the error does not quote it (argument errors never show a value).
pub(crate) fn parse_dialect(s: &str) -> Result<Dialect, Refused> {
    s.parse().map_err(|_| Refused("expected `spec` or `python-sdk`"))
}

/// Parses `30s`, `500ms`, `2m` for --max-staleness.
pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, Refused> {
    memfs::parse_duration(s).ok_or(Refused("expected a duration such as 30s, 500ms or 2m"))
}
