//! Plaintext layouts of the stored objects, before sealing (see `docs/FORMAT.md`).
//!
//! Directory pages, commits (`binary_commit.rs`) and the head (`binary_head.rs`) are binary;
//! policies and gc's state are JSON. The sealed envelope around a plaintext (`memfs-crypt`)
//! binds the object's kind and id. A later writer's JSON fields and the extensions of a commit
//! or head are skipped; other unknown flags and kinds are refused (docs/FORMAT.md, "Versions").

use integer_encoding::VarInt;
use memfs_core::{Change, DirRef, FileRef, Name, Node, ObjectId, Totals};
use memfs_crypt::ObjectKind;
use serde::{Deserialize, Serialize};

use crate::error::Error;

mod binary_commit;
mod binary_head;

pub(crate) use binary_head::INLINE_OVERHEAD;

/// An object id as 64 lowercase hex characters.
mod hex_id {
    use memfs_core::ObjectId;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&id.to_hex())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        let s = String::deserialize(d)?;
        super::parse_id(&s).ok_or_else(|| serde::de::Error::custom("invalid object id"))
    }
}

/// The most commit ids a head's `recent` may name; a longer list is refused.
pub(crate) const MAX_RECENT: usize = 256;

/// Parses 64 hex characters.
pub(crate) fn parse_id(s: &str) -> Option<ObjectId> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(s, &mut bytes).ok()?;
    Some(ObjectId::from_bytes(bytes))
}

/// A decoded directory page.
#[derive(Debug)]
pub(crate) enum Page {
    /// Entries, strictly increasing by name; child directories stored (not loaded).
    Leaf(Vec<(Name, Node)>),
    /// The pages below, in order (at least one), and what guides a search down through them.
    Index(Index),
}

/// An index page: the ids of the pages below it and what each holds.
#[derive(Debug)]
pub(crate) struct Index {
    /// The pages below, in order (at least one).
    pub(crate) pages: Vec<ObjectId>,
    /// What guides a search down through them.
    pub(crate) guide: Guide,
}

/// What an index page says of the pages below it besides their ids, so that a reader goes
/// down one page a level to the leaf a name falls in and knows the leaf's place.
#[derive(Debug)]
pub(crate) struct Guide {
    /// Levels from this page down to the leaves: 1 when its children are leaves.
    pub(crate) height: u32,
    /// The leaves below each child (each 1 at height 1).
    pub(crate) leaves: Vec<u64>,
    /// The low of each child but the first, increasing: the lowest name that falls below it,
    /// the shortest prefix of its first name that sorts after the last name before it
    /// (`pages::separator`). A name falls below the last child whose low is at most it. The
    /// first child's low is in the page above (or, for the directory's first leaf, nowhere: it
    /// holds everything below the second's).
    pub(crate) lows: Vec<Name>,
}

/// A child of an index page, as written.
pub(crate) struct IndexChild<'a> {
    pub(crate) id: &'a ObjectId,
    pub(crate) leaves: u64,
    pub(crate) low: Option<&'a Name>,
}

/// Encodes a leaf page of entries whose child directories all have ids (the binary form,
/// below). Returns `None` if one has not been written yet (the caller writes children first).
pub(crate) fn encode_leaf<'a>(entries: impl Iterator<Item = (&'a Name, &'a Node)>) -> Option<Vec<u8>> {
    let entries: Vec<(&Name, &Node)> = entries.collect();
    let mut out = Vec::with_capacity(5 + entries.len() * 56);
    out.push(LEAF_PAGE);
    let varint = |out: &mut Vec<u8>, n: u64| out.extend_from_slice(&n.encode_var_vec());
    varint(&mut out, entries.len() as u64);
    for (name, node) in entries {
        let name = name.as_str().as_bytes();
        let (kind, id) = match node {
            Node::File(f) => (FILE_ENTRY, f.id),
            Node::Dir(d) => (DIR_ENTRY, d.id()?),
        };
        out.push(kind);
        varint(&mut out, name.len() as u64);
        out.extend_from_slice(name);
        out.extend_from_slice(&id.to_bytes());
        let (a, b) = match node {
            Node::File(f) => (f.size, u64::from(f.accessed)),
            Node::Dir(d) => (d.totals().files, d.totals().bytes),
        };
        varint(&mut out, a);
        varint(&mut out, b);
    }
    Some(out)
}

