//! Round trips: the requests a command costs, counted by `FaultStore`.
//!
//! - a cold client (empty caches) answers a file view with one get, the head, whose snapshot
//!   carries the commit, the directory pages and the contents of small files; with two when
//!   the content is not carried (the head, then the content);
//! - a warm client reads only the head, with a conditional GET, and nothing at all within a
//!   staleness bound; a stale client still loses no update (its swap conflicts, it runs again);
//! - inline objects are verified like fetched ones; the snapshot stays within its budget;
//! - the on-disk cache serves a new client's contents, and a damaged cache file is a miss.

use std::sync::Arc;
use std::time::Duration;

use memfs_core::{Dir, DirRef, FileRef, MemoryPath, Mutation, Name, NewBlob, Node, ObjectId, Tree};
use memfs_crypt::{FirstKey, ObjectKeys, ObjectKind, StoreKeys};
use memfs_store::fault::{FaultStore, OpCounts};
use memfs_store::fuzzing::{HeadObject, InlineKind, InlineObject};
use memfs_store::open_local_log;
use memfs_store::{
    Backend, CommitInfo, EncryptedRepository, Error, HEAD_SNAPSHOT_BYTES, OpenOptions, Repository, StateDir,
};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::{GetOptions, ObjectStore, ObjectStoreExt};
use serde_json::{Value, json};

use crate::support::{credential, init, init_storing, run, run_warm, verify};

type Counted = Arc<FaultStore<InMemory>>;

fn counted() -> Counted {
    Arc::new(FaultStore::new(InMemory::new()))
}

fn backend(store: &Counted) -> Backend {
    Backend::ObjectStore(store.clone())
}

async fn open_with(store: &Counted, options: OpenOptions) -> EncryptedRepository {
    EncryptedRepository::open(backend(store), &credential(), options).await.unwrap()
}

/// A new client with empty caches. Like every client of these tests but the `carried_`
/// ones, it stores every object before its head (`unwritten_bytes: Some(0)`): the tests
/// rewrite heads, and count the requests that reach stored objects and their copies.
async fn cold(store: &Counted) -> EncryptedRepository {
    open_with(store, OpenOptions { state_dir: StateDir::Off, unwritten_bytes: Some(0), ..OpenOptions::default() }).await
}

fn stale_ok(bound: Duration) -> OpenOptions {
    OpenOptions { max_staleness: Some(bound), state_dir: StateDir::Off, unwritten_bytes: Some(0), ..Default::default() }
}

/// Runs `input` and returns its answer and the operations it cost.
async fn counting(store: &Counted, repo: &EncryptedRepository, input: Value) -> (String, OpCounts) {
    let before = store.plan().counts();
    let result = run(repo, &input).await.unwrap();
    (result.content, store.plan().counts().since(&before))
}

fn gets(n: u64) -> OpCounts {
    OpCounts { get: n, ..OpCounts::default() }
}

fn view(path: &str) -> Value {
    json!({"command": "view", "path": path})
}

fn create(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

/// A small tree: a file at the top, two directories, one nested.
async fn small_tree(store: &Counted) -> EncryptedRepository {
    let repo = init_storing(backend(store)).await.unwrap();
    for (path, text) in [
        ("/memories/a.md", "alpha\n"),
        ("/memories/notes/b.md", "beta\n"),
        ("/memories/notes/deep/c.md", "gamma\n"),
        ("/memories/people/d.md", "delta\n"),
    ] {
        run(&repo, &create(path, text)).await.unwrap();
    }
    repo
}

/// The head's plaintext, opened with the tests' first key and decoded, each inline object
/// with the id its reader computes.
async fn read_head(store: &Counted) -> HeadObject {
    let sealed = store.inner().get(&Path::from("head")).await.unwrap().bytes().await.unwrap();
    let master = FirstKey::from_bytes([0x5a; 32]);
    let plain =
        ObjectKeys::from_master(&master).open(ObjectKind::Head, &ObjectId::from_bytes([0; 32]), &sealed).unwrap();
    memfs_store::fuzzing::Keys::new(StoreKeys::from_master(&master)).decode_head(&plain).unwrap()
}

/// What an inline object is, as these tests name it.
fn kind(object: &InlineObject) -> &'static str {
    match object.kind {
        InlineKind::Commit => "commit",
        InlineKind::Policy => "policy",
        InlineKind::Dir => "dir",
        InlineKind::Blob => "blob",
    }
}

/// The kinds of the objects `head` carries, in order.
fn kinds(head: &HeadObject) -> Vec<&'static str> {
    head.inline.iter().map(kind).collect()
}

/// Rewrites the stored head without the file contents it carries, so that readers fetch them.
async fn drop_inline_contents(store: &Counted) {
    let mut head = read_head(store).await;
    head.inline.retain(|o| o.kind != InlineKind::Blob);
    replace_head(store, &head).await;
}

