use std::collections::BTreeMap;

use memfs_core::{Node, Tree, normalized};
use serde_json::{Value, json};

use super::*;
use crate::encrypted::history::tests::{mutate, run, stopped_before_swap};
use crate::repository::{CommitInfo, Repository};
use crate::{Backend, CheckOptions, GcOptions, OpenOptions, Revision};

fn at(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

fn create(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

fn replace(path: &str, old: &str, new: &str) -> Value {
    json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
}

fn rename(from: &str, to: &str) -> Value {
    json!({"command": "rename", "old_path": from, "new_path": to})
}

/// Every file of a tree, `path → content`.
async fn files(repo: &EncryptedRepository, tree: &Tree) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(memfs_core::ROOT.to_owned(), tree.root().id().unwrap())];
    while let Some((path, id)) = stack.pop() {
        for (name, node) in repo.dir(&id).await.unwrap().entries() {
            let child = format!("{path}/{name}");
            match node {
                Node::File(f) => {
                    let text = String::from_utf8(repo.blob(&f.id).await.unwrap().to_vec()).unwrap();
                    out.insert(child, text);
                }
                Node::Dir(d) => stack.push((child, d.id().unwrap())),
            }
        }
    }
    out
}

async fn files_at(repo: &EncryptedRepository, generation: u64) -> BTreeMap<String, String> {
    files(repo, &repo.tree_at(&Revision::Generation(generation)).await.unwrap()).await
}

fn tree(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
}

/// The log as `(generation, command, changes)`, newest first.
async fn log(repo: &EncryptedRepository) -> Vec<(u64, String, Vec<String>)> {
    let line = |c: &Change| match c {
        Change::Created { path } => format!("A {path}"),
        Change::Modified { path } => format!("M {path}"),
        Change::Deleted { path } => format!("D {path}"),
        Change::Renamed { from, to } => format!("R {from} {to}"),
    };
    let log = repo.log(None, None).await.unwrap();
    log.into_iter().map(|c| (c.generation, c.command.clone(), c.changes.iter().map(line).collect())).collect()
}

fn entry(generation: u64, command: &str, changes: &[&str]) -> (u64, String, Vec<String>) {
    (generation, command.to_owned(), changes.iter().map(|c| c.to_string()).collect())
}

/// A purge with `--all-copies`: the tests written before live copies were refused.
async fn purge(repo: &EncryptedRepository, path: &str) -> Result<PurgeReport, PurgeError> {
    purge_with(repo, path, PurgeOptions { all_copies: true, dry_run: false }).await
}

async fn purge_with(repo: &EncryptedRepository, path: &str, options: PurgeOptions) -> Result<PurgeReport, PurgeError> {
    let head = repo.head().await.unwrap();
    repo.purge(&head, &at(path), "eraser", options, &()).await
}

async fn assert_clean(repo: &EncryptedRepository) {
    let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.unreferenced, 0);
}

/// The secret's texts, in the order the scenario writes them.
const SECRET: [&str; 5] = ["secret one", "secret two", "secret two\nmore\n", "secret three\nmore\n", "secret again"];

/// `secret.md` written, edited twice, renamed and edited again; an exact copy of its first
/// version elsewhere; then made again at its old path; unrelated files between.
async fn scenario(repo: &EncryptedRepository) {
    let secret = "/memories/secret.md";
    run(repo, create(secret, SECRET[0])).await; // 1
    run(repo, create("/memories/notes.md", "unrelated")).await; // 2
    run(repo, replace(secret, "one", "two")).await; // 3
    run(repo, json!({"command": "insert", "path": secret, "insert_line": 1, "insert_text": "more"})).await; // 4
    run(repo, rename(secret, "/memories/archive/old.md")).await; // 5
    run(repo, replace("/memories/archive/old.md", "two", "three")).await; // 6
    run(repo, create("/memories/copy.md", SECRET[0])).await; // 7
    run(repo, create("/memories/d/other.md", "keep me")).await; // 8
    run(repo, create(secret, SECRET[4])).await; // 9
}

