//! Garbage collection: retention, then deletion of unreachable objects in two phases.
//!
//! One run, at time T:
//!
//! 1. **Retention.** Walk the commits from the head back to the horizon recorded by earlier
//!    runs. A commit is kept if it is among the `keep_commits` newest or younger than
//!    `keep_days` (either keeps it; the head is always kept). The oldest kept commit becomes
//!    the new horizon (it never moves back): history stops there, and the commits before it
//!    become unreachable. Their ids stay in the kept commit's `parent` field, which is never
//!    rewritten (that would change every later commit's id); walks stop at the horizon. The
//!    cut commits (generation and id) join `gc.state`'s `cut` record, the newest
//!    [`format::CUT_RECORD`] kept, for rollback and fork detection.
//! 2. **Mark** every object reachable from the kept commits: the commits, every directory of
//!    their trees, every file content. Any read error stops gc before it deletes anything.
//! 3. **Sweep plan.** List `objects/`. An unreachable object that has been pending at least
//!    `grace` (since an earlier run recorded it, or since now for one first seen by this run:
//!    with a grace of zero, that is every unreachable object) is doomed; any other unreachable
//!    object is (still) pending, with the time it was first seen unreachable. A dry run
//!    ([`GcOptions::dry_run`]) stops here and reports the plan.
//! 4. **Record** the new horizon and pending list in `gc.state`, by compare-and-swap against
//!    the state read at the start: a concurrent gc makes this one stop before deleting.
//! 5. **Fence.** Re-seal the head unchanged and swap it in by compare-and-swap. A writer that
//!    read the head before the fence fails its own swap and runs its command again, writing
//!    its objects anew: it cannot commit a reference to a doomed object it found existing
//!    earlier. Commits made since the mark are marked, and what they use is spared.
//! 6. **Delete** the doomed objects, keeping their sealed bytes in memory, and **fence again**,
//!    for the writers that ran during the deletion. If this fence loses to a writer that
//!    committed meanwhile, gc puts every deleted object back (the same sealed bytes), marks
//!    that writer's commits, deletes again what is still unreachable, and fences again. A
//!    reader may meet such an object missing for that moment; the engine reads again.
//!
//! Why this is safe with writers running: a writer writes its objects, then swaps the head
//! within seconds; a brand-new object is at most newly pending when gc meets it, and is
//! reachable long before the grace period (default one hour) ends. The remaining case, a
//! writer reusing an existing object that is doomed, is what the fence covers. The fence
//! covers a brand-new object just as well (its writer's swap fails, and it writes it anew),
//! which is why a grace of zero may delete in the run that first sees an object unreachable:
//! the grace spares writers a retry; it is not what keeps their commits whole.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::{Node, ObjectId};
use memfs_crypt::ObjectKind;
use object_store::{ObjectStoreExt, PutMode};

use super::{EncryptedRepository, GC_STATE_PATH, PARALLEL, now_ms, object_path, open_error};
use crate::error::Error;
use crate::format::{self, CommitAt, GcStateObject, HeadObject};
use crate::head::HeadVersion;
use crate::progress::Progress;
use crate::settle::{self, Swapped};

/// How long an unreachable object waits before deletion unless told otherwise: one hour.
pub const DEFAULT_GRACE_MS: u64 = 60 * 60 * 1000;

/// How many times the fence is tried before gc gives up.
const FENCE_ATTEMPTS: u32 = 32;

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// What to keep and when to delete.
#[derive(Debug, Clone)]
pub struct GcOptions {
    /// Keep the commits made in the last N days (by the writers' clocks).
    pub keep_days: Option<u64>,
    /// Keep the N newest commits.
    pub keep_commits: Option<u64>,
    /// How long an object must have been pending (unreachable, as seen by an earlier run)
    /// before it is deleted, in milliseconds.
    pub grace_ms: u64,
    /// The time of this run, in milliseconds since the epoch.
    pub now_ms: u64,
    /// Plan only: the report says what this run would keep, delete and leave pending
    /// (`deleted` counts what it would delete); nothing is written or deleted.
    pub dry_run: bool,
}

impl Default for GcOptions {
    /// Keep all history; one hour of grace; now; not a dry run.
    fn default() -> Self {
        GcOptions { keep_days: None, keep_commits: None, grace_ms: DEFAULT_GRACE_MS, now_ms: now_ms(), dry_run: false }
    }
}

