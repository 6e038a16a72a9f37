//! The top-level parser: the global options ([`StoreArgs`]) and one variant per subcommand,
//! whose help is written here; each subcommand's own arguments live in its file, with the code
//! that runs it.

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config;
use crate::store::StoreArgs;
use crate::{
    agent, cat, check, completions, diff, exec, expire, export, gc, import, info, init, key, log, ls, man, mcp, policy,
    purge, restore, serve, show, tree, ui, undo,
};

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

    /// Whether `--dialect` (or MEMFS_DIALECT) was given: if not, a named store's wins.
    #[arg(skip)]
    dialect_given: bool,

    /// Whether `exec --max-line-bytes` (or MEMFS_MAX_LINE_BYTES) was given: if not, a named
    /// store's wins.
    #[arg(skip)]
    max_line_bytes_given: bool,
}

// The doc comments are the help text: `[REDACTED:custom:NAME]` in `policy`'s is what a
// redaction looks like, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Run memory-tool calls read as JSON lines from stdin, one JSON answer line each.
    ///
    /// Each input line is a tool input ({"command": "view", "path": "/memories"}) or a whole
    /// tool_use block ({"type":"tool_use","id":"toolu_1","name":"memory","input":{…}}).
    /// Answers: {"content": "…", "is_error": false} for a bare input, and
    /// {"type":"tool_result","tool_use_id":"toolu_1","content":"…","is_error":false} for a
    /// block. A line that is not JSON gets an error line; the stream goes on.
    Exec(exec::ExecArgs),
    /// Create a new encrypted store, protected by a passphrase, a new key file, or a key kept
    /// outside memfs (the OS keychain, a cloud KMS, an age recipient).
    ///
    /// With --key-file PATH, a new random key file is written to PATH (mode 0600; it must not
    /// exist). With --keychain, --aws-kms, --gcp-kms, --azure-key-vault or --age-recipient, the
    /// slot's key is kept there instead. Otherwise the passphrase comes from --passphrase-file,
    /// MEMFS_PASSPHRASE, or is asked for twice on the terminal. Add more ways in with `memfs key
    /// add`.
    Init(init::InitArgs),
    /// Show the history, newest first.
    ///
    /// One entry per commit: `@GENERATION ID TIME ACTOR COMMAND`, where ID is the first 12 hex
    /// digits of the commit id, TIME is RFC 3339 in UTC and ACTOR is `-` when none was given;
    /// then one indented line per change: `A PATH` (created), `M PATH` (modified), `D PATH`
    /// (deleted), `R FROM -> TO` (renamed).
    #[command(after_long_help = REVISIONS)]
    Log(log::LogArgs),
    /// Print a commit, or a file or directory as it was at a commit.
    ///
    /// `memfs show REV` prints the commit as `memfs log` does; `memfs show REV:PATH` prints a
    /// file's content exactly as stored, or a directory's entries one per line, directories
    /// ending in `/`.
    #[command(after_long_help = REVISIONS)]
    Show(show::ShowArgs),
    /// The store at a glance: where, format, files and bytes, the newest commit, key slots and
    /// the policy settings that differ from the defaults.
    Info(info::InfoArgs),
    /// List a directory's entries (directories end in `/`), as of HEAD or --at REV|TIME.
    Ls(ls::LsArgs),
    /// Print a file's content exactly as stored, as of HEAD or --at REV|TIME.
    Cat(cat::CatArgs),
    /// Draw a directory and everything below it, as of HEAD or --at REV|TIME, with a count.
    Tree(tree::TreeArgs),
    /// List the files that differ between two commits.
    ///
    /// One line per file, in tree order: `A PATH` (added), `M PATH` (modified), `D PATH`
    /// (deleted); an empty directory that appears or disappears ends in `/`. With --patch, each
    /// file is followed by its unified diff, headed `--- @GEN:PATH` and `+++ @GEN:PATH`.
    #[command(after_long_help = REVISIONS)]
    Diff(diff::DiffArgs),
    /// Make the whole tree, or PATH, what it was at a revision or a time, as a new commit.
    ///
    /// Nothing is committed when it already is. Older commits stay in history.
    #[command(after_long_help = REVISIONS)]
    Restore(restore::RestoreArgs),
    /// Undo the newest commit, as a new commit whose tree is the one before it.
    ///
    /// Undoing an undo redoes.
    Undo(undo::UndoArgs),
    /// Verify every object reachable from the head; exit with status 1 on any problem.
    ///
    /// The head, every commit back to the first (or the retention horizon) and every directory
    /// of their trees are opened and authenticated; every file content is checked for presence
    /// and exact size, or, with --read-data, opened and compared with its id. Each bad object
    /// is reported by name.
    Check(check::CheckArgs),
    /// Apply retention and delete unreachable objects, safely while other writers run.
    ///
    /// Without --keep-days or --keep-commits all history is kept. An object found unreachable
    /// is first recorded as pending; a later gc deletes it once it has been pending for the
    /// grace period and is still unreachable, so a writer's new objects (reachable within
    /// seconds) are never deleted. With --grace 0, one run deletes every unreachable object
    /// (writers running at the same time are still safe: gc fences them).
    Gc(gc::GcArgs),
    /// List, add or remove the key slots that unlock the store; rotate, reseal or shred its keys.
    ///
    /// Each slot (a passphrase or a key file) reaches the store's root key. Adding or removing a
    /// slot rewrites only the small `memfs.keys` object and records the change in the history;
    /// no data is touched. Removing a slot revokes nobody who kept a copy of the keys: `key
    /// remove ID --rotate` does (a new root and key epoch the removed slot never held), and `key
    /// reseal` seals what was written before under the new keys. After a purge, `key shred`
    /// destroys the keys of the copies kept elsewhere. Changes are unlocked with the usual
    /// options (MEMFS_PASSPHRASE, --passphrase-file, --key-file).
    #[command(subcommand)]
    Key(key::KeyCommand),
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
    Policy(policy::PolicyCommand),
    /// Remove files nobody has read or written for a while, as one commit.
    ///
    /// A file's last-access day is updated when it is viewed or written (recorded with the next
    /// commit, or at the end of a `memfs exec` session). Expired files stay in history
    /// (`memfs show`, `memfs restore`) until `memfs gc` retention drops them; to erase a file
    /// from history too, use `memfs purge`. MEMFS_TODAY=YYYY-MM-DD sets the day used as today.
    Expire(expire::ExpireArgs),
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
    Purge(purge::PurgeArgs),
    /// Serve the memory tool over MCP (Model Context Protocol), for Claude Code, Claude Desktop
    /// and other MCP clients: stdio by default, streamable HTTP with --http ADDR.
    Mcp(mcp::McpArgs),
    /// Serve the memory tool as a JSON endpoint over HTTP, for fleets in any language.
    Serve(serve::ServeArgs),
    /// Talk to Claude with this store as its memory: the Messages API loop.
    Agent(agent::AgentArgs),
    /// See what the store remembers, who changed it, and put it right, in a browser.
    ///
    /// A local web app served by memfs itself (nothing loaded from elsewhere), opened through
    /// a one-time address it prints; the same store, key and --namespace options as every
    /// command, and every change a commit by --actor (default: the OS user).
    Ui(ui::UiArgs),
    /// Copy a plain folder of memory files into the store's /memories, as one commit.
    ///
    /// Every file goes through the same checks as a `create`: the path rules, the size limits
    /// and the sensitive-data filter of the store's policy (a warning is printed on stderr per
    /// file). All or nothing: a symbolic link anywhere, a file that is not UTF-8 text, a name the
    /// store refuses, a file that exists in the store (without --overwrite) or one the policy
    /// refuses makes the whole import fail, naming the path, and nothing is written. Empty
    /// folders are imported too; files already in the store with the same content are left
    /// alone.
    Import(import::ImportArgs),
    /// Write the store's /memories tree out as a plain folder.
    ///
    /// The files leave the encrypted store as plaintext: DIR is created 0700, files 0600,
    /// folders 0700, and a warning says so on stderr. `memfs import DIR` brings the same tree
    /// back.
    Export(export::ExportArgs),
    /// Print a completion script for a shell.
    ///
    /// bash: `memfs completions bash > ~/.local/share/bash-completion/completions/memfs`;
    /// zsh: `memfs completions zsh > ~/.zfunc/_memfs` (with ~/.zfunc in $fpath);
    /// fish: `memfs completions fish > ~/.config/fish/completions/memfs.fish`.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff): `memfs man | man -l -`, or `memfs man > memfs.1`.
    Man(man::ManArgs),
}

