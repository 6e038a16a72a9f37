//! The in-process repository behind `memory://`.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use memfs_core::{Dir, Mutation, ObjectId, Tree};
use memfs_crypt::{AddressKey, MasterKey};

use crate::error::Error;
use crate::repository::{CommitInfo, Head, Repository};

/// Everything in memory, for the life of the process: trees stay loaded, contents live in a
/// map, and commits are appended to an in-memory log. Objects are named with a random key, as
/// in every other store, so ids never reveal contents.
pub struct MemoryRepository {
    address: AddressKey,
    state: Mutex<State>,
}

struct State {
    head: Head,
    blobs: HashMap<ObjectId, Arc<[u8]>>,
    log: Vec<CommitInfo>,
}

impl MemoryRepository {
    /// An empty store with a fresh random key.
    pub fn new() -> Result<Self, memfs_crypt::Error> {
        let address = MasterKey::generate()?.address_key();
        let head = Head::new(Tree::empty(), 0);
        Ok(MemoryRepository { address, state: Mutex::new(State { head, blobs: HashMap::new(), log: Vec::new() }) })
    }

    /// The commits so far, oldest first.
    pub fn log(&self) -> Vec<CommitInfo> {
        self.lock().log.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave `State` half-updated (every update is a
        // single assignment after all checks), so a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl fmt::Display for MemoryRepository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("memory://")
    }
}

#[async_trait]
impl Repository for MemoryRepository {
    async fn head(&self) -> Result<Head, Error> {
        Ok(self.lock().head.clone())
    }

    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error> {
        // Trees in memory are always loaded, so no directory is ever asked for by id.
        Err(Error::MissingObject { id: id.to_hex() })
    }

    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        self.lock().blobs.get(id).cloned().ok_or_else(|| Error::MissingObject { id: id.to_hex() })
    }

    fn address(&self, content: &[u8]) -> ObjectId {
        self.address.address(content)
    }

    async fn commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error> {
        let mut state = self.lock();
        if state.head.generation != base.generation {
            return Err(Error::Conflict);
        }
        for blob in &mutation.blobs {
            state.blobs.entry(blob.id).or_insert_with(|| blob.content.clone());
        }
        let generation = base.generation + 1;
        state.head = Head::new(mutation.tree.clone(), generation);
        state.log.push(info);
        Ok(generation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn conformance() {
        crate::conformance::check_repository(&MemoryRepository::new().unwrap()).await;
    }
}
