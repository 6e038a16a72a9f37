//! `LogStore`: the same answers as `InMemory`, instances sharing a folder, reopening, torn
//! tails at every length, corruption, segment rollover, compaction under a live reader, and
//! compare-and-swap without lost updates.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use futures::TryStreamExt;
use futures::stream::{self, StreamExt};
use memfs_log::LogStore;
use memfs_store::Backend;
use memfs_store::conformance::check_repository;
use memfs_store::open_local_log;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    UpdateVersion,
};

use crate::support::{init, open, verify};

fn p(s: &str) -> Path {
    Path::from(s)
}

/// An error's kind, as callers match on it.
fn kind(e: &object_store::Error) -> String {
    match e {
        object_store::Error::NotFound { .. } => "NotFound".into(),
        object_store::Error::AlreadyExists { .. } => "AlreadyExists".into(),
        object_store::Error::Precondition { .. } => "Precondition".into(),
        object_store::Error::NotModified { .. } => "NotModified".into(),
        object_store::Error::Generic { .. } => "Generic".into(),
        other => format!("other: {other}"),
    }
}

fn outcome<T: std::fmt::Debug>(r: object_store::Result<T>) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => format!("err {}", kind(&e)),
    }
}

async fn get(store: &dyn ObjectStore, path: &str) -> object_store::Result<String> {
    let bytes = store.get(&p(path)).await?.bytes().await?;
    Ok(String::from_utf8(bytes.to_vec()).unwrap())
}

async fn get_opts(store: &dyn ObjectStore, path: &str, options: GetOptions) -> object_store::Result<String> {
    let bytes = store.get_opts(&p(path), options).await?.bytes().await?;
    Ok(String::from_utf8(bytes.to_vec()).unwrap())
}

async fn put(store: &dyn ObjectStore, path: &str, data: &str, mode: PutMode) -> object_store::Result<Option<String>> {
    Ok(store.put_opts(&p(path), PutPayload::from(data.to_string()), mode.into()).await?.e_tag)
}

fn update(e_tag: Option<String>) -> PutMode {
    PutMode::Update(UpdateVersion { e_tag, version: None })
}

/// Every path with its content, as a listing and gets see them.
async fn snapshot(store: &dyn ObjectStore) -> BTreeMap<String, String> {
    let metas: Vec<_> = store.list(None).try_collect().await.unwrap();
    let mut out = BTreeMap::new();
    for m in metas {
        let data = get(store, m.location.as_ref()).await.unwrap();
        assert_eq!(m.size, data.len() as u64, "{}", m.location);
        out.insert(m.location.to_string(), data);
    }
    out
}

/// The same operations, with outcomes written down without e_tags or times.
async fn transcript(s: &dyn ObjectStore) -> Vec<String> {
    let mut t = Vec::new();
    t.push(outcome(put(s, "a/b", "hello", PutMode::Create).await.map(|_| ())));
    t.push(outcome(put(s, "a/b", "again", PutMode::Create).await.map(|_| ())));
    t.push(outcome(get(s, "a/b").await));
    t.push(outcome(s.get_range(&p("a/b"), 1..3).await));
    for range in [GetRange::Suffix(2), GetRange::Offset(4), GetRange::Bounded(3..99), GetRange::Bounded(10..12)] {
        t.push(outcome(get_opts(s, "a/b", GetOptions::new().with_range(Some(range))).await));
    }
    t.push(outcome(s.head(&p("a/b")).await.map(|m| (m.location, m.size, m.version))));
    t.push(outcome(get(s, "missing").await));
    t.push(outcome(s.head(&p("missing")).await.map(|m| m.size)));

    let e1 = put(s, "a/b", "v2", PutMode::Overwrite).await.unwrap();
    let head = s.head(&p("a/b")).await.unwrap();
    t.push(format!("e_tag of put = e_tag of head: {}", e1 == head.e_tag));
    t.push(outcome(get_opts(s, "a/b", GetOptions::new().with_if_match(Some("nope"))).await));
    t.push(outcome(get_opts(s, "a/b", GetOptions::new().with_if_match(e1.clone())).await));
    t.push(outcome(get_opts(s, "a/b", GetOptions::new().with_if_none_match(e1.clone())).await));
    let e2 = put(s, "a/b", "v3", update(e1.clone())).await;
    t.push(format!("update with the right e_tag: {}, new e_tag: {}", outcome(get(s, "a/b").await), e2.unwrap() != e1));
    t.push(outcome(put(s, "a/b", "v4", update(e1.clone())).await.map(|_| ())));
    t.push(outcome(put(s, "a/b", "v4", update(None)).await.map(|_| ())));
    t.push(outcome(put(s, "never", "v", update(Some("x".into()))).await.map(|_| ())));
    t.push(outcome(get(s, "a/b").await));

    t.push(outcome(s.delete(&p("a/b")).await));
    t.push(outcome(get(s, "a/b").await));
    t.push(outcome(s.delete(&p("a/b")).await));
    t.push(outcome(s.delete(&p("never")).await));
    t.push(outcome(put(s, "a/b", "reborn", PutMode::Create).await.map(|_| ())));
    let both = stream::iter([Ok(p("a/b")), Ok(p("nothing"))]).boxed();
    t.push(outcome(s.delete_stream(both).try_collect::<Vec<_>>().await));

    for (path, data) in [
        ("objects/aa/1", "one"),
        ("objects/aa/2", "two"),
        ("objects/bb/3", "three"),
        ("objectsfoo/x", "not under objects"),
        ("objects", "the prefix itself"),
        ("head", "h"),
        ("gc.state", "g"),
    ] {
        t.push(outcome(put(s, path, data, PutMode::Create).await.map(|_| ())));
    }
    for prefix in [None, Some("objects"), Some("objects/aa"), Some("objects/a"), Some("nothing")] {
        let mut listed: Vec<_> = s.list(prefix.map(p).as_ref()).try_collect().await.unwrap();
        listed.sort_by(|a, b| a.location.cmp(&b.location));
        let listed: Vec<_> = listed.iter().map(|m| format!("{} {}", m.location, m.size)).collect();
        t.push(format!("list {prefix:?}: {listed:?}"));
    }
    for prefix in [None, Some("objects"), Some("objects/bb")] {
        let r = s.list_with_delimiter(prefix.map(p).as_ref()).await.unwrap();
        let objects: Vec<_> = r.objects.iter().map(|m| format!("{} {}", m.location, m.size)).collect();
        t.push(format!("list_with_delimiter {prefix:?}: {:?} {objects:?}", r.common_prefixes));
    }

    t.push(outcome(s.copy(&p("objects/aa/1"), &p("c/1")).await));
    t.push(outcome(get(s, "c/1").await));
    t.push(outcome(s.copy_if_not_exists(&p("objects/aa/2"), &p("c/1")).await));
    t.push(outcome(s.copy(&p("missing"), &p("c/2")).await));
    t.push(outcome(s.rename(&p("c/1"), &p("c/3")).await));
    t.push(outcome(get(s, "c/1").await));
    t.push(outcome(get(s, "c/3").await));

    let mut upload = s.put_multipart(&p("m")).await.unwrap();
    upload.put_part(PutPayload::from("ab")).await.unwrap();
    upload.put_part(PutPayload::from_iter([bytes::Bytes::from("c"), bytes::Bytes::from("d")])).await.unwrap();
    t.push(outcome(upload.complete().await.map(|_| ())));
    t.push(outcome(get(s, "m").await));
    t
}