/// Runs one subcommand's `run` with the global options and its own arguments.
/// A macro because each `run` is its own future type: the list below is the one place that
/// pairs a variant with its module.
macro_rules! dispatch {
    ($command:expr, $store:expr; $($variant:ident => $module:ident),* $(,)?) => {
        match $command {
            $(Commands::$variant(args) => $module::run($store, args).await,)*
            Commands::Completions(_) | Commands::Man(_) => unreachable!("answered before any store"),
        }
    };
}

impl Cli {
    /// Parses the command line and the environment, where an empty `MEMFS_…` variable counts
    /// as unset (`MEMFS_KEY_FILE=` in a script that clears it is no key file, not an error).
    pub(crate) fn try_parse_env() -> Result<Self, clap::Error> {
        let mut matches: ArgMatches = without_empty_env(globals_once(Cli::command())).try_get_matches()?;
        let given = |id: &str| {
            matches.subcommand().is_some_and(|(_, sub)| {
                sub.ids().any(|i| i == id)
                    && sub.value_source(id).is_some_and(|s| s != clap::parser::ValueSource::DefaultValue)
            })
        };
        let (dialect_given, max_line_bytes_given) = (given("dialect"), given("max_line_bytes"));
        let mut cli = Cli::from_arg_matches_mut(&mut matches)?;
        cli.dialect_given = dialect_given;
        cli.max_line_bytes_given = max_line_bytes_given;
        Ok(cli)
    }

