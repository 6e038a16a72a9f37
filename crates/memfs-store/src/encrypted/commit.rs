//! Commits: a mutation's objects written at once, then the head swapped by compare-and-swap,
//! with a lost answer settled before anything is reported; policy changes.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use memfs_core::{Mutation, ObjectId, Policy};
use memfs_crypt::ObjectKind;

use super::objects::Sealed;
use super::plan::{PlanInputs, PlannedDirs};
use super::snapshot::inline_size;
use super::{EncryptedRepository, now_ms};
use crate::error::Error;
use crate::format::{CommitObject, HeadObject, InlineKind, InlineObject, id_eq};
use crate::head::{HeadVersion, NotPut};
use crate::repository::{Anchor, CommitInfo, Head};
use crate::rollback::Mark;
use crate::{format, settle};

/// What a commit does with its new objects and those its base head carried unwritten.
pub(super) enum Carry {
    /// The new head carries them all: within the budget, or past it (within twice it) on a
    /// base head that was past it already, whose writer is storing them (see
    /// [`EncryptedRepository::write_out`]).
    Carried(Vec<InlineObject>),
    /// The commit passes the budget, or twice it (the write-out before did not take them out
    /// of the head): the new head carries them all, and once it has landed they are stored and
    /// a head without them replaces it.
    WriteOut(Vec<InlineObject>),
    /// Past four times the budget, or a plaintext not UTF-8 (the head carries strings), or no
    /// budget: they are all stored before the head is swapped, which then carries none.
    Store,
}

/// A commit sealed by [`EncryptedRepository::stage`], its head not yet swapped in.
pub(super) struct Staged {
    generation: u64,
    commit_id: ObjectId,
    commit_plain: Vec<u8>,
    policy: Option<ObjectId>,
    root: ObjectId,
    head: HeadObject,
    /// The objects stored with the head (none when it carries them all).
    with_head: Sealed,
    /// The head carries past the budget: once it has landed, stored and taken out of it.
    write_out: bool,
}

/// How many times [`EncryptedRepository::write_out`] tries to take what it stored out of a
/// newer head than its own (each a read of the newest head and a swap).
const TRIM_ATTEMPTS: u32 = 8;

/// How many commits back [`EncryptedRepository::landed`] walks for a commit whose answer was
/// lost; further back, its outcome is unknown.
const LANDED_WALK: u64 = 1024;

/// Whether a commit whose head write failed or was refused is in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Landed {
    /// It is: the command is in.
    Yes,
    /// It is not (proved from the newest head): the command may run again.
    No,
    /// The store could not be read long enough to know.
    Unknown,
}

impl EncryptedRepository {
    /// Makes `policy` the store's policy, in a commit of its own (the tree unchanged), if the
    /// head is still `base`. Returns the new generation, or [`Error::Conflict`].
    pub async fn set_policy(&self, base: &Head, policy: &Policy, info: CommitInfo) -> Result<u64, Error> {
        let plain = serde_json::to_vec(policy).expect("a policy serializes");
        let id = self.objects.keys.tree_address.address(&plain);
        let mutation = Mutation { tree: base.tree.clone(), changes: Vec::new(), blobs: Vec::new(), applied: None };
        let generation = self.commit_with_policy(base, &mutation, info, Some(id), vec![(id, plain)]).await?;
        self.objects.cache().insert_policy(id, Arc::new(policy.clone()));
        Ok(generation)
    }

    /// The policy object `id` names (the default for `None`), through the cache.
    pub(super) async fn policy_object(&self, id: Option<&ObjectId>) -> Result<Arc<Policy>, Error> {
        let Some(id) = id else { return Ok(Arc::new(Policy::default())) };
        if let Some(p) = self.objects.cache().policy(id) {
            return Ok(p);
        }
        let plain = self.get_object(ObjectKind::Policy, id).await?;
        let policy: Policy = serde_json::from_slice(&plain).map_err(|e| format::corrupt(id, "policy", &e))?;
        let policy = Arc::new(policy);
        let mut cache = self.objects.cache();
        cache.insert_policy(*id, policy.clone());
        cache.insert_plain(*id, plain.into());
        Ok(policy)
    }

