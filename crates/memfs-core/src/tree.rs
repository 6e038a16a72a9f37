//! The virtual tree: directories of named files and subdirectories.
//!
//! A file is a reference to its content ([`FileRef`]: an [`ObjectId`] and a size); the content
//! itself stays with the caller, because a large remote store never loads every file to answer
//! one command. A directory is either loaded or only known by the id it is stored under
//! ([`DirRef`]), so a store can hand over a tree whose untouched parts were never fetched.
//!
//! Trees are persistent: a mutation copies the directories along the changed path and shares
//! every other directory with the old tree (through `Arc`), so it costs O(depth), not O(files).
//! Copied directories carry no stored id until the store writes them.
//!
//! A large stored directory may also be loaded in part ([`Parts`]): the entries of some of the
//! parts it is stored in, each part a range of names. A command that only needs one name asks
//! for the part that holds it ([`Need::Entry`](crate::Need::Entry)), so its cost does not grow
//! with the directory; one that needs every entry (a listing) asks for the whole directory.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

pub use memfs_id::ObjectId;
use serde::{Deserialize, Serialize};

use crate::path::Name;

/// A day, counted from 1970-01-01 (day 0) in UTC: the unit of last-access times.
pub type Day = u32;

/// A file in the tree: where its content is, how many bytes it has and when it was last used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRef {
    /// The content object.
    pub id: ObjectId,
    /// Content length in bytes (what a listing shows).
    pub size: u64,
    /// The last day the file was read or written (0: unknown). Kept to the day so that reading
    /// a file costs at most one write of its directory per day (see `memfs expire`).
    pub accessed: Day,
}

/// How many files a directory holds, at any depth, and their total content size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Files.
    pub files: u64,
    /// Bytes of content.
    pub bytes: u64,
}

impl std::ops::AddAssign for Totals {
    /// Saturating: counts read from storage never overflow into a panic.
    fn add_assign(&mut self, t: Totals) {
        self.files = self.files.saturating_add(t.files);
        self.bytes = self.bytes.saturating_add(t.bytes);
    }
}

impl Totals {
    fn sub(&mut self, t: Totals) {
        self.files = self.files.saturating_sub(t.files);
        self.bytes = self.bytes.saturating_sub(t.bytes);
    }
}

/// A directory reference: loaded, stored, or both; its [`Totals`] are always known (a stored
/// directory's are recorded with the entry that names it), so limits never load a subtree.
#[derive(Clone)]
pub struct DirRef {
    stored: Option<ObjectId>,
    loaded: Option<Arc<Dir>>,
    totals: Totals,
}

impl DirRef {
    /// A directory known only by the id it is stored under and what it holds.
    pub fn stored(id: ObjectId, totals: Totals) -> Self {
        DirRef { stored: Some(id), loaded: None, totals }
    }

    /// A directory in memory that has not been written (or whose id is unknown).
    pub fn new(dir: Dir) -> Self {
        DirRef { stored: None, totals: dir.totals, loaded: Some(Arc::new(dir)) }
    }

    /// A directory in memory together with the id it is stored under.
    pub fn loaded(id: ObjectId, dir: Arc<Dir>) -> Self {
        DirRef { stored: Some(id), totals: dir.totals, loaded: Some(dir) }
    }

    /// Files and bytes below this directory.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// The id this directory is stored under, if it has been written.
    pub fn id(&self) -> Option<ObjectId> {
        self.stored
    }

    /// The directory, if it is in memory.
    pub fn dir(&self) -> Option<&Arc<Dir>> {
        self.loaded.as_ref()
    }
}

impl fmt::Debug for DirRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.stored, &self.loaded) {
            (Some(id), None) => write!(f, "Stored({id:?})"),
            (id, Some(dir)) => f.debug_struct("Dir").field("id", id).field("entries", &dir.entries).finish(),
            (None, None) => f.write_str("Empty"),
        }
    }
}

/// One entry of a directory.
#[derive(Debug, Clone)]
pub enum Node {
    /// A file.
    File(FileRef),
    /// A directory.
    Dir(DirRef),
}