/// Encodes an index page (the binary form, below) at `height` above the leaves.
/// Every child but the first must have its low; the first's is not written.
pub(crate) fn encode_index(height: u32, children: &[IndexChild<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + children.len() * 44);
    out.push(INDEX_PAGE);
    let varint = |out: &mut Vec<u8>, n: u64| out.extend_from_slice(&n.encode_var_vec());
    varint(&mut out, u64::from(height));
    varint(&mut out, children.len() as u64);
    let mut previous: &[u8] = &[];
    for (i, child) in children.iter().enumerate() {
        out.extend_from_slice(&child.id.to_bytes());
        if height > 1 {
            varint(&mut out, child.leaves);
        }
        if i > 0 {
            let name = child.low.expect("every child but the first has its low").as_str().as_bytes();
            let shared = name.iter().zip(previous).take_while(|(a, b)| a == b).count();
            varint(&mut out, shared as u64);
            varint(&mut out, (name.len() - shared) as u64);
            out.extend_from_slice(&name[shared..]);
            previous = name;
        }
    }
    out
}

/// Encodes a decoded index page again, for the fuzzers and the tests that forge pages.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn reencode_index(index: &Index) -> Vec<u8> {
    let guide = &index.guide;
    let children: Vec<IndexChild<'_>> = (0..index.pages.len())
        .map(|i| IndexChild {
            id: &index.pages[i],
            leaves: guide.leaves[i],
            low: i.checked_sub(1).map(|j| &guide.lows[j]),
        })
        .collect();
    encode_index(guide.height, &children)
}

/// The first byte of a directory page: a leaf or an index.
const LEAF_PAGE: u8 = 0x03;
const INDEX_PAGE: u8 = 0x05;
/// An entry's kind in a leaf.
const FILE_ENTRY: u8 = 0x00;
const DIR_ENTRY: u8 = 0x01;

/// Decodes a directory page; children stay stored (not loaded).
pub(crate) fn decode_page(bytes: &[u8], id: &ObjectId) -> Result<Page, Error> {
    match bytes.first() {
        Some(&LEAF_PAGE) => decode_leaf(bytes, id),
        Some(&INDEX_PAGE) => decode_index(bytes, id),
        _ => Err(corrupt(id, "directory page", &"not a leaf or an index page")),
    }
}

/// A leaf page: `0x03`, the entry count, then per entry: its kind (`0x00` file, `0x01`
/// directory), the name's length and UTF-8 bytes, the id (32 bytes), and for a file its size
/// and last-access day, for a directory its files and bytes below. Every number is a varint
/// (LEB128). Nothing may follow; names are checked as stored names are, and must be strictly
/// increasing.
fn decode_leaf(bytes: &[u8], id: &ObjectId) -> Result<Page, Error> {
    let bad = |reason: &str| corrupt(id, "directory page", &reason);
    let mut r = Reader::new(bytes, 1);
    let count = r.varint().ok_or_else(|| bad("truncated"))?;
    let mut entries: Vec<(Name, Node)> = Vec::new();
    for _ in 0..count {
        let kind = r.take(1).ok_or_else(|| bad("truncated"))?[0];
        let len = r.varint().ok_or_else(|| bad("truncated"))?;
        let name = r.take(usize::try_from(len).unwrap_or(usize::MAX)).ok_or_else(|| bad("truncated"))?;
        let name = std::str::from_utf8(name).map_err(|_| bad("a name is not UTF-8"))?;
        // Through `Name`'s own `Deserialize`: the rules for names read from the store.
        let name = Name::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(name))
            .map_err(|e| corrupt(id, "directory page", &e))?;
        let entry_id = r.id().ok_or_else(|| bad("truncated"))?;
        let a = r.varint().ok_or_else(|| bad("truncated"))?;
        let node = match kind {
            FILE_ENTRY => {
                let day = r.varint().ok_or_else(|| bad("truncated"))?;
                let accessed = u32::try_from(day).map_err(|_| bad("a day out of range"))?;
                Node::File(FileRef { id: entry_id, size: a, accessed })
            }
            DIR_ENTRY => {
                let bytes = r.varint().ok_or_else(|| bad("truncated"))?;
                Node::Dir(DirRef::stored(entry_id, Totals { files: a, bytes }))
            }
            _ => return Err(bad("an entry of unknown kind")),
        };
        if entries.last().is_some_and(|(previous, _)| previous >= &name) {
            return Err(out_of_order(id));
        }
        entries.push((name, node));
    }
    match r.at == bytes.len() {
        true => Ok(Page::Leaf(entries)),
        false => Err(bad("bytes after the last entry")),
    }
}