    /// `--store NAME`: the named store's URL, options and key source, under what the command
    /// line gives (see [`config`]).
    fn resolve_named_store(&mut self) -> anyhow::Result<()> {
        let Some(name) = self.store.store.clone().filter(|s| config::is_name(s)) else { return Ok(()) };
        let named = config::named(&name)?;
        let store = &mut self.store;
        store.store = Some(named.url);
        // Later options win: the table's first, then the command line's.
        let given = std::mem::take(&mut store.store_options);
        store.store_options = named.options.into_iter().chain(given).collect();
        store.namespace = store.namespace.take().or(named.namespace);
        if store.key_file.is_none() && store.passphrase_file.is_none() && store.passphrase_command.is_none() {
            store.key_file = named.key_file;
            store.passphrase_file = named.passphrase_file;
            store.passphrase_command = named.passphrase_command;
        }
        store.age_identity = store.age_identity.take().or(named.age_identity);
        if store.actor.is_empty() {
            store.actor = named.actor.unwrap_or_default();
        }
        if let (false, Some(dialect)) = (self.dialect_given, named.dialect) {
            let dialect = crate::value::parse_dialect(&dialect).map_err(|_| {
                anyhow::anyhow!("store {name}: dialect {dialect:?}: expected `spec`, `python-sdk` or `typescript-sdk`")
            })?;
            match &mut self.command {
                Commands::Exec(a) => a.dialect = dialect,
                Commands::Mcp(a) => a.dialect = dialect,
                Commands::Serve(a) => a.dialect = dialect,
                Commands::Agent(a) => a.dialect = dialect,
                _ => {}
            }
        }
        if let (false, Some(size), Commands::Exec(a)) =
            (self.max_line_bytes_given, named.max_line_bytes, &mut self.command)
        {
            a.max_line_bytes = crate::value::parse_line_bound(&size).map_err(|_| {
                anyhow::anyhow!(
                    "store {name}: max_line_bytes {size:?}: expected a size such as 64MiB, 512MiB or 4096 (bytes)"
                )
            })?;
        }
        Ok(())
    }

