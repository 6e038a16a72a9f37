//! Large directories a leaf at a time: a command that needs one name of a directory of
//! thousands reads the directory's index pages and a few of its leaves, and its commit
//! rewrites only the leaves its change falls in (and the index pages above them).
//!
//! Leaves hold the entries in name order, but index pages name only the pages below them, not
//! their names, so the leaf a name falls in is found by searching the leaves: read one (or, on
//! a remote store, several at once), compare its names, go on in the half that holds the name.
//! That is about log2(leaves) reads, against every leaf for the whole directory.
//!
//! A commit writes only the leaves a change falls in (`plan.rs`).

use std::collections::BTreeMap;
use std::ops::Bound;

use memfs_core::{Name, Part, Parts};

use super::objects::{Walked, empty_leaf};
use super::*;
use crate::pages::Layout;

/// How a repository looks for the leaf a name falls in.
#[derive(Debug, Clone, Copy)]
pub(super) struct PartSearch {
    /// A directory of at most this many leaves is read whole.
    pub(super) whole_up_to: usize,
    /// Leaves read at once in each step of the search.
    pub(super) probes: usize,
}

impl PartSearch {
    /// A local folder or process memory: a read costs microseconds, so the fewest reads win.
    /// A directory of up to 16 leaves (about 130 entries) is read whole, as it always was.
    pub(super) const NEAR: PartSearch = PartSearch { whole_up_to: 16, probes: 1 };
    /// An object store: a read costs a round trip and reads go out in parallel, so a
    /// directory is read whole up to 256 leaves (one round of requests per level), and a
    /// larger one is searched eight leaves at a time (a ninth of the range left per round).
    pub(super) const FAR: PartSearch = PartSearch { whole_up_to: 256, probes: 8 };
}

/// Decoded leaves of one directory, by their place among its leaves.
pub(super) type Leaves = BTreeMap<usize, Vec<(Name, Node)>>;

impl EncryptedRepository {
    /// Where the pages of directory `id` are: every index page is read, and of the leaves
    /// only the middle one (see [`EncryptedRepository::walk_dir`]).
    pub(super) async fn layout(&self, id: &ObjectId) -> Result<Arc<Layout>, Error> {
        if let Some(layout) = self.cache().layout(id) {
            return Ok(layout);
        }
        match self.walk_dir(id, 0).await? {
            Walked::Large(layout, ..) => {
                let layout = Arc::new(layout);
                self.cache().insert_layout(*id, layout.clone());
                Ok(layout)
            }
            Walked::Whole(..) => unreachable!("a walk that reads no level whole"),
        }
    }

    /// The directory `id` far enough to answer for `name` (see [`Repository::dir_entry`]): a
    /// small one whole, a large one as the leaves read so far and the one `name` falls in.
    pub(super) async fn dir_part(&self, id: &ObjectId, totals: Totals, name: &Name) -> Result<Arc<Dir>, Error> {
        if let Some(dir) = self.cache().dir(id) {
            return Ok(dir);
        }
        let held = self.cache().partial(id);
        if let Some(dir) = &held
            && dir.holds(name)
        {
            return Ok(dir.clone());
        }
        let mut leaves = Leaves::new();
        let cached = self.cache().layout(id);
        let layout = match cached {
            Some(layout) => layout,
            // One walk down: a small directory comes back whole, a large one as its layout
            // and its middle leaf, the first the search would read.
            None => match self.walk_dir(id, self.part_search.whole_up_to).await? {
                Walked::Whole(dir, pages) => {
                    let dir = Arc::new(dir);
                    self.cache().insert_dir(*id, dir.clone(), pages.into());
                    return Ok(dir);
                }
                Walked::Large(layout, place, entries) => {
                    let layout = Arc::new(layout);
                    self.cache().insert_layout(*id, layout.clone());
                    leaves.insert(place, entries);
                    layout
                }
            },
        };
        let count = layout.leaves.len();
        if count <= self.part_search.whole_up_to {
            return Repository::dir(self, id).await;
        }
        if let Some(held) = held.as_deref() {
            leaves.extend(split(held));
        }
        // Each search copies what is held; past half the leaves, the whole directory is cheaper.
        if leaves.len() * 2 >= count {
            return Repository::dir(self, id).await;
        }
        // The first leaf whose last name is at or after `name`, else the last leaf: between
        // the leaves read before, then by reading some.
        let (mut low, mut high) = (0, count - 1);
        for (&place, entries) in &leaves {
            match last_name(entries) >= name {
                true => high = high.min(place),
                false => low = low.max((place + 1).min(count - 1)),
            }
        }
        while low < high {
            let span = high - low;
            let k = self.part_search.probes.min(span);
            let mut probes: Vec<usize> = (1..=k).map(|j| low + span * j / (k + 1)).collect();
            probes.dedup();
            self.read_leaves(&layout, &probes, &mut leaves).await?;
            for p in probes {
                if last_name(&leaves[&p]) >= name {
                    high = p;
                    break;
                }
                low = p + 1;
            }
        }
        self.read_leaves(&layout, &[low], &mut leaves).await?;
        // Below the leaf's first name: in the gap after the leaf before, which tells where it ends.
        if low > 0 && *name < leaves[&low][0].0 {
            self.read_leaves(&layout, &[low - 1], &mut leaves).await?;
        }
        let dir = Arc::new(partial_dir(*id, totals, &layout, &leaves)?);
        self.cache().insert_partial(*id, dir.clone());
        Ok(dir)
    }

