//! The store fixture of the current format opens with this binary as it is (docs/FORMAT.md,
//! "Versions"): `tests/fixtures/format-1` (read its README) is copied into a temporary folder,
//! given the modes git does not keep, and opened.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use object_store::ObjectStoreExt;
use serde_json::Value;

use crate::support::{self, assert_text};

/// A copy of `tests/fixtures/{name}` in a temporary folder, 0700 folders and 0600 files.
fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir(to).unwrap();
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700)).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
        }
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(name);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(name);
    copy(&source, &root);
    (dir, root)
}

fn memfs(home: &Path, root: &Path) -> Command {
    let mut cmd = support::memfs(home);
    cmd.arg("--store")
        .arg(format!("file://{}", root.join("store").display()))
        .arg("--key-file")
        .arg(root.join("store.key"))
        .stdin(Stdio::null());
    cmd
}

#[track_caller]
fn ok(home: &Path, root: &Path, args: &[&str]) -> String {
    support::ok(&format!("memfs {args:?}"), &memfs(home, root).args(args).output().unwrap())
}

/// `memfs.keys` as the store folder holds it, read through the log's format.
fn keys(root: &Path) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let log = memfs_store::open_local_log(root.join("store")).unwrap();
    let bytes = runtime.block_on(async {
        log.get(&object_store::path::Path::from("memfs.keys")).await.unwrap().bytes().await.unwrap()
    });
    serde_json::from_slice(&bytes).unwrap()
}

/// The history the fixture holds (tests/fixtures/README.md), without times.
const HISTORY: &str = "\
@6 delete /memories/tmp.md
@5 create /memories/tmp.md
@4 rename /memories/projects/plan.md /memories/projects/roadmap.md
@3 str_replace /memories/notes.md
@2 create /memories/projects/plan.md
@1 create /memories/notes.md
";

/// `memfs log`'s first lines, without the id and time.
fn history(log: &str) -> String {
    log.lines()
        .filter(|l| l.starts_with('@'))
        .map(|l| {
            let words: Vec<&str> = l.split(' ').collect();
            format!("{} {}\n", words[0], words[4..].join(" "))
        })
        .collect()
}

/// Every path in the store folder's log but `memfs.keys` and the head, with its bytes.
fn objects(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    use futures::StreamExt;
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let log = memfs_store::open_local_log(root.join("store")).unwrap();
    runtime.block_on(async {
        let mut out = std::collections::BTreeMap::new();
        let mut list = object_store::ObjectStore::list(&log, None);
        while let Some(meta) = list.next().await {
            let path = meta.unwrap().location;
            if !["memfs.keys", "head"].contains(&path.as_ref()) {
                out.insert(path.to_string(), log.get(&path).await.unwrap().bytes().await.unwrap().to_vec());
            }
        }
        out
    })
}

/// The format-1 fixture, written as a bucket holds a store: its head names the five commits
/// before it and carries every object unwritten, without their ids. It opens as it is,
/// nothing is rewritten, and `check` finds nothing wrong.
#[test]
fn the_format_1_fixture_opens_as_it_is() {
    let (dir, root) = fixture("format-1");
    let home = dir.path().join("client");
    let keys_before = keys(&root);
    assert_eq!(keys_before["version"], 1);
    let before = objects(&root);
    assert_text("log", &history(&ok(&home, &root, &["log"])), HISTORY);
    assert_text("notes", &ok(&home, &root, &["show", "HEAD:/memories/notes.md"]), "alpha\ngamma\n");
    assert_text("roadmap", &ok(&home, &root, &["show", "@2:/memories/projects/plan.md"]), "step one\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
    assert_eq!(keys(&root), keys_before, "a format-1 store is not rewritten");
    assert!(objects(&root) == before, "reading wrote nothing");
}

/// A store whose `memfs.keys` names, in `requires`, a feature this memfs does not know (a later
/// memfs's, docs/FORMAT.md "Versions") is refused before anything is unlocked or written, with
/// a message that says what to do; put back as it was, it opens as before.
#[test]
fn a_feature_this_memfs_does_not_know_is_refused() {
    let (dir, root) = fixture("format-1");
    let home = dir.path().join("client");
    let store = root.join("store");
    let mut later = keys(&root);
    later["requires"] = serde_json::json!(["zstd-pages", "sealed-names"]);
    support::append_put(&store, "memfs.keys", &serde_json::to_vec_pretty(&later).unwrap());
    let before = objects(&root);
    let out = memfs(&home, &root).arg("log").output().unwrap();
    let expected = format!(
        "memfs: store file://{}: the store requires \"zstd-pages\", \"sealed-names\", which this memfs does not \
         know: a later memfs reads it\n",
        store.display()
    );
    assert_text("refused", &support::fails("log", 1, &out), &expected);
    assert!(objects(&root) == before, "a refused store is not written");

    // `requires` is covered by the tag: even empty, written without the root it fails it.
    later["requires"] = serde_json::json!([]);
    support::append_put(&store, "memfs.keys", &serde_json::to_vec_pretty(&later).unwrap());
    let expected = format!(
        "memfs: store file://{}: object memfs.keys is corrupt: the key slots fail their authentication: memfs.keys \
         was changed by someone without the store's key\n",
        store.display()
    );
    assert_text("unsigned", &support::fails("log", 1, &memfs(&home, &root).arg("log").output().unwrap()), &expected);
    later.as_object_mut().unwrap().remove("requires");
    support::append_put(&store, "memfs.keys", &serde_json::to_vec_pretty(&later).unwrap());
    assert_text("log", &history(&ok(&home, &root, &["log"])), HISTORY);
}

/// Whoever holds the storage plants a second `version` before the genuine one in
/// `memfs.keys`. The tag covers the object as parsed, and a parser keeps the last copy (the
/// genuine one), so the tag would pass here, while a reader that keeps the first copy would
/// read the planted one: memfs refuses a repeated member, before anything is unlocked.
#[test]
fn a_member_repeated_in_memfs_keys_is_refused() {
    let (dir, root) = fixture("format-1");
    let home = dir.path().join("client");
    let store = root.join("store");
    let genuine = serde_json::to_string_pretty(&keys(&root)).unwrap();
    let planted = genuine.replacen('{', "{\n  \"version\": 2,", 1);
    support::append_put(&store, "memfs.keys", planted.as_bytes());
    let before = objects(&root);
    let expected = format!(
        "memfs: store file://{}: object memfs.keys is corrupt: the member \"version\" is repeated in one object at \
         line 36 column 11\n",
        store.display()
    );
    assert_text("refused", &support::fails("log", 1, &memfs(&home, &root).arg("log").output().unwrap()), &expected);
    assert!(objects(&root) == before, "a refused store is not written");
    support::append_put(&store, "memfs.keys", genuine.as_bytes());
    assert_text("log", &history(&ok(&home, &root, &["log"])), HISTORY);
}
