//! History, integrity and retention of a store: `log`, `show`, `diff`, `restore`, `undo`,
//! `check` and `gc`.
//!
//! Revisions follow [`Revision`]: `HEAD`, `HEAD~N`, `@N` (a generation) or a commit id prefix
//! of at least 8 hex digits. `restore --at` also takes a time: RFC 3339 (`2025-06-01T12:00:00Z`)
//! or unix seconds; a string of digits that is also a commit id prefix is refused as ambiguous.
//!
//! `restore` and `undo` are commits like any tool command: the new tree is built from the
//! past one (the past subtree grafted into the live tree, sharing every object) and committed
//! by compare-and-swap, re-planned against the new head on a lost race.

mod diff;
mod time;

use std::fmt::Write as _;
use std::sync::Arc;

use memfs_core::{Change, MemoryPath, Mutation, Name, Node, Tree};
use memfs_store::{EncryptedRepository, Error as StoreError, Fetched, Head, MIN_PREFIX, Revision};

pub use self::diff::{FileChange, Status};
pub use memfs_store::{
    CheckOptions, CheckReport, CommitRecord, DEFAULT_GRACE_MS, GcOptions, GcReport, Operation, PolicyChange, Problem,
    Progress, Record, ResealOptions, ResealReport,
};

use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::{Attempt, Commit, Committed, Decision};

/// What `show` found.
#[derive(Debug, Clone)]
pub enum Shown {
    /// `show REV`: the commit.
    Commit(Box<CommitRecord>),
    /// `show REV:PATH` of a file: its content.
    File(Arc<[u8]>),
    /// `show REV:PATH` of a directory: its entries, directories with a trailing `/`.
    Dir(Vec<String>),
}

/// The outcome of a restore.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Restored {
    /// The new commit's generation; `None` when the path already matched.
    pub generation: Option<u64>,
    /// The commit restored from.
    pub source: CommitRecord,
    /// The path restored, normalised.
    pub path: String,
    /// What changed.
    pub changes: Vec<Change>,
}

/// The outcome of an undo.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Undone {
    /// The new commit's generation; `None` when the undone commit changed nothing.
    pub generation: Option<u64>,
    /// The commit undone (the head it was based on).
    pub undone: CommitRecord,
    /// What changed.
    pub changes: Vec<Change>,
}

/// A new tree for a history commit, planned against one head.
struct Plan<T> {
    tree: Tree,
    changes: Vec<FileChange>,
    record: Record,
    about: T,
}

impl Memfs {
    fn history(&self) -> Result<&EncryptedRepository, Error> {
        self.repository().history().ok_or_else(|| Error::NoHistory { store: self.repository().to_string() })
    }

    /// Up to `limit` commits, newest first; with `path`, only those that changed it (or
    /// something below or above it).
    pub async fn log(&self, limit: Option<usize>, path: Option<&str>) -> Result<Vec<CommitRecord>, Error> {
        let repo = self.history()?;
        let path = path.map(memfs_core::MemoryPath::parse).transpose()?;
        repo.log(limit, path.as_ref()).await.map_err(|e| self.store_error(e))
    }

    /// The commit a revision names.
    pub async fn resolve(&self, rev: &str) -> Result<CommitRecord, Error> {
        let repo = self.history()?;
        repo.resolve(&Revision::parse(rev)?).await.map_err(|e| self.store_error(e))
    }

    /// The commit `at` names: a revision, or a time (RFC 3339, a plain date or date and time
    /// in UTC, unix seconds: the newest commit made at or before it), as every `--at` takes it.
    pub async fn commit_at(&self, at: &str) -> Result<CommitRecord, Error> {
        let repo = self.history()?;
        let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
        self.resolve_at(repo, &head, at).await
    }

    /// `REV` (the commit) or `REV:PATH` (a file's content or a directory's entries then).
    pub async fn show(&self, spec: &str) -> Result<Shown, Error> {
        let (rev, path) = match spec.split_once(':') {
            Some((rev, path)) => (rev, Some(path)),
            None => (spec, None),
        };
        let record = self.resolve(rev).await?;
        match path {
            None => Ok(Shown::Commit(Box::new(record))),
            Some(path) => self.shown(&record, rev, path).await,
        }
    }

