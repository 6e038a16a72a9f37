use object_store::ObjectStoreExt;
use serde_json::json;

use super::*;
use crate::encrypted::history::tests::{mutate, run, stopped_before_swap, three_commits};
use crate::repository::{CommitInfo, Repository};
use crate::{CheckOptions, Revision};

fn now_plus(options: GcOptions, ms: u64) -> GcOptions {
    GcOptions { now_ms: options.now_ms + ms, ..options }
}

fn no_grace() -> GcOptions {
    GcOptions { grace_ms: 0, ..GcOptions::default() }
}

/// A commit whose writer stored its objects and stopped before its head swap (a killed
/// process): they are stored but never reachable. How many it stored: its blob, its
/// commit, and the pages of `/memories` (one or more: a directory's pages are cut where
/// its keyed names say, and the key is random).
async fn lost_race(repo: &EncryptedRepository) -> u64 {
    run(repo, json!({"command": "create", "path": "/memories/winner.txt", "file_text": "w"})).await;
    let before = repo.objects.list().await.unwrap().len() as u64;
    stopped_before_swap(repo, json!({"command": "create", "path": "/memories/loser.txt", "file_text": "l"})).await;
    let stored = repo.objects.list().await.unwrap().len() as u64 - before;
    assert!(stored >= 3, "{stored}");
    stored
}

