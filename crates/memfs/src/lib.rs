//! memfs: an encrypted, content-addressed store behind Claude's memory tool.
//!
//! Open a store, hand it the tool's `input` (or a whole `tool_use` block), get the tool result:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use memfs::{Dialect, Memfs};
//! let memfs = Memfs::ephemeral(Dialect::Spec)?;
//! let input = serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "hi"});
//! let result = memfs.call(&input).await;
//! assert_eq!(result.content, "File created successfully at: /memories/a.md");
//! assert!(!result.is_error);
//! # Ok(()) }
//! ```
//!
//! The workspace's module map: `crates/README.md`.
//! # A persistent store from a URL and a key
//!
//! A store lives at a URL (`file:///path`, `s3://bucket/prefix`, `gs://…`, `az://…`; see
//! [`Location`] for options and namespaces) and is unlocked by a [`Credential`]: a key file or a
//! passphrase. [`Memfs::init`] creates it once; [`Memfs::open`] opens it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use memfs::{Credential, Dialect, KdfParams, KeyFile, Memfs, OpenOptions, StateDir};
//!
//! let dir = tempfile::tempdir()?;
//! let url = format!("file://{}", dir.path().join("store").display());
//! let key = KeyFile::generate()?;
//! key.write_new(&dir.path().join("memfs.key"))?; // mode 0600; keep it apart from the store
//!
//! // Once: create the store, protected by the key file (KdfParams only matter for passphrases).
//! Memfs::init(url.as_str(), &Credential::KeyFile(key), KdfParams::DEFAULT).await?;
//!
//! // Every time: open it with the key.
//! let key = KeyFile::read(&dir.path().join("memfs.key"))?;
//! let options = OpenOptions {
//!     dialect: Dialect::Spec,
//!     credential: Some(Credential::KeyFile(key)),
//!     // Where the newest commit seen is remembered (rollback and fork detection); by default
//!     // `StateDir::Platform`, `$XDG_STATE_HOME/memfs`.
//!     state_dir: StateDir::At(dir.path().join("state")),
//!     ..Default::default()
//! };
//! let memfs = Memfs::open(url.as_str(), options).await?;
//! let result = memfs.call(&serde_json::json!({"command": "view", "path": "/memories"})).await;
//! assert_eq!(
//!     result.content,
//!     "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories"
//! );
//! # Ok(()) }
//! ```
//!
//! # Typed commands and `tool_use` blocks
//!
//! [`Command`] is the typed form of a tool input; [`Memfs::execute`] runs it, and returns an
//! [`Error`] only when the store itself fails (a command the model got wrong is an `is_error`
//! result, as with [`Memfs::call`]). [`protocol::answer`] takes a bare input or a whole
//! `tool_use` block and answers exactly as `memfs exec` does.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use memfs::{Command, Dialect, Memfs};
//! let memfs = Memfs::ephemeral(Dialect::Spec)?;
//! let create = Command::Create { path: "/memories/todo.md".into(), file_text: "- ship it\n".into() };
//! assert!(!memfs.execute(&create).await?.is_error);
//! let view = Command::View { path: "/memories/todo.md".into(), view_range: None };
//! assert_eq!(memfs.execute(&view).await?.content, "Here's the content of /memories/todo.md with line numbers:\n     1\t- ship it\n     2\t");
//!
//! let block = serde_json::json!({"type": "tool_use", "id": "toolu_01", "name": "memory",
//!                                "input": {"command": "delete", "path": "/memories/todo.md"}});
//! let answer = serde_json::to_value(memfs::protocol::answer(&memfs, &block).await)?;
//! assert_eq!(answer, serde_json::json!({"type": "tool_result", "tool_use_id": "toolu_01",
//!     "content": "Successfully deleted /memories/todo.md", "is_error": false}));
//! # Ok(()) }
//! ```
//!
//! # One handle, many tasks
//!
//! [`Memfs`] is `Send + Sync`: share it in an `Arc`. Mutations commit by compare-and-swap and
//! re-run on a lost race, so none is lost, whether the racers are tasks of one process or
//! processes on many machines sharing a bucket.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use memfs::{Dialect, Memfs};
//! let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec)?);
//! let tasks: Vec<_> = (0..8)
//!     .map(|i| {
//!         let memfs = Arc::clone(&memfs);
//!         tokio::spawn(async move {
//!             let input = serde_json::json!({"command": "create", "path": format!("/memories/{i}.md"), "file_text": "x"});
//!             memfs.call(&input).await
//!         })
//!     })
//!     .collect();
//! for task in tasks {
//!     assert!(!task.await?.is_error);
//! }
//! assert_eq!(memfs.stats().commits, 8);
//! # Ok(()) }
//! ```
//!
//! # Reports, not text
//!
//! Operations beyond the tool's commands return what they did as data ([`history::Restored`],
//! [`history::Undone`], [`Imported`], [`Expired`], [`PurgeReport`], …); how to say it is the
//! caller's (the `memfs` binary renders each in its own words).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use memfs::{Change, Dialect, Entry, ImportOptions, Memfs};
//! let memfs = Memfs::ephemeral(Dialect::Spec)?;
//! let entries = [Entry::File { path: "/memories/a.md".into(), text: "hi\n".into() }];
//! let imported = memfs.import(&entries, &ImportOptions { overwrite: false, source: "notes".into(), dry_run: false }, &()).await?;
//! assert_eq!((imported.generation, imported.new_dirs), (Some(1), 0));
//! assert_eq!(imported.changes, [Change::Created { path: "/memories/a.md".into() }]);
//!
//! let undone = memfs.undo(false).await?;
//! assert_eq!((undone.generation, undone.undone.generation), (Some(2), 1));
//! assert_eq!(undone.changes, [Change::Deleted { path: "/memories/a.md".into() }]);
//! # Ok(()) }
//! ```
//!
//! # Where agents meet memfs
//!
//! - [`mcp`]: the memory tool as an MCP server (stdio or streamable HTTP), `memfs mcp`;
//! - [`http`]: a JSON endpoint behind bearer tokens bound to namespaces, `memfs serve`;
//! - [`agent`]: the Messages API loop with this store as Claude's memory, `memfs agent`;
//! - [`Memfs::import`] and [`Memfs::export`]: a plain tree of [`Entry`]s in and out, and
//!   [`read_folder`] and [`FolderTarget`] to read and write it as a folder on disk without
//!   following links, `memfs import`/`export`.
//!
//! Every commit is kept with its parent, time, actor and command: [`history`] reads it back
//! (`log`, `show`, `diff`), restores from it (`restore`, `undo`, themselves commits), verifies
//! the store (`check`) and applies retention (`gc`).
//!
//! # Modules
//!
//! - `access`: last-access days of reads, recorded with the next commit or flushed in one;
//! - `conflict`: [`Conflict`], [`ConflictKind`]: why a file of an import was refused;
//! - [`agent`] (feature `agent`): the Messages API loop with this store as Claude's memory;
//! - `browse`: looking without writing: a directory or a subtree at a revision ([`Listed`]);
//! - `contention`: the wait after a lost race, backoff in rounds of the store at hand;
//! - `edit`: a person's edit of a whole file, written only over the version it started from;
//! - `engine`: [`Memfs`], [`OpenOptions`]: opening a store and running tool commands;
//! - `error`: [`Error`], the library's errors (they name no CLI flag);
//! - `expire`: files unused for a number of days leave the live tree ([`Expired`]);
//! - `export`: the live tree read out as plain entries ([`Exported`]);
//! - `folder`: a folder on disk read into entries and written from them, following no link;
//! - [`history`]: log, show, diff, restore, undo, check and gc, as reports;
//! - [`http`] (feature `http`): `POST /v1/memory` behind bearer tokens bound to namespaces;
//! - `import`: many files into `/memories` as one commit ([`Imported`]);
//! - `info`: the store at a glance ([`Info`]);
//! - `keys`: key slots of a persistent store: list, add, remove;
//! - [`mcp`] (feature `mcp`): the memory tool as an MCP server, stdio or streamable HTTP;
//! - `pending`: reads whose last-access days are not recorded yet;
//! - `policy`: the store's policy, read at every head, changed by a commit of its own;
//! - [`protocol`]: the `memfs exec` line protocol;
//! - `purge`: a path erased from the live tree and from all history ([`PurgeReport`]);
//! - `races` (tests only): every mutating operation survives a lost race and a racing gc;
//! - `search`: file names and lines that contain a text, over decrypted content ([`Found`]);
//! - `transaction`: the transaction driver, the one place that commits by compare-and-swap:
//!   every mutation is a plan function handed to it;
//! - [`ui`] (feature `ui`): `memfs ui`, the browser viewer and editor of a store;
//! - `url`: [`Location`], a store's URL, backend options and namespace; redaction.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod access;
#[cfg(feature = "agent")]
pub mod agent;
mod browse;
mod conflict;
mod contention;
mod edit;
mod engine;
mod error;
mod expire;
mod export;
mod folder;
pub mod history;
#[cfg(feature = "http")]
pub mod http;
mod import;
mod info;
mod keys;
#[cfg(feature = "mcp")]
pub mod mcp;
mod pending;
mod policy;
pub mod protocol;
mod purge;
#[cfg(test)]
mod races;
mod search;
mod transaction;
#[cfg(feature = "ui")]
pub mod ui;
mod url;