    /// Writes the mutation's objects (and `extra` policy objects), then a commit naming
    /// `policy`, then swaps the head if it is still `base`.
    pub(super) async fn commit_with_policy(
        &self,
        base: &Head,
        mutation: &Mutation,
        info: CommitInfo,
        policy: Option<ObjectId>,
        extra: Vec<(ObjectId, Vec<u8>)>,
    ) -> Result<u64, Error> {
        let Some(anchor) = &base.anchor else { return Err(Error::Conflict) };
        let staged = self.stage(base, anchor, mutation, info, policy, &extra).await?;
        self.land(anchor, staged).await
    }

    /// Seals a commit on `base` (whose head `anchor` names): its objects carried in its head,
    /// or (past four times the budget) sealed to be stored with it.
    pub(super) async fn stage(
        &self,
        base: &Head,
        anchor: &Anchor,
        mutation: &Mutation,
        info: CommitInfo,
        policy: Option<ObjectId>,
        extra: &[(ObjectId, Vec<u8>)],
    ) -> Result<Staged, Error> {
        let (planned, root) = self.plan_tree(base, mutation).await?;
        let generation = base.generation + 1;
        let commit = CommitObject {
            parent: anchor.commit,
            tree: root,
            generation,
            time_ms: now_ms(),
            actor: info.actor,
            command: info.command.to_json(),
            changes: info.changes,
            files: mutation.tree.totals().files,
            bytes: mutation.tree.totals().bytes,
            policy,
            replaced: Vec::new(),
        };
        let commit_plain = commit.encode();
        let commit_id = self.objects.keys.tree_address.address(&commit_plain);
        let writes = mutation
            .blobs
            .iter()
            .map(|b| (ObjectKind::Blob, b.id, &b.content[..]))
            .chain(planned.pages.iter().map(|(id, plain)| (ObjectKind::Dir, *id, &plain[..])))
            .chain(extra.iter().map(|(id, plain)| (ObjectKind::Policy, *id, &plain[..])))
            .chain(std::iter::once((ObjectKind::Commit, commit_id, &commit_plain[..])));
        let new: Vec<(ObjectKind, ObjectId, &[u8])> = writes.collect();
        // Carried unwritten in the head (one request for the whole commit); stored once the
        // head has landed by the commit that passes the budget, and before the swap past four
        // times it (docs/FORMAT.md, "Objects carried unwritten").
        let (carried, write_out, with_head) = match self.carry(anchor.unwritten(), &new) {
            Carry::Carried(carried) => (carried, false, Sealed::default()),
            Carry::WriteOut(carried) => (carried, true, Sealed::default()),
            Carry::Store => {
                let mut all = new;
                all.extend(anchor.unwritten().map(|o| (o.kind.object_kind(), o.id, o.plain.as_slice())));
                (Vec::new(), false, self.seal_for(anchor, all).await?)
            }
        };
        self.cache_staged((commit_id, commit), mutation, planned, extra);
        let recent = self.recent_after(anchor.head.as_deref());
        let head = self.head_object(generation, (commit_id, &commit_plain), policy, root, carried, recent);
        Ok(Staged { generation, commit_id, commit_plain, policy, root, head, with_head, write_out })
    }

    /// A commit's objects sealed to be stored with its head
    /// ([`HeadStore::put_with`](crate::head::HeadStore::put_with)), under this handle's keys.
    /// Whatever reaches storage stays there in every copy kept (a versioned bucket, a backup, the
    /// log until compaction): stored after a rotation committed, under an epoch it retired, the
    /// removed credential would open it. So nothing is stored unless the head is still the one
    /// planned on (docs/SECURITY.md, "A writer that missed a rotation"): the storage checks it as
    /// it stores them with the head, and those this process stored under an older epoch, replaced
    /// ahead of it, only once a fresh read finds the head unmoved.
    async fn seal_for(&self, anchor: &Anchor, objects: Vec<(ObjectKind, ObjectId, &[u8])>) -> Result<Sealed, Error> {
        if objects.iter().any(|(_, id, _)| self.objects.stored_stale(id)) {
            self.heads.cell.unmoved(anchor.version.as_ref()).await?;
        }
        self.objects.seal(objects).await
    }

