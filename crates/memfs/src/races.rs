//! Tests of the transaction driver (`crate::transaction`) through every mutation: each one
//! survives what a tool command survives, a `gc` that removed an object it reads (and put it
//! back) and a lost race.
//!
//! [`Racing`] stands between the engine and a real encrypted store: it fails the next reads
//! with `MissingObject`, as a store does while a `gc` that lost a race with a writer has not
//! yet put back what it deleted, or lets a rival commit just after it hands out a head, so
//! that the commit made on that head loses the compare-and-swap.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use memfs_core::{Command, Dialect, Dir, Mutation, ObjectId};
use memfs_store::{CommitInfo, EncryptedRepository, Error as StoreError, Head, Repository, WithHistory};
use serde_json::json;

use crate::engine::Memfs;
use crate::import::{Entry, ImportOptions};

struct Racing {
    inner: Arc<EncryptedRepository>,
    /// Object reads (directories, contents) still to fail.
    missing: AtomicU32,
    /// Head reads still to fail (the head's policy object removed).
    missing_heads: AtomicU32,
    /// What a rival commits right after the next head is read.
    rival: std::sync::Mutex<Option<Command>>,
}

impl Racing {
    fn gone(&self, counter: &AtomicU32) -> Result<(), StoreError> {
        match counter.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)) {
            Ok(_) => Err(StoreError::MissingObject { id: "0".repeat(64) }),
            Err(_) => Ok(()),
        }
    }
}

impl fmt::Display for Racing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "racing {}", self.inner)
    }
}

#[async_trait]
impl Repository for Racing {
    async fn head(&self) -> Result<Head, StoreError> {
        self.gone(&self.missing_heads)?;
        let head = self.inner.head().await?;
        let rival = self.rival.lock().unwrap().take();
        if let Some(command) = rival {
            let rival = Memfs::with_repository(self.inner.clone(), Dialect::Spec).with_actor("rival");
            assert!(!rival.execute(&command).await.unwrap().is_error);
        }
        Ok(head)
    }
    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, StoreError> {
        self.gone(&self.missing)?;
        self.inner.dir(id).await
    }
    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, StoreError> {
        self.gone(&self.missing)?;
        self.inner.blob(id).await
    }
    fn address(&self, content: &[u8]) -> ObjectId {
        self.inner.address(content)
    }
    async fn commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, StoreError> {
        self.inner.commit(base, mutation, info).await
    }
}

/// History, gc and policy go to the store behind, past the races.
impl WithHistory for Racing {
    fn history(&self) -> Option<&EncryptedRepository> {
        Some(&self.inner)
    }
}

/// A store with `/memories/a.md` (created on day 100, then changed) and `/memories/b.md`, and
/// the repository in front of it.
async fn store() -> Arc<Racing> {
    let racing = Arc::new(Racing {
        inner: Arc::new(EncryptedRepository::ephemeral().unwrap()),
        missing: AtomicU32::new(0),
        missing_heads: AtomicU32::new(0),
        rival: std::sync::Mutex::default(),
    });
    let memfs = handle(&racing, 100);
    for input in [
        json!({"command": "create", "path": "/memories/a.md", "file_text": "one\n"}),
        json!({"command": "create", "path": "/memories/b.md", "file_text": "b\n"}),
        json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "two"}),
    ] {
        assert!(!memfs.call(&input).await.is_error);
    }
    racing
}

fn handle(racing: &Arc<Racing>, today: memfs_core::Day) -> Memfs {
    Memfs::with_repository(racing.clone(), Dialect::Spec).with_actor("tester").with_today(Some(today))
}

/// What goes wrong under the next operation.
enum Race {
    /// The next object reads (or head reads) fail, as while a racing gc has not yet put
    /// back what it deleted.
    Gc { reads: u32, heads: u32 },
    /// A rival commits right after the next head read.
    Lost,
}

/// A new store, and a handle on it for `today` with `race` armed.
async fn raced(today: memfs_core::Day, race: Race) -> (Arc<Racing>, Memfs) {
    let racing = store().await;
    let memfs = handle(&racing, today);
    arm(&racing, race);
    (racing, memfs)
}

