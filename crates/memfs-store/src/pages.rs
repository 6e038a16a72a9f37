//! Directory pages: a directory is stored as a small tree of pages, so a change to one entry
//! rewrites a bounded number of bytes however large the directory is.
//!
//! The entries, in name order, are cut into leaf pages at content-defined boundaries: an entry
//! ends its page when a keyed hash of its name says so (one in [`LEAF_FANOUT`]), provided the
//! page has at least [`MIN_ENTRIES`], or when the page reaches [`MAX_ENTRIES`]. If there is
//! more than one leaf, the leaf ids are cut the same way into index pages (one in [`FANOUT`],
//! the boundary decided by the child page's id, itself a keyed hash), and so on until one page
//! remains: the directory's top page, whose id is the directory's id. An index page also
//! names, for each page below it, the leaves under it and its low ([`Child`]: the lowest name
//! that falls below it), so a reader finds the leaf a name falls in one page a level down, and a change is cut again
//! around itself only (`encrypted/recut.rs`).
//!
//! Boundaries depend only on the entries, not on the history of edits (a prolly tree), so
//! equal directories get equal pages, and an insertion or removal changes the one leaf it
//! falls in (and rarely a neighbour) plus one page per index level. The encoder rebuilds every
//! page of a changed directory in memory, which is CPU work proportional to its entries; only
//! pages the store does not already hold are written. With leaves of 2 to 16 entries cut one
//! in four and index pages cut one in eight, a 10-entry directory is one to six pages, a
//! 10,000-entry one four index levels above its leaves, and a `create` writes about 1.7 times
//! the bytes in a 100 × 100 tree that it writes in a 10 × 10 one (`tests/store/scale.rs`).
//!
//! Leaves are cut finer than index pages because a change rewrites the leaf it falls in, and
//! the leaf an entry falls in is on average about twice the mean leaf: smaller leaves write
//! fewer bytes per change, for more leaves to read in a large directory (docs/FORMAT.md).
//!
//! The name hash is keyed (the tree address key, over a prefix no stored object starts with),
//! so page sizes tell the storage holder nothing about names it could not see anyway.

use memfs_core::{Dir, Name, Node, ObjectId};
use memfs_crypt::AddressKey;

use crate::format;

/// One index page boundary in this many child pages, on average.
pub(crate) const FANOUT: u32 = 8;
/// One leaf boundary in this many entries, on average.
pub(crate) const LEAF_FANOUT: u32 = 4;
/// No boundary before a page has this many entries (except at the end).
pub(crate) const MIN_ENTRIES: usize = 2;
/// A page never has more entries than this.
pub(crate) const MAX_ENTRIES: usize = 16;

/// The plaintext pages of one directory, bottom-up; the last is the top page.
pub(crate) struct Pages {
    /// Each page's id (the tree address of its plaintext) and plaintext.
    pub(crate) pages: Vec<(ObjectId, Vec<u8>)>,
}

impl Pages {
    /// The directory's id: its top page's.
    pub(crate) fn id(&self) -> ObjectId {
        self.pages.last().expect("a directory has at least one page").0
    }
}

/// Cuts `dir` into pages. Returns `None` if a child directory has no id yet.
pub(crate) fn encode(dir: &Dir, key: &AddressKey) -> Option<Pages> {
    let entries: Vec<(&Name, &Node)> = dir.entries().collect();
    let mut pages = Vec::new();
    let mut leaves: Vec<Child> = Vec::new();
    let mut last: Option<&Name> = None;
    for chunk in cut(&entries, |(name, _)| name_boundary(key, name)) {
        let plain = format::encode_leaf(chunk.iter().copied())?;
        let id = key.address(&plain);
        let low = last.zip(chunk.first()).map(|(last, (first, _))| separator(last, first));
        leaves.push(Child { id, leaves: 1, low });
        last = chunk.last().map(|(name, _)| *name);
        pages.push((id, plain));
    }
    encode_index(leaves, 1, key, &mut pages);
    Some(Pages { pages })
}

/// A page below an index page, as the index page names it: its id, the leaves below it (1
/// for a leaf) and its low: the lowest name that falls below it, the [`separator`] of its first
/// leaf from the leaf before (`None` only for the directory's first leaf, which no page
/// names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Child {
    pub(crate) id: ObjectId,
    pub(crate) leaves: u64,
    pub(crate) low: Option<Name>,
}

