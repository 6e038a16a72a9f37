//! Storage for memfs.
//!
//! [`Repository`] is the seam between the engine and storage: read the head (the newest
//! tree), fetch directories and contents by id, and commit a mutation by compare-and-swap on
//! the head. [`EncryptedRepository`] is the encrypted, content-addressed store over
//! `object_store` (memory, local folder; cloud stores next). Every implementation runs the
//! [`conformance`] suite.
//!
//! An [`EncryptedRepository`] also keeps history: [`EncryptedRepository::log`], commits named by
//! a [`Revision`], past trees, [`EncryptedRepository::check`] (integrity) and
//! [`EncryptedRepository::gc`] (retention and deletion of unreachable objects).

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod cloud;
pub mod conformance;
mod disk_cache;
mod encrypted;
mod error;
pub mod fault;
mod fetch;
mod format;
#[doc(hidden)]
pub mod fuzzing;
mod head;
mod local_fs;
pub mod log_store;
mod pages;
pub mod probe;
mod progress;
mod record;
mod repository;
mod revision;
mod rollback;

pub use disk_cache::DISK_CACHE_BYTES;
pub use encrypted::{
    Backend, CheckOptions, CheckReport, CommitRecord, DEFAULT_GRACE_MS, EncryptedRepository, FORMAT_VERSION, GcOptions,
    GcReport, HEAD_SNAPSHOT_BYTES, OLDEST_FORMAT_VERSION, OpenOptions, Problem, PurgeError, PurgeOptions, PurgeReport,
    StateDir,
};
pub use error::Error;
pub use fetch::Fetched;
pub use local_fs::UnsafePath;
pub use progress::Progress;
pub use record::{Operation, PolicyChange, Record};
pub use repository::{CommitInfo, Head, Repository};
pub use revision::{MIN_PREFIX, Revision, RevisionError};