/// An index page: `0x05`, its height (at least 1), the child count (at least 1),
/// then per child its id (32 bytes), at a height above 1 the leaves below it (at least 1),
/// and for every child but the first its low (a name, [`Guide::lows`]), as the bytes it
/// shares with the low before it in the page (a count; 0 for the second child), the count of
/// the bytes that follow, and those bytes. Every number is a varint; names are checked as stored names are,
/// and must be strictly increasing; nothing may follow.
fn decode_index(bytes: &[u8], id: &ObjectId) -> Result<Page, Error> {
    let bad = |reason: &str| corrupt(id, "directory page", &reason);
    let mut r = Reader::new(bytes, 1);
    let height = r.varint().ok_or_else(|| bad("truncated"))?;
    let height = u32::try_from(height)
        .ok()
        .filter(|h| (1..=MAX_HEIGHT).contains(h))
        .ok_or_else(|| bad("a height out of range"))?;
    let count = r.varint().ok_or_else(|| bad("truncated"))?;
    if count == 0 {
        return Err(Error::Corrupt { object: object_name(id), reason: "empty index page".into() });
    }
    // At least 32 bytes a child: a count the bytes cannot hold is refused before it allocates.
    if count > (bytes.len() / 32) as u64 {
        return Err(bad("truncated"));
    }
    let mut pages = Vec::with_capacity(count as usize);
    let mut leaves = Vec::with_capacity(count as usize);
    let mut lows: Vec<Name> = Vec::with_capacity(count as usize - 1);
    for i in 0..count {
        pages.push(r.id().ok_or_else(|| bad("truncated"))?);
        let below = match height {
            1 => 1,
            _ => r.varint().ok_or_else(|| bad("truncated"))?,
        };
        if below == 0 {
            return Err(bad("a child with no leaves"));
        }
        leaves.push(below);
        if i == 0 {
            continue;
        }
        let previous = lows.last().map_or(&[][..], |n| n.as_str().as_bytes());
        let shared = r.varint().and_then(|n| usize::try_from(n).ok()).ok_or_else(|| bad("truncated"))?;
        let len = r.varint().and_then(|n| usize::try_from(n).ok()).ok_or_else(|| bad("truncated"))?;
        let rest = r.take(len).ok_or_else(|| bad("truncated"))?;
        let prefix = previous.get(..shared).ok_or_else(|| bad("a name shares more than the name before it"))?;
        let name = std::str::from_utf8(&[prefix, rest].concat()).map_err(|_| bad("a name is not UTF-8"))?.to_owned();
        let name = Name::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(&name))
            .map_err(|e| corrupt(id, "directory page", &e))?;
        if lows.last().is_some_and(|before| before >= &name) {
            return Err(out_of_order(id));
        }
        lows.push(name);
    }
    if leaves.iter().try_fold(0u64, |sum, n| sum.checked_add(*n)).is_none() {
        return Err(bad("more leaves than can be counted"));
    }
    match r.at == bytes.len() {
        true => Ok(Page::Index(Index { pages, guide: Guide { height, leaves, lows } })),
        false => Err(bad("bytes after the last page")),
    }
}

