//! The in-memory cache of an open store: immutable objects (directories, their page lists and
//! page plaintexts, file contents, commits, policies) by id, under one byte budget.
//!
//! Every object here is named by its content, so an entry never goes stale; it only costs
//! memory. A process that runs for days (`memfs serve`, `memfs mcp`) writes a new version of a
//! directory with every mutation, so without a bound the cache grows with every command. It
//! evicts by S3-FIFO ([`quick_cache`]): objects read once leave first, the directories and
//! pages every command passes through stay. A miss costs a read (and for a page, the next
//! commit rewriting pages it could have kept), never a wrong answer.
//!
//! Weights are estimates of the heap each entry holds, not exact counts: the budget bounds the
//! cache to within a small factor, which is what keeps a long-running process flat.

use std::sync::Arc;

use memfs_core::{Dir, ObjectId, Policy};
use quick_cache::Weighter;

use crate::format::CommitObject;

/// The default budget: 64 MiB.
pub const DEFAULT_MEMORY_CACHE_BYTES: usize = 64 << 20;

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Slot {
    Dir,
    Partial,
    Pages,
    Blob,
    Commit,
    Policy,
    Plain,
}

#[derive(Clone)]
enum Item {
    /// A whole directory, decoded (children by id).
    Dir(Arc<Dir>),
    /// The leaves of a large directory read so far, decoded ([`Dir::partial`]).
    Partial(Arc<Dir>),
    /// The ids of a directory's pages, top page first.
    Pages(Arc<[ObjectId]>),
    /// A file's content.
    Blob(Arc<[u8]>),
    Commit(Arc<CommitObject>),
    Policy(Arc<Policy>),
    /// A directory page's or policy's plaintext, as stored.
    Plain(Arc<[u8]>),
}

/// Estimated heap bytes of an entry: its data, plus a fixed overhead per entry and per
/// directory entry (a `BTreeMap` node share, a name, a node).
#[derive(Clone, Copy)]
struct Weight;

/// Per cache entry: the key, the `Arc` header, the table's own slot.
const ENTRY_OVERHEAD: u64 = 96;
/// Per directory entry, besides the cache entry's.
const DIR_ENTRY_BYTES: u64 = 160;

impl Weighter<(Slot, ObjectId), Item> for Weight {
    fn weight(&self, _: &(Slot, ObjectId), item: &Item) -> u64 {
        let data = match item {
            Item::Dir(dir) | Item::Partial(dir) => dir.len() as u64 * DIR_ENTRY_BYTES,
            Item::Pages(pages) => pages.len() as u64 * 32,
            Item::Blob(bytes) | Item::Plain(bytes) => bytes.len() as u64,
            Item::Commit(commit) => {
                256 + commit.command.len() as u64 + commit.actor.len() as u64 + commit.changes.len() as u64 * 128
            }
            Item::Policy(_) => 256,
        };
        ENTRY_OVERHEAD + data
    }
}

