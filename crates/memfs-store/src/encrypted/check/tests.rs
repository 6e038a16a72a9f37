use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use super::*;
use crate::encrypted::history::tests::{run, three_commits};
use crate::encrypted::object_path;
use crate::hooked::{Action, At, Hooked};
use crate::repository::Repository;

async fn read(repo: &EncryptedRepository, path: &Path) -> Vec<u8> {
    repo.objects.store.get(path).await.unwrap().bytes().await.unwrap().to_vec()
}

async fn write(repo: &EncryptedRepository, path: &Path, bytes: Vec<u8>) {
    repo.objects.store.put(path, PutPayload::from(bytes)).await.unwrap();
}

/// Each problem as `object: context: error`.
async fn problems(repo: &EncryptedRepository, read_data: bool) -> Vec<String> {
    let report = repo.check(CheckOptions { read_data }, &()).await.unwrap();
    report.problems.iter().map(|p| format!("{}: {}: {}", p.object, p.context, p.error)).collect()
}

/// An index page whose low does not match the pages below it (as a buggy
/// writer could make: a reader would look for a name in the wrong leaf) is named.
#[tokio::test]
async fn an_index_page_that_misleads_a_reader_is_named() {
    let repo = three_commits().await;
    let key = &repo.objects.keys.tree_address;
    let entries = (0..60).map(|i| {
        let content = format!("{i}\n");
        let (id, size) = (repo.address(content.as_bytes()), content.len() as u64);
        let name = memfs_core::Name::parse(&format!("n{i:02}")).unwrap();
        (content, (name, Node::File(memfs_core::FileRef { id, size, accessed: 0 })))
    });
    let mut files = Vec::new();
    for (content, entry) in entries {
        let Node::File(f) = &entry.1 else { unreachable!() };
        repo.objects.put_one(ObjectKind::Blob, f.id, content.as_bytes()).await.unwrap();
        files.push(entry);
    }
    let big = memfs_core::Dir::from_entries(files);
    let mut pages = crate::pages::encode(&big, key).unwrap().pages;
    // The top page's first low, one character longer: still a name, still in order.
    let (_, top) = pages.pop().unwrap();
    let format::Page::Index(mut index) = format::decode_page(&top, &ObjectId::from_bytes([0; 32])).unwrap() else {
        panic!("a directory of 60 entries has index pages");
    };
    let guide = &mut index.guide;
    guide.lows[0] = memfs_core::Name::parse(&format!("{}0", guide.lows[0])).unwrap();
    let forged = format::reencode_index(&index);
    let bad = key.address(&forged);
    for (id, plain) in pages.iter().chain([(bad, forged.clone())].iter()) {
        repo.objects.put_one(ObjectKind::Dir, *id, plain).await.unwrap();
    }
    let head = repo.head().await.unwrap();
    let root = memfs_core::Dir::from_entries([(
        memfs_core::Name::parse("big").unwrap(),
        Node::Dir(memfs_core::DirRef::stored(bad, big.totals())),
    )]);
    let tree = memfs_core::Tree::from_root(memfs_core::DirRef::new(root));
    let mutation = memfs_core::Mutation { tree, changes: Vec::new(), blobs: Vec::new(), applied: None };
    repo.commit(&head, &mutation, crate::CommitInfo::default()).await.unwrap();
    assert_eq!(
        problems(&repo, false).await,
        [format!(
            "{0}: directory /memories/big at @4: object {0} is corrupt: an index page's leaf counts or lows do not \
             match the pages below it",
            format::object_name(&bad)
        )]
    );
}