/// Seals `head` and puts it in place of the stored head.
async fn replace_head(store: &Counted, head: &HeadObject) {
    let plain = memfs_store::fuzzing::encode_head(head);
    let sealed = ObjectKeys::from_master(&FirstKey::from_bytes([0x5a; 32]))
        .seal(ObjectKind::Head, &ObjectId::from_bytes([0; 32]), &plain)
        .unwrap();
    store.inner().put(&Path::from("head"), sealed.into()).await.unwrap();
}

#[tokio::test]
async fn a_cold_file_view_reads_the_head_and_the_content_only_if_the_head_lacks_it() {
    let store = counted();
    small_tree(&store).await;
    assert_eq!(kinds(&read_head(&store).await), ["commit", "dir", "dir", "dir", "dir", "blob", "blob", "blob", "blob"]);
    for path in ["/memories/a.md", "/memories/notes/deep/c.md"] {
        let repo = cold(&store).await;
        let (answer, cost) = counting(&store, &repo, view(path)).await;
        assert!(answer.contains("\t"), "{answer}");
        assert_eq!(cost, gets(1), "{path}: the head carries the content");
    }
    // A cold edit: the head; past the budget (here none) a fresh conditional read of it before
    // the commit's objects are stored (docs/SECURITY.md, "A writer that missed a rotation"),
    // then writes only (its objects, then the head swap).
    let repo = cold(&store).await;
    let edit = json!({"command": "str_replace", "path": "/memories/notes/b.md", "old_str": "beta", "new_str": "BETA"});
    let (answer, cost) = counting(&store, &repo, edit).await;
    assert_eq!(
        answer,
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tBETA\n     2\t"
    );
    assert_eq!((cost.get, cost.list, cost.delete), (2, 0, 0), "{cost:?}");
    let insert = json!({"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "more"});
    let (_, cost) = counting(&store, &cold(&store).await, insert).await;
    assert_eq!((cost.get, cost.list, cost.delete), (2, 0, 0), "{cost:?}");

    drop_inline_contents(&store).await;
    for path in ["/memories/a.md", "/memories/notes/deep/c.md"] {
        let repo = cold(&store).await;
        let (answer, cost) = counting(&store, &repo, view(path)).await;
        assert!(answer.contains("\t"), "{answer}");
        assert_eq!(cost, gets(2), "{path}: the head, then the content");
    }
    // A directory view: everything two levels down is in the head.
    let repo = cold(&store).await;
    let (answer, cost) = counting(&store, &repo, view("/memories")).await;
    assert!(answer.contains("/memories/notes/deep"), "{answer}");
    assert_eq!(cost, gets(1));
}

#[tokio::test]
async fn a_warm_view_is_one_conditional_get() {
    let store = counted();
    small_tree(&store).await;
    let repo = cold(&store).await;
    counting(&store, &repo, view("/memories/notes/b.md")).await;
    let (answer, cost) = counting(&store, &repo, view("/memories/notes/b.md")).await;
    assert!(answer.contains("beta"));
    assert_eq!(cost, gets(1), "the head, unchanged");
    // Another client commits: the next view reads the new head (one get) and only what changed.
    let other = cold(&store).await;
    run(&other, &create("/memories/notes/e.md", "epsilon\n")).await.unwrap();
    let (answer, cost) = counting(&store, &repo, view("/memories/notes")).await;
    assert!(answer.contains("/memories/notes/e.md"), "{answer}");
    assert_eq!(cost, gets(1), "the new head carries the changed pages");
    // The writer itself knows the head it wrote.
    let (_, cost) = counting(&store, &other, view("/memories/notes/e.md")).await;
    assert_eq!(cost, gets(1));
}

#[tokio::test]
async fn the_head_read_is_conditional_on_every_backend_kind() {
    // A local folder honours If-None-Match like the object stores.
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap();
    let path = Path::from("head");
    let put = log.put(&path, "one".into()).await.unwrap();
    let e_tag = put.e_tag.clone().unwrap();
    let unchanged = GetOptions { if_none_match: Some(e_tag.clone()), ..Default::default() };
    assert!(matches!(log.get_opts(&path, unchanged.clone()).await, Err(object_store::Error::NotModified { .. })));
    log.put(&path, "two".into()).await.unwrap();
    let changed = log.get_opts(&path, unchanged).await.unwrap();
    assert_ne!(changed.meta.e_tag.as_deref(), Some(e_tag.as_str()));
    assert_eq!(changed.bytes().await.unwrap(), "two");

    // And a warm view over it costs one get.
    let store = Arc::new(FaultStore::new(open_local_log(dir.path().join("store")).unwrap()));
    let repo = init(Backend::ObjectStore(store.clone()), None).await.unwrap();
    run(&repo, &create("/memories/a.md", "alpha\n")).await.unwrap();
    let fresh = EncryptedRepository::open(
        Backend::ObjectStore(store.clone()),
        &credential(),
        OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() },
    )
    .await
    .unwrap();
    // The first view too: the head carries the content.
    for expected in [1, 1, 1] {
        let before = store.plan().counts();
        run(&fresh, &view("/memories/a.md")).await.unwrap();
        assert_eq!(store.plan().counts().since(&before), gets(expected));
    }
}

#[tokio::test]
async fn within_the_staleness_bound_a_view_costs_nothing() {
    let store = counted();
    small_tree(&store).await;
    drop_inline_contents(&store).await;
    let repo = open_with(&store, stale_ok(Duration::from_secs(3600))).await;
    let (_, cost) = counting(&store, &repo, view("/memories/a.md")).await;
    assert_eq!(cost, gets(2));
    let (answer, cost) = counting(&store, &repo, view("/memories/a.md")).await;
    assert!(answer.contains("alpha"));
    assert_eq!(cost, gets(0));
    let (_, cost) = counting(&store, &repo, view("/memories")).await;
    assert_eq!(cost, gets(0));
    // A mutation past the budget (here none): the head read afresh (whatever the bound) before
    // its objects are stored at once, then the head.
    let (_, cost) = counting(&store, &repo, create("/memories/f.md", "phi\n")).await;
    assert_eq!((cost.get, cost.list, cost.delete), (1, 0, 0), "{cost:?}");
    // The client sees its own commit at once.
    let (answer, cost) = counting(&store, &repo, view("/memories/f.md")).await;
    assert!(answer.contains("phi"), "{answer}");
    assert_eq!(cost, gets(0));

    // Past the bound, the head is read again (conditionally).
    let repo = open_with(&store, stale_ok(Duration::from_millis(50))).await;
    counting(&store, &repo, view("/memories/a.md")).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    let (_, cost) = counting(&store, &repo, view("/memories/a.md")).await;
    assert_eq!(cost, gets(1));
}

#[tokio::test]
async fn a_stale_reader_loses_no_update() {
    let store = counted();
    small_tree(&store).await;
    let stale = open_with(&store, stale_ok(Duration::from_secs(3600))).await;
    counting(&store, &stale, view("/memories")).await;

    let other = cold(&store).await;
    run(&other, &create("/memories/b.md", "from the other client\n")).await.unwrap();
    let edit = json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "alpha", "new_str": "ALPHA"});
    run(&other, &edit).await.unwrap();

    // Within the bound the stale client does not see them (as documented)...
    let (answer, _) = counting(&store, &stale, view("/memories")).await;
    assert!(!answer.contains("/memories/b.md"), "{answer}");
    // ...but its writes are based on the head they were checked against: a create conflicts,
    // is run again on the new head, and keeps the other client's file.
    run(&stale, &create("/memories/c.md", "from the stale client\n")).await.unwrap();
    // An edit of text the other client already changed is run again and finds it gone.
    let lost = json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "alpha", "new_str": "uno"});
    let result = run(&stale, &lost).await.unwrap();
    assert!(result.is_error, "{}", result.content);
    assert!(result.content.contains("did not appear verbatim"), "{}", result.content);

    let all = verify(&cold(&store).await).await.unwrap();
    assert_eq!(all.paths["/memories/a.md"], "ALPHA\n");
    assert_eq!(all.paths["/memories/b.md"], "from the other client\n");
    assert_eq!(all.paths["/memories/c.md"], "from the stale client\n");
    // And after its conflict the stale client reads the head again: it sees everything now.
    let (answer, _) = counting(&store, &stale, view("/memories")).await;
    assert!(answer.contains("/memories/b.md") && answer.contains("/memories/c.md"), "{answer}");
}

