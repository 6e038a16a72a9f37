//! A command whose commit's answer was lost, on a store that then cannot be read: its outcome
//! is unknown. It fails with [`ErrorKind::OutcomeUnknown`] (what the Python and Node packages
//! raise as `OutcomeUnknownError`, and `memfs serve` answers in words of its own), and memfs
//! does not run it again. Through a real encrypted repository over the fault store: the head
//! swap lands and its answer is lost, the resend is refused, every read fails.

use std::sync::Arc;

use memfs::{Dialect, ErrorKind, Memfs};
use memfs_core::Command;
use memfs_crypt::{KeyFile, KeySlots};
use memfs_store::fault::{Fault, FaultStore, OpClass, Target};
use memfs_store::{Backend, EncryptedRepository, OpenOptions, StateDir};
use serde_json::json;

use crate::support::check_text;

#[tokio::test]
async fn a_lost_answer_on_an_unreadable_store_is_an_outcome_unknown_run_once() {
    let store = Arc::new(FaultStore::new(object_store::memory::InMemory::new()));
    let key = KeyFile::from_bytes([7; 32]);
    let options = OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() };
    let repo = EncryptedRepository::init(
        Backend::ObjectStore(store.clone()),
        |root, id| KeySlots::with_key_file(root, id, &key),
        options,
    )
    .await
    .expect("init");
    let fs = Memfs::with_repository(Arc::new(repo), Dialect::Spec);
    let created = fs.call(&json!({"command": "create", "path": "/memories/list.md", "file_text": "a\n"})).await;
    check_text("create", &created.content, "File created successfully at: /memories/list.md");

    let plan = store.plan();
    plan.arm(Target::Class(OpClass::Put), 1, Fault::FailAfter);
    // Every read fails, for longer than memfs waits (10 s).
    for _ in 0..100 {
        plan.then(Target::Class(OpClass::Get), 1, Fault::Fail);
    }
    let insert = Command::from_input(
        &json!({"command": "insert", "path": "/memories/list.md", "insert_line": 0, "insert_text": "first"}),
    )
    .expect("a command");
    let err = fs.execute(&insert).await.expect_err("the outcome is unknown");
    plan.disarm();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown, "{err:?}");
    let message = memfs::error_chain(&err);
    assert!(message.contains("the outcome is unknown: commit "), "{message}");
    assert!(message.ends_with("`memfs log` shows whether it is in"), "{message}");

    // The swap had landed: the insert is in, once, and memfs did not run it again.
    let shown = fs.call(&json!({"command": "view", "path": "/memories/list.md"})).await;
    check_text(
        "view",
        &shown.content,
        "Here's the content of /memories/list.md with line numbers:\n     1\tfirst\n     2\ta\n     3\t",
    );
    assert_eq!((fs.stats().commands, fs.stats().commits, fs.stats().conflicts), (3, 1, 0), "{:?}", fs.stats());
}