/// A head whose `recent` names a commit its parents do not lead to (as a buggy
/// writer could make: a reader takes its word instead of walking) is named.
#[tokio::test]
async fn a_head_that_names_wrong_recent_commits_is_named() {
    let repo = three_commits().await;
    let (mut head, version) = repo.read_head().await.unwrap().unwrap();
    let commits = repo.log(None, None).await.unwrap();
    let at = |g: u64| format::parse_id(&commits.iter().find(|c| c.generation == g).unwrap().id).unwrap();
    // @2 right, @1 given @2's id.
    head.recent = vec![at(2), at(2)];
    repo.heads.cell.swap(&version, repo.seal_head(&head).unwrap()).await.unwrap();
    let short = |id: ObjectId| id.to_hex()[..12].to_owned();
    assert_eq!(
        problems(&repo, false).await,
        [format!(
            "head: the commits it names before @3: object head is corrupt: it names {} as the commit at @1, \
             where its parents lead to {}",
            short(at(2)),
            short(at(1))
        )]
    );
    // Naming more commits than there are generations below is refused on reading.
    let (mut head, version) = repo.read_head().await.unwrap().unwrap();
    head.recent = vec![at(2), at(1), at(1)];
    repo.heads.cell.swap(&version, repo.seal_head(&head).unwrap()).await.unwrap();
    *repo.heads.parsed() = None;
    let e = repo.read_head().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "object head is corrupt: it names more recent commits than there are generations before it"
    );
}

/// A commit that records wrong totals for its tree (as a buggy writer could) is named.
#[tokio::test]
async fn totals_that_disagree_with_the_pages_are_named() {
    let repo = three_commits().await;
    let head = repo.head().await.unwrap();
    let root = head.tree.root().id().unwrap();
    let wrong = memfs_core::Tree::from_root(memfs_core::DirRef::stored(root, Totals { files: 9, bytes: 1 }));
    let mutation = memfs_core::Mutation { tree: wrong, changes: Vec::new(), blobs: Vec::new(), applied: None };
    repo.commit(&head, &mutation, crate::CommitInfo::default()).await.unwrap();
    assert_eq!(
        problems(&repo, false).await,
        [format!(
            "{}: the tree of @4: object {0} is corrupt: it holds 2 files and 6 bytes, but is recorded with 9 files \
             and 1 bytes",
            format::object_name(&root)
        )]
    );
}

fn create(path: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"command": "create", "path": path, "file_text": text})
}

/// A writer commits while the check lists the store, and the check is handed the listing
/// from before that commit: the new commit's objects are not in it. The check read the
/// head before listing, so it checks the head from before too, and finds nothing wrong.
#[tokio::test]
async fn a_commit_landing_while_the_store_is_listed_is_not_reported_missing() {
    let (store, repo) = Hooked::repository().await;
    run(&repo, create("/memories/a.txt", "one")).await;
    let action: Action = Box::new(|repo| Box::pin(async move { run(&repo, create("/memories/b.txt", "two")).await }));
    store.arm(At::ListAfter, action).await;
    let report = repo.check(CheckOptions { read_data: false }, &()).await.unwrap();
    assert!(store.fired().await);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.newest, report.files), (1, 1));
    let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.newest, report.files, report.unreferenced), (2, 2, 0));
}

/// Purges `path`, on a thread of its own: the purge's future is not `Send`, and the hook
/// runs inside the store's (`Send`) streams.
async fn purge(repo: std::sync::Arc<EncryptedRepository>, path: &'static str) {
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        runtime.block_on(async {
            let head = repo.head().await.unwrap();
            let path = memfs_core::MemoryPath::parse(path).unwrap();
            repo.purge(&head, &path, "eraser", crate::PurgeOptions::default(), &()).await.unwrap();
        })
    })
    .await
    .unwrap();
}

/// A purge lands after the check read the head and before it lists the store: the
/// history the check walks names objects the purge deleted. The head moved, so the check
/// runs again, on the purged history, and reports it clean.
#[tokio::test]
async fn a_check_that_a_purge_overtook_runs_again() {
    let (store, repo) = Hooked::repository().await;
    run(&repo, create("/memories/s.md", "secret")).await;
    run(&repo, create("/memories/keep.md", "keep")).await;
    let action: Action = Box::new(|repo| Box::pin(purge(repo, "/memories/s.md")));
    store.arm(At::ListBefore, action).await;
    let report = repo.check(CheckOptions { read_data: true }, &()).await.unwrap();
    assert!(store.fired().await);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.newest, report.commits, report.files, report.unreferenced), (3, 3, 1, 0));
}

#[tokio::test]
async fn a_clean_store_passes_and_counts() {
    let repo = three_commits().await;
    for read_data in [false, true] {
        let report = repo.check(CheckOptions { read_data }, &()).await.unwrap();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        // Roots: {a}, {a, d{b}}, {d{a, b}}: 3 roots and 2 versions of d; contents "one", "two".
        let counts = (report.commits, report.newest, report.oldest, report.dirs, report.files, report.file_bytes);
        assert_eq!(counts, (3, 3, 1, 5, 2, 6));
        assert_eq!(report.unreferenced, 0);
    }
}

