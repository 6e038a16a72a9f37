//! Expiration: files nobody has read or written for a while leave the live tree.
//!
//! A file is unused for `N` days when its last-access day is at least `N` days before today.
//! Expired files are deleted in one ordinary commit, so they stay in history (`memfs show`,
//! `memfs restore`) until retention drops them; directories they leave empty stay. With the
//! policy `expire-unused-after`, an engine expires on its own before the first command of each
//! day.

use memfs_core::{Change, Day, Mutation, Name, Node, Tree, normalized};
use memfs_store::{Fetched, Head, Operation, Record};

use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::{Commit, Decision};

/// What an expiration found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The files expired (or that would be, for a dry run), by path, with their last-access day.
    pub files: Vec<(String, Day)>,
    /// The commit that removed them; `None` for a dry run or when nothing expired.
    pub generation: Option<u64>,
}

impl Memfs {
    /// Removes every file unused for at least `unused_for` days, in one commit; with
    /// `dry_run`, only lists them. Reads noted but not yet recorded count as uses.
    pub async fn expire(&self, unused_for: Day, dry_run: bool) -> Result<Expired, Error> {
        self.flush().await?;
        let today = self.today();
        let expired = self
            .tx
            .run(&self.writer(), None, move |head, mut fetched| {
                Box::pin(async move {
                    let (head, fetched) = (&*head, &mut fetched);
                    let found = self.unused(&head.tree, today, unused_for, fetched).await?;
                    let files: Vec<(String, Day)> = found.iter().map(|(c, d)| (normalized(c), *d)).collect();
                    if dry_run || files.is_empty() {
                        return Ok(Decision::Done(files));
                    }
                    let mut tree = head.tree.clone();
                    for (components, _) in &found {
                        let grafted = fetched.resolve(|f| memfs_core::graft(&tree, components, None, f)).await;
                        tree = grafted.map_err(|e| self.store_error(e))?;
                    }
                    let changes = files.iter().map(|(p, _)| Change::Deleted { path: p.clone() }).collect();
                    let mutation = Mutation { tree, changes, blobs: Vec::new(), applied: None };
                    let record =
                        Record::from(Operation::Expire { files: files.len() as u64, unused_for_days: unused_for });
                    Ok(Decision::Commit(Commit { mutation, record, touch: Vec::new(), with_reads: false, then: files }))
                })
            })
            .await?;
        Ok(Expired { files: expired.value, generation: expired.generation })
    }

    /// Runs the policy's expiration once a day, before a command. Returns the head it read
    /// when it changed nothing, so the command can start from it instead of reading it again
    /// (a round trip saved on each new client's first command).
    pub(crate) async fn expire_automatically(&self) -> Result<Option<Head>, Error> {
        let today = self.today();
        if *self.auto_expired.lock().expect("auto-expire day") == Some(today) {
            return Ok(None);
        }
        let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
        let unchanged = match head.policy.expire_unused_after_days {
            Some(days) => {
                self.expire(days, false).await?;
                None
            }
            None => Some(head),
        };
        *self.auto_expired.lock().expect("auto-expire day") = Some(today);
        Ok(unchanged)
    }

    /// Every file of `tree` last used `unused_for` or more days before `today`, in tree order.
    async fn unused(
        &self,
        tree: &Tree,
        today: Day,
        unused_for: Day,
        fetched: &mut Fetched<'_>,
    ) -> Result<Vec<(Vec<Name>, Day)>, Error> {
        let mut found = Vec::new();
        let mut stack = vec![(Vec::<Name>::new(), tree.root().clone())];
        while let Some((at, dir)) = stack.pop() {
            let dir = fetched.whole(&dir).await.map_err(|e| self.store_error(e))?;
            // Reverse order on the stack gives tree order when popped.
            let mut subdirs = Vec::new();
            for (name, node) in dir.entries() {
                let mut path = at.clone();
                path.push(name.clone());
                match node {
                    Node::File(f) if u64::from(f.accessed) + u64::from(unused_for) <= u64::from(today) => {
                        found.push((path, f.accessed));
                    }
                    Node::File(_) => {}
                    Node::Dir(d) => subdirs.push((path, d.clone())),
                }
            }
            stack.extend(subdirs.into_iter().rev());
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }
}