#[tokio::test]
async fn answers_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path().join("store")).unwrap();
    let expected = transcript(&InMemory::new()).await;
    let actual = transcript(&log).await;
    assert_eq!(actual, expected, "\nLogStore: {actual:#?}\nInMemory: {expected:#?}");
    // And a fresh instance reads the same state.
    let again = open_local_log(dir.path().join("store")).unwrap();
    assert_eq!(snapshot(&again).await, snapshot(&log).await);
}

#[tokio::test]
async fn attributes_are_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap();
    let attributes = Attributes::from_iter([(Attribute::ContentType, "text/plain")]);
    let opts = PutOptions { attributes, ..Default::default() };
    let e = log.put_opts(&p("a"), "x".into(), opts).await.unwrap_err();
    assert_eq!(e.to_string(), "Operation `put_opts` with attributes not yet implemented by LogStore.");
    assert_eq!(kind(&get(&log, "a").await.unwrap_err()), "NotFound");
}

#[tokio::test]
async fn repository_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open_local_log(dir.path()).unwrap().with_segment_limit(4096));
    check_repository(&init(Backend::ObjectStore(store), None).await.unwrap()).await;
    let again = open(Backend::ObjectStore(Arc::new(open_local_log(dir.path()).unwrap())), None).await.unwrap();
    let snapshot = verify(&again).await.unwrap();
    assert_eq!(snapshot.paths.keys().collect::<Vec<_>>(), ["/memories/a.txt", "/memories/c.txt"]);
}

#[tokio::test]
async fn folder_and_file_modes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("new/store");
    let log = open_local_log(&root).unwrap();
    put(&log, "head", "h", PutMode::Create).await.unwrap();
    let mode = |path: &FsPath| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&root), mode(&root.join("log"))), (0o700, 0o700));
    assert_eq!(mode(&root.join("log.lock")), 0o600);
    assert_eq!(segments(&root), [root.join("log/0000000000000001")]);
    assert_eq!(mode(&segments(&root)[0]), 0o600);
}

#[tokio::test]
async fn instances_share_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let a = LogStore::open(dir.path()).unwrap();
    let b = LogStore::open(dir.path()).unwrap();
    put(&a, "objects/aa/1", "one", PutMode::Create).await.unwrap();
    put(&a, "head", "h1", PutMode::Create).await.unwrap();
    assert_eq!(get(&b, "objects/aa/1").await.unwrap(), "one");
    assert_eq!(kind(&put(&b, "head", "again", PutMode::Create).await.unwrap_err()), "AlreadyExists");
    b.delete(&p("objects/aa/1")).await.unwrap();
    assert_eq!(kind(&get(&a, "objects/aa/1").await.unwrap_err()), "NotFound");
    assert_eq!(snapshot(&a).await, BTreeMap::from([("head".into(), "h1".into())]));

    // Both read the same e_tag; the first update wins, the second fails its precondition.
    let ea = a.head(&p("head")).await.unwrap().e_tag;
    let eb = b.head(&p("head")).await.unwrap().e_tag;
    assert_eq!(ea, eb);
    put(&b, "head", "from b", update(eb.clone())).await.unwrap();
    assert_eq!(kind(&put(&a, "head", "from a", update(ea)).await.unwrap_err()), "Precondition");
    assert_eq!(get(&a, "head").await.unwrap(), "from b");
    assert_eq!(snapshot(&LogStore::open(dir.path()).unwrap()).await, snapshot(&a).await);
}

