//! The conformance suite every [`Repository`] runs: a clean store in, panics on any deviation.

use memfs_core::{Command, Dialect, execute};

use crate::error::Error;
use crate::fetch::Fetched;
use crate::repository::{CommitInfo, Head, Repository};

async fn run(repo: &dyn Repository, cmd: &Command) -> (String, Option<memfs_core::Mutation>, Head) {
    let head = repo.head().await.expect("head");
    let out = Fetched::new(repo).resolve(|f| execute(cmd, &head.tree, Dialect::PythonSdk, f)).await.expect("objects");
    (out.result.content, out.mutation, head)
}

/// Checks the repository contract on an empty store.
pub async fn check_repository(repo: &dyn Repository) {
    let head = repo.head().await.expect("head of an empty store");
    let base = head.generation;

    // Addressing is deterministic and content-sensitive.
    assert_eq!(repo.address(b"a"), repo.address(b"a"));
    assert_ne!(repo.address(b"a"), repo.address(b"b"));

    // A commit moves the head and its content is readable.
    let create = Command::Create { path: "/memories/a.txt".into(), file_text: "hello".into() };
    let (_, mutation, before) = run(repo, &create).await;
    let mutation = mutation.expect("create mutates");
    let g1 = repo.commit(&before, &mutation, CommitInfo::default()).await.expect("commit");
    assert!(g1 > base);
    let view = Command::View { path: "/memories/a.txt".into(), view_range: None };
    let (text, _, _) = run(repo, &view).await;
    assert_eq!(text, "Here's the content of /memories/a.txt with line numbers:\n     1\thello");

    // A commit based on a stale generation is refused and changes nothing.
    let stale = Command::Create { path: "/memories/b.txt".into(), file_text: "x".into() };
    let (_, m2, _) = run(repo, &stale).await;
    match repo.commit(&head, &m2.expect("mutation"), CommitInfo::default()).await {
        Err(Error::Conflict) => {}
        other => panic!("stale commit must conflict, got {other:?}"),
    }
    let (listing, _, now) = run(repo, &Command::View { path: "/memories".into(), view_range: None }).await;
    assert_eq!(now.generation, g1);
    assert_eq!(
        listing,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n5B\t/memories/a.txt"
    );

    // Equal contents share one object.
    let dup = Command::Create { path: "/memories/c.txt".into(), file_text: "hello".into() };
    let (_, m3, before) = run(repo, &dup).await;
    let m3 = m3.expect("mutation");
    assert_eq!(m3.blobs[0].id, mutation.blobs[0].id);
    repo.commit(&before, &m3, CommitInfo::default()).await.expect("commit");
}
