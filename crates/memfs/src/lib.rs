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
//! [`Memfs`] is `Send + Sync` and cheap to share: many tasks can call it at once; mutations
//! commit by compare-and-swap and re-run on a lost race, so none is lost.
//!
//! Every commit is kept with its parent, time, actor and command: [`history`] reads it back
//! (`log`, `show`, `diff`), restores from it (`restore`, `undo`, themselves commits), verifies
//! the store (`check`) and applies retention (`gc`).

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod access;
#[cfg(feature = "agent")]
pub mod agent;
mod engine;
mod error;
mod expire;
mod export;
pub mod history;
#[cfg(feature = "http")]
pub mod http;
mod import;
mod keys;
#[cfg(feature = "mcp")]
pub mod mcp;
mod policy;
pub mod protocol;
mod purge;
mod url;

pub use access::FLUSH_AFTER;
pub use engine::{Memfs, OpenOptions, Stats};
pub use error::{Error, error_chain};
pub use expire::{Expired, format_day, parse_day};
pub use export::Exported;
pub use import::{Conflict, ConflictKind, Entry, ImportOptions, Imported, render_imported};
pub use memfs_core::{Command, Dialect, ToolResult};
pub use memfs_core::{Day, Policy, PolicyError, SensitiveMode, parse_days};
pub use memfs_crypt::{Credential, KdfParams, KeyFile, SlotId, SlotKind};
pub use memfs_store::PurgeReport;
pub use memfs_store::cloud::parse_duration;
pub use policy::PolicyChanged;
pub use purge::render_purged;
pub use url::{Location, redact};
