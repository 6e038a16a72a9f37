//! Google Cloud Storage: memfs over `object_store`'s real GCS client, against the loopback
//! XML-API stub of `gcs_stub.rs`. No GCS emulator that installs here serves that client's writes
//! honestly: fake-gcs-server 1.54.0 answers its `PUT /{bucket}/{key}` `400 invalid uploadType`,
//! and the one PUT it accepts at that URL ignores `x-goog-if-generation-match`. docs/CLOUD.md,
//! "Google Cloud Storage", has the requests and answers. Even with such an emulator, the stub
//! would stay for what only it can do: record every request for the on-the-wire assertions
//! below, and inject faults for `retries.rs`.
//!
//! What this covers: our GCS configuration (`gs://` URLs and options through
//! `memfs_store::cloud::build`), the repository conformance suite, and the precondition
//! plumbing of the head swap, checked on the wire: every create carries
//! `x-goog-if-generation-match: 0`, every head swap the *generation* it read (never the ETag),
//! a stale swap is refused as a conflict, and racing writers lose no update. What it cannot
//! cover: Google's own semantics, authentication, resumable uploads and Google's real error
//! bodies (the stub's are modelled on the documented ones).

use std::sync::Arc;

use futures::TryStreamExt;
use memfs_core::{Command, Dialect, Mutation, execute};
use memfs_store::cloud::{self, CloudUrl};
use memfs_store::conformance::check_repository;
use memfs_store::{Backend, CommitInfo, EncryptedRepository, Error, Fetched, GcOptions, Head, Repository, probe};
use object_store::path::Path;
use object_store::{GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use serde_json::{Value, json};
use tokio::sync::Barrier;

use crate::gcs_stub::{FIRST_GENERATION, GcsStub, NO_OAUTH_KEY, Recorded};
use crate::support::{check, init, init_storing, open, open_storing, run, verify};

const BUCKET: &str = "memfs-test";

/// A prefix no other store in the stub uses.
fn unique_prefix() -> String {
    let mut id = [0u8; 6];
    getrandom::fill(&mut id).unwrap();
    format!("t-{}", hex::encode(id))
}

fn create(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

/// The mutation `input` makes on `head` (which may be stale by the time it is committed).
async fn mutation(repo: &dyn Repository, head: &Head, input: &Value) -> Mutation {
    let command = Command::from_input(input).expect("a valid tool input");
    let outcome = Fetched::new(repo).resolve(|f| execute(&command, &head.tree, Dialect::Spec, f)).await.unwrap();
    outcome.mutation.expect("the command mutates")
}

/// Commits `input` once on `head`: the new generation, or `Conflict`.
async fn commit_once(repo: &dyn Repository, head: &Head, input: &Value) -> Result<u64, Error> {
    let m = mutation(repo, head, input).await;
    let info = CommitInfo {
        actor: "test".into(),
        command: memfs_store::Record::parse(&input.to_string()),
        changes: m.changes.clone(),
    };
    repo.commit(head, &m, info).await
}

/// A request in short: method, key below `prefix/`, `x-goog-if-generation-match`, status.
fn brief(r: &Recorded, prefix: &str) -> (String, String, Option<String>, u16) {
    let key = r.key.as_deref().unwrap_or("");
    let key = key.strip_prefix(prefix).and_then(|k| k.strip_prefix('/')).unwrap_or(key);
    (r.method.to_string(), key.to_owned(), r.generation_match().map(str::to_owned), r.status.as_u16())
}

fn is_head_put(r: &Recorded, head_key: &str) -> bool {
    r.method == "PUT" && r.key.as_deref() == Some(head_key)
}

#[tokio::test]
async fn conformance_suite_over_the_gcs_client() {
    let stub = GcsStub::start(BUCKET).await;
    let prefix = unique_prefix();
    // Every object stored before its head; the suite's stale commit is refused before it
    // stores any (the head read afresh first).
    let repo = init_storing(Backend::ObjectStore(stub.prefixed(&prefix))).await.unwrap();
    check_repository(&repo).await;
    assert_eq!(check(&repo).await, 0, "the stale commit stored nothing");
    // A writer that stored two objects and was killed before its head swap leaves them
    // unreferenced (sealed bytes gc never opens).
    let orphans = ["ab".repeat(32), "cd".repeat(32)];
    for id in &orphans {
        let path = Path::from(format!("objects/{}/{id}", &id[..2]));
        stub.prefixed(&prefix).put(&path, PutPayload::from_static(b"sealed")).await.unwrap();
    }

    // A new client (own connection pool, empty caches) reads it all back, with listings paged
    // three keys at a time.
    stub.set_page_size(3);
    let again = open_storing(Backend::ObjectStore(stub.prefixed(&prefix))).await.unwrap();
    let snapshot = verify(&again).await.unwrap();
    assert_eq!(snapshot.generation, 2);
    assert_eq!(snapshot.paths.keys().collect::<Vec<_>>(), ["/memories/a.txt", "/memories/c.txt"]);
    // The killed writer's objects, unreferenced.
    let unreferenced = check(&again).await;
    assert_eq!(unreferenced, orphans.len() as u64);
    let lists: Vec<_> = stub.requests().into_iter().filter(|r| r.key.is_none()).collect();
    assert!(lists.iter().any(|r| r.query.iter().any(|(k, _)| k == "continuation-token")), "listings were paged");
    assert!(lists.iter().all(|r| r.query.contains(&("list-type".into(), "2".into()))));

    // gc (its state object is swapped by generation too) records them as pending, and
    // deletes them on its second run, a grace period (1 s) later.
    let gc = |now_ms| GcOptions { grace_ms: 1_000, now_ms, ..GcOptions::default() };
    let first = again.gc(&gc(1_000), &()).await.unwrap();
    assert_eq!((first.newly_pending, first.deleted), (unreferenced, 0));
    stub.take_requests();
    let second = again.gc(&gc(2_000), &()).await.unwrap();
    assert_eq!(second.deleted, unreferenced);
    let deletes: Vec<_> = stub.requests().into_iter().filter(|r| r.method == "DELETE").collect();
    assert_eq!(deletes.len() as u64, unreferenced);
    assert!(deletes.iter().all(|r| r.status == 204));
    assert_eq!(check(&again).await, 0);

    // Everything lives under the prefix, and nothing else is in the bucket.
    let keys = stub.keys();
    assert!(keys.iter().all(|k| k.starts_with(&format!("{prefix}/"))), "{keys:?}");
    for name in ["memfs.keys", "head", "gc.state"] {
        assert!(keys.contains(&format!("{prefix}/{name}")), "{name} missing: {keys:?}");
    }
}

/// Our configuration of a `gs://` store (`cloud::build`: options from the environment and
/// explicit ones, the prefix from the URL) reaches the stub, passes the probe `memfs init`
/// runs, holds a store, and tells a missing bucket apart.
#[tokio::test]
async fn gs_url_and_options_through_cloud_build() {
    let stub = GcsStub::start(BUCKET).await;
    let url = CloudUrl::parse(&format!("gs://{BUCKET}/team/memories")).unwrap();
    // The endpoint from the environment, the key and the rest as explicit options.
    let env = [("GOOGLE_BASE_URL".to_owned(), stub.url()), ("HOME".to_owned(), "/root".to_owned())];
    let options: Vec<(String, String)> = [
        ("google_service_account_key", NO_OAUTH_KEY),
        ("allow_http", "true"),
        ("max_retries", "0"),
        ("timeout", "10s"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let store = cloud::build(&url, &options, env.clone()).unwrap();

    probe::list_top(store.as_ref()).await.unwrap();
    probe::conditional_writes(store.as_ref()).await.unwrap();
    let repo = init(Backend::ObjectStore(store), None).await.unwrap();
    run(&repo, &create("/memories/notes.md", "hello\n")).await.unwrap();
    let keys = stub.keys();
    assert!(keys.iter().all(|k| k.starts_with("team/memories/")), "{keys:?}");
    assert!(keys.contains(&"team/memories/memfs.keys".to_owned()) && keys.contains(&"team/memories/head".to_owned()));
    assert!(!keys.iter().any(|k| k.contains("memfs.probe")), "the probe is removed: {keys:?}");
    // The probe's writes went over the wire with their preconditions: create, create again,
    // update on the generation the first answered, update on it again (now stale).
    let probe: Vec<_> = stub
        .requests()
        .into_iter()
        .filter(|r| r.method == "PUT" && r.key.as_deref().is_some_and(|k| k.starts_with("team/memories/memfs.probe/")))
        .collect();
    let first = probe[0].response_header("x-goog-generation").unwrap().to_owned();
    let sent: Vec<_> = probe.iter().map(|r| (r.generation_match().unwrap(), r.status.as_u16())).collect();
    assert_eq!(sent, [("0", 200), ("0", 412), (first.as_str(), 200), (first.as_str(), 412)]);

    // No credentials reach the stub: with `disable_oauth` the client sends an empty bearer
    // token on writes and deletes (`Authorization: Bearer`) and none on reads and listings.
    for r in stub.requests() {
        let expected = matches!(r.method.as_str(), "PUT" | "DELETE").then_some("Bearer");
        assert_eq!(r.header("authorization"), expected, "{} {:?}", r.method, r.key);
    }

    // Reopened from the URL by a new client.
    let store = cloud::build(&url, &options, env.clone()).unwrap();
    let again = open(Backend::ObjectStore(store), None).await.unwrap();
    assert_eq!(verify(&again).await.unwrap().paths.get("/memories/notes.md").map(String::as_str), Some("hello\n"));

    // A bucket the service does not have: no store there, and the listing says why.
    let missing = CloudUrl::parse("gs://no-such-bucket/team").unwrap();
    let store = cloud::build(&missing, &options, env).unwrap();
    assert!(!EncryptedRepository::exists(Backend::ObjectStore(store.clone())).await.unwrap());
    let err = probe::list_top(store.as_ref()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the bucket or container does not exist (memfs does not create buckets or containers): the service says NoSuchBucket"
    );
}

/// On the wire: creates carry `x-goog-if-generation-match: 0`; a head swap carries the
/// generation the store last reported for the head (`x-goog-generation`, in the answer to the
/// client's read, or to its own write when a conditional read finds the head unchanged), never
/// the ETag; and all of a commit's objects are written before its head.
#[tokio::test]
async fn head_swap_sends_the_generation_last_seen() {
    let stub = GcsStub::start(BUCKET).await;
    let prefix = unique_prefix();
    let head_key = format!("{prefix}/head");
    // Every object stored before its head (the objects' own preconditions are the subject).
    let repo = init_storing(Backend::ObjectStore(stub.prefixed(&prefix))).await.unwrap();
    let requests = stub.take_requests();
    assert_eq!(
        requests.iter().map(|r| brief(r, &prefix)).collect::<Vec<_>>(),
        [("PUT".to_owned(), "memfs.keys".to_owned(), Some("0".to_owned()), 200)]
    );

    // The first commit: no head yet (404), and still none just before its objects are stored
    // (a fresh read: docs/SECURITY.md, "A writer that missed a rotation"), its objects, then
    // the head, each create-only.
    run(&repo, &create("/memories/a.md", "one\n")).await.unwrap();
    let recorded = stub.take_requests();
    let requests: Vec<_> = recorded.iter().map(|r| brief(r, &prefix)).collect();
    let objects = stub.keys().iter().filter(|k| k.starts_with(&format!("{prefix}/objects/"))).count();
    assert_eq!(objects, 3, "a content, the /memories directory, the commit");
    assert_eq!(requests.len(), 3 + objects, "{requests:#?}");
    for r in &requests[..2] {
        assert_eq!(*r, ("GET".to_owned(), "head".to_owned(), None, 404));
    }
    for r in &requests[2..2 + objects] {
        assert!(r.0 == "PUT" && r.1.starts_with("objects/") && r.2.as_deref() == Some("0") && r.3 == 200, "{r:?}");
    }
    assert_eq!(requests[objects + 2], ("PUT".to_owned(), "head".to_owned(), Some("0".to_owned()), 200));
    let first = stub.object(&head_key).unwrap();
    assert_eq!(first.generation, FIRST_GENERATION + 1 + objects as u64, "memfs.keys, the objects, the head");
    assert_eq!(recorded[objects + 2].response_header("x-goog-generation"), Some(first.generation.to_string().as_str()));

    // The second commit reads the head, reads it again (unchanged: 304) before it stores its
    // objects, and swaps on exactly its generation.
    run(&repo, &create("/memories/b.md", "two\n")).await.unwrap();
    let requests = stub.take_requests();
    assert_eq!(requests.len(), 3 + objects, "the head read twice, three new objects, the head: {requests:#?}");
    let fresh = &requests[1];
    assert_eq!(brief(fresh, &prefix), ("GET".to_owned(), "head".to_owned(), None, 304));
    assert_eq!(fresh.header("if-none-match"), Some(first.etag.as_str()));
    let read = &requests[0];
    let generation = first.generation.to_string();
    match brief(read, &prefix) {
        // A plain read: the generation comes from its answer.
        (m, k, None, 200) if m == "GET" && k == "head" => {
            assert_eq!(read.response_header("x-goog-generation"), Some(generation.as_str()));
        }
        // A conditional read on the ETag this client wrote: unchanged, so the generation is the
        // one the write answered.
        (m, k, None, 304) if m == "GET" && k == "head" => {
            assert_eq!(read.header("if-none-match"), Some(first.etag.as_str()));
        }
        other => panic!("a read of the head first, got {other:?}"),
    }
    for r in &requests[2..2 + objects] {
        let (method, key, generation_match, status) = brief(r, &prefix);
        assert!(method == "PUT" && key.starts_with("objects/") && generation_match.as_deref() == Some("0"), "{r:?}");
        assert_eq!(status, 200, "{r:?}");
    }
    let swap = &requests[objects + 2];
    assert!(is_head_put(swap, &head_key));
    assert_eq!(swap.generation_match(), Some(first.generation.to_string().as_str()));
    assert_eq!(swap.status, 200);
    // Only the generation: the client sends no ETag precondition on a write.
    assert_eq!(swap.header("if-match"), None);
    assert_eq!(swap.header("if-none-match"), None);
    let second = stub.object(&head_key).unwrap();
    assert!(second.generation > first.generation);
    assert_eq!(swap.response_header("x-goog-generation"), Some(second.generation.to_string().as_str()));
    assert_eq!(repo.head().await.unwrap().generation, 2);
}

/// A swap based on a stale head is refused (412 on the wire, `Conflict` to the engine) and
/// changes nothing; run again on the new head, it goes in.
#[tokio::test]
async fn a_swap_on_a_stale_head_is_a_conflict() {
    let stub = GcsStub::start(BUCKET).await;
    let prefix = unique_prefix();
    let head_key = format!("{prefix}/head");
    let a = init(Backend::ObjectStore(stub.prefixed(&prefix)), None).await.unwrap();
    run(&a, &create("/memories/a.md", "from a\n")).await.unwrap();
    let b = open(Backend::ObjectStore(stub.prefixed(&prefix)), None).await.unwrap();

    let stale = a.head().await.unwrap();
    let read = stub.object(&head_key).unwrap();
    run(&b, &create("/memories/b.md", "from b\n")).await.unwrap();
    let current = stub.object(&head_key).unwrap();

    stub.take_requests();
    match commit_once(&a, &stale, &create("/memories/c.md", "from a, late\n")).await {
        Err(Error::Conflict) => {}
        other => panic!("a stale swap must conflict, got {other:?}"),
    }
    let swap = stub.take_requests().into_iter().rfind(|r| is_head_put(r, &head_key)).unwrap();
    assert_eq!(swap.generation_match(), Some(read.generation.to_string().as_str()));
    assert_eq!(swap.status, 412);
    let after = stub.object(&head_key).unwrap();
    assert_eq!((after.generation, after.data), (current.generation, current.data));

    let fresh = open(Backend::ObjectStore(stub.prefixed(&prefix)), None).await.unwrap();
    let snapshot = verify(&fresh).await.unwrap();
    assert_eq!(snapshot.generation, 2);
    assert_eq!(snapshot.paths.keys().collect::<Vec<_>>(), ["/memories/a.md", "/memories/b.md"]);

    // The engine's answer to a conflict: run again on the new head.
    run(&a, &create("/memories/c.md", "from a, late\n")).await.unwrap();
    assert_eq!(verify(&fresh).await.unwrap().generation, 3);
}

/// 16 writers, each its own `EncryptedRepository` with its own GCS client, race: first on the
/// first head (a create), then on a swap, each from the same head; then the losers retry
/// until their command is in. Each attempt commits or conflicts, exactly one wins each race,
/// and the head's generation is the number of commits: no update is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writers_lose_no_update() {
    const WRITERS: usize = 16;
    let stub = GcsStub::start(BUCKET).await;
    let prefix = unique_prefix();
    let head_key = format!("{prefix}/head");
    init(Backend::ObjectStore(stub.prefixed(&prefix)), None).await.unwrap();
    let mut writers = Vec::new();
    for _ in 0..WRITERS {
        writers.push(Arc::new(open(Backend::ObjectStore(stub.prefixed(&prefix)), None).await.unwrap()));
    }
    let input = |i: usize| create(&format!("/memories/w{i:02}.md"), &format!("writer {i}\n"));

    // One race from a common head: every writer reads it, then all commit at once.
    async fn race(writers: &[(usize, Arc<EncryptedRepository>)], input: impl Fn(usize) -> Value) -> Vec<usize> {
        let barrier = Arc::new(Barrier::new(writers.len()));
        let tasks: Vec<_> = writers
            .iter()
            .map(|(i, repo)| {
                let (i, repo, barrier, input) = (*i, repo.clone(), barrier.clone(), input(*i));
                tokio::spawn(async move {
                    let head = repo.head().await.unwrap();
                    let m = mutation(repo.as_ref(), &head, &input).await;
                    barrier.wait().await;
                    let info = CommitInfo {
                        actor: "test".into(),
                        command: memfs_store::Record::parse(&input.to_string()),
                        changes: m.changes.clone(),
                    };
                    (i, head.generation, repo.commit(&head, &m, info).await)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for task in tasks {
            match task.await.unwrap() {
                (i, base, Ok(generation)) => {
                    assert_eq!(generation, base + 1);
                    winners.push(i);
                }
                (_, _, Err(Error::Conflict)) => {}
                (i, _, Err(e)) => panic!("writer {i}: neither a commit nor a conflict: {e:?}"),
            }
        }
        winners
    }

    let mut waiting: Vec<(usize, Arc<EncryptedRepository>)> = writers.iter().cloned().enumerate().collect();
    let mut conflicts = 0;
    for (round, base) in [(0, 0), (1, 1)] {
        let winners = race(&waiting, input).await;
        assert_eq!(winners.len(), 1, "round {round}: exactly one writer wins the race from generation {base}");
        conflicts += waiting.len() - 1;
        waiting.retain(|(i, _)| !winners.contains(i));
    }

    // The rest retry, concurrently, until each is in.
    let tasks: Vec<_> = waiting
        .into_iter()
        .map(|(i, repo)| {
            let input = input(i);
            tokio::spawn(async move {
                for attempt in 0..WRITERS {
                    let head = repo.head().await.unwrap();
                    match commit_once(repo.as_ref(), &head, &input).await {
                        Ok(_) => return attempt,
                        Err(Error::Conflict) => continue,
                        Err(e) => panic!("writer {i}: neither a commit nor a conflict: {e:?}"),
                    }
                }
                panic!("writer {i}: no commit in {WRITERS} attempts");
            })
        })
        .collect();
    for task in tasks {
        conflicts += task.await.unwrap();
    }

    let fresh = open(Backend::ObjectStore(stub.prefixed(&prefix)), None).await.unwrap();
    let snapshot = verify(&fresh).await.unwrap();
    assert_eq!(snapshot.generation, WRITERS as u64, "one generation per commit");
    assert_eq!(snapshot.paths.len(), WRITERS, "every writer's file: {snapshot:?}");
    for i in 0..WRITERS {
        assert_eq!(snapshot.paths[&format!("/memories/w{i:02}.md")], format!("writer {i}\n"));
    }
    // On the wire: one accepted head write per commit, one refused per conflict, and every
    // head write conditional (the first on 0, the others on a generation).
    let puts: Vec<_> = stub.requests().into_iter().filter(|r| is_head_put(r, &head_key)).collect();
    assert_eq!(puts.iter().filter(|r| r.status == 200).count(), WRITERS);
    assert_eq!(puts.iter().filter(|r| r.status == 412).count(), conflicts);
    assert_eq!(puts.len(), WRITERS + conflicts);
    assert_eq!(puts.iter().filter(|r| r.generation_match() == Some("0")).count(), WRITERS);
    for r in &puts {
        let g: u64 = r.generation_match().expect("conditional").parse().unwrap();
        assert!(g == 0 || g >= FIRST_GENERATION, "{r:?}");
    }
}

/// The stub enforces generations (a suite that passed against a stub ignoring them would prove
/// nothing), and `object_store`'s client sends the generation, not the ETag: a current ETag
/// with a stale generation is refused, a bogus ETag with the current generation accepted.
#[tokio::test]
async fn the_stub_refuses_a_stale_generation() {
    let stub = GcsStub::start(BUCKET).await;
    let prefix = unique_prefix();
    let store = stub.prefixed(&prefix);
    let path = Path::from("object");
    let key = format!("{prefix}/object");
    let update = |e_tag: Option<String>, version: Option<String>| {
        PutOptions::from(PutMode::Update(UpdateVersion { e_tag, version }))
    };

    let first = store.put_opts(&path, "same bytes".into(), PutMode::Create.into()).await.unwrap();
    let v1 = first.version.clone().expect("GCS answers a generation");
    assert_eq!(v1, stub.object(&key).unwrap().generation.to_string());
    match store.put_opts(&path, "other".into(), PutMode::Create.into()).await {
        Err(object_store::Error::AlreadyExists { .. }) => {}
        other => panic!("a second create must be AlreadyExists, got {other:?}"),
    }
    // The same bytes again: the same ETag, a new generation.
    let second =
        store.put_opts(&path, "same bytes".into(), update(first.e_tag.clone(), Some(v1.clone()))).await.unwrap();
    assert_eq!(second.e_tag, first.e_tag);
    let v2 = second.version.clone().unwrap();
    assert_ne!(v2, v1);

    // The current ETag does not save a stale generation.
    stub.take_requests();
    match store.put_opts(&path, "lost update".into(), update(second.e_tag.clone(), Some(v1.clone()))).await {
        Err(object_store::Error::Precondition { .. }) => {}
        other => panic!("a stale generation must be refused, got {other:?}"),
    }
    let sent = stub.take_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].generation_match(), sent[0].status.as_u16()), (Some(v1.as_str()), 412));
    assert_eq!(sent[0].header("if-match"), None);
    assert_eq!(store.get(&path).await.unwrap().bytes().await.unwrap(), "same bytes");

    // No generation: refused by the client before any request.
    stub.take_requests();
    let err = store.put_opts(&path, "x".into(), update(second.e_tag.clone(), None)).await.unwrap_err();
    assert!(err.to_string().contains("Version required for conditional update"), "{err}");
    assert!(stub.take_requests().is_empty());

    // A bogus ETag with the current generation: accepted (the ETag is not sent).
    let third = store.put_opts(&path, "third".into(), update(Some("\"bogus\"".into()), Some(v2))).await.unwrap();
    assert_eq!(third.version.unwrap(), stub.object(&key).unwrap().generation.to_string());
    // An update of a missing object has no generation to match.
    match store.put_opts(&Path::from("missing"), "x".into(), update(None, Some(v1))).await {
        Err(object_store::Error::Precondition { .. }) => {}
        other => panic!("an update of a missing object must be refused, got {other:?}"),
    }
}

/// `memfs init`'s probe passes on the honest stub and refuses it once it ignores
/// preconditions, through the GCS client.
#[tokio::test]
async fn the_probe_tells_an_honest_stub_from_a_dishonest_one() {
    let stub = GcsStub::start(BUCKET).await;
    let store = stub.prefixed(&unique_prefix());
    probe::conditional_writes(store.as_ref()).await.unwrap();
    stub.set_ignore_preconditions(true);
    let err = probe::conditional_writes(store.as_ref()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "this object store cannot hold a memfs store safely: a create of an existing object was accepted (If-None-Match ignored); concurrent writers could lose updates"
    );
    assert!(stub.keys().is_empty(), "both probes removed their object");
}

/// The read side of the stub as the client uses it: ranges, HEAD, conditional reads, paged and
/// delimited listings, deletes.
#[tokio::test]
async fn reads_lists_and_deletes_through_the_gcs_client() {
    let stub = GcsStub::start(BUCKET).await;
    stub.set_page_size(2);
    let prefix = unique_prefix();
    let store = stub.prefixed(&prefix);
    for name in ["a/1", "a/2", "a/b/3", "c", "d/4"] {
        store.put(&Path::from(name), PutPayload::from(format!("data of {name}"))).await.unwrap();
    }
    let path = Path::from("a/1");
    let object = stub.object(&format!("{prefix}/a/1")).unwrap();

    assert_eq!(store.get_range(&path, 2..6).await.unwrap(), "ta o");
    let meta = store.head(&path).await.unwrap();
    assert_eq!((meta.size, meta.e_tag.as_deref()), (11, Some(object.etag.as_str())));
    assert_eq!(meta.version, Some(object.generation.to_string()));
    let opts = |o: GetOptions| async { store.get_opts(&path, o).await };
    match opts(GetOptions { if_none_match: Some(object.etag.clone()), ..Default::default() }).await {
        Err(object_store::Error::NotModified { .. }) => {}
        other => panic!("If-None-Match on the current ETag must be NotModified, got {other:?}"),
    }
    match opts(GetOptions { if_match: Some("\"other\"".into()), ..Default::default() }).await {
        Err(object_store::Error::Precondition { .. }) => {}
        other => panic!("If-Match on another ETag must be Precondition, got {other:?}"),
    }
    let r = opts(GetOptions { if_match: Some(object.etag.clone()), ..Default::default() }).await.unwrap();
    assert_eq!(r.bytes().await.unwrap(), "data of a/1");

    let mut all: Vec<String> = store.list(None).map_ok(|m| m.location.to_string()).try_collect().await.unwrap();
    all.sort();
    assert_eq!(all, ["a/1", "a/2", "a/b/3", "c", "d/4"]);
    let under_a: Vec<String> =
        store.list(Some(&Path::from("a"))).map_ok(|m| m.location.to_string()).try_collect().await.unwrap();
    assert_eq!(under_a, ["a/1", "a/2", "a/b/3"]);
    let top = store.list_with_delimiter(None).await.unwrap();
    let names = |v: Vec<Path>| v.into_iter().map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(names(top.common_prefixes), ["a", "d"]);
    assert_eq!(names(top.objects.into_iter().map(|m| m.location).collect()), ["c"]);
    let in_a = store.list_with_delimiter(Some(&Path::from("a"))).await.unwrap();
    assert_eq!(names(in_a.common_prefixes), ["a/b"]);
    assert_eq!(names(in_a.objects.into_iter().map(|m| m.location).collect()), ["a/1", "a/2"]);
    assert!(stub.requests().iter().any(|r| r.query.iter().any(|(k, _)| k == "continuation-token")));

    store.delete(&path).await.unwrap();
    match store.get(&path).await {
        Err(object_store::Error::NotFound { .. }) => {}
        other => panic!("a deleted object must be NotFound, got {other:?}"),
    }
    match store.delete(&path).await {
        Err(object_store::Error::NotFound { .. }) => {}
        other => panic!("deleting a missing object is NotFound on GCS, got {other:?}"),
    }
}
