//! Faults on the wire, through a real cloud client (`object_store`'s GCS client, configured by
//! `cloud::build` as a `gs://` store is) against the loopback stub: transient errors are retried
//! with backoff; without retries they fail clearly and change nothing; a head swap whose
//! answer is lost (the client timed out, the write landed, the retry is refused) is reported
//! as done, and applied once.

use std::sync::Arc;
use std::time::Duration;

use memfs_crypt::KeyFile;
use memfs_store::cloud::{self, CloudUrl};
use memfs_store::fault::{Fault, FaultPlan, FaultStore, OpClass, Target};
use memfs_store::{Backend, EncryptedRepository};
use object_store::memory::InMemory;
use serde_json::{Value, json};

use crate::gcs_stub::{GcsStub, NO_OAUTH_KEY};
use crate::support::{credential, init, options, run, verify};

const BUCKET: &str = "memfs-test";

async fn store(stub: &GcsStub, prefix: &str, extra: &[(&str, &str)]) -> EncryptedRepository {
    let url = CloudUrl::parse(&format!("gs://{BUCKET}/{prefix}")).unwrap();
    let env = [("GOOGLE_BASE_URL".to_owned(), stub.url())];
    let options: Vec<(String, String)> =
        [("google_service_account_key", NO_OAUTH_KEY), ("allow_http", "true"), ("retry_backoff", "10ms")]
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    init(Backend::ObjectStore(cloud::build(&url, &options, env).unwrap()), None).await.unwrap()
}