/// What a gc run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcReport {
    /// Commits kept (from the head back to the horizon).
    pub commits: u64,
    /// The newest generation (the head's); 0 for a store without commits.
    pub newest: u64,
    /// The oldest kept generation.
    pub oldest: u64,
    /// The oldest kept generation before this run (0: history was never cut).
    pub previous_horizon: u64,
    /// Objects reachable from the kept commits, and their stored bytes.
    pub reachable: u64,
    /// Stored bytes of the reachable objects.
    pub reachable_bytes: u64,
    /// Unreachable objects left pending (including the new ones).
    pub pending: u64,
    /// Stored bytes of the pending objects.
    pub pending_bytes: u64,
    /// Of the pending objects, those first seen unreachable by this run.
    pub newly_pending: u64,
    /// Objects deleted.
    pub deleted: u64,
    /// Stored bytes freed.
    pub deleted_bytes: u64,
    /// Deleted objects put back because a writer committed a reference to them meanwhile.
    pub recovered: u64,
    /// A local folder's log: its bytes before and after compaction (both 0 for other stores).
    pub log_bytes_before: u64,
    /// The log's bytes after compaction: only the records of live objects remain.
    pub log_bytes_after: u64,
}

impl EncryptedRepository {
    /// Runs one garbage collection; see the module documentation for the protocol.
    pub async fn gc(&self, options: &GcOptions, progress: &dyn Progress) -> Result<GcReport, Error> {
        let (old, state_version) = match self.read_gc_state().await? {
            Some((state, version)) => (state, Some(version)),
            None => (GcStateObject::default(), None),
        };
        let mut report = GcReport { previous_horizon: old.horizon, ..GcReport::default() };
        // Without a head there is nothing to keep, and no head to fence with: delete nothing.
        let Some((head, head_version)) = self.read_head().await? else { return Ok(report) };

        // 1. Retention.
        let (commits, horizon, cut) = self.retain(&head, &old, options, progress).await?;
        report.commits = commits.len() as u64;
        report.newest = head.generation;
        report.oldest = commits.last().map_or(0, |c| c.generation);

        // 2. Mark.
        let mut marked: HashSet<ObjectId> = commits.iter().map(|c| c.oid).collect();
        marked.extend(commits.iter().filter_map(|c| c.policy));
        self.mark_trees(commits.iter().map(|c| c.root).collect(), &mut marked, progress).await?;

        // 3. Sweep plan.
        let (pending, doomed) = self.sweep_plan(&old, &marked, options, &mut report).await?;
        if options.dry_run {
            // What this run would delete; nothing is recorded, fenced or deleted.
            report.deleted = doomed.len() as u64;
            report.deleted_bytes = doomed.iter().map(|(_, size)| size).sum();
            return Ok(report);
        }

        // 4. Record. The doomed objects' bytes first, to put back any a racing writer uses.
        let ids: Vec<ObjectId> = doomed.iter().map(|(id, _)| *id).collect();
        let saved = self.save(&ids).await?;
        self.write_gc_state(state_version.as_ref(), &GcStateObject { horizon, pending, cut }).await?;

        if saved.is_empty() {
            self.compact_log(&mut report, progress).await?;
            return Ok(report);
        }

        // 5. Fence, so that only writers that start during the deletion itself can reuse a
        // doomed object; what the commits made since the mark use is kept.
        let (head, head_version) = self.fence_before(head, head_version, horizon, &mut marked).await?;
        let saved: HashMap<ObjectId, Bytes> = saved.into_iter().filter(|(id, _)| !marked.contains(id)).collect();

        // 6. Delete, then fence again, even after a failed deletion (some objects may be gone).
        progress.phase("deleting", Some(saved.len() as u64));
        let deletion = self.delete_objects(saved.keys().copied().collect(), progress).await;
        let deleted = self.fence(head, head_version, horizon, &mut marked, &saved).await?;
        deletion?;
        let size_of: HashMap<ObjectId, u64> = doomed.into_iter().collect();
        report.deleted = deleted.len() as u64;
        report.deleted_bytes = deleted.iter().map(|id| size_of.get(id).copied().unwrap_or(0)).sum();
        report.recovered = (saved.len() - deleted.len()) as u64;
        self.compact_log(&mut report, progress).await?;
        Ok(report)
    }