    /// Reads and decodes the leaves at `places` not in `leaves` yet, at once.
    async fn read_leaves(&self, layout: &Layout, places: &[usize], leaves: &mut Leaves) -> Result<(), Error> {
        let wanted: Vec<usize> = places.iter().copied().filter(|p| !leaves.contains_key(p)).collect();
        let plains = try_join_all(wanted.iter().map(|p| self.page(&layout.leaves[*p]))).await?;
        for (place, plain) in wanted.into_iter().zip(plains) {
            leaves.insert(place, decode_leaf(&plain, &layout.leaves[place])?);
        }
        Ok(())
    }
}

/// A leaf's entries: a page in a level of leaves must be a leaf, and not empty (only the one
/// leaf of an empty directory is).
pub(super) fn decode_leaf(plain: &[u8], id: &ObjectId) -> Result<Vec<(Name, Node)>, Error> {
    let corrupt = |reason: &str| Error::Corrupt { object: format::object_name(id), reason: reason.into() };
    match format::decode_page(plain, id)? {
        format::Page::Leaf(entries) if !entries.is_empty() => Ok(entries),
        format::Page::Leaf(_) => Err(empty_leaf(id)),
        format::Page::Index(_) => Err(corrupt("an index page where a leaf page belongs")),
    }
}

fn last_name(entries: &[(Name, Node)]) -> &Name {
    &entries.last().expect("leaves are not empty").0
}

/// The leaves a partial directory holds, back by place.
fn split(dir: &Dir) -> Leaves {
    let parts = dir.parts().map(|p| p.held.as_slice()).unwrap_or_default();
    parts
        .iter()
        .map(|part| {
            let entries = dir.part_entries(part).map(|(n, node)| (n.clone(), node.clone())).collect();
            (part.index as usize, entries)
        })
        .collect()
}

/// A partial directory of the leaves in `leaves` (by place in `layout`), checking that their
/// names increase from leaf to leaf. Each holds the names from just after the last name of
/// the leaf before (from its own first name if that one is not read) to its last name; the
/// first leaf from the lowest, the last to the highest.
pub(super) fn partial_dir(id: ObjectId, totals: Totals, layout: &Layout, leaves: &Leaves) -> Result<Dir, Error> {
    let count = layout.leaves.len();
    let mut held = Vec::with_capacity(leaves.len());
    let mut previous: Option<(usize, &Name)> = None;
    for (&place, entries) in leaves {
        // Only the one leaf of an empty directory is empty: it holds nothing to search.
        if entries.is_empty() {
            continue;
        }
        let (first, last) = (&entries[0].0, last_name(entries));
        if previous.is_some_and(|(_, name)| name >= first) {
            return Err(format::out_of_order(&layout.leaves[place]));
        }
        let low = match previous {
            _ if place == 0 => Bound::Unbounded,
            Some((before, name)) if before + 1 == place => Bound::Excluded(name.clone()),
            _ => Bound::Included(first.clone()),
        };
        let high = if place + 1 == count { Bound::Unbounded } else { Bound::Included(last.clone()) };
        held.push(Part { index: place as u32, low, high });
        previous = Some((place, last));
    }
    let parts = Parts { base: id, base_totals: totals, count: count as u32, held };
    Ok(Dir::partial(parts, totals, leaves.values().flatten().cloned()))
}
