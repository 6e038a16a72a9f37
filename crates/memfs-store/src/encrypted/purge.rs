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
//! 3. **Rewrite** every kept commit, oldest first: its tree without the lineage's paths and
//!    without every file whose content is in S, wherever it is (copies, restores); its
//!    command replaced by `{"command":"purged"}` and its changes dropped when they name a
//!    removed path (a dropped change is replaced by what the rewritten trees say changed at a
//!    path that still holds something). Generation, time, actor and policy stay; the parent is
//!    the rewritten parent (the oldest kept commit keeps its parent link). Directories that
//!    do not change keep their ids, and so do the commits before the first that changes.
//! 4. **Commit** one more commit on the rewritten chain, `{"command":"purge",…}`, deleting the
//!    removed paths from the live tree, and swap the head to it by compare-and-swap against
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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::{Change, Dir, DirRef, FileRef, MemoryPath, Name, Node, ObjectId, Totals, normalized};
use memfs_crypt::{AddressKey, ObjectKind};
use object_store::{ObjectStoreExt, PutMode};
use serde_json::Value;

use super::{EncryptedRepository, now_ms, object_path};
use crate::error::Error;
use crate::format::{self, CommitObject, HeadObject, Page};
use crate::head::HeadVersion;
use crate::pages;
use crate::progress::Progress;
use crate::repository::Head;

/// How many objects are read, written or deleted at once.
const PARALLEL: usize = 16;

/// How many times the fence after the deletion is tried before the purge puts everything
/// back and reports the deletion undone.
const FENCE_ATTEMPTS: u32 = 32;