fn arm(racing: &Racing, race: Race) {
    match race {
        Race::Gc { reads, heads } => {
            racing.missing.store(reads, Ordering::SeqCst);
            racing.missing_heads.store(heads, Ordering::SeqCst);
        }
        Race::Lost => {
            let rival = Command::Create { path: "/memories/rival.md".into(), file_text: "r\n".into() };
            *racing.rival.lock().unwrap() = Some(rival);
        }
    }
}

const GC: Race = Race::Gc { reads: 1, heads: 0 };

/// The newest commits' records, newest first.
async fn records(memfs: &Memfs, n: usize) -> Vec<(u64, String, String)> {
    let log = memfs.log(Some(n), None).await.unwrap();
    log.into_iter().map(|c| (c.generation, c.actor, c.command)).collect()
}

/// The lost race ran the operation again on the rival's head: the rival's commit is @4 and
/// the operation's @5, recorded as `record`.
async fn reran(memfs: &Memfs, racing: &Racing, record: &str) {
    assert!(racing.rival.lock().unwrap().is_none(), "the rival committed");
    assert_eq!(memfs.stats().conflicts, 1);
    let rival = r#"{"command":"create","path":"/memories/rival.md","file_text":"r\n"}"#;
    assert_eq!(records(memfs, 2).await, [(5, "tester".into(), record.into()), (4, "rival".into(), rival.into())]);
}

fn faults_fired(racing: &Racing) {
    assert_eq!(racing.missing.load(Ordering::SeqCst), 0, "an object read failed");
    assert_eq!(racing.missing_heads.load(Ordering::SeqCst), 0, "a head read failed");
}

