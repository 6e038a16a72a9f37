//! Step 3 of a purge: the kept commits rewritten, oldest first, into a new chain (see the
//! parent module's documentation), which step 4's purge commit ends.

use std::collections::{HashMap, HashSet};

use memfs_core::{Change, MemoryPath, Name, ObjectId, Totals};
use memfs_crypt::{AddressKey, ObjectKind};

use super::graph::Graph;
use super::record::{Context, follow_commit_ids, rewrite_changes};
use super::rewrite::Rewrite;
use super::search::History;
use super::{Lineage, PurgeReport};
use crate::error::Error;
use crate::format::{CommitAt, CommitObject};
use crate::progress::Progress;
use crate::record::{Operation, Record};

/// An object to store: its kind, id and plain bytes.
pub(super) type Write = (ObjectKind, ObjectId, Vec<u8>);

/// The new chain as it grows, one kept commit after another.
pub(super) struct Chain<'a> {
    /// The kept commits' trees, rewritten, and the new pages.
    rewrite: Rewrite<'a>,
    /// S.
    purge: &'a HashSet<ObjectId>,
    /// What commits are addressed with.
    key: &'a AddressKey,
    /// The path purged.
    path: &'a MemoryPath,
    /// The new commits, oldest first (the purge commit last).
    writes: Vec<Write>,
    /// The new chain's commits and policies (step 5 adds the objects of its trees).
    ids: HashSet<ObjectId>,
    /// The new chain's trees.
    roots: Vec<ObjectId>,
    /// The old ids of the commits given a new one, to the new one (in hex, as records name
    /// commits): a later commit's record is made to name the new.
    renamed: HashMap<String, String>,
    /// The kept commits given a new id, which the purge commit records.
    pub(super) replaced: Vec<CommitAt>,
    /// The newest commit so far: the next one's parent.
    pub(super) parent: Option<ObjectId>,
    /// The trees before the commit at hand, old and rewritten; unknown for the oldest kept
    /// commit when gc cut the history before it.
    prev: Option<(Option<ObjectId>, Option<ObjectId>)>,
    /// The head's tree before the purge.
    pub(super) head_tree: ObjectId,
    /// The newest tree so far, rewritten, with its totals.
    pub(super) newest: (ObjectId, Totals),
}

/// The new chain, finished: what to store and what the chain reaches.
pub(super) struct NewChain {
    /// The new commits, oldest first, then the new directory pages.
    pub(super) writes: Vec<Write>,
    /// Its commits and policies.
    pub(super) ids: HashSet<ObjectId>,
    /// Its trees.
    pub(super) roots: Vec<ObjectId>,
}

impl<'a> Chain<'a> {
    /// A chain without S (`purge`) and the lineage's paths of `path`, its commits and pages
    /// addressed with `key`, to rewrite `read`'s kept commits on the oldest one's parent.
    pub(super) fn new(purge: &'a HashSet<ObjectId>, key: &'a AddressKey, path: &'a MemoryPath, read: &History) -> Self {
        let parent = read.kept.first().and_then(|(_, c)| c.parent);
        Chain {
            rewrite: Rewrite::new(purge, key),
            purge,
            key,
            path,
            writes: Vec::new(),
            ids: HashSet::new(),
            roots: Vec::with_capacity(read.kept.len()),
            renamed: HashMap::new(),
            replaced: Vec::new(),
            parent,
            prev: match parent {
                None => Some((None, None)),
                Some(_) => None,
            },
            head_tree: read.newest.0,
            newest: read.newest,
        }
    }

    /// Rewrites the `kept` commits, oldest first, each with the lineage before and after it
    /// (`taints`); counts in `report` those that change and those given a new id.
    pub(super) fn rewrite(
        &mut self,
        kept: &[(ObjectId, CommitObject)],
        taints: &[(Lineage, Lineage)],
        graph: &mut Graph,
        report: &mut PurgeReport,
        progress: &dyn Progress,
    ) -> Result<(), Error> {
        progress.phase("rewriting", Some(kept.len() as u64));
        for (commit, taint) in kept.iter().zip(taints) {
            self.rewrite_one(commit, taint, graph, report)?;
            progress.advance(1);
        }
        Ok(())
    }

    /// One kept commit: its tree without S and the lineage's paths, its record without what
    /// names them, on the new chain's newest commit; a new id when any of these changed.
    fn rewrite_one(
        &mut self,
        (oid, c): &(ObjectId, CommitObject),
        (before, after): &(Lineage, Lineage),
        graph: &mut Graph,
        report: &mut PurgeReport,
    ) -> Result<(), Error> {
        let lineage: Vec<&[Name]> = after.iter().map(Vec::as_slice).collect();
        let tree = match self.rewrite.root(graph, c.tree, &lineage)? {
            Some(new) => new,
            None => (c.tree, Totals { files: c.files, bytes: c.bytes }),
        };
        let prev = self.prev;
        let context = Context { before, after, purge: self.purge, old: (prev.and_then(|p| p.0), c.tree) };
        let (changes, named) = rewrite_changes(graph, &context, &c.changes, prev.map(|p| (p.1, tree.0)));
        let named = named || context.names_in_command(graph, &c.command, self.path);
        let command = match named {
            // The record kept in place of one that named a purged path.
            true => Record::from(Operation::Purged).to_json(),
            false => follow_commit_ids(&c.command, &self.renamed),
        };
        let changed = tree.0 != c.tree || named || changes != c.changes;
        report.changed += u64::from(changed);
        let id = if !changed && self.parent == c.parent && command == c.command {
            *oid
        } else {
            self.write_commit(c, tree, command, changes)
        };
        if id != *oid {
            // Recorded in the purge commit: a client that remembers the old id still
            // finds it in the history the new head descends from.
            self.replaced.push(CommitAt { generation: c.generation, commit: *oid });
            report.rewritten += 1;
            self.renamed.insert(oid.to_hex(), id.to_hex());
        }
        self.ids.insert(id);
        self.ids.extend(c.policy);
        self.roots.push(tree.0);
        self.prev = Some((Some(c.tree), Some(tree.0)));
        self.parent = Some(id);
        self.newest = tree;
        Ok(())
    }

    /// `c` rewritten on the new chain's newest commit, with `tree`, `command` and `changes`,
    /// queued to be stored; its id.
    fn write_commit(
        &mut self,
        c: &CommitObject,
        tree: (ObjectId, Totals),
        command: String,
        changes: Vec<Change>,
    ) -> ObjectId {
        let commit = CommitObject {
            parent: self.parent,
            tree: tree.0,
            generation: c.generation,
            time_ms: c.time_ms,
            actor: c.actor.clone(),
            command,
            changes,
            files: tree.1.files,
            bytes: tree.1.bytes,
            policy: c.policy,
            replaced: c.replaced.clone(),
        };
        let plain = commit.encode();
        let id = self.key.address(&plain);
        self.writes.push((ObjectKind::Commit, id, plain));
        id
    }

    /// Queues step 4's purge commit (`plain`, addressed `id`) to be stored with the chain's.
    pub(super) fn push_commit(&mut self, id: ObjectId, plain: Vec<u8>) {
        self.writes.push((ObjectKind::Commit, id, plain));
        self.ids.insert(id);
    }

    /// The chain, ended by the purge commit: the commits to store, then the new pages.
    pub(super) fn finish(self) -> NewChain {
        let mut writes = self.writes;
        writes.extend(self.rewrite.new.into_iter().map(|(id, plain)| (ObjectKind::Dir, id, plain)));
        NewChain { writes, ids: self.ids, roots: self.roots }
    }
}
