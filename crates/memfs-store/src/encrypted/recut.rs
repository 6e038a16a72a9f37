//! A change to part of a large directory, cut into pages again without reading
//! the rest: each level, leaves first, is cut again from the start of the old page a change
//! falls in, on through the changed pages and into the old ones after them until a cut lands
//! where an old page ended. Past that point the old pages are what a cut from scratch would
//! make (a cut depends only on where its page starts, [`pages::ends_page`]), so the pages
//! written are the ones a whole re-encoding would write and the directory's id is the same.
//!
//! An index page says how many leaves are below each child and each child's
//! low (the lowest name that falls below it), so a page of any level is found by a leaf's
//! place, one page a level down from the top, and the pages a cut runs into are read as it
//! reaches them: [`Missing::Page`] stops the plan, the caller reads the page, and plans again.
//! A leaf's low depends on the last name before it too: where a change alters the first name
//! of its first leaf or the last name before the leaf after it, that leaf's low is worked out
//! again (reading the leaf next to it if need be) and given to the page that names it.
//!
//! Places are counted in leaves of the old directory: a change at one level is the range of
//! old leaves below the pages it replaces, and the pages that replace them.

use memfs_core::{Name, Node, ObjectId};
use memfs_crypt::AddressKey;

use super::missing::Missing;
use crate::error::Error;
use crate::format::{self, Page};
use crate::pages::{self, Child};

/// Reads an old page of the directory (its plaintext decoded), or names it missing.
pub(super) type Read<'a> = dyn Fn(&ObjectId) -> Result<Page, Missing> + 'a;

/// A leaf of the old directory held by the change: its place, its entries now, and whether
/// they are the entries it had (then its page stays, unless a cut runs into it).
pub(super) struct Held {
    pub(super) place: u64,
    pub(super) entries: Vec<(Name, Node)>,
    pub(super) unchanged: bool,
}

/// The old pages below `start..end` (leaf places of the old directory) at one level, and the
/// pages that replace them; and, if the last name before `end` changed, the new low of the old
/// page that starts at `end` (`None` if it is now the directory's first).
#[derive(Debug)]
struct Change {
    start: u64,
    end: u64,
    pages: Vec<Child>,
    next_low: Option<Option<Name>>,
}

/// Leaves known after a change: each one's place and entries, in order.
pub(super) type Known = Vec<(u64, Vec<(Name, Node)>)>;

/// The directory after the change: its top page, the pages to write (bottom-up), and the
/// leaves it knows (new place, entries), in order.
pub(super) struct Recut {
    pub(super) top: Child,
    pub(super) pages: Vec<(ObjectId, Vec<u8>)>,
    pub(super) leaves: Known,
    /// Leaves after the change, and before.
    pub(super) count: u64,
    pub(super) old_count: u64,
}

/// One old page at some height: where its leaves start, and its children (each with the
/// leaves below it and its low; the first child's is the page's own, `None` only at
/// the directory's start).
struct OldPage {
    start: u64,
    end: u64,
    children: Vec<Child>,
}

/// The old directory, read from its top page down as needed.
struct Old<'a> {
    top: ObjectId,
    height: u32,
    leaves: u64,
    read: &'a Read<'a>,
}

impl Old<'_> {
    /// The page at `height` (1 and up) whose leaves include place `place`.
    fn page_at(&self, height: u32, place: u64) -> Result<OldPage, Missing> {
        let (mut id, mut h, mut start, mut low) = (self.top, self.height, 0u64, None::<Name>);
        loop {
            let children = children(&id, h, low.take(), (self.read)(&id)?)?;
            let end = start + children.iter().map(|c| c.leaves).sum::<u64>();
            if !(start..end).contains(&place) {
                return Err(corrupt(&id, "a leaf place past the pages below"));
            }
            if h == height {
                return Ok(OldPage { start, end, children });
            }
            let mut at = start;
            let child = children
                .into_iter()
                .find(|c| {
                    at += c.leaves;
                    place < at
                })
                .ok_or_else(|| corrupt(&id, "a leaf place past the pages below"))?;
            start = at - child.leaves;
            (id, h, low) = (child.id, h - 1, child.low);
        }
    }

    /// The low of the old leaf at `place` (`None` for the first).
    fn low_at(&self, place: u64) -> Result<Option<Name>, Missing> {
        let page = self.page_at(1, place)?;
        Ok(page.children[(place - page.start) as usize].low.clone())
    }

    /// The old leaf at `place`: its entries.
    fn leaf_at(&self, place: u64) -> Result<Vec<(Name, Node)>, Missing> {
        let page = self.page_at(1, place)?;
        let child = &page.children[(place - page.start) as usize];
        match (self.read)(&child.id)? {
            Page::Leaf(entries) if !entries.is_empty() => Ok(entries),
            _ => Err(corrupt(&child.id, "not a leaf with entries where one belongs")),
        }
    }
}