    /// The directories of `mutation`'s tree cut into pages, and its root's id: what the
    /// planning needs of `base`'s tree (pages and directories not in the cache) read first.
    async fn plan_tree(&self, base: &Head, mutation: &Mutation) -> Result<(PlannedDirs, ObjectId), Error> {
        let base_root = base.tree.root().id();
        let mut inputs = PlanInputs::default();
        loop {
            let mut planned = PlannedDirs::default();
            match self.plan_dirs(mutation.tree.root(), base_root.as_ref(), &inputs, &mut planned) {
                Ok(root) => return Ok((planned, root)),
                Err(missing) => self.supply(missing, &mut inputs).await?,
            }
        }
    }

    /// Keeps a staged commit's objects in the cache: immutable and just made, the next
    /// command's reads need not fetch them.
    fn cache_staged(
        &self,
        (commit_id, commit): (ObjectId, CommitObject),
        mutation: &Mutation,
        planned: PlannedDirs,
        extra: &[(ObjectId, Vec<u8>)],
    ) {
        let mut cache = self.objects.cache();
        cache.insert_commit(commit_id, Arc::new(commit));
        for b in &mutation.blobs {
            cache.insert_blob(b.id, b.content.clone());
        }
        for (id, dir, pages) in planned.dirs {
            cache.insert_dir(id, dir, pages);
        }
        for (id, dir) in planned.partials {
            cache.insert_partial(id, dir);
        }
        for (id, plain) in planned.pages.iter().chain(extra) {
            cache.insert_plain(*id, Arc::from(&plain[..]));
        }
    }

    /// Stores what `staged` stores with its head, and no head: a writer stopped between its
    /// objects and its swap (object storage stores them one put each, then swaps).
    #[cfg(test)]
    pub(super) async fn store_without_head(&self, staged: &Staged) {
        self.objects.storage.put_new(staged.with_head.writes()).await.unwrap();
    }

    /// Swaps in the head of `staged` if the head is still at `anchor`, settling a lost answer
    /// before anything is reported; then writes out what it carries past the budget.
    async fn land(&self, anchor: &Anchor, staged: Staged) -> Result<u64, Error> {
        let Staged { generation, commit_id, commit_plain, policy, root, head, with_head, write_out } = staged;
        let sealed = self.seal_head(&head)?;
        // Whether any attempt sent the head's put (one refused before it was sent leaves
        // nothing that could land later).
        let sent = AtomicBool::new(false);
        let write = || async {
            let put = self.heads.cell.put_with(anchor.version.as_ref(), sealed.clone(), with_head.writes()).await;
            if !matches!(put, Err(NotPut::Moved)) {
                sent.store(true, Ordering::Relaxed);
            }
            put.map_err(NotPut::into_error)
        };
        // A write whose answer is lost (a timeout, a dropped connection) may still land, even
        // later. Sending the very same conditional write again settles it: whichever copy
        // lands first wins and the other is refused, so the commit lands at most once.
        let swapped = settle::resend(write).await;
        // Stored with the head when the swap was taken; refused, nothing was stored.
        if swapped.is_ok() {
            self.objects.stored(&with_head);
        }
        match swapped {
            Ok(()) => {
                // The next read of the head finds these bytes (unchanged): no need to open them.
                let head = Arc::new(head);
                *self.heads.parsed() = Some((sealed.clone(), head.clone()));
                if write_out {
                    self.write_out(&head, &sealed, (commit_id, &commit_plain), policy, root).await;
                }
            }
            // Refused, or failed: but an earlier copy of this very write (ours, or a retry
            // inside the client) may be the one that moved the head. Answering "conflict" or
            // "failed" then would make the caller run a command again that is already in:
            // look before answering. Unless nothing was ever sent.
            Err(e) if !sent.load(Ordering::Relaxed) => return Err(e),
            Err(e) => self.landed_or(e, &commit_id, generation).await?,
        }
        if let Some(w) = &self.heads.watermark {
            w.raise(Mark { generation, commit: Some(commit_id) })?;
        }
        Ok(generation)
    }

