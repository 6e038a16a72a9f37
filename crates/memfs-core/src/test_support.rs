//! An in-memory [`Resolver`] for tests, benchmarks and fuzz targets (the `test-support`
//! feature): directories and contents in maps, as a store's caller would hold what it fetched.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::exec::NewBlob;
use crate::resolver::Resolver;
use crate::tree::{Dir, ObjectId};

/// How [`MapResolver::new`] names contents.
pub type Address = fn(&[u8]) -> ObjectId;

/// Directories and contents by id; a new content is named by `address`.
#[derive(Clone)]
pub struct MapResolver<A = Address> {
    /// Directories, by id.
    pub dirs: HashMap<ObjectId, Arc<Dir>>,
    /// Contents, by id.
    pub blobs: HashMap<ObjectId, Arc<[u8]>>,
    address: A,
}

impl MapResolver {
    /// Empty maps; contents named by [`std_hash`].
    pub fn new() -> Self {
        MapResolver::with_address(std_hash)
    }
}

impl Default for MapResolver {
    fn default() -> Self {
        MapResolver::new()
    }
}

impl<A: Fn(&[u8]) -> ObjectId> MapResolver<A> {
    /// Empty maps; contents named by `address` (a store's keyed hash, or something cheaper
    /// where hashing would be measured).
    pub fn with_address(address: A) -> Self {
        MapResolver { dirs: HashMap::new(), blobs: HashMap::new(), address }
    }

    /// Keeps the contents a mutation wrote, so later commands can read them.
    pub fn keep(&mut self, blobs: impl IntoIterator<Item = NewBlob>) {
        self.blobs.extend(blobs.into_iter().map(|b| (b.id, b.content)));
    }
}

impl<A: Fn(&[u8]) -> ObjectId> Resolver for MapResolver<A> {
    fn dir(&self, id: &ObjectId) -> Option<Arc<Dir>> {
        self.dirs.get(id).cloned()
    }
    fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>> {
        self.blobs.get(id).cloned()
    }
    fn address(&self, content: &[u8]) -> ObjectId {
        (self.address)(content)
    }
}

/// A std (SipHash) hash of the content and its length: distinct enough for tests, and no
/// key (a real store names contents by a keyed BLAKE3).
pub fn std_hash(content: &[u8]) -> ObjectId {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    content.hash(&mut h);
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&h.finish().to_le_bytes());
    id[8..16].copy_from_slice(&(content.len() as u64).to_le_bytes());
    ObjectId::from_bytes(id)
}
