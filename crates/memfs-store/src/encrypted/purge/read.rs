//! Reading for a purge: the directory pages of the trees into the [`Graph`], the stored
//! commits outside the kept history, and where the head still holds given contents.

use std::collections::{HashMap, HashSet};

use futures::{StreamExt, stream};
use memfs_core::{Node, ObjectId, normalized};
use memfs_crypt::ObjectKind;

use super::PARALLEL;
use super::graph::Graph;
use crate::encrypted::EncryptedRepository;
use crate::error::Error;
use crate::format::{self, CommitObject, Page};
use crate::progress::Progress;

impl EncryptedRepository {
    /// Reads every directory page below `roots` into `graph` (pages it holds already are not
    /// read again). `strict`: a page that cannot be read is an error; otherwise it is skipped
    /// (the trees of unreachable commits may be partly deleted).
    pub(super) async fn read_trees(
        &self,
        roots: Vec<ObjectId>,
        strict: bool,
        graph: &mut Graph,
        progress: &dyn Progress,
    ) -> Result<(), Error> {
        progress.phase("directories", None);
        let mut level = roots;
        while !level.is_empty() {
            level.sort();
            level.dedup();
            level.retain(|id| graph.tried.insert(*id));
            progress.extend(level.len() as u64);
            let read: Vec<(ObjectId, Result<Page, Error>)> = stream::iter(level)
                .map(|id| async move {
                    let page = self.get_object(ObjectKind::Dir, &id).await.and_then(|p| format::decode_page(&p, &id));
                    (id, page)
                })
                .buffered(PARALLEL)
                .collect()
                .await;
            progress.advance(read.len() as u64);
            let mut next = Vec::new();
            for (id, page) in read {
                let page = match page {
                    Ok(page) => page,
                    Err(e) if strict => return Err(e),
                    Err(_) => continue,
                };
                match &page {
                    Page::Index(index) => next.extend(&index.pages),
                    Page::Leaf(entries) => next.extend(entries.iter().filter_map(|(_, n)| match n {
                        Node::Dir(d) => d.id(),
                        Node::File(_) => None,
                    })),
                }
                graph.pages.insert(id, page);
            }
            level = next;
        }
        Ok(())
    }

    /// The stored commits that are not in `known`: every listed object outside it is opened as
    /// a commit, and those that open are returned.
    pub(super) async fn other_commits(
        &self,
        listing: &HashMap<ObjectId, u64>,
        known: &HashSet<ObjectId>,
        progress: &dyn Progress,
    ) -> Result<Vec<(ObjectId, CommitObject)>, Error> {
        let mut candidates: Vec<ObjectId> = listing.keys().filter(|id| !known.contains(*id)).copied().collect();
        candidates.sort();
        progress.phase("unreachable", Some(candidates.len() as u64));
        let found: Vec<Option<(ObjectId, CommitObject)>> = stream::iter(candidates)
            .map(|id| async move {
                // Another kind does not open as a commit (the kind is bound in the seal), and an
                // object deleted meanwhile is no longer there to purge.
                let commit = match self.get_object(ObjectKind::Commit, &id).await {
                    Ok(plain) => CommitObject::decode(&plain).ok().map(|c| (id, c)),
                    Err(_) => None,
                };
                progress.advance(1);
                commit
            })
            .buffered(PARALLEL)
            .collect()
            .await;
        Ok(found.into_iter().flatten().collect())
    }

    /// The paths of the head's tree whose content is in `ids`, in tree order.
    pub(super) async fn paths_holding(&self, ids: &HashSet<ObjectId>, graph: &mut Graph) -> Result<Vec<String>, Error> {
        let Some((head, _)) = self.read_head().await? else { return Ok(Vec::new()) };
        let root = self.commit_object(&head.commit).await?.tree;
        self.read_trees(vec![root], true, graph, &()).await?;
        let mut out = Vec::new();
        let mut stack = vec![(Vec::new(), root)];
        while let Some((prefix, id)) = stack.pop() {
            let Some(dir) = graph.dir(&id) else { continue };
            for (name, node) in dir.entries() {
                let path = [&prefix[..], std::slice::from_ref(name)].concat();
                match node {
                    Node::File(f) if ids.contains(&f.id) => out.push(normalized(&path)),
                    Node::File(_) => {}
                    Node::Dir(d) => stack.extend(d.id().map(|id| (path, id))),
                }
            }
        }
        out.sort();
        Ok(out)
    }
}
