//! Steps 1 and 2 of a purge (see the parent module's documentation): the stored commits read,
//! and what of the path they hold.

use std::collections::{HashMap, HashSet};

use memfs_core::{MemoryPath, Name, ObjectId, Totals};

use super::graph::Graph;
use super::{Lineage, PurgeOptions, PurgeReport};
use crate::encrypted::EncryptedRepository;
use crate::error::Error;
use crate::format::CommitObject;
use crate::progress::Progress;

impl EncryptedRepository {
    /// Step 1: the kept commits (from `head_commit`, at `generation`, back to gc's horizon)
    /// with their trees read into `graph`, then every other stored commit, its tree read as far
    /// as it is still stored. `None` when no commit is kept.
    pub(super) async fn read_history(
        &self,
        generation: u64,
        head_commit: ObjectId,
        graph: &mut Graph,
        progress: &dyn Progress,
    ) -> Result<Option<History>, Error> {
        let horizon = self.horizon().await?;
        progress.phase("commits", Some(generation.saturating_sub(horizon.max(1)) + 1));
        let mut kept = Vec::new();
        let mut walk = self.walk(Some(head_commit), generation, horizon);
        while let Some(c) = walk.next().await? {
            kept.push((c.oid, self.commit_object(&c.oid).await?));
            progress.advance(1);
        }
        kept.reverse();
        let Some((_, head)) = kept.last() else { return Ok(None) };
        let newest = (head.tree, Totals { files: head.files, bytes: head.bytes });
        self.read_trees(kept.iter().map(|(_, c)| c.tree).collect(), true, graph, progress).await?;
        let mut old: HashSet<ObjectId> = kept.iter().map(|(id, _)| *id).collect();
        old.extend(kept.iter().filter_map(|(_, c)| c.policy));
        graph.reach(kept.iter().map(|(_, c)| c.tree), &mut old);

        let listing = self.objects.list().await?;
        let others = self.other_commits(&listing, &old, progress).await?;
        self.read_trees(others.iter().map(|(_, c)| c.tree).collect(), false, graph, progress).await?;
        old.extend(others.iter().map(|(id, _)| *id));
        old.extend(others.iter().filter_map(|(_, c)| c.policy));
        graph.reach(others.iter().map(|(_, c)| c.tree), &mut old);
        Ok(Some(History { horizon, kept, newest, others, old, listing }))
    }

    /// Step 2's S: every content found at the lineage's paths (or below them) in a kept commit,
    /// or at `target` in another stored commit, the empty content aside. `None` when no stored
    /// commit has anything there.
    pub(super) fn purge_set(
        &self,
        read: &History,
        taints: &[(Lineage, Lineage)],
        target: &[Name],
        graph: &mut Graph,
    ) -> Option<HashSet<ObjectId>> {
        let mut found = false;
        let mut versions = HashSet::new();
        for ((_, c), (_, after)) in read.kept.iter().zip(taints) {
            for t in after {
                if let Some(node) = graph.node_at(Some(c.tree), t) {
                    found = true;
                    graph.files_below(&node, &mut versions);
                }
            }
        }
        for (_, c) in &read.others {
            if let Some(node) = graph.node_at(Some(c.tree), target) {
                found = true;
                graph.files_below(&node, &mut versions);
            }
        }
        if !found {
            return None;
        }
        versions.remove(&self.objects.keys.blob_address.address(b""));
        Some(versions)
    }
}

/// What step 1 read, which the later steps use.
pub(super) struct History {
    /// gc's horizon: the kept commits go back to it.
    pub(super) horizon: u64,
    /// The kept commits, oldest first (never none).
    pub(super) kept: Vec<(ObjectId, CommitObject)>,
    /// The head's tree before the purge (the newest kept commit's), with its totals.
    pub(super) newest: (ObjectId, Totals),
    /// The other stored commits.
    pub(super) others: Vec<(ObjectId, CommitObject)>,
    /// Every object they all reach: the commits, their policies and the objects of their trees.
    pub(super) old: HashSet<ObjectId>,
    /// The store's objects, with their stored sizes.
    pub(super) listing: HashMap<ObjectId, u64>,
}

impl History {
    /// The report as steps 1 and 2 leave it: the path, the kept and other commits found, S
    /// (`purge_set`) and the `copies` of its contents, live and in history.
    pub(super) fn report(
        &self,
        path: &MemoryPath,
        options: PurgeOptions,
        purge_set: &HashSet<ObjectId>,
        (live_copies, history_copies): (Vec<String>, Vec<String>),
    ) -> PurgeReport {
        PurgeReport {
            path: path.normalized(),
            dry_run: options.dry_run,
            live_copies,
            history_copies,
            versions: purge_set.len() as u64,
            commits: self.kept.len() as u64,
            unreachable_commits: self.others.len() as u64,
            ..PurgeReport::default()
        }
    }
}
