//! Reading the whole live tree out as plain entries (`memfs export`).

use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;

use memfs_core::{Name, Node, Tree, normalized};
use memfs_store::Progress;

use memfs_store::Fetched;

use crate::engine::Memfs;
use crate::error::Error;
use crate::import::Entry;

/// The live tree as plain entries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exported {
    /// The generation of the head read.
    pub generation: u64,
    /// Every directory below `/memories` and every file with its text, depth first in name
    /// order (a directory before what it holds). [`Memfs::import`] of these into an empty
    /// store makes the same tree.
    pub entries: Vec<Entry>,
}

impl Exported {
    /// The pairs of entries in one folder whose names differ only by case (`Notes.md` and
    /// `notes.md`), in entry order: on a case-insensitive filesystem (macOS's and Windows's
    /// defaults) writing both keeps one, so `memfs export` refuses such a tree before writing
    /// anything unless told otherwise.
    ///
    /// Names are compared after Unicode lowercasing (`str::to_lowercase`), which is what those
    /// filesystems' case folding does for every name but a handful of special cases (`ß`, the
    /// Turkish dotless `ı`). Names are already in NFC, so normal forms need no folding here.
    /// Only the first twin of each folder is named: below twin folders, their files would
    /// merge too, but renaming a folder settles them all.
    pub fn case_twins(&self) -> Vec<(&str, &str)> {
        let mut seen: HashMap<(&str, String), &str> = HashMap::new();
        let mut twins = Vec::new();
        for entry in &self.entries {
            let path = entry.path();
            let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
            match seen.entry((parent, name.to_lowercase())) {
                Slot::Occupied(first) => twins.push((*first.get(), path)),
                Slot::Vacant(slot) => {
                    slot.insert(path);
                }
            }
        }
        twins
    }
}

impl Memfs {
    /// Every directory and file of the head's tree, with contents, as of one head. Reading
    /// does not count as using a file (last-access days are left alone).
    pub async fn export(&self, progress: &dyn Progress) -> Result<Exported, Error> {
        let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
        self.export_tree(&head.tree, head.generation, progress).await
    }

    /// [`Memfs::export`] of the tree as it was at `rev`, a revision or a time (see
    /// [`Memfs::commit_at`]).
    pub async fn export_at(&self, rev: &str, progress: &dyn Progress) -> Result<Exported, Error> {
        let commit = self.commit_at(rev).await?;
        self.export_tree(&commit.tree(), commit.generation, progress).await
    }

    async fn export_tree(&self, tree: &Tree, generation: u64, progress: &dyn Progress) -> Result<Exported, Error> {
        progress.phase("files", Some(tree.totals().files));
        let mut fetched = Fetched::new(self.repository().as_ref());
        let mut entries = Vec::new();
        let mut stack: Vec<(Vec<Name>, Node)> = vec![(Vec::new(), Node::Dir(tree.root().clone()))];
        while let Some((components, node)) = stack.pop() {
            let path = normalized(&components);
            match node {
                Node::File(f) => {
                    let bytes = self.repository().blob(&f.id).await.map_err(|e| self.store_error(e))?;
                    let text = String::from_utf8(bytes.to_vec()).map_err(|_| Error::NotText { path: path.clone() })?;
                    entries.push(Entry::File { path, text });
                    progress.advance(1);
                }
                Node::Dir(d) => {
                    if !components.is_empty() {
                        entries.push(Entry::Dir { path });
                    }
                    let dir = self.loaded(&d, &mut fetched).await?;
                    // Pushed in reverse so that they come off the stack in name order.
                    let children: Vec<_> = dir.entries().collect();
                    for (name, child) in children.into_iter().rev() {
                        let mut child_components = components.clone();
                        child_components.push(name.clone());
                        stack.push((child_components, child.clone()));
                    }
                }
            }
        }
        Ok(Exported { generation, entries })
    }
}
