//! The backend conformance suite: exactly the object-store semantics memfs relies on, checked
//! on every backend (memory, local folder, S3 on moto, Azure on Azurite), in the manner of
//! `object_store`'s own `integration.rs`; then the repository suite on each.
//!
//! What memfs needs: `PutMode::Create` refuses an existing object; `PutMode::Update` succeeds
//! with the version last read and refuses a stale one, atomically under a race (exactly one
//! of N racers wins); a conditional GET (`If-None-Match`) answers `NotModified` when nothing
//! changed (the cheap head freshness check); listings under a prefix; deletes.
//!
//! One test per backend and check, so they run in parallel and a failure names its backend.

use std::sync::Arc;

use bytes::Bytes;
use futures::TryStreamExt;
use futures::future::join_all;
use memfs_store::conformance::check_repository;
use memfs_store::{Backend, EncryptedRepository};
use object_store::path::Path;
use object_store::{GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, UpdateVersion};

use crate::backends::{Kind, TestStore, fresh};
use crate::support::init;

const RACERS: usize = 16;
/// Rounds of racing updates with head-sized bodies.
const HEAVY_ROUNDS: usize = 8;

/// A 64 KiB body, distinct per round and racer.
fn heavy_body(round: usize, racer: usize) -> Vec<u8> {
    let mut body = format!("round {round} racer {racer} ").into_bytes();
    body.resize(64 * 1024, b'x');
    body
}

/// The current version of `path`, to race on.
async fn base_after_race(store: &dyn ObjectStore, path: &Path) -> UpdateVersion {
    let meta = store.head(path).await.expect("head of the raced object");
    UpdateVersion { e_tag: meta.e_tag, version: meta.version }
}

async fn read(store: &dyn ObjectStore, path: &Path) -> Bytes {
    store.get(path).await.expect("get").bytes().await.expect("bytes")
}

