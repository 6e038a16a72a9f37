//! Purges with writers running: the fence, and races with the deletion.

use std::sync::Arc;

use super::*;
use crate::hooked::{At, Hooked};

/// A writer on the new head commits, reusing an object the purge is deleting: the fence
/// sees it and puts the object back.
#[tokio::test]
async fn the_fence_puts_back_what_a_writer_reused() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/a.md", "zzz")).await;
    let (head, version) = repo.read_head().await.unwrap().unwrap();
    let mut marked: HashSet<ObjectId> = HashSet::new();
    run(&repo, create("/memories/again.md", "zzz")).await;
    let id = repo.address(b"zzz");
    let saved = repo.save(&[id]).await.unwrap();
    let mut graph = Graph::default();
    let deleted = repo.delete_fenced(head, version, 0, &mut graph, &mut marked, &saved).await.unwrap();
    assert!(deleted.is_empty());
    assert!(marked.contains(&id));
    assert_clean(&repo).await;
}

/// Runs a command as the engine does: again on a lost race, or after finding an object
/// missing (the purge deletes what an old head's trees hold). A tool error (a file the
/// purge took away) commits nothing.
async fn run_retrying(repo: &EncryptedRepository, input: Value) {
    let command = memfs_core::Command::from_input(&input).unwrap();
    let mut missing = 0;
    loop {
        let attempt = async {
            let head = repo.head().await?;
            let mut fetched = crate::fetch::Fetched::new(repo);
            let outcome =
                fetched.resolve(|f| memfs_core::execute(&command, &head.tree, memfs_core::Dialect::Spec, f)).await?;
            let Some(m) = outcome.mutation else { return Ok(()) };
            let info = CommitInfo {
                actor: "writer".into(),
                command: Record::parse(&input.to_string()),
                changes: m.changes.clone(),
            };
            repo.commit(&head, &m, info).await.map(drop)
        };
        match attempt.await {
            Ok(()) => return,
            Err(Error::Conflict) => tokio::task::yield_now().await,
            Err(Error::MissingObject { .. }) if missing < 50 => {
                missing += 1;
                tokio::task::yield_now().await;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// Writers keep storing the purged content again at other paths, and deleting it, while
/// purges run: every purge either loses its race or lands, and whatever interleaving
/// happens, no object a commit uses is lost. A last purge, alone, leaves none of it.
/// (The narrow window of a writer reusing an object being deleted is rarely hit here;
/// `a_writer_reusing_a_doomed_object_keeps_it` makes it happen.) The writers pause
/// between commands: a purge reads all history, and under back-to-back commits it would
/// keep losing its race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn purges_while_writers_run_lose_nothing() {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LANDINGS: u32 = 2;
    let repo = Arc::new(EncryptedRepository::ephemeral().unwrap());
    run(&repo, create("/memories/keep.md", "keep")).await;
    let landed = Arc::new(AtomicU32::new(0));
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let (repo, landed) = (repo.clone(), landed.clone());
            tokio::spawn(async move {
                // Until the purges are done (bounded, should they never land).
                for i in 0..100 {
                    if landed.load(Ordering::SeqCst) >= LANDINGS {
                        break;
                    }
                    let path = format!("/memories/w{w}/{i}.txt");
                    let text = if i % 2 == 0 { "secret" } else { "public" };
                    run_retrying(&repo, create(&path, text)).await;
                    tokio::time::sleep(std::time::Duration::from_millis(15)).await;
                    run_retrying(&repo, json!({"command": "delete", "path": path})).await;
                    tokio::time::sleep(std::time::Duration::from_millis(15)).await;
                }
            })
        })
        .collect();
    while landed.load(Ordering::SeqCst) < LANDINGS && !writers.iter().all(|w| w.is_finished()) {
        run_retrying(&repo, create("/memories/s.md", "secret")).await;
        loop {
            match purge(&repo, "/memories/s.md").await {
                Ok(_) => {
                    landed.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                Err(PurgeError::Store(Error::Conflict | Error::MissingObject { .. })) => {}
                Err(e) => panic!("purge failed: {e}"),
            }
        }
        let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
    }
    for w in writers {
        w.await.unwrap();
    }
    assert_eq!(landed.load(Ordering::SeqCst), LANDINGS, "purges landed while the writers ran");
    // Alone, a purge leaves nothing of the content: the writers' copies, made after the
    // last purge, go as copies.
    run(&repo, create("/memories/s.md", "secret")).await;
    let report = purge(&repo, "/memories/s.md").await.unwrap();
    assert_eq!((report.remaining, report.remaining_commits), (0, 0));
    assert!(!repo.objects.list().await.unwrap().contains_key(&repo.address(b"secret")));
    assert_eq!(files(&repo, &repo.head().await.unwrap().tree).await, tree(&[("/memories/keep.md", "keep")]));
    assert_clean(&repo).await;
}

/// A writer on the new head stores the purged content again just before the deletion
/// starts, finding it still stored (so it does not write it): the fence sees its commit
/// and keeps the object, which is the writer's now. The purge says where it is, and a
/// purge of that path takes it.
#[tokio::test]
async fn a_writer_reusing_a_doomed_object_keeps_it() {
    let (store, repo) = Hooked::repository().await;
    run(&repo, create("/memories/s.md", "secret")).await;
    run(&repo, create("/memories/keep.md", "keep")).await;
    store
        .arm(At::Delete, Box::new(|repo| Box::pin(async move { run(&repo, create("/memories/w.md", "secret")).await })))
        .await;

    let report = purge(&repo, "/memories/s.md").await.unwrap();
    assert!(store.fired().await);
    assert_eq!((report.generation, report.remaining, report.remaining_commits), (3, 1, 0));
    assert_eq!(report.stored_again, ["/memories/w.md"]);
    assert_eq!(
        files(&repo, &repo.head().await.unwrap().tree).await,
        tree(&[("/memories/keep.md", "keep"), ("/memories/w.md", "secret")])
    );
    assert_clean(&repo).await;

    let err = purge(&repo, "/memories/s.md").await.unwrap_err();
    assert!(matches!(err, PurgeError::NotFound { .. }), "{err:?}");
    let report = purge(&repo, "/memories/w.md").await.unwrap();
    assert_eq!((report.generation, report.remaining, report.removed), (5, 0, vec!["/memories/w.md".to_owned()]));
    assert!(!repo.objects.list().await.unwrap().contains_key(&repo.address(b"secret")));
    assert_clean(&repo).await;
}