impl Node {
    /// Files and bytes at or below this entry.
    pub fn totals(&self) -> Totals {
        match self {
            Node::File(f) => Totals { files: 1, bytes: f.size },
            Node::Dir(d) => d.totals(),
        }
    }
}

/// A directory: entries sorted by name in byte order, which for UTF-8 is code-point order,
/// the order the SDK sorts a listing in.
///
/// Whole, or partial: the entries of the [`Parts`] of a stored directory it holds (and, in a
/// copy a mutation made, its changes within them). A partial directory's totals are the whole
/// directory's.
#[derive(Debug, Clone, Default)]
pub struct Dir {
    entries: BTreeMap<Name, Node>,
    totals: Totals,
    parts: Option<Box<Parts>>,
}

/// Which parts of a stored directory a partial [`Dir`] holds.
///
/// The store decides how a directory is cut into parts (for the encrypted store, its leaf
/// pages) and numbers them in name order; the core only keeps the numbers and name ranges, so
/// a copy can be merged with more parts of the directory it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// The stored directory these are parts of.
    pub base: ObjectId,
    /// Its totals.
    pub base_totals: Totals,
    /// How many parts it is stored in.
    pub count: u32,
    /// The parts held, by increasing index.
    pub held: Vec<Part>,
}

/// One part of a stored directory: every entry whose name is in its range is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its place among the directory's parts (0 first).
    pub index: u32,
    /// The lowest name it holds.
    pub low: Bound<Name>,
    /// The highest name it holds.
    pub high: Bound<Name>,
}

impl Part {
    /// Whether `name` falls in this part.
    pub fn contains(&self, name: &Name) -> bool {
        (self.low.as_ref(), self.high.as_ref()).contains(name)
    }

    /// Takes the wider of each bound of this part and `other` (the same part).
    fn widen(&mut self, other: &Part) {
        if reaches_lower(&other.low, &self.low) {
            self.low = other.low.clone();
        }
        if reaches_higher(&other.high, &self.high) {
            self.high = other.high.clone();
        }
    }

    /// Whether this part reaches at least as far as `other` (the same part) at both ends.
    fn covers(&self, other: &Part) -> bool {
        !reaches_lower(&other.low, &self.low) && !reaches_higher(&other.high, &self.high)
    }

    fn range(&self) -> (Bound<&Name>, Bound<&Name>) {
        (self.low.as_ref(), self.high.as_ref())
    }
}

/// Whether low bound `a` reaches below low bound `b` (may admit a name `b` does not).
fn reaches_lower(a: &Bound<Name>, b: &Bound<Name>) -> bool {
    match (b, a) {
        (Bound::Unbounded, _) => false,
        (_, Bound::Unbounded) => true,
        (Bound::Included(b), Bound::Included(a)) | (Bound::Included(b) | Bound::Excluded(b), Bound::Excluded(a)) => {
            a < b
        }
        (Bound::Excluded(b), Bound::Included(a)) => a <= b,
    }
}

/// Whether high bound `a` reaches above high bound `b` (may admit a name `b` does not).
fn reaches_higher(a: &Bound<Name>, b: &Bound<Name>) -> bool {
    match (b, a) {
        (Bound::Unbounded, _) => false,
        (_, Bound::Unbounded) => true,
        (Bound::Included(b), Bound::Included(a)) | (Bound::Included(b) | Bound::Excluded(b), Bound::Excluded(a)) => {
            a > b
        }
        (Bound::Excluded(b), Bound::Included(a)) => a >= b,
    }
}

impl Dir {
    /// An empty directory.
    pub fn new() -> Self {
        Dir::default()
    }

    /// A directory holding some parts of the stored directory `parts.base`: `entries` are every
    /// entry in the parts' ranges, `totals` the whole directory's.
    pub fn partial(parts: Parts, totals: Totals, entries: impl IntoIterator<Item = (Name, Node)>) -> Self {
        Dir { entries: entries.into_iter().collect(), totals, parts: Some(Box::new(parts)) }
    }

    /// Whether every entry is here.
    pub fn is_whole(&self) -> bool {
        self.parts.is_none()
    }

    /// For a partial directory, the parts it holds.
    pub fn parts(&self) -> Option<&Parts> {
        self.parts.as_deref()
    }

