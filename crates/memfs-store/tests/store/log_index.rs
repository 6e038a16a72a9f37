//! `LogStore`'s index files (`log/<n>.index`, one per sealed segment): an open reads their
//! headers and the last segment, not the sealed segments; an index that is damaged, missing,
//! stale or another segment's is read around, from the segment, and written again by the next
//! writer; a store from before index files gets them.
//!
//! Bytes read are measured with `/proc/self/io` (`rchar`), which counts the whole process:
//! nextest runs each test in its own process.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path as FsPath, PathBuf};

use futures::TryStreamExt;
use memfs_log::LogStore;
use memfs_store::open_local_log;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload, UpdateVersion};

fn p(s: &str) -> Path {
    Path::from(s)
}

async fn snapshot(store: &dyn ObjectStore) -> BTreeMap<String, Vec<u8>> {
    let metas: Vec<_> = store.list(None).try_collect().await.unwrap();
    let mut out = BTreeMap::new();
    for meta in metas {
        let bytes = store.get(&meta.location).await.unwrap().bytes().await.unwrap();
        out.insert(meta.location.to_string(), bytes.to_vec());
    }
    out
}

/// Bytes this process has read through system calls so far.
fn bytes_read() -> u64 {
    let io = fs::read_to_string("/proc/self/io").unwrap();
    io.lines().find_map(|l| l.strip_prefix("rchar: ")).unwrap().trim().parse().unwrap()
}

