//! Plaintext layouts of the stored objects, before sealing (format 6, see `docs/FORMAT.md`).
//!
//! Every layout is JSON; the sealed envelope around it (`memfs-crypt`) carries the format
//! version and binds the object's kind and id. Unknown fields are refused, so a newer writer's
//! additions are noticed instead of silently dropped.

use memfs_core::{Change, DirRef, FileRef, Name, Node, ObjectId, Totals};
use memfs_crypt::ObjectKind;
use serde::{Deserialize, Serialize};

use crate::error::Error;

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

    pub(crate) mod option {
        use memfs_core::ObjectId;
        use serde::{Deserialize, Deserializer, Serializer};

        pub(crate) fn serialize<S: Serializer>(id: &Option<ObjectId>, s: S) -> Result<S::Ok, S::Error> {
            match id {
                Some(id) => s.serialize_some(&id.to_hex()),
                None => s.serialize_none(),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ObjectId>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|s| crate::format::parse_id(&s).ok_or_else(|| serde::de::Error::custom("invalid object id")))
                .transpose()
        }
    }
}

/// Parses 64 hex characters.
pub(crate) fn parse_id(s: &str) -> Option<ObjectId> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(s, &mut bytes).ok()?;
    Some(ObjectId::from_bytes(bytes))
}

/// One directory entry as stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum EntryObject {
    File {
        name: Name,
        #[serde(with = "hex_id")]
        id: ObjectId,
        size: u64,
        /// Last-access day (days since 1970-01-01).
        accessed: u32,
    },
    Dir {
        name: Name,
        #[serde(with = "hex_id")]
        id: ObjectId,
        /// Files below, at any depth.
        files: u64,
        /// Their bytes.
        bytes: u64,
    },
}

/// A directory page as stored (see `crate::pages`): a leaf holds entries in name order, an
/// index holds the ids of the pages below it, in order. A directory's id is its top page's.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum PageObject {
    Leaf(LeafObject),
    Index(IndexObject),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeafObject {
    entries: Vec<EntryObject>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexObject {
    pages: Vec<HexId>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
struct HexId(#[serde(with = "hex_id")] ObjectId);

/// A decoded directory page.
#[derive(Debug)]
pub(crate) enum Page {
    /// Entries, strictly increasing by name; child directories stored (not loaded).
    Leaf(Vec<(Name, Node)>),
    /// The pages below, in order (at least one).
    Index(Vec<ObjectId>),
}

/// Encodes a leaf page of entries whose child directories all have ids. Returns `None` if
/// one has not been written yet (the caller writes children first).
pub(crate) fn encode_leaf<'a>(entries: impl Iterator<Item = (&'a Name, &'a Node)>) -> Option<Vec<u8>> {
    let entries = entries
        .map(|(name, node)| match node {
            Node::File(f) => {
                Some(EntryObject::File { name: name.clone(), id: f.id, size: f.size, accessed: f.accessed })
            }
            Node::Dir(d) => {
                let t = d.totals();
                Some(EntryObject::Dir { name: name.clone(), id: d.id()?, files: t.files, bytes: t.bytes })
            }
        })
        .collect::<Option<Vec<_>>>()?;
    serde_json::to_vec(&PageObject::Leaf(LeafObject { entries })).ok()
}

/// Encodes an index page.
pub(crate) fn encode_index(pages: &[ObjectId]) -> Vec<u8> {
    let pages = pages.iter().map(|id| HexId(*id)).collect();
    serde_json::to_vec(&PageObject::Index(IndexObject { pages })).expect("index page serializes")
}

/// Decodes a directory page; children stay stored (not loaded).
pub(crate) fn decode_page(bytes: &[u8], id: &ObjectId) -> Result<Page, Error> {
    let obj: PageObject = serde_json::from_slice(bytes).map_err(|e| corrupt(id, "directory page", &e))?;
    let leaf = match obj {
        PageObject::Index(IndexObject { pages }) if pages.is_empty() => {
            return Err(Error::Corrupt { object: object_name(id), reason: "empty index page".into() });
        }
        PageObject::Index(IndexObject { pages }) => return Ok(Page::Index(pages.into_iter().map(|h| h.0).collect())),
        PageObject::Leaf(leaf) => leaf,
    };
    let mut previous: Option<Name> = None;
    let mut entries = Vec::with_capacity(leaf.entries.len());
    for e in leaf.entries {
        let (name, node) = match e {
            EntryObject::File { name, id, size, accessed } => (name, Node::File(FileRef { id, size, accessed })),
            EntryObject::Dir { name, id, files, bytes } => {
                (name, Node::Dir(DirRef::stored(id, Totals { files, bytes })))
            }
        };
        // Names must be strictly increasing: no duplicates, canonical order.
        if previous.as_ref().is_some_and(|p| p >= &name) {
            return Err(out_of_order(id));
        }
        previous = Some(name.clone());
        entries.push((name, node));
    }
    Ok(Page::Leaf(entries))
}

/// The error for entries that are not strictly increasing (within a page or across pages).
pub(crate) fn out_of_order(id: &ObjectId) -> Error {
    Error::Corrupt { object: object_name(id), reason: "directory entries out of order".into() }
}

/// A commit as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitObject {
    /// The previous commit; `None` for the first.
    #[serde(with = "hex_id::option")]
    pub(crate) parent: Option<ObjectId>,
    /// The root directory.
    #[serde(with = "hex_id")]
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
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex_id::option")]
    pub(crate) policy: Option<ObjectId>,
    /// A purge commit's record of the commits it rewrote (format 6): the old id of every
    /// commit whose id changed, by generation, so that a client that remembers one of them
    /// still finds it in the history it descends from. Absent in every other commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) replaced: Vec<CommitAt>,
}

/// A commit named by its generation and id: an entry of a purge commit's `replaced` record
/// or of gc's `cut` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitAt {
    /// The commit's generation.
    pub(crate) generation: u64,
    /// Its id.
    #[serde(with = "hex_id")]
    pub(crate) commit: ObjectId,
}