    /// Step 1, retention: the commits kept (newest first), the new horizon and the record of
    /// cut commits.
    async fn retain(
        &self,
        head: &HeadObject,
        old: &GcStateObject,
        options: &GcOptions,
        progress: &dyn Progress,
    ) -> Result<(Vec<super::CommitRecord>, u64, Vec<CommitAt>), Error> {
        progress.phase("commits", Some(head.generation.saturating_sub(old.horizon.max(1)) + 1));
        let mut commits = Vec::new();
        let mut walk = self.walk(Some(head.commit), head.generation, old.horizon);
        while let Some(c) = walk.next().await? {
            commits.push(c);
            progress.advance(1);
        }
        let horizon = retention(&commits, options).max(old.horizon);
        // The commits cut now join the record of cut commits (newest kept), so that a client
        // that remembers one of them still verifies the head (docs/SECURITY.md).
        let mut cut = old.cut.clone();
        cut.extend(
            commits
                .iter()
                .filter(|c| c.generation < horizon)
                .map(|c| CommitAt { generation: c.generation, commit: c.oid }),
        );
        cut.sort_by_key(|c| std::cmp::Reverse(c.generation));
        cut.dedup_by_key(|c| c.generation);
        cut.truncate(format::CUT_RECORD);
        commits.retain(|c| c.generation >= horizon);
        Ok((commits, horizon, cut))
    }

    /// Step 3, the sweep plan: of the stored objects not `marked`, those pending (with the
    /// time each was first seen) and those doomed (pending past the grace), sorted; the
    /// counts in `report`.
    async fn sweep_plan(
        &self,
        old: &GcStateObject,
        marked: &HashSet<ObjectId>,
        options: &GcOptions,
        report: &mut GcReport,
    ) -> Result<(BTreeMap<String, u64>, Vec<(ObjectId, u64)>), Error> {
        let listing = self.objects.list().await?;
        let mut pending = BTreeMap::new();
        let mut doomed = Vec::new();
        for (id, size) in &listing {
            if marked.contains(id) {
                report.reachable += 1;
                report.reachable_bytes += size;
                continue;
            }
            let hex = id.to_hex();
            // An object first seen now has been pending for no time: with a grace of zero it
            // is doomed in this run. That is as safe as a longer grace: the grace only spares
            // a writer's new objects the fence below, and the fence alone is what keeps every
            // writer from committing a reference to a deleted object (purge deletes
            // without a grace on the same fence). A writer that wrote an object gc dooms
            // either commits before the fence (the fence loses, marks its commit and spares
            // the object) or after it (its swap fails, and it runs again, writing the object
            // anew, or committing before the second fence, which puts everything back).
            let since = old.pending.get(&hex).copied();
            if options.now_ms.saturating_sub(since.unwrap_or(options.now_ms)) >= options.grace_ms {
                doomed.push((*id, *size));
            } else {
                report.newly_pending += u64::from(since.is_none());
                report.pending += 1;
                report.pending_bytes += size;
                pending.insert(hex, since.unwrap_or(options.now_ms));
            }
        }
        doomed.sort();
        Ok((pending, doomed))
    }

    /// A local folder's log keeps deleted objects and replaced heads until it is compacted:
    /// rewrite it with the live records only.
    async fn compact_log(&self, report: &mut GcReport, progress: &dyn Progress) -> Result<(), Error> {
        let Some(compacted) = self.objects.compact(progress).await? else { return Ok(()) };
        report.log_bytes_before = compacted.bytes_before;
        report.log_bytes_after = compacted.bytes_after;
        Ok(())
    }

    /// Marks every directory and file reachable from `roots` (skipping directories already
    /// marked: equal ids, equal subtrees).
    pub(super) async fn mark_trees(
        &self,
        roots: Vec<ObjectId>,
        marked: &mut HashSet<ObjectId>,
        progress: &dyn Progress,
    ) -> Result<(), Error> {
        progress.phase("directories", None);
        let mut level: Vec<ObjectId> = roots;
        while !level.is_empty() {
            level.retain(|id| marked.insert(*id));
            progress.extend(level.len() as u64);
            let dirs: Vec<_> = stream::iter(level.iter())
                .map(|id| async move {
                    let plain = self.get_object(ObjectKind::Dir, id).await?;
                    format::decode_page(&plain, id)
                })
                .buffered(PARALLEL)
                .try_collect()
                .await?;
            progress.advance(dirs.len() as u64);
            let mut next = Vec::new();
            for page in dirs {
                match page {
                    // The pages below: more of the same directory.
                    format::Page::Index(index) => next.extend(index.pages),
                    format::Page::Leaf(entries) => {
                        for (_, node) in entries {
                            match node {
                                Node::File(f) => {
                                    marked.insert(f.id);
                                }
                                Node::Dir(d) => next.push(d.id().expect("decoded directories are stored")),
                            }
                        }
                    }
                }
            }
            level = next;
        }
        Ok(())
    }