/// A settled path found in what an instance knows is answered without catching up: another
/// instance's delete is not seen there until a read that must catch up (a miss, a conditional
/// read, any other path) brings it in. Paths that are not settled are read as before.
#[tokio::test]
async fn a_settled_path_is_read_without_catching_up() {
    let dir = tempfile::tempdir().unwrap();
    let a = LogStore::open(dir.path()).unwrap().with_settled_prefixes(vec!["objects/".into()]);
    let b = LogStore::open(dir.path()).unwrap();
    put(&b, "objects/aa/1", "one", PutMode::Create).await.unwrap();
    put(&b, "plain", "p1", PutMode::Create).await.unwrap();
    // A miss catches up, and finds both.
    assert_eq!(get(&a, "objects/aa/1").await.unwrap(), "one");
    assert_eq!(get(&a, "plain").await.unwrap(), "p1");
    b.delete(&p("objects/aa/1")).await.unwrap();
    b.delete(&p("plain")).await.unwrap();
    put(&b, "objects/aa/2", "two", PutMode::Create).await.unwrap();
    // Found as `a` knew it; the path that is not settled sees the delete at once.
    assert_eq!(get(&a, "objects/aa/1").await.unwrap(), "one");
    assert_eq!(kind(&get(&a, "plain").await.unwrap_err()), "NotFound");
    // That read caught up: now the settled path's delete is seen too, and a new one is found.
    assert_eq!(kind(&get(&a, "objects/aa/1").await.unwrap_err()), "NotFound");
    assert_eq!(get(&a, "objects/aa/2").await.unwrap(), "two");
    // A conditional read always catches up.
    b.delete(&p("objects/aa/2")).await.unwrap();
    let options = GetOptions { if_none_match: Some("*none*".into()), ..GetOptions::default() };
    assert_eq!(kind(&get_opts(&a, "objects/aa/2", options).await.unwrap_err()), "NotFound");
    // Without the setting (the default), the delete is seen at once.
    put(&b, "objects/aa/3", "three", PutMode::Create).await.unwrap();
    let c = LogStore::open(dir.path()).unwrap();
    assert_eq!(get(&c, "objects/aa/3").await.unwrap(), "three");
    b.delete(&p("objects/aa/3")).await.unwrap();
    assert_eq!(kind(&get(&c, "objects/aa/3").await.unwrap_err()), "NotFound");
}

/// The segment files, ascending.
/// The segment files (not their index files).
fn segments(root: &FsPath) -> Vec<PathBuf> {
    let mut files: Vec<_> = log_files(root).into_iter().filter(|f| f.extension().is_none()).collect();
    files.sort();
    files
}

