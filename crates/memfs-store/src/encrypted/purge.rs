//! Purge: erase a path from the live tree and from every stored commit (a right-to-erasure
//! request), delete at once every object that held it, and check that none remains.
//!
//! One run, against the head `base`:
//!
//! 1. **Read.** Walk the kept commits (head back to gc's horizon) and read every directory of
//!    their trees. Then list the store and open, as commits, the objects no kept commit
//!    reaches: commits outside the kept history (lost races, history gc cut but has not
//!    deleted yet, an earlier purge that stopped half-way) are read too, as far as they are
//!    still stored.
//! 2. **Find.** The path's *lineage*: the path itself in every commit, and where a rename
//!    took it (or a directory above it), until that copy is deleted. The purge set S is every
//!    content found at the lineage's paths (or below them) in a kept commit, or at the path in
//!    another stored commit. The empty content is never in S: it holds nothing, and any empty
//!    file shares it (an empty file on the lineage is removed by its path all the same).
//!    **Live copies**: files of the head's tree outside the path that hold a content of S
//!    (equal contents are one object) or carry its lineage (a rename took it there). They
//!    are someone's live data: the purge refuses ([`PurgeError::LiveCopies`], naming them)
//!    unless [`PurgeOptions::all_copies`] asks to erase them too. Copies in history only,
//!    at other paths, are erased with S without asking (the content itself is what is
//!    erased, and a commit cannot keep a file whose object is deleted); the report names
//!    their paths ([`PurgeReport::history_copies`]).
//! 3. **Rewrite** every kept commit, oldest first: its tree without the lineage's paths and
//!    without every file whose content is in S, wherever it is (copies, restores); its
//!    command replaced by `{"command":"purged"}` and its changes dropped when they name a
//!    removed path (a dropped change is replaced by what the rewritten trees say changed at a
//!    path that still holds something). Generation, time, actor and policy stay; the parent is
//!    the rewritten parent (the oldest kept commit keeps its parent link). Directories that
//!    do not change keep their ids, and so do the commits before the first that changes.
//!    A dry run ([`PurgeOptions::dry_run`]) stops here: the report says what the purge would
//!    remove and delete, and nothing is written.
//! 4. **Commit** one more commit on the rewritten chain, `{"command":"purge",…}`, deleting the
//!    removed paths from the live tree, recording in `replaced` the old id of every commit whose
//!    id changed (so that a client that remembers one still verifies the new head), and swap the head to it by compare-and-swap against
//!    `base` ([`Error::Conflict`] if it moved: nothing visible changed).
//! 5. **Delete**, without a grace period, every object the old commits reached that the new
//!    chain does not: the old commits, the directories that held the path, all of S. gc's
//!    grace period protects objects a writer has just written for a commit still to come;
//!    these were all written before the swap, for commits that can no longer land (every
//!    writer that read an older head fails its compare-and-swap). A writer on the new head
//!    may still reuse one of them (equal content has an equal id), so deletion is fenced as
//!    in `gc`:
//!    commits made since the swap are marked first, and after deleting, the head is re-sealed
//!    by compare-and-swap; if a writer committed meanwhile, everything is put back, its
//!    commits are marked, and what is still unreachable is deleted again.
//! 6. **Compact** a local folder's log, so that the deleted objects' bytes leave the disk's
//!    files, and **verify** by listing the store: no content of S and no replaced commit may
//!    remain. A writer that stored equal content again since the swap is the one way one can
//!    (it is its own, new copy); [`PurgeReport::remaining`] counts them.
//!
//! A purge that stops after the swap (an error, a crash) leaves the old commits as
//! unreachable objects; running it again finds them in step 1 and finishes the deletion.
//!
//! What it cannot see: text copied into another file by an edit (only exact copies are
//! found), lineage before gc's horizon, and other processes' caches.

mod chain;
mod fence;
mod graph;
mod land;
mod read;
mod record;
mod rewrite;
mod search;

use std::collections::{HashMap, HashSet};

use memfs_core::{Change, MemoryPath, Name, ObjectId};