pub use access::FLUSH_AFTER;
pub use browse::Listed;
pub use conflict::{Conflict, ConflictKind};
pub use edit::{Edited, File};
pub use engine::{Memfs, OpenOptions};
pub use error::{Error, ErrorKind, error_chain};
pub use expire::Expired;
pub use export::Exported;
pub use folder::{FolderError, FolderTarget, read_folder};
pub use import::{Entry, ImportOptions, Imported};
pub use info::Info;
pub use keys::RemoveKey;
pub use memfs_core::{Change, Command, Dialect, ToolResult};
pub use memfs_core::{Day, Policy, PolicyError, SensitiveMode, Totals, parse_bytes, parse_days};
pub use memfs_crypt::{
    Credential, Custodian, Custody, CustodyError, CustodyFailure, CustodyKek, Error as CryptError, KdfParams, KeyFile,
    SecretString, SlotId, SlotKind, SlotNote, join_ids,
};
pub use memfs_store::{
    Confirmed, Error as StoreError, FORMAT_VERSION, PurgeOptions, PurgeReport, RotateKeys, Rotation, Shred, ShredKeys,
    StateDir,
};
pub use policy::PolicyChanged;
pub use search::{Found, FoundLine};
pub use transaction::Stats;
pub use url::{Location, redact};