/// Every file in `log/`: segments, their index files, leftovers.
fn log_files(root: &FsPath) -> Vec<PathBuf> {
    let mut files: Vec<_> = fs::read_dir(root.join("log")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

fn copy_folder(from: &FsPath, to: &FsPath) {
    fs::create_dir_all(to.join("log")).unwrap();
    fs::copy(from.join("log.lock"), to.join("log.lock")).unwrap();
    for file in log_files(from) {
        fs::copy(&file, to.join("log").join(file.file_name().unwrap())).unwrap();
    }
}

fn len(path: &FsPath) -> u64 {
    fs::metadata(path).unwrap().len()
}

/// Where a segment's records end: before the zeros a writer fills the last segment with ahead
/// of its records (or the file's end, within a torn last record).
fn used(path: &FsPath) -> u64 {
    let data = fs::read(path).unwrap();
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
    let mut at = 16;
    while at + 8 <= data.len() && u32_at(at) != 0 && u32_at(at + 4) == !u32_at(at) {
        at += u32_at(at) as usize;
    }
    at.min(data.len()) as u64
}

/// A folder with a few records, whose last record overwrites `head`; returns the state
/// before that record, the last segment, and where the last record starts and ends.
async fn with_last_record(root: &FsPath) -> (BTreeMap<String, String>, PathBuf, u64, u64) {
    let log = open_local_log(root).unwrap();
    put(&log, "objects/aa/1", "one", PutMode::Create).await.unwrap();
    let e = put(&log, "head", "first", PutMode::Create).await.unwrap();
    put(&log, "objects/aa/2", "two", PutMode::Create).await.unwrap();
    let before = snapshot(&log).await;
    let last = segments(root).pop().unwrap();
    let start = used(&last);
    put(&log, "head", "second", update(e)).await.unwrap();
    (before, last.clone(), start, used(&last))
}

#[tokio::test]
async fn torn_tail_at_every_length() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let (before, last, start, end) = with_last_record(&root).await;
    let new_record = 21 + "objects/zz/9".len() as u64 + "new".len() as u64 + 16;
    for cut in start..end {
        let copy = tempfile::tempdir().unwrap();
        copy_folder(&root, copy.path());
        let torn = copy.path().join("log").join(last.file_name().unwrap());
        fs::OpenOptions::new().write(true).open(&torn).unwrap().set_len(cut).unwrap();

        let fresh = open_local_log(copy.path()).unwrap();
        assert_eq!(snapshot(&fresh).await, before, "cut at {cut}");
        assert_eq!(len(&torn), cut, "a reader does not truncate");
        put(&fresh, "objects/zz/9", "new", PutMode::Create).await.unwrap();
        assert_eq!(used(&torn), start + new_record, "the writer truncated the torn record, cut at {cut}");
        let mut after = before.clone();
        after.insert("objects/zz/9".into(), "new".into());
        assert_eq!(snapshot(&open_local_log(copy.path()).unwrap()).await, after, "cut at {cut}");
    }
}

#[tokio::test]
async fn a_damaged_last_record_is_torn() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let (before, last, start, end) = with_last_record(&root).await;
    for at in start..end {
        let copy = tempfile::tempdir().unwrap();
        copy_folder(&root, copy.path());
        let file = copy.path().join("log").join(last.file_name().unwrap());
        flip(&file, at);
        let fresh = open_local_log(copy.path()).unwrap();
        assert_eq!(snapshot(&fresh).await, before, "flipped byte {at}");
        put(&fresh, "head", "third", PutMode::Overwrite).await.unwrap();
        assert_eq!(get(&open_local_log(copy.path()).unwrap(), "head").await.unwrap(), "third");
    }
    // So is a zero-filled end (a power loss after the file grew).
    let copy = tempfile::tempdir().unwrap();
    copy_folder(&root, copy.path());
    let file = copy.path().join("log").join(last.file_name().unwrap());
    let f = fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(start).unwrap();
    f.set_len(start + 4096).unwrap();
    assert_eq!(snapshot(&open_local_log(copy.path()).unwrap()).await, before);
}

fn flip(file: &FsPath, at: u64) {
    let mut bytes = fs::read(file).unwrap();
    bytes[at as usize] ^= 0x20;
    fs::write(file, bytes).unwrap();
}

/// Damage followed by more records is not a torn write: refused, naming the file and offset,
/// wherever the damage is; never served (whoever can write the folder would choose the bytes)
/// and never dropped (with everything after it).
#[tokio::test]
async fn a_damaged_middle_record_is_an_error_never_data() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let log = open_local_log(&root).unwrap();
    put(&log, "objects/aa/1", "one", PutMode::Create).await.unwrap();
    let first = segments(&root)[0].clone();
    let middle = used(&first);
    put(&log, "objects/aa/2", "two", PutMode::Create).await.unwrap();
    let after_middle = used(&first);
    put(&log, "head", "h", PutMode::Create).await.unwrap();
    for at in middle..after_middle {
        let copy = tempfile::tempdir().unwrap();
        copy_folder(&root, copy.path());
        let file = copy.path().join("log/0000000000000001");
        flip(&file, at);
        let reason = if at - middle < 8 { "damaged record length" } else { "a damaged record followed by more data" };
        let e = open_local_log(copy.path()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Generic LogStore error: {}: corrupt record at offset {middle}: {reason}", file.display()),
            "byte {at}"
        );
        assert!(matches!(e, object_store::Error::Generic { store: "LogStore", .. }));
    }
    // An instance that indexed the record before the damage verifies it again when it reads it.
    flip(&first, middle + 34);
    let e = get(&log, "objects/aa/2").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "Generic LogStore error: {}: corrupt record at offset {middle}: a damaged record (changed since it was read)",
            first.display()
        )
    );
    assert_eq!(get(&log, "objects/aa/1").await.unwrap(), "one");
}

#[tokio::test]
async fn a_bad_segment_header_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap();
    put(&log, "head", "h", PutMode::Create).await.unwrap();
    let file = segments(dir.path())[0].clone();
    flip(&file, 0);
    let e = open_local_log(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("Generic LogStore error: {}: not a memfs log segment (bad magic)", file.display())
    );
    fs::write(&file, b"memfslog\x02\0\0\0").unwrap();
    let e = open_local_log(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("Generic LogStore error: {}: shorter (12 bytes) than a segment header (16 bytes)", file.display()),
    );
}

/// A segment of another log format version (1: BLAKE3 checksums, object paths spelled out, as
/// pre-release builds wrote) is refused, not read.
#[tokio::test]
async fn a_segment_of_another_version_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap();
    put(&log, "head", "h", PutMode::Create).await.unwrap();
    let file = segments(dir.path())[0].clone();
    for version in [1u8, 3] {
        let mut bytes = fs::read(&file).unwrap();
        bytes[8] = version;
        fs::write(&file, &bytes).unwrap();
        let e = open_local_log(dir.path()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "Generic LogStore error: {}: unsupported log format version {version} (this build reads 2)",
                file.display()
            )
        );
    }
}

