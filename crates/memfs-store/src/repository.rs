//! The repository trait.

use std::fmt::Display;
use std::sync::Arc;

use async_trait::async_trait;
use memfs_core::{Change, Dir, Mutation, ObjectId, Tree};

use crate::error::Error;

/// The newest state of a store.
#[derive(Debug, Clone)]
pub struct Head {
    /// The tree.
    pub tree: Tree,
    /// Increases by one with every commit; a commit names the generation it is based on.
    pub generation: u64,
}

/// Who made a commit and with which command, recorded with it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CommitInfo {
    /// The agent or user name.
    pub actor: String,
    /// The command as JSON.
    pub command: String,
    /// What changed.
    pub changes: Vec<Change>,
}

/// A store of trees and contents with an atomically replaced head.
#[async_trait]
pub trait Repository: Display + Send + Sync {
    /// The newest head.
    async fn head(&self) -> Result<Head, Error>;

    /// A directory by id.
    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error>;

    /// A file's content by id.
    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error>;

    /// The id content is stored under in this repository.
    fn address(&self, content: &[u8]) -> ObjectId;

    /// Stores the mutation's objects, then makes its tree the head if the head is still at
    /// `base` (compare-and-swap). Returns the new head's generation, or [`Error::Conflict`]
    /// and changes nothing visible.
    async fn commit(&self, base: u64, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error>;
}

#[async_trait]
impl<T: Repository + ?Sized> Repository for Arc<T> {
    async fn head(&self) -> Result<Head, Error> {
        (**self).head().await
    }
    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error> {
        (**self).dir(id).await
    }
    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        (**self).blob(id).await
    }
    fn address(&self, content: &[u8]) -> ObjectId {
        (**self).address(content)
    }
    async fn commit(&self, base: u64, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error> {
        (**self).commit(base, mutation, info).await
    }
}
