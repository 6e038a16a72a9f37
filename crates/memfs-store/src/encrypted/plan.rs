//! Planning a commit: the pages of every directory a mutation copied, of which only those the
//! store does not already hold are written.
//!
//! A copy of part of a large directory (`parts.rs`) is cut into leaves again from the start of
//! the first leaf that holds a change ([`pages::ends_page`]: the cut depends only on where a
//! page starts), going on into the leaves after it until a page ends where an old leaf ended;
//! the index pages above are cut again from the full list of leaf ids, which costs no read.
//! So the pages written are the ones a whole re-encoding would write, and the directory's id
//! is the same.

use memfs_core::{Name, Part, Parts};

use super::parts::{Leaves, decode_leaf, partial_dir};
use super::*;
use crate::pages::Layout;

/// Why a commit's plan stopped: something to read before planning again, or damage found.
#[derive(Debug)]
pub(super) enum Missing {
    /// A directory's layout.
    Layout(ObjectId),
    /// A page's plaintext.
    Page(ObjectId),
    /// A page read is damaged.
    Failed(Error),
}

/// What a plan may use besides the cache: what it found missing before (the cache may let
/// an entry go between two plans).
#[derive(Default)]
pub(super) struct PlanInputs {
    layouts: HashMap<ObjectId, Arc<Layout>>,
    pages: HashMap<ObjectId, Arc<[u8]>>,
}

/// The pages a commit writes, and the directories it made: whole (id, decoded, page ids) and
/// partial (id, the leaves it knows, layout).
#[derive(Default)]
pub(super) struct PlannedDirs {
    pub(super) pages: Vec<(ObjectId, Vec<u8>)>,
    pub(super) dirs: Vec<(ObjectId, Arc<Dir>, Arc<[ObjectId]>)>,
    pub(super) partials: Vec<(ObjectId, Arc<Dir>, Arc<crate::pages::Layout>)>,
}

impl EncryptedRepository {
    /// Reads what `missing` names into `inputs`.
    pub(super) async fn supply(&self, missing: Missing, inputs: &mut PlanInputs) -> Result<(), Error> {
        match missing {
            Missing::Layout(id) => {
                inputs.layouts.insert(id, self.layout(&id).await?);
            }
            Missing::Page(id) => {
                inputs.pages.insert(id, self.page(&id).await?);
            }
            Missing::Failed(e) => return Err(e),
        }
        Ok(())
    }

    /// Encodes every directory of `dir` that has no id yet, children first, into pages, and
    /// adds the pages to write to `out`; returns the directory's id. Only the directories a
    /// mutation copied lack ids (O(depth) of them), and of each only the pages that differ
    /// from the version it was copied from (`base`, the same path in the base tree) are new.
    /// A copy of part of a large directory is planned from its layout (`parts.rs`); what that
    /// needs and neither `inputs` nor the cache holds stops the plan with [`Missing`].
    pub(super) fn plan_dirs(
        &self,
        dir: &DirRef,
        base: Option<&ObjectId>,
        inputs: &PlanInputs,
        out: &mut PlannedDirs,
    ) -> Result<ObjectId, Missing> {
        if let Some(id) = dir.id() {
            return Ok(id);
        }
        let d = dir.dir().expect("an unwritten directory is loaded");
        // A copy of part of a directory comes from the directory its parts are of.
        let base = d.parts().map(|p| &p.base).or(base);
        let base_dir = base.and_then(|id| {
            let cache = self.cache();
            cache.dir(id).or_else(|| cache.partial(id))
        });
        // The directory as a reader would decode it (children by id), cached after the commit
        // so the next command does not read back what this one wrote: a copy in which only the
        // loaded children (the copied path, O(depth) of them) are replaced by their ids.
        let mut decoded = Dir::clone(d);
        for (name, node) in d.entries() {
            let Node::Dir(child) = node else { continue };
            if child.dir().is_none() {
                continue;
            }
            let child_base = match base_dir.as_ref().and_then(|b| b.get(name)) {
                Some(Node::Dir(b)) => b.id(),
                _ => None,
            };
            let id = self.plan_dirs(child, child_base.as_ref(), inputs, out)?;
            decoded.insert(name.clone(), Node::Dir(DirRef::stored(id, child.totals())));
        }
        if let Some(parts) = d.parts() {
            return self.plan_parts(&decoded, parts, inputs, out);
        }
        let pages = pages::encode(&decoded, &self.keys.tree_address).expect("children have ids");
        let unchanged = base.and_then(|id| self.cache().pages(id));
        let id = pages.id();
        let ids: Arc<[ObjectId]> = pages.pages.iter().map(|(id, _)| *id).collect();
        for (page, plain) in pages.pages {
            if !unchanged.as_ref().is_some_and(|u| u.contains(&page)) && !out.pages.iter().any(|(p, _)| *p == page) {
                out.pages.push((page, plain));
            }
        }
        out.dirs.push((id, Arc::new(decoded), ids));
        Ok(id)
    }