fn files(root: &FsPath, suffix: &str) -> Vec<PathBuf> {
    let mut out: Vec<_> = fs::read_dir(root.join("log"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| {
            let name = f.file_name().unwrap().to_str().unwrap();
            name.len() == 16 + suffix.len() && name.ends_with(suffix)
        })
        .collect();
    out.sort();
    out
}

fn segments(root: &FsPath) -> Vec<PathBuf> {
    files(root, "")
}

fn indexes(root: &FsPath) -> Vec<PathBuf> {
    files(root, ".index")
}

/// An object path as the encrypted store names them, for object `i`.
fn object(i: u32) -> String {
    let id = blake3::hash(&i.to_le_bytes()).to_hex().to_string();
    format!("objects/{}/{id}", &id[..2])
}

/// Writes `n` objects of about 1 KB, a head after every fourth, deletes every tenth object,
/// and puts one plain-named path, into segments of `limit` bytes.
async fn fill(root: &FsPath, n: u32, limit: u64) -> BTreeMap<String, Vec<u8>> {
    let log = open_local_log(root).unwrap().with_segment_limit(limit).with_auto_compact(None);
    log.put(&p("memfs.keys"), PutPayload::from_static(b"keys")).await.unwrap();
    let mut head = None;
    for i in 0..n {
        let data = format!("{i:>1000}");
        log.put_opts(&p(&object(i)), PutPayload::from(data), PutMode::Create.into()).await.unwrap();
        if i % 4 == 3 {
            let mode = match head.take() {
                None => PutMode::Create,
                Some(e_tag) => PutMode::Update(UpdateVersion { e_tag: Some(e_tag), version: None }),
            };
            let r = log.put_opts(&p("head"), PutPayload::from(format!("head {i}")), mode.into()).await.unwrap();
            head = r.e_tag;
        }
        if i % 10 == 9 {
            log.delete(&p(&object(i - 5))).await.unwrap();
        }
    }
    snapshot(&log).await
}

#[tokio::test]
async fn an_open_reads_index_headers_and_the_last_segment_only() {
    let dir = tempfile::tempdir().unwrap();
    let expected = fill(dir.path(), 2_000, 64 << 10).await;
    let sealed = segments(dir.path()).len() - 1;
    assert!(sealed >= 30, "{sealed} sealed segments");
    assert_eq!(indexes(dir.path()).len(), sealed, "every sealed segment has its index");
    let log_bytes: u64 = segments(dir.path()).iter().map(|f| fs::metadata(f).unwrap().len()).sum();

    // Open, and read what a command reads first: the keys (in segment 1), the head (near the
    // end) and an object from the middle.
    let before = bytes_read();
    let fresh = open_local_log(dir.path()).unwrap();
    for path in ["memfs.keys", "head", &object(1_000)] {
        let got = fresh.get(&p(path)).await.unwrap().bytes().await.unwrap();
        assert_eq!(got.as_ref(), expected[path], "{path}");
    }
    let read = bytes_read() - before;
    // At most the last segment (64 KiB), a header per index (128 bytes) and the last 16
    // bytes of each sealed segment, and for the 3 lookups a bloom filter, directory and block
    // each (under 8 KiB here), with records.
    assert!(read < (64 << 10) + sealed as u64 * 200 + 3 * (8 << 10), "read {read} of {log_bytes} bytes");

    // Without index files, the same costs the whole log: the measure can tell them apart.
    for f in indexes(dir.path()) {
        fs::remove_file(f).unwrap();
    }
    let before = bytes_read();
    let fresh = open_local_log(dir.path()).unwrap();
    assert_eq!(fresh.get(&p("head")).await.unwrap().bytes().await.unwrap().as_ref(), expected["head"]);
    let read = bytes_read() - before;
    assert!(read >= log_bytes - (64 << 10), "read {read} of {log_bytes} bytes");
    assert_eq!(snapshot(&fresh).await, expected);
}

/// A store from before index files: read whole, and its first writer indexes it.
#[tokio::test]
async fn a_store_without_index_files_gets_them_from_its_first_writer() {
    let dir = tempfile::tempdir().unwrap();
    let expected = fill(dir.path(), 300, 16 << 10).await;
    let originals: Vec<(PathBuf, Vec<u8>)> =
        indexes(dir.path()).into_iter().map(|f| (f.clone(), fs::read(f).unwrap())).collect();
    assert!(originals.len() >= 10);
    for (f, _) in &originals {
        fs::remove_file(f).unwrap();
    }
    let reader = open_local_log(dir.path()).unwrap();
    assert_eq!(snapshot(&reader).await, expected);
    assert!(indexes(dir.path()).is_empty(), "a reader writes nothing");
    let writer = open_local_log(dir.path()).unwrap();
    writer.put(&p("other"), PutPayload::from_static(b"x")).await.unwrap();
    // The same index files as the writers that sealed the segments wrote.
    for (f, bytes) in &originals {
        assert_eq!(&fs::read(f).unwrap(), bytes, "{}", f.display());
    }
}

/// Each way an index can be wrong: its answers are never used, the segment's records are; and
/// the next writer writes it again.
#[tokio::test]
async fn a_bad_index_is_read_around_and_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let expected = fill(dir.path(), 300, 16 << 10).await;
    let idx = indexes(dir.path());
    let good: Vec<Vec<u8>> = idx.iter().map(|f| fs::read(f).unwrap()).collect();
    type Damage<'a> = (&'a str, Box<dyn Fn(usize) + 'a>);
    let damage: Vec<Damage<'_>> = vec![
        ("a flipped bit in a block", Box::new(|i| flip(&idx[i], 200))),
        ("a flipped bit in the header", Box::new(|i| flip(&idx[i], 20))),
        (
            "a flipped bit at the end (the directory)",
            Box::new(|i| flip(&idx[i], fs::metadata(&idx[i]).unwrap().len() - 3)),
        ),
        (
            "cut short",
            Box::new(|i| {
                let half = fs::metadata(&idx[i]).unwrap().len() / 2;
                fs::OpenOptions::new().write(true).open(&idx[i]).unwrap().set_len(half).unwrap()
            }),
        ),
        ("another segment's", Box::new(|i| fs::copy(&idx[i + 1], &idx[i]).map(|_| ()).unwrap())),
        ("an empty file", Box::new(|i| fs::write(&idx[i], b"").unwrap())),
        ("another version (2), intact", Box::new(|i| set_index_version(&idx[i], 2))),
    ];
    for (what, damage) in &damage {
        for i in [0, 3, 7] {
            damage(i);
        }
        let fresh = open_local_log(dir.path()).unwrap();
        assert_eq!(snapshot(&fresh).await, expected, "{what}");
        fresh.put(&p("probe"), PutPayload::from_static(b"p")).await.unwrap();
        fresh.delete(&p("probe")).await.unwrap();
        for i in [0, 3, 7] {
            assert_eq!(fs::read(&idx[i]).unwrap(), good[i], "{what}: written again");
        }
        assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected, "{what}");
    }
}

