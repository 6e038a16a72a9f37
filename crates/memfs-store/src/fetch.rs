//! Fetching on demand: the objects a pure tree operation asks for, read from a repository.
//!
//! The operations of `memfs_core` (execute, graft, touch) never do I/O: when they reach an
//! object they do not hold, they stop with a [`Need`]. [`Fetched`] reads it, keeps it, and runs
//! the operation again, until it completes ([`Fetched::resolve`]). Objects are addressed by
//! content, so what was fetched stays valid across heads and attempts.

use std::collections::HashMap;
use std::sync::Arc;

use memfs_core::{Dir, DirRef, Need, ObjectId, Resolver};

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
            Need::Entry { dir: id, totals, name } => {
                let dir = self.repo.dir_entry(&id, totals, &name).await?;
                // What was fetched before stays: the repository's cache may have let it go.
                let dir = match self.dirs.get(&id) {
                    Some(held) if !dir.covers(held) => Arc::new(dir.merge(held)),
                    _ => dir,
                };
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

    /// The whole directory `dir`: loaded and whole, or fetched (a copy of part of a stored
    /// directory is completed with the rest of it).
    pub async fn whole(&mut self, dir: &DirRef) -> Result<Arc<Dir>, Error> {
        self.resolve(|f| memfs_core::load_dir(dir, None, f)).await
    }

    /// The whole directory `id`, fetched if it is not yet (or only parts of it are).
    pub async fn dir(&mut self, id: ObjectId) -> Result<Arc<Dir>, Error> {
        self.resolve(|f| Resolver::dir(f, &id).filter(|d| d.is_whole()).ok_or(Need::Dir(id))).await
    }
}

/// The whole directory `dir` from `repo`: loaded and whole, or read (a copy of part of a
/// stored directory is completed with the rest of it). Every walk of a tree's entries that
/// may meet a mutation's copies reads directories through this or [`Fetched::whole`].
pub async fn whole_dir(repo: &dyn Repository, dir: &DirRef) -> Result<Arc<Dir>, Error> {
    match (dir.dir(), dir.id()) {
        (Some(loaded), _) if loaded.is_whole() => Ok(loaded.clone()),
        (Some(loaded), _) => {
            let base = loaded.parts().expect("a partial directory has parts").base;
            Ok(Arc::new(loaded.merge(&*repo.dir(&base).await?)))
        }
        (None, Some(id)) => repo.dir(&id).await,
        (None, None) => unreachable!("a DirRef is loaded or stored"),
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