/// The head as stored: which commit is newest, and a snapshot of the objects a reader with
/// empty caches needs first (format 4).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeadObject {
    /// The store's id as in `memfs.keys` (32 lowercase hex digits; format 6): a head copied
    /// from another store is refused. Absent in a head written before format 6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) store_id: Option<String>,
    /// The change counter of the `memfs.keys` its writer held (format 7): a reader holding a
    /// lower one reads `memfs.keys` again, and refuses one still lower as a rollback. Absent
    /// before format 7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<u64>,
    /// Increases by one per commit.
    pub(crate) generation: u64,
    /// The newest commit.
    #[serde(with = "hex_id")]
    pub(crate) commit: ObjectId,
    /// Copies of immutable objects (the commit, its policy, the tree's top directory pages in
    /// breadth-first order, then the contents of the files in those directories), each verified
    /// against its id like a fetched object. Possibly empty.
    pub(crate) inline: Vec<InlineObject>,
}

/// An immutable object carried inside the head: its kind, id and plaintext.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InlineObject {
    /// Which kind of object.
    pub(crate) kind: InlineKind,
    /// Its id, which must be the keyed hash of `plain`.
    #[serde(with = "hex_id")]
    pub(crate) id: ObjectId,
    /// Its plaintext (JSON, carried as a string).
    pub(crate) plain: String,
    /// Format 8: not stored under `objects/`. This copy is then the object's only one: the
    /// next head carries it again, or its writer stores it under `objects/` before swapping
    /// the head. Absent (false): a copy of a stored object.
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) unwritten: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The kinds of object a head may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum InlineKind {
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
#[serde(deny_unknown_fields)]
pub(crate) struct GcStateObject {
    /// The generation of the oldest retained commit; older commits may be gone. 0: none cut.
    pub(crate) horizon: u64,
    /// Unreachable objects (hex id) and when gc first saw them unreachable (ms since the epoch).
    pub(crate) pending: std::collections::BTreeMap<String, u64>,
    /// The newest commits retention cut (format 6; at most [`CUT_RECORD`], oldest dropped
    /// first), so that a client that remembers one of them still verifies the head.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) cut: Vec<CommitAt>,
}

/// How many cut commits `gc.state` remembers: 80 bytes each in its plaintext, 640 KiB at
/// most. A client whose remembered commit is older than these gets a fork error and must
/// trust the head explicitly (docs/SECURITY.md).
pub(crate) const CUT_RECORD: usize = 8192;

/// An object's name in the store: `objects/{id[0..2]}/{id}`.
pub(crate) fn object_name(id: &ObjectId) -> String {
    let hex = id.to_hex();
    format!("objects/{}/{hex}", &hex[..2])
}

pub(crate) fn corrupt(id: &ObjectId, what: &str, e: &dyn std::fmt::Display) -> Error {
    corrupt_named(&object_name(id), what, e)
}

pub(crate) fn corrupt_named(object: &str, what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Corrupt { object: object.to_owned(), reason: format!("undecodable {what}: {e}") }
}
