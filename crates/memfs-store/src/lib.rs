//! Storage for memfs.
//!
//! [`Repository`] is the seam between the engine and storage: read the head (the newest
//! tree), fetch directories and contents by id, and commit a mutation by compare-and-swap on
//! the head. [`EncryptedRepository`] is the encrypted, content-addressed store over
//! `object_store`: memory, a local folder (the append-only log of `memfs_log`), and the [`cloud`]
//! stores S3, GCS and Azure Blob. Every implementation runs the `conformance` suite.
//!
//! An [`EncryptedRepository`] also keeps history: [`EncryptedRepository::log`], commits named by
//! a [`Revision`], past trees, [`EncryptedRepository::check`] (integrity),
//! [`EncryptedRepository::gc`] (retention and deletion of unreachable objects) and
//! [`EncryptedRepository::purge`] (a path erased from the tree and from history).
//!
//! The workspace's module map: `crates/README.md`.
//!
//! # Modules
//!
//! - [`cloud`]: `s3://`, `gs://` and `az://` URLs and options to an `object_store` client;
//! - `conformance` (feature `testing`): the suite every [`Repository`] runs;
//! - `disk_cache`: the optional on-disk cache of immutable objects;
//! - `encrypted`: [`EncryptedRepository`], two parts (`Objects`: keys, object store, caches;
//!   `Heads`: the head's cell and what this client knows of it) and what is done over them
//!   (commit, history, check, gc, purge, key slots);
//! - `error`: [`Error`], with the common cloud set-up mistakes as their own variants;
//! - `fault` (feature `testing`): `FaultStore`, fault injection for crash-safety tests;
//! - `fetch`: `Fetched`, the one fetch loop: objects a pure tree operation asks for, read on
//!   demand until it completes;
//! - `format`: plaintext layouts of the stored objects, before sealing;
//! - `fuzzing` (feature `testing`): hidden entry points for `fuzz/`, not part of the API;
//! - `head`: the mutable objects (head, gc state, key slots), replaced by compare-and-swap;
//! - `hooked` (tests only): an in-memory store that runs an action at a chosen operation;
//! - `local`: the local folder's log as the repository opens it ([`open_local_log`]);
//! - `pages`: directories cut into content-defined pages;
//! - [`probe`]: does an object store honour conditional writes?
//! - `progress`: [`Progress`] reports of long operations;
//! - `record`: `Record`, the typed record of what a commit did, written and read through serde;
//! - `redact`: secrets (option values, URL query strings) kept out of messages (a leaf);
//! - `repository`: the [`Repository`] trait, [`Head`] and [`CommitInfo`];
//! - `revision`: [`Revision`], how a user names a commit;
//! - `rollback`: rollback and fork detection, the newest commit seen per store;
//! - `settle`: a compare-and-swap whose answer may have been lost, sent again and looked for;
//! - `url`: [`StoreUrl`], the one match of a store URL's scheme to a backend, namespaces;
//! - `whole_read`: reads of a whole object, sent again from the start when the body breaks;
//! - `with_history`: [`WithHistory`], a [`Repository`] with the [`EncryptedRepository`] that
//!   keeps its history: the one handle `memfs::Memfs` holds.
//!
//! `conformance`, `fault` and `fuzzing` are test scaffolding, not part of the shipped API: they
//! are built only for this crate's own tests and with the `testing` feature, which the tests,
//! benches and fuzz targets of other crates turn on (as a dev-dependency, or in `fuzz/`).

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod cloud;
#[cfg(any(test, feature = "testing"))]
pub mod conformance;
mod disk_cache;
mod encrypted;
mod error;
#[cfg(any(test, feature = "testing"))]
pub mod fault;
mod fetch;
mod format;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod fuzzing;
mod head;
#[cfg(test)]
mod hooked;
mod local;
mod pages;
pub mod probe;
mod progress;
mod record;
mod redact;
mod repository;
mod revision;
mod rollback;
mod settle;
mod storage;
mod url;
mod whole_read;
mod with_history;

pub use disk_cache::DISK_CACHE_BYTES;
pub use encrypted::{
    Backend, CheckOptions, CheckReport, CommitRecord, Confirmed, DEFAULT_GRACE_MS, DEFAULT_MEMORY_CACHE_BYTES,
    EncryptedRepository, FEATURES, FORMAT_VERSION, GcOptions, GcReport, HEAD_SNAPSHOT_BYTES, KeyChange, OpenOptions,
    Problem, PurgeError, PurgeOptions, PurgeReport, ResealOptions, ResealReport, RotateKeys, Rotation, Shred,
    ShredKeys, StateDir, UNWRITTEN_BYTES,
};
pub use error::Error;
pub use fetch::{Fetched, whole_dir};
pub use local::open_local_log;
pub use memfs_log::UnsafePath;
pub use progress::Progress;
pub use record::{Operation, PolicyChange, Record};
pub use repository::{CommitInfo, Head, Repository};
pub use revision::{MIN_PREFIX, Revision, RevisionError};
pub use url::{StoreUrl, UrlError, check_namespace};
pub use with_history::WithHistory;