/// A head names no inline object's id: its reader takes each one's keyed hash, so a changed
/// plaintext, or a plaintext given another kind, is another object, named by nothing, and the
/// reader fetches the genuine one. An inline commit that does not decode is refused.
#[tokio::test]
async fn a_tampered_inline_object_is_another_object() {
    let store = counted();
    small_tree(&store).await;
    let original = read_head(&store).await;
    assert_eq!(kinds(&original), ["commit", "dir", "dir", "dir", "dir", "blob", "blob", "blob", "blob"]);
    let expected = verify(&cold(&store).await).await.unwrap().paths;
    assert_eq!(expected["/memories/a.md"], "alpha\n");

    // Each inline object changed in turn (a renamed file in a page or the commit, a changed
    // content), re-sealed with the right key: every reader reads the genuine tree.
    for i in 0..original.inline.len() {
        let mut head = original.clone();
        let plain = &mut head.inline[i].plain;
        match plain.windows(3).position(|w| w == b".md") {
            Some(at) => plain[at + 2] = b'x',
            None => plain[0] ^= 0x20,
        }
        assert_ne!(*plain, original.inline[i].plain);
        replace_head(&store, &head).await;
        assert_eq!(verify(&cold(&store).await).await.unwrap().paths, expected, "inline object {i} changed");
    }
    // A page given the kind of a content, a content the kind of a page: the same.
    for (from, to) in [(InlineKind::Dir, InlineKind::Blob), (InlineKind::Blob, InlineKind::Dir)] {
        let mut head = original.clone();
        head.inline.iter_mut().find(|o| o.kind == from).unwrap().kind = to;
        replace_head(&store, &head).await;
        assert_eq!(verify(&cold(&store).await).await.unwrap().paths, expected, "{from:?} as {to:?}");
    }

    let mut head = original.clone();
    head.inline[0].plain.push(0);
    replace_head(&store, &head).await;
    match cold(&store).await.head().await.unwrap_err() {
        Error::Corrupt { object, reason } => {
            assert_eq!(object, "head");
            assert_eq!(reason, "undecodable inline commit: bytes after the last field");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }

    // The genuine head reads again.
    replace_head(&store, &original).await;
    assert_eq!(verify(&cold(&store).await).await.unwrap().paths, expected);
}

#[tokio::test]
async fn the_snapshot_keeps_to_its_budget_on_a_big_tree() {
    let store = counted();
    let repo = init(backend(&store), None).await.unwrap();
    // 40 directories of 32 files, in one commit: about 90 KB of directory pages, more than the
    // budget.
    let mut blobs = Vec::new();
    let root = Dir::from_entries((0..40).map(|d| {
        let files = (0..32).map(|f| {
            let content = format!("{d} {f}\n");
            let id = repo.address(content.as_bytes());
            let size = content.len() as u64;
            blobs.push(NewBlob { id, content: Arc::from(content.into_bytes()) });
            let name = Name::parse(&format!("a-file-with-a-longer-name-{f:02}.md")).unwrap();
            (name, Node::File(FileRef { id, size, accessed: 0 }))
        });
        let dir = Dir::from_entries(files.collect::<Vec<_>>());
        (Name::parse(&format!("directory-{d:02}")).unwrap(), Node::Dir(DirRef::new(dir)))
    }));
    let mutation = Mutation { tree: Tree::from_root(DirRef::new(root)), changes: Vec::new(), blobs, applied: None };
    let base = repo.head().await.unwrap();
    repo.commit(&base, &mutation, CommitInfo::default()).await.unwrap();
    let head = read_head(&store).await;
    // As the budget counts them: each one's plaintext, kind and length (at most 4 bytes).
    let size: usize = head.inline.iter().map(|o| o.plain.len() + 4).sum();
    assert!(size <= HEAD_SNAPSHOT_BYTES, "{size}");
    assert!(size >= HEAD_SNAPSHOT_BYTES * 3 / 4, "the budget is used: {size}");
    let kinds = kinds(&head);
    assert_eq!(kinds[0], "commit");
    // Directories first, then the contents of their files in the room left.
    let dirs = kinds.iter().take_while(|k| **k == "dir" || **k == "commit").count() - 1;
    assert!(dirs > 1, "{kinds:?}");
    assert!(kinds[1 + dirs..].iter().all(|k| *k == "blob"), "{kinds:?}");
    assert_eq!(head.inline[0].id, head.commit);
    let contents = kinds.len() - 1 - dirs;
    eprintln!("snapshot of a 40 x 32 tree: {size} bytes, {dirs} pages, {contents} contents");

    // Breadth-first: the root and the first directories are in, the last ones are not.
    let repo = cold(&store).await;
    // Directories take the budget first; the room left holds the first files' contents.
    // In name order: directory-00's 32 files, then 9 of directory-01's.
    assert_eq!(contents, 41, "{kinds:?}");
    let (answer, cost) = counting(&store, &repo, view("/memories/directory-00/a-file-with-a-longer-name-30.md")).await;
    assert!(answer.contains("0 30"), "{answer}");
    assert_eq!(cost, gets(1), "the head carries directory-00 and this file's content");
    let (answer, cost) = counting(&store, &repo, view("/memories/directory-01/a-file-with-a-longer-name-20.md")).await;
    assert!(answer.contains("1 20"), "{answer}");
    assert_eq!(cost, gets(2), "the head carries directory-01, not this file's content");
    let (answer, cost) = counting(&store, &repo, view("/memories/directory-39/a-file-with-a-longer-name-07.md")).await;
    assert!(answer.contains("39 7"), "{answer}");
    assert!(cost.get > 1, "{cost:?}: directory-39 is read from the store");

    // The next commit carries the snapshot over (from its cache: pages it only read inline).
    let writer = cold(&store).await;
    run(&writer, &create("/memories/directory-00/new.md", "new\n")).await.unwrap();
    let next = read_head(&store).await;
    let carried: usize = next.inline.iter().map(|o| o.plain.len() + 4).sum();
    assert!(carried >= HEAD_SNAPSHOT_BYTES * 3 / 4, "{carried} bytes carried over");
}

#[tokio::test]
async fn a_commit_larger_than_the_budget_is_fetched() {
    let store = counted();
    let repo = small_tree(&store).await;
    let big = "x".repeat(HEAD_SNAPSHOT_BYTES + 1);
    run(&repo, &create("/memories/big.md", &big)).await.unwrap();
    let kinds = kinds(&read_head(&store).await);
    assert_eq!(kinds, ["dir", "dir", "dir", "dir", "blob", "blob", "blob", "blob"], "the commit holds the file");
    // The head, then the commit: the directories and the content still come from the head.
    let repo = cold(&store).await;
    let (answer, cost) = counting(&store, &repo, view("/memories/notes/b.md")).await;
    assert!(answer.contains("beta"));
    assert_eq!(cost, gets(2));
    // The big file's content is not carried: a view of it reads it.
    let (answer, cost) = counting(&store, &repo, view("/memories/big.md")).await;
    assert!(answer.contains("xxx"));
    assert_eq!(cost, gets(2), "the head (unchanged), then the content");
}

#[tokio::test]
async fn the_disk_cache_serves_new_clients_and_drops_damaged_files() {
    let store = counted();
    small_tree(&store).await;
    // Contents come from the store or the disk cache, not from the head.
    drop_inline_contents(&store).await;
    let cache = tempfile::tempdir().unwrap();
    let with_cache = || OpenOptions {
        cache_dir: Some(cache.path().to_owned()),
        state_dir: StateDir::Off,
        unwritten_bytes: Some(0),
        ..Default::default()
    };

    let first = open_with(&store, with_cache()).await;
    let (_, cost) = counting(&store, &first, view("/memories/notes/b.md")).await;
    assert_eq!(cost, gets(2));
    let store_dir = cache.path().join(first.store_id());
    let content = first.address(b"beta\n").to_hex();
    let file = store_dir.join(&content[..2]).join(&content);
    assert!(file.is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        assert_eq!(mode(&store_dir), 0o700);
    }

    // A new client: the head from the store, the content from the disk.
    let second = open_with(&store, with_cache()).await;
    let (answer, cost) = counting(&store, &second, view("/memories/notes/b.md")).await;
    assert!(answer.contains("beta"));
    assert_eq!(cost, gets(1));

    // A damaged file is a miss: fetched again and replaced.
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let third = open_with(&store, with_cache()).await;
    let (answer, cost) = counting(&store, &third, view("/memories/notes/b.md")).await;
    assert!(answer.contains("beta"));
    assert_eq!(cost, gets(2));
    assert_ne!(std::fs::read(&file).unwrap(), bytes);
    // Another object's bytes under this name: a miss too.
    let other = first.address(b"alpha\n").to_hex();
    counting(&store, &first, view("/memories/a.md")).await;
    std::fs::copy(store_dir.join(&other[..2]).join(&other), &file).unwrap();
    let fourth = open_with(&store, with_cache()).await;
    let (answer, cost) = counting(&store, &fourth, view("/memories/notes/b.md")).await;
    assert!(answer.contains("beta"));
    assert_eq!(cost, gets(2));

    // What a client writes is cached too.
    run(&first, &create("/memories/g.md", "gee\n")).await.unwrap();
    drop_inline_contents(&store).await;
    let fifth = open_with(&store, with_cache()).await;
    let (_, cost) = counting(&store, &fifth, view("/memories/g.md")).await;
    assert_eq!(cost, gets(1));

    // A purge deletes the purged content from this machine's cache.
    let purged = first.address(b"gee\n").to_hex();
    assert!(store_dir.join(&purged[..2]).join(&purged).is_file());
    let head = first.head().await.unwrap();
    first
        .purge(&head, &MemoryPath::parse("/memories/g.md").unwrap(), "test", memfs_store::PurgeOptions::default(), &())
        .await
        .unwrap();
    assert!(!store_dir.join(&purged[..2]).join(&purged).exists());
    crate::support::check(&cold(&store).await).await;
}

/// The objects of `store` under `objects/`, by name.
async fn stored_objects(store: &Counted) -> Vec<String> {
    use futures::TryStreamExt;
    let listed: Vec<_> = store.inner().list(Some(&Path::from("objects"))).try_collect().await.unwrap();
    let mut names: Vec<String> = listed.into_iter().map(|m| m.location.to_string()).collect();
    names.sort();
    names
}

/// How many objects of each kind the head carries unwritten: (blobs, directory pages,
/// commits). A create carries one blob, one commit and the pages of its directories it
/// changed, a number that depends on where the keyed page boundaries fall.
async fn carried_kinds(store: &Counted) -> (usize, usize, usize) {
    let carried = carried(store).await;
    let count = |kind: &str| carried.iter().filter(|(k, _)| k == kind).count();
    assert_eq!(count("blob") + count("dir") + count("commit"), carried.len(), "{carried:?}");
    (count("blob"), count("dir"), count("commit"))
}

/// The inline objects of the stored head carried unwritten: `(kind, plaintext)`.
async fn carried(store: &Counted) -> Vec<(String, Vec<u8>)> {
    let head = read_head(store).await;
    head.inline.iter().filter(|o| o.unwritten).map(|o| (kind(o).to_owned(), o.plain.clone())).collect()
}

/// What the head's unwritten objects count against the budget: each one's plaintext and its
/// kind and length (at most 4 bytes).
async fn carried_bytes(store: &Counted) -> usize {
    carried(store).await.iter().map(|(_, plain)| plain.len() + 4).sum()
}

/// A warm writer's mutation is one request, the head swap, which carries the new
/// objects unwritten; a new client reads them from the head (one request for a file view),
/// and `check` finds the store sound.
#[tokio::test]
async fn carried_a_warm_mutation_is_one_request() {
    let store = counted();
    small_tree(&store).await;
    let writer = open_with(&store, OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() }).await;
    counting(&store, &writer, view("/memories/notes")).await;
    let before = stored_objects(&store).await;

    let warm = |input: Value| {
        let (store, writer) = (&store, &writer);
        async move {
            let before = store.plan().counts();
            run_warm(writer, &input).await.unwrap();
            store.plan().counts().since(&before)
        }
    };
    let cost = warm(create("/memories/notes/new.md", "carried along\n")).await;
    assert_eq!(cost, OpCounts { put: 1, bytes_put: cost.bytes_put, ..OpCounts::default() }, "the head swap only");
    let edit = json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "alpha", "new_str": "ALPHA"});
    let cost = warm(edit).await;
    assert_eq!((cost.get, cost.put), (0, 1), "{cost:?}");
    assert_eq!(stored_objects(&store).await, before, "nothing stored under objects/");
    let kinds: Vec<String> = carried(&store).await.into_iter().map(|(kind, _)| kind).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "commit").count(), 2, "{kinds:?}");
    assert!(carried(&store).await.contains(&("blob".to_owned(), b"carried along\n".to_vec())));

    let reader = cold(&store).await;
    let (answer, cost) = counting(&store, &reader, view("/memories/notes/new.md")).await;
    assert!(answer.contains("carried along"), "{answer}");
    assert_eq!(cost, gets(1), "the head carries it");
    let all = verify(&reader).await.unwrap();
    assert_eq!(all.paths["/memories/a.md"], "ALPHA\n");
    assert_eq!(crate::support::check(&reader).await, 0, "no unreferenced object");
}