async fn clean(repo: &EncryptedRepository) {
    let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

#[tokio::test]
async fn deletes_only_unreachable_objects_after_the_grace_period() {
    let repo = three_commits().await;
    let n = lost_race(&repo).await;
    let before = repo.objects.list().await.unwrap().len() as u64;

    // The loser's blob, directory pages and commit are unreachable.
    let first = repo.gc(&GcOptions::default(), &()).await.unwrap();
    assert_eq!((first.commits, first.newest, first.oldest), (4, 4, 1));
    assert_eq!((first.pending, first.newly_pending, first.deleted), (n, n, 0));
    assert_eq!(first.reachable, before - n);
    // Still within the grace period: nothing deleted.
    let second = repo.gc(&now_plus(GcOptions::default(), 1000), &()).await.unwrap();
    assert_eq!((second.pending, second.newly_pending, second.deleted), (n, 0, 0));
    // After it: deleted.
    let third = repo.gc(&now_plus(GcOptions::default(), DEFAULT_GRACE_MS), &()).await.unwrap();
    assert_eq!((third.pending, third.deleted, third.recovered), (0, n, 0));
    assert_eq!(third.deleted_bytes, first.pending_bytes);
    assert_eq!(repo.objects.list().await.unwrap().len() as u64, before - n);
    clean(&repo).await;
    assert_eq!(repo.log(None, None).await.unwrap().len(), 4);
    // Nothing left to do.
    let fourth = repo.gc(&no_grace(), &()).await.unwrap();
    assert_eq!((fourth.pending, fourth.deleted, fourth.reachable), (0, 0, before - n));
}

#[tokio::test]
async fn retention_cuts_history_at_a_horizon() {
    let repo = three_commits().await;
    let options = GcOptions { keep_commits: Some(2), ..no_grace() };
    // A dry run plans the same and changes nothing.
    let objects = repo.objects.list().await.unwrap();
    let plan = repo.gc(&GcOptions { dry_run: true, ..options.clone() }, &()).await.unwrap();
    assert_eq!((plan.commits, plan.oldest, plan.deleted, plan.pending), (2, 2, 2, 0));
    assert_eq!(repo.objects.list().await.unwrap(), objects);
    assert!(repo.read_gc_state().await.unwrap().is_none());
    assert_eq!(repo.horizon().await.unwrap(), 0);
    let first = repo.gc(&options, &()).await.unwrap();
    assert_eq!((first.commits, first.oldest, first.previous_horizon), (2, 2, 0));
    // Commit 1 and the root directory only it had (`a.txt` moved, its blob is still
    // used): with no grace, deleted in this same run.
    assert_eq!((first.newly_pending, first.pending, first.deleted), (0, 0, 2));
    assert_eq!(first.deleted_bytes, plan.deleted_bytes);
    assert_eq!(repo.horizon().await.unwrap(), 2);
    let gens: Vec<u64> = repo.log(None, None).await.unwrap().iter().map(|c| c.generation).collect();
    assert_eq!(gens, [3, 2]);
    let err = repo.resolve(&Revision::Generation(1)).await.unwrap_err().to_string();
    assert_eq!(err, "revision @1 does not exist: history before @2 was removed by gc");
    let err = repo.resolve(&Revision::Head(2)).await.unwrap_err().to_string();
    assert_eq!(err, "revision HEAD~2 does not exist: history before @2 was removed by gc");

    // A later run without a policy keeps the horizon, and finds nothing left to delete.
    let second = repo.gc(&no_grace(), &()).await.unwrap();
    assert_eq!((second.commits, second.oldest, second.deleted, second.pending), (2, 2, 0, 0));
    clean(&repo).await;
    assert_eq!(repo.check(CheckOptions::default(), &()).await.unwrap().unreferenced, 0);
}

#[tokio::test]
async fn keep_days_and_keep_commits_add_up() {
    let repo = three_commits().await;
    // A week later, keep one day: only the head (always kept).
    let later = now_plus(GcOptions { keep_days: Some(1), ..no_grace() }, 7 * DAY_MS);
    assert_eq!(repo.gc(&later, &()).await.unwrap().oldest, 3);

    let repo = three_commits().await;
    let both = GcOptions { keep_days: Some(1), keep_commits: Some(2), ..no_grace() };
    // Today every commit is younger than a day.
    assert_eq!(repo.gc(&both, &()).await.unwrap().oldest, 1);
    assert_eq!(repo.gc(&now_plus(both, 7 * DAY_MS), &()).await.unwrap().oldest, 2);
}

#[tokio::test]
async fn the_fence_puts_back_what_a_racing_writer_uses() {
    let repo = three_commits().await;
    let (head, version) = repo.read_head().await.unwrap().unwrap();
    let mut marked = HashSet::new();
    let commits = repo.log(None, None).await.unwrap();
    marked.extend(commits.iter().map(|c| c.oid));
    repo.mark_trees(commits.iter().map(|c| c.root).collect(), &mut marked, &()).await.unwrap();

    // A writer commits content equal to an object gc is deleting right now.
    run(&repo, json!({"command": "create", "path": "/memories/again.txt", "file_text": "zzz"})).await;
    let id = repo.address(b"zzz");
    let saved = repo.save(&[id]).await.unwrap();
    repo.objects.store.delete(&object_path(&id)).await.unwrap();

    let deleted = repo.fence(head, version, 0, &mut marked, &saved).await.unwrap();
    assert!(deleted.is_empty());
    clean(&repo).await;
}

#[tokio::test]
async fn a_concurrent_gc_deletes_nothing() {
    let repo = three_commits().await;
    repo.write_gc_state(None, &GcStateObject::default()).await.unwrap();
    let err = repo.write_gc_state(None, &GcStateObject::default()).await.unwrap_err();
    assert!(matches!(err, Error::ConcurrentGc), "{err:?}");
}

/// Commits a command, running it again on a lost race, or (a few times) after finding an
/// object missing, as the engine does.
async fn run_retrying(repo: &EncryptedRepository, input: serde_json::Value) {
    let mut missing = 0;
    loop {
        let head = match repo.head().await {
            Ok(head) => head,
            Err(Error::MissingObject { .. }) if missing < 3 => {
                missing += 1;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        let m = match mutate(repo, &head, input.clone()).await {
            Ok(m) => m,
            Err(Error::MissingObject { .. }) if missing < 3 => {
                missing += 1;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        match repo.commit(&head, &m, CommitInfo::default()).await {
            Ok(_) => return,
            Err(Error::Conflict) => tokio::task::yield_now().await,
            Err(e) => panic!("{e}"),
        }
    }
}

/// Writers keep re-creating contents that gc keeps deleting (grace 0, two commits kept):
/// whatever interleaving happens, every reachable object survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gc_while_writers_run_loses_nothing() {
    let repo = std::sync::Arc::new(three_commits().await);
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let repo = repo.clone();
            tokio::spawn(async move {
                for i in 0..25 {
                    let path = format!("/memories/w{w}/{i}.txt");
                    let text = format!("content {}", i % 3);
                    run_retrying(&repo, json!({"command": "create", "path": path, "file_text": text})).await;
                    run_retrying(&repo, json!({"command": "delete", "path": path})).await;
                }
            })
        })
        .collect();
    let options = GcOptions { keep_commits: Some(2), ..no_grace() };
    let mut runs = 0;
    while !writers.iter().all(|w| w.is_finished()) {
        match repo.gc(&options, &()).await {
            // A gc that cannot fence gives up having put everything back: safe, and the
            // objects stay pending for the next run.
            Ok(_) | Err(Error::ConcurrentGc | Error::FenceFailed { .. }) => runs += 1,
            Err(e) => panic!("gc failed: {e}"),
        }
    }
    for w in writers {
        w.await.unwrap();
    }
    assert!(runs > 0);
    repo.gc(&options, &()).await.unwrap();
    repo.gc(&options, &()).await.unwrap();
    clean(&repo).await;
    assert_eq!(repo.check(CheckOptions::default(), &()).await.unwrap().unreferenced, 0);
}

#[tokio::test]
async fn an_empty_store_has_nothing_to_collect() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    assert_eq!(repo.gc(&no_grace(), &()).await.unwrap(), GcReport::default());
}
