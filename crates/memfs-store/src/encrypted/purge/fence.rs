//! The fenced deletion of a purge: what writers on the new head use is marked and spared,
//! and the head is re-sealed after deleting so that a writer that reused a deleted object
//! fails its swap. Reading, deleting and putting back sealed bytes are gc's
//! ([`EncryptedRepository::save`], [`EncryptedRepository::delete_objects`],
//! [`EncryptedRepository::put_back`]): the same operations on the same objects.
//!
//! So are the fence's loop ([`EncryptedRepository::fence_deletion`]) and the walk of the
//! commits made since the last mark ([`EncryptedRepository::mark_new_commits`]). What stays
//! purge's: it marks those commits' trees through its [`Graph`], which it reads again after the
//! deletion to say where contents were stored again, and when writers keep winning it reports
//! the deletion undone (everything put back, nothing deleted) where gc fails with
//! [`Error::FenceFailed`].

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use memfs_core::ObjectId;

use super::graph::Graph;
use crate::encrypted::EncryptedRepository;
use crate::error::Error;
use crate::format::HeadObject;
use crate::head::HeadVersion;

impl EncryptedRepository {
    /// Reads the head and marks the commits made since the last mark (back to the first one
    /// already marked): their policies and every object of their trees. gc's `mark_new` marks
    /// the same, but purge keeps the pages it reads in `graph` (see the module documentation).
    pub(super) async fn mark_since(
        &self,
        horizon: u64,
        graph: &mut Graph,
        marked: &mut HashSet<ObjectId>,
    ) -> Result<(HeadObject, HeadVersion), Error> {
        let (head, version, roots) = self.mark_new_commits(horizon, marked, "purge").await?;
        self.read_trees(roots.clone(), true, graph, &()).await?;
        graph.reach(roots, marked);
        Ok((head, version))
    }

    /// Deletes the saved objects no marked commit uses, then re-seals the head by
    /// compare-and-swap against `version`: a writer that read the head before that and reused
    /// a deleted object fails its own swap. If a writer committed first, puts everything back,
    /// marks its commits, deletes again and tries again. Returns the objects left deleted
    /// (none if writers kept winning: everything is back then).
    pub(super) async fn delete_fenced(
        &self,
        head: HeadObject,
        version: HeadVersion,
        horizon: u64,
        graph: &mut Graph,
        marked: &mut HashSet<ObjectId>,
        saved: &HashMap<ObjectId, Bytes>,
    ) -> Result<HashSet<ObjectId>, Error> {
        let deleted: HashSet<ObjectId> = saved.keys().filter(|id| !marked.contains(*id)).copied().collect();
        self.delete_objects(deleted.iter().copied().collect(), &()).await?;
        let remark = async |marked: &mut HashSet<ObjectId>| self.mark_since(horizon, graph, marked).await;
        Ok(self.fence_deletion((head, version), deleted, marked, saved, remark).await?.unwrap_or_default())
    }

    /// Drops deleted objects from this client's caches (in memory and on disk).
    pub(super) fn forget(&self, ids: &HashSet<ObjectId>) {
        for id in ids {
            self.objects.forget(id);
        }
    }
}