/// Past the budget, a commit swaps a head that carries everything, then stores what it
/// carries and swaps in the same head carrying nothing unwritten; a client that opened the
/// head that carried them reads them from storage afterwards; `check --read-data` and gc find
/// nothing wrong.
#[tokio::test]
async fn carried_objects_are_stored_when_they_pass_the_budget() {
    let store = counted();
    small_tree(&store).await;
    let options = || OpenOptions { state_dir: StateDir::Off, unwritten_bytes: Some(4096), ..OpenOptions::default() };
    let writer = open_with(&store, options()).await;
    let early = open_with(&store, options()).await;
    let mut costs = Vec::new();
    for i in 0..12 {
        let text = format!("note {i}: {}\n", "words ".repeat(40));
        let (_, cost) = counting(&store, &writer, create(&format!("/memories/n{i}.md"), &text)).await;
        costs.push(cost.put);
        if i == 0 {
            // This client opens the head that carries the first note.
            counting(&store, &early, view("/memories")).await;
        }
        let carried = carried_bytes(&store).await;
        assert!(carried <= 4096, "{carried} bytes carried");
    }
    assert!(costs.iter().filter(|p| **p == 1).count() >= 6, "{costs:?}");
    assert!(costs.iter().any(|p| *p > 4), "a commit stored what was carried: {costs:?}");
    let n0 = stored_objects(&store).await.len();
    assert!(n0 > 20, "{n0} objects stored");

    // The early client's head is long replaced: what it carried is read from storage.
    let all = verify(&early).await.unwrap();
    assert_eq!(all.paths["/memories/n0.md"], format!("note 0: {}\n", "words ".repeat(40)));
    let fresh = cold(&store).await;
    assert_eq!(verify(&fresh).await.unwrap(), all);
    let report = fresh.check(memfs_store::CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let gc = fresh.gc(&memfs_store::GcOptions { grace_ms: 0, ..Default::default() }, &()).await.unwrap();
    assert_eq!(gc.deleted, 0, "{gc:?}");
    assert_eq!(verify(&cold(&store).await).await.unwrap(), all);
}

/// A writer stores what its head carried, once past the budget, 16 puts at a time
/// (each put here takes a millisecond, so that puts overlap): all at once, 16 writers on moto
/// held 2,000 connections and the server reset some.
#[tokio::test]
async fn carried_objects_are_stored_a_few_at_a_time() {
    const PARALLEL: u64 = 16;
    let config = ThrottleConfig { wait_put_per_call: Duration::from_millis(1), ..ThrottleConfig::default() };
    let store = Arc::new(FaultStore::new(ThrottledStore::new(InMemory::new(), config)));
    let writer = init(Backend::ObjectStore(store.clone()), None).await.unwrap();
    let mut most = 0;
    for i in 0..200 {
        let before = store.plan().counts();
        run(&writer, &create(&format!("/memories/d{}/n{i}.md", i % 20), &format!("note {i}\n"))).await.unwrap();
        most = most.max(store.plan().counts().since(&before).put);
    }
    assert!(most > 2 * PARALLEL, "a write-out of {most} puts");
    assert_eq!(store.plan().peak_in_flight(), PARALLEL);
    let options = OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() };
    let reader = EncryptedRepository::open(Backend::ObjectStore(store), &credential(), options).await.unwrap();
    assert_eq!(verify(&reader).await.unwrap().paths.len(), 200 + 20, "the notes and their directories");
}

