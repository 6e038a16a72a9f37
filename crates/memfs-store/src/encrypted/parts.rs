//! Large directories a leaf at a time: a command that needs one name of a directory of
//! thousands reads one page a level down to the leaf the name falls in, and its commit
//! rewrites only the leaves its change falls in and the index pages above them (`recut.rs`).
//!
//! An index page names each child's low (the lowest name that falls below it) and the leaves
//! below it, so the way down picks at each level the last child whose low is at most the
//! name, and counts the leaves to its left: the leaf's place, and the names it holds (from its
//! low to the next leaf's).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use memfs_core::{Dir, Name, Node, ObjectId, Part, Parts, Totals};

use super::EncryptedRepository;
use crate::error::Error;
use crate::format;
use crate::repository::Repository;

/// How a repository looks for the leaf a name falls in.
#[derive(Debug, Clone, Copy)]
pub(super) struct PartSearch {
    /// A directory of at most this many leaves is read whole.
    pub(super) whole_up_to: usize,
}

impl PartSearch {
    /// A local folder or process memory: a read costs microseconds, so the fewest reads win.
    /// A directory of up to 16 leaves (about 130 entries) is read whole, as it always was.
    pub(super) const NEAR: PartSearch = PartSearch { whole_up_to: 16 };
    /// An object store: a read costs a round trip and reads go out in parallel, so a
    /// directory is read whole up to 256 leaves (one round of requests per level).
    pub(super) const FAR: PartSearch = PartSearch { whole_up_to: 256 };
}

/// Decoded leaves of one directory, by their place among its leaves.
pub(super) type Leaves = BTreeMap<usize, Vec<(Name, Node)>>;

impl EncryptedRepository {
    /// The directory `id` far enough to answer for `name` (see [`Repository::dir_entry`]): a
    /// small one whole, a large one as the leaves read so far and the one `name` falls in.
    pub(super) async fn dir_part(&self, id: &ObjectId, totals: Totals, name: &Name) -> Result<Arc<Dir>, Error> {
        if let Some(dir) = self.objects.cache().dir(id) {
            return Ok(dir);
        }
        let held = self.objects.cache().partial(id);
        if let Some(dir) = &held
            && dir.holds(name)
        {
            return Ok(dir.clone());
        }
        let top = self.page(id).await?;
        match format::decode_page(&top, id)? {
            format::Page::Index(index) => self.descend(id, totals, name, held.as_deref(), index).await,
            // A directory of one leaf.
            format::Page::Leaf(_) => Repository::dir(self, id).await,
        }
    }

    /// [`EncryptedRepository::dir_part`] of a directory whose top page is `top`, an index page:
    /// down one page a level to the leaf `name` falls in, added to the leaves `held` holds.
    async fn descend(
        &self,
        id: &ObjectId,
        totals: Totals,
        name: &Name,
        held: Option<&Dir>,
        top: format::Index,
    ) -> Result<Arc<Dir>, Error> {
        let corrupt =
            |page: &ObjectId, reason: &str| Error::Corrupt { object: format::object_name(page), reason: reason.into() };
        let count = top.guide.leaves.iter().sum::<u64>();
        if count <= self.objects.part_search.whole_up_to as u64 {
            return Repository::dir(self, id).await;
        }
        let count = u32::try_from(count).map_err(|_| corrupt(id, "more leaves than a directory may have"))?;
        let (mut index, mut page) = (top, *id);
        let (mut place, mut low, mut high) = (0u64, None::<Name>, None::<Name>);
        loop {
            let guide = &index.guide;
            // The page's names lie between the bounds the page above gave it.
            let (first, last) = (guide.lows.first(), guide.lows.last());
            if first.zip(low.as_ref()).is_some_and(|(f, l)| f <= l)
                || last.zip(high.as_ref()).is_some_and(|(l, h)| l >= h)
            {
                return Err(format::out_of_order(&page));
            }
            let i = guide.lows.partition_point(|first| first <= name);
            place += guide.leaves[..i].iter().sum::<u64>();
            if i > 0 {
                low = Some(guide.lows[i - 1].clone());
            }
            if i < guide.lows.len() {
                high = Some(guide.lows[i].clone());
            }
            let (child, height) = (index.pages[i], guide.height);
            match format::decode_page(&self.page(&child).await?, &child)? {
                format::Page::Leaf(entries) if height == 1 => {
                    let in_bounds =
                        |n: &Name| low.as_ref().is_none_or(|l| l <= n) && high.as_ref().is_none_or(|h| n < h);
                    match (entries.first(), entries.last()) {
                        (Some((first, _)), Some((last, _))) if in_bounds(first) && in_bounds(last) => {}
                        (None, _) | (_, None) => return Err(format::empty_leaf(&child)),
                        _ => return Err(format::out_of_order(&child)),
                    }
                    let part = Part {
                        index: u32::try_from(place).map_err(|_| corrupt(id, "a leaf place out of range"))?,
                        low: low.map_or(Bound::Unbounded, Bound::Included),
                        high: high.map_or(Bound::Unbounded, Bound::Excluded),
                    };
                    let dir = Arc::new(with_leaf(*id, totals, count, held, part, entries));
                    self.objects.cache().insert_partial(*id, dir.clone());
                    return Ok(dir);
                }
                format::Page::Index(below) if height > 1 && below.guide.height == height - 1 => {
                    (index, page) = (below, child);
                }
                _ => return Err(corrupt(&child, "a page at the wrong height")),
            }
        }
    }
}

fn last_name(entries: &[(Name, Node)]) -> &Name {
    &entries.last().expect("leaves are not empty").0
}

/// The partial directory `held` (of `id`, if any) with the leaf `part` of `entries` added.
fn with_leaf(
    id: ObjectId,
    totals: Totals,
    count: u32,
    held: Option<&Dir>,
    part: Part,
    entries: Vec<(Name, Node)>,
) -> Dir {
    let mut parts: Vec<Part> = held.and_then(|d| d.parts()).map(|p| p.held.clone()).unwrap_or_default();
    let mut all: Vec<(Name, Node)> =
        held.map(|d| d.entries().map(|(n, node)| (n.clone(), node.clone())).collect()).unwrap_or_default();
    parts.retain(|p| p.index != part.index);
    all.retain(|(n, _)| !part.contains(n));
    let at = parts.partition_point(|p| p.index < part.index);
    parts.insert(at, part);
    all.extend(entries);
    let parts = Parts { base: id, base_totals: totals, count, held: parts };
    Dir::partial(parts, totals, all)
}

/// A partial directory of the leaves in `leaves` (by place among `count`), checking that their
/// names increase from leaf to leaf. Each holds the names from just after the last name of
/// the leaf before (from its own first name if that one is not read) to its last name; the
/// first leaf from the lowest, the last to the highest.
pub(super) fn partial_dir(id: ObjectId, totals: Totals, count: usize, leaves: &Leaves) -> Result<Dir, Error> {
    let mut held = Vec::with_capacity(leaves.len());
    let mut previous: Option<(usize, &Name)> = None;
    for (&place, entries) in leaves {
        // Only the one leaf of an empty directory is empty: it holds nothing to search.
        if entries.is_empty() {
            continue;
        }
        let (first, last) = (&entries[0].0, last_name(entries));
        if previous.is_some_and(|(_, name)| name >= first) {
            return Err(format::out_of_order(&id));
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