/// `s` as a name read from the store (the rules names read back are held to), if it is one.
pub(crate) fn stored_name(s: &str) -> Option<Name> {
    Name::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(s)).ok()
}

/// The most levels of index pages a directory may have: with at least two children an index
/// page, 64 levels hold more leaves than a u64 counts.
pub(crate) const MAX_HEIGHT: u32 = 64;

/// Reads a binary page or commit front to back; `None` when the bytes end early.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], at: usize) -> Reader<'a> {
        Reader { bytes, at }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }
    fn id(&mut self) -> Option<ObjectId> {
        Some(ObjectId::from_bytes(self.take(32)?.try_into().ok()?))
    }
    fn varint(&mut self) -> Option<u64> {
        let (n, len) = u64::decode_var(self.bytes.get(self.at..)?)?;
        self.at += len;
        Some(n)
    }
}

/// A page in a level of several leaves with no entry (only the one leaf of an empty
/// directory is empty).
pub(crate) fn empty_leaf(id: &ObjectId) -> Error {
    Error::Corrupt { object: object_name(id), reason: "an empty leaf page in a directory of several".into() }
}

/// The error for entries that are not strictly increasing (within a page or across pages).
pub(crate) fn out_of_order(id: &ObjectId) -> Error {
    Error::Corrupt { object: object_name(id), reason: "directory entries out of order".into() }
}

/// A commit as stored (`binary_commit.rs`).
#[derive(Debug, Clone)]
pub(crate) struct CommitObject {
    /// The previous commit; `None` for the first.
    pub(crate) parent: Option<ObjectId>,
    /// The root directory.
    pub(crate) tree: ObjectId,
    /// The generation this commit was made at.
    pub(crate) generation: u64,
    /// Milliseconds since the Unix epoch.
    pub(crate) time_ms: u64,
    /// Agent or user name.
    pub(crate) actor: String,
    /// The command, as its JSON form.
    pub(crate) command: String,
    /// What changed.
    pub(crate) changes: Vec<Change>,
    /// Files in the tree, at any depth.
    pub(crate) files: u64,
    /// Their bytes.
    pub(crate) bytes: u64,
    /// The store's policy object; absent: the default policy.
    pub(crate) policy: Option<ObjectId>,
    /// A purge commit's record of the commits it rewrote: the old id of every commit whose
    /// id changed, by generation, so that a client that remembers one of them still finds it
    /// in the history it descends from. Empty in every other commit.
    pub(crate) replaced: Vec<CommitAt>,
}

impl CommitObject {
    /// The plaintext of this commit (the binary form).
    pub(crate) fn encode(&self) -> Vec<u8> {
        binary_commit::encode(self)
    }

    /// Decodes a stored commit; the error says what is wrong with it.
    pub(crate) fn decode(bytes: &[u8]) -> Result<CommitObject, String> {
        match bytes.first() {
            Some(&binary_commit::BINARY_COMMIT) => binary_commit::decode(bytes).map_err(str::to_owned),
            _ => Err("not a commit (an unknown first byte)".to_owned()),
        }
    }
}

/// A commit named by its generation and id: an entry of a purge commit's `replaced` record
/// or of gc's `cut` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CommitAt {
    /// The commit's generation.
    pub(crate) generation: u64,
    /// Its id.
    #[serde(with = "hex_id")]
    pub(crate) commit: ObjectId,
}