/// The words of a note in the tests of the unwritten budget (4 KiB): one note's objects
/// (its content, its commit, which repeats the text in its command, and its directory's
/// pages) take a little over half of it, so a second note passes it.
const NOTE_WORDS: usize = 160;

/// Past the budget, only the writer that wins the head swap stores what was carried (after
/// its swap): a writer that loses the race stores nothing, its attempt costs only the lost
/// swap. Stored before the swap, as it was, every writer racing for the head stored it all.
#[tokio::test]
async fn past_the_budget_only_the_winner_stores_what_was_carried() {
    let store = counted();
    small_tree(&store).await;
    let options = || OpenOptions { state_dir: StateDir::Off, unwritten_bytes: Some(4096), ..OpenOptions::default() };
    let (a, b) = (open_with(&store, options()).await, open_with(&store, options()).await);
    let note =
        |i: usize| create(&format!("/memories/n{i}.md"), &format!("note {i}: {}\n", "words ".repeat(NOTE_WORDS)));
    run_warm(&a, &note(0)).await.unwrap();
    let first = carried_bytes(&store).await;
    assert!((2100..=2600).contains(&first), "one note carried, past half the budget: {first} bytes");
    // B knows that head.
    counting(&store, &b, view("/memories")).await;

    // A's second note passes the budget: one swap carrying it all, the objects, one more swap.
    let objects = stored_objects(&store).await.len();
    let before = store.plan().counts();
    run_warm(&a, &note(1)).await.unwrap();
    let cost = store.plan().counts().since(&before);
    let stored = stored_objects(&store).await.len() - objects;
    assert!(stored >= 6, "both notes' objects stored: {stored}");
    assert_eq!((cost.get, cost.put), (0, stored as u64 + 2), "{cost:?}");
    assert_eq!(carried(&store).await, [], "the head that stayed carries nothing unwritten");

    // B's note on the head it knew passes the budget too, and loses the race: nothing stored.
    let objects = stored_objects(&store).await.len();
    let before = store.plan().counts();
    run_warm(&b, &note(2)).await.unwrap();
    let cost = store.plan().counts().since(&before);
    // The lost swap; the head read to see whether it landed after all, and again (unchanged)
    // for the run on the new head; its swap.
    assert_eq!((cost.get, cost.put), (2, 2), "{cost:?}");
    assert_eq!(stored_objects(&store).await.len(), objects, "nothing stored under objects/");
    let (blobs, pages, commits) = carried_kinds(&store).await;
    assert_eq!((blobs, commits), (1, 1), "its blob and commit carried");
    assert!(pages >= 1, "and its directory's changed pages");

    let fresh = cold(&store).await;
    let all = verify(&fresh).await.unwrap();
    for i in 0..3 {
        assert_eq!(all.paths[&format!("/memories/n{i}.md")], format!("note {i}: {}\n", "words ".repeat(NOTE_WORDS)));
    }
    let report = fresh.check(memfs_store::CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

/// A commit on a head already past the budget (whose writer is storing what it carries)
/// carries everything on and stores nothing; the commit that passes twice the budget (that
/// writer evidently did not take them out of the head) writes it all out after its swap, and
/// the head then carries nothing unwritten.
#[tokio::test]
async fn on_a_head_past_the_budget_a_commit_carries_on_until_twice_it() {
    let store = counted();
    small_tree(&store).await;
    let budget =
        |bytes| OpenOptions { state_dir: StateDir::Off, unwritten_bytes: Some(bytes), ..OpenOptions::default() };
    let note =
        |i: usize| create(&format!("/memories/n{i}.md"), &format!("note {i}: {}\n", "words ".repeat(NOTE_WORDS)));
    // A writer with a larger budget leaves a head carrying two notes, past 4 KiB.
    let big = open_with(&store, budget(16384)).await;
    for i in 0..2 {
        run_warm(&big, &note(i)).await.unwrap();
    }
    let before = carried_kinds(&store).await;
    assert_eq!((before.0, before.2), (2, 2), "{:?}", carried(&store).await);
    let small = open_with(&store, budget(4096)).await;
    counting(&store, &small, view("/memories")).await;
    let objects = stored_objects(&store).await.len();
    let mut costs = Vec::new();
    let mut last = 0;
    for i in 2..5 {
        let start = store.plan().counts();
        run_warm(&small, &note(i)).await.unwrap();
        costs.push(store.plan().counts().since(&start).put);
        if carried(&store).await.is_empty() {
            break;
        }
        assert_eq!(stored_objects(&store).await.len(), objects, "note {i}: nothing stored ({costs:?})");
        let (blobs, pages, commits) = carried_kinds(&store).await;
        assert_eq!((blobs, commits), (i + 1, i + 1), "note {i}");
        assert!(pages > before.1, "note {i}");
        last = blobs + pages + commits;
    }
    // Note 2 carried on (one request); note 3 passed 8 KiB: its swap, everything stored, the
    // swap of a head without them.
    assert_eq!(costs.len(), 2, "{costs:?}");
    assert_eq!(costs[0], 1, "{costs:?}");
    let stored = stored_objects(&store).await.len() - objects;
    assert!(stored >= last + 3, "what notes 0 to 2 carried ({last}), and note 3's blob, pages and commit: {stored}");
    assert_eq!(costs[1], stored as u64 + 2, "{costs:?}");
    let all = verify(&cold(&store).await).await.unwrap();
    assert_eq!(all.paths["/memories/n3.md"], format!("note 3: {}\n", "words ".repeat(NOTE_WORDS)));
}

/// A purge of a file whose content the head carries unwritten: the content is in no head and
/// no object afterwards; what else the head carried is stored.
#[tokio::test]
async fn carried_objects_of_a_purged_file_are_gone() {
    let store = counted();
    small_tree(&store).await;
    let writer = open_with(&store, OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() }).await;
    run(&writer, &create("/memories/secret.md", "the secret\n")).await.unwrap();
    run(&writer, &create("/memories/kept.md", "kept\n")).await.unwrap();
    assert!(carried(&store).await.contains(&("blob".to_owned(), b"the secret\n".to_vec())));

    let head = writer.head().await.unwrap();
    let path = MemoryPath::parse("/memories/secret.md").unwrap();
    let report = writer.purge(&head, &path, "eraser", memfs_store::PurgeOptions::default(), &()).await.unwrap();
    assert_eq!(report.remaining, 0, "{report:?}");
    let head = memfs_store::fuzzing::encode_head(&read_head(&store).await);
    assert!(!head.windows(10).any(|w| w == b"the secret"), "{head:?}");
    assert!(carried(&store).await.is_empty());
    for name in stored_objects(&store).await {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(name.rsplit('/').next().unwrap(), &mut bytes).unwrap();
        let id = ObjectId::from_bytes(bytes);
        let sealed = store.inner().get(&Path::from(name.as_str())).await.unwrap().bytes().await.unwrap();
        if let Ok(plain) =
            ObjectKeys::from_master(&FirstKey::from_bytes([0x5a; 32])).open(ObjectKind::Blob, &id, &sealed)
        {
            assert_ne!(plain, b"the secret\n", "{name}");
        }
    }
    let all = verify(&cold(&store).await).await.unwrap();
    assert_eq!(all.paths["/memories/kept.md"], "kept\n");
    assert!(!all.paths.contains_key("/memories/secret.md"));
}

/// `n` creates by another client (`/memories/n0.md` to `n{n-1}.md`), each its own commit.
async fn commits_by_another(store: &Counted, n: usize) {
    let other = cold(store).await;
    for i in 0..n {
        run(&other, &create(&format!("/memories/n{i}.md"), "new\n")).await.unwrap();
    }
}

/// A client that fell behind reads the new head with one request when the head names the
/// commit it remembers (its rollback watermark): the head names the 32 commits before it
/// so 20 commits behind none between is fetched. 40 behind, the walk down the
/// parents starts from the oldest commit the head names: the 8 below the list are fetched,
/// not all 40.
#[tokio::test]
async fn a_reader_behind_fetches_only_the_commits_below_the_heads_list() {
    for (behind, expected) in [(20, 1), (40, 1 + 8)] {
        let store = counted();
        small_tree(&store).await;
        let state = tempfile::tempdir().unwrap();
        let options = OpenOptions {
            state_dir: StateDir::At(state.path().into()),
            unwritten_bytes: Some(0),
            ..Default::default()
        };
        let reader = open_with(&store, options).await;
        counting(&store, &reader, view("/memories")).await;
        commits_by_another(&store, behind).await;
        let last = format!("/memories/n{}.md", behind - 1);
        let (answer, cost) = counting(&store, &reader, view(&last)).await;
        assert!(answer.contains("new"), "{answer}");
        assert_eq!(cost, gets(expected), "{behind} commits behind: the head, then the commits below its list");
        let named = read_head(&store).await.recent.len();
        assert_eq!(named, (behind + 3).min(32), "@{} names the commits before it, at most 32", behind + 4);
    }
}

/// A writer whose head is old (kept within its staleness bound) learns of the newest head by
/// the fresh read before it stores anything, and commits on it: 20 or 40 commits behind, no
/// commit between is fetched, and its objects are stored once.
#[tokio::test]
async fn a_writer_that_lost_stores_its_objects_once_on_the_newest_head() {
    for behind in [20, 40] {
        let store = counted();
        small_tree(&store).await;
        let writer = open_with(&store, stale_ok(Duration::from_secs(3600))).await;
        counting(&store, &writer, view("/memories")).await;
        commits_by_another(&store, behind).await;
        let (answer, cost) = counting(&store, &writer, create("/memories/late.md", "late\n")).await;
        assert_eq!(answer, "File created successfully at: /memories/late.md");
        // Two attempts: the first refused by the fresh read (the newest head, whole), the
        // second's (unchanged: 304) passes; then its content, two directory pages, its
        // commit and the head.
        assert_eq!((cost.get, cost.put), (2, 5), "{behind} behind: {cost:?}");
    }
}