/// Everything the scenario's purge of `/memories/secret.md` must leave, on any backend.
async fn assert_purged(repo: &EncryptedRepository, report: &PurgeReport, deleted: &HashSet<ObjectId>) {
    let expected = PurgeReport {
        path: "/memories/secret.md".into(),
        generation: 10,
        dry_run: false,
        removed: vec!["/memories/archive".into(), "/memories/copy.md".into(), "/memories/secret.md".into()],
        live_copies: vec!["/memories/archive/old.md".into(), "/memories/copy.md".into()],
        history_copies: Vec::new(),
        versions: 5,
        commits: 9,
        changed: 9,
        rewritten: 9,
        unreachable_commits: 0,
        replaced_commits: 9,
        deleted: deleted.len() as u64,
        deleted_bytes: report.deleted_bytes,
        log_bytes_before: report.log_bytes_before,
        log_bytes_after: report.log_bytes_after,
        remaining: 0,
        remaining_commits: 0,
        stored_again: Vec::new(),
    };
    assert_eq!(*report, expected);

    // No object that held a version remains.
    let listing = repo.objects.list().await.unwrap();
    for text in SECRET {
        let id = repo.address(text.as_bytes());
        assert!(deleted.contains(&id), "{text:?} was deleted");
        assert!(!listing.contains_key(&id), "{text:?} is gone");
    }

    // History: the same generations, times and actors; no trace of the file in any record
    // but the purge commit's, which names the path only.
    let purged = r#"{"command":"purged"}"#;
    let purge = r#"{"command":"purge","path":"/memories/secret.md","versions":5}"#;
    assert_eq!(
        log(repo).await,
        [
            entry(10, purge, &["D /memories/archive", "D /memories/copy.md", "D /memories/secret.md"]),
            entry(9, purged, &[]),
            entry(
                8,
                r#"{"command":"create","path":"/memories/d/other.md","file_text":"keep me"}"#,
                &["A /memories/d/other.md"]
            ),
            entry(7, purged, &[]),
            entry(6, purged, &[]),
            entry(5, purged, &[]),
            entry(4, purged, &[]),
            entry(3, purged, &[]),
            entry(
                2,
                r#"{"command":"create","path":"/memories/notes.md","file_text":"unrelated"}"#,
                &["A /memories/notes.md"]
            ),
            entry(1, purged, &[]),
        ]
    );
    let records = repo.log(None, None).await.unwrap();
    assert!(records.iter().all(|c| c.actor == if c.generation == 10 { "eraser" } else { "tester" }));
    for c in &records {
        let json = serde_json::to_string(c).unwrap();
        for word in ["secret", "archive", "copy.md"] {
            assert!(c.generation == 10 || !json.contains(word), "@{}: {json}", c.generation);
        }
        assert!(!json.contains("secret one") && !json.contains("more"), "@{}: {json}", c.generation);
    }

    // Trees: the unrelated files and their history are intact.
    let notes = ("/memories/notes.md", "unrelated");
    let other = ("/memories/d/other.md", "keep me");
    assert_eq!(files(repo, &repo.head().await.unwrap().tree).await, tree(&[other, notes]));
    assert_eq!(files_at(repo, 1).await, tree(&[]));
    for generation in 2..=7 {
        assert_eq!(files_at(repo, generation).await, tree(&[notes]), "@{generation}");
    }
    assert_eq!(files_at(repo, 8).await, tree(&[other, notes]));
    assert_eq!(files_at(repo, 9).await, tree(&[other, notes]));
    assert_clean(repo).await;
    assert_eq!(repo.check(CheckOptions::default(), &()).await.unwrap().commits, 10);
}

