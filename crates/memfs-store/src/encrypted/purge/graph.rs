//! The [`Graph`] of directories a purge reads and makes, and its walks.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use memfs_core::{Dir, FileRef, Name, Node, ObjectId, normalized};

use crate::format::Page;

/// Directory pages read from the store or made by the rewrite, and directories assembled
/// from them.
#[derive(Default)]
pub(super) struct Graph {
    pub(super) pages: HashMap<ObjectId, Page>,
    /// Pages asked for (read or not).
    pub(super) tried: HashSet<ObjectId>,
    pub(super) dirs: HashMap<ObjectId, Arc<Dir>>,
}

impl Graph {
    /// The directory whose top page is `id`; `None` if one of its pages is not held.
    pub(super) fn dir(&mut self, id: &ObjectId) -> Option<Arc<Dir>> {
        if let Some(d) = self.dirs.get(id) {
            return Some(d.clone());
        }
        let mut entries = Vec::new();
        self.entries(id, &mut entries, 0)?;
        let dir = Arc::new(Dir::from_entries(entries));
        self.dirs.insert(*id, dir.clone());
        Some(dir)
    }

    fn entries(&self, page: &ObjectId, out: &mut Vec<(Name, Node)>, depth: usize) -> Option<()> {
        // Index levels are few; the bound only keeps a corrupt cycle from recursing forever.
        if depth > 64 {
            return None;
        }
        match self.pages.get(page)? {
            Page::Leaf(entries) => out.extend(entries.iter().cloned()),
            Page::Index(index) => {
                for p in &index.pages {
                    self.entries(p, out, depth + 1)?;
                }
            }
        }
        Some(())
    }

    /// The node at `path` (not empty) of the tree `root` (`None`: the empty tree).
    pub(super) fn node_at(&mut self, root: Option<ObjectId>, path: &[Name]) -> Option<Node> {
        let (last, parents) = path.split_last()?;
        let mut dir = self.dir(&root?)?;
        for name in parents {
            match dir.get(name)? {
                Node::Dir(d) => dir = self.dir(&d.id()?)?,
                Node::File(_) => return None,
            }
        }
        dir.get(last).cloned()
    }

    pub(super) fn file_at(&mut self, root: Option<ObjectId>, path: &[Name]) -> Option<FileRef> {
        match self.node_at(root, path)? {
            Node::File(f) => Some(f),
            Node::Dir(_) => None,
        }
    }

    /// Every file content at or below `node` (what is held of it).
    pub(super) fn files_below(&mut self, node: &Node, out: &mut HashSet<ObjectId>) {
        match node {
            Node::File(f) => {
                out.insert(f.id);
            }
            Node::Dir(d) => {
                let Some(dir) = d.id().and_then(|id| self.dir(&id)) else { return };
                for (_, child) in dir.entries() {
                    self.files_below(child, out);
                }
            }
        }
    }

    /// The paths (relative to the directory `id`) of the files below it whose content is in
    /// `set`, sorted; `memo` keeps the answer per directory, so that the many commits that
    /// share a subtree walk it once.
    pub(super) fn holders(
        &mut self,
        id: ObjectId,
        set: &HashSet<ObjectId>,
        memo: &mut HashMap<ObjectId, Arc<Vec<Vec<Name>>>>,
    ) -> Arc<Vec<Vec<Name>>> {
        if let Some(done) = memo.get(&id) {
            return done.clone();
        }
        let mut out = Vec::new();
        if let Some(dir) = self.dir(&id) {
            for (name, node) in dir.entries() {
                match node {
                    Node::File(f) if set.contains(&f.id) => out.push(vec![name.clone()]),
                    Node::File(_) => {}
                    Node::Dir(d) => {
                        let Some(child) = d.id() else { continue };
                        for below in self.holders(child, set, memo).iter() {
                            out.push([std::slice::from_ref(name), below].concat());
                        }
                    }
                }
            }
        }
        let out = Arc::new(out);
        memo.insert(id, out.clone());
        out
    }

    /// Adds every page and file content reachable from `roots` to `out` (stopping at what it
    /// holds already: equal ids, equal subtrees).
    pub(super) fn reach(&self, roots: impl IntoIterator<Item = ObjectId>, out: &mut HashSet<ObjectId>) {
        let mut stack: Vec<ObjectId> = roots.into_iter().collect();
        while let Some(id) = stack.pop() {
            if !out.insert(id) {
                continue;
            }
            match self.pages.get(&id) {
                None => {}
                Some(Page::Index(index)) => stack.extend(&index.pages),
                Some(Page::Leaf(entries)) => {
                    for (_, node) in entries {
                        match node {
                            Node::File(f) => {
                                out.insert(f.id);
                            }
                            Node::Dir(d) => stack.extend(d.id()),
                        }
                    }
                }
            }
        }
    }

    /// The paths below `prefix` that the tree `old` has and `new` lacks (a directory that went
    /// whole once, not its files), in tree order. `new` never adds anything.
    pub(super) fn removed(&mut self, old: ObjectId, new: ObjectId, prefix: &mut Vec<Name>, out: &mut Vec<String>) {
        if old == new {
            return;
        }
        let (Some(old), Some(new)) = (self.dir(&old), self.dir(&new)) else { return };
        for (name, node) in old.entries() {
            prefix.push(name.clone());
            match (node, new.get(name)) {
                (_, None) => out.push(normalized(prefix)),
                (Node::Dir(a), Some(Node::Dir(b))) => {
                    if let (Some(a), Some(b)) = (a.id(), b.id()) {
                        self.removed(a, b, prefix, out);
                    }
                }
                _ => {}
            }
            prefix.pop();
        }
    }
}
