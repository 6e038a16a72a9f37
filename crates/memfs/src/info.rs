//! A store at a glance (`memfs info`): what it holds now, its newest commit and its format.

use std::sync::Arc;

use memfs_core::{Policy, Totals};

use crate::engine::Memfs;
use crate::error::Error;
use crate::history::CommitRecord;

/// What [`Memfs::info`] reports.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Info {
    /// The head's generation: how many commits the store has made.
    pub generation: u64,
    /// The files and bytes of the live tree.
    pub totals: Totals,
    /// The store's policy.
    pub policy: Arc<Policy>,
    /// The newest commit; `None` for a store that keeps no history (`memory://` without
    /// encryption) or has no commit yet.
    pub newest: Option<CommitRecord>,
    /// The on-storage format and the store's id, for an encrypted store.
    pub format: Option<(u64, String)>,
}

impl Memfs {
    /// The store at a glance, as of its newest head.
    pub async fn info(&self) -> Result<Info, Error> {
        let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
        let newest = match (self.repository().history(), head.generation) {
            (Some(_), 1..) => Some(self.resolve("HEAD").await?),
            _ => None,
        };
        let format = self.repository().history().map(|repo| (memfs_store::FORMAT_VERSION, repo.store_id().to_owned()));
        Ok(Info {
            generation: head.generation,
            totals: head.tree.root().totals(),
            policy: head.policy.clone(),
            newest,
            format,
        })
    }
}