/// A segment that changed after it was indexed (a record appended by hand, or the segment
/// replaced): the index no longer matches it and is not used.
#[tokio::test]
async fn an_index_of_a_changed_segment_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let expected = fill(dir.path(), 100, 16 << 10).await;
    let segs = segments(dir.path());
    // Segment 2 replaced by segment 3 (both sealed): segment 2's index names other bytes.
    let (two, three) = (&segs[1], &segs[2]);
    let saved = fs::read(two).unwrap();
    fs::copy(three, two).unwrap();
    let fresh = open_local_log(dir.path()).unwrap();
    let got = snapshot(&fresh).await;
    assert_ne!(got, expected, "segment 2's own records are gone");
    // Never what segment 2's index names: every object read is one whose record says so.
    for (path, data) in &got {
        if let Some(want) = expected.get(path) {
            assert_eq!(data, want, "{path}");
        }
    }
    fs::write(two, saved).unwrap();
    assert_eq!(snapshot(&open_local_log(dir.path()).unwrap()).await, expected);
}

/// Sets the version of index file `file`, and its header's checksum to match (XXH3-128, seed
/// 0, over bytes 0..112).
fn set_index_version(file: &FsPath, version: u32) {
    let mut bytes = fs::read(file).unwrap();
    bytes[8..12].copy_from_slice(&version.to_le_bytes());
    let sum = twox_hash::XxHash3_128::oneshot(&bytes[..112]).to_le_bytes();
    bytes[112..128].copy_from_slice(&sum);
    fs::write(file, bytes).unwrap();
}

fn flip(file: &FsPath, at: u64) {
    let mut bytes = fs::read(file).unwrap();
    bytes[at as usize] ^= 0x10;
    fs::write(file, bytes).unwrap();
}

/// The dead bytes an instance counts (replaced and deleted records) are the same whether it
/// read index files or every record.
async fn same_stored_bytes_without_indexes(root: &FsPath, with: &LogStore) {
    let counted = with.stored_bytes().await.unwrap();
    let copy = tempfile::tempdir().unwrap();
    fs::create_dir(copy.path().join("log")).unwrap();
    for f in segments(root) {
        fs::copy(&f, copy.path().join("log").join(f.file_name().unwrap())).unwrap();
    }
    let read_whole = open_local_log(copy.path()).unwrap().stored_bytes().await.unwrap();
    assert_eq!(counted, read_whole);
}

/// A compacted segment gets its index at once; puts appended after it are read as records,
/// and the index still answers for the part it covers.
#[tokio::test]
async fn a_compacted_segment_is_indexed_and_what_follows_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), 300, 1 << 20).await;
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(1 << 20);
    log.compact().await.unwrap();
    assert_eq!(segments(dir.path()).len(), 1);
    assert_eq!(indexes(dir.path()).len(), 1, "the compacted segment is indexed");
    same_stored_bytes_without_indexes(dir.path(), &log).await;
    // Appended to the compacted segment: replacing, deleting and adding paths it indexes.
    for i in 0..50 {
        log.put(&p(&object(i)), PutPayload::from(format!("again {i}"))).await.unwrap();
        log.delete(&p(&object(100 + i))).await.unwrap();
        log.put(&p(&object(1_000 + i)), PutPayload::from(format!("new {i}"))).await.unwrap();
    }
    assert_eq!(segments(dir.path()).len(), 1, "appended to it");
    let expected = snapshot(&log).await;
    let fresh = open_local_log(dir.path()).unwrap();
    assert_eq!(snapshot(&fresh).await, expected);
    assert_eq!(fresh.stored_bytes().await.unwrap(), log.stored_bytes().await.unwrap());
    same_stored_bytes_without_indexes(dir.path(), &fresh).await;
}

