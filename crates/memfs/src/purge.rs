//! `purge`: erase a path from the live tree and from all stored history, for a
//! right-to-erasure request, and report what proves it (see `memfs_store`'s purge for the
//! protocol).

use std::fmt::Write as _;

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
        let repo = self.history.as_deref().ok_or_else(|| Error::NoHistory { store: self.repository().to_string() })?;
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

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What `memfs purge` prints: the purge commit and what it deleted from the live tree, what
/// it removed from history, the objects deleted, the log's compaction (a local folder), and
/// the verification.
///
/// ```text
/// @10: purged /memories/secret.md
///   D /memories/secret.md
/// removed 5 versions from 9 of 9 commits (9 rewritten)
/// deleted: 31 objects (9013 bytes)
/// compacted the log: 14583 bytes before, 5122 bytes after
/// verified: none of the 5 content objects remains, nor any of the 9 replaced commits
/// ```
pub fn render_purged(r: &PurgeReport) -> String {
    if r.dry_run {
        return render_plan(r);
    }
    let mut out = format!("@{}: purged {}\n", r.generation, r.path);
    removals(&mut out, r, "removed");
    let _ = writeln!(
        out,
        "deleted: {} ({})",
        plural(r.deleted, "object", "objects"),
        plural(r.deleted_bytes, "byte", "bytes")
    );
    if r.log_bytes_before > 0 {
        let _ = writeln!(
            out,
            "compacted the log: {} before, {} after",
            plural(r.log_bytes_before, "byte", "bytes"),
            plural(r.log_bytes_after, "byte", "bytes")
        );
    }
    let contents = plural(r.versions, "content object", "content objects");
    let commits = plural(r.replaced_commits, "replaced commit", "replaced commits");
    match (r.remaining, r.remaining_commits) {
        (0, 0) => {
            let _ = writeln!(out, "verified: none of the {contents} remains, nor any of the {commits}");
        }
        (left, 0) => {
            let verb = if left == 1 { "is" } else { "are" };
            let _ = writeln!(
                out,
                "NOT verified: {left} of the {contents} {verb} stored again, by a commit made during the purge, at:"
            );
            for path in &r.stored_again {
                let _ = writeln!(out, "  {path}");
            }
        }
        (left, commits_left) => {
            let _ = writeln!(
                out,
                "NOT verified: the deletion was undone (writers kept committing): {left} of the {contents} and \
                 {commits_left} of the {commits} are still stored"
            );
        }
    }
    out
}

/// What a purge removes (`verb`: "removed") or would remove ("would remove"): the live
/// paths, the other paths whose history copies go with it, and the versions and commits.
fn removals(out: &mut String, r: &PurgeReport, verb: &str) {
    for path in &r.removed {
        let _ = writeln!(out, "  D {path}");
    }
    if !r.history_copies.is_empty() {
        let _ = writeln!(out, "{verb} from history, where these paths held the same content:");
        for path in &r.history_copies {
            let _ = writeln!(out, "  {path}");
        }
    }
    let _ = write!(
        out,
        "{verb} {} from {} of {} ({} rewritten)",
        plural(r.versions, "version", "versions"),
        r.changed,
        plural(r.commits, "commit", "commits"),
        r.rewritten
    );
    if r.unreachable_commits > 0 {
        let _ =
            write!(out, "; searched {}", plural(r.unreachable_commits, "unreachable commit", "unreachable commits"));
    }
    out.push('\n');
}

/// What `memfs purge --dry-run` prints (and what the question before a purge shows): what the
/// purge would delete from the live tree and from history, and how many objects.
///
/// ```text
/// would purge /memories/secret.md as @10:
///   D /memories/secret.md
/// would remove 5 versions from 9 of 9 commits (9 rewritten)
/// would delete: 31 objects (9013 bytes), including 9 replaced commits
/// ```
pub fn render_plan(r: &PurgeReport) -> String {
    let mut out = format!("would purge {} as @{}:\n", r.path, r.generation);
    removals(&mut out, r, "would remove");
    let _ = writeln!(
        out,
        "would delete: {} ({}), including {}",
        plural(r.deleted, "object", "objects"),
        plural(r.deleted_bytes, "byte", "bytes"),
        plural(r.replaced_commits, "replaced commit", "replaced commits")
    );
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Dialect;

    #[tokio::test]
    async fn purges_and_renders_exactly() {
        let memfs = Memfs::ephemeral(Dialect::Spec).unwrap().with_actor("eraser");
        for input in [
            json!({"command": "create", "path": "/memories/secret.md", "file_text": "s1"}),
            json!({"command": "create", "path": "/memories/keep.md", "file_text": "k"}),
            json!({"command": "str_replace", "path": "/memories/secret.md", "old_str": "s1", "new_str": "s2"}),
        ] {
            assert!(!memfs.call(&input).await.is_error);
        }
        let report = memfs.purge("/memories//secret.md", PurgeOptions::default(), &()).await.unwrap();
        let text = render_purged(&report);
        let expected = format!(
            "@4: purged /memories/secret.md\n  D /memories/secret.md\nremoved 2 versions from 3 of 3 commits (3 rewritten)\n\
             deleted: {} objects ({} bytes)\nverified: none of the 2 content objects remains, nor any of the 3 replaced commits\n",
            report.deleted, report.deleted_bytes
        );
        assert_eq!(text, expected);
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

    #[test]
    fn renders_singulars_unreachable_commits_and_a_failed_verification() {
        let mut r = PurgeReport::default();
        (r.path, r.generation, r.versions, r.commits, r.changed, r.rewritten) = ("/memories/a".into(), 2, 1, 1, 1, 1);
        (r.unreachable_commits, r.replaced_commits, r.deleted, r.deleted_bytes) = (1, 2, 1, 1);
        (r.log_bytes_before, r.log_bytes_after) = (300, 100);
        assert_eq!(
            render_purged(&r),
            "@2: purged /memories/a\nremoved 1 version from 1 of 1 commit (1 rewritten); searched 1 unreachable commit\n\
             deleted: 1 object (1 byte)\ncompacted the log: 300 bytes before, 100 bytes after\n\
             verified: none of the 1 content object remains, nor any of the 2 replaced commits\n"
        );
        r.remaining = 1;
        r.stored_again = vec!["/memories/b".into()];
        assert!(render_purged(&r).ends_with(
            "NOT verified: 1 of the 1 content object is stored again, by a commit made during the purge, at:\n  \
             /memories/b\n"
        ));
        (r.remaining_commits, r.stored_again) = (2, Vec::new());
        assert!(render_purged(&r).ends_with(
            "NOT verified: the deletion was undone (writers kept committing): 1 of the 1 content object and 2 of the 2 \
             replaced commits are still stored\n"
        ));
    }
}
