//! Differences between two trees: which files were added, removed or modified, and their
//! unified text diffs.
//!
//! Equal directory ids mean equal subtrees (ids are hashes of contents), so a diff only
//! descends where the trees differ: comparing a large store with its previous commit reads the
//! directories on the changed paths, not the whole tree.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use memfs_core::{Change, Dir, DirRef, FileRef, Node};
use memfs_store::{Error as StoreError, Repository};
use similar::TextDiff;

/// How a path differs between two trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Only in the newer tree.
    Added,
    /// Only in the older tree.
    Deleted,
    /// A file in both, with different contents.
    Modified,
}

impl Status {
    /// `A`, `D` or `M`.
    pub fn letter(self) -> char {
        match self {
            Status::Added => 'A',
            Status::Deleted => 'D',
            Status::Modified => 'M',
        }
    }
}

/// One differing file (or empty directory, whose path ends in `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// How it differs.
    pub status: Status,
    /// Its path, `/memories/…`.
    pub path: String,
    /// The file in the older tree.
    pub old: Option<FileRef>,
    /// The file in the newer tree.
    pub new: Option<FileRef>,
}

impl FileChange {
    /// As a commit records it.
    pub(crate) fn to_change(&self) -> Change {
        let path = self.path.clone();
        match self.status {
            Status::Added => Change::Created { path },
            Status::Deleted => Change::Deleted { path },
            Status::Modified => Change::Modified { path },
        }
    }
}

/// Every file that differs between `old` and `new`, depth-first in name order.
pub(crate) async fn diff_trees(
    repo: &dyn Repository,
    old: &DirRef,
    new: &DirRef,
) -> Result<Vec<FileChange>, StoreError> {
    let mut out = Vec::new();
    diff_dirs(repo, Some(old.clone()), Some(new.clone()), memfs_core::ROOT.to_owned(), &mut out).await?;
    Ok(out)
}

async fn load(repo: &dyn Repository, dir: Option<&DirRef>) -> Result<Option<Arc<Dir>>, StoreError> {
    match dir {
        None => Ok(None),
        Some(d) => Ok(Some(memfs_store::whole_dir(repo, d).await?)),
    }
}

fn diff_dirs<'a>(
    repo: &'a dyn Repository,
    old: Option<DirRef>,
    new: Option<DirRef>,
    path: String,
    out: &'a mut Vec<FileChange>,
) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
    Box::pin(async move {
        if let (Some(o), Some(n)) = (&old, &new)
            && o.id().is_some()
            && o.id() == n.id()
        {
            return Ok(());
        }
        let (o, n) = (load(repo, old.as_ref()).await?, load(repo, new.as_ref()).await?);
        let empty = |d: &Option<Arc<Dir>>| d.as_ref().is_some_and(|d| d.is_empty());
        // An empty directory that appears or disappears is a change of its own.
        if o.is_none() && empty(&n) {
            out.push(FileChange { status: Status::Added, path: format!("{path}/"), old: None, new: None });
        }
        if n.is_none() && empty(&o) {
            out.push(FileChange { status: Status::Deleted, path: format!("{path}/"), old: None, new: None });
        }
        let names: BTreeSet<_> =
            o.iter().chain(n.iter()).flat_map(|d| d.entries().map(|(name, _)| name.clone())).collect();
        for name in names {
            let child = format!("{path}/{name}");
            let a = o.as_ref().and_then(|d| d.get(&name));
            let b = n.as_ref().and_then(|d| d.get(&name));
            let file = |status, old: Option<&FileRef>, new: Option<&FileRef>| FileChange {
                status,
                path: child.clone(),
                old: old.copied(),
                new: new.copied(),
            };
            match (a, b) {
                (Some(Node::File(x)), Some(Node::File(y))) => {
                    if x.id != y.id {
                        out.push(file(Status::Modified, Some(x), Some(y)));
                    }
                }
                (Some(Node::File(x)), b) => {
                    out.push(file(Status::Deleted, Some(x), None));
                    if let Some(Node::Dir(y)) = b {
                        diff_dirs(repo, None, Some(y.clone()), child.clone(), out).await?;
                    }
                }
                (a, Some(Node::File(y))) => {
                    if let Some(Node::Dir(x)) = a {
                        diff_dirs(repo, Some(x.clone()), None, child.clone(), out).await?;
                    }
                    out.push(file(Status::Added, None, Some(y)));
                }
                (a, b) => {
                    let dir = |n: Option<&Node>| match n {
                        Some(Node::Dir(d)) => Some(d.clone()),
                        _ => None,
                    };
                    diff_dirs(repo, dir(a), dir(b), child.clone(), out).await?;
                }
            }
        }
        Ok(())
    })
}

/// The unified diff of one change (3 lines of context), headed `--- {old_label}{path}` and
/// `+++ {new_label}{path}` (`/dev/null` for a side without the file). Contents that are not
/// UTF-8 are reported as binary.
pub(crate) async fn patch(
    repo: &dyn Repository,
    change: &FileChange,
    old_label: &str,
    new_label: &str,
) -> Result<String, StoreError> {
    async fn text(repo: &dyn Repository, f: Option<&FileRef>) -> Result<Option<Arc<[u8]>>, StoreError> {
        match f {
            Some(f) => Ok(Some(repo.blob(&f.id).await?)),
            None => Ok(None),
        }
    }
    if change.old.is_none() && change.new.is_none() {
        return Ok(String::new());
    }
    let (a, b) = (text(repo, change.old.as_ref()).await?, text(repo, change.new.as_ref()).await?);
    let utf8 = |c: &Option<Arc<[u8]>>| match c {
        Some(bytes) => std::str::from_utf8(bytes).ok().map(str::to_owned),
        None => Some(String::new()),
    };
    let header = |label: &str, side: &Option<Arc<[u8]>>| match side {
        Some(_) => format!("{label}{}", change.path),
        None => "/dev/null".to_owned(),
    };
    let (old_name, new_name) = (header(old_label, &a), header(new_label, &b));
    let (Some(old), Some(new)) = (utf8(&a), utf8(&b)) else {
        return Ok(format!("--- {old_name}\n+++ {new_name}\nBinary contents differ\n"));
    };
    let diff = TextDiff::from_lines(old.as_str(), new.as_str());
    Ok(diff.unified_diff().context_radius(3).header(&old_name, &new_name).to_string())
}
