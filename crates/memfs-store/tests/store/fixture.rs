//! A local folder's log written through the object-store path (`Backend::ObjectStore` over a
//! `LogStore`), as a bucket would hold it: its head carries the newest objects unwritten,
//! which a `file://` client never writes but must read. This is how `tests/fixtures/format-1`
//! was made (with the commands of `tests/fixtures/README.md`); every run writes such a folder
//! again and checks what the fixture is relied on for. To write a fixture of a new format
//! once, when that format is released:
//!
//! ```sh
//! MEMFS_FIXTURE_OUT=tests/fixtures/format-N cargo nextest run -p memfs-store fixture::
//! ```

use std::sync::Arc;

use futures::TryStreamExt;
use memfs_crypt::{Credential, KeyFile, KeySlots};
use memfs_store::open_local_log;
use memfs_store::{Backend, EncryptedRepository, OpenOptions, StateDir};
use object_store::ObjectStore;
use object_store::path::Path;
use serde_json::json;

use crate::support::{check, run, verify};

#[tokio::test]
async fn a_log_folder_whose_head_carries_every_object_reads_through_file_urls() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::env::var_os("MEMFS_FIXTURE_OUT").map_or_else(|| tmp.path().join("fixture"), Into::into);
    std::fs::create_dir_all(&out).unwrap();
    let key = KeyFile::generate().unwrap();
    key.write_new(&out.join("store.key")).unwrap();
    let log = Arc::new(open_local_log(out.join("store")).unwrap());
    let options = || OpenOptions { state_dir: StateDir::Off, actor: "fixture".into(), ..OpenOptions::default() };
    let repo = EncryptedRepository::init(
        Backend::ObjectStore(log.clone()),
        |root, id| KeySlots::with_key_file(root, id, &key),
        options(),
    )
    .await
    .unwrap();
    for input in [
        json!({"command": "create", "path": "/memories/notes.md", "file_text": "alpha\nbeta\n"}),
        json!({"command": "create", "path": "/memories/projects/plan.md", "file_text": "step one\n"}),
        json!({"command": "str_replace", "path": "/memories/notes.md", "old_str": "beta", "new_str": "gamma"}),
        json!({"command": "rename", "old_path": "/memories/projects/plan.md", "new_path": "/memories/projects/roadmap.md"}),
        json!({"command": "create", "path": "/memories/tmp.md", "file_text": "temporary\n"}),
        json!({"command": "delete", "path": "/memories/tmp.md"}),
    ] {
        assert!(!run(&repo, &input).await.unwrap().is_error, "{input}");
    }
    drop(repo);

    let stored: Vec<_> = log.list(Some(&Path::from("objects"))).try_collect().await.unwrap();
    assert!(stored.is_empty(), "every object is carried in the head: {stored:?}");
    // A `file://` client (no snapshot, nothing carried when it writes) reads it all from the head.
    let local = EncryptedRepository::open(Backend::Local(out.join("store")), &Credential::KeyFile(key), options())
        .await
        .unwrap();
    let snapshot = verify(&local).await.unwrap();
    assert_eq!(snapshot.generation, 6);
    assert_eq!(snapshot.paths["/memories/notes.md"], "alpha\ngamma\n");
    assert_eq!(snapshot.paths["/memories/projects/roadmap.md"], "step one\n");
    assert!(!snapshot.paths.contains_key("/memories/tmp.md"));
    assert_eq!(local.log(None, None).await.unwrap().len(), 6);
    assert_eq!(check(&local).await, 0, "no unreferenced object");
}