/// The children of index page `id` at `height`, decoded from `page`, the first with `low`.
fn children(id: &ObjectId, height: u32, low: Option<Name>, page: Page) -> Result<Vec<Child>, Missing> {
    let Page::Index(index) = page else { return Err(corrupt(id, "a leaf page where an index page belongs")) };
    let guide = index.guide;
    if guide.height != height {
        return Err(corrupt(id, "an index page at the wrong height"));
    }
    let mut lows = guide.lows.into_iter();
    let mut out = Vec::with_capacity(index.pages.len());
    for (i, (id, leaves)) in index.pages.into_iter().zip(guide.leaves).enumerate() {
        let low = if i == 0 { low.clone() } else { lows.next() };
        out.push(Child { id, leaves, low });
    }
    Ok(out)
}

fn corrupt(id: &ObjectId, reason: &str) -> Missing {
    Missing::Failed(Error::Corrupt { object: format::object_name(id), reason: reason.into() })
}

/// Cuts the directory whose top page is `top` (an index page) again after the
/// change of the leaves in `held` (by increasing place).
pub(super) fn recut(key: &AddressKey, top: &ObjectId, held: Vec<Held>, read: &Read<'_>) -> Result<Recut, Missing> {
    let Page::Index(index) = read(top)? else { return Err(corrupt(top, "a directory read in part is one leaf")) };
    let guide = &index.guide;
    let old = Old { top: *top, height: guide.height, leaves: guide.leaves.iter().sum(), read };
    let mut pages = Vec::new();
    let (changes, known) = recut_leaves(key, &old, held, &mut pages)?;
    let count = old.leaves + changes.iter().map(|c| c.pages.len() as u64).sum::<u64>()
        - changes.iter().map(|c| c.end - c.start).sum::<u64>();
    let (leaves, old_count) = (known, old.leaves);
    // Nothing changed after all: the directory is the one it was.
    if changes.is_empty() {
        let top = Child { id: *top, leaves: old.leaves, low: None };
        return Ok(Recut { top, pages, leaves, count, old_count });
    }
    if count == 0 {
        let plain = format::encode_leaf(std::iter::empty()).expect("no entries");
        let id = key.address(&plain);
        pages.push((id, plain));
        let top = Child { id, leaves: 1, low: None };
        return Ok(Recut { top, pages, leaves: vec![(0, Vec::new())], count: 1, old_count });
    }
    let mut changes = changes;
    let mut height = 1;
    loop {
        // The whole level is known: cut it up to the top as a whole directory's.
        if let [only] = changes.as_slice()
            && only.start == 0
            && only.end == old.leaves
        {
            let level = changes.pop().expect("one change").pages;
            let top = pages::encode_index(level, height, key, &mut pages);
            return Ok(Recut { top, pages, leaves, count, old_count });
        }
        if height > old.height {
            return Err(corrupt(top, "a change that does not reach the top page"));
        }
        changes = recut_level(key, &old, height, &changes, &mut pages)?;
        height += 1;
    }
}

