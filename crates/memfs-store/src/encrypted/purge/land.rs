//! Steps 4 and 5 of a purge (see the parent module's documentation): the new chain stored and
//! the head swapped to it, then what only the old commits reached deleted.

use std::collections::HashSet;

use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::ObjectId;

use super::chain::Write;
use super::graph::Graph;
use super::search::History;
use super::{PARALLEL, PurgeReport};
use crate::encrypted::{EncryptedRepository, Mark};
use crate::error::Error;
use crate::format::HeadObject;
use crate::head::HeadVersion;
use crate::progress::Progress;
use crate::repository::Anchor;

impl EncryptedRepository {
    /// Step 4's writes and swap: stores `writes` and what the base head carried unwritten, then
    /// swaps the head to `head` by compare-and-swap against `version`.
    pub(super) async fn store_and_swap(
        &self,
        version: &HeadVersion,
        anchor: &Anchor,
        mut writes: Vec<Write>,
        head: &HeadObject,
        progress: &dyn Progress,
    ) -> Result<(), Error> {
        // What the base head carried unwritten is stored like the rest: the new head
        // carries nothing unwritten, and step 5 deletes those the new chain does not reach.
        writes.extend(anchor.unwritten().map(|o| (o.kind.object_kind(), o.id, o.plain.clone())));
        progress.phase("writing", Some(writes.len() as u64));
        stream::iter(&writes)
            .map(|(kind, id, plain)| async move {
                self.objects.put_one(*kind, *id, plain).await?;
                progress.advance(1);
                Ok::<(), Error>(())
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<()>>()
            .await?;
        let (purge_id, generation) = (head.commit, head.generation);
        let head = self.seal_head(head)?;
        match self.heads.cell.swap(version, head).await {
            Ok(()) => {}
            // It may have landed all the same (a timeout after the write, or a retry inside the
            // client refused because the first copy landed): look before failing.
            Err(e) => self.landed_or(e, &purge_id, generation).await?,
        }
        if let Some(w) = &self.heads.watermark {
            w.raise(Mark { generation, commit: Some(purge_id) })?;
        }
        Ok(())
    }

    /// Step 5: deletes, fenced, what the old commits reached and neither the new chain
    /// (`new_roots`, `new_ids`) nor a writer's commit since the swap does; fills the report's
    /// counts. Returns the old commits it meant to delete.
    pub(super) async fn delete_old(
        &self,
        read: &History,
        new_roots: Vec<ObjectId>,
        mut new_ids: HashSet<ObjectId>,
        graph: &mut Graph,
        report: &mut PurgeReport,
        progress: &dyn Progress,
    ) -> Result<Vec<ObjectId>, Error> {
        graph.reach(new_roots, &mut new_ids);
        let (head, head_version) = self.mark_since(read.horizon, graph, &mut new_ids).await?;
        let mut doomed: Vec<ObjectId> = read.old.iter().filter(|id| !new_ids.contains(*id)).copied().collect();
        doomed.sort();
        let old_commits: HashSet<ObjectId> = read.kept.iter().chain(&read.others).map(|(id, _)| *id).collect();
        let replaced: Vec<ObjectId> = doomed.iter().filter(|id| old_commits.contains(*id)).copied().collect();
        report.replaced_commits = replaced.len() as u64;
        let saved = self.save(&doomed).await?;
        progress.phase("deleting", None);
        let deleted = match self.delete_fenced(head, head_version, read.horizon, graph, &mut new_ids, &saved).await {
            Ok(deleted) => deleted,
            Err(e) => {
                // Nothing may stay deleted that a writer might use: put everything back. A
                // later purge finds the old commits and deletes them.
                let all: HashSet<ObjectId> = saved.keys().copied().collect();
                self.put_back(&all, &saved).await?;
                return Err(e);
            }
        };
        report.deleted = deleted.len() as u64;
        report.deleted_bytes = deleted.iter().map(|id| read.listing.get(id).copied().unwrap_or(0)).sum();
        self.forget(&deleted);
        Ok(replaced)
    }
}
