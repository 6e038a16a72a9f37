//! Last-access days, recorded without making every read a write.
//!
//! A `view` of a file last used before today is noted in memory ([`Pending`]). The notes ride
//! along with the next mutation's commit; when no mutation comes, [`Memfs::flush`] commits
//! them on their own: `memfs exec` flushes at the end of its input, and any engine flushes
//! when its oldest note is [`FLUSH_AFTER`] old. Days are whole, so a file read all day costs at
//! most one update, and a store read but never flushed loses only last-access days (a file may
//! then expire up to a day early), never content.

use std::time::{Duration, Instant};

use memfs_core::{Access, Day, Mutation, Tree, touch};
use memfs_store::{CommitInfo, Error as StoreError};

use crate::engine::{Fetched, MAX_ATTEMPTS, Memfs};
use crate::error::Error;

/// How long a read may wait for a commit to carry its last-access day.
pub const FLUSH_AFTER: Duration = Duration::from_secs(300);

/// Reads not yet recorded.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    accesses: Vec<Access>,
    since: Option<Instant>,
}

impl Memfs {
    /// Notes a read; flushes when the oldest note is old enough.
    pub(crate) async fn record_access(&self, access: Access) -> Result<(), Error> {
        let due = {
            let mut p = self.pending.lock().expect("pending accesses");
            if !p.accesses.contains(&access) {
                p.accesses.push(access);
            }
            p.since.get_or_insert_with(Instant::now).elapsed() >= FLUSH_AFTER
        };
        if due {
            self.flush().await?;
        }
        Ok(())
    }

    pub(crate) fn pending_accesses(&self) -> Vec<Access> {
        self.pending.lock().expect("pending accesses").accesses.clone()
    }

    /// Forgets the notes a commit recorded.
    pub(crate) fn recorded(&self, accesses: &[Access]) {
        if accesses.is_empty() {
            return;
        }
        let mut p = self.pending.lock().expect("pending accesses");
        p.accesses.retain(|a| !accesses.contains(a));
        if p.accesses.is_empty() {
            p.since = None;
        }
    }

    /// `tree` with the last-access days of `accesses` raised to `today`, and how many files
    /// changed (`None`: none).
    pub(crate) async fn touched(
        &self,
        tree: &Tree,
        accesses: &[Access],
        today: Day,
        fetched: &mut Fetched<'_>,
    ) -> Result<Option<(Tree, usize)>, Error> {
        if accesses.is_empty() {
            return Ok(None);
        }
        loop {
            match touch(tree, accesses, today, &*fetched) {
                Ok(tree) => return Ok(tree),
                Err(need) => fetched.fetch(need).await.map_err(|e| self.store_error(e))?,
            }
        }
    }

    /// Commits the last-access days of the reads noted since the last commit, if any changes
    /// (a file changed or removed since it was read is left alone). Returns the files updated.
    pub async fn flush(&self) -> Result<usize, Error> {
        let accesses = self.pending_accesses();
        if accesses.is_empty() {
            return Ok(0);
        }
        let today = self.today();
        for attempt in 1..=MAX_ATTEMPTS {
            let began = Instant::now();
            let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
            let mut fetched = Fetched::new(self.repository().as_ref());
            let Some((tree, files)) = self.touched(&head.tree, &accesses, today, &mut fetched).await? else {
                self.recorded(&accesses);
                return Ok(0);
            };
            let mutation = Mutation { tree, changes: Vec::new(), blobs: Vec::new(), applied: None };
            let command = serde_json::json!({"command": "record-access", "files": files}).to_string();
            let info = CommitInfo { actor: self.actor().to_owned(), command, changes: Vec::new() };
            match self.repository().commit(&head, &mutation, info).await {
                Ok(_) => {
                    self.committed();
                    self.recorded(&accesses);
                    return Ok(files);
                }
                Err(StoreError::Conflict) => self.lost_race(attempt, began).await,
                Err(e) => return Err(self.store_error(e)),
            }
        }
        Err(Error::Contention { store: self.repository().to_string(), attempts: MAX_ATTEMPTS })
    }
}