/// The leaves cut again: the changes (old leaf ranges and the leaves replacing them) and the
/// leaves the directory now knows, by new place.
fn recut_leaves(
    key: &AddressKey,
    old: &Old<'_>,
    held: Vec<Held>,
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
) -> Result<(Vec<Change>, Known), Missing> {
    let mut changes: Vec<Change> = Vec::new();
    let mut known = Known::new();
    // Leaves added minus leaves replaced so far: an old place plus this is its new place.
    let mut shift: i64 = 0;
    // Where the last change ended, and the last name before it in the new directory.
    let mut after: Option<(u64, Option<Name>)> = None;
    let mut held = held.into_iter().peekable();
    while let Some(first) = held.next() {
        if first.unchanged {
            known.push(((first.place as i64 + shift) as u64, first.entries));
            continue;
        }
        let start = first.place;
        let (place, new_leaves) = cut_leaves(key, old, first, &mut held)?;
        // The last name before the change in the new directory: the old leaf's before it,
        // unless the change before ended here.
        let before = match &after {
            Some((end, last)) if *end == start => Some(last.clone()),
            _ if start == 0 => Some(None),
            _ => None,
        };
        let (new, last) = leaf_pages(key, old, start, &before, &new_leaves, pages)?;
        // The old leaf after the change follows another last name now, perhaps: its low too.
        let last = match last {
            Some(last) => Some(last),
            None => match before {
                Some(last) => last,
                None => Some(last_name(&old.leaf_at(start - 1)?).clone()),
            },
        };
        let mut next_low = None;
        if place < old.leaves && last.as_ref() != Some(last_name(&old.leaf_at(place - 1)?)) {
            next_low = Some(match &last {
                Some(last) => Some(pages::separator(last, &old.leaf_at(place)?[0].0)),
                None => None,
            });
        }
        after = Some((place, last));
        let new_start = (start as i64 + shift) as u64;
        for (i, entries) in new_leaves.into_iter().enumerate() {
            known.push((new_start + i as u64, entries));
        }
        shift += new.len() as i64 - (place - start) as i64;
        changes.push(Change { start, end: place, pages: new, next_low });
    }
    Ok((changes, known))
}

/// A leaf's entries, in name order.
type Entries = Vec<(Name, Node)>;

/// The leaves from `first` on, cut again: the place after the last old leaf they replace, and
/// the new leaves' entries. The run takes the changed leaves `held` has at the places that
/// follow and the old leaves between them, until a cut falls where an old leaf ended.
fn cut_leaves(
    key: &AddressKey,
    old: &Old<'_>,
    first: Held,
    held: &mut std::iter::Peekable<std::vec::IntoIter<Held>>,
) -> Result<(u64, Vec<Entries>), Missing> {
    let mut place = first.place;
    let mut open: Entries = Vec::new();
    let mut new_leaves: Vec<Entries> = Vec::new();
    let mut entries = first.entries;
    loop {
        for entry in entries {
            open.push(entry);
            if pages::ends_page(open.len(), || pages::name_boundary(key, &open[open.len() - 1].0)) {
                new_leaves.push(std::mem::take(&mut open));
            }
        }
        place += 1;
        // A cut where an old leaf ended: the old leaves from here on stay.
        if (open.is_empty() && held.peek().is_none_or(|h| h.place != place || h.unchanged)) || place == old.leaves {
            break;
        }
        entries = match held.next_if(|h| h.place == place) {
            Some(h) => h.entries,
            None => old.leaf_at(place)?,
        };
    }
    if !open.is_empty() {
        new_leaves.push(open);
    }
    Ok((place, new_leaves))
}

/// The new leaves of a change starting at old place `start`, encoded into `pages`, each with
/// its low name (`before`: the last name before the change, when known); and the last name of
/// the last of them.
fn leaf_pages(
    key: &AddressKey,
    old: &Old<'_>,
    start: u64,
    before: &Option<Option<Name>>,
    new_leaves: &[Entries],
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
) -> Result<(Vec<Child>, Option<Name>), Missing> {
    let mut new = Vec::with_capacity(new_leaves.len());
    let mut last: Option<Name> = None;
    for (i, entries) in new_leaves.iter().enumerate() {
        let first_name = &entries[0].0;
        let low = match (i, before) {
            (0, Some(None)) => None,
            (0, Some(Some(last))) => Some(pages::separator(last, first_name)),
            // After an old leaf: the old low, if the first name is the old one.
            (0, None) => match &old.leaf_at(start)?[0].0 == first_name {
                true => old.low_at(start)?,
                false => Some(pages::separator(last_name(&old.leaf_at(start - 1)?), first_name)),
            },
            _ => Some(pages::separator(last.as_ref().expect("a leaf before"), first_name)),
        };
        last = Some(last_name(entries).clone());
        let plain = format::encode_leaf(entries.iter().map(|(n, node)| (n, node))).expect("children have ids");
        let id = key.address(&plain);
        pages.push((id, plain));
        new.push(Child { id, leaves: 1, low });
    }
    Ok((new, last))
}

fn last_name(entries: &[(Name, Node)]) -> &Name {
    &entries.last().expect("leaves are not empty").0
}