    /// The sealed bytes of objects about to be deleted (those already gone are skipped).
    /// Purge's fenced deletion uses it too.
    pub(super) async fn save(&self, ids: &[ObjectId]) -> Result<HashMap<ObjectId, Bytes>, Error> {
        let fetched: Vec<_> = stream::iter(ids.iter())
            .map(|id| async move {
                let path = object_path(id);
                match crate::whole_read::get_bytes(&*self.objects.store, &path).await {
                    Ok(bytes) => Ok(Some((*id, bytes))),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(Error::backend("read", &path, e)),
                }
            })
            .buffered(PARALLEL)
            .try_collect()
            .await?;
        Ok(fetched.into_iter().flatten().collect())
    }

    /// Deletes objects; returns those deleted (or already gone), or the first failure.
    /// Purge's fenced deletion uses it too.
    pub(super) async fn delete_objects(
        &self,
        mut ids: Vec<ObjectId>,
        progress: &dyn Progress,
    ) -> Result<Vec<ObjectId>, Error> {
        ids.sort();
        stream::iter(ids)
            .map(|id| async move {
                let path = object_path(&id);
                let r = match self.objects.store.delete(&path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                        // Not kept on disk either (a later fetch would fail all the same).
                        if let Some(disk) = &self.objects.disk {
                            disk.remove(&id);
                        }
                        Ok(id)
                    }
                    Err(e) => Err(Error::backend("delete", &path, e)),
                };
                progress.advance(1);
                r
            })
            .buffered(PARALLEL)
            .try_collect()
            .await
    }

    /// Swaps the head for an identical re-sealed copy, so that every writer that read it before
    /// must run again. On a lost race (a writer committed since the mark, perhaps using an
    /// object just deleted) it puts every deleted object back, marks the new commits, deletes
    /// again what is still unreachable, and fences again. Returns the objects left deleted.
    async fn fence(
        &self,
        head: HeadObject,
        version: HeadVersion,
        horizon: u64,
        marked: &mut HashSet<ObjectId>,
        saved: &HashMap<ObjectId, Bytes>,
    ) -> Result<HashSet<ObjectId>, Error> {
        let deleted = saved.keys().copied().collect();
        let remark = async |marked: &mut HashSet<ObjectId>| self.mark_new(horizon, marked).await;
        // Writers kept winning: give up safely. With everything put back, no commit can name a
        // deleted object; the unreachable ones stay pending for the next run.
        self.fence_deletion((head, version), deleted, marked, saved, remark)
            .await?
            .ok_or(Error::FenceFailed { attempts: FENCE_ATTEMPTS })
    }

    /// The fence after a deletion, gc's and purge's: re-seals the head by compare-and-swap
    /// against `version`, so that a writer that read the head before and reused a `deleted`
    /// object fails its own swap. If a writer committed first: puts everything back (so that
    /// the new commits can be read whatever they use), lets `remark` mark the new commits and
    /// return the new head, deletes again the saved objects still unmarked, and tries again.
    /// `Some` of the objects left deleted; `None` if writers won [`FENCE_ATTEMPTS`] times, and
    /// everything is back.
    pub(super) async fn fence_deletion(
        &self,
        (mut head, mut version): (HeadObject, HeadVersion),
        mut deleted: HashSet<ObjectId>,
        marked: &mut HashSet<ObjectId>,
        saved: &HashMap<ObjectId, Bytes>,
        mut remark: impl AsyncFnMut(&mut HashSet<ObjectId>) -> Result<(HeadObject, HeadVersion), Error>,
    ) -> Result<Option<HashSet<ObjectId>>, Error> {
        for _ in 0..FENCE_ATTEMPTS {
            match settle::swap_settled(&*self.heads.cell, Some(&version), self.seal_head(&head)?).await {
                Swapped::Landed => return Ok(Some(deleted)),
                Swapped::Not(Error::Conflict) => {}
                // Whether the fence is in is not known: a writer that read the head before
                // may still commit a deleted object. Nothing deleted stays deleted.
                Swapped::Not(e) | Swapped::Unknown(e) => {
                    self.put_back(&deleted, saved).await?;
                    return Err(e);
                }
            }
            self.put_back(&deleted, saved).await?;
            (head, version) = remark(marked).await?;
            deleted = saved.keys().filter(|id| !marked.contains(*id)).copied().collect();
            self.delete_objects(deleted.iter().copied().collect(), &()).await?;
        }
        self.put_back(&deleted, saved).await?;
        Ok(None)
    }

    /// Writes the saved sealed bytes of `ids` back (objects still present are left alone).
    /// Every id must be in `saved`: gc and purge only put back what they saved.
    pub(super) async fn put_back(
        &self,
        ids: &HashSet<ObjectId>,
        saved: &HashMap<ObjectId, Bytes>,
    ) -> Result<(), Error> {
        stream::iter(ids.iter())
            .map(|id| async move {
                let path = object_path(id);
                match self.objects.store.put_opts(&path, saved[id].clone().into(), PutMode::Create.into()).await {
                    Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
                    Err(e) => Err(Error::backend("write", &path, e)),
                }
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    /// Swaps the head for an identical re-sealed copy before deleting; on a lost race, marks
    /// the new commits and tries again. Returns the head as read after the swap (with any
    /// commit made since marked).
    async fn fence_before(
        &self,
        mut head: HeadObject,
        mut version: HeadVersion,
        horizon: u64,
        marked: &mut HashSet<ObjectId>,
    ) -> Result<(HeadObject, HeadVersion), Error> {
        for _ in 0..FENCE_ATTEMPTS {
            let swapped = match settle::swap_settled(&*self.heads.cell, Some(&version), self.seal_head(&head)?).await {
                Swapped::Landed => true,
                Swapped::Not(Error::Conflict) => false,
                Swapped::Not(e) | Swapped::Unknown(e) => return Err(e),
            };
            (head, version) = self.mark_new(horizon, marked).await?;
            if swapped {
                return Ok((head, version));
            }
        }
        Err(Error::FenceFailed { attempts: FENCE_ATTEMPTS })
    }

    /// Reads the head and marks the commits made since the last mark (back to the first
    /// commit already marked) and their trees.
    async fn mark_new(&self, horizon: u64, marked: &mut HashSet<ObjectId>) -> Result<(HeadObject, HeadVersion), Error> {
        let (head, version, roots) = self.mark_new_commits(horizon, marked, "gc").await?;
        self.mark_trees(roots, marked, &()).await?;
        Ok((head, version))
    }

    /// Reads the head and marks the commits made since the last mark (back to the first one
    /// already marked) and their policies; returns the head, its version and those commits'
    /// root trees, for the caller to mark (gc's `mark_new`, purge's `mark_since`). `during`
    /// names the caller in the error if the head is gone.
    pub(super) async fn mark_new_commits(
        &self,
        horizon: u64,
        marked: &mut HashSet<ObjectId>,
        during: &str,
    ) -> Result<(HeadObject, HeadVersion, Vec<ObjectId>), Error> {
        let Some((head, version)) = self.read_head().await? else {
            return Err(Error::Corrupt { object: "head".into(), reason: format!("it disappeared during {during}") });
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
        Ok((head, version, roots))
    }

    /// gc's state and its version; `None` if gc never ran.
    pub(super) async fn read_gc_state(&self) -> Result<Option<(GcStateObject, HeadVersion)>, Error> {
        let Some((bytes, version)) = self.gc_state.read().await? else { return Ok(None) };
        let plain = self
            .objects
            .keys
            .objects()
            .open(ObjectKind::Head, &gc_state_id(), &bytes)
            .map_err(|e| open_error(e, GC_STATE_PATH.into()))?;
        let state = serde_json::from_slice(&plain).map_err(|e| format::corrupt_named(GC_STATE_PATH, "gc state", &e))?;
        Ok(Some((state, version)))
    }

    pub(super) async fn write_gc_state(
        &self,
        expected: Option<&HeadVersion>,
        state: &GcStateObject,
    ) -> Result<(), Error> {
        let plain = serde_json::to_vec(state).expect("gc state serializes");
        let sealed = Bytes::from(self.objects.keys.objects().seal(ObjectKind::Head, &gc_state_id(), &plain)?);
        // Another gc's state (or ours, replaced by another gc since): another gc is running.
        match settle::swap_settled(&*self.gc_state, expected, sealed).await {
            Swapped::Landed => Ok(()),
            Swapped::Not(Error::Conflict) => Err(Error::ConcurrentGc),
            Swapped::Not(e) | Swapped::Unknown(e) => Err(e),
        }
    }
}

/// gc's state is sealed as kind Head under this fixed id (the head's is all zeros), so neither
/// opens in the other's place.
fn gc_state_id() -> ObjectId {
    ObjectId::from_bytes([0xff; 32])
}

/// The generation of the oldest commit the policy keeps; `commits` run from the head back.
fn retention(commits: &[super::CommitRecord], options: &GcOptions) -> u64 {
    if options.keep_days.is_none() && options.keep_commits.is_none() {
        return 0;
    }
    let keep_count = options.keep_commits.unwrap_or(0).max(1);
    let since = options.keep_days.map(|d| options.now_ms.saturating_sub(d.saturating_mul(DAY_MS)));
    commits
        .iter()
        .enumerate()
        .filter(|(i, c)| (*i as u64) < keep_count || since.is_some_and(|s| c.time_ms >= s))
        .map(|(_, c)| c.generation)
        .min()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