fn create(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

/// The status codes the stub answered since the last call.
fn statuses(stub: &GcsStub) -> Vec<u16> {
    stub.take_requests().iter().map(|r| r.status.as_u16()).collect()
}

#[tokio::test]
async fn transient_errors_are_retried_with_backoff() {
    let stub = GcsStub::start(BUCKET).await;
    let repo = store(&stub, "retried", &[("max_retries", "3")]).await;
    stub.take_requests();
    stub.fail_next(2);
    let answer = run(&repo, &create("/memories/a.md", "one\n")).await.expect("retried into success");
    assert!(!answer.is_error, "{}", answer.content);
    let seen = statuses(&stub);
    assert_eq!(&seen[..3], [503, 503, 404], "two 503s, then the head read (no head yet): {seen:?}");
    assert_eq!(verify(&repo).await.unwrap().paths.get("/memories/a.md").map(String::as_str), Some("one\n"));
}

#[tokio::test]
async fn without_retries_a_transient_error_fails_clearly_and_changes_nothing() {
    let stub = GcsStub::start(BUCKET).await;
    let repo = store(&stub, "no-retries", &[("max_retries", "0")]).await;
    run(&repo, &create("/memories/a.md", "one\n")).await.unwrap();
    let before = verify(&repo).await.unwrap();
    stub.fail_next(1);
    let err = run(&repo, &create("/memories/b.md", "two\n")).await.expect_err("a 503 with no retries");
    assert_eq!(err.to_string(), "storage read of head failed");
    let chain = format!("{:?}", err);
    assert!(chain.contains("503"), "the cause names the status: {chain}");
    assert_eq!(verify(&repo).await.unwrap(), before, "nothing changed");
}

/// The head swap times out, and the stub applies it only later: the answer is lost. memfs
/// sends the same swap again (same bytes, same precondition: whichever lands first wins and the
/// other is refused) and answers "done" once it is in, never re-running the command: an
/// `insert` run twice would insert twice.
#[tokio::test]
async fn a_head_swap_whose_answer_is_lost_is_applied_once() {
    let stub = GcsStub::start(BUCKET).await;
    let repo = store(&stub, "lost-answer", &[("max_retries", "2"), ("timeout", "300ms")]).await;
    run(&repo, &create("/memories/list.md", "a\n")).await.unwrap();
    let generation = verify(&repo).await.unwrap().generation;
    stub.delay_next_put("/head", Duration::from_millis(900));
    let insert = json!({"command": "insert", "path": "/memories/list.md", "insert_line": 0, "insert_text": "first"});
    let answer = run(&repo, &insert).await.expect("the insert is reported done");
    assert!(!answer.is_error, "{}", answer.content);
    // Let the delayed original reach the stub too: refused, as the head has moved.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let after = verify(&repo).await.unwrap();
    assert_eq!(after.paths.get("/memories/list.md").map(String::as_str), Some("first\na\n"), "inserted once");
    assert_eq!(after.generation, generation + 1, "one commit");
    let head_puts: Vec<u16> = stub
        .requests()
        .iter()
        .filter(|r| r.method == "PUT" && r.key.as_deref().is_some_and(|k| k.ends_with("/head")))
        .map(|r| r.status.as_u16())
        .collect();
    // The create's swap, the insert's swap timing out (answered late: 412), memfs's resend of
    // the same swap (200).
    assert_eq!(head_puts, [200, 200, 412], "{head_puts:?}");
}

/// A store over a fault store holding `/memories/list.md`, its generation, and the plan with
/// the next write armed to land and lose its answer: the next insert's one write is its head
/// swap (its objects travel inside the head).
async fn next_answer_lost() -> (EncryptedRepository, Arc<FaultPlan>, u64) {
    let faulty = FaultStore::new(InMemory::new());
    let plan = faulty.plan().clone();
    let repo = init(Backend::ObjectStore(Arc::new(faulty)), None).await.unwrap();
    run(&repo, &create("/memories/list.md", "a\n")).await.unwrap();
    let generation = verify(&repo).await.unwrap().generation;
    plan.arm(Target::Class(OpClass::Put), 1, Fault::FailAfter);
    (repo, plan, generation)
}

/// Issue 42: the swap lands and its answer is lost, the resend is refused (the head has moved:
/// by this very write), and the next read of the head fails once. The outcome is unknown for a
/// moment only: the head is read again, names the commit, and the command is reported done and
/// applied once. Taken as "not landed" (as before), the `insert` ran again and inserted twice.
#[tokio::test]
async fn a_lost_answer_then_a_failed_head_read_is_still_applied_once() {
    let (repo, plan, generation) = next_answer_lost().await;
    plan.then(Target::Class(OpClass::Get), 1, Fault::Fail);
    let insert = json!({"command": "insert", "path": "/memories/list.md", "insert_line": 0, "insert_text": "first"});
    let answer = run(&repo, &insert).await.expect("the insert is reported done");
    assert!(!answer.is_error, "{}", answer.content);
    assert_eq!(plan.injected(), 2, "the lost answer and the failed read");
    let after = verify(&repo).await.unwrap();
    assert_eq!(after.paths.get("/memories/list.md").map(String::as_str), Some("first\na\n"), "inserted once");
    assert_eq!(after.generation, generation + 1, "one commit");
}

/// When the store cannot be read at all after a lost answer, the command fails with an
/// outcome unknown, and is not run again.
#[tokio::test]
async fn a_lost_answer_with_the_store_unreadable_is_an_outcome_unknown() {
    let (repo, plan, generation) = next_answer_lost().await;
    // Every read fails, for longer than memfs waits (10 s).
    for _ in 0..100 {
        plan.then(Target::Class(OpClass::Get), 1, Fault::Fail);
    }
    let insert = json!({"command": "insert", "path": "/memories/list.md", "insert_line": 0, "insert_text": "first"});
    let err = run(&repo, &insert).await.expect_err("the outcome is unknown");
    plan.disarm();
    assert!(plan.injected() > 3, "{}", plan.injected());
    let newest = repo.log(Some(1), None).await.unwrap();
    let commit = newest[0].short_id();
    assert_eq!(
        err.to_string(),
        format!(
            "the outcome is unknown: commit {commit} (@{}) may have landed, and the store could not be read long \
             enough to know; `memfs log` shows whether it is in",
            generation + 1
        )
    );
    let after = verify(&repo).await.unwrap();
    assert_eq!(after.paths.get("/memories/list.md").map(String::as_str), Some("first\na\n"), "in, once");
}

/// A key slot added into a store: the key set's write lands and its answer is lost. The change
/// is reported done (not failed, nor "run it again", which would add a second slot), and
/// recorded once. `memfs.keys` is the first object the change writes.
#[tokio::test]
async fn a_key_change_whose_answer_was_lost_is_reported_done_and_made_once() {
    let faulty = Arc::new(FaultStore::new(InMemory::new()));
    let repo = init(Backend::ObjectStore(faulty.clone()), None).await.unwrap();
    let generation = verify(&repo).await.unwrap().generation;
    let plan = faulty.plan().clone();
    plan.arm(Target::Class(OpClass::Put), 1, Fault::FailAfter);
    let added = EncryptedRepository::change_key_slots(
        Backend::ObjectStore(faulty.clone()),
        &credential(),
        options(None),
        |slots, root, id, _| {
            let added = slots.add_key_file_slot(root, id, &KeyFile::from_bytes([8; 32]))?;
            Ok((added, ("add", added)))
        },
    )
    .await
    .expect("the change is reported done");
    assert_eq!(plan.injected(), 1, "the answer was lost");
    assert_eq!(added.get(), 2);
    let slots = EncryptedRepository::key_slots(Backend::ObjectStore(faulty.clone())).await.unwrap();
    assert_eq!(slots.iter().map(|(id, ..)| id.get()).collect::<Vec<_>>(), [1, 2]);
    let log = repo.log(None, None).await.unwrap();
    assert_eq!(verify(&repo).await.unwrap().generation, generation + 1, "recorded once: {log:?}");
}