    /// The pages of `dir`, a copy a mutation made of part of the stored directory
    /// `parts.base` (children already by id), added to `out`; returns its id. Only the leaves
    /// from the first changed one to where a cut meets an old leaf end are cut again.
    pub(super) fn plan_parts(
        &self,
        dir: &Dir,
        parts: &Parts,
        inputs: &PlanInputs,
        out: &mut PlannedDirs,
    ) -> Result<ObjectId, Missing> {
        let layout = inputs.layouts.get(&parts.base).cloned().or_else(|| self.cache().layout(&parts.base));
        let layout = layout.ok_or(Missing::Layout(parts.base))?;
        if layout.leaves.len() != parts.count as usize {
            return Err(Missing::Failed(Error::Corrupt {
                object: format::object_name(&parts.base),
                reason: "a directory read in part does not match its pages".into(),
            }));
        }
        let key = &self.keys.tree_address;
        let held: HashMap<u32, &Part> = parts.held.iter().map(|p| (p.index, p)).collect();
        // The directory as read (its leaves the search read): a held leaf whose entries are
        // the same there keeps its page, as a leaf not held does, unless a page left open runs
        // into it. Without it (let go by the cache), every held leaf is cut again, to the same
        // pages.
        let read = self.cache().partial(&parts.base);
        let mut pages = Vec::new();
        let mut ids: Vec<ObjectId> = Vec::with_capacity(layout.leaves.len());
        let mut known = Leaves::new();
        let mut open: Vec<(Name, Node)> = Vec::new();
        for (place, leaf) in layout.leaves.iter().enumerate() {
            let entries: Vec<(Name, Node)> = match held.get(&(place as u32)) {
                Some(part) if open.is_empty() && read.as_deref().is_some_and(|read| unchanged(read, dir, part)) => {
                    known
                        .insert(ids.len(), dir.part_entries(part).map(|(n, node)| (n.clone(), node.clone())).collect());
                    ids.push(*leaf);
                    continue;
                }
                Some(part) => dir.part_entries(part).map(|(n, node)| (n.clone(), node.clone())).collect(),
                // A page left open runs on into the next leaf.
                None if !open.is_empty() => {
                    let plain = inputs.pages.get(leaf).cloned().or_else(|| self.cache().plain(leaf));
                    let plain = plain.ok_or(Missing::Page(*leaf))?;
                    decode_leaf(&plain, leaf).map_err(Missing::Failed)?
                }
                // Untouched, and a page starts here: the old leaf stays.
                None => {
                    ids.push(*leaf);
                    continue;
                }
            };
            for entry in entries {
                open.push(entry);
                if pages::ends_page(open.len(), || pages::name_boundary(key, &open[open.len() - 1].0)) {
                    close_leaf(key, &mut open, &mut ids, &mut pages, &mut known);
                }
            }
        }
        if !open.is_empty() || ids.is_empty() {
            close_leaf(key, &mut open, &mut ids, &mut pages, &mut known);
        }
        let leaves = pages.len();
        let id = pages::encode_index(ids.clone(), key, &mut pages);
        let index: Vec<ObjectId> = pages[leaves..].iter().rev().map(|(id, _)| *id).collect();
        let old: HashSet<&ObjectId> = layout.pages().collect();
        for (page, plain) in pages {
            if !old.contains(&page) && !out.pages.iter().any(|(p, _)| *p == page) {
                out.pages.push((page, plain));
            }
        }
        let layout = Layout { index, leaves: ids };
        let decoded = partial_dir(id, dir.totals(), &layout, &known).map_err(Missing::Failed)?;
        out.partials.push((id, Arc::new(decoded), Arc::new(layout)));
        Ok(id)
    }
}

/// Whether `dir` holds in `part` exactly the entries `read` (the directory it was copied
/// from, as read) holds in the same leaf: the leaf's page would be encoded the same.
fn unchanged(read: &Dir, dir: &Dir, part: &Part) -> bool {
    let Some(before) = read.parts().and_then(|p| p.held.iter().find(|held| held.index == part.index)) else {
        return false;
    };
    let mut now = dir.part_entries(part);
    let mut then = read.part_entries(before);
    loop {
        match (now.next(), then.next()) {
            (None, None) => return true,
            (Some((a, x)), Some((b, y))) if a == b && same_node(x, y) => {}
            _ => return false,
        }
    }
}

/// Whether two entries encode the same: what a leaf records of each.
fn same_node(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::File(a), Node::File(b)) => a == b,
        (Node::Dir(a), Node::Dir(b)) => a.id().is_some() && a.id() == b.id() && a.totals() == b.totals(),
        _ => false,
    }
}

/// Encodes the entries of the open page as a leaf.
fn close_leaf(
    key: &memfs_crypt::AddressKey,
    open: &mut Vec<(Name, Node)>,
    ids: &mut Vec<ObjectId>,
    pages: &mut Vec<(ObjectId, Vec<u8>)>,
    known: &mut Leaves,
) {
    let plain = format::encode_leaf(open.iter().map(|(n, node)| (n, node))).expect("children have ids");
    let id = key.address(&plain);
    known.insert(ids.len(), std::mem::take(open));
    ids.push(id);
    pages.push((id, plain));
}