    /// Whether this directory can answer for `name`: it is whole, or holds the part `name`
    /// falls in (whether or not there is an entry of that name).
    pub fn holds(&self, name: &Name) -> bool {
        self.parts.as_ref().is_none_or(|p| p.held.iter().any(|part| part.contains(name)))
    }

    /// Whether this directory holds every part `other` holds, each at least as far: then
    /// [`Dir::merge`] of `other` into it changes nothing.
    pub fn covers(&self, other: &Dir) -> bool {
        let Some(mine) = &self.parts else { return true };
        let Some(theirs) = &other.parts else { return false };
        theirs.held.iter().all(|part| mine.held.iter().any(|held| held.index == part.index && held.covers(part)))
    }

    /// This directory completed with what `other` holds beyond it: `other` is (a view of) the
    /// stored directory this one is, or was copied from. The parts held here win, so the
    /// changes of a copy are kept; with a whole `other`, the result is whole.
    pub fn merge(&self, other: &Dir) -> Dir {
        let Some(mine) = &self.parts else { return self.clone() };
        let mut merged = self.clone();
        let Some(theirs) = &other.parts else {
            for (name, node) in &other.entries {
                if !mine.held.iter().any(|part| part.contains(name)) {
                    merged.entries.insert(name.clone(), node.clone());
                }
            }
            merged.parts = None;
            return merged;
        };
        let parts = merged.parts.as_mut().expect("partial");
        for part in &theirs.held {
            if let Some(held) = parts.held.iter_mut().find(|p| p.index == part.index) {
                // The same part, known to reach further: a part read without the one before
                // it starts at its first name, and the names between the two hold no entry.
                held.widen(part);
                continue;
            }
            for (name, node) in other.entries.range::<Name, _>(part.range()) {
                merged.entries.insert(name.clone(), node.clone());
            }
            parts.held.push(part.clone());
        }
        parts.held.sort_by_key(|p| p.index);
        merged
    }

    /// Builds a directory from entries.
    pub fn from_entries(entries: impl IntoIterator<Item = (Name, Node)>) -> Self {
        let mut dir = Dir::new();
        for (name, node) in entries {
            dir.insert(name, node);
        }
        dir
    }

    /// Files and bytes below this directory, at any depth.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// The entries in name order (of a partial directory, those of the parts it holds).
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&Name, &Node)> {
        self.entries.iter()
    }

    /// The entries in `part`'s range, in name order.
    pub fn part_entries(&self, part: &Part) -> impl Iterator<Item = (&Name, &Node)> {
        self.entries.range::<Name, _>(part.range())
    }

    /// One entry.
    pub fn get(&self, name: &Name) -> Option<&Node> {
        self.entries.get(name)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the directory is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds or replaces an entry, keeping the totals. In a partial directory, `name` must be
    /// in a part it holds.
    pub fn insert(&mut self, name: Name, node: Node) {
        debug_assert!(self.holds(&name), "an entry inserted outside the parts held");
        self.totals += node.totals();
        if let Some(old) = self.entries.insert(name, node) {
            self.totals.sub(old.totals());
        }
    }

    pub(crate) fn remove(&mut self, name: &Name) -> Option<Node> {
        debug_assert!(self.holds(name), "an entry removed outside the parts held");
        let old = self.entries.remove(name)?;
        self.totals.sub(old.totals());
        Some(old)
    }
}

/// A whole tree: its root directory.
#[derive(Debug, Clone)]
pub struct Tree {
    root: DirRef,
}

impl Default for Tree {
    fn default() -> Self {
        Tree::empty()
    }
}

impl Tree {
    /// A tree with an empty root.
    pub fn empty() -> Self {
        Tree { root: DirRef::new(Dir::new()) }
    }

    /// A tree from its root directory.
    pub fn from_root(root: DirRef) -> Self {
        Tree { root }
    }

    /// The root directory reference.
    pub fn root(&self) -> &DirRef {
        &self.root
    }

    /// Files and bytes in the whole tree.
    pub fn totals(&self) -> Totals {
        self.root.totals()
    }
}
