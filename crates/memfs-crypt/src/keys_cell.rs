//! [`KeysCell`]: where `memfs.keys` is kept, a compare-and-swap cell, the one I/O of a
//! [`KeyStore`](crate::KeyStore).
//!
//! The cell is the caller's (an object store's conditional put, a local log's compare under its
//! lock): this crate reads bytes from it and asks it to replace them, and knows nothing else of
//! storage.

use async_trait::async_trait;

use crate::keys_error::KeysError;

/// What a [`KeysCell::swap`] did.
#[derive(Debug)]
pub enum Swap<E> {
    /// The new bytes are in.
    Landed,
    /// Refused: the cell was not at the version expected. Nothing of this write is in.
    Conflict,
    /// Failed, and not in.
    Failed(E),
    /// Failed, and may be in (its answer was lost, and the cell could not tell).
    Unknown(E),
}

/// A compare-and-swap cell holding the bytes of `memfs.keys`.
#[async_trait]
pub trait KeysCell: Send + Sync {
    /// What a swap compares against: opaque, from the last read.
    type Version: Clone + Send + Sync;
    /// The cell's own failures, which also carry the key store's refusals.
    type Error: From<KeysError> + Send;

    /// The bytes and their version, or `None` when the cell is empty (no store).
    async fn read(&self) -> Result<Option<(Vec<u8>, Self::Version)>, Self::Error>;

    /// Writes the first bytes, if the cell is still empty.
    async fn create(&self, bytes: Vec<u8>) -> Swap<Self::Error>;

    /// Replaces the bytes if the cell is still at `expected`.
    async fn swap(&self, expected: &Self::Version, bytes: Vec<u8>) -> Swap<Self::Error>;
}