/// Only the end of the last segment can be torn by a crash: a writer completes its segment
/// before it starts the next. And segments are numbered without gaps.
#[tokio::test]
async fn damage_before_the_last_segment_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(100);
    for i in 0..3 {
        put(&log, &format!("objects/aa/{i}"), "0123456789012345678901234567890123456789", PutMode::Create)
            .await
            .unwrap();
    }
    let files = segments(dir.path());
    assert_eq!(files.len(), 3);
    let first = &files[0];
    let end = len(first);
    fs::OpenOptions::new().write(true).open(first).unwrap().set_len(end - 1).unwrap();
    let e = open_local_log(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "Generic LogStore error: {}: incomplete record at offset 16, but a later segment exists",
            first.display()
        ),
    );
    fs::remove_file(&files[1]).unwrap();
    let e = open_local_log(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("Generic LogStore error: {}: segment 0000000000000002 is missing", dir.path().join("log").display()),
    );
}

#[tokio::test]
async fn segments_roll_over() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(300);
    let reader = open_local_log(dir.path()).unwrap();
    let mut expected = BTreeMap::new();
    let mut e_tags = BTreeMap::new();
    for i in 0..60 {
        let (path, data) = (format!("objects/{:02x}/{i}", i % 7), format!("data {i} ").repeat(i % 5 + 1));
        let e = put(&log, &path, &data, PutMode::Overwrite).await.unwrap();
        e_tags.insert(path.clone(), e);
        expected.insert(path, data);
        if i % 10 == 0 {
            let e = put(&log, "head", &format!("head {i}"), PutMode::Overwrite).await.unwrap();
            e_tags.insert("head".into(), e);
            expected.insert("head".into(), format!("head {i}"));
        }
        // A reader that follows along crosses the segment boundaries with the writer.
        assert_eq!(
            get(&reader, &format!("objects/{:02x}/{i}", i % 7)).await.unwrap(),
            expected[&format!("objects/{:02x}/{i}", i % 7)]
        );
    }
    let files = segments(dir.path());
    assert!(files.len() >= 10, "{} segments", files.len());
    for file in &files[..files.len() - 1] {
        assert!(len(file) <= 300, "{}: {} bytes", file.display(), len(file));
    }
    // A record larger than the limit gets a segment of its own.
    let big = "x".repeat(1000);
    put(&log, "objects/ff/big", &big, PutMode::Create).await.unwrap();
    expected.insert("objects/ff/big".into(), big);
    put(&log, "objects/ff/small", "s", PutMode::Create).await.unwrap();
    expected.insert("objects/ff/small".into(), "s".into());
    assert_eq!(segments(dir.path()).len(), files.len() + 2);

    let fresh = open_local_log(dir.path()).unwrap();
    assert_eq!(snapshot(&fresh).await, expected);
    assert_eq!(snapshot(&reader).await, expected);
    for (path, e) in e_tags.into_iter().filter(|(path, _)| !path.starts_with("objects/ff")) {
        assert_eq!(fresh.head(&p(&path)).await.unwrap().e_tag, e, "{path}");
    }
}

#[tokio::test]
async fn a_batch_puts_only_what_is_new_in_one_append() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(400);
    let reader = open_local_log(dir.path()).unwrap();
    put(&log, "objects/aa/1", "stored before", PutMode::Create).await.unwrap();
    let batch = |items: &[(&str, &str)]| {
        items.iter().map(|(path, data)| (p(path), bytes::Bytes::from(data.to_string()))).collect::<Vec<_>>()
    };
    let segment = segments(dir.path()).pop().unwrap();
    let before = used(&segment);
    // A path already stored is left as it is, a path given twice is put once.
    log.put_new(batch(&[
        ("objects/aa/2", "two"),
        ("objects/aa/1", "other"),
        ("objects/aa/3", "three"),
        ("objects/aa/2", "again"),
    ]))
    .await
    .unwrap();
    let mut expected = BTreeMap::from([
        ("objects/aa/1".to_owned(), "stored before".to_owned()),
        ("objects/aa/2".to_owned(), "two".to_owned()),
        ("objects/aa/3".to_owned(), "three".to_owned()),
    ]);
    assert_eq!(snapshot(&reader).await, expected);
    // Exactly the two new records: as many bytes as two single puts of them add elsewhere.
    let other = tempfile::tempdir().unwrap();
    let single = open_local_log(other.path()).unwrap();
    put(&single, "objects/aa/1", "stored before", PutMode::Create).await.unwrap();
    let other_segment = segments(other.path()).pop().unwrap();
    let other_before = used(&other_segment);
    put(&single, "objects/aa/2", "two", PutMode::Create).await.unwrap();
    put(&single, "objects/aa/3", "three", PutMode::Create).await.unwrap();
    assert_eq!(used(&segment) - before, used(&other_segment) - other_before);

    // A batch that does not fit the segment's rest goes record by record, so every segment but
    // the last keeps to the limit.
    let many: Vec<(String, String)> =
        (0..12).map(|i| (format!("objects/bb/{i:02}"), format!("data {i} ").repeat(4))).collect();
    let refs: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    log.put_new(batch(&refs)).await.unwrap();
    expected.extend(many.iter().cloned());
    let files = segments(dir.path());
    assert!(files.len() >= 3, "{} segments", files.len());
    for file in &files[..files.len() - 1] {
        assert!(len(file) <= 400, "{}: {} bytes", file.display(), len(file));
    }
    assert_eq!(snapshot(&reader).await, expected);
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected);
    // The records of one batch are ordinary records: a torn tail takes back the last ones only.
    let last = segments(dir.path()).pop().unwrap();
    let tail = used(&last);
    log.put_new(batch(&[("objects/cc/1", "first"), ("objects/cc/2", "second")])).await.unwrap();
    fs::OpenOptions::new().write(true).open(&last).unwrap().set_len(used(&last) - 3).unwrap();
    assert!(used(&last) > tail);
    expected.insert("objects/cc/1".into(), "first".into());
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected);
}