#[tokio::test]
async fn restore_survives_a_gc_race_and_reruns_on_a_lost_race() {
    let (racing, memfs) = raced(101, GC).await;
    let restored = memfs.restore("@1", Some("/memories/a.md"), false).await.unwrap();
    faults_fired(&racing);
    assert_eq!(restored.generation, Some(4));
    assert_eq!(restored.changes, [memfs_core::Change::Modified { path: "/memories/a.md".into() }]);

    let (racing, memfs) = raced(101, Race::Lost).await;
    let restored = memfs.restore("@1", Some("/memories/a.md"), false).await.unwrap();
    assert_eq!(restored.generation, Some(5));
    let id = memfs.resolve("@1").await.unwrap().id;
    let record = format!(r#"{{"command":"restore","path":"/memories/a.md","at":"@1","commit":"{id}","generation":1}}"#);
    reran(&memfs, &racing, &record).await;
}

#[tokio::test]
async fn undo_survives_a_gc_race_and_reruns_on_a_lost_race() {
    let (racing, memfs) = raced(101, GC).await;
    let undone = memfs.undo(false).await.unwrap();
    faults_fired(&racing);
    assert_eq!((undone.generation, undone.undone.generation), (Some(4), 3));

    // On the rival's head, undo undoes the rival's commit.
    let (racing, memfs) = raced(101, Race::Lost).await;
    let undone = memfs.undo(false).await.unwrap();
    assert_eq!(undone.changes, [memfs_core::Change::Deleted { path: "/memories/rival.md".into() }]);
    let id = memfs.resolve("@4").await.unwrap().id;
    reran(&memfs, &racing, &format!(r#"{{"command":"undo","commit":"{id}","generation":4}}"#)).await;
}

#[tokio::test]
async fn import_survives_a_gc_race_and_reruns_on_a_lost_race() {
    let entries = [Entry::File { path: "/memories/c.md".into(), text: "c\n".into() }];
    let options = ImportOptions { overwrite: false, source: "notes".into(), dry_run: false };
    let (racing, memfs) = raced(101, GC).await;
    let imported = memfs.import(&entries, &options, &()).await.unwrap();
    faults_fired(&racing);
    assert_eq!(imported.generation, Some(4));

    let (racing, memfs) = raced(101, Race::Lost).await;
    let imported = memfs.import(&entries, &options, &()).await.unwrap();
    assert_eq!(imported.generation, Some(5));
    reran(&memfs, &racing, r#"{"command":"import","files":1,"from":"notes"}"#).await;
}

#[tokio::test]
async fn an_edit_survives_a_gc_race_reruns_on_a_lost_race_and_stops_when_the_rival_wrote_its_file() {
    let racing = store().await;
    let memfs = handle(&racing, 101);
    let version = memfs.file("/memories/a.md").await.unwrap().version;
    arm(&racing, GC);
    let edited = memfs.edit("/memories/a.md", &version, "three\n").await.unwrap();
    faults_fired(&racing);
    assert!(matches!(edited, crate::Edited::Answered { ref result, .. } if !result.is_error), "{edited:?}");

    // A rival wrote another file: the edit runs again on its head and is written.
    let racing = store().await;
    let memfs = handle(&racing, 101);
    let version = memfs.file("/memories/a.md").await.unwrap().version;
    arm(&racing, Race::Lost);
    memfs.edit("/memories/a.md", &version, "three\n").await.unwrap();
    reran(
        &memfs,
        &racing,
        r#"{"command":"str_replace","path":"/memories/a.md","old_str":"two\n","new_str":"three\n"}"#,
    )
    .await;

    // A rival wrote this file: the edit, run again on its head, finds another version and
    // writes nothing.
    let racing = store().await;
    let memfs = handle(&racing, 101);
    let version = memfs.file("/memories/a.md").await.unwrap().version;
    *racing.rival.lock().unwrap() =
        Some(Command::StrReplace { path: "/memories/a.md".into(), old_str: "two".into(), new_str: Some("2".into()) });
    let edited = memfs.edit("/memories/a.md", &version, "three\n").await.unwrap();
    let now = memfs.file("/memories/a.md").await.unwrap();
    assert_eq!(now.text, "2\n");
    assert_eq!(edited, crate::Edited::Changed { now: Some(now) });
    assert_eq!(records(&memfs, 1).await[0].1, "rival");
}

#[tokio::test]
async fn expire_survives_a_gc_race_and_reruns_on_a_lost_race() {
    let (racing, memfs) = raced(200, GC).await;
    let expired = memfs.expire(30, false).await.unwrap();
    faults_fired(&racing);
    assert_eq!(expired.files, [("/memories/a.md".to_owned(), 100), ("/memories/b.md".to_owned(), 100)]);
    assert_eq!(expired.generation, Some(4));

    // The rival's file is new today: it stays.
    let (racing, memfs) = raced(200, Race::Lost).await;
    let expired = memfs.expire(30, false).await.unwrap();
    assert_eq!(expired.files.len(), 2);
    reran(&memfs, &racing, r#"{"command":"expire","files":2,"unused_for_days":30}"#).await;
}

#[tokio::test]
async fn the_access_flush_survives_a_gc_race_and_reruns_on_a_lost_race() {
    // A read noted on day 101 of a file last used on day 100, then the race, then the flush.
    let view = json!({"command": "view", "path": "/memories/b.md"});
    for race in [GC, Race::Lost] {
        let racing = store().await;
        let memfs = handle(&racing, 101);
        assert!(!memfs.call(&view).await.is_error);
        let lost = matches!(race, Race::Lost);
        arm(&racing, race);
        assert_eq!(memfs.flush().await.unwrap(), 1);
        faults_fired(&racing);
        let record = r#"{"command":"record-access","files":1}"#;
        match lost {
            true => reran(&memfs, &racing, record).await,
            false => assert_eq!(records(&memfs, 1).await, [(4, "tester".into(), record.into())]),
        }
    }
}

#[tokio::test]
async fn policy_set_survives_a_gc_race_and_reruns_on_a_lost_race() {
    let (racing, memfs) = raced(101, Race::Gc { reads: 0, heads: 1 }).await;
    let changed = memfs.set_policy("max-file-bytes", "64KiB").await.unwrap();
    faults_fired(&racing);
    assert_eq!(changed.generation, Some(4));

    let (racing, memfs) = raced(101, Race::Lost).await;
    let changed = memfs.set_policy("max-file-bytes", "64KiB").await.unwrap();
    assert_eq!(changed.generation, Some(5));
    reran(&memfs, &racing, r#"{"command":"policy","set":"max-file-bytes","value":"65536"}"#).await;
}

/// A gc race that outlasts the re-runs is reported, not hidden.
#[tokio::test]
async fn an_object_missing_for_good_is_reported() {
    let (_racing, memfs) = raced(101, Race::Gc { reads: 100, heads: 0 }).await;
    let err = memfs.restore("@1", Some("/memories/a.md"), false).await.unwrap_err();
    assert_eq!(
        crate::error_chain(&err),
        format!("store racing memory://: object {} is missing from the store", "0".repeat(64))
    );
}
