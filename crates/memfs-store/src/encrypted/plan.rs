//! Planning a commit: the pages of every directory a mutation copied, of which only those the
//! store does not already hold are written.
//!
//! A copy of part of a large directory (`parts.rs`) is cut into pages again around its
//! changes only (`recut.rs`), reading the old pages the cuts run into.

use std::collections::HashMap;
use std::sync::Arc;

use memfs_core::{Dir, DirRef, Node, ObjectId, Part, Parts};

use super::EncryptedRepository;
use super::missing::Missing;
use super::parts::{Leaves, partial_dir};
use super::recut::{self, Held};
use crate::error::Error;
use crate::{format, pages};

/// What a plan may use besides the cache: what it found missing before (the cache may let
/// an entry go between two plans).
#[derive(Default)]
pub(super) struct PlanInputs {
    pages: HashMap<ObjectId, Arc<[u8]>>,
}

/// The pages a commit writes, and the directories it made: whole (id, decoded, page ids) and
/// partial (id, the leaves it knows).
#[derive(Default)]
pub(super) struct PlannedDirs {
    pub(super) pages: Vec<(ObjectId, Vec<u8>)>,
    pub(super) dirs: Vec<(ObjectId, Arc<Dir>, Arc<[ObjectId]>)>,
    pub(super) partials: Vec<(ObjectId, Arc<Dir>)>,
}

impl EncryptedRepository {
    /// Reads what `missing` names into `inputs`.
    pub(super) async fn supply(&self, missing: Missing, inputs: &mut PlanInputs) -> Result<(), Error> {
        match missing {
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
    /// A copy of part of a large directory is planned from the pages around its changes
    /// (`recut.rs`); what that needs and neither `inputs` nor the cache holds stops the plan
    /// with [`Missing`].
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
            let cache = self.objects.cache();
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
        let unchanged = base.and_then(|id| self.objects.cache().pages(id));
        Ok(self.plan_whole_dir(decoded, unchanged.as_deref(), out))
    }

    /// Encodes `dir` whole and adds to `out` its pages that are neither in `unchanged` (the
    /// pages of the version it was copied from) nor there already; returns its id.
    fn plan_whole_dir(&self, dir: Dir, unchanged: Option<&[ObjectId]>, out: &mut PlannedDirs) -> ObjectId {
        let pages = pages::encode(&dir, &self.objects.keys.tree_address).expect("children have ids");
        let id = pages.id();
        let ids: Arc<[ObjectId]> = pages.pages.iter().map(|(id, _)| *id).collect();
        for (page, plain) in pages.pages {
            if !unchanged.is_some_and(|u| u.contains(&page)) && !out.pages.iter().any(|(p, _)| *p == page) {
                out.pages.push((page, plain));
            }
        }
        out.dirs.push((id, Arc::new(dir), ids));
        id
    }

    /// The pages of `dir`, a copy a mutation made of part of the stored directory
    /// `parts.base` (children already by id), added to `out`; returns its id. A directory read
    /// in part has index pages: a base whose top page is a leaf is refused as corrupt
    /// ([`recut::recut`]).
    pub(super) fn plan_parts(
        &self,
        dir: &Dir,
        parts: &Parts,
        inputs: &PlanInputs,
        out: &mut PlannedDirs,
    ) -> Result<ObjectId, Missing> {
        let read = |id: &ObjectId| {
            let plain =
                inputs.pages.get(id).cloned().or_else(|| self.objects.cache().plain(id)).ok_or(Missing::Page(*id))?;
            format::decode_page(&plain, id).map_err(Missing::Failed)
        };
        let key = &self.objects.keys.tree_address;
        // The directory as read (its leaves the search read): a held leaf whose entries are
        // the same there keeps its page, as a leaf not held does, unless a cut runs into it.
        // Without it (let go by the cache), every held leaf is cut again, to the same pages.
        let before = self.objects.cache().partial(&parts.base);
        let held = parts
            .held
            .iter()
            .map(|part| Held {
                place: u64::from(part.index),
                entries: dir.part_entries(part).map(|(n, node)| (n.clone(), node.clone())).collect(),
                unchanged: before.as_deref().is_some_and(|before| unchanged(before, dir, part)),
            })
            .collect();
        let recut = recut::recut(key, &parts.base, held, &read)?;
        if recut.old_count != u64::from(parts.count) {
            return Err(Missing::Failed(Error::Corrupt {
                object: format::object_name(&parts.base),
                reason: "a directory read in part does not match its pages".into(),
            }));
        }
        for (page, plain) in recut.pages {
            // A page read or written before is stored already.
            let stored = inputs.pages.contains_key(&page) || self.objects.cache().plain(&page).is_some();
            if !stored && !out.pages.iter().any(|(p, _)| *p == page) {
                out.pages.push((page, plain));
            }
        }
        let id = recut.top.id;
        let known: Leaves = recut.leaves.into_iter().map(|(place, entries)| (place as usize, entries)).collect();
        let count = usize::try_from(recut.count).map_err(|_| Missing::Failed(too_many(&id)))?;
        if count > 1 {
            let decoded = partial_dir(id, dir.totals(), count, &known).map_err(Missing::Failed)?;
            out.partials.push((id, Arc::new(decoded)));
        }
        Ok(id)
    }
}

/// A directory of more leaves than a place counts.
fn too_many(id: &ObjectId) -> Error {
    Error::Corrupt { object: format::object_name(id), reason: "more leaves than a directory may have".into() }
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