/// The checks, on one fresh store.
async fn check_object_store(t: &TestStore) {
    let (kind, store) = (t.kind, t.store.as_ref());
    let path = Path::from("dir/object");

    // Put, get, head.
    let first = store.put_opts(&path, "one".into(), PutMode::Create.into()).await.expect("create");
    assert_eq!(read(store, &path).await, "one", "{kind:?}");
    let meta = store.head(&path).await.expect("head");
    assert_eq!(meta.size, 3, "{kind:?}");
    assert_eq!(meta.e_tag, first.e_tag, "{kind:?}: head's e_tag is the put's");

    // Create refuses an existing object and changes nothing.
    match store.put_opts(&path, "two".into(), PutMode::Create.into()).await {
        Err(object_store::Error::AlreadyExists { .. }) => {}
        other => panic!("{kind:?}: a second create gave {other:?}"),
    }
    assert_eq!(read(store, &path).await, "one", "{kind:?}");

    // Update with the current version; a stale one is refused and changes nothing.
    let stale = UpdateVersion::from(first);
    let second = store
        .put_opts(&path, "three".into(), PutOptions::from(PutMode::Update(stale.clone())))
        .await
        .expect("update with the current version");
    match store.put_opts(&path, "four".into(), PutOptions::from(PutMode::Update(stale))).await {
        Err(object_store::Error::Precondition { .. }) => {}
        other => panic!("{kind:?}: a stale update gave {other:?}"),
    }
    assert_eq!(read(store, &path).await, "three", "{kind:?}");

    // An update of a missing object fails with Precondition on every backend (S3 answers 404,
    // which object_store reports as Precondition; Azurite answers 412); memfs only updates what
    // it read.
    let missing = Path::from("dir/missing");
    let version = UpdateVersion::from(second.clone());
    match store.put_opts(&missing, "x".into(), PutOptions::from(PutMode::Update(version))).await {
        Err(object_store::Error::Precondition { .. }) => {}
        other => panic!("{kind:?}: updating a missing object gave {other:?}"),
    }
    assert!(matches!(store.head(&missing).await, Err(object_store::Error::NotFound { .. })), "{kind:?}");

    // A conditional GET on the current e_tag is NotModified; on a stale one it is the object.
    let current = second.e_tag.clone().expect("an e_tag");
    let not_modified = GetOptions { if_none_match: Some(current), ..Default::default() };
    match store.get_opts(&path, not_modified).await {
        Err(object_store::Error::NotModified { .. }) => {}
        other => panic!("{kind:?}: If-None-Match on the current e_tag gave {:?}", other.map(|r| r.meta)),
    }
    let changed = GetOptions { if_none_match: Some("\"stale\"".into()), ..Default::default() };
    let got = store.get_opts(&path, changed).await.expect("If-None-Match on another e_tag");
    assert_eq!(got.bytes().await.expect("bytes"), "three", "{kind:?}");

    // Racing updates on one version: exactly one wins, the rest see Precondition.
    let base = UpdateVersion::from(second);
    let path_ref = &path;
    let results = join_all((0..RACERS).map(|i| {
        let base = base.clone();
        let path = path_ref;
        async move {
            let opts = PutOptions::from(PutMode::Update(base));
            store.put_opts(path, format!("racer {i}").into(), opts).await
        }
    }))
    .await;
    let winners: Vec<usize> = results.iter().enumerate().filter(|(_, r)| r.is_ok()).map(|(i, _)| i).collect();
    assert_eq!(winners.len(), 1, "{kind:?}: racing updates: {results:?}");
    for r in &results {
        assert!(matches!(r, Ok(_) | Err(object_store::Error::Precondition { .. })), "{kind:?}: {r:?}");
    }
    assert_eq!(read(store, &path).await, format!("racer {}", winners[0]), "{kind:?}");

    // The same with bodies the size of a full head (64 KiB), over several rounds: a server whose
    // check and write are two steps can let two racers through while it takes in a body. (Plain
    // moto does so only under heavier load than this: in the 16 x 200 fleet, 3 and 4 updates
    // were lost in two runs, none with its PUT handler serialised; scripts/moto_server.py.)
    let mut version = base_after_race(store, &path).await;
    for round in 0..HEAVY_ROUNDS {
        let results = join_all((0..RACERS).map(|i| {
            let opts = PutOptions::from(PutMode::Update(version.clone()));
            let body = heavy_body(round, i);
            async move { store.put_opts(path_ref, body.into(), opts).await }
        }))
        .await;
        let winners: Vec<usize> = results.iter().enumerate().filter(|(_, r)| r.is_ok()).map(|(i, _)| i).collect();
        assert_eq!(winners.len(), 1, "{kind:?}: round {round} of racing 64 KiB updates: {winners:?} won");
        assert_eq!(read(store, &path).await, String::from_utf8(heavy_body(round, winners[0])).unwrap(), "{kind:?}");
        version = base_after_race(store, &path).await;
    }

    // Racing creates of a new object: exactly one wins.
    let fresh = Path::from("dir/raced");
    let results =
        join_all((0..RACERS).map(|i| store.put_opts(&fresh, format!("creator {i}").into(), PutMode::Create.into())))
            .await;
    let winners: Vec<usize> = results.iter().enumerate().filter(|(_, r)| r.is_ok()).map(|(i, _)| i).collect();
    assert_eq!(winners.len(), 1, "{kind:?}: racing creates: {results:?}");
    for r in &results {
        assert!(matches!(r, Ok(_) | Err(object_store::Error::AlreadyExists { .. })), "{kind:?}: {r:?}");
    }
    assert_eq!(read(store, &fresh).await, format!("creator {}", winners[0]), "{kind:?}");

    // Listing under a prefix, and at the top.
    store.put(&Path::from("other/x"), "x".into()).await.expect("put");
    let mut listed: Vec<String> =
        store.list(Some(&Path::from("dir"))).map_ok(|m| m.location.to_string()).try_collect().await.expect("list");
    listed.sort();
    assert_eq!(listed, ["dir/object", "dir/raced"], "{kind:?}");
    let top = store.list_with_delimiter(None).await.expect("list with delimiter");
    let mut prefixes: Vec<String> = top.common_prefixes.iter().map(|p| p.to_string()).collect();
    prefixes.sort();
    assert_eq!(prefixes, ["dir", "other"], "{kind:?}");

    // Delete; a deleted object is gone. Deleting a missing one differs by backend (memfs
    // treats NotFound on delete as done): asserted so that a change is noticed.
    store.delete(&fresh).await.expect("delete");
    assert!(matches!(store.get(&fresh).await, Err(object_store::Error::NotFound { .. })), "{kind:?}");
    let again = store.delete(&fresh).await;
    match kind {
        Kind::Memory | Kind::Local | Kind::S3 => assert!(again.is_ok(), "{kind:?}: {again:?}"),
        Kind::Azure => assert!(matches!(again, Err(object_store::Error::NotFound { .. })), "{kind:?}: {again:?}"),
    }
}

/// The object checks on a fresh store of `kind` (skipped, or failed, as `fresh` says).
async fn objects(kind: Kind) {
    let Some(t) = fresh(kind) else { return };
    check_object_store(&t).await;
}

/// The repository suite and `memfs init`'s probe on a fresh store of `kind`.
async fn repository(kind: Kind) {
    let Some(t) = fresh(kind) else { return };
    let repo: EncryptedRepository =
        init(Backend::ObjectStore(Arc::clone(&t.store)), None).await.expect("init on a fresh store");
    check_repository(&repo).await;
    // The probe `memfs init` runs passes too, and leaves nothing behind.
    let before: Vec<_> = t.store.list(None).try_collect().await.expect("list");
    memfs_store::probe::conditional_writes(t.store.as_ref()).await.expect("the probe passes");
    let after: Vec<_> = t.store.list(None).try_collect().await.expect("list");
    assert_eq!(before.len(), after.len(), "{kind:?}: the probe left an object");
}

#[tokio::test]
async fn objects_memory() {
    objects(Kind::Memory).await;
}

#[tokio::test]
async fn objects_local() {
    objects(Kind::Local).await;
}

#[tokio::test]
async fn objects_s3() {
    objects(Kind::S3).await;
}

#[tokio::test]
async fn objects_azure() {
    objects(Kind::Azure).await;
}

#[tokio::test]
async fn repository_memory() {
    repository(Kind::Memory).await;
}

#[tokio::test]
async fn repository_local() {
    repository(Kind::Local).await;
}

#[tokio::test]
async fn repository_s3() {
    repository(Kind::S3).await;
}

#[tokio::test]
async fn repository_azure() {
    repository(Kind::Azure).await;
}