#[tokio::test]
async fn dead_bytes_are_counted_the_same_through_indexes() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), 600, 16 << 10).await;
    let log = open_local_log(dir.path()).unwrap();
    same_stored_bytes_without_indexes(dir.path(), &log).await;
}

/// An index entry of a put keeps the first 16 bytes of an object id (index version 3): ids
/// that share them, in one sealed segment and across segments, are each found as themselves,
/// and an id that shares them but was never written is not found, listed or taken as written.
#[tokio::test]
async fn ids_sharing_an_indexed_prefix_are_told_apart_by_their_records() {
    let dir = tempfile::tempdir().unwrap();
    let shared = |last: u8| {
        let mut id = [0xab; 32];
        id[31] = last;
        let id = hex::encode(id);
        format!("objects/{}/{id}", &id[..2])
    };
    {
        let log = open_local_log(dir.path()).unwrap().with_segment_limit(16 << 10).with_auto_compact(None);
        for round in 0..3u8 {
            for last in [1, 3, 5] {
                let path = shared(last + round * 16);
                log.put_opts(&p(&path), PutPayload::from(format!("{path:>1000}")), PutMode::Create.into())
                    .await
                    .unwrap();
            }
            for i in 0..40 {
                log.put(&p(&object(u32::from(round) * 100 + i)), PutPayload::from(format!("{i:>1000}"))).await.unwrap();
            }
        }
    }
    assert!(indexes(dir.path()).len() >= 3, "the shared ids are in sealed, indexed segments");
    // Which file each index is: one set aside is written again (a new file) by the next write.
    let inodes = || -> Vec<u64> { indexes(dir.path()).iter().map(|f| fs::metadata(f).unwrap().ino()).collect() };
    let before = inodes();
    let log = open_local_log(dir.path()).unwrap();
    for round in 0..3u8 {
        for last in [1, 3, 5] {
            let path = shared(last + round * 16);
            let got = log.get(&p(&path)).await.unwrap().bytes().await.unwrap();
            assert_eq!(got, format!("{path:>1000}").as_bytes(), "{path}");
            assert_eq!(log.head(&p(&path)).await.unwrap().size, 1000);
        }
        for last in [2, 4, 6] {
            let path = shared(last + round * 16);
            assert!(matches!(log.head(&p(&path)).await, Err(object_store::Error::NotFound { .. })), "{path}");
        }
    }
    let listed: Vec<String> = log
        .list(Some(&p("objects/ab")))
        .map_ok(|m| m.location.to_string())
        .try_filter(|l| futures::future::ready(l.contains("abababababababababababababababab")))
        .try_collect()
        .await
        .unwrap();
    let mut want: Vec<String> = (0..3u8).flat_map(|r| [1, 3, 5].map(|l| shared(l + r * 16))).collect();
    want.sort();
    assert_eq!(listed, want);
    // Never written, though an entry shares its prefix: a create of it is a create.
    let absent = shared(2);
    log.put_opts(&p(&absent), PutPayload::from_static(b"new"), PutMode::Create.into()).await.unwrap();
    assert_eq!(log.get(&p(&absent)).await.unwrap().bytes().await.unwrap().as_ref(), b"new");
    // A read that takes an id prefix's entry unconfirmed looks at the next entry first: no
    // read above took another id's record and set an index aside.
    assert_eq!(inodes(), before, "every index file is the one the writer wrote");
}

/// The length of segment `n` an index file covers (bytes 24..32 of its header, docs/FORMAT.md).
fn covered_len(index: &FsPath) -> u64 {
    let bytes = fs::read(index).unwrap();
    u64::from_le_bytes(bytes[24..32].try_into().unwrap())
}

