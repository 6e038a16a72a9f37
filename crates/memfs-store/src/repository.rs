//! The repository trait.

use std::fmt::Display;
use std::sync::Arc;

use async_trait::async_trait;
use memfs_core::{Change, Dir, Mutation, Name, ObjectId, Policy, Totals, Tree};

use crate::error::Error;
use crate::head::HeadVersion;
use crate::record::Record;

/// The newest state of a store, as read; a commit names the head it is based on.
#[derive(Debug, Clone)]
pub struct Head {
    /// The tree.
    pub tree: Tree,
    /// Increases by one with every commit.
    pub generation: u64,
    /// The store's policy at this head.
    pub policy: Arc<Policy>,
    /// What the compare-and-swap compares against, and the commit this head points at.
    pub(crate) anchor: Option<Anchor>,
}

impl Head {
    /// A head with no storage anchor (for repositories that keep state in memory), under the
    /// default policy.
    pub fn new(tree: Tree, generation: u64) -> Self {
        Head { tree, generation, policy: Arc::new(Policy::default()), anchor: None }
    }
}

/// Where a stored head came from.
#[derive(Debug, Clone)]
pub(crate) struct Anchor {
    /// `None`: no head exists yet.
    pub(crate) version: Option<HeadVersion>,
    /// The commit the head names (`None` before the first commit).
    pub(crate) commit: Option<ObjectId>,
    /// The policy object that commit names (`None`: the default policy).
    pub(crate) policy: Option<ObjectId>,
    /// The change counter of `memfs.keys` the head names (`None`: no head, or an ephemeral
    /// store's).
    pub(crate) keys: Option<u64>,
    /// The head as read (`None`: no head yet). What it carries unwritten, a commit
    /// on it carries on or stores.
    pub(crate) head: Option<Arc<crate::format::HeadObject>>,
}

impl Anchor {
    /// The objects the head carries unwritten.
    pub(crate) fn unwritten(&self) -> impl Iterator<Item = &crate::format::InlineObject> {
        self.head.iter().flat_map(|h| h.inline.iter().filter(|o| o.unwritten))
    }
}

/// Who made a commit and what it did, recorded with it.
#[derive(Debug, Clone, Default)]
pub struct CommitInfo {
    /// The agent or user name.
    pub actor: String,
    /// What the commit did (stored as [`Record::to_json`]).
    pub command: Record,
    /// What changed.
    pub changes: Vec<Change>,
}

/// A store of trees and contents with an atomically replaced head.
#[async_trait]
pub trait Repository: Display + Send + Sync {
    /// The newest head.
    async fn head(&self) -> Result<Head, Error>;

    /// A head to base a commit on: the head this handle last read or wrote, without a request,
    /// where it keeps one; else the newest ([`Repository::head`], the default). The commit's
    /// compare-and-swap refuses it if it is not the newest any more, so a warm writer saves the
    /// read and loses nothing.
    async fn head_to_write(&self) -> Result<Head, Error> {
        self.head().await
    }

    /// A directory by id.
    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error>;

    /// The directory `id` (whose totals are `totals`) loaded far enough to answer for `name`:
    /// for a large one, only the part `name` falls in and what was loaded of it before
    /// ([`Dir::partial`]); the whole directory by default.
    async fn dir_entry(&self, id: &ObjectId, totals: Totals, name: &Name) -> Result<Arc<Dir>, Error> {
        let _ = (totals, name);
        self.dir(id).await
    }

    /// A file's content by id.
    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error>;

    /// The id content is stored under in this repository.
    fn address(&self, content: &[u8]) -> ObjectId;

    /// Stores the mutation's objects, then makes its tree the head if the head is still
    /// `base` (compare-and-swap). Returns the new generation, or [`Error::Conflict`] having
    /// changed nothing visible.
    async fn commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error>;
}

#[async_trait]
impl<T: Repository + ?Sized> Repository for Arc<T> {
    async fn head(&self) -> Result<Head, Error> {
        (**self).head().await
    }
    async fn head_to_write(&self) -> Result<Head, Error> {
        (**self).head_to_write().await
    }
    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error> {
        (**self).dir(id).await
    }
    async fn dir_entry(&self, id: &ObjectId, totals: Totals, name: &Name) -> Result<Arc<Dir>, Error> {
        (**self).dir_entry(id, totals, name).await
    }
    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        (**self).blob(id).await
    }
    fn address(&self, content: &[u8]) -> ObjectId {
        (**self).address(content)
    }
    async fn commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error> {
        (**self).commit(base, mutation, info).await
    }
}