/// The head as stored (`binary_head.rs`): which commit is newest, and a snapshot of the
/// objects a reader with empty caches needs first.
#[derive(Debug, Clone)]
// `pub` for `memfs_store::fuzzing` (feature `testing`); unreachable without it.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub struct HeadObject {
    /// The store's id as in `memfs.keys` (32 lowercase hex digits): a head copied from another
    /// store is refused. Absent where there is no `memfs.keys` (an in-memory store).
    pub store_id: Option<String>,
    /// The change counter of the `memfs.keys` its writer held: a reader holding a lower one
    /// reads `memfs.keys` again, and refuses one still lower as a rollback. Absent where the
    /// writer holds no root key.
    pub keys: Option<u64>,
    /// Increases by one per commit.
    pub generation: u64,
    /// The newest commit.
    pub commit: ObjectId,
    /// The commits before `commit`, newest first: `recent[i]` is the commit at generation
    /// `generation - 1 - i`, as the writer of this head knew them from the head it committed
    /// on. Lets a reader see that this head descends from a commit it remembers, and a writer
    /// whether its commit landed, without fetching the commits between (on object storage,
    /// one request each). Written by object-store clients only; empty in a purge's head (its
    /// commits were rewritten) and on local folders, where the walk reads the log.
    pub recent: Vec<ObjectId>,
    /// Copies of immutable objects (the commit, its policy, the tree's top directory pages in
    /// breadth-first order, then the contents of the files in those directories), each verified
    /// against its id like a fetched object. Possibly empty.
    pub inline: Vec<InlineObject>,
}

impl HeadObject {
    /// The commit this head names at `generation` without a fetch: its own, or one of
    /// [`HeadObject::recent`]; `None` when `generation` is newer, or older than `recent` goes.
    pub(crate) fn commit_at(&self, generation: u64) -> Option<ObjectId> {
        let back = self.generation.checked_sub(generation)?;
        match back {
            0 => Some(self.commit),
            _ => usize::try_from(back - 1).ok().and_then(|i| self.recent.get(i)).copied(),
        }
    }

    /// Where a walk down the parents to `floor` may start: the commit this head names at the
    /// lowest generation above `floor` that it names (its own when it names none below it),
    /// and that generation. The commits between it and the head are the ones the list names,
    /// so a client that remembers a commit further back than the list goes, or a writer that
    /// lost to more commits than it names, fetches only the commits below the list (a writer
    /// 40 commits behind on S3 fetched 40, one request each, where 8 remain).
    pub(crate) fn walk_start(&self, floor: u64) -> (ObjectId, u64) {
        if !self.recent_fits() {
            return (self.commit, self.generation);
        }
        let oldest = self.generation - self.recent.len() as u64;
        let generation = floor.saturating_add(1).clamp(oldest, self.generation);
        (self.commit_at(generation).unwrap_or(self.commit), generation)
    }

    /// The plaintext of this head (the binary form).
    pub(crate) fn encode(&self) -> Vec<u8> {
        binary_head::encode(self)
    }

    /// Decodes a stored head; `address` gives an inline object's id from its kind and
    /// plaintext (a head does not store them: its reader computes them). The error says what
    /// is wrong with it.
    pub(crate) fn decode(bytes: &[u8], address: impl Fn(InlineKind, &[u8]) -> ObjectId) -> Result<HeadObject, String> {
        match bytes.first() {
            Some(&binary_head::BINARY_HEAD) => binary_head::decode(bytes, address).map_err(str::to_owned),
            _ => Err("not a head (an unknown first byte)".to_owned()),
        }
    }

    /// Decodes a stored head as [`HeadObject::decode`] does, with every inline id zero: for
    /// re-encoding a head (the fuzz targets), never for opening one.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn decode_unverified(bytes: &[u8]) -> Result<HeadObject, String> {
        Self::decode(bytes, |_, _| ObjectId::from_bytes([0; 32]))
    }

    /// Whether `recent` can be what its writer says: no more commits than there are
    /// generations below this one (generations count from 1).
    pub(crate) fn recent_fits(&self) -> bool {
        self.recent.len() as u64 <= self.generation.saturating_sub(1)
    }
}