    /// The head naming a new commit, with `unwritten`, its snapshot (see
    /// [`EncryptedRepository::snapshot`]) and the commits before it (`recent`).
    pub(super) fn head_object(
        &self,
        generation: u64,
        commit: (ObjectId, &[u8]),
        policy: Option<ObjectId>,
        root: ObjectId,
        unwritten: Vec<InlineObject>,
        recent: Vec<ObjectId>,
    ) -> HeadObject {
        let store_id = (!self.store_id.is_empty()).then(|| self.store_id.clone());
        let inline = self.snapshot(commit, policy, root, unwritten);
        HeadObject { store_id, keys: None, generation, commit: commit.0, recent, inline }
    }

    /// The `recent` of a commit on `base`: its commit, then the ones it names,
    /// up to this client's count. Only what `base` says: a list cut short by a purge's head
    /// (or an older one) stays short until new commits fill it.
    pub(super) fn recent_after(&self, base: Option<&HeadObject>) -> Vec<ObjectId> {
        let Some(base) = base.filter(|_| self.heads.recent > 0) else { return Vec::new() };
        std::iter::once(base.commit).chain(base.recent.iter().copied()).take(self.heads.recent).collect()
    }

    /// After a swap whose head passed the budget of objects carried unwritten (`head`, sealed
    /// as `sealed`, made of `commit`, `policy` and `root`): stores what it carries, then swaps
    /// in a head that no longer carries them.
    ///
    /// Only the writer whose swap landed stores them, once. Stored before the swap, as they
    /// were, every writer racing for the head stored them all and all but one lost (sixteen
    /// writers on S3 made about twelve object writes refused as already there per commit).
    /// The head swapped in is this one made again without them (a fresh snapshot), or, when
    /// other commits came first (they carry these objects on, storing nothing: see
    /// [`Carry`]), the newest without them, tried [`TRIM_ATTEMPTS`] times. Failures change
    /// nothing: the objects stay carried, the commit that passes twice the budget writes them
    /// out again, and one past four times it stores them before its swap.
    async fn write_out(
        &self,
        head: &HeadObject,
        sealed: &Bytes,
        commit: (ObjectId, &[u8]),
        policy: Option<ObjectId>,
        root: ObjectId,
    ) {
        let carried: Vec<(ObjectKind, ObjectId, &[u8])> = head
            .inline
            .iter()
            .filter(|o| o.unwritten)
            .map(|o| (o.kind.object_kind(), o.id, o.plain.as_slice()))
            .collect();
        let stored: HashSet<ObjectId> = carried.iter().map(|(_, id, _)| *id).collect();
        if self.objects.put(carried).await.is_err() {
            return;
        }
        // This head, its version remembered from the swap (no request).
        if let Ok(Some((bytes, version))) = self.heads.cell.read_within(Duration::MAX).await
            && bytes == *sealed
        {
            let trimmed = self.head_object(head.generation, commit, policy, root, Vec::new(), head.recent.clone());
            if !self.swap_lost(&version, trimmed).await {
                return;
            }
        }
        for _ in 0..TRIM_ATTEMPTS {
            let Ok(Some((mut newest, version))) = self.read_head().await else { return };
            // Sealed here under this client's keys: not a head written after a rotation it
            // has not followed yet.
            let ours = self.objects.keys.has_root().then(|| self.objects.keys.counter());
            if newest.keys > ours || !newest.inline.iter().any(|o| o.unwritten && stored.contains(&o.id)) {
                return;
            }
            newest.inline.retain(|o| !(o.unwritten && stored.contains(&o.id)));
            if !self.swap_lost(&version, newest).await {
                return;
            }
        }
    }

    /// Swaps in `head` if the head is still at `version` (remembered as parsed when it
    /// lands); true only when another head came first, for [`EncryptedRepository::write_out`]
    /// to try again on the newest.
    async fn swap_lost(&self, version: &HeadVersion, head: HeadObject) -> bool {
        let Ok(sealed) = self.seal_head(&head) else { return false };
        match self.heads.cell.swap(version, sealed.clone()).await {
            Ok(()) => {
                *self.heads.parsed() = Some((sealed, Arc::new(head)));
                false
            }
            Err(Error::Conflict) => true,
            Err(_) => false,
        }
    }

