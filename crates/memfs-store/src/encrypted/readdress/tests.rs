use std::collections::BTreeMap;
use std::sync::Arc;

use memfs_core::{Command, Node, Tree};
use memfs_crypt::{Credential, KdfParams, KeyFile, KeySlots, RootKey};
use object_store::ObjectStore;
use object_store::memory::InMemory;
use serde_json::json;

use crate::encrypted::history::tests::{mutate, run};
use crate::encrypted::{Backend, EncryptedRepository, OpenOptions, ShredKeys};
use crate::error::Error;
use crate::fault::{Fault, FaultStore, OpClass, Target};
use crate::record::Record;
use crate::repository::{CommitInfo, Repository};
use crate::{CheckOptions, Revision, StateDir};

fn off() -> OpenOptions {
    OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() }
}

fn key() -> Credential {
    Credential::KeyFile(KeyFile::generate().unwrap())
}

/// The same key file each time.
fn alice_again() -> Credential {
    Credential::KeyFile(KeyFile::from_bytes([7; 32]))
}

/// A store on `store` opened by `alice`, with a history: files in a folder, a rename, an
/// edit, a deletion, a restore of an older commit.
async fn team_store(store: Arc<dyn ObjectStore>, alice: &Credential) -> EncryptedRepository {
    let slots = |r: &RootKey, id: &[u8; 16]| KeySlots::with_slot(r, id, alice, KdfParams::new(8, 1, 1).unwrap());
    let repo = EncryptedRepository::init(Backend::ObjectStore(store), slots, off()).await.unwrap();
    for input in [
        json!({"command": "create", "path": "/memories/a.md", "file_text": "alpha"}),
        json!({"command": "create", "path": "/memories/d/b.md", "file_text": "beta"}),
        json!({"command": "create", "path": "/memories/d/e/c.md", "file_text": "gamma"}),
        json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/d/a.md"}),
        json!({"command": "str_replace", "path": "/memories/d/b.md", "old_str": "beta", "new_str": "BETA"}),
        json!({"command": "delete", "path": "/memories/d/e"}),
    ] {
        run(&repo, input).await;
    }
    repo
}

/// Every file of a tree, `path → content`.
async fn files(repo: &EncryptedRepository, tree: &Tree) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(root) = tree.root().id() else { return out };
    let mut stack = vec![(memfs_core::ROOT.to_owned(), root)];
    while let Some((path, id)) = stack.pop() {
        for (name, node) in repo.dir(&id).await.unwrap().entries() {
            let child = format!("{path}/{name}");
            match node {
                Node::File(f) => {
                    drop(out.insert(child, String::from_utf8(repo.blob(&f.id).await.unwrap().to_vec()).unwrap()))
                }
                Node::Dir(d) => stack.push((child, d.id().unwrap())),
            }
        }
    }
    out
}

/// The store as a reader sees it: every kept commit's generation, record and files.
async fn history(repo: &EncryptedRepository) -> Vec<(u64, String, BTreeMap<String, String>)> {
    let mut out = Vec::new();
    for c in repo.log(None, None).await.unwrap() {
        let tree = repo.tree_at(&Revision::Generation(c.generation)).await.unwrap();
        out.push((c.generation, c.command.clone(), files(repo, &tree).await));
    }
    out
}

async fn shred(store: Arc<dyn ObjectStore>, old: &Credential, new: &Credential) -> Result<super::super::Shred, Error> {
    let plan = ShredKeys { new, params: KdfParams::new(8, 1, 1).unwrap(), remove_others: true, dry_run: false };
    EncryptedRepository::shred_keys(Backend::ObjectStore(store), old, off(), plan, &()).await
}

/// The history after a shred is the history before plus the shred's commit, read with the new
/// credential; no object keeps its name, `check` finds nothing wrong and nothing unreferenced,
/// and the old credential opens nothing.
#[tokio::test]
async fn a_shred_renames_every_object_and_keeps_the_history() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let (alice, carol) = (key(), key());
    let repo = team_store(store.clone(), &alice).await;
    let before = history(&repo).await;
    let old_names = repo.objects.list().await.unwrap();
    let done = shred(store.clone(), &alice, &carol).await.unwrap();
    assert_eq!((done.epoch, done.retired.clone()), (1, vec![0]));

    let repo = EncryptedRepository::open(Backend::ObjectStore(store.clone()), &carol, off()).await.unwrap();
    let after = history(&repo).await;
    assert_eq!(after[1..], before[..]);
    assert_eq!(after[0].0, before[0].0 + 1);
    assert_eq!(after[0].1, r#"{"command":"keys","change":"shred","counter":2,"slot":1}"#);
    assert_eq!(after[0].2, before[0].2);
    let names = repo.objects.list().await.unwrap();
    assert_eq!(names.len() as u64, done.resealed.objects);
    assert!(names.keys().all(|id| !old_names.contains_key(id)), "an object kept its name");
    let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.commits, report.unreferenced), (before.len() as u64 + 1, 0));
    let refused = EncryptedRepository::open(Backend::ObjectStore(store), &alice, off()).await.err().unwrap();
    assert!(matches!(refused, Error::Crypt(memfs_crypt::Error::WrongKey)), "{refused:?}");
}

