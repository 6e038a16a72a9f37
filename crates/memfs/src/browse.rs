//! Looking without writing: a directory's entries, or a whole subtree, as of a revision, with
//! their sizes (`memfs ls`, `memfs tree`; `memfs cat` reads a file through
//! [`Memfs::show`]).

use memfs_core::{DirRef, MemoryPath, Node, Totals};

use crate::engine::Memfs;
use crate::error::Error;

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// How deep below the listed directory: 0 for its own entries.
    pub depth: usize,
    /// The entry's name; for a listed file, its whole path.
    pub name: String,
    /// A directory (its name has no trailing `/`).
    pub is_dir: bool,
    /// The files and bytes it holds: one file and its size, for a file.
    pub totals: Totals,
}

impl Memfs {
    /// What `path` holds at `rev`, a revision or a time (see [`Memfs::commit_at`]): a
    /// directory's entries in tree order, each directory followed by its own when `recursive`;
    /// a file lists as itself. [`Error::NotFound`] when nothing is there.
    pub async fn list(&self, rev: &str, path: &str, recursive: bool) -> Result<Vec<Listed>, Error> {
        let record = self.commit_at(rev).await?;
        let path = MemoryPath::parse(path)?;
        let not_found = || Error::NotFound { path: path.normalized(), rev: rev.to_owned() };
        let dir = match self.node_at(&record.tree(), path.components()).await?.ok_or_else(not_found)? {
            Node::File(f) => {
                let totals = Totals { files: 1, bytes: f.size };
                return Ok(vec![Listed { depth: 0, name: path.normalized(), is_dir: false, totals }]);
            }
            Node::Dir(d) => d,
        };
        // Depth first, in tree order: entries wait on a stack (a directory's in reverse, so
        // the first comes off first), and a directory's own are pushed when it comes off.
        let mut out = Vec::new();
        let mut waiting = Vec::new();
        self.push_entries(&dir, 0, &mut waiting).await?;
        while let Some((listed, dir)) = waiting.pop() {
            let depth = listed.depth;
            out.push(listed);
            if let (true, Some(dir)) = (recursive, dir) {
                self.push_entries(&dir, depth + 1, &mut waiting).await?;
            }
        }
        Ok(out)
    }

    /// Pushes the entries of `dir` on `waiting`, last first, each directory with its `DirRef`.
    async fn push_entries(
        &self,
        dir: &DirRef,
        depth: usize,
        waiting: &mut Vec<(Listed, Option<DirRef>)>,
    ) -> Result<(), Error> {
        let loaded = self.load(dir).await?;
        let entries: Vec<_> = loaded
            .entries()
            .map(|(name, node)| {
                let sub = match node {
                    Node::Dir(d) => Some(d.clone()),
                    Node::File(_) => None,
                };
                let listed = Listed { depth, name: name.to_string(), is_dir: sub.is_some(), totals: node.totals() };
                (listed, sub)
            })
            .collect();
        waiting.extend(entries.into_iter().rev());
        Ok(())
    }
}