#[tokio::test]
async fn compaction_keeps_content_and_e_tags() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(400);
    // Opened and caught up before the compaction; holds the old segments open.
    let other = open_local_log(dir.path()).unwrap();
    let mut head = put(&log, "head", "h0", PutMode::Create).await.unwrap();
    for i in 0..40 {
        put(&log, &format!("objects/{:02x}/{i}", i % 5), &format!("data {i}"), PutMode::Overwrite).await.unwrap();
        if i % 3 == 0 {
            log.delete(&p(&format!("objects/{:02x}/{}", i % 5, i / 2))).await.unwrap();
        }
        if i % 4 == 0 {
            head = put(&log, "head", &format!("h{i}"), update(head)).await.unwrap();
        }
    }
    let before = snapshot(&log).await;
    assert_eq!(snapshot(&other).await, before);
    let old = segments(dir.path());
    let old_bytes: u64 = old.iter().map(|f| len(f)).sum();
    let stored = log.stored_bytes().await.unwrap();

    let report = log.compact().await.unwrap();
    assert_eq!(report.segments_removed, old.len() as u64);
    assert_eq!(report.bytes_before, old_bytes);
    assert_eq!(stored.total, report.bytes_before);
    assert!(report.bytes_after < report.bytes_before, "{report:?}");
    let new = segments(dir.path());
    let next = format!("{:016x}", old.len() + 1);
    assert_eq!(new, [dir.path().join("log").join(&next)]);
    assert_eq!(report.bytes_after, len(&new[0]));
    // Live records plus the header, plus an origin (16 bytes) per path.
    assert_eq!(report.bytes_after, stored.live + 16 + 16 * before.len() as u64);

    assert_eq!(snapshot(&log).await, before);
    assert_eq!(snapshot(&other).await, before);
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, before);
    // The e_tag read before the compaction still names the current head, in every instance.
    assert_eq!(other.head(&p("head")).await.unwrap().e_tag, head);
    put(&other, "head", "after", update(head)).await.unwrap();
    put(&other, "objects/ee/new", "new", PutMode::Create).await.unwrap();
    assert_eq!(get(&log, "head").await.unwrap(), "after");
    assert_eq!(get(&log, "objects/ee/new").await.unwrap(), "new");
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, snapshot(&other).await);

    // Compacting again supersedes the compacted segment too; an empty folder has nothing to do.
    let count = segments(dir.path()).len() as u64;
    assert_eq!(log.compact().await.unwrap().segments_removed, count);
    assert_eq!(snapshot(&other).await, snapshot(&log).await);
    let empty = tempfile::tempdir().unwrap();
    let report = open_local_log(empty.path()).unwrap().compact().await.unwrap();
    assert_eq!((report.segments_removed, report.bytes_before, report.bytes_after), (0, 0, 0));
}

/// A compaction that crashed after its segment appeared but before removing the old ones:
/// the compacted segment supersedes them, and leftovers are harmless.
#[tokio::test]
async fn leftovers_of_a_crashed_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(200);
    for i in 0..10 {
        put(&log, &format!("objects/aa/{i}"), "some data here", PutMode::Create).await.unwrap();
    }
    let saved = tempfile::tempdir().unwrap();
    copy_folder(dir.path(), saved.path());
    let expected = snapshot(&log).await;
    log.compact().await.unwrap();
    // Put the old segments back next to the compacted one, and a half-written segment.
    for file in segments(saved.path()) {
        fs::copy(&file, dir.path().join("log").join(file.file_name().unwrap())).unwrap();
    }
    fs::write(dir.path().join("log/00000000000000ff.tmp"), b"junk").unwrap();
    let fresh = open_local_log(dir.path()).unwrap();
    assert_eq!(snapshot(&fresh).await, expected);
    put(&fresh, "head", "h", PutMode::Create).await.unwrap();
    assert_eq!(get(&log, "head").await.unwrap(), "h");
    fresh.compact().await.unwrap();
    assert_eq!(segments(dir.path()).len(), 1);
    assert!(!dir.path().join("log/00000000000000ff.tmp").exists());
}