use self::chain::Chain;
use self::graph::Graph;
use self::record::follow;
pub(super) use self::record::follow_commit_ids;
use self::search::History;
use super::{EncryptedRepository, PARALLEL, now_ms};
use crate::error::Error;
use crate::format::{CommitObject, HeadObject};
use crate::progress::Progress;
use crate::record::{Operation, Record};
use crate::repository::{Anchor, Head};

/// How far a purge goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeOptions {
    /// Also erase the live files outside the path that hold one of its contents or carry
    /// its lineage (without it, their presence is [`PurgeError::LiveCopies`]).
    pub all_copies: bool,
    /// Find and report everything, write and delete nothing.
    pub dry_run: bool,
}

/// Why a purge did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PurgeError {
    /// The path is `/memories` itself.
    #[error("cannot purge /memories itself: name a file or directory below it")]
    Root,
    /// No stored commit has anything at the path.
    #[error("nothing to purge: {path} is not in the tree, in its kept history or in any other stored commit")]
    NotFound {
        /// The path, normalised.
        path: String,
    },
    /// Live files outside the path hold one of its contents or carry its lineage, and
    /// [`PurgeOptions::all_copies`] was not given: nothing was written.
    #[error("{path} has live copies: {}", copies.join(", "))]
    LiveCopies {
        /// The path, normalised.
        path: String,
        /// The live paths outside it, sorted (a directory when its lineage went there whole).
        copies: Vec<String>,
    },
    /// The store failed; [`Error::Conflict`] before anything was visible.
    #[error(transparent)]
    Store(#[from] Error),
}

/// What a purge found, changed, deleted and verified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PurgeReport {
    /// The path purged, normalised.
    pub path: String,
    /// The purge commit's generation.
    pub generation: u64,
    /// Whether this is the report of a dry run: nothing was written or deleted, and the
    /// counts say what the purge would do.
    pub dry_run: bool,
    /// What the purge commit deleted from the live tree: the path (if it was there) and, with
    /// [`PurgeOptions::all_copies`], the live copies.
    pub removed: Vec<String>,
    /// The live copies outside the path (see [`PurgeError::LiveCopies`]); erased, as they
    /// are only with [`PurgeOptions::all_copies`].
    pub live_copies: Vec<String>,
    /// Other paths that held a content of S in a kept commit but not in the head: erased from
    /// those commits along with it.
    pub history_copies: Vec<String>,
    /// Distinct contents the path held (S), the empty content aside.
    pub versions: u64,
    /// Kept commits (head back to gc's horizon), before the purge commit.
    pub commits: u64,
    /// Of them, those whose tree or record changed.
    pub changed: u64,
    /// Of them, those given a new id (every commit from the first changed one on).
    pub rewritten: u64,
    /// Stored commits outside the kept history (lost races, cut history), searched and
    /// deleted along with what only they used.
    pub unreachable_commits: u64,
    /// Commit objects deleted: the rewritten ones' old versions and the unreachable ones.
    pub replaced_commits: u64,
    /// Objects deleted.
    pub deleted: u64,
    /// Their stored bytes.
    pub deleted_bytes: u64,
    /// A local folder's log: its bytes before and after compaction (both 0 for other stores).
    pub log_bytes_before: u64,
    /// The log's bytes after compaction.
    pub log_bytes_after: u64,
    /// Contents of S still stored after the purge: 0, unless a writer stored equal content
    /// again meanwhile or the deletion had to be undone (then run the purge again).
    pub remaining: u64,
    /// Replaced commits still stored after the purge: 0 unless the deletion was undone.
    pub remaining_commits: u64,
    /// When contents remain: the paths of the head, as read after the purge, that hold one
    /// (a writer stored it again while the purge ran; empty when the deletion was undone).
    pub stored_again: Vec<String>,
}