#[tokio::test]
async fn every_flipped_byte_of_every_object_is_named() {
    let repo = three_commits().await;
    let ids: Vec<ObjectId> = repo.objects.list().await.unwrap().into_keys().collect();
    assert_eq!(ids.len(), 10); // 3 commits, 5 directories, 2 contents
    for id in ids {
        let path = object_path(&id);
        let original = read(&repo, &path).await;
        for offset in [0, 3, 10, original.len() / 2, original.len() - 1] {
            let mut bad = original.clone();
            bad[offset] ^= 0x01;
            write(&repo, &path, bad).await;
            let found = problems(&repo, true).await;
            assert!(
                found.iter().any(|p| p.starts_with(&format!("{path}: "))),
                "byte {offset} of {path} flipped, check found {found:?}"
            );
        }
        write(&repo, &path, original).await;
    }
    assert_eq!(problems(&repo, true).await, Vec::<String>::new());
}

#[tokio::test]
async fn names_tampered_missing_and_truncated_objects() {
    let repo = three_commits().await;
    let head = repo.resolve(&crate::Revision::Head(0)).await.unwrap();
    let a = repo.address(b"one");
    let b = repo.address(b"two");
    let (pa, pb) = (object_path(&a), object_path(&b));
    let (ba, bb) = (read(&repo, &pa).await, read(&repo, &pb).await);

    // Swapped: both fail to open under the other's name.
    write(&repo, &pa, bb.clone()).await;
    write(&repo, &pb, ba.clone()).await;
    let auth = "failed authentication: it was modified, swapped or written under another key";
    let mut expected = vec![
        format!("{pa}: file /memories/a.txt at @2: object {pa} {auth}"),
        format!("{pb}: file /memories/d/b.txt at @3: object {pb} {auth}"),
    ];
    expected.sort();
    assert_eq!(problems(&repo, true).await, expected);
    // Without reading data the sizes agree (3 bytes each), so nothing shows.
    assert_eq!(problems(&repo, false).await, Vec::<String>::new());

    // Truncated: seen from the listing alone.
    write(&repo, &pa, ba[..ba.len() - 1].to_vec()).await;
    write(&repo, &pb, bb).await;
    assert_eq!(
        problems(&repo, false).await,
        [format!(
            "{pa}: file /memories/a.txt at @2: object {pa} is corrupt: it has 42 bytes, but a sealed 3-byte content has 43"
        )]
    );
    // Missing.
    repo.objects.store.delete(&pa).await.unwrap();
    assert_eq!(
        problems(&repo, false).await,
        [format!("{pa}: file /memories/a.txt at @2: object {pa} is missing from the store")]
    );
    write(&repo, &pa, ba).await;

    // The head.
    let head_bytes = read(&repo, &Path::from("head")).await;
    let mut bad = head_bytes.clone();
    bad[20] ^= 0x80;
    write(&repo, &Path::from("head"), bad).await;
    assert_eq!(problems(&repo, false).await, [format!("head: the head: object head {auth}")]);
    write(&repo, &Path::from("head"), head_bytes).await;

    // A commit.
    let pc = object_path(&head.oid);
    let commit = read(&repo, &pc).await;
    let mut bad = commit.clone();
    bad[30] ^= 0x01;
    write(&repo, &pc, bad).await;
    assert_eq!(problems(&repo, false).await, [format!("{pc}: commit @3, named by the head: object {pc} {auth}")]);
    write(&repo, &pc, commit).await;

    // gc's state, once it exists.
    repo.gc(&crate::GcOptions::default(), &()).await.unwrap();
    let state = read(&repo, &Path::from("gc.state")).await;
    let mut bad = state.clone();
    bad[17] ^= 0x01;
    write(&repo, &Path::from("gc.state"), bad).await;
    assert_eq!(
        problems(&repo, false).await,
        [format!("gc.state: gc's state (the retention horizon): object gc.state {auth}")]
    );
    write(&repo, &Path::from("gc.state"), state).await;
    assert_eq!(problems(&repo, true).await, Vec::<String>::new());
}