/// Eight tasks, each with its own instance (a process of its own), increment one counter by
/// compare-and-swap while a ninth compacts again and again; no increment is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_lost_updates() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    put(&open_local_log(&root).unwrap(), "counter", "0", PutMode::Create).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let root = root.clone();
            tokio::spawn(async move {
                let store = open_local_log(&root).unwrap().with_segment_limit(2048);
                let (mut won, mut lost) = (0u64, 0u64);
                for i in 0..40 {
                    let r = store.get(&p("counter")).await.unwrap();
                    let e_tag = r.meta.e_tag.clone();
                    let n: u64 = String::from_utf8(r.bytes().await.unwrap().to_vec()).unwrap().parse().unwrap();
                    put(&store, &format!("objects/{t}/{i}"), "lazy", PutMode::Create).await.unwrap();
                    match put(&store, "counter", &(n + 1).to_string(), update(e_tag)).await {
                        Ok(_) => won += 1,
                        Err(object_store::Error::Precondition { .. }) => lost += 1,
                        Err(e) => panic!("task {t}: {e}"),
                    }
                }
                (won, lost)
            })
        })
        .collect();
    let compactor = {
        let root = root.clone();
        tokio::spawn(async move {
            let store = open_local_log(&root).unwrap();
            for _ in 0..30 {
                store.compact().await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    let mut won = 0;
    for task in tasks {
        let (w, l) = task.await.unwrap();
        assert_eq!(w + l, 40);
        won += w;
    }
    compactor.await.unwrap();
    assert!(won > 0);
    let fresh = open_local_log(&root).unwrap();
    assert_eq!(get(&fresh, "counter").await.unwrap(), won.to_string());
    assert_eq!(fresh.list(Some(&p("objects"))).try_collect::<Vec<_>>().await.unwrap().len(), 8 * 40);
}

/// A link planted at the temporary name of the next segment (compaction) or of the segment a
/// roll-over starts: removed, never written through; the file it names is unchanged.
#[tokio::test]
async fn a_link_at_a_temporary_name_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("authorized_keys");
    fs::write(&target, b"ssh-ed25519 AAAA victim\n").unwrap();
    let log = open_local_log(dir.path().join("store")).unwrap().with_segment_limit(200);
    let tmp = |n: usize| dir.path().join(format!("store/log/{n:016x}.tmp"));
    put(&log, "objects/aa/1", "some data here", PutMode::Create).await.unwrap();
    // Roll-over: segment 2 is started next.
    std::os::unix::fs::symlink(&target, tmp(2)).unwrap();
    for i in 2..12 {
        put(&log, &format!("objects/aa/{i}"), "some data here", PutMode::Create).await.unwrap();
    }
    let n = segments(&dir.path().join("store")).len();
    assert!(n > 2, "{n} segments");
    // Compaction: segment n + 1.
    std::os::unix::fs::symlink(&target, tmp(n + 1)).unwrap();
    let expected = snapshot(&log).await;
    log.compact().await.unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"ssh-ed25519 AAAA victim\n");
    assert_eq!(snapshot(&open_local_log(dir.path().join("store")).unwrap()).await, expected);
    assert!(fs::symlink_metadata(tmp(2)).is_err() && fs::symlink_metadata(tmp(n + 1)).is_err());
}

/// Links where `log.lock`, a segment, `log/` or the store folder belong are refused, by name.
#[tokio::test]
async fn links_in_the_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("file");
    fs::write(&target, b"keep").unwrap();
    let root = dir.path().join("store");
    let log = open_local_log(&root).unwrap();
    put(&log, "head", "h", PutMode::Create).await.unwrap();
    drop(log);
    let refused = |path: &FsPath, what: &str| {
        let e = open_local_log(&root).unwrap_err();
        assert_eq!(e.to_string(), format!("Generic LogStore error: {} is a symbolic link, not {what}", path.display()));
    };
    let swap = |path: &FsPath, to: &FsPath| {
        let aside = path.with_extension("aside");
        fs::rename(path, &aside).unwrap();
        std::os::unix::fs::symlink(to, path).unwrap();
        aside
    };
    for name in ["log.lock", "log/0000000000000001"] {
        let path = root.join(name);
        let aside = swap(&path, &target);
        refused(&path, "a regular file");
        fs::remove_file(&path).unwrap();
        fs::rename(aside, &path).unwrap();
    }
    assert_eq!(fs::read(&target).unwrap(), b"keep");
    let aside = swap(&root.join("log"), outside.path());
    refused(&root.join("log"), "a folder");
    fs::remove_file(root.join("log")).unwrap();
    fs::rename(aside, root.join("log")).unwrap();
    let real = dir.path().join("real");
    fs::rename(&root, &real).unwrap();
    std::os::unix::fs::symlink(&real, &root).unwrap();
    refused(&root, "a folder");
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
}

/// A folder that group or others may write, or that another user owns, is refused before
/// anything is written in it.
#[tokio::test]
async fn folders_others_may_write_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    drop(open_local_log(&root).unwrap());
    for (folder, mode, writers) in
        [(root.clone(), 0o777, "group and others"), (root.clone(), 0o770, "group"), (root.join("log"), 0o702, "others")]
    {
        fs::set_permissions(&folder, fs::Permissions::from_mode(mode)).unwrap();
        let e = open_local_log(&root).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Generic LogStore error: {} is writable by {writers} (mode {mode:04o})", folder.display())
        );
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o700)).unwrap();
    }
    assert!(segments(&root).is_empty(), "nothing written");
    open_local_log(&root).unwrap();
}