/// For each kind of entry, a getter and an inserter: the key is the kind (the `Slot` of the
/// same name as the `Item` variant) and the id.
macro_rules! entries {
    ($($(#[$doc:meta])* $get:ident, $insert:ident: $kind:ident($ty:ty);)*) => {$(
        $(#[$doc])*
        pub(super) fn $get(&self, id: &ObjectId) -> Option<$ty> {
            match self.items.get(&(Slot::$kind, *id))? {
                Item::$kind(value) => Some(value.clone()),
                _ => None,
            }
        }

        pub(super) fn $insert(&mut self, id: ObjectId, value: $ty) {
            self.items.insert((Slot::$kind, id), Item::$kind(value));
        }
    )*};
}

/// The cache (see the module documentation). Not synchronized: the repository keeps it
/// behind a mutex, held only for single lookups and inserts.
pub(super) struct Cache {
    items: quick_cache::unsync::Cache<(Slot, ObjectId), Item, Weight>,
}

impl Cache {
    /// A cache of about `budget` bytes (at least one page's worth).
    pub(super) fn new(budget: usize) -> Self {
        let budget = budget.max(64 << 10) as u64;
        // The table is sized for entries of about 2 KiB; it grows if they are smaller.
        let items = usize::try_from(budget / 2048).unwrap_or(usize::MAX).max(16);
        Cache { items: quick_cache::unsync::Cache::with_weighter(items, budget, Weight) }
    }

    entries! {
        /// A decoded directory (see [`Cache::insert_dir`]).
        dir, insert_decoded: Dir(Arc<Dir>);
        /// Part of a directory (see [`Dir::partial`]).
        partial, insert_partial: Partial(Arc<Dir>);
        /// A directory's page ids (see [`Cache::insert_dir`]).
        pages, insert_pages: Pages(Arc<[ObjectId]>);
        blob, insert_blob: Blob(Arc<[u8]>);
        commit, insert_commit: Commit(Arc<CommitObject>);
        policy, insert_policy: Policy(Arc<Policy>);
        plain, insert_plain: Plain(Arc<[u8]>);
    }

    /// Caches a decoded directory and its page ids.
    pub(super) fn insert_dir(&mut self, id: ObjectId, dir: Arc<Dir>, pages: Arc<[ObjectId]>) {
        self.insert_decoded(id, dir);
        self.insert_pages(id, pages);
    }

    /// Whether a content is cached (without counting as a use).
    pub(super) fn has_blob(&self, id: &ObjectId) -> bool {
        self.items.contains_key(&(Slot::Blob, *id))
    }

    /// Drops everything known about `id` (an object deleted from the store).
    pub(super) fn forget(&mut self, id: &ObjectId) {
        for slot in [Slot::Dir, Slot::Partial, Slot::Pages, Slot::Blob, Slot::Commit, Slot::Policy, Slot::Plain] {
            self.items.remove(&(slot, *id));
        }
    }

    /// Drops every commit, so that a walk reads each one from storage again.
    pub(super) fn forget_commits(&mut self) {
        self.items.retain(|(slot, _), _| *slot != Slot::Commit);
    }

    /// The estimated bytes held.
    #[cfg(test)]
    pub(super) fn weight(&self) -> u64 {
        self.items.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes([n; 32])
    }

    #[test]
    fn the_cache_stays_within_its_budget_and_keeps_what_is_used() {
        let mut cache = Cache::new(1 << 20);
        let hot: Arc<[u8]> = vec![1; 4096].into();
        cache.insert_blob(id(0), hot.clone());
        for n in 1..=255u8 {
            cache.insert_blob(id(n), vec![n; 64 << 10].into());
            // Used between every insert: it stays.
            assert_eq!(cache.blob(&id(0)).as_deref(), Some(&hot[..]));
            assert!(cache.weight() <= 1 << 20, "{} bytes after {n} inserts", cache.weight());
        }
        let kept = (1..=255u8).filter(|n| cache.has_blob(&id(*n))).count();
        assert!(kept < 20, "{kept} of 255 cold contents kept in 1 MiB");
    }

    #[test]
    fn forget_drops_every_kind_of_entry() {
        let mut cache = Cache::new(1 << 20);
        cache.insert_blob(id(1), vec![1].into());
        cache.insert_plain(id(1), vec![2].into());
        cache.insert_dir(id(1), Arc::new(Dir::from_entries(Vec::new())), vec![id(1)].into());
        cache.insert_commit(id(2), Arc::new(test_commit()));
        cache.forget(&id(1));
        assert!(cache.blob(&id(1)).is_none() && cache.plain(&id(1)).is_none());
        assert!(cache.dir(&id(1)).is_none() && cache.pages(&id(1)).is_none());
        cache.forget_commits();
        assert!(cache.commit(&id(2)).is_none());
    }

    fn test_commit() -> CommitObject {
        CommitObject {
            parent: None,
            tree: ObjectId::from_bytes([0; 32]),
            generation: 1,
            time_ms: 0,
            actor: String::new(),
            command: "{}".into(),
            changes: Vec::new(),
            files: 0,
            bytes: 0,
            policy: None,
            replaced: Vec::new(),
        }
    }
}
