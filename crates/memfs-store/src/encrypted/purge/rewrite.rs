//! The rewrite of directories without the purged contents and the lineage's paths.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use memfs_core::{Dir, DirRef, Name, Node, ObjectId, Totals};
use memfs_crypt::AddressKey;

use super::graph::Graph;
use crate::error::Error;
use crate::{format, pages};

/// Rewrites directories without the purged contents and the lineage's paths.
pub(super) struct Rewrite<'a> {
    purge: &'a HashSet<ObjectId>,
    key: &'a AddressKey,
    /// Directories with no lineage path below them, by old id.
    memo: HashMap<ObjectId, Rewritten>,
    /// Pages to write.
    pub(super) new: Vec<(ObjectId, Vec<u8>)>,
}

/// What became of one directory.
#[derive(Debug, Clone, Copy)]
enum Rewritten {
    /// Nothing in it changes.
    Same,
    /// It changes: its new id and totals.
    Changed(ObjectId, Totals),
    /// It held only what is purged. The memory tool has no empty directories of its own
    /// making (a directory exists through its files), so an emptied one would only mark
    /// where the purged files were: it goes too.
    Gone,
}

impl<'a> Rewrite<'a> {
    /// A rewrite without `purge` and the lineage's paths, its pages addressed with `key`;
    /// nothing rewritten yet.
    pub(super) fn new(purge: &'a HashSet<ObjectId>, key: &'a AddressKey) -> Self {
        Rewrite { purge, key, memo: HashMap::new(), new: Vec::new() }
    }

    /// A root directory: [`Rewrite::dir`], an emptied root staying as the empty directory.
    pub(super) fn root(
        &mut self,
        graph: &mut Graph,
        id: ObjectId,
        lineage: &[&[Name]],
    ) -> Result<Option<(ObjectId, Totals)>, Error> {
        Ok(match self.dir(graph, id, lineage)? {
            Rewritten::Same => None,
            Rewritten::Changed(id, totals) => Some((id, totals)),
            Rewritten::Gone => Some(self.encode(graph, Dir::new())?),
        })
    }

    /// The directory `id` without the files whose content is purged and without the entries
    /// at `lineage` (paths relative to it).
    fn dir(&mut self, graph: &mut Graph, id: ObjectId, lineage: &[&[Name]]) -> Result<Rewritten, Error> {
        if lineage.is_empty()
            && let Some(done) = self.memo.get(&id)
        {
            return Ok(*done);
        }
        let dir = graph.dir(&id).ok_or_else(|| Error::MissingObject { id: format::object_name(&id) })?;
        let mut changed = false;
        let mut entries = Vec::with_capacity(dir.len());
        for (name, node) in dir.entries() {
            if lineage.iter().any(|t| t.len() == 1 && t[0] == *name) {
                changed = true;
                continue;
            }
            match node {
                Node::File(f) if self.purge.contains(&f.id) => changed = true,
                Node::File(_) => entries.push((name.clone(), node.clone())),
                Node::Dir(d) => {
                    let below: Vec<&[Name]> =
                        lineage.iter().filter(|t| t.len() > 1 && t[0] == *name).map(|t| &t[1..]).collect();
                    let child = d.id().expect("decoded directories are stored");
                    match self.dir(graph, child, &below)? {
                        Rewritten::Same => entries.push((name.clone(), node.clone())),
                        Rewritten::Changed(new, totals) => {
                            changed = true;
                            entries.push((name.clone(), Node::Dir(DirRef::stored(new, totals))));
                        }
                        Rewritten::Gone => changed = true,
                    }
                }
            }
        }
        let result = match (changed, entries.is_empty()) {
            (false, _) => Rewritten::Same,
            (true, true) => Rewritten::Gone,
            (true, false) => {
                let (id, totals) = self.encode(graph, Dir::from_entries(entries))?;
                Rewritten::Changed(id, totals)
            }
        };
        if lineage.is_empty() {
            self.memo.insert(id, result);
        }
        Ok(result)
    }

    /// Cuts a new directory into pages, keeping those the graph lacks to write; its id and
    /// totals.
    fn encode(&mut self, graph: &mut Graph, dir: Dir) -> Result<(ObjectId, Totals), Error> {
        let pages = pages::encode(&dir, self.key).expect("children have ids");
        let id = pages.id();
        for (page, plain) in pages.pages {
            if !graph.pages.contains_key(&page) {
                graph.tried.insert(page);
                graph.pages.insert(page, format::decode_page(&plain, &page)?);
                self.new.push((page, plain));
            }
        }
        let totals = dir.totals();
        graph.dirs.insert(id, Arc::new(dir));
        Ok((id, totals))
    }
}