/// Issue 18: a log whose heads are replaced again and again compacts itself once the dead
/// records reach the threshold and outweigh the live ones, so it stays within about twice
/// what it holds; every object, the head and its e_tag survive, and another instance reading
/// the folder meanwhile sees the same.
#[tokio::test]
async fn the_log_compacts_itself_when_dead_records_outweigh_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(16 << 10).with_auto_compact(Some(32 << 10));
    let other = open_local_log(dir.path()).unwrap().with_auto_compact(None);
    let body = "h".repeat(1000);
    let mut head = put(&log, "head", &body, PutMode::Create).await.unwrap();
    let mut largest = 0;
    for i in 0..2_000 {
        put(&log, &format!("objects/{:02x}/{i}", i % 7), &format!("object {i}"), PutMode::Overwrite).await.unwrap();
        head = put(&log, "head", &format!("{body}{i}"), update(head)).await.unwrap();
        largest = largest.max(log.stored_bytes().await.unwrap().total);
    }
    let stored = log.stored_bytes().await.unwrap();
    // 2,000 heads of 1 KB were written: without compaction the log would hold over 2 MB.
    // Compaction starts once 32 KiB are dead and at least the live bytes, looked at every 64
    // heads (another 64 KB or so of dead records).
    assert!(largest < 2 * stored.live + (128 << 10), "the log reached {largest} bytes: {stored:?}");
    assert!(largest < 1 << 20, "the log reached {largest} bytes");
    let expected = snapshot(&log).await;
    assert_eq!(expected.len(), 2_001);
    assert_eq!(snapshot(&other).await, expected, "another instance reads the same");
    let fresh = open_local_log(dir.path()).unwrap();
    assert_eq!(snapshot(&fresh).await, expected, "a new instance reads the same");
    // The head's e_tag, from before the last compaction, still updates it.
    put(&fresh, "head", "after", update(head)).await.unwrap();
}

/// A writer fills the last segment with zeros ahead of its records, so that a commit's sync
/// does not also write the file's size; readers stop at the zeros, a sealed segment ends with
/// its last record, and debris after the zeros (a crash's unsynced pages) is taken back by the
/// next writer, never read.
#[tokio::test]
async fn the_last_segment_is_filled_with_zeros_ahead_of_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(64 << 10);
    let reader = open_local_log(dir.path()).unwrap();
    put(&log, "objects/aa/1", "one", PutMode::Create).await.unwrap();
    put(&log, "head", "h1", PutMode::Overwrite).await.unwrap();
    let last = segments(dir.path()).pop().unwrap();
    // Filled up to the segment limit, here less than the usual megabyte ahead.
    assert_eq!(len(&last), 64 << 10);
    let records = used(&last);
    assert!(records < 200, "{records}");
    assert!(fs::read(&last).unwrap()[records as usize..].iter().all(|&b| b == 0));
    let expected =
        BTreeMap::from([("head".to_owned(), "h1".to_owned()), ("objects/aa/1".to_owned(), "one".to_owned())]);
    assert_eq!(snapshot(&reader).await, expected);
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected);

    // Data after the zeros (a crash's pages written back out of order, damage, tampering) is
    // refused like a damaged record followed by more data: never skipped, never truncated.
    let f = fs::OpenOptions::new().write(true).open(&last).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"debris of a crash", 40_000).unwrap();
    let refused = format!(
        "Generic LogStore error: {}: corrupt record at offset {records}: zeros followed by more data",
        last.display()
    );
    assert_eq!(open_local_log(dir.path()).unwrap_err().to_string(), refused);
    assert_eq!(len(&last), 64 << 10, "nothing truncated");
    std::os::unix::fs::FileExt::write_all_at(&f, &[0; 17], 40_000).unwrap();
    let writer = open_local_log(dir.path()).unwrap();
    put(&writer, "head", "h2", PutMode::Overwrite).await.unwrap();
    let mut expected = expected;
    expected.insert("head".into(), "h2".into());
    assert_eq!(snapshot(&reader).await, expected);
    // The first writer, which filled the segment, goes on.
    put(&log, "objects/aa/2", "two", PutMode::Create).await.unwrap();
    expected.insert("objects/aa/2".into(), "two".into());
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected);

    // A full segment is sealed at its last record; the next one is filled ahead in turn.
    let big = "x".repeat(40_000);
    put(&log, "objects/bb/1", &big, PutMode::Create).await.unwrap();
    put(&log, "objects/bb/2", &big, PutMode::Create).await.unwrap();
    let files = segments(dir.path());
    assert_eq!(files.len(), 2);
    assert_eq!(len(&files[0]), used(&files[0]), "a sealed segment ends with its last record");
    expected.insert("objects/bb/1".into(), big.clone());
    expected.insert("objects/bb/2".into(), big.clone());
    assert_eq!(snapshot(&reader).await, expected);
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected);

    // Zeros and then data in a sealed segment are no crash's doing: an error naming them.
    let first = files[0].clone();
    let end = len(&first);
    let f = fs::OpenOptions::new().write(true).open(&first).unwrap();
    f.set_len(end + 100).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"more", end + 50).unwrap();
    fs::remove_file(first.with_extension("index")).unwrap();
    let e = open_local_log(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "Generic LogStore error: {}: corrupt record at offset {end}: zeros followed by more data",
            first.display()
        )
    );
}
