//! Storage for memfs.
//!
//! [`Repository`] is the seam between the engine and storage: read the head (the newest
//! tree), fetch directories and contents by id, and commit a mutation by compare-and-swap on
//! the head. [`MemoryRepository`] keeps everything in process memory (the `memory://` store);
//! the encrypted object-store repository (local folder, S3, GCS, Azure) implements the same
//! trait. Every implementation runs the [`conformance`] suite.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod conformance;
mod error;
mod memory;
mod repository;

pub use error::Error;
pub use memory::MemoryRepository;
pub use repository::{CommitInfo, Head, Repository};