    /// The objects a commit's head carries unwritten: those the base head carried
    /// (`before`) and the commit's `new` ones (see [`Carry`]).
    pub(super) fn carry<'a>(
        &self,
        before: impl Iterator<Item = &'a InlineObject>,
        new: &[(ObjectKind, ObjectId, &[u8])],
    ) -> Carry {
        if self.heads.unwritten_budget == 0 {
            return Carry::Store;
        }
        // What this process stored itself (a write-out whose head without them lost to other
        // commits, which carried them on) is stored: not carried on again, lest the head pass
        // twice the budget and a writer store it a second time. Only under the current epoch:
        // an older copy may be replaced by a reseal.
        let mut out: Vec<InlineObject> = before.filter(|o| !self.objects.stored_now(&o.id)).cloned().collect();
        let mut ids: HashSet<ObjectId> = out.iter().map(|o| o.id).collect();
        let base: usize = out.iter().map(|o| inline_size(&o.plain)).sum();
        let mut used = base;
        for (kind, id, plain) in new {
            if !ids.insert(*id) {
                continue;
            }
            used += inline_size(plain);
            if used > self.heads.unwritten_budget.saturating_mul(4) {
                return Carry::Store;
            }
            let Some(kind) = InlineKind::of(*kind) else { return Carry::Store };
            out.push(InlineObject { kind, id: *id, plain: plain.to_vec(), unwritten: true });
        }
        let budget = self.heads.unwritten_budget;
        match (base > budget, used > budget, used > budget.saturating_mul(2)) {
            // Within the budget; or past it on a base past it already, whose writer is
            // storing what it carries.
            (_, false, _) | (true, true, false) => Carry::Carried(out),
            // Passing the budget; or past twice it, where that writer's head swap without
            // them did not land.
            (false, true, _) | (true, true, true) => Carry::WriteOut(out),
        }
    }

    /// Whether the commit `commit` at `generation`, whose head write failed or was refused,
    /// is in the history after all: an earlier copy of the write (ours, or a retry inside the
    /// client) may be the one that moved the head. Only a proof that it is not lets the
    /// command run again; a store that cannot be read for [`settle::PATIENCE`] leaves it
    /// [`Landed::Unknown`].
    pub(super) async fn landed(&self, commit: &ObjectId, generation: u64) -> Landed {
        match settle::patiently(|| self.landed_once(commit, generation)).await {
            Some(Some(true)) => Landed::Yes,
            Some(Some(false)) => Landed::No,
            Some(None) | None => Landed::Unknown,
        }
    }

    /// After a write of the head naming `commit` at `generation` failed with `e`: `Ok` if the
    /// commit is in the history all the same ([`EncryptedRepository::landed`]), `e` if it is
    /// not, and an unknown outcome if the store could not tell.
    pub(super) async fn landed_or(&self, e: Error, commit: &ObjectId, generation: u64) -> Result<(), Error> {
        match self.landed(commit, generation).await {
            Landed::Yes => Ok(()),
            Landed::No => Err(e),
            Landed::Unknown => Err(Error::outcome_unknown(commit, generation)),
        }
    }

    /// One look at the newest head (a fresh read) for `commit` at `generation`: `None` when
    /// the head is too far ahead to walk back to it.
    async fn landed_once(&self, commit: &ObjectId, generation: u64) -> Result<Option<bool>, Error> {
        let Some((head, _)) = self.read_head().await? else { return Ok(Some(false)) };
        if head.generation < generation {
            return Ok(Some(false));
        }
        if head.generation - generation > LANDED_WALK {
            return Ok(None);
        }
        // The head names the commit at that generation: whether it is ours needs
        // no walk. A purge's head names none, and the ones after it only commits from it on,
        // so a commit named there was never rewritten: another id is another writer's commit.
        if head.recent_fits()
            && let Some(named) = head.commit_at(generation)
        {
            return Ok(Some(id_eq(&named, commit)));
        }
        // The walk of fork detection, from the oldest commit the head names: it also knows
        // purge's and gc's records of rewritten and cut commits.
        let (at, from) = head.walk_start(generation);
        self.descends(at, from, *commit, generation).await.map(Some)
    }
}