    /// Runs the command given.
    pub(crate) async fn run(mut self) -> anyhow::Result<()> {
        self.resolve_named_store()?;
        let store = &self.store;
        // These two describe the command line itself, not a store.
        match &self.command {
            Commands::Completions(args) => return completions::run(Cli::command(), args),
            Commands::Man(args) => return man::run(Cli::command(), args),
            _ => {}
        }
        dispatch!(self.command, store;
            Exec => exec, Init => init, Info => info, Log => log, Show => show, Ls => ls, Cat => cat, Tree => tree,
            Diff => diff, Restore => restore, Check => check, Gc => gc, Key => key, Policy => policy,
            Expire => expire, Purge => purge, Mcp => mcp, Serve => serve, Agent => agent, Ui => ui, Import => import,
            Export => export, Undo => undo)
    }
}

/// `command` and its subcommands, with no environment variable for an argument whose variable
/// is set but empty. (clap reads the variables when the command is built; `env(None)` forgets
/// it.)
fn without_empty_env(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| match arg.get_env().and_then(std::env::var_os) {
            Some(value) if value.is_empty() => arg.env(None),
            _ => arg,
        })
        .mut_subcommands(without_empty_env)
}

/// The global options described once, on `memfs --help`: a subcommand's page shows its own
/// options, then one line naming the global ones. Every subcommand still takes them: hidden
/// copies stand where clap would propagate the shown ones. Completions and the man page are
/// made from the definitions as they are.
fn globals_once(command: clap::Command) -> clap::Command {
    let globals: Vec<clap::Arg> = command.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    // Named in lines of at most 100 columns, as clap wraps its own.
    let mut lines: Vec<String> = Vec::new();
    for long in globals.iter().filter_map(|a| a.get_long()) {
        match lines.last_mut() {
            Some(line) if line.len() + long.len() + 4 <= 100 => line.push_str(&format!(", --{long}")),
            _ => lines.push(format!("  --{long}")),
        }
    }
    let names = lines.join(",\n");
    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{{all-args}}\n\n\
         Global options (described in `memfs --help`):\n{names}{{after-help}}"
    );
    command.mut_subcommands(|sub| hide_globals(sub, &globals, &template))
}

fn hide_globals(sub: clap::Command, globals: &[clap::Arg], template: &str) -> clap::Command {
    let sub = globals.iter().fold(sub, |sub, arg| sub.arg(arg.clone().hide(true)));
    sub.help_template(template.to_owned()).mut_subcommands(|sub| hide_globals(sub, globals, template))
}

/// How revisions are written, shown under `--help` of the commands that take one.
const REVISIONS: &str = "\
Revisions:
  HEAD          the newest commit
  HEAD~N        N commits before the newest (HEAD~ is HEAD~1)
  @N            the commit of generation N (the first commit is @1; see `memfs log`)
  0a1b2c3d...   the commit whose id starts with these hex digits (at least 8)

Times (--at of restore, ls, cat, tree and export):
  2025-06-01T12:00:00Z   RFC 3339, any offset (a space may replace the T)
  2025-06-01T12:00       without an offset: UTC
  2025-06-01             a whole day, UTC
  1748779200             unix seconds (refused if the digits also start a commit id)
  A time names all it leaves out: without a fraction it covers its whole second, without
  seconds its whole minute, a date its whole day. The newest commit made at or before the end
  of it is used.";
