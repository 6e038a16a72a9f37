//! Fetching on demand: the objects a pure tree operation asks for, read from a repository.
//!
//! The operations of `memfs_core` (execute, graft, touch) never do I/O: when they reach an
//! object they do not hold, they stop with a [`Need`]. [`Fetched`] reads it, keeps it, and runs
//! the operation again, until it completes ([`Fetched::resolve`]). Objects are addressed by
//! content, so what was fetched stays valid across heads and attempts.

use std::collections::HashMap;
use std::sync::Arc;

use memfs_core::{Dir, Need, ObjectId, Resolver};

use crate::error::Error;
use crate::repository::Repository;

/// The objects fetched so far from one repository, and a resolver over them.
pub struct Fetched<'a> {
    repo: &'a dyn Repository,
    dirs: HashMap<ObjectId, Arc<Dir>>,
    blobs: HashMap<ObjectId, Arc<[u8]>>,
}

impl<'a> Fetched<'a> {
    /// Nothing fetched yet from `repo`.
    pub fn new(repo: &'a dyn Repository) -> Self {
        Fetched { repo, dirs: HashMap::new(), blobs: HashMap::new() }
    }

    /// Reads the object `need` names and keeps it.
    pub async fn fetch(&mut self, need: Need) -> Result<(), Error> {
        match need {
            Need::Dir(id) => {
                let dir = self.repo.dir(&id).await?;
                self.dirs.insert(id, dir);
            }
            Need::Blob(id) => {
                let blob = self.repo.blob(&id).await?;
                self.blobs.insert(id, blob);
            }
        }
        Ok(())
    }

    /// Runs `step` against what is fetched, fetching what it needs, until it completes.
    pub async fn resolve<T>(&mut self, mut step: impl FnMut(&Self) -> Result<T, Need>) -> Result<T, Error> {
        loop {
            match step(self) {
                Ok(done) => return Ok(done),
                Err(need) => self.fetch(need).await?,
            }
        }
    }

    /// The directory `id`, fetched if it is not yet.
    pub async fn dir(&mut self, id: ObjectId) -> Result<Arc<Dir>, Error> {
        self.resolve(|f| Resolver::dir(f, &id).ok_or(Need::Dir(id))).await
    }
}

impl Resolver for Fetched<'_> {
    fn dir(&self, id: &ObjectId) -> Option<Arc<Dir>> {
        self.dirs.get(id).cloned()
    }
    fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>> {
        self.blobs.get(id).cloned()
    }
    fn address(&self, content: &[u8]) -> ObjectId {
        self.repo.address(content)
    }
}
