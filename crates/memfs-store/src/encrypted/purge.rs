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

mod fence;
mod graph;
mod read;
mod record;
mod rewrite;

use std::collections::{HashMap, HashSet};

use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::{Change, MemoryPath, Name, ObjectId, Totals};
use memfs_crypt::ObjectKind;

use self::graph::Graph;
pub(super) use self::record::follow_commit_ids;
use self::record::{Context, follow, rewrite_changes};
use self::rewrite::Rewrite;
use super::{EncryptedRepository, Mark, PARALLEL, now_ms};
use crate::error::Error;
use crate::format::{CommitAt, CommitObject};
use crate::progress::Progress;
use crate::record::{Operation, Record};
use crate::repository::Head;

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
        let horizon = self.horizon().await?;
        progress.phase("commits", Some(base.generation.saturating_sub(horizon.max(1)) + 1));
        let mut kept = Vec::new();
        let mut walk = self.walk(Some(head_commit), base.generation, horizon);
        while let Some(c) = walk.next().await? {
            kept.push((c.oid, self.commit_object(&c.oid).await?));
            progress.advance(1);
        }
        kept.reverse();
        let Some((_, newest_commit)) = kept.last() else { return Err(not_found()) };
        let mut newest = (newest_commit.tree, Totals { files: newest_commit.files, bytes: newest_commit.bytes });
        let old_newest = newest.0;
        let mut graph = Graph::default();
        self.read_trees(kept.iter().map(|(_, c)| c.tree).collect(), true, &mut graph, progress).await?;
        let mut old: HashSet<ObjectId> = kept.iter().map(|(id, _)| *id).collect();
        old.extend(kept.iter().filter_map(|(_, c)| c.policy));
        graph.reach(kept.iter().map(|(_, c)| c.tree), &mut old);

        let listing = self.list_objects().await?;
        let others = self.other_commits(&listing, &old, progress).await?;
        self.read_trees(others.iter().map(|(_, c)| c.tree).collect(), false, &mut graph, progress).await?;
        old.extend(others.iter().map(|(id, _)| *id));
        old.extend(others.iter().filter_map(|(_, c)| c.policy));
        graph.reach(others.iter().map(|(_, c)| c.tree), &mut old);

        // 2. Find: the lineage before and after each kept commit, and S.
        let mut lineage = vec![target.clone()];
        let mut taints = Vec::with_capacity(kept.len());
        for (_, c) in &kept {
            let before = lineage.clone();
            for change in &c.changes {
                follow(&mut lineage, &target, change);
            }
            taints.push((before, lineage.clone()));
        }
        let mut found = false;
        let mut versions = HashSet::new();
        for ((_, c), (_, after)) in kept.iter().zip(&taints) {
            for t in after {
                if let Some(node) = graph.node_at(Some(c.tree), t) {
                    found = true;
                    graph.files_below(&node, &mut versions);
                }
            }
        }
        for (_, c) in &others {
            if let Some(node) = graph.node_at(Some(c.tree), &target) {
                found = true;
                graph.files_below(&node, &mut versions);
            }
        }
        if !found {
            return Err(not_found());
        }
        versions.remove(&self.keys.blob_address.address(b""));
        let purge_set = versions;
        let (live_copies, history_copies) = copies(&mut graph, &kept, &taints, &target, &purge_set);
        if !live_copies.is_empty() && !options.all_copies {
            return Err(PurgeError::LiveCopies { path: path.normalized(), copies: live_copies });
        }

        // 3. Rewrite the kept commits, oldest first.
        progress.phase("rewriting", Some(kept.len() as u64));
        let mut rewrite = Rewrite::new(&purge_set, &self.keys.tree_address);
        let mut report = PurgeReport {
            path: path.normalized(),
            dry_run: options.dry_run,
            live_copies,
            history_copies,
            versions: purge_set.len() as u64,
            commits: kept.len() as u64,
            unreachable_commits: others.len() as u64,
            ..PurgeReport::default()
        };
        let mut writes: Vec<(ObjectKind, ObjectId, Vec<u8>)> = Vec::new();
        let mut new_ids: HashSet<ObjectId> = HashSet::new();
        let mut new_roots = Vec::with_capacity(kept.len());
        let mut renamed: HashMap<String, String> = HashMap::new();
        let mut replaced = Vec::new();
        let mut parent = kept.first().and_then(|(_, c)| c.parent);
        // The trees before the commit at hand, old and rewritten; unknown for the oldest kept
        // commit when gc cut the history before it.
        let mut prev = match parent {
            None => Some((None, None)),
            Some(_) => None,
        };
        for ((oid, c), (before, after)) in kept.iter().zip(&taints) {
            let lineage: Vec<&[Name]> = after.iter().map(Vec::as_slice).collect();
            let tree = match rewrite.root(&mut graph, c.tree, &lineage)? {
                Some(new) => new,
                None => (c.tree, Totals { files: c.files, bytes: c.bytes }),
            };
            let context = Context { before, after, purge: &purge_set, old: (prev.and_then(|p| p.0), c.tree) };
            let (changes, named) = rewrite_changes(&mut graph, &context, &c.changes, prev.map(|p| (p.1, tree.0)));
            let named = named || context.names_in_command(&mut graph, &c.command, path);
            let command = match named {
                // The record kept in place of one that named a purged path.
                true => Record::from(Operation::Purged).to_json(),
                false => follow_commit_ids(&c.command, &renamed),
            };
            let changed = tree.0 != c.tree || named || changes != c.changes;
            report.changed += u64::from(changed);
            let id = if !changed && parent == c.parent && command == c.command {
                *oid
            } else {
                let commit = CommitObject {
                    parent,
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
                let id = self.keys.tree_address.address(&plain);
                writes.push((ObjectKind::Commit, id, plain));
                id
            };
            if id != *oid {
                // Recorded in the purge commit: a client that remembers the old id still
                // finds it in the history the new head descends from.
                replaced.push(CommitAt { generation: c.generation, commit: *oid });
                report.rewritten += 1;
                renamed.insert(oid.to_hex(), id.to_hex());
            }
            new_ids.insert(id);
            new_ids.extend(c.policy);
            new_roots.push(tree.0);
            prev = Some((Some(c.tree), Some(tree.0)));
            parent = Some(id);
            newest = tree;
            progress.advance(1);
        }

        // 4. The purge commit, then the head.
        graph.removed(old_newest, newest.0, &mut Vec::new(), &mut report.removed);
        let generation = base.generation + 1;
        let commit = CommitObject {
            parent,
            tree: newest.0,
            generation,
            time_ms: now_ms(),
            actor: actor.to_owned(),
            command: Record::from(Operation::Purge { path: path.normalized(), versions: purge_set.len() as u64 })
                .to_json(),
            changes: report.removed.iter().map(|p| Change::Deleted { path: p.clone() }).collect(),
            files: newest.1.files,
            bytes: newest.1.bytes,
            policy: anchor.policy,
            replaced,
        };
        let plain = commit.encode();
        let purge_id = self.keys.tree_address.address(&plain);
        // The snapshot comes from the new tree only: nothing of the purged path. No `recent`
        // (format 13): the commits before this one were rewritten, and a client that knew an
        // old one walks to it through their `replaced` records; the heads after this one name
        // only commits from this one on, so a commit a head's `recent` names is never one
        // this purge replaced.
        let head = self.head_object(generation, (purge_id, &plain), anchor.policy, newest.0, Vec::new(), Vec::new());
        writes.push((ObjectKind::Commit, purge_id, plain));
        new_ids.insert(purge_id);
        if options.dry_run {
            dry_run(&mut report, &graph, generation, new_roots, new_ids, &old, &kept, &others, &listing);
            return Ok(report);
        }
        writes.extend(rewrite.new.into_iter().map(|(id, plain)| (ObjectKind::Dir, id, plain)));
        // What the base head carried unwritten (format 8) is stored like the rest: the new head
        // carries nothing unwritten, and step 5 deletes those the new chain does not reach.
        writes.extend(anchor.unwritten().map(|o| (o.kind.object_kind(), o.id, o.plain.clone())));
        progress.phase("writing", Some(writes.len() as u64));
        stream::iter(&writes)
            .map(|(kind, id, plain)| async move {
                self.put_object(*kind, *id, plain).await?;
                progress.advance(1);
                Ok::<(), Error>(())
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<()>>()
            .await?;
        let head = self.seal_head(&head)?;
        match self.head.swap(version, head).await {
            Ok(()) => {}
            // It may have landed all the same (a timeout after the write, or a retry inside the
            // client refused because the first copy landed): look before failing.
            Err(e) => match self.landed(&purge_id, generation).await {
                super::commit::Landed::Yes => {}
                super::commit::Landed::No => return Err(e.into()),
                super::commit::Landed::Unknown => return Err(Error::outcome_unknown(&purge_id, generation).into()),
            },
        }
        if let Some(w) = &self.watermark {
            w.raise(Mark { generation, commit: Some(purge_id) })?;
        }
        report.generation = generation;

        // 5. Delete what only the old commits reached, fenced against writers on the new head.
        graph.reach(new_roots, &mut new_ids);
        let (head, head_version) = self.mark_since(horizon, &mut graph, &mut new_ids).await?;
        let mut doomed: Vec<ObjectId> = old.iter().filter(|id| !new_ids.contains(*id)).copied().collect();
        doomed.sort();
        let old_commits: HashSet<ObjectId> = kept.iter().chain(&others).map(|(id, _)| *id).collect();
        let replaced: Vec<ObjectId> = doomed.iter().filter(|id| old_commits.contains(*id)).copied().collect();
        report.replaced_commits = replaced.len() as u64;
        let saved = self.save(&doomed).await?;
        progress.phase("deleting", None);
        let deleted = match self.delete_fenced(head, head_version, horizon, &mut graph, &mut new_ids, &saved).await {
            Ok(deleted) => deleted,
            Err(e) => {
                // Nothing may stay deleted that a writer might use: put everything back. A
                // later purge finds the old commits and deletes them.
                let all: HashSet<ObjectId> = saved.keys().copied().collect();
                self.put_back(&all, &saved).await?;
                return Err(e.into());
            }
        };
        report.deleted = deleted.len() as u64;
        report.deleted_bytes = deleted.iter().map(|id| listing.get(id).copied().unwrap_or(0)).sum();
        self.forget(&deleted);

        // 6. Compact and verify.
        if let Some(compacted) = self.compact(progress).await? {
            report.log_bytes_before = compacted.bytes_before;
            report.log_bytes_after = compacted.bytes_after;
        }
        let after = self.list_objects().await?;
        report.remaining = purge_set.iter().filter(|id| after.contains_key(*id)).count() as u64;
        report.remaining_commits = replaced.iter().filter(|id| after.contains_key(*id)).count() as u64;
        if report.remaining > 0 {
            let left: HashSet<ObjectId> = purge_set.iter().filter(|id| after.contains_key(*id)).copied().collect();
            report.stored_again = self.paths_holding(&left, &mut graph).await?;
        }
        Ok(report)
    }
}

/// Fills a dry run's report: what the new chain would not reach among what the old commits
/// reach is what step 5 would delete (writers aside, which the fence handles).
#[allow(clippy::too_many_arguments)]
fn dry_run(
    report: &mut PurgeReport,
    graph: &Graph,
    generation: u64,
    new_roots: Vec<ObjectId>,
    mut new_ids: HashSet<ObjectId>,
    old: &HashSet<ObjectId>,
    kept: &[(ObjectId, CommitObject)],
    others: &[(ObjectId, CommitObject)],
    listing: &HashMap<ObjectId, u64>,
) {
    graph.reach(new_roots, &mut new_ids);
    let doomed: Vec<&ObjectId> = old.iter().filter(|id| !new_ids.contains(*id)).collect();
    let old_commits: HashSet<&ObjectId> = kept.iter().chain(others).map(|(id, _)| id).collect();
    report.generation = generation;
    report.replaced_commits = doomed.iter().filter(|id| old_commits.contains(**id)).count() as u64;
    report.deleted = doomed.len() as u64;
    report.deleted_bytes = doomed.iter().map(|id| listing.get(*id).copied().unwrap_or(0)).sum();
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
