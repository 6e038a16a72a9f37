//! Last-access days, recorded without making every read a write.
//!
//! A `view` of a file last used before today is noted in memory (`crate::pending`). The notes
//! ride along with the next mutation's commit (`crate::transaction` adds them); when no
//! mutation comes, [`Memfs::flush`] commits them on their own: `memfs exec` flushes at the end
//! of its input, and any engine flushes when its oldest note is [`FLUSH_AFTER`] old. Days are
//! whole, so a file read all day costs at most one update, and a store read but never flushed
//! loses only last-access days (a file may then expire up to a day early), never content.

use std::time::Duration;

use memfs_core::{Access, Mutation, touch};
use memfs_store::{Operation, Record};

use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::{Commit, Decision};

/// How long a read may wait for a commit to record its last-access day.
pub const FLUSH_AFTER: Duration = Duration::from_secs(300);

impl Memfs {
    /// Notes a read; flushes when the oldest note is old enough.
    pub(crate) async fn record_access(&self, access: Access) -> Result<(), Error> {
        if self.tx.note(access, FLUSH_AFTER) {
            self.flush().await?;
        }
        Ok(())
    }

    /// Commits the last-access days of the reads noted since the last commit, if any changes
    /// (a file changed or removed since it was read is left alone). Returns the files updated.
    pub async fn flush(&self) -> Result<usize, Error> {
        let accesses = self.tx.pending();
        if accesses.is_empty() {
            return Ok(0);
        }
        let writer = self.writer();
        let today = writer.today;
        let accesses = &accesses;
        let flushed = self
            .tx
            .run(&writer, None, move |head, mut fetched| {
                Box::pin(async move {
                    let (head, fetched) = (&*head, &mut fetched);
                    let touched = fetched.resolve(|f| touch(&head.tree, accesses, today, f)).await;
                    let Some((tree, files)) = touched.map_err(|e| self.store_error(e))? else {
                        return Ok(Decision::Done(0));
                    };
                    let mutation = Mutation { tree, changes: Vec::new(), blobs: Vec::new(), applied: None };
                    let record = Record::from(Operation::RecordAccess { files: files as u64 });
                    Ok(Decision::Commit(Commit { mutation, record, touch: Vec::new(), with_reads: false, then: files }))
                })
            })
            .await?;
        self.tx.recorded(accesses);
        Ok(flushed.value)
    }
}