    /// What `path` held at `at` (see [`Memfs::commit_at`]): a file's content or a directory's
    /// entries.
    pub async fn read_at(&self, at: &str, path: &str) -> Result<Shown, Error> {
        let record = self.commit_at(at).await?;
        self.shown(&record, at, path).await
    }

    /// What `path` holds in commit `record` (which `at` named).
    async fn shown(&self, record: &CommitRecord, at: &str, path: &str) -> Result<Shown, Error> {
        let p = memfs_core::MemoryPath::parse(path)?;
        match self.node_at(&record.tree(), p.components()).await? {
            None => Err(Error::NotFound { path: p.normalized(), rev: at.to_owned() }),
            Some(Node::File(f)) => {
                Ok(Shown::File(self.repository().blob(&f.id).await.map_err(|e| self.store_error(e))?))
            }
            Some(Node::Dir(d)) => {
                let dir = self.load(&d).await?;
                let entries = dir.entries().map(|(name, node)| match node {
                    Node::File(_) => name.to_string(),
                    Node::Dir(_) => format!("{name}/"),
                });
                Ok(Shown::Dir(entries.collect()))
            }
        }
    }

    /// The files that differ from `from` to `to` (default `HEAD`), with both commits.
    pub async fn changes(
        &self,
        from: &str,
        to: Option<&str>,
    ) -> Result<(CommitRecord, CommitRecord, Vec<FileChange>), Error> {
        let a = self.resolve(from).await?;
        let b = self.resolve(to.unwrap_or("HEAD")).await?;
        let changes = diff::diff_trees(self.repository().as_ref(), a.tree().root(), b.tree().root())
            .await
            .map_err(|e| self.store_error(e))?;
        Ok((a, b, changes))
    }

    /// The files that differ from `from` to `to` (default `HEAD`), only those at or below
    /// `within` when given, each with its unified diff; with both commits.
    pub async fn patches(
        &self,
        from: &str,
        to: Option<&str>,
        within: Option<&str>,
    ) -> Result<(CommitRecord, CommitRecord, Vec<(FileChange, String)>), Error> {
        let (a, b, changes) = self.changes(from, to).await?;
        let (old_label, new_label) = (format!("@{}:", a.generation), format!("@{}:", b.generation));
        let inside = |path: &str| {
            within.is_none_or(|w| path == w || path.strip_prefix(w).is_some_and(|rest| rest.starts_with('/')))
        };
        let mut out = Vec::new();
        for change in changes.into_iter().filter(|c| inside(&c.path)) {
            let text = diff::patch(self.repository().as_ref(), &change, &old_label, &new_label)
                .await
                .map_err(|e| self.store_error(e))?;
            out.push((change, text));
        }
        Ok((a, b, out))
    }

    /// `memfs diff`: one `A`/`M`/`D` line per differing file from `from` to `to` (default
    /// `HEAD`); with `patch`, each followed by its unified diff.
    pub async fn diff(&self, from: &str, to: Option<&str>, patch: bool) -> Result<String, Error> {
        let (a, b, changes) = self.changes(from, to).await?;
        let (old_label, new_label) = (format!("@{}:", a.generation), format!("@{}:", b.generation));
        let mut out = String::new();
        for change in &changes {
            let _ = writeln!(out, "{} {}", change.status.letter(), change.path);
            if patch {
                let text = diff::patch(self.repository().as_ref(), change, &old_label, &new_label)
                    .await
                    .map_err(|e| self.store_error(e))?;
                out.push_str(&text);
            }
        }
        Ok(out)
    }