impl EncryptedRepository {
    /// Purges `path` from the live tree and all stored history, as a commit on `base` made by
    /// `actor`; see the module documentation for the protocol. [`Error::Conflict`] (wrapped)
    /// when the head moved since `base` was read: read it again and retry.
    pub async fn purge(
        &self,
        base: &Head,
        path: &MemoryPath,
        actor: &str,
        options: PurgeOptions,
        progress: &dyn Progress,
    ) -> Result<PurgeReport, PurgeError> {
        if path.is_root() {
            return Err(PurgeError::Root);
        }
        let target = path.components().to_vec();
        let not_found = || PurgeError::NotFound { path: path.normalized() };
        let Some(anchor) = &base.anchor else { return Err(Error::Conflict.into()) };
        let (Some(version), Some(head_commit)) = (&anchor.version, anchor.commit) else { return Err(not_found()) };

        // 1. Read: the kept commits and their trees, then every other stored commit.
        let mut graph = Graph::default();
        let read =
            self.read_history(base.generation, head_commit, &mut graph, progress).await?.ok_or_else(not_found)?;

        // 2. Find: the lineage before and after each kept commit, and S.
        let taints = taints(&read.kept, &target);
        let purge_set = self.purge_set(&read, &taints, &target, &mut graph).ok_or_else(not_found)?;
        let (live_copies, history_copies) = copies(&mut graph, &read.kept, &taints, &target, &purge_set);
        if !live_copies.is_empty() && !options.all_copies {
            return Err(PurgeError::LiveCopies { path: path.normalized(), copies: live_copies });
        }

        // 3. Rewrite the kept commits, oldest first.
        let mut report = read.report(path, options, &purge_set, (live_copies, history_copies));
        let mut chain = Chain::new(&purge_set, &self.objects.keys.tree_address, path, &read);
        chain.rewrite(&read.kept, &taints, &mut graph, &mut report, progress)?;

        // 4. The purge commit, then the head.
        let generation = base.generation + 1;
        let head = self.purge_commit(generation, anchor, actor, &mut chain, &mut graph, &mut report);
        let new = chain.finish();
        if options.dry_run {
            dry_run(&mut report, &graph, generation, new.roots, new.ids, &read);
            return Ok(report);
        }
        self.store_and_swap(version, anchor, new.writes, &head, progress).await?;
        report.generation = generation;

        // 5. Delete what only the old commits reached, fenced against writers on the new head.
        let replaced = self.delete_old(&read, new.roots, new.ids, &mut graph, &mut report, progress).await?;

        // 6. Compact and verify.
        if let Some(compacted) = self.objects.compact(progress).await? {
            report.log_bytes_before = compacted.bytes_before;
            report.log_bytes_after = compacted.bytes_after;
        }
        let after = self.objects.list().await?;
        report.remaining = purge_set.iter().filter(|id| after.contains_key(*id)).count() as u64;
        report.remaining_commits = replaced.iter().filter(|id| after.contains_key(*id)).count() as u64;
        if report.remaining > 0 {
            let left: HashSet<ObjectId> = purge_set.iter().filter(|id| after.contains_key(*id)).copied().collect();
            report.stored_again = self.paths_holding(&left, &mut graph).await?;
        }
        Ok(report)
    }

    /// Step 4's commit on the rewritten chain, at `generation`, queued in `chain`'s writes:
    /// it deletes from the live tree what the rewrite removed there (listed in
    /// `report.removed`) and records the replaced commits. Returns the head that names it.
    fn purge_commit(
        &self,
        generation: u64,
        anchor: &Anchor,
        actor: &str,
        chain: &mut Chain,
        graph: &mut Graph,
        report: &mut PurgeReport,
    ) -> HeadObject {
        let (tree, totals) = chain.newest;
        graph.removed(chain.head_tree, tree, &mut Vec::new(), &mut report.removed);
        let commit = CommitObject {
            parent: chain.parent,
            tree,
            generation,
            time_ms: now_ms(),
            actor: actor.to_owned(),
            command: Record::from(Operation::Purge { path: report.path.clone(), versions: report.versions }).to_json(),
            changes: report.removed.iter().map(|p| Change::Deleted { path: p.clone() }).collect(),
            files: totals.files,
            bytes: totals.bytes,
            policy: anchor.policy,
            replaced: std::mem::take(&mut chain.replaced),
        };
        let plain = commit.encode();
        let purge_id = self.objects.keys.tree_address.address(&plain);
        // The snapshot comes from the new tree only: nothing of the purged path. No `recent`:
        // the commits before this one were rewritten, and a client that knew an
        // old one walks to it through their `replaced` records; the heads after this one name
        // only commits from this one on, so a commit a head's `recent` names is never one
        // this purge replaced.
        let head = self.head_object(generation, (purge_id, &plain), anchor.policy, tree, Vec::new(), Vec::new());
        chain.push_commit(purge_id, plain);
        head
    }
}

