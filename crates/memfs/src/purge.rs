//! `purge`: erase a path from the live tree and from all stored history, for a
//! right-to-erasure request, and report what proves it (see `memfs_store`'s purge for the
//! protocol).

use memfs_core::MemoryPath;
use memfs_store::{Error as StoreError, Progress, PurgeError, PurgeOptions, PurgeReport};

use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::Failure;

impl Memfs {
    /// Erases `path` (a file, or a directory and everything below it) from the live tree and
    /// from every stored commit, deletes at once every object that held it, and checks that
    /// none remains; see [`PurgeReport`]. Runs again on a lost race, like a tool command.
    ///
    /// Live files elsewhere that hold one of its contents (equal contents are one object) or
    /// that a rename made of it are [`Error::PurgeLiveCopies`], unless `options.all_copies`;
    /// `options.dry_run` reports what would be erased and changes nothing.
    pub async fn purge(
        &self,
        path: &str,
        options: PurgeOptions,
        progress: &dyn Progress,
    ) -> Result<PurgeReport, Error> {
        let repo =
            self.repository().history().ok_or_else(|| Error::NoHistory { store: self.repository().to_string() })?;
        let path = &MemoryPath::parse(path)?;
        // The store makes purge's compare-and-swap itself: the driver gives it the head and
        // runs it again when it lost.
        self.tx
            .drive(&self.writer(), move |head| {
                Box::pin(async move {
                    repo.purge(&head, path, self.actor(), options, progress).await.map_err(|e| match e {
                        PurgeError::Store(StoreError::Conflict) => Failure::LostRace,
                        PurgeError::Store(e) => Failure::Failed(self.store_error(e)),
                        PurgeError::Root => Failure::Failed(Error::PurgeRoot),
                        PurgeError::NotFound { path } => Failure::Failed(Error::NothingToPurge { path }),
                        PurgeError::LiveCopies { path, copies } => {
                            Failure::Failed(Error::PurgeLiveCopies { path, copies })
                        }
                        e => Failure::Failed(Error::Purge { reason: e.to_string() }),
                    })
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Dialect;

    #[tokio::test]
    async fn purges_and_reports_exactly() {
        let memfs = Memfs::ephemeral(Dialect::Spec).unwrap().with_actor("eraser");
        for input in [
            json!({"command": "create", "path": "/memories/secret.md", "file_text": "s1"}),
            json!({"command": "create", "path": "/memories/keep.md", "file_text": "k"}),
            json!({"command": "str_replace", "path": "/memories/secret.md", "old_str": "s1", "new_str": "s2"}),
        ] {
            assert!(!memfs.call(&input).await.is_error);
        }
        let report = memfs.purge("/memories//secret.md", PurgeOptions::default(), &()).await.unwrap();
        // The words are `memfs purge`'s (crates/memfs-cli/src/purge.rs); these are the facts.
        assert_eq!((report.path.as_str(), report.generation, report.dry_run), ("/memories/secret.md", 4, false));
        assert_eq!(report.removed, ["/memories/secret.md"]);
        assert_eq!((report.versions, report.commits, report.changed, report.rewritten), (2, 3, 3, 3));
        assert_eq!((report.replaced_commits, report.remaining, report.remaining_commits), (3, 0, 0));
        assert!(report.history_copies.is_empty() && report.stored_again.is_empty());
        let log = memfs.log(None, None).await.unwrap();
        assert_eq!(log[0].actor, "eraser");
        assert_eq!(log[0].command, r#"{"command":"purge","path":"/memories/secret.md","versions":2}"#);
        assert!(log[1..].iter().all(|c| !c.command.contains("secret") && !c.command.contains("s1")));

        assert_eq!(
            memfs.purge("/memories", PurgeOptions::default(), &()).await.unwrap_err().to_string(),
            "cannot purge /memories itself: name a file or directory below it"
        );
        assert_eq!(
            memfs.purge("/memories/secret.md", PurgeOptions::default(), &()).await.unwrap_err().to_string(),
            "nothing to purge: /memories/secret.md is not in the tree, in its kept history or in any other stored commit"
        );
        assert_eq!(
            memfs.purge("/etc/passwd", PurgeOptions::default(), &()).await.unwrap_err().to_string(),
            "path \"/etc/passwd\" does not start with /memories"
        );
    }
}
