//! A person's edit of a whole file, safe against concurrent writers: the file is written only
//! if it still holds the content the person started from (`memfs ui`).
//!
//! A person edits for minutes while agents may write the same file. The editor keeps the
//! [`File::version`] it read (the id of the content object: it changes exactly when the
//! content does); [`Memfs::edit`] plans against each head it tries, and writes only while the
//! file there still has that version. Since the plan and the compare-and-swap of its commit
//! see the same head, a write that came in between is never overwritten: the edit answers
//! [`Edited::Changed`] and the person decides (reload, or merge and edit again against the
//! new version).

use memfs_core::{Context, MemoryPath, Node, ToolResult, rewrite_in};
use memfs_store::Record;

use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::{Commit, Decision};

/// A file as the live tree holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct File {
    /// The path, normalised.
    pub path: String,
    /// The content.
    pub text: String,
    /// Names the content: what an edit of it sends back to [`Memfs::edit`].
    pub version: String,
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Edited {
    /// The file held the version edited; the answer is the tool's (a policy refusal is an
    /// `is_error` answer and writes nothing).
    Answered {
        /// The tool's answer, in the handle's dialect.
        result: ToolResult,
        /// The file's version after the edit.
        version: String,
    },
    /// The file holds that version and the text is its content already: nothing to write.
    Unchanged {
        /// The file's version.
        version: String,
    },
    /// The file changed (or went) since that version: nothing was written.
    Changed {
        /// The file as it is now; `None` when it is no longer there.
        now: Option<File>,
    },
}

impl Memfs {
    /// The file at `path` in the newest head, with its version. [`Error::NotFound`] when
    /// no file is there.
    pub async fn file(&self, path: &str) -> Result<File, Error> {
        let p = MemoryPath::parse(path)?;
        let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
        match self.node_at(&head.tree, p.components()).await? {
            Some(Node::File(f)) => {
                let bytes = self.repository().blob(&f.id).await.map_err(|e| self.store_error(e))?;
                Ok(File {
                    path: p.normalized(),
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                    version: f.id.to_hex(),
                })
            }
            _ => Err(Error::NotFound { path: p.normalized(), rev: "HEAD".into() }),
        }
    }

    /// Writes `text` as the whole content of the file at `path`, if it still has `version`
    /// (see the module's documentation); a commit by the handle's actor, recorded as a
    /// `str_replace` of the whole content, under the store's policy.
    pub async fn edit(&self, path: &str, version: &str, text: &str) -> Result<Edited, Error> {
        let p = MemoryPath::parse(path)?;
        let writer = self.writer();
        let (today, dialect) = (writer.today, self.dialect());
        let p = &p;
        let answered = self
            .tx
            .run(&writer, None, move |head, mut fetched| {
                Box::pin(async move {
                    let (head, fetched) = (&*head, &mut fetched);
                    match self.node_at(&head.tree, p.components()).await? {
                        // Content-addressed: the text's address is the file's id when it holds it.
                        Some(Node::File(f)) if f.id.to_hex() == version => {
                            if self.repository().address(text.as_bytes()) == f.id {
                                return Ok(Decision::Done(Some(None)));
                            }
                        }
                        _ => return Ok(Decision::Done(None)),
                    }
                    let context = Context { dialect, policy: &head.policy, today };
                    let outcome = fetched.resolve(|f| rewrite_in(p.as_sent(), text, &head.tree, &context, f)).await;
                    let outcome = outcome.map_err(|e| self.store_error(e))?;
                    let Some(mutation) = outcome.mutation else {
                        return Ok(Decision::Done(Some(Some((outcome.result, version.to_owned())))));
                    };
                    let record = Record::Tool(mutation.applied.clone().expect("an edit records its str_replace"));
                    // The content written (after redaction) is the file's one new object.
                    let written = mutation.blobs.first().map_or_else(|| version.to_owned(), |b| b.id.to_hex());
                    let then = Some(Some((outcome.result, written)));
                    Ok(Decision::Commit(Commit { mutation, record, touch: Vec::new(), with_reads: true, then }))
                })
            })
            .await?;
        match answered.value {
            // The version this commit wrote, not the file's as read again: a writer that came
            // after must still be seen as a change by the next edit.
            Some(Some((result, version))) => Ok(Edited::Answered { result, version }),
            Some(None) => Ok(Edited::Unchanged { version: version.to_owned() }),
            None => match self.file(path).await {
                Ok(now) => Ok(Edited::Changed { now: Some(now) }),
                Err(Error::NotFound { .. }) => Ok(Edited::Changed { now: None }),
                Err(e) => Err(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;
    use serde_json::json;

    async fn store(text: &str) -> Memfs {
        let memfs = Memfs::ephemeral(Dialect::Spec).unwrap();
        let r = memfs.call(&json!({"command": "create", "path": "/memories/a.md", "file_text": text})).await;
        assert!(!r.is_error, "{r:?}");
        memfs
    }

    #[tokio::test]
    async fn writes_over_the_version_it_started_from_and_only_over_it() {
        let memfs = store("one\ntwo\n").await;
        let opened = memfs.file("/memories/a.md").await.unwrap();
        assert_eq!((opened.path.as_str(), opened.text.as_str()), ("/memories/a.md", "one\ntwo\n"));
        let Edited::Answered { result, version } =
            memfs.edit("/memories/a.md", &opened.version, "one\n2\n").await.unwrap()
        else {
            panic!("not written")
        };
        assert_eq!(
            result.content,
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tone\n     2\t2\n     3\t"
        );
        let now = memfs.file("/memories/a.md").await.unwrap();
        assert_eq!((now.text.as_str(), now.version.as_str()), ("one\n2\n", version.as_str()));
        // The text it holds: nothing to write, no commit.
        let same = memfs.edit("/memories/a.md", &version, "one\n2\n").await.unwrap();
        assert_eq!(same, Edited::Unchanged { version: version.clone() });
        // The old version again: the file changed since, nothing is written.
        let stale = memfs.edit("/memories/a.md", &opened.version, "lost\n").await.unwrap();
        assert_eq!(stale, Edited::Changed { now: Some(now.clone()) });
        assert_eq!(memfs.file("/memories/a.md").await.unwrap(), now);
        // Gone: nothing to come back to.
        let r = memfs.call(&json!({"command": "delete", "path": "/memories/a.md"})).await;
        assert!(!r.is_error);
        assert_eq!(memfs.edit("/memories/a.md", &now.version, "x").await.unwrap(), Edited::Changed { now: None });
        assert_eq!(memfs.stats().commits, 3);
    }

    #[tokio::test]
    async fn an_empty_file_is_edited_like_any_other_and_a_bad_path_is_refused() {
        let memfs = store("").await;
        let opened = memfs.file("/memories/a.md").await.unwrap();
        let edited = memfs.edit("/memories/a.md", &opened.version, "now\n").await.unwrap();
        assert!(matches!(edited, Edited::Answered { ref result, .. } if !result.is_error), "{edited:?}");
        assert_eq!(memfs.file("/memories/a.md").await.unwrap().text, "now\n");
        assert!(memfs.edit("/etc/passwd", &opened.version, "x").await.is_err());
        assert!(matches!(memfs.file("/memories/none.md").await, Err(Error::NotFound { .. })));
    }
}
