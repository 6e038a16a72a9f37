//! Storage for memfs.
//!
//! [`Repository`] is the seam between the engine and storage: read the head (the newest
//! tree), fetch directories and contents by id, and commit a mutation by compare-and-swap on
//! the head. [`EncryptedRepository`] is the encrypted, content-addressed store over
//! `object_store` (memory, local folder; cloud stores next); [`MemoryRepository`] is a
//! plaintext in-memory reference. Every implementation runs the [`conformance`] suite.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod conformance;
mod encrypted;
mod error;
mod format;
mod head;
mod memory;
mod repository;
mod rollback;

pub use encrypted::{Backend, EncryptedRepository, FORMAT_VERSION, OpenOptions};
pub use error::Error;
pub use memory::MemoryRepository;
pub use repository::{CommitInfo, Head, Repository};
