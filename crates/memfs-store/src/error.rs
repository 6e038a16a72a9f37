//! Errors of `memfs-store`.
//!
//! Rules: a lost compare-and-swap is [`Error::Conflict`], which the engine answers by running
//! the command again on the new head; every other variant names the object or store concerned
//! and is final for the command.

use thiserror::Error;

/// A storage operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The head moved since it was read: another writer committed first.
    #[error("the store changed since it was read (head generation {expected} is now {actual})")]
    Conflict {
        /// The generation the commit was based on.
        expected: u64,
        /// The generation found.
        actual: u64,
    },
    /// An object the tree refers to is missing.
    #[error("object {id} is missing from the store")]
    MissingObject {
        /// The object's id (hex).
        id: String,
    },
}