#[tokio::test]
async fn purges_every_version_copy_and_rename_from_memory() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    scenario(&repo).await;
    // A writer that read the head before the purge, and prepared its change then.
    let stale = repo.head().await.unwrap();
    let m = mutate(&repo, &stale, create("/memories/late.md", "late")).await.unwrap();
    let before = repo.objects.list().await.unwrap();
    let report = purge(&repo, "/memories/secret.md").await.unwrap();
    let after = repo.objects.list().await.unwrap();
    let deleted: HashSet<ObjectId> = before.keys().filter(|id| !after.contains_key(*id)).copied().collect();
    assert_eq!(report.deleted_bytes, deleted.iter().map(|id| before[id]).sum::<u64>());
    assert_eq!((report.log_bytes_before, report.log_bytes_after), (0, 0));
    assert_purged(&repo, &report, &deleted).await;

    // That writer loses its race and stores nothing (refused before it stores); so would
    // one that read the old trees now (they are gone).
    assert!(matches!(repo.commit(&stale, &m, CommitInfo::default()).await, Err(Error::Conflict)));
    assert_eq!(repo.objects.list().await.unwrap(), after);
    let err = mutate(&repo, &stale, create("/memories/late.md", "late")).await.unwrap_err();
    assert!(matches!(err, Error::MissingObject { .. }), "{err:?}");
    // One on the new head commits. A gc after finds nothing unreachable.
    run(&repo, create("/memories/late.md", "late")).await;
    let no_grace = GcOptions { grace_ms: 0, ..GcOptions::default() };
    let first = repo.gc(&no_grace, &()).await.unwrap();
    assert_eq!((first.commits, first.pending, first.deleted), (11, 0, 0), "{first:?}");
    assert_clean(&repo).await;
}

#[tokio::test]
async fn purges_a_local_folder_down_to_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let backend = || Backend::Local(dir.path().join("store"));
    let key = memfs_crypt::KeyFile::from_bytes([9; 32]);
    let repo = EncryptedRepository::init(
        backend(),
        |master, id| memfs_crypt::KeySlots::with_key_file(master, id, &key),
        OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() },
    )
    .await
    .unwrap();
    scenario(&repo).await;
    let secret_ids = SECRET.map(|t| repo.address(t.as_bytes()));
    let segments = || {
        let mut bytes = Vec::new();
        for e in std::fs::read_dir(dir.path().join("store/log")).unwrap() {
            bytes.extend(std::fs::read(e.unwrap().path()).unwrap());
        }
        bytes
    };
    // An object is named by its 32 id bytes (records of log version 2, index files) or spelled
    // out in hex (records of log version 1).
    let contains = |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).any(|w| w == needle);
    let names = |raw: &[u8], id: &ObjectId| contains(raw, &id.to_bytes()) || contains(raw, id.to_hex().as_bytes());
    let raw = segments();
    assert!(secret_ids.iter().all(|id| names(&raw, id)), "the log names every version before");

    let before = repo.objects.list().await.unwrap();
    let report = purge(&repo, "/memories/secret.md").await.unwrap();
    let after = repo.objects.list().await.unwrap();
    let deleted: HashSet<ObjectId> = before.keys().filter(|id| !after.contains_key(*id)).copied().collect();
    assert!(report.log_bytes_before > report.log_bytes_after && report.log_bytes_after > 0, "{report:?}");
    assert_purged(&repo, &report, &deleted).await;

    // The log's files no longer name any deleted object; every object left is named.
    let raw = segments();
    for id in &deleted {
        assert!(!names(&raw, id), "{id} is gone from the log's bytes");
    }
    assert!(after.keys().all(|id| names(&raw, id)));

    // A new client (no caches) sees the same.
    let fresh = EncryptedRepository::open(
        backend(),
        &memfs_crypt::Credential::KeyFile(key),
        OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() },
    )
    .await
    .unwrap();
    assert_purged(&fresh, &report, &deleted).await;
}