/// The index pages at `height` cut again around `below`, the changes one level down.
fn recut_level(
    key: &AddressKey,
    old: &Old<'_>,
    height: u32,
    below: &[Change],
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
) -> Result<Vec<Change>, Missing> {
    let mut changes: Vec<Change> = Vec::new();
    let mut next = below.iter().peekable();
    // A new low for the old page starting at this place, from a change below that ended
    // there: given to that page where it is fed to a cut, or passed up with the change
    // that ends there.
    let mut pending: Option<(u64, Option<Name>)> = None;
    while let Some(change) = next.peek() {
        let mut page = old.page_at(height, change.start)?;
        let start = page.start;
        if let Some((at, low)) = pending.take_if(|(at, _)| *at < start) {
            changes.last_mut().expect("a change ended there").next_low = Some(low);
            debug_assert_eq!(changes.last().map(|c| c.end), Some(at));
        }
        let mut at = start;
        let mut open: Vec<Child> = Vec::new();
        let mut new: Vec<Child> = Vec::new();
        let mut feed = |child: Child, open: &mut Vec<Child>, new: &mut Vec<Child>| {
            let boundary = pages::id_boundary(&child.id);
            open.push(child);
            if pages::ends_page(open.len(), || boundary) {
                new.push(pages::index_page(height, &std::mem::take(open), key, pages));
            }
        };
        loop {
            match next.next_if(|c| c.start == at) {
                Some(change) => {
                    for child in &change.pages {
                        feed(child.clone(), &mut open, &mut new);
                    }
                    at = change.end;
                    // A change that starts where one ended replaces the page it would name.
                    pending = change.next_low.clone().map(|low| (at, low));
                }
                None => {
                    if at >= page.end {
                        page = old.page_at(height, at)?;
                    }
                    let mut child = child_at(&page, at)?;
                    if let Some((_, low)) = pending.take_if(|(p, _)| *p == at) {
                        child.low = low;
                    }
                    at += child.leaves;
                    feed(child, &mut open, &mut new);
                }
            }
            if at == old.leaves {
                break;
            }
            // A cut where an old page ended, with no change left at this place: the old pages
            // from here on stay.
            if open.is_empty() && next.peek().is_none_or(|c| c.start != at) {
                if at > page.end || at < page.start {
                    page = old.page_at(height, at - 1)?;
                }
                if at == page.end {
                    break;
                }
            }
        }
        // The whole level below is one page now: it is the top, with no page above it.
        let whole = start == 0 && at == old.leaves;
        let pages_now = close_level(key, height, whole, open, new, pages);
        changes.push(Change { start, end: at, pages: pages_now, next_low: None });
    }
    if let Some((_, low)) = pending {
        changes.last_mut().expect("a change ended there").next_low = Some(low);
    }
    Ok(changes)
}

/// The child of an old index page that starts at place `at`.
fn child_at(page: &OldPage, at: u64) -> Result<Child, Missing> {
    let mut place = page.start;
    Ok(page
        .children
        .iter()
        .find(|c| {
            let here = place == at;
            place += c.leaves;
            here
        })
        .ok_or_else(|| corrupt(&page.children[0].id, "a change not at a page's start"))?
        .clone())
}

