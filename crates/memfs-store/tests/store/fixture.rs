//! Writes `tests/fixtures/format-8` (run once, by hand, when format 8 was released; never
//! again: a fixture is what that release wrote):
//!
//! ```sh
//! MEMFS_FIXTURE_OUT=tests/fixtures/format-8 cargo nextest run -p memfs-store --run-ignored only fixture::
//! ```
//!
//! A local folder's log written through the object-store path (`Backend::ObjectStore` over a
//! `LogStore`), as a bucket would hold it: its head carries the newest objects unwritten, which
//! a `file://` client never writes but must read. The commands are those of
//! `tests/fixtures/README.md`.

use std::sync::Arc;

use memfs_crypt::{KeyFile, KeySlots};
use memfs_store::log_store::LogStore;
use memfs_store::{Backend, EncryptedRepository, OpenOptions, StateDir};
use serde_json::json;

use crate::support::run;

#[tokio::test]
#[ignore = "writes a fixture: run by hand once per released format"]
async fn write_the_format_8_fixture() {
    let out = std::path::PathBuf::from(std::env::var("MEMFS_FIXTURE_OUT").expect("MEMFS_FIXTURE_OUT"));
    std::fs::create_dir_all(&out).unwrap();
    let key = KeyFile::generate().unwrap();
    key.write_new(&out.join("store.key")).unwrap();
    let log = Arc::new(LogStore::open(out.join("store")).unwrap());
    let options = OpenOptions { state_dir: StateDir::Off, actor: "fixture".into(), ..OpenOptions::default() };
    let repo = EncryptedRepository::init(
        Backend::ObjectStore(log),
        |root, id| KeySlots::with_key_file(root, id, &key),
        options,
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
}
