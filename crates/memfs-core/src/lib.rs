//! The pure core of memfs: everything about the memory tool that needs no I/O.
//!
//! - [`MemoryPath`]: the only way a model-supplied path reaches the tree;
//! - [`Command`]: the six commands, parsed from the tool's `input` with field-naming errors;
//! - [`Tree`]: the virtual tree, persistent and lazily loaded by the caller;
//! - [`execute`]: runs a command, asking the caller for objects it lacks ([`Need`]) and
//!   returning the answer plus, for a mutation, the new tree and what changed;
//! - [`Policy`]: a store's safeguards (size limits, view pagination, the sensitive-data filter,
//!   expiration), enforced by [`execute_in`];
//! - [`touch`]: records last-access days of files read, batched into a later commit;
//! - [`graft()`]: puts a past tree's file or directory into the live tree (restores);
//! - [`render`] and [`size`]: every string of every [`Dialect`];
//! - [`sensitive`]: detectors of secrets and card numbers in text written to memory files;
//! - `test_support` (feature `test-support`): `MapResolver`, an in-memory [`Resolver`] for
//!   tests, benchmarks and fuzz targets.
//!
//! ```
//! use std::{collections::HashMap, sync::Arc};
//! use memfs_core::{execute, Command, Dialect, Dir, ObjectId, Resolver, Tree};
//!
//! /// Holds contents in a map and names them by length (a real store uses a keyed hash).
//! #[derive(Default)]
//! struct Blobs(HashMap<ObjectId, Arc<[u8]>>);
//! impl Resolver for Blobs {
//!     fn dir(&self, _: &ObjectId) -> Option<Arc<Dir>> { None }
//!     fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>> { self.0.get(id).cloned() }
//!     fn address(&self, c: &[u8]) -> ObjectId { ObjectId::from_bytes([c.len() as u8; 32]) }
//! }
//!
//! let mut blobs = Blobs::default();
//! let create = Command::from_input(&serde_json::json!(
//!     {"command": "create", "path": "/memories/notes.md", "file_text": "hello\n"}))?;
//! let out = execute(&create, &Tree::empty(), Dialect::Spec, &blobs).unwrap();
//! assert_eq!(out.result.content, "File created successfully at: /memories/notes.md");
//! let mutation = out.mutation.unwrap();
//! for b in mutation.blobs { blobs.0.insert(b.id, b.content); }
//!
//! let view = Command::View { path: "/memories".into(), view_range: None };
//! let out = execute(&view, &mutation.tree, Dialect::Spec, &blobs).unwrap();
//! assert_eq!(out.result.content, "Here're the files and directories up to 2 levels deep in \
//!     /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n6B\t/memories/notes.md");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

//! # Modules
//! The workspace's module map: `crates/README.md`.
//!
//! - `access`: [`touch`], last-access days of files read, applied to a later tree;
//! - `command`: [`Command`], the six commands parsed from the tool's `input`;
//! - `dialect`: [`Dialect`], which reference (spec page, Python SDK or TypeScript SDK) the answers follow;
//! - `exec`: [`execute`] and [`execute_in`], one command against a tree, and what it changed;
//! - `graft`: [`graft()`], a node of a past tree put into the live tree;
//! - `paginate`: view pagination (`view-max-chars`);
//! - `path`: [`MemoryPath`] and [`Name`], validated paths;
//! - `policy`: [`Policy`], a store's safeguards and their keys and defaults;
//! - [`render`]: every string the tool answers with, per dialect;
//! - `resolver`: [`Resolver`] and [`Need`], the caller's objects as the core sees them (a leaf);
//! - [`sensitive`]: the detectors of secrets and card numbers, custom rules, redaction;
//! - [`size`]: human-readable sizes per dialect;
//! - [`text`]: the SDKs' line algorithms (view ranges, replace, insert);
//! - `test_support` (feature `test-support`): `MapResolver`, an in-memory [`Resolver`] for
//!   tests, benchmarks and fuzz targets;
//! - `tree`: [`Tree`], [`Dir`], [`FileRef`], the persistent, lazily loaded virtual tree.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod access;
mod command;
mod dialect;
mod exec;
mod graft;
mod paginate;
mod path;
mod policy;
pub mod render;
mod resolver;
pub mod sensitive;
pub mod size;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod text;
mod tree;

pub use access::{Access, touch};
pub use command::{COMMANDS, Command, InputError};
pub use dialect::{Dialect, UnknownDialect};
pub use exec::{Change, Context, DIR_SIZE, Mutation, NewBlob, Outcome, execute, execute_in, rewrite_in};
pub use graft::graft;
pub use path::{MAX_NAME_BYTES, MAX_PATH_BYTES, MemoryPath, Name, PathError, ROOT, normalized};
pub use policy::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, DEFAULT_MAX_STORE_BYTES, DEFAULT_VIEW_MAX_CHARS, MIN_VIEW_MAX_CHARS,
    Policy, PolicyError, RULE_PREFIX, SensitiveMode, parse_bytes, parse_days,
};
pub use render::{ToolError, ToolResult};
pub use resolver::{Need, Resolver, load as load_dir};
#[cfg(any(test, feature = "test-support"))]
pub use test_support::MapResolver;
pub use tree::{Day, Dir, DirRef, FileRef, Node, ObjectId, Part, Parts, Totals, Tree};