    /// Makes `path` (default: the whole tree) what it was at `at` (a revision, or the newest
    /// commit at or before a time), as a new commit. Nothing is committed when it already is,
    /// nor for a `dry_run`, which reports what the commit would change (`generation` `None`).
    pub async fn restore(&self, at: &str, path: Option<&str>, dry_run: bool) -> Result<Restored, Error> {
        let repo = self.history()?;
        let p = memfs_core::MemoryPath::parse(path.unwrap_or(memfs_core::ROOT))?;
        let normalized = p.normalized();
        let (p, normalized) = (&p, &normalized);
        let planned = self
            .commit_plan(dry_run, move |head, mut fetched| {
                Box::pin(async move {
                    let (head, fetched) = (&*head, &mut fetched);
                    let source = self.resolve_at(repo, head, at).await?;
                    let node = self.node_at(&source.tree(), p.components()).await?;
                    let grafted =
                        fetched.resolve(|f| memfs_core::graft(&head.tree, p.components(), node.clone(), f)).await;
                    let tree = grafted.map_err(|e| self.store_error(e))?;
                    let changes = diff::diff_trees(self.repository().as_ref(), head.tree.root(), tree.root())
                        .await
                        .map_err(|e| self.store_error(e))?;
                    let record = Record::from(Operation::Restore {
                        path: normalized.clone(),
                        at: at.to_owned(),
                        commit: source.id.clone(),
                        generation: source.generation,
                    });
                    Ok(Plan { tree, changes, record, about: source })
                })
            })
            .await?;
        let (source, changes) = planned.value;
        Ok(Restored { generation: planned.generation, source, path: normalized.clone(), changes })
    }

    /// Makes the tree what it was before the newest commit, as a new commit (undoing an undo
    /// redoes). A `dry_run` reports what the commit would change and commits nothing.
    pub async fn undo(&self, dry_run: bool) -> Result<Undone, Error> {
        let repo = self.history()?;
        let planned = self
            .commit_plan(dry_run, move |head, _| {
                Box::pin(async move {
                    let head = &*head;
                    let undone = match repo.resolve_in(head, &Revision::Head(0)).await {
                        Ok(c) => c,
                        Err(StoreError::UnknownRevision { .. }) => {
                            return Err(Error::NothingToUndo { reason: "the store has no commits yet".into() });
                        }
                        Err(e) => return Err(self.store_error(e)),
                    };
                    let before = match undone.generation {
                        1 => Tree::empty(),
                        g => match repo.resolve_in(head, &Revision::Head(1)).await {
                            Ok(c) => c.tree(),
                            Err(StoreError::UnknownRevision { .. }) => {
                                let reason = format!("the commit before @{g} was removed by gc");
                                return Err(Error::NothingToUndo { reason });
                            }
                            Err(e) => return Err(self.store_error(e)),
                        },
                    };
                    let changes = diff::diff_trees(self.repository().as_ref(), head.tree.root(), before.root())
                        .await
                        .map_err(|e| self.store_error(e))?;
                    let record =
                        Record::from(Operation::Undo { commit: undone.id.clone(), generation: undone.generation });
                    Ok(Plan { tree: before, changes, record, about: undone })
                })
            })
            .await?;
        let (undone, changes) = planned.value;
        Ok(Undone { generation: planned.generation, undone, changes })
    }

    /// Verifies every object reachable from the head (see [`EncryptedRepository::check`]).
    pub async fn check(&self, options: CheckOptions, progress: &dyn Progress) -> Result<CheckReport, Error> {
        self.history()?.check(options, progress).await.map_err(|e| self.store_error(e))
    }

    /// Applies retention and deletes unreachable objects (see [`EncryptedRepository::gc`]).
    pub async fn gc(&self, options: &GcOptions, progress: &dyn Progress) -> Result<GcReport, Error> {
        self.history()?.gc(options, progress).await.map_err(|e| self.store_error(e))
    }

    /// Seals again, under the newest key epoch, every object held under an older one (see
    /// [`EncryptedRepository::reseal`]).
    pub async fn reseal(&self, options: ResealOptions, progress: &dyn Progress) -> Result<ResealReport, Error> {
        self.history()?.reseal(options, progress).await.map_err(|e| self.store_error(e))
    }

    /// The commit `at` names in the history of `head`: a time (RFC 3339 or unix seconds) or a
    /// revision.
    async fn resolve_at(&self, repo: &EncryptedRepository, head: &Head, at: &str) -> Result<CommitRecord, Error> {
        if let Some(time_ms) = time::parse(at) {
            let digits = at.bytes().all(|b| b.is_ascii_digit());
            if digits && at.len() >= MIN_PREFIX {
                match repo.resolve_in(head, &Revision::Prefix(at.to_owned())).await {
                    Err(StoreError::UnknownRevision { .. }) => {}
                    Ok(_) | Err(StoreError::AmbiguousRevision { .. }) => {
                        return Err(Error::AmbiguousTime { at: at.to_owned() });
                    }
                    Err(e) => return Err(self.store_error(e)),
                }
            }
            let found = repo.commit_at_or_before(head, time_ms).await.map_err(|e| self.store_error(e))?;
            return found.ok_or_else(|| Error::NoCommitAt { time: at.to_owned() });
        }
        let rev = Revision::parse(at).map_err(|_| Error::BadAt { at: at.to_owned() })?;
        repo.resolve_in(head, &rev).await.map_err(|e| self.store_error(e))
    }