/// An immutable object carried inside the head: its kind, id and plaintext.
#[derive(Debug, Clone)]
// `pub` for `memfs_store::fuzzing` (feature `testing`); unreachable without it.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub struct InlineObject {
    /// Which kind of object.
    pub kind: InlineKind,
    /// Its id: the keyed hash of `plain`, computed by the head's reader.
    pub id: ObjectId,
    /// Its plaintext.
    pub plain: Vec<u8>,
    /// Not stored under `objects/`. This copy is then the object's only one: the next head
    /// carries it again, or its writer stores it under `objects/` before swapping the head.
    /// False: a copy of a stored object.
    pub unwritten: bool,
}

/// The kinds of object a head may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// `pub` for `memfs_store::fuzzing` (feature `testing`); unreachable without it.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub enum InlineKind {
    /// A commit.
    Commit,
    /// A policy.
    Policy,
    /// A directory page.
    Dir,
    /// A file's content (UTF-8 text only), addressed by the blob address key.
    Blob,
}

impl InlineKind {
    /// The kind an object of this kind is sealed as.
    pub(crate) fn object_kind(self) -> ObjectKind {
        match self {
            InlineKind::Commit => ObjectKind::Commit,
            InlineKind::Policy => ObjectKind::Policy,
            InlineKind::Dir => ObjectKind::Dir,
            InlineKind::Blob => ObjectKind::Blob,
        }
    }

    /// What an error calls an object of this kind.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            InlineKind::Commit => "commit",
            InlineKind::Policy => "policy",
            InlineKind::Dir => "directory page",
            InlineKind::Blob => "file content",
        }
    }

    /// The inline kind of an object kind (`None` for the head's own).
    pub(crate) fn of(kind: ObjectKind) -> Option<InlineKind> {
        match kind {
            ObjectKind::Commit => Some(InlineKind::Commit),
            ObjectKind::Policy => Some(InlineKind::Policy),
            ObjectKind::Dir => Some(InlineKind::Dir),
            ObjectKind::Blob => Some(InlineKind::Blob),
            _ => None,
        }
    }
}

/// gc's state (sealed as kind Head under its own fixed id): the retention horizon and the
/// unreachable objects waiting out the grace period.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GcStateObject {
    /// The generation of the oldest retained commit; older commits may be gone. 0: none cut.
    pub(crate) horizon: u64,
    /// Unreachable objects (hex id) and when gc first saw them unreachable (ms since the epoch).
    pub(crate) pending: std::collections::BTreeMap<String, u64>,
    /// The newest commits retention cut (at most [`CUT_RECORD`], oldest dropped first), so that a client that remembers one of them still verifies the head.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) cut: Vec<CommitAt>,
}

/// How many cut commits `gc.state` remembers: 80 bytes each in its plaintext, 640 KiB at
/// most. A client whose remembered commit is older than these gets a fork error and must
/// trust the head explicitly (docs/SECURITY.md).
pub(crate) const CUT_RECORD: usize = 8192;

/// The folder every object is stored under.
pub(crate) const OBJECTS_PREFIX: &str = "objects";

/// Where object `id` is stored, under the store's prefix: `objects/{id[0..2]}/{id}`.
pub(crate) fn object_path(id: &ObjectId) -> object_store::path::Path {
    // By its parts: `Path::from` of the whole name splits it with a substring search.
    let hex = id.to_hex();
    object_store::path::Path::from_iter([OBJECTS_PREFIX, &hex[..2], &hex])
}

/// [`object_path`] spelled out, as messages name an object.
pub(crate) fn object_name(id: &ObjectId) -> String {
    object_path(id).into()
}

pub(crate) fn corrupt(id: &ObjectId, what: &str, e: &dyn std::fmt::Display) -> Error {
    corrupt_named(&object_name(id), what, e)
}

/// Constant-time id comparison: an id checked against the keyed hash of what it names.
pub(crate) fn id_eq(a: &ObjectId, b: &ObjectId) -> bool {
    blake3::Hash::from_bytes(a.to_bytes()) == blake3::Hash::from_bytes(b.to_bytes())
}

pub(crate) fn corrupt_named(object: &str, what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Corrupt { object: object.to_owned(), reason: format!("undecodable {what}: {e}") }
}