/// Cuts a whole level of a directory's pages (the pages at `height - 1`: its leaves at
/// `height` 1), in order, into index pages, level by level, and adds them to `pages`
/// (bottom-up); returns the top page (the one page of `level`, if it has one).
pub(crate) fn encode_index(
    mut level: Vec<Child>,
    mut height: u32,
    key: &AddressKey,
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
) -> Child {
    while level.len() > 1 {
        let mut above = Vec::new();
        for chunk in cut(&level, |child| id_boundary(&child.id)) {
            above.push(index_page(height, chunk, key, pages));
        }
        level = above;
        height += 1;
    }
    level.pop().expect("a directory has at least one leaf")
}

/// Encodes one index page at `height` of `children`, adds it to `pages`, and returns it as a
/// child of the page above.
pub(crate) fn index_page(
    height: u32,
    children: &[Child],
    key: &AddressKey,
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
) -> Child {
    let named: Vec<format::IndexChild<'_>> =
        children.iter().map(|c| format::IndexChild { id: &c.id, leaves: c.leaves, low: c.low.as_ref() }).collect();
    let plain = format::encode_index(height, &named);
    let id = key.address(&plain);
    pages.push((id, plain));
    Child { id, leaves: children.iter().map(|c| c.leaves).sum(), low: children[0].low.clone() }
}

/// The low of a leaf whose first name is `first` after a leaf whose last name is `last`
/// (`last < first`): the shortest prefix of `first`, in whole characters, that sorts after
/// `last` and is a name. Every name of the leaf is at least it, every name before it less,
/// and it is often much shorter than `first` (`f10405.md` after `f10305.md`: `f104`).
pub(crate) fn separator(last: &Name, first: &Name) -> Name {
    let s = first.as_str();
    for (i, c) in s.char_indices() {
        let prefix = &s[..i + c.len_utf8()];
        if prefix > last.as_str()
            && let Some(name) = format::stored_name(prefix)
        {
            return name;
        }
    }
    first.clone()
}

/// Whether the page being filled ends after its `len`-th item, whose boundary test is
/// `boundary`. Nothing but `len` and that item decides: cutting a run of entries from any
/// page start gives the pages a cut from the first entry gives from there.
pub(crate) fn ends_page(len: usize, boundary: impl FnOnce() -> bool) -> bool {
    (len >= MIN_ENTRIES && boundary()) || len >= MAX_ENTRIES
}

/// Splits `items` after each boundary; an empty slice gives one empty chunk (an empty
/// directory is one empty leaf).
fn cut<T>(items: &[T], boundary: impl Fn(&T) -> bool) -> Vec<&[T]> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for (i, item) in items.iter().enumerate() {
        if ends_page(i + 1 - start, || boundary(item)) {
            chunks.push(&items[start..=i]);
            start = i + 1;
        }
    }
    if start < items.len() || chunks.is_empty() {
        chunks.push(&items[start..]);
    }
    chunks
}

/// Whether an entry with this name ends its leaf.
pub(crate) fn name_boundary(key: &AddressKey, name: &Name) -> bool {
    // A leading NUL: no plaintext addressed with this key starts with one (a page starts with
    // 0x03 or 0x05, a commit with 0x03, a policy with `{`), so this hash is never an id.
    let mut input = Vec::with_capacity(name.as_str().len() + 16);
    input.extend_from_slice(b"\0page boundary\0");
    input.extend_from_slice(name.as_str().as_bytes());
    hash_boundary(&key.address(&input), LEAF_FANOUT)
}

/// Whether a child page with this id ends its index page.
pub(crate) fn id_boundary(id: &ObjectId) -> bool {
    hash_boundary(id, FANOUT)
}

fn hash_boundary(hash: &ObjectId, fanout: u32) -> bool {
    let b = hash.to_bytes();
    u32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_multiple_of(fanout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_respects_min_max_and_covers_everything() {
        let items: Vec<u32> = (0..100).collect();
        // Every item a boundary: pages of MIN_ENTRIES.
        let chunks = cut(&items, |_| true);
        assert!(chunks.iter().all(|c| c.len() == MIN_ENTRIES));
        // No boundaries: pages of MAX_ENTRIES and the rest.
        let chunks = cut(&items, |_| false);
        assert_eq!(chunks.iter().map(|c| c.len()).collect::<Vec<_>>(), [16, 16, 16, 16, 16, 16, 4]);
        assert_eq!(chunks.concat(), items);
        // Empty: one empty chunk.
        assert_eq!(cut::<u32>(&[], |_| true), [&[] as &[u32]]);
    }
}