    /// Plans against the newest head and commits through the transaction driver, like a tool
    /// command. Returns the new generation (`None` if the plan changes nothing, and nothing is
    /// committed), what the plan was about, and what changed. A `dry_run` plans against the
    /// newest head and stops there: what would change, and nothing committed.
    async fn commit_plan<'x, T: Send + 'x>(
        &'x self,
        dry_run: bool,
        mut plan: impl FnMut(Arc<Head>, Fetched<'x>) -> Attempt<'x, Plan<T>, Error>,
    ) -> Result<Committed<(T, Vec<Change>)>, Error> {
        self.tx
            .run(&self.writer(), None, move |head, fetched| {
                let planned = plan(head, fetched);
                Box::pin(async move {
                    let planned = planned.await?;
                    let changes: Vec<Change> = planned.changes.iter().map(FileChange::to_change).collect();
                    if changes.is_empty() || dry_run {
                        return Ok(Decision::Done((planned.about, changes)));
                    }
                    // A file brought back counts as used today, or expiration would take it again.
                    let touch = planned
                        .changes
                        .iter()
                        .filter_map(|c| {
                            Some(memfs_core::Access { path: MemoryPath::parse(&c.path).ok()?, id: c.new?.id })
                        })
                        .collect();
                    let mutation =
                        Mutation { tree: planned.tree, changes: changes.clone(), blobs: Vec::new(), applied: None };
                    let then = (planned.about, changes);
                    Ok(Decision::Commit(Commit { mutation, record: planned.record, touch, with_reads: false, then }))
                })
            })
            .await
    }

    pub(crate) async fn load(&self, dir: &memfs_core::DirRef) -> Result<Arc<memfs_core::Dir>, Error> {
        memfs_store::whole_dir(self.repository().as_ref(), dir).await.map_err(|e| self.store_error(e))
    }

    /// The node at `components` of `tree` (the root directory for none).
    pub(crate) async fn node_at(&self, tree: &Tree, components: &[Name]) -> Result<Option<Node>, Error> {
        let mut node = Node::Dir(tree.root().clone());
        for name in components {
            let Node::Dir(d) = &node else { return Ok(None) };
            match self.load(d).await?.get(name) {
                Some(child) => node = child.clone(),
                None => return Ok(None),
            }
        }
        Ok(Some(node))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Dialect;

    /// Digits are unix seconds, unless they also start a commit id: then `--at` refuses them.
    /// About one commit id in 44 starts with 8 decimal digits; make commits until one does.
    #[tokio::test]
    async fn digits_that_start_a_commit_id_are_ambiguous() {
        let memfs = Memfs::ephemeral(Dialect::Spec).unwrap();
        for i in 0..2000 {
            let input = json!({"command": "create", "path": format!("/memories/{i}"), "file_text": "x"});
            assert!(!memfs.call(&input).await.is_error);
            let head = memfs.resolve("HEAD").await.unwrap();
            let prefix = &head.id[..8];
            if prefix.bytes().all(|b| b.is_ascii_digit()) {
                let err = memfs.restore(prefix, None, false).await.unwrap_err().to_string();
                assert_eq!(
                    err,
                    format!(
                        "`{prefix}` is both a commit id prefix and a time in unix seconds: give more of the id, or the time in RFC 3339"
                    )
                );
                // With a letter in it, a longer prefix is a revision only.
                let end = head.id.find(|c: char| c.is_ascii_alphabetic()).map_or(64, |k| k.max(8) + 1);
                let longer = &head.id[..end];
                let restored = memfs.restore(longer, None, false).await.unwrap();
                assert_eq!((restored.generation, restored.source.generation), (None, head.generation));
                return;
            }
        }
        panic!("no commit id started with 8 digits in 2000 commits");
    }
}