/// Step 2's lineage: its paths before and after each kept commit (oldest first), from
/// `target` alone before the oldest.
fn taints(kept: &[(ObjectId, CommitObject)], target: &[Name]) -> Vec<(Lineage, Lineage)> {
    let mut lineage = vec![target.to_vec()];
    let mut taints = Vec::with_capacity(kept.len());
    for (_, c) in kept {
        let before = lineage.clone();
        for change in &c.changes {
            follow(&mut lineage, target, change);
        }
        taints.push((before, lineage.clone()));
    }
    taints
}

/// Fills a dry run's report: what the new chain would not reach among what the old commits
/// reach is what step 5 would delete (writers aside, which the fence handles).
fn dry_run(
    report: &mut PurgeReport,
    graph: &Graph,
    generation: u64,
    new_roots: Vec<ObjectId>,
    mut new_ids: HashSet<ObjectId>,
    read: &History,
) {
    graph.reach(new_roots, &mut new_ids);
    let doomed: Vec<&ObjectId> = read.old.iter().filter(|id| !new_ids.contains(*id)).collect();
    let old_commits: HashSet<&ObjectId> = read.kept.iter().chain(&read.others).map(|(id, _)| id).collect();
    report.generation = generation;
    report.replaced_commits = doomed.iter().filter(|id| old_commits.contains(**id)).count() as u64;
    report.deleted = doomed.len() as u64;
    report.deleted_bytes = doomed.iter().map(|id| read.listing.get(*id).copied().unwrap_or(0)).sum();
}

/// The lineage's paths at one commit.
type Lineage = Vec<Vec<Name>>;

/// The live copies (head paths outside `target` that hold a content of `set` or carry the
/// lineage) and the history copies (paths off the lineage that held one in an older kept
/// commit and are not live copies), each sorted, a path below another listed one left out.
fn copies(
    graph: &mut Graph,
    kept: &[(ObjectId, CommitObject)],
    taints: &[(Lineage, Lineage)],
    target: &[Name],
    set: &HashSet<ObjectId>,
) -> (Vec<String>, Vec<String>) {
    let mut memo = HashMap::new();
    let mut live: Vec<Vec<Name>> = Vec::new();
    if let (Some((_, head)), Some((_, lineage))) = (kept.last(), taints.last()) {
        live.extend(graph.holders(head.tree, set, &mut memo).iter().filter(|p| !p.starts_with(target)).cloned());
        for t in lineage {
            if !t.starts_with(target) && graph.node_at(Some(head.tree), t).is_some() {
                live.push(t.clone());
            }
        }
    }
    let live = outermost(live);
    let mut history = Vec::new();
    for ((_, c), (before, after)) in kept.iter().zip(taints) {
        for p in graph.holders(c.tree, set, &mut memo).iter() {
            let on_lineage = before.iter().chain(after).any(|t| p.starts_with(t));
            if !on_lineage && !p.starts_with(target) && !live.iter().any(|l| p.starts_with(l)) {
                history.push(p.clone());
            }
        }
    }
    let normalize = |paths: Vec<Vec<Name>>| paths.iter().map(|p| memfs_core::normalized(p)).collect();
    (normalize(live), normalize(outermost(history)))
}

/// `paths` sorted and deduplicated, without those below another of them.
fn outermost(mut paths: Vec<Vec<Name>>) -> Vec<Vec<Name>> {
    paths.sort();
    paths.dedup();
    let mut out: Vec<Vec<Name>> = Vec::with_capacity(paths.len());
    for p in paths {
        // Sorted: a path's ancestors come before it.
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests;