/// Once the current segment's records pass half a segment, the writer indexes it so far: an
/// open reads only the records after that, the dead bytes count the same, and sealing the
/// segment later writes the index of the whole of it.
#[tokio::test]
async fn the_current_segment_is_indexed_at_half_a_segment() {
    let dir = tempfile::tempdir().unwrap();
    let limit = 1 << 20;
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(limit).with_auto_compact(None);
    let mut i = 0;
    while indexes(dir.path()).is_empty() {
        assert!(i < 2_000, "no index of the current segment after {i} puts");
        log.put(&p(&object(i)), PutPayload::from(format!("{i:>1000}"))).await.unwrap();
        if i % 3 == 0 {
            log.put(&p("head"), PutPayload::from(format!("head {i}"))).await.unwrap();
        }
        i += 1;
    }
    assert_eq!(segments(dir.path()).len(), 1, "indexed before it is full");
    let index = &indexes(dir.path())[0];
    let covered = covered_len(index);
    assert!((limit / 2..limit).contains(&covered), "covers {covered}");
    // 100 more puts after it (about 100 KB), replacing some it covers.
    for j in 0..100 {
        log.put(&p(&object(i + j)), PutPayload::from(format!("{j:>1000}"))).await.unwrap();
        log.put(&p(&object(j)), PutPayload::from(format!("again {j}"))).await.unwrap();
    }
    log.put(&p("head"), PutPayload::from_static(b"head at last")).await.unwrap();
    let expected = snapshot(&log).await;

    let before = bytes_read();
    let fresh = open_local_log(dir.path()).unwrap();
    assert_eq!(fresh.get(&p("head")).await.unwrap().bytes().await.unwrap().as_ref(), b"head at last");
    let read = bytes_read() - before;
    // The segment after what the index covers (about 200 KB of records, then the zeros a
    // writer fills ahead with, up to the segment limit here), the index's header, bloom
    // filter, directory and a block; not the 500 KB it covers.
    let len = fs::metadata(&segments(dir.path())[0]).unwrap().len();
    assert!(read < len - covered + (128 << 10), "read {read} bytes of {len}, the index covers {covered}");
    assert_eq!(snapshot(&fresh).await, expected);
    same_stored_bytes_without_indexes(dir.path(), &fresh).await;

    // On until the segment is sealed: its index is written again, whole.
    let mut k = 0;
    while segments(dir.path()).len() == 1 {
        fresh.put(&p(&object(10_000 + k)), PutPayload::from(format!("{k:>1000}"))).await.unwrap();
        k += 1;
    }
    let sealed = &segments(dir.path())[0];
    assert_eq!(covered_len(&indexes(dir.path())[0]), fs::metadata(sealed).unwrap().len());
    let expected = snapshot(&fresh).await;
    let reopened = open_local_log(dir.path()).unwrap();
    assert_eq!(snapshot(&reopened).await, expected);
    same_stored_bytes_without_indexes(dir.path(), &reopened).await;
}

/// An index of the last segment so far whose block fails its checksum is found while an open
/// reads the records after it (here by the head, which the index covers an older version of):
/// the index is set aside for the records it covers, and the records read before that, after
/// what it covers, are kept (an open that dropped them lost the object put after the index).
#[tokio::test]
async fn a_bad_index_of_the_last_segment_keeps_the_records_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_local_log(dir.path()).unwrap().with_segment_limit(8 << 10).with_auto_compact(None);
    let mut i = 0;
    // Objects are appended without a sync; the head's put syncs them, and may index.
    while indexes(dir.path()).is_empty() {
        assert!(i < 16, "no index of the current segment after {i} puts");
        log.put(&p(&object(i)), PutPayload::from(format!("{i:>500}"))).await.unwrap();
        log.put(&p("head"), PutPayload::from(format!("head {i}"))).await.unwrap();
        i += 1;
    }
    log.put(&p(&object(100)), PutPayload::from_static(b"after the index")).await.unwrap();
    log.put(&p("head"), PutPayload::from_static(b"head at last")).await.unwrap();
    assert_eq!((segments(dir.path()).len(), indexes(dir.path()).len()), (1, 1));
    let expected = snapshot(&log).await;
    // One block here, right after the 128-byte header; the bloom filter and directory after
    // the blocks stay intact, so the block is read, and refused, only for a path it may hold.
    flip(&indexes(dir.path())[0], 130);
    let fresh = open_local_log(dir.path()).unwrap();
    let got = fresh.get(&p(&object(100))).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), b"after the index");
    assert_eq!(fresh.get(&p("head")).await.unwrap().bytes().await.unwrap().as_ref(), b"head at last");
    assert_eq!(snapshot(&fresh).await, expected);
}
