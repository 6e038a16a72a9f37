//! Reseal: every object sealed under an older key epoch, sealed again under the newest
//! (`memfs key rotate --reseal`, docs/SECURITY.md "Keys").
//!
//! Objects keep their ids (the address keys never change), so a reseal rewrites each object in
//! place and nothing that names it changes: a reader meets either copy, and both open to the
//! same plaintext. It is therefore safe while other clients write (they seal under the newest
//! epoch already, or follow the rotation at their next head read), and resumable: an object
//! already under the newest epoch is skipped, so a reseal stopped half-way (a crash, Ctrl-C)
//! finishes when run again. An object resealed just as gc deletes it comes back as garbage,
//! which the next gc removes.
//!
//! Without `history`, the objects the head's commit reaches (its tree, its policy, the commit);
//! with it, every stored object, which covers every kept commit. Then the head and gc's state,
//! by compare-and-swap (a lost race means another client wrote them, under the newest epoch).
//! A local folder's log is compacted afterwards, so the older sealed copies leave its files.

use std::collections::HashSet;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::ObjectId;
use memfs_crypt::ObjectKind;
use object_store::ObjectStoreExt;

use super::EncryptedRepository;
use crate::error::Error;
use crate::format;
use crate::format::object_path;
use crate::progress::Progress;
use crate::storage::PARALLEL;

/// What a reseal covers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResealOptions {
    /// Every stored object (every kept commit's), not only what the head reaches.
    pub history: bool,
}

/// What a reseal did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResealReport {
    /// The epoch everything was sealed under.
    pub epoch: u32,
    /// Objects examined.
    pub objects: u64,
    /// Objects sealed again (the others were under `epoch` already).
    pub resealed: u64,
    /// Their stored bytes.
    pub bytes: u64,
}

impl EncryptedRepository {
    /// Seals again, under the newest epoch, every object this store holds under an older one
    /// (see the module documentation).
    pub async fn reseal(&self, options: ResealOptions, progress: &dyn Progress) -> Result<ResealReport, Error> {
        // The head first: it makes this client follow a rotation made elsewhere.
        let head = self.read_head().await?;
        let ids: Vec<ObjectId> = match (options.history, &head) {
            (true, _) => self.objects.list().await?.into_keys().collect(),
            (false, None) => Vec::new(),
            (false, Some((head, _))) => {
                let commit = self.commit_object(&head.commit).await?;
                let mut marked: HashSet<ObjectId> = [head.commit].into_iter().chain(commit.policy).collect();
                self.mark_trees(vec![commit.tree], &mut marked, progress).await?;
                marked.into_iter().collect()
            }
        };
        let keys = self.objects.keys.objects();
        let epoch = keys.current_epoch();
        progress.phase("resealing", Some(ids.len() as u64));
        let done: Vec<Option<u64>> = stream::iter(ids.iter())
            .map(|id| async move {
                let resealed = self.reseal_object(id, epoch).await;
                progress.advance(1);
                resealed
            })
            .buffer_unordered(PARALLEL)
            .try_collect()
            .await?;
        let mut report = ResealReport { epoch, objects: ids.len() as u64, ..ResealReport::default() };
        for bytes in done.into_iter().flatten() {
            report.resealed += 1;
            report.bytes += bytes;
        }
        self.reseal_head(epoch).await?;
        self.reseal_gc_state(epoch).await?;
        if report.resealed > 0 {
            self.objects.compact(progress).await?;
        }
        Ok(report)
    }

    /// Reseals object `id` if it is under an epoch older than `epoch`: its stored size, or
    /// `None` if it was current already or is gone (deleted by gc meanwhile).
    async fn reseal_object(&self, id: &ObjectId, epoch: u32) -> Result<Option<u64>, Error> {
        let path = object_path(id);
        let sealed = match crate::whole_read::get_bytes(&*self.objects.store, &path).await {
            Ok(bytes) => bytes,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(Error::backend("read", &path, e)),
        };
        if memfs_crypt::ObjectKeys::epoch_of(&sealed).is_some_and(|e| e >= epoch) {
            return Ok(None);
        }
        // The kind is not in the name: the one whose associated data opens it.
        let kinds = [ObjectKind::Blob, ObjectKind::Dir, ObjectKind::Commit, ObjectKind::Policy];
        let Some((kind, plain)) = kinds.iter().find_map(|k| self.objects.open(*k, id, &sealed).ok().map(|p| (*k, p)))
        else {
            return Err(Error::Tampered { object: format::object_name(id) });
        };
        let resealed = Bytes::from(self.objects.keys.objects().seal(kind, id, &plain)?);
        let size = resealed.len() as u64;
        self.objects.store.put(&path, resealed.into()).await.map_err(|e| Error::backend("write", &path, e))?;
        if let Some(disk) = &self.objects.disk {
            disk.remove(id);
        }
        Ok(Some(size))
    }

    /// The head sealed again if it is under an older epoch (a lost race is another writer's
    /// newer head).
    async fn reseal_head(&self, epoch: u32) -> Result<(), Error> {
        let Some((bytes, version)) = self.heads.cell.read().await? else { return Ok(()) };
        if memfs_crypt::ObjectKeys::epoch_of(&bytes).is_some_and(|e| e >= epoch) {
            return Ok(());
        }
        let head = self.open_head(&bytes)?;
        match self.heads.cell.swap(&version, self.seal_head(&head)?).await {
            Ok(()) | Err(Error::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// gc's state sealed again if it is under an older epoch.
    async fn reseal_gc_state(&self, epoch: u32) -> Result<(), Error> {
        let Some((bytes, _)) = self.gc_state.read().await? else { return Ok(()) };
        if memfs_crypt::ObjectKeys::epoch_of(&bytes).is_some_and(|e| e >= epoch) {
            return Ok(());
        }
        let Some((state, version)) = self.read_gc_state().await? else { return Ok(()) };
        match self.write_gc_state(Some(&version), &state).await {
            // Another gc wrote it meanwhile, under the newest epoch.
            Ok(()) | Err(Error::ConcurrentGc) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