/// A writer that edited the file and stopped before its swap, and a cut history gc has not
/// deleted yet, leave stored commits outside the kept history: their versions are purged too.
#[tokio::test]
async fn purges_unreachable_commits_too() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/s.md", "first")).await; // 1, cut by gc below
    run(&repo, replace("/memories/s.md", "first", "second")).await; // 2
    run(&repo, create("/memories/keep.md", "keep")).await; // 3
    let gc = repo.gc(&GcOptions { keep_commits: Some(2), ..GcOptions::default() }, &()).await.unwrap();
    assert_eq!((gc.oldest, gc.newly_pending, gc.deleted), (2, 3, 0), "commit 1, its root, \"first\"");
    stopped_before_swap(&repo, replace("/memories/s.md", "second", "lost")).await;
    run(&repo, create("/memories/winner.md", "w")).await; // 4

    let report = purge(&repo, "/memories/s.md").await.unwrap();
    assert_eq!((report.versions, report.commits, report.unreachable_commits), (3, 3, 2));
    assert_eq!((report.changed, report.rewritten, report.replaced_commits), (3, 3, 5));
    assert_eq!(report.removed, ["/memories/s.md"]);
    let listing = repo.objects.list().await.unwrap();
    for text in ["first", "second", "lost"] {
        assert!(!listing.contains_key(&repo.address(text.as_bytes())), "{text}");
    }
    assert_eq!(
        files(&repo, &repo.head().await.unwrap().tree).await,
        tree(&[("/memories/keep.md", "keep"), ("/memories/winner.md", "w")])
    );
    assert_clean(&repo).await;
    // History still starts at gc's horizon, whose parent link names a deleted commit.
    assert_eq!(log(&repo).await.iter().map(|e| e.0).collect::<Vec<_>>(), [5, 4, 3, 2]);
    // gc's pending list named objects the purge deleted: the next gc drops them.
    let gc = repo.gc(&GcOptions { grace_ms: 0, ..GcOptions::default() }, &()).await.unwrap();
    assert_eq!((gc.deleted, gc.pending, gc.commits), (0, 0, 4));
}

/// A directory: every file below it, wherever a rename of the directory took them; an
/// empty file on its lineage goes by its path, while the empty content, shared by an
/// unrelated empty file, stays.
#[tokio::test]
async fn purges_a_directory_through_renames() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/p/a.md", "alpha")).await; // 1
    run(&repo, create("/memories/p/sub/b.md", "")).await; // 2
    run(&repo, create("/memories/empty.md", "")).await; // 3
    run(&repo, rename("/memories/p", "/memories/q")).await; // 4
    run(&repo, create("/memories/q/c.md", "gamma")).await; // 5
    run(&repo, rename("/memories/q/c.md", "/memories/c.md")).await; // 6

    let report = purge(&repo, "/memories/p").await.unwrap();
    assert_eq!(report.versions, 2, "alpha and gamma; not the empty content");
    assert_eq!(report.removed, ["/memories/c.md", "/memories/q"]);
    assert_eq!(files(&repo, &repo.head().await.unwrap().tree).await, tree(&[("/memories/empty.md", "")]));
    for generation in 3..=6 {
        assert_eq!(files_at(&repo, generation).await, tree(&[("/memories/empty.md", "")]), "@{generation}");
    }
    let purged = r#"{"command":"purged"}"#;
    let purge = r#"{"command":"purge","path":"/memories/p","versions":2}"#;
    assert_eq!(
        log(&repo).await,
        [
            entry(7, purge, &["D /memories/c.md", "D /memories/q"]),
            entry(6, purged, &[]),
            entry(5, purged, &[]),
            entry(4, purged, &[]),
            entry(3, r#"{"command":"create","path":"/memories/empty.md","file_text":""}"#, &["A /memories/empty.md"]),
            entry(2, purged, &[]),
            entry(1, purged, &[]),
        ]
    );
    let listing = repo.objects.list().await.unwrap();
    assert!(listing.contains_key(&repo.address(b"")));
    assert!(!listing.contains_key(&repo.address(b"alpha")) && !listing.contains_key(&repo.address(b"gamma")));
    assert_clean(&repo).await;
}

