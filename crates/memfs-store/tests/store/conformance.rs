//! The repository conformance suite on every backend of `EncryptedRepository`, and on the
//! fault wrapper with no faults armed (a wrapper must not change behaviour).

use std::sync::Arc;

use memfs_store::conformance::check_repository;
use memfs_store::fault::{FaultStore, OpClass};
use memfs_store::{Backend, EncryptedRepository};
use object_store::memory::InMemory;

use crate::support::{init, open};

#[tokio::test]
async fn memory() {
    check_repository(&init(Backend::Memory, None).await.unwrap()).await;
    check_repository(&EncryptedRepository::ephemeral().unwrap()).await;
}

#[tokio::test]
async fn local_folder() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    check_repository(&init(Backend::Local(store.clone()), Some(state.path())).await.unwrap()).await;
    // And the store reopens from the folder, with the suite's last state.
    let again = open(Backend::Local(store), Some(state.path())).await.unwrap();
    let snapshot = crate::support::verify(&again).await.unwrap();
    assert_eq!(snapshot.paths.keys().collect::<Vec<_>>(), ["/memories/a.txt", "/memories/c.txt"]);
}

#[tokio::test]
async fn object_store_behind_the_fault_wrapper() {
    let store = Arc::new(FaultStore::new(InMemory::new()));
    let plan = store.plan().clone();
    check_repository(&init(Backend::ObjectStore(store), None).await.unwrap()).await;
    assert!(plan.count(OpClass::Put) > 0 && plan.count(OpClass::Get) > 0);
    assert_eq!(plan.injected(), 0);
}