/// The command recorded in place of one that named a purged path.
const PURGED: &str = r#"{"command":"purged"}"#;

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
    /// What the purge commit deleted from the live tree: the path (if it was there) and every
    /// other path that held the same content, or the path's content after a rename.
    pub removed: Vec<String>,
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

        // 3. Rewrite the kept commits, oldest first.
        progress.phase("rewriting", Some(kept.len() as u64));
        let mut rewrite =
            Rewrite { purge: &purge_set, key: &self.keys.tree_address, memo: HashMap::new(), new: Vec::new() };
        let mut report = PurgeReport {
            path: path.normalized(),
            versions: purge_set.len() as u64,
            commits: kept.len() as u64,
            unreachable_commits: others.len() as u64,
            ..PurgeReport::default()
        };
        let mut writes: Vec<(ObjectKind, ObjectId, Vec<u8>)> = Vec::new();
        let mut new_ids: HashSet<ObjectId> = HashSet::new();
        let mut new_roots = Vec::with_capacity(kept.len());
        let mut renamed: HashMap<String, String> = HashMap::new();
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
                true => PURGED.to_owned(),
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
                };
                let plain = serde_json::to_vec(&commit).expect("a commit serializes");
                let id = self.keys.tree_address.address(&plain);
                writes.push((ObjectKind::Commit, id, plain));
                id
            };
            if id != *oid {
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
            command: serde_json::json!({"command": "purge", "path": path.normalized(), "versions": purge_set.len()})
                .to_string(),
            changes: report.removed.iter().map(|p| Change::Deleted { path: p.clone() }).collect(),
            files: newest.1.files,
            bytes: newest.1.bytes,
            policy: anchor.policy,
        };
        let plain = serde_json::to_vec(&commit).expect("a commit serializes");
        let purge_id = self.keys.tree_address.address(&plain);
        writes.push((ObjectKind::Commit, purge_id, plain));
        new_ids.insert(purge_id);
        writes.extend(rewrite.new.into_iter().map(|(id, plain)| (ObjectKind::Dir, id, plain)));
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
        let head = self.seal_head(&HeadObject { generation, commit: purge_id })?;
        match self.head.swap(version, head).await {
            Ok(()) => {}
            Err(Error::Conflict) => return Err(Error::Conflict.into()),
            // It may have landed all the same (a timeout after the write): look before failing.
            Err(e) => {
                if !self.head_names(&purge_id).await {
                    return Err(e.into());
                }
            }
        }
        if let Some(w) = &self.watermark {
            w.raise(generation)?;
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
        let saved = self.read_sealed(&doomed).await?;
        progress.phase("deleting", None);
        let deleted = match self.delete_fenced(head, head_version, horizon, &mut graph, &mut new_ids, &saved).await {
            Ok(deleted) => deleted,
            Err(e) => {
                // Nothing may stay deleted that a writer might use: put everything back. A
                // later purge finds the old commits and deletes them.
                let all: HashSet<ObjectId> = saved.keys().copied().collect();
                self.put_sealed(&all, &saved).await?;
                return Err(e.into());
            }
        };
        report.deleted = deleted.len() as u64;
        report.deleted_bytes = deleted.iter().map(|id| listing.get(id).copied().unwrap_or(0)).sum();
        self.forget(&deleted);

        // 6. Compact and verify.
        if let Some(log) = &self.log {
            progress.phase("compacting", None);
            let compacted = log
                .compact()
                .await
                .map_err(|e| Error::backend("compact", &object_store::path::Path::from("log"), e))?;
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

    /// Reads every directory page below `roots` into `graph` (pages it holds already are not
    /// read again). `strict`: a page that cannot be read is an error; otherwise it is skipped
    /// (the trees of unreachable commits may be partly deleted).
    async fn read_trees(
        &self,
        roots: Vec<ObjectId>,
        strict: bool,
        graph: &mut Graph,
        progress: &dyn Progress,
    ) -> Result<(), Error> {
        progress.phase("directories", None);
        let mut level = roots;
        while !level.is_empty() {
            level.sort();
            level.dedup();
            level.retain(|id| graph.tried.insert(*id));
            progress.extend(level.len() as u64);
            let read: Vec<(ObjectId, Result<Page, Error>)> = stream::iter(level)
                .map(|id| async move {
                    let page = self.get_object(ObjectKind::Dir, &id).await.and_then(|p| format::decode_page(&p, &id));
                    (id, page)
                })
                .buffered(PARALLEL)
                .collect()
                .await;
            progress.advance(read.len() as u64);
            let mut next = Vec::new();
            for (id, page) in read {
                let page = match page {
                    Ok(page) => page,
                    Err(e) if strict => return Err(e),
                    Err(_) => continue,
                };
                match &page {
                    Page::Index(pages) => next.extend(pages),
                    Page::Leaf(entries) => next.extend(entries.iter().filter_map(|(_, n)| match n {
                        Node::Dir(d) => d.id(),
                        Node::File(_) => None,
                    })),
                }
                graph.pages.insert(id, page);
            }
            level = next;
        }
        Ok(())
    }

    /// The stored commits that are not in `known`: every listed object outside it is opened as
    /// a commit, and those that open are returned.
    async fn other_commits(
        &self,
        listing: &HashMap<ObjectId, u64>,
        known: &HashSet<ObjectId>,
        progress: &dyn Progress,
    ) -> Result<Vec<(ObjectId, CommitObject)>, Error> {
        let mut candidates: Vec<ObjectId> = listing.keys().filter(|id| !known.contains(*id)).copied().collect();
        candidates.sort();
        progress.phase("unreachable", Some(candidates.len() as u64));
        let found: Vec<Option<(ObjectId, CommitObject)>> = stream::iter(candidates)
            .map(|id| async move {
                // Another kind does not open as a commit (the kind is bound in the seal), and an
                // object deleted meanwhile is no longer there to purge.
                let commit = match self.get_object(ObjectKind::Commit, &id).await {
                    Ok(plain) => serde_json::from_slice::<CommitObject>(&plain).ok().map(|c| (id, c)),
                    Err(_) => None,
                };
                progress.advance(1);
                commit
            })
            .buffered(PARALLEL)
            .collect()
            .await;
        Ok(found.into_iter().flatten().collect())
    }

    /// Reads the head and marks the commits made since the last mark (back to the first one
    /// already marked): their policies and every object of their trees.
    async fn mark_since(
        &self,
        horizon: u64,
        graph: &mut Graph,
        marked: &mut HashSet<ObjectId>,
    ) -> Result<(HeadObject, HeadVersion), Error> {
        let Some((head, version)) = self.read_head().await? else {
            return Err(Error::Corrupt { object: "head".into(), reason: "it disappeared during purge".into() });
        };
        let mut walk = self.walk(Some(head.commit), head.generation, horizon);
        let mut roots = Vec::new();
        while let Some(c) = walk.next().await? {
            if !marked.insert(c.oid) {
                break;
            }
            marked.extend(c.policy);
            roots.push(c.root);
        }
        self.read_trees(roots.clone(), true, graph, &()).await?;
        graph.reach(roots, marked);
        Ok((head, version))
    }

    /// The paths of the head's tree whose content is in `ids`, in tree order.
    async fn paths_holding(&self, ids: &HashSet<ObjectId>, graph: &mut Graph) -> Result<Vec<String>, Error> {
        let Some((head, _)) = self.read_head().await? else { return Ok(Vec::new()) };
        let root = self.commit_object(&head.commit).await?.tree;
        self.read_trees(vec![root], true, graph, &()).await?;
        let mut out = Vec::new();
        let mut stack = vec![(Vec::new(), root)];
        while let Some((prefix, id)) = stack.pop() {
            let Some(dir) = graph.dir(&id) else { continue };
            for (name, node) in dir.entries() {
                let path = [&prefix[..], std::slice::from_ref(name)].concat();
                match node {
                    Node::File(f) if ids.contains(&f.id) => out.push(normalized(&path)),
                    Node::File(_) => {}
                    Node::Dir(d) => stack.extend(d.id().map(|id| (path, id))),
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The sealed bytes of objects about to be deleted (those already gone are skipped).
    async fn read_sealed(&self, ids: &[ObjectId]) -> Result<HashMap<ObjectId, Bytes>, Error> {
        let fetched: Vec<Option<(ObjectId, Bytes)>> = stream::iter(ids)
            .map(|id| async move {
                let path = object_path(id);
                match self.store.get(&path).await {
                    Ok(r) => r.bytes().await.map(|b| Some((*id, b))).map_err(|e| Error::backend("read", &path, e)),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(Error::backend("read", &path, e)),
                }
            })
            .buffered(PARALLEL)
            .try_collect()
            .await?;
        Ok(fetched.into_iter().flatten().collect())
    }

    /// Deletes the saved objects no marked commit uses, then re-seals the head by
    /// compare-and-swap against `version`: a writer that read the head before that and reused
    /// a deleted object fails its own swap. If a writer committed first, puts everything back,
    /// marks its commits, deletes again and tries again. Returns the objects left deleted
    /// (none if writers kept winning: everything is back then).
    async fn delete_fenced(
        &self,
        mut head: HeadObject,
        mut version: HeadVersion,
        horizon: u64,
        graph: &mut Graph,
        marked: &mut HashSet<ObjectId>,
        saved: &HashMap<ObjectId, Bytes>,
    ) -> Result<HashSet<ObjectId>, Error> {
        let mut deleted: HashSet<ObjectId> = saved.keys().filter(|id| !marked.contains(*id)).copied().collect();
        self.remove_objects(&deleted).await?;
        for _ in 0..FENCE_ATTEMPTS {
            match self.head.swap(&version, self.seal_head(&head)?).await {
                Ok(()) => return Ok(deleted),
                Err(Error::Conflict) => {}
                Err(e) => return Err(e),
            }
            self.put_sealed(&deleted, saved).await?;
            (head, version) = self.mark_since(horizon, graph, marked).await?;
            deleted = saved.keys().filter(|id| !marked.contains(*id)).copied().collect();
            self.remove_objects(&deleted).await?;
        }
        self.put_sealed(&deleted, saved).await?;
        Ok(HashSet::new())
    }

    async fn remove_objects(&self, ids: &HashSet<ObjectId>) -> Result<(), Error> {
        let mut ids: Vec<ObjectId> = ids.iter().copied().collect();
        ids.sort();
        stream::iter(ids)
            .map(|id| async move {
                let path = object_path(&id);
                match self.store.delete(&path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(Error::backend("delete", &path, e)),
                }
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    /// Writes the saved sealed bytes of `ids` back (objects still present are left alone).
    async fn put_sealed(&self, ids: &HashSet<ObjectId>, saved: &HashMap<ObjectId, Bytes>) -> Result<(), Error> {
        stream::iter(ids.iter().filter_map(|id| saved.get(id).map(|b| (id, b))))
            .map(|(id, bytes)| async move {
                let path = object_path(id);
                match self.store.put_opts(&path, bytes.clone().into(), PutMode::Create.into()).await {
                    Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
                    Err(e) => Err(Error::backend("write", &path, e)),
                }
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    /// Drops deleted objects from this client's cache.
    fn forget(&self, ids: &HashSet<ObjectId>) {
        let mut cache = self.cache();
        for id in ids {
            cache.dirs.remove(id);
            cache.pages.remove(id);
            cache.commits.remove(id);
            cache.policies.remove(id);
            if let Some(blob) = cache.blobs.remove(id) {
                cache.blob_bytes = cache.blob_bytes.saturating_sub(blob.len());
            }
        }
    }
}

/// Moves the lineage along one change: a rename takes every lineage path at or below its
/// source (and, when it moves something out of a lineage directory, its destination) along;
/// a deletion ends the lineage paths at or below it. The purged path itself always stays.
fn follow(lineage: &mut Vec<Vec<Name>>, target: &[Name], change: &Change) {
    match change {
        Change::Renamed { from, to } => {
            let (Some(from), Some(to)) = (components(from), components(to)) else { return };
            let mut moved = Vec::new();
            for t in lineage.iter() {
                if t.starts_with(&from) {
                    moved.push([&to[..], &t[from.len()..]].concat());
                } else if from.starts_with(t) {
                    moved.push(to.clone());
                }
            }
            lineage.retain(|t| t == target || !t.starts_with(&from));
            lineage.extend(moved);
        }
        Change::Deleted { path } => {
            let Some(path) = components(path) else { return };
            lineage.retain(|t| t == target || !t.starts_with(&path));
        }
        Change::Created { .. } | Change::Modified { .. } => {}
    }
    lineage.sort();
    lineage.dedup();
}

fn components(path: &str) -> Option<Vec<Name>> {
    MemoryPath::parse(path).ok().map(|p| p.components().to_vec())
}

fn change_paths(change: &Change) -> Vec<&str> {
    match change {
        Change::Created { path } | Change::Modified { path } | Change::Deleted { path } => vec![path],
        Change::Renamed { from, to } => vec![from, to],
    }
}

/// A restore or undo command names the commit it came from: point it at its rewritten id.
fn follow_commit_ids(command: &str, renamed: &HashMap<String, String>) -> String {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(command) else { return command.to_owned() };
    match map.get("commit").and_then(Value::as_str).and_then(|old| renamed.get(old).map(|new| (old, new))) {
        Some((old, new)) => command.replace(old, new),
        None => command.to_owned(),
    }
}

/// What decides whether a commit's record names a purged path.
struct Context<'a> {
    /// The lineage before and after the commit.
    before: &'a [Vec<Name>],
    after: &'a [Vec<Name>],
    purge: &'a HashSet<ObjectId>,
    /// The old trees before and after the commit (`None` before: unknown, or empty).
    old: (Option<ObjectId>, ObjectId),
}

impl Context<'_> {
    fn on_lineage(&self, path: &[Name]) -> bool {
        self.before.iter().chain(self.after).any(|t| path.starts_with(t))
    }

    /// Whether `path` is on the lineage, or held a purged content before or after the commit.
    fn names(&self, graph: &mut Graph, path: &[Name]) -> bool {
        let purged = |f: Option<FileRef>| f.is_some_and(|f| self.purge.contains(&f.id));
        self.on_lineage(path)
            || purged(graph.file_at(self.old.0, path))
            || purged(graph.file_at(Some(self.old.1), path))
    }

    /// Whether a command names a purged path in one of its fields, or spells a lineage path
    /// anywhere (a command that is not JSON, a path quoted in a text).
    fn names_in_command(&self, graph: &mut Graph, command: &str, target: &MemoryPath) -> bool {
        // Followed by the end, a quote, a separator, a space or an escape: not a longer name.
        let spelled = |t: &[Name]| {
            let t = normalized(t);
            command.match_indices(&t).any(|(at, _)| {
                command[at + t.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| matches!(c, '"' | '/' | '\\') || c.is_whitespace())
            })
        };
        if spelled(target.components()) || self.before.iter().chain(self.after).any(|t| spelled(t)) {
            return true;
        }
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(command) else { return false };
        map.values().filter_map(Value::as_str).filter_map(components).any(|p| self.names(graph, &p))
    }
}

/// A commit's changes without those that name a purged path, or (when the tree before is
/// known) that the rewritten trees `new` (before and after) no longer bear out, such as the
/// deletion of a directory that held only purged files. Each dropped change is replaced by
/// what the rewritten trees say changed at its paths, where they still hold something. Also
/// returns whether a change named a purged path.
fn rewrite_changes(
    graph: &mut Graph,
    context: &Context<'_>,
    changes: &[Change],
    new: Option<(Option<ObjectId>, ObjectId)>,
) -> (Vec<Change>, bool) {
    let mut out = Vec::with_capacity(changes.len());
    let mut named = false;
    for change in changes {
        let paths = change_paths(change);
        let names = paths.iter().filter_map(|p| components(p)).any(|p| context.names(graph, &p));
        let Some((before, after)) = new else {
            match names {
                true => named = true,
                false => out.push(change.clone()),
            }
            continue;
        };
        let mut holds =
            |root: Option<ObjectId>, path: &str| components(path).is_some_and(|p| graph.node_at(root, &p).is_some());
        let borne_out = match change {
            Change::Created { path } => holds(Some(after), path),
            Change::Modified { path } => holds(before, path) && holds(Some(after), path),
            Change::Deleted { path } => holds(before, path),
            Change::Renamed { from, to } => holds(before, from) && holds(Some(after), to),
        };
        if !names && borne_out {
            out.push(change.clone());
            continue;
        }
        named |= names;
        for (p, components) in paths.iter().filter_map(|p| Some((*p, components(p)?))) {
            if context.on_lineage(&components) || change_paths_of(&out).contains(&p) {
                continue;
            }
            let path = p.to_owned();
            match (graph.node_at(before, &components), graph.node_at(Some(after), &components)) {
                (None, Some(Node::File(_))) => out.push(Change::Created { path }),
                (Some(_), None) => out.push(Change::Deleted { path }),
                (Some(Node::File(a)), Some(Node::File(b))) if a.id != b.id => out.push(Change::Modified { path }),
                _ => {}
            }
        }
    }
    (out, named)
}

fn change_paths_of(changes: &[Change]) -> Vec<&str> {
    changes.iter().flat_map(change_paths).collect()
}

/// Directory pages read from the store or made by the rewrite, and directories assembled
/// from them.
#[derive(Default)]
struct Graph {
    pages: HashMap<ObjectId, Page>,
    /// Pages asked for (read or not).
    tried: HashSet<ObjectId>,
    dirs: HashMap<ObjectId, Arc<Dir>>,
}

impl Graph {
    /// The directory whose top page is `id`; `None` if one of its pages is not held.
    fn dir(&mut self, id: &ObjectId) -> Option<Arc<Dir>> {
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
            Page::Index(pages) => {
                for p in pages {
                    self.entries(p, out, depth + 1)?;
                }
            }
        }
        Some(())
    }

    /// The node at `path` (not empty) of the tree `root` (`None`: the empty tree).
    fn node_at(&mut self, root: Option<ObjectId>, path: &[Name]) -> Option<Node> {
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

    fn file_at(&mut self, root: Option<ObjectId>, path: &[Name]) -> Option<FileRef> {
        match self.node_at(root, path)? {
            Node::File(f) => Some(f),
            Node::Dir(_) => None,
        }
    }

    /// Every file content at or below `node` (what is held of it).
    fn files_below(&mut self, node: &Node, out: &mut HashSet<ObjectId>) {
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

    /// Adds every page and file content reachable from `roots` to `out` (stopping at what it
    /// holds already: equal ids, equal subtrees).
    fn reach(&self, roots: impl IntoIterator<Item = ObjectId>, out: &mut HashSet<ObjectId>) {
        let mut stack: Vec<ObjectId> = roots.into_iter().collect();
        while let Some(id) = stack.pop() {
            if !out.insert(id) {
                continue;
            }
            match self.pages.get(&id) {
                None => {}
                Some(Page::Index(pages)) => stack.extend(pages),
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
    fn removed(&mut self, old: ObjectId, new: ObjectId, prefix: &mut Vec<Name>, out: &mut Vec<String>) {
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

/// Rewrites directories without the purged contents and the lineage's paths.
struct Rewrite<'a> {
    purge: &'a HashSet<ObjectId>,
    key: &'a AddressKey,
    /// Directories with no lineage path below them, by old id.
    memo: HashMap<ObjectId, Rewritten>,
    /// Pages to write.
    new: Vec<(ObjectId, Vec<u8>)>,
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

impl Rewrite<'_> {
    /// A root directory: [`Rewrite::dir`], an emptied root staying as the empty directory.
    fn root(
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use memfs_core::Tree;
    use serde_json::json;

    use super::*;
    use crate::encrypted::history::tests::{mutate, run};
    use crate::repository::{CommitInfo, Repository};
    use crate::{Backend, CheckOptions, GcOptions, OpenOptions, Revision};

    fn at(path: &str) -> MemoryPath {
        MemoryPath::parse(path).unwrap()
    }

    fn create(path: &str, text: &str) -> Value {
        json!({"command": "create", "path": path, "file_text": text})
    }

    fn replace(path: &str, old: &str, new: &str) -> Value {
        json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
    }

    fn rename(from: &str, to: &str) -> Value {
        json!({"command": "rename", "old_path": from, "new_path": to})
    }

    /// Every file of a tree, `path → content`.
    async fn files(repo: &EncryptedRepository, tree: &Tree) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut stack = vec![(memfs_core::ROOT.to_owned(), tree.root().id().unwrap())];
        while let Some((path, id)) = stack.pop() {
            for (name, node) in repo.dir(&id).await.unwrap().entries() {
                let child = format!("{path}/{name}");
                match node {
                    Node::File(f) => {
                        let text = String::from_utf8(repo.blob(&f.id).await.unwrap().to_vec()).unwrap();
                        out.insert(child, text);
                    }
                    Node::Dir(d) => stack.push((child, d.id().unwrap())),
                }
            }
        }
        out
    }

    async fn files_at(repo: &EncryptedRepository, generation: u64) -> BTreeMap<String, String> {
        files(repo, &repo.tree_at(&Revision::Generation(generation)).await.unwrap()).await
    }

    fn tree(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    /// The log as `(generation, command, changes)`, newest first.
    async fn log(repo: &EncryptedRepository) -> Vec<(u64, String, Vec<String>)> {
        let line = |c: &Change| match c {
            Change::Created { path } => format!("A {path}"),
            Change::Modified { path } => format!("M {path}"),
            Change::Deleted { path } => format!("D {path}"),
            Change::Renamed { from, to } => format!("R {from} {to}"),
        };
        let log = repo.log(None, None).await.unwrap();
        log.into_iter().map(|c| (c.generation, c.command.clone(), c.changes.iter().map(line).collect())).collect()
    }

    fn entry(generation: u64, command: &str, changes: &[&str]) -> (u64, String, Vec<String>) {
        (generation, command.to_owned(), changes.iter().map(|c| c.to_string()).collect())
    }

    async fn purge(repo: &EncryptedRepository, path: &str) -> Result<PurgeReport, PurgeError> {
        let head = repo.head().await.unwrap();
        repo.purge(&head, &at(path), "eraser", &()).await
    }

    async fn assert_clean(repo: &EncryptedRepository) {
        let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        assert_eq!(report.unreferenced, 0);
    }

    /// The secret's texts, in the order the scenario writes them.
    const SECRET: [&str; 5] =
        ["secret one", "secret two", "secret two\nmore\n", "secret three\nmore\n", "secret again"];

    /// `secret.md` written, edited twice, renamed and edited again; an exact copy of its first
    /// version elsewhere; then made again at its old path; unrelated files between.
    async fn scenario(repo: &EncryptedRepository) {
        let secret = "/memories/secret.md";
        run(repo, create(secret, SECRET[0])).await; // 1
        run(repo, create("/memories/notes.md", "unrelated")).await; // 2
        run(repo, replace(secret, "one", "two")).await; // 3
        run(repo, json!({"command": "insert", "path": secret, "insert_line": 1, "insert_text": "more"})).await; // 4
        run(repo, rename(secret, "/memories/archive/old.md")).await; // 5
        run(repo, replace("/memories/archive/old.md", "two", "three")).await; // 6
        run(repo, create("/memories/copy.md", SECRET[0])).await; // 7
        run(repo, create("/memories/d/other.md", "keep me")).await; // 8
        run(repo, create(secret, SECRET[4])).await; // 9
    }

    /// Everything the scenario's purge of `/memories/secret.md` must leave, on any backend.
    async fn assert_purged(repo: &EncryptedRepository, report: &PurgeReport, deleted: &HashSet<ObjectId>) {
        let expected = PurgeReport {
            path: "/memories/secret.md".into(),
            generation: 10,
            removed: vec!["/memories/archive".into(), "/memories/copy.md".into(), "/memories/secret.md".into()],
            versions: 5,
            commits: 9,
            changed: 9,
            rewritten: 9,
            unreachable_commits: 0,
            replaced_commits: 9,
            deleted: deleted.len() as u64,
            deleted_bytes: report.deleted_bytes,
            log_bytes_before: report.log_bytes_before,
            log_bytes_after: report.log_bytes_after,
            remaining: 0,
            remaining_commits: 0,
            stored_again: Vec::new(),
        };
        assert_eq!(*report, expected);

        // No object that held a version remains.
        let listing = repo.list_objects().await.unwrap();
        for text in SECRET {
            let id = repo.address(text.as_bytes());
            assert!(deleted.contains(&id), "{text:?} was deleted");
            assert!(!listing.contains_key(&id), "{text:?} is gone");
        }

        // History: the same generations, times and actors; no trace of the file in any record
        // but the purge commit's, which names the path only.
        let purged = r#"{"command":"purged"}"#;
        let purge = r#"{"command":"purge","path":"/memories/secret.md","versions":5}"#;
        assert_eq!(
            log(repo).await,
            [
                entry(10, purge, &["D /memories/archive", "D /memories/copy.md", "D /memories/secret.md"]),
                entry(9, purged, &[]),
                entry(
                    8,
                    r#"{"command":"create","path":"/memories/d/other.md","file_text":"keep me"}"#,
                    &["A /memories/d/other.md"]
                ),
                entry(7, purged, &[]),
                entry(6, purged, &[]),
                entry(5, purged, &[]),
                entry(4, purged, &[]),
                entry(3, purged, &[]),
                entry(
                    2,
                    r#"{"command":"create","path":"/memories/notes.md","file_text":"unrelated"}"#,
                    &["A /memories/notes.md"]
                ),
                entry(1, purged, &[]),
            ]
        );
        let records = repo.log(None, None).await.unwrap();
        assert!(records.iter().all(|c| c.actor == if c.generation == 10 { "eraser" } else { "tester" }));
        for c in &records {
            let json = serde_json::to_string(c).unwrap();
            for word in ["secret", "archive", "copy.md"] {
                assert!(c.generation == 10 || !json.contains(word), "@{}: {json}", c.generation);
            }
            assert!(!json.contains("secret one") && !json.contains("more"), "@{}: {json}", c.generation);
        }

        // Trees: the unrelated files and their history are intact.
        let notes = ("/memories/notes.md", "unrelated");
        let other = ("/memories/d/other.md", "keep me");
        assert_eq!(files(repo, &repo.head().await.unwrap().tree).await, tree(&[other, notes]));
        assert_eq!(files_at(repo, 1).await, tree(&[]));
        for generation in 2..=7 {
            assert_eq!(files_at(repo, generation).await, tree(&[notes]), "@{generation}");
        }
        assert_eq!(files_at(repo, 8).await, tree(&[other, notes]));
        assert_eq!(files_at(repo, 9).await, tree(&[other, notes]));
        assert_clean(repo).await;
        assert_eq!(repo.check(CheckOptions::default(), &()).await.unwrap().commits, 10);
    }

    #[tokio::test]
    async fn purges_every_version_copy_and_rename_from_memory() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        scenario(&repo).await;
        // A writer that read the head before the purge, and prepared its change then.
        let stale = repo.head().await.unwrap();
        let m = mutate(&repo, &stale, create("/memories/late.md", "late")).await.unwrap();
        let before = repo.list_objects().await.unwrap();
        let report = purge(&repo, "/memories/secret.md").await.unwrap();
        let after = repo.list_objects().await.unwrap();
        let deleted: HashSet<ObjectId> = before.keys().filter(|id| !after.contains_key(*id)).copied().collect();
        assert_eq!(report.deleted_bytes, deleted.iter().map(|id| before[id]).sum::<u64>());
        assert_eq!((report.log_bytes_before, report.log_bytes_after), (0, 0));
        assert_purged(&repo, &report, &deleted).await;

        // That writer loses its race; so would one that read the old trees now (they are gone).
        assert!(matches!(repo.commit(&stale, &m, CommitInfo::default()).await, Err(Error::Conflict)));
        let err = mutate(&repo, &stale, create("/memories/late.md", "late")).await.unwrap_err();
        assert!(matches!(err, Error::MissingObject { .. }), "{err:?}");
        // One on the new head commits. A gc after finds nothing unreachable but what the loser
        // wrote after the purge (its directory pages and commit).
        run(&repo, create("/memories/late.md", "late")).await;
        let no_grace = GcOptions { grace_ms: 0, ..GcOptions::default() };
        let first = repo.gc(&no_grace, &()).await.unwrap();
        assert!(first.commits == 11 && first.deleted == 0 && first.pending > 0, "{first:?}");
        let second = repo.gc(&no_grace, &()).await.unwrap();
        assert_eq!((second.commits, second.pending, second.deleted), (11, 0, first.pending), "{second:?}");
        assert_clean(&repo).await;
    }

    #[tokio::test]
    async fn purges_a_local_folder_down_to_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let backend = || Backend::Local(dir.path().join("store"));
        let key = memfs_crypt::KeyFile::from_bytes([9; 32]);
        let repo = EncryptedRepository::init(
            backend(),
            |master, id| memfs_crypt::KeySlots::with_key_file(master, id, &key),
            OpenOptions::default(),
        )
        .await
        .unwrap();
        scenario(&repo).await;
        let names = |ids: &[ObjectId]| ids.iter().map(|id| id.to_hex()).collect::<Vec<_>>();
        let secret_names = names(&SECRET.map(|t| repo.address(t.as_bytes())));
        let segments = || {
            let mut bytes = Vec::new();
            for e in std::fs::read_dir(dir.path().join("store/log")).unwrap() {
                bytes.extend(std::fs::read(e.unwrap().path()).unwrap());
            }
            bytes
        };
        let contains = |haystack: &[u8], needle: &str| haystack.windows(needle.len()).any(|w| w == needle.as_bytes());
        let raw = segments();
        assert!(secret_names.iter().all(|n| contains(&raw, n)), "the log names every version before");

        let before = repo.list_objects().await.unwrap();
        let report = purge(&repo, "/memories/secret.md").await.unwrap();
        let after = repo.list_objects().await.unwrap();
        let deleted: HashSet<ObjectId> = before.keys().filter(|id| !after.contains_key(*id)).copied().collect();
        assert!(report.log_bytes_before > report.log_bytes_after && report.log_bytes_after > 0, "{report:?}");
        assert_purged(&repo, &report, &deleted).await;

        // The log's files no longer name any deleted object; every object left is named.
        let raw = segments();
        for id in &deleted {
            assert!(!contains(&raw, &id.to_hex()), "{id} is gone from the log's bytes");
        }
        assert!(after.keys().all(|id| contains(&raw, &id.to_hex())));

        // A new client (no caches) sees the same.
        let fresh =
            EncryptedRepository::open(backend(), &memfs_crypt::Credential::KeyFile(key), OpenOptions::default())
                .await
                .unwrap();
        assert_purged(&fresh, &report, &deleted).await;
    }

    /// A lost race that edited the file, and a cut history gc has not deleted yet, are stored
    /// commits outside the kept history: their versions are purged too.
    #[tokio::test]
    async fn purges_unreachable_commits_too() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, create("/memories/s.md", "first")).await; // 1, cut by gc below
        run(&repo, replace("/memories/s.md", "first", "second")).await; // 2
        run(&repo, create("/memories/keep.md", "keep")).await; // 3
        let gc = repo.gc(&GcOptions { keep_commits: Some(2), ..GcOptions::default() }, &()).await.unwrap();
        assert_eq!((gc.oldest, gc.newly_pending, gc.deleted), (2, 3, 0), "commit 1, its root, \"first\"");
        let stale = repo.head().await.unwrap();
        let m = mutate(&repo, &stale, replace("/memories/s.md", "second", "lost")).await.unwrap();
        run(&repo, create("/memories/winner.md", "w")).await; // 4
        assert!(matches!(repo.commit(&stale, &m, CommitInfo::default()).await, Err(Error::Conflict)));

        let report = purge(&repo, "/memories/s.md").await.unwrap();
        assert_eq!((report.versions, report.commits, report.unreachable_commits), (3, 3, 2));
        assert_eq!((report.changed, report.rewritten, report.replaced_commits), (3, 3, 5));
        assert_eq!(report.removed, ["/memories/s.md"]);
        let listing = repo.list_objects().await.unwrap();
        for text in ["first", "second", "lost"] {
            assert!(!listing.contains_key(&repo.address(text.as_bytes())), "{text}");
        }
        assert_eq!(
            files(&repo, &repo.head().await.unwrap().tree).await,
            tree(&[("/memories/keep.md", "keep"), ("/memories/winner.md", "w")])
        );
        assert_clean(&repo).await;
        // History still starts at gc's horizon, whose parent link names a deleted commit.
        assert_eq!(log(&repo).await.iter().map(|e| e.0).collect::<Vec<_>>(), [5, 4, 3, 2]);
        // gc's pending list named objects the purge deleted: the next gc drops them.
        let gc = repo.gc(&GcOptions { grace_ms: 0, ..GcOptions::default() }, &()).await.unwrap();
        assert_eq!((gc.deleted, gc.pending, gc.commits), (0, 0, 4));
    }

    /// A directory: every file below it, wherever a rename of the directory took them; an
    /// empty file on its lineage goes by its path, while the empty content, shared by an
    /// unrelated empty file, stays.
    #[tokio::test]
    async fn purges_a_directory_through_renames() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, create("/memories/p/a.md", "alpha")).await; // 1
        run(&repo, create("/memories/p/sub/b.md", "")).await; // 2
        run(&repo, create("/memories/empty.md", "")).await; // 3
        run(&repo, rename("/memories/p", "/memories/q")).await; // 4
        run(&repo, create("/memories/q/c.md", "gamma")).await; // 5
        run(&repo, rename("/memories/q/c.md", "/memories/c.md")).await; // 6

        let report = purge(&repo, "/memories/p").await.unwrap();
        assert_eq!(report.versions, 2, "alpha and gamma; not the empty content");
        assert_eq!(report.removed, ["/memories/c.md", "/memories/q"]);
        assert_eq!(files(&repo, &repo.head().await.unwrap().tree).await, tree(&[("/memories/empty.md", "")]));
        for generation in 3..=6 {
            assert_eq!(files_at(&repo, generation).await, tree(&[("/memories/empty.md", "")]), "@{generation}");
        }
        let purged = r#"{"command":"purged"}"#;
        let purge = r#"{"command":"purge","path":"/memories/p","versions":2}"#;
        assert_eq!(
            log(&repo).await,
            [
                entry(7, purge, &["D /memories/c.md", "D /memories/q"]),
                entry(6, purged, &[]),
                entry(5, purged, &[]),
                entry(4, purged, &[]),
                entry(
                    3,
                    r#"{"command":"create","path":"/memories/empty.md","file_text":""}"#,
                    &["A /memories/empty.md"]
                ),
                entry(2, purged, &[]),
                entry(1, purged, &[]),
            ]
        );
        let listing = repo.list_objects().await.unwrap();
        assert!(listing.contains_key(&repo.address(b"")));
        assert!(!listing.contains_key(&repo.address(b"alpha")) && !listing.contains_key(&repo.address(b"gamma")));
        assert_clean(&repo).await;
    }

    /// A copy edited away from the purged content stays, and its history says what the
    /// rewritten trees show; commits before the first change keep their ids.
    #[tokio::test]
    async fn a_copy_edited_later_stays_with_a_truthful_history() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, create("/memories/n.md", "note")).await; // 1
        run(&repo, create("/memories/s.md", "text")).await; // 2
        run(&repo, create("/memories/c.md", "text")).await; // 3
        run(&repo, replace("/memories/c.md", "text", "public")).await; // 4
        let first = repo.log(None, None).await.unwrap().pop().unwrap();

        let report = purge(&repo, "/memories/s.md").await.unwrap();
        assert_eq!((report.versions, report.changed, report.rewritten), (1, 3, 3));
        assert_eq!(report.removed, ["/memories/s.md"]);
        assert_eq!(
            log(&repo).await,
            [
                entry(5, r#"{"command":"purge","path":"/memories/s.md","versions":1}"#, &["D /memories/s.md"]),
                entry(4, r#"{"command":"purged"}"#, &["A /memories/c.md"]),
                entry(3, r#"{"command":"purged"}"#, &[]),
                entry(2, r#"{"command":"purged"}"#, &[]),
                entry(1, r#"{"command":"create","path":"/memories/n.md","file_text":"note"}"#, &["A /memories/n.md"]),
            ]
        );
        assert_eq!(repo.log(None, None).await.unwrap().pop().unwrap(), first);
        assert_eq!(files_at(&repo, 4).await, tree(&[("/memories/c.md", "public"), ("/memories/n.md", "note")]));
        assert_clean(&repo).await;
    }

    /// Policy commits keep their policy object; the policy in force stays.
    #[tokio::test]
    async fn keeps_the_policy() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, create("/memories/s.md", "secret")).await;
        let mut policy = memfs_core::Policy::default();
        policy.set("max-files", "7").unwrap();
        let head = repo.head().await.unwrap();
        let info = CommitInfo { actor: "admin".into(), command: r#"{"command":"policy"}"#.into(), changes: Vec::new() };
        repo.set_policy(&head, &policy, info).await.unwrap();
        run(&repo, create("/memories/t.md", "other")).await;

        let report = purge(&repo, "/memories/s.md").await.unwrap();
        assert_eq!((report.generation, report.changed, report.rewritten), (4, 3, 3));
        assert_eq!(*repo.head().await.unwrap().policy, policy);
        assert_eq!(
            log(&repo).await,
            [
                entry(4, r#"{"command":"purge","path":"/memories/s.md","versions":1}"#, &["D /memories/s.md"]),
                entry(3, r#"{"command":"create","path":"/memories/t.md","file_text":"other"}"#, &["A /memories/t.md"]),
                entry(2, r#"{"command":"policy"}"#, &[]),
                entry(1, r#"{"command":"purged"}"#, &[]),
            ]
        );
        assert_clean(&repo).await;
    }

    #[tokio::test]
    async fn refuses_the_root_and_paths_never_stored() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        let err = purge(&repo, "/memories/x.md").await.unwrap_err().to_string();
        assert_eq!(
            err,
            "nothing to purge: /memories/x.md is not in the tree, in its kept history or in any other stored commit"
        );
        run(&repo, create("/memories/a.md", "a")).await;
        let before = repo.list_objects().await.unwrap();
        for (path, message) in [
            ("/memories/", "cannot purge /memories itself: name a file or directory below it"),
            (
                "/memories/a.md/b",
                "nothing to purge: /memories/a.md/b is not in the tree, in its kept history or in any other stored commit",
            ),
            (
                "/memories/b.md",
                "nothing to purge: /memories/b.md is not in the tree, in its kept history or in any other stored commit",
            ),
        ] {
            assert_eq!(purge(&repo, path).await.unwrap_err().to_string(), message);
        }
        assert_eq!(repo.list_objects().await.unwrap(), before);
        assert_eq!(repo.head().await.unwrap().generation, 1);
    }

    #[tokio::test]
    async fn a_moved_head_is_a_conflict_that_changes_nothing() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, create("/memories/s.md", "secret")).await;
        let stale = repo.head().await.unwrap();
        run(&repo, create("/memories/t.md", "other")).await;
        let err = repo.purge(&stale, &at("/memories/s.md"), "", &()).await.unwrap_err();
        assert!(matches!(err, PurgeError::Store(Error::Conflict)), "{err:?}");
        assert!(repo.list_objects().await.unwrap().contains_key(&repo.address(b"secret")));
        assert_eq!(repo.head().await.unwrap().generation, 2);
        // Run again on the new head, it also removes what the lost attempt wrote.
        let report = purge(&repo, "/memories/s.md").await.unwrap();
        // The lost attempt's rewritten first commit and its purge commit.
        assert_eq!((report.generation, report.unreachable_commits, report.remaining), (3, 2, 0));
        assert_clean(&repo).await;
    }

    /// A writer on the new head commits, reusing an object the purge is deleting: the fence
    /// sees it and puts the object back.
    #[tokio::test]
    async fn the_fence_puts_back_what_a_writer_reused() {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, create("/memories/a.md", "zzz")).await;
        let (head, version) = repo.read_head().await.unwrap().unwrap();
        let mut marked: HashSet<ObjectId> = HashSet::new();
        run(&repo, create("/memories/again.md", "zzz")).await;
        let id = repo.address(b"zzz");
        let saved = repo.read_sealed(&[id]).await.unwrap();
        let mut graph = Graph::default();
        let deleted = repo.delete_fenced(head, version, 0, &mut graph, &mut marked, &saved).await.unwrap();
        assert!(deleted.is_empty());
        assert!(marked.contains(&id));
        assert_clean(&repo).await;
    }

    /// Runs a command as the engine does: again on a lost race, or after finding an object
    /// missing (the purge deletes what an old head's trees hold). A tool error (a file the
    /// purge took away) commits nothing.
    async fn run_retrying(repo: &EncryptedRepository, input: Value) {
        let command = memfs_core::Command::from_input(&input).unwrap();
        let mut missing = 0;
        loop {
            let attempt = async {
                let head = repo.head().await?;
                let (mut dirs, mut blobs) = (HashMap::new(), HashMap::new());
                struct Fetched<'a>(
                    &'a EncryptedRepository,
                    &'a HashMap<ObjectId, Arc<Dir>>,
                    &'a HashMap<ObjectId, Arc<[u8]>>,
                );
                impl memfs_core::Resolver for Fetched<'_> {
                    fn dir(&self, id: &ObjectId) -> Option<Arc<Dir>> {
                        self.1.get(id).cloned()
                    }
                    fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>> {
                        self.2.get(id).cloned()
                    }
                    fn address(&self, content: &[u8]) -> ObjectId {
                        self.0.address(content)
                    }
                }
                let outcome = loop {
                    match memfs_core::execute(
                        &command,
                        &head.tree,
                        memfs_core::Dialect::Spec,
                        &Fetched(repo, &dirs, &blobs),
                    ) {
                        Ok(outcome) => break outcome,
                        Err(memfs_core::Need::Dir(id)) => drop(dirs.insert(id, repo.dir(&id).await?)),
                        Err(memfs_core::Need::Blob(id)) => drop(blobs.insert(id, repo.blob(&id).await?)),
                    }
                };
                let Some(m) = outcome.mutation else { return Ok(()) };
                let info =
                    CommitInfo { actor: "writer".into(), command: input.to_string(), changes: m.changes.clone() };
                repo.commit(&head, &m, info).await.map(drop)
            };
            match attempt.await {
                Ok(()) => return,
                Err(Error::Conflict) => tokio::task::yield_now().await,
                Err(Error::MissingObject { .. }) if missing < 50 => {
                    missing += 1;
                    tokio::task::yield_now().await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Writers keep storing the purged content again at other paths, and deleting it, while
    /// purges run: every purge either loses its race or lands, and whatever interleaving
    /// happens, no object a commit uses is lost. A last purge, alone, leaves none of it.
    /// (The narrow window of a writer reusing an object being deleted is rarely hit here;
    /// `a_writer_reusing_a_doomed_object_keeps_it` makes it happen.) The writers pause
    /// between commands: a purge reads all history, and under back-to-back commits it would
    /// keep losing its race.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn purges_while_writers_run_lose_nothing() {
        use std::sync::atomic::{AtomicU32, Ordering};
        const LANDINGS: u32 = 2;
        let repo = Arc::new(EncryptedRepository::ephemeral().unwrap());
        run(&repo, create("/memories/keep.md", "keep")).await;
        let landed = Arc::new(AtomicU32::new(0));
        let writers: Vec<_> = (0..3)
            .map(|w| {
                let (repo, landed) = (repo.clone(), landed.clone());
                tokio::spawn(async move {
                    // Until the purges are done (bounded, should they never land).
                    for i in 0..100 {
                        if landed.load(Ordering::SeqCst) >= LANDINGS {
                            break;
                        }
                        let path = format!("/memories/w{w}/{i}.txt");
                        let text = if i % 2 == 0 { "secret" } else { "public" };
                        run_retrying(&repo, create(&path, text)).await;
                        tokio::time::sleep(std::time::Duration::from_millis(15)).await;
                        run_retrying(&repo, json!({"command": "delete", "path": path})).await;
                        tokio::time::sleep(std::time::Duration::from_millis(15)).await;
                    }
                })
            })
            .collect();
        while landed.load(Ordering::SeqCst) < LANDINGS && !writers.iter().all(|w| w.is_finished()) {
            run_retrying(&repo, create("/memories/s.md", "secret")).await;
            loop {
                match purge(&repo, "/memories/s.md").await {
                    Ok(_) => {
                        landed.fetch_add(1, Ordering::SeqCst);
                        break;
                    }
                    Err(PurgeError::Store(Error::Conflict | Error::MissingObject { .. })) => {}
                    Err(e) => panic!("purge failed: {e}"),
                }
            }
            let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
            assert!(report.problems.is_empty(), "{:?}", report.problems);
        }
        for w in writers {
            w.await.unwrap();
        }
        assert_eq!(landed.load(Ordering::SeqCst), LANDINGS, "purges landed while the writers ran");
        // Alone, a purge leaves nothing of the content: the writers' copies, made after the
        // last purge, go as copies.
        run(&repo, create("/memories/s.md", "secret")).await;
        let report = purge(&repo, "/memories/s.md").await.unwrap();
        assert_eq!((report.remaining, report.remaining_commits), (0, 0));
        assert!(!repo.list_objects().await.unwrap().contains_key(&repo.address(b"secret")));
        assert_eq!(files(&repo, &repo.head().await.unwrap().tree).await, tree(&[("/memories/keep.md", "keep")]));
        assert_clean(&repo).await;
    }

    /// An object store that, before its first deletion, lets a writer commit through the
    /// repository built on it (holding every deletion back until that commit is in).
    #[derive(Debug)]
    struct WriterAtFirstDelete {
        inner: object_store::memory::InMemory,
        repo: std::sync::OnceLock<std::sync::Weak<EncryptedRepository>>,
        gate: Arc<tokio::sync::Mutex<bool>>,
    }

    impl std::fmt::Display for WriterAtFirstDelete {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "WriterAtFirstDelete({})", self.inner)
        }
    }

    #[async_trait::async_trait]
    impl object_store::ObjectStore for WriterAtFirstDelete {
        async fn put_opts(
            &self,
            location: &object_store::path::Path,
            payload: object_store::PutPayload,
            opts: object_store::PutOptions,
        ) -> object_store::Result<object_store::PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &object_store::path::Path,
            opts: object_store::PutMultipartOptions,
        ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &object_store::path::Path,
            options: object_store::GetOptions,
        ) -> object_store::Result<object_store::GetResult> {
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>> {
            let (gate, repo, inner) = (self.gate.clone(), self.repo.get().cloned(), self.inner.clone());
            locations
                .then(move |location| {
                    let (gate, repo, inner) = (gate.clone(), repo.clone(), inner.clone());
                    async move {
                        let mut fired = gate.lock().await;
                        if !*fired {
                            *fired = true;
                            let repo = repo.and_then(|r| r.upgrade()).expect("the repository");
                            run(&repo, create("/memories/w.md", "secret")).await;
                        }
                        drop(fired);
                        let location = location?;
                        inner.delete(&location).await.map(|()| location)
                    }
                })
                .boxed()
        }
        fn list(
            &self,
            prefix: Option<&object_store::path::Path>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&object_store::path::Path>,
        ) -> object_store::Result<object_store::ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &object_store::path::Path,
            to: &object_store::path::Path,
            options: object_store::CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    /// A writer on the new head stores the purged content again just before the deletion
    /// starts, finding it still stored (so it does not write it): the fence sees its commit
    /// and keeps the object, which is the writer's now. The purge says where it is, and a
    /// purge of that path takes it.
    #[tokio::test]
    async fn a_writer_reusing_a_doomed_object_keeps_it() {
        let store = Arc::new(WriterAtFirstDelete {
            inner: object_store::memory::InMemory::new(),
            repo: std::sync::OnceLock::new(),
            gate: Arc::default(),
        });
        let key = memfs_crypt::KeyFile::from_bytes([3; 32]);
        let repo = EncryptedRepository::init(
            Backend::ObjectStore(store.clone()),
            |master, id| memfs_crypt::KeySlots::with_key_file(master, id, &key),
            OpenOptions::default(),
        )
        .await
        .unwrap();
        let repo = Arc::new(repo);
        store.repo.set(Arc::downgrade(&repo)).unwrap();
        run(&repo, create("/memories/s.md", "secret")).await;
        run(&repo, create("/memories/keep.md", "keep")).await;

        let report = purge(&repo, "/memories/s.md").await.unwrap();
        assert_eq!((report.generation, report.remaining, report.remaining_commits), (3, 1, 0));
        assert_eq!(report.stored_again, ["/memories/w.md"]);
        assert_eq!(
            files(&repo, &repo.head().await.unwrap().tree).await,
            tree(&[("/memories/keep.md", "keep"), ("/memories/w.md", "secret")])
        );
        assert_clean(&repo).await;

        let err = purge(&repo, "/memories/s.md").await.unwrap_err();
        assert!(matches!(err, PurgeError::NotFound { .. }), "{err:?}");
        let report = purge(&repo, "/memories/w.md").await.unwrap();
        assert_eq!((report.generation, report.remaining, report.removed), (5, 0, vec!["/memories/w.md".to_owned()]));
        assert!(!repo.list_objects().await.unwrap().contains_key(&repo.address(b"secret")));
        assert_clean(&repo).await;
    }

    #[test]
    fn the_lineage_follows_renames_and_ends_at_deletions() {
        let p = |s: &str| at(s).components().to_vec();
        let target = p("/memories/d/s.md");
        let mut lineage = vec![target.clone()];
        let steps = [
            (
                Change::Renamed { from: "/memories/d".into(), to: "/memories/e".into() },
                vec!["/memories/d/s.md", "/memories/e/s.md"],
            ),
            (
                Change::Renamed { from: "/memories/e/s.md".into(), to: "/memories/f.md".into() },
                vec!["/memories/d/s.md", "/memories/f.md"],
            ),
            (Change::Modified { path: "/memories/f.md".into() }, vec!["/memories/d/s.md", "/memories/f.md"]),
            (Change::Deleted { path: "/memories/f.md".into() }, vec!["/memories/d/s.md"]),
            (Change::Deleted { path: "/memories/d".into() }, vec!["/memories/d/s.md"]),
        ];
        for (change, expected) in steps {
            follow(&mut lineage, &target, &change);
            let got: Vec<String> = lineage.iter().map(|t| normalized(t)).collect();
            assert_eq!(got, expected, "after {change:?}");
        }
    }

    #[test]
    fn restore_commands_follow_rewritten_ids() {
        let (old, new) = ("a".repeat(64), "b".repeat(64));
        let renamed = HashMap::from([(old.clone(), new.clone())]);
        let command = format!(r#"{{"command":"undo","commit":"{old}","generation":3}}"#);
        assert_eq!(
            follow_commit_ids(&command, &renamed),
            format!(r#"{{"command":"undo","commit":"{new}","generation":3}}"#)
        );
        let other = format!(r#"{{"command":"undo","commit":"{}","generation":3}}"#, "c".repeat(64));
        assert_eq!(follow_commit_ids(&other, &renamed), other);
    }
}