/// The pages a change at `height` ends with: the children still open cut into a last page,
/// unless the change spans the `whole` level and they are one child, the new top.
fn close_level(
    key: &AddressKey,
    height: u32,
    whole: bool,
    open: Vec<Child>,
    mut new: Vec<Child>,
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
) -> Vec<Child> {
    match (whole && new.is_empty() && open.len() == 1, open.is_empty()) {
        (true, _) => open,
        (false, false) => {
            new.push(pages::index_page(height, &open, key, pages));
            new
        }
        (false, true) => new,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use memfs_core::{Dir, FileRef};
    use memfs_crypt::FirstKey;

    use super::*;

    /// A small deterministic generator.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n.max(1)
        }
    }

    fn entry(n: u64) -> (Name, Node) {
        let id = ObjectId::from_bytes(*blake3::hash(&n.to_le_bytes()).as_bytes());
        (Name::parse(&format!("n{n:07}")).unwrap(), Node::File(FileRef { id, size: n, accessed: 0 }))
    }

    /// A directory encoded whole: its id, its leaves' entries, and every page by id.
    type Whole = (ObjectId, Vec<Vec<(Name, Node)>>, HashMap<ObjectId, Vec<u8>>);

    /// The leaves of `dir` as a whole encoding cuts them, and every page by id.
    fn encode(dir: &Dir, key: &AddressKey) -> Whole {
        let encoded = pages::encode(dir, key).unwrap();
        let id = encoded.id();
        let leaves = encoded
            .pages
            .iter()
            .filter_map(|(id, plain)| match format::decode_page(plain, id).unwrap() {
                Page::Leaf(entries) => Some(entries),
                Page::Index(_) => None,
            })
            .collect();
        (id, leaves, encoded.pages.into_iter().collect())
    }

    /// Random changes to a few leaves (or, now and then, to every leaf, deleting most entries)
    /// of random directories: the pages cut again in part give the id a whole cut gives, and
    /// only pages a whole cut makes are written.
    #[test]
    fn a_change_cut_again_in_part_is_the_whole_cut() {
        let key = FirstKey::from_bytes([7; 32]).tree_address_key();
        let mut rng = Lcg(12);
        for round in 0..600 {
            let size = 40 + rng.below(if round % 3 == 0 { 3000 } else { 400 });
            // Even numbers stored, so that odd ones are free to create between them.
            let old = Dir::from_entries((0..size).map(|n| entry(n * 2)));
            let (top, leaves, stored) = encode(&old, &key);
            if leaves.len() < 2 {
                continue;
            }
            let shrink = round % 10 == 0;
            let held_places: Vec<usize> = match shrink {
                true => (0..leaves.len()).collect(),
                false if round % 7 == 0 => vec![0],
                false => {
                    let mut places: Vec<usize> =
                        (0..1 + rng.below(3)).map(|_| rng.below(leaves.len() as u64) as usize).collect();
                    places.sort_unstable();
                    places.dedup();
                    places
                }
            };
            let mut held = Vec::new();
            let mut new_entries: Vec<(Name, Node)> = Vec::new();
            let mut next = 0;
            for &place in &held_places {
                new_entries.extend(leaves[next..place].iter().flatten().cloned());
                next = place + 1;
                let mut entries = leaves[place].clone();
                let unchanged = !shrink && round % 7 != 0 && rng.below(4) == 0;
                if shrink {
                    entries.retain(|_| round % 20 != 0 && rng.below(40) == 0);
                } else if round % 7 == 0 && place == 0 {
                    // The first leaf emptied: the leaf after it is the directory's first now.
                    entries.clear();
                } else if !unchanged {
                    // Deletes and creates within the leaf's names, from just after the leaf
                    // before (or past the last leaf's).
                    let number = |name: &Name| name.as_str()[1..].parse::<u64>().unwrap();
                    let low = match place {
                        0 => 0,
                        _ => number(&leaves[place - 1].last().unwrap().0) + 1,
                    };
                    // Up to the leaf's last name: the names after it are the next leaf's to
                    // create (a leaf's new names may not fall in another's).
                    let high = match leaves.get(place + 1) {
                        Some(_) => number(&leaves[place].last().unwrap().0) + 1,
                        None => low + 60,
                    };
                    for _ in 0..1 + rng.below(6) {
                        match rng.below(3) {
                            0 if !entries.is_empty() => {
                                let i = rng.below(entries.len() as u64) as usize;
                                entries.remove(i);
                            }
                            _ => {
                                let n = low + rng.below(high - low);
                                let e = entry(n);
                                if let Err(i) = entries.binary_search_by(|(name, _)| name.cmp(&e.0)) {
                                    entries.insert(i, e);
                                }
                            }
                        }
                    }
                }
                new_entries.extend(entries.iter().cloned());
                held.push(Held { place: place as u64, entries, unchanged });
            }
            new_entries.extend(leaves[next..].iter().flatten().cloned());
            let new = Dir::from_entries(new_entries);
            let (want, want_leaves, want_pages) = encode(&new, &key);

            let read = |id: &ObjectId| match stored.get(id) {
                Some(plain) => format::decode_page(plain, id).map_err(Missing::Failed),
                None => Err(Missing::Page(*id)),
            };
            let got = match recut(&key, &top, held, &read) {
                Ok(got) => got,
                Err(e) => panic!("round {round}: {e:?}"),
            };
            assert_eq!(got.top.id, want, "round {round}: {size} entries, leaves {held_places:?}");
            assert_eq!(got.count, want_leaves.len() as u64, "round {round}");
            assert_eq!(got.old_count, leaves.len() as u64, "round {round}");
            for (id, _) in &got.pages {
                assert!(want_pages.contains_key(id), "round {round}: a page the whole cut does not make");
            }
            for (place, entries) in &got.leaves {
                let names = |e: &[(Name, Node)]| e.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
                assert_eq!(names(entries), names(&want_leaves[*place as usize]), "round {round}: leaf {place}");
            }
        }
    }
}