/// A copy edited away from the purged content stays, and its history says what the
/// rewritten trees show; commits before the first change keep their ids.
#[tokio::test]
async fn a_copy_edited_later_stays_with_a_truthful_history() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/n.md", "note")).await; // 1
    run(&repo, create("/memories/s.md", "text")).await; // 2
    run(&repo, create("/memories/c.md", "text")).await; // 3
    run(&repo, replace("/memories/c.md", "text", "public")).await; // 4
    let first = repo.log(None, None).await.unwrap().pop().unwrap();

    let report = purge(&repo, "/memories/s.md").await.unwrap();
    assert_eq!((report.versions, report.changed, report.rewritten), (1, 3, 3));
    assert_eq!(report.removed, ["/memories/s.md"]);
    assert_eq!(
        log(&repo).await,
        [
            entry(5, r#"{"command":"purge","path":"/memories/s.md","versions":1}"#, &["D /memories/s.md"]),
            entry(4, r#"{"command":"purged"}"#, &["A /memories/c.md"]),
            entry(3, r#"{"command":"purged"}"#, &[]),
            entry(2, r#"{"command":"purged"}"#, &[]),
            entry(1, r#"{"command":"create","path":"/memories/n.md","file_text":"note"}"#, &["A /memories/n.md"]),
        ]
    );
    assert_eq!(repo.log(None, None).await.unwrap().pop().unwrap(), first);
    assert_eq!(files_at(&repo, 4).await, tree(&[("/memories/c.md", "public"), ("/memories/n.md", "note")]));
    assert_clean(&repo).await;
}

/// Policy commits keep their policy object; the policy in force stays.
#[tokio::test]
async fn keeps_the_policy() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/s.md", "secret")).await;
    let mut policy = memfs_core::Policy::default();
    policy.set("max-files", "7").unwrap();
    let head = repo.head().await.unwrap();
    let info =
        CommitInfo { actor: "admin".into(), command: Record::parse(r#"{"command":"policy"}"#), changes: Vec::new() };
    repo.set_policy(&head, &policy, info).await.unwrap();
    run(&repo, create("/memories/t.md", "other")).await;

    let report = purge(&repo, "/memories/s.md").await.unwrap();
    assert_eq!((report.generation, report.changed, report.rewritten), (4, 3, 3));
    assert_eq!(*repo.head().await.unwrap().policy, policy);
    assert_eq!(
        log(&repo).await,
        [
            entry(4, r#"{"command":"purge","path":"/memories/s.md","versions":1}"#, &["D /memories/s.md"]),
            entry(3, r#"{"command":"create","path":"/memories/t.md","file_text":"other"}"#, &["A /memories/t.md"]),
            entry(2, r#"{"command":"policy"}"#, &[]),
            entry(1, r#"{"command":"purged"}"#, &[]),
        ]
    );
    assert_clean(&repo).await;
}

#[tokio::test]
async fn refuses_the_root_and_paths_never_stored() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    let err = purge(&repo, "/memories/x.md").await.unwrap_err().to_string();
    assert_eq!(
        err,
        "nothing to purge: /memories/x.md is not in the tree, in its kept history or in any other stored commit"
    );
    run(&repo, create("/memories/a.md", "a")).await;
    let before = repo.objects.list().await.unwrap();
    for (path, message) in [
        ("/memories/", "cannot purge /memories itself: name a file or directory below it"),
        (
            "/memories/a.md/b",
            "nothing to purge: /memories/a.md/b is not in the tree, in its kept history or in any other stored commit",
        ),
        (
            "/memories/b.md",
            "nothing to purge: /memories/b.md is not in the tree, in its kept history or in any other stored commit",
        ),
    ] {
        assert_eq!(purge(&repo, path).await.unwrap_err().to_string(), message);
    }
    assert_eq!(repo.objects.list().await.unwrap(), before);
    assert_eq!(repo.head().await.unwrap().generation, 1);
}

/// What a refused purge must leave: every object, and the head.
async fn assert_unchanged(repo: &EncryptedRepository, before: &HashMap<ObjectId, u64>, generation: u64) {
    assert_eq!(repo.objects.list().await.unwrap(), *before);
    assert_eq!(repo.head().await.unwrap().generation, generation);
}

const DEFAULT: PurgeOptions = PurgeOptions { all_copies: false, dry_run: false };

/// Equal contents are one object: a live file elsewhere holding the purged file's content is
/// someone's data. The purge refuses, names it and changes nothing; `all_copies` erases it.
#[tokio::test]
async fn a_live_file_with_the_same_content_is_refused_unless_all_copies() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/p/a.md", "same")).await; // 1
    run(&repo, create("/memories/keep/b.md", "same")).await; // 2
    run(&repo, create("/memories/keep/c.md", "other")).await; // 3
    let before = repo.objects.list().await.unwrap();
    let err = purge_with(&repo, "/memories/p/a.md", DEFAULT).await.unwrap_err();
    assert_eq!(err.to_string(), "/memories/p/a.md has live copies: /memories/keep/b.md");
    let err = purge_with(&repo, "/memories/p/a.md", PurgeOptions { dry_run: true, ..DEFAULT }).await.unwrap_err();
    assert!(matches!(&err, PurgeError::LiveCopies { copies, .. } if copies == &["/memories/keep/b.md"]), "{err:?}");
    assert_unchanged(&repo, &before, 3).await;
    assert_eq!(
        files_at(&repo, 3).await,
        tree(&[("/memories/keep/b.md", "same"), ("/memories/keep/c.md", "other"), ("/memories/p/a.md", "same")])
    );

    let report =
        purge_with(&repo, "/memories/p/a.md", PurgeOptions { all_copies: true, dry_run: false }).await.unwrap();
    assert_eq!(report.removed, ["/memories/keep/b.md", "/memories/p"]);
    assert_eq!(report.live_copies, ["/memories/keep/b.md"]);
    assert_eq!(files_at(&repo, 4).await, tree(&[("/memories/keep/c.md", "other")]));
    assert!(!repo.objects.list().await.unwrap().contains_key(&repo.address(b"same")));
    assert_clean(&repo).await;
}

/// A path that exists only in history, renamed to a live file: the live file is its lineage,
/// and someone's data; refused and named, as a live copy.
#[tokio::test]
async fn a_live_file_renamed_from_the_path_is_refused() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/a.md", "draft")).await; // 1
    run(&repo, rename("/memories/a.md", "/memories/b.md")).await; // 2
    run(&repo, replace("/memories/b.md", "draft", "final")).await; // 3
    let before = repo.objects.list().await.unwrap();
    let err = purge_with(&repo, "/memories/a.md", DEFAULT).await.unwrap_err();
    assert_eq!(err.to_string(), "/memories/a.md has live copies: /memories/b.md");
    assert_unchanged(&repo, &before, 3).await;
    assert_eq!(files_at(&repo, 3).await, tree(&[("/memories/b.md", "final")]));

    // A renamed directory is named as the directory.
    run(&repo, create("/memories/d/x.md", "x")).await; // 4
    run(&repo, rename("/memories/d", "/memories/e")).await; // 5
    let err = purge_with(&repo, "/memories/d/x.md", DEFAULT).await.unwrap_err();
    assert_eq!(err.to_string(), "/memories/d/x.md has live copies: /memories/e/x.md");
    let err = purge_with(&repo, "/memories/d", DEFAULT).await.unwrap_err();
    assert_eq!(err.to_string(), "/memories/d has live copies: /memories/e");
}

/// Copies at other paths that are in history only go with the content, and are named.
#[tokio::test]
async fn history_copies_elsewhere_are_erased_and_named() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/s.md", "secret")).await; // 1
    run(&repo, create("/memories/old/c.md", "secret")).await; // 2
    run(&repo, replace("/memories/old/c.md", "secret", "public")).await; // 3
    run(&repo, create("/memories/gone.md", "secret")).await; // 4
    run(&repo, json!({"command": "delete", "path": "/memories/gone.md"})).await; // 5
    let report = purge_with(&repo, "/memories/s.md", DEFAULT).await.unwrap();
    assert_eq!(report.removed, ["/memories/s.md"]);
    assert!(report.live_copies.is_empty());
    assert_eq!(report.history_copies, ["/memories/gone.md", "/memories/old/c.md"]);
    assert_eq!(files_at(&repo, 2).await, tree(&[]));
    assert_eq!(files_at(&repo, 3).await, tree(&[("/memories/old/c.md", "public")]));
    assert_eq!(files_at(&repo, 6).await, tree(&[("/memories/old/c.md", "public")]));
    assert!(!repo.objects.list().await.unwrap().contains_key(&repo.address(b"secret")));
    assert_clean(&repo).await;
}

/// A dry run writes nothing and says exactly what the purge then does.
#[tokio::test]
async fn a_dry_run_changes_nothing_and_predicts_the_purge() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    scenario(&repo).await;
    let before = repo.objects.list().await.unwrap();
    let plan =
        purge_with(&repo, "/memories/secret.md", PurgeOptions { all_copies: true, dry_run: true }).await.unwrap();
    assert_unchanged(&repo, &before, 9).await;
    let report = purge(&repo, "/memories/secret.md").await.unwrap();
    let after = repo.objects.list().await.unwrap();
    let deleted: HashSet<ObjectId> = before.keys().filter(|id| !after.contains_key(*id)).copied().collect();
    assert_purged(&repo, &report, &deleted).await;
    let expected = PurgeReport {
        dry_run: true,
        remaining: 0,
        remaining_commits: 0,
        log_bytes_before: 0,
        log_bytes_after: 0,
        stored_again: Vec::new(),
        ..report.clone()
    };
    assert_eq!(plan, expected);
}

#[tokio::test]
async fn a_moved_head_is_a_conflict_that_changes_nothing() {
    let repo = EncryptedRepository::ephemeral().unwrap();
    run(&repo, create("/memories/s.md", "secret")).await;
    let stale = repo.head().await.unwrap();
    run(&repo, create("/memories/t.md", "other")).await;
    let err = repo.purge(&stale, &at("/memories/s.md"), "", PurgeOptions::default(), &()).await.unwrap_err();
    assert!(matches!(err, PurgeError::Store(Error::Conflict)), "{err:?}");
    assert!(repo.objects.list().await.unwrap().contains_key(&repo.address(b"secret")));
    assert_eq!(repo.head().await.unwrap().generation, 2);
    // Run again on the new head, it also removes what the lost attempt wrote.
    let report = purge(&repo, "/memories/s.md").await.unwrap();
    // The lost attempt's rewritten first commit and its purge commit.
    assert_eq!((report.generation, report.unreachable_commits, report.remaining), (3, 2, 0));
    assert_clean(&repo).await;
}

#[test]
fn the_lineage_follows_renames_and_ends_at_deletions() {
    let p = |s: &str| at(s).components().to_vec();
    let target = p("/memories/d/s.md");
    let mut lineage = vec![target.clone()];
    let steps = [
        (
            Change::Renamed { from: "/memories/d".into(), to: "/memories/e".into() },
            vec!["/memories/d/s.md", "/memories/e/s.md"],
        ),
        (
            Change::Renamed { from: "/memories/e/s.md".into(), to: "/memories/f.md".into() },
            vec!["/memories/d/s.md", "/memories/f.md"],
        ),
        (Change::Modified { path: "/memories/f.md".into() }, vec!["/memories/d/s.md", "/memories/f.md"]),
        (Change::Deleted { path: "/memories/f.md".into() }, vec!["/memories/d/s.md"]),
        (Change::Deleted { path: "/memories/d".into() }, vec!["/memories/d/s.md"]),
    ];
    for (change, expected) in steps {
        follow(&mut lineage, &target, &change);
        let got: Vec<String> = lineage.iter().map(|t| normalized(t)).collect();
        assert_eq!(got, expected, "after {change:?}");
    }
}

#[test]
fn restore_commands_follow_rewritten_ids() {
    let (old, new) = ("a".repeat(64), "b".repeat(64));
    let renamed = HashMap::from([(old.clone(), new.clone())]);
    let command = format!(r#"{{"command":"undo","commit":"{old}","generation":3}}"#);
    assert_eq!(
        follow_commit_ids(&command, &renamed),
        format!(r#"{{"command":"undo","commit":"{new}","generation":3}}"#)
    );
    let other = format!(r#"{{"command":"undo","commit":"{}","generation":3}}"#, "c".repeat(64));
    assert_eq!(follow_commit_ids(&other, &renamed), other);
}

mod writers;