/// A shred that fails at any one of its writes (before it, or after it landed) leaves a
/// store that one credential opens: the new one if `memfs.keys` was written, else the old
/// one, with which the shred run again finishes. Either way the files and history are whole.
#[tokio::test]
async fn a_shred_stopped_at_any_write_finishes_when_run_again() {
    let clean = FaultStore::new(InMemory::new());
    let plan = clean.plan().clone();
    let clean: Arc<dyn ObjectStore> = Arc::new(clean);
    let alice = key();
    let before = history(&team_store(clean.clone(), &alice).await).await;
    let puts = plan.count(OpClass::Put);
    shred(clean, &alice, &key()).await.unwrap();
    let writes = plan.count(OpClass::Put) - puts;
    assert!(writes > 10, "{writes}");
    for fault in [Fault::Fail, Fault::FailAfter] {
        for n in 1..=writes {
            let faulty = FaultStore::new(InMemory::new());
            let plan = faulty.plan().clone();
            let store: Arc<dyn ObjectStore> = Arc::new(faulty);
            team_store(store.clone(), &alice).await;
            let (first, second) = (key(), key());
            plan.arm(Target::Class(OpClass::Put), n, fault);
            let stopped = shred(store.clone(), &alice, &first).await;
            plan.disarm();
            let opens = |c| EncryptedRepository::open(Backend::ObjectStore(store.clone()), c, off());
            let now = match opens(&first).await {
                Ok(_) => &first,
                Err(_) => {
                    assert!(stopped.is_err(), "{fault:?} at write {n}: the shred said done");
                    shred(store.clone(), &alice, &second).await.unwrap();
                    &second
                }
            };
            let repo = opens(now).await.unwrap();
            let after = history(&repo).await;
            assert_eq!(after[1..], before[..], "{fault:?} at write {n}");
            let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
            assert!(report.problems.is_empty(), "{fault:?} at write {n}: {:?}", report.problems);
        }
    }
}

/// A writer keeps committing with the old credential while a shred runs: every commit that
/// succeeded is in the store the new credential opens, and after the swap its commits fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_racing_a_shred_lose_no_commit() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let (alice, carol) = (alice_again(), key());
    let repo = team_store(store.clone(), &alice).await;
    for i in 0..60 {
        run(
            &repo,
            json!({"command": "create", "path": format!("/memories/many/{i}.md"), "file_text": format!("file {i}")}),
        )
        .await;
    }
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            let Ok(repo) = EncryptedRepository::open(Backend::ObjectStore(store), &alice_again(), off()).await else {
                return Vec::new();
            };
            let mut committed = Vec::new();
            for i in 0.. {
                let path = format!("/memories/racing/{i}.md");
                let input = json!({"command": "create", "path": path, "file_text": format!("racing {i}")});
                let landed = loop {
                    let Ok(head) = repo.head().await else { break false };
                    let Ok(m) = mutate(&repo, &head, input.clone()).await else { break false };
                    let command = Record::Tool(Command::from_input(&input).unwrap());
                    let info = CommitInfo { actor: "writer".into(), command, changes: m.changes.clone() };
                    match repo.commit(&head, &m, info).await {
                        Ok(_) => break true,
                        Err(Error::Conflict) => continue,
                        Err(_) => break false,
                    }
                };
                if !landed {
                    break;
                }
                committed.push((path, format!("racing {i}")));
                // An agent's pace, not a tight loop: a writer that commits faster than the shred
                // catches up makes it give up (`Error::Conflict`, run it again), as a purge does.
                tokio::time::sleep(std::time::Duration::from_millis(3)).await;
            }
            committed
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    shred(store.clone(), &alice, &carol).await.unwrap();
    let committed = writer.await.unwrap();
    assert!(!committed.is_empty(), "the writer never committed: the test proves nothing");
    let repo = EncryptedRepository::open(Backend::ObjectStore(store), &carol, off()).await.unwrap();
    let head = repo.head().await.unwrap();
    let now = files(&repo, &head.tree).await;
    for (path, text) in &committed {
        assert_eq!(now.get(path), Some(text), "{path}, committed during the shred, is lost");
    }
}
