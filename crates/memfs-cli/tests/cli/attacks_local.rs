//! Issue 14, V2, end to end: an attacker who can write a local store folder (a shared, synced
//! or network folder) plants links where memfs writes (`log/<n>.tmp` before a compaction or a
//! segment roll-over, `log.lock`, the cache folder), opens the folder to others, or changes a
//! record in the middle of the log. The victim runs the binary; nothing is written through a
//! link, and every refusal is the exact message.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{self, all_segments, append_put, assert_text, log_entries, log_segments, text, u32_at};

const PASSPHRASE: &str = "attacks test passphrase";
/// What the attacker points links at: a stand-in for `~/.ssh/authorized_keys`.
const KEYS: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVictimsOwnKey victim@host\n";
const NOT_PLAIN: &str = "; memfs never follows a link in a store folder, nor uses anything there but folders and \
     regular files: if you did not put it there, someone who can write the folder did; remove it (or give the \
     store folder's real path)\n";

/// The victim's store in a temporary home, and a folder outside it with the file to protect.
struct Victim(support::Store);

impl std::ops::Deref for Victim {
    type Target = support::Store;
    fn deref(&self) -> &support::Store {
        &self.0
    }
}

impl Victim {
    fn new() -> Self {
        let v = Victim(support::Store::new(PASSPHRASE));
        std::fs::create_dir(v.outside()).expect("create a folder");
        std::fs::write(v.keys(), KEYS).expect("write the keys");
        v.exec(&[
            json!({"command": "create", "path": "/memories/a.md", "file_text": "alpha"}),
            json!({"command": "create", "path": "/memories/secret.md", "file_text": "a secret"}),
        ]);
        v
    }

    fn outside(&self) -> PathBuf {
        self.root().join("outside")
    }

    fn keys(&self) -> PathBuf {
        self.outside().join("authorized_keys")
    }

    /// Runs tool inputs through `memfs exec`; every answer must be a success.
    fn exec(&self, lines: &[Value]) -> String {
        self.exec_ok(&[], lines)
    }

    /// `log/<n>.tmp` of the next segment: the name a compaction or a roll-over creates.
    fn next_tmp(&self) -> PathBuf {
        let last = all_segments(&self.dir()).last().expect("a segment").0;
        self.dir().join(format!("log/{:016x}.tmp", last + 1))
    }

    /// Runs a command that compacts the log and must succeed; returns its output and the
    /// bytes of every segment it found (what it appended included: they are kept through
    /// hard links, as the compaction removes them).
    fn compacting(&self, args: &[&str]) -> (String, u64) {
        let kept = self.root().join("segments before");
        let _ = std::fs::remove_dir_all(&kept);
        std::fs::create_dir(&kept).expect("create a folder");
        let before = all_segments(&self.dir());
        for (n, file) in &before {
            std::fs::hard_link(file, kept.join(n.to_string())).expect("link a segment");
        }
        let out = self.ok(args);
        let bytes = before.iter().map(|(n, _)| std::fs::metadata(kept.join(n.to_string())).expect("stat").len()).sum();
        std::fs::remove_dir_all(&kept).expect("remove a folder");
        (out, bytes)
    }

    /// The file outside, unchanged, and no link left in the store folder.
    #[track_caller]
    fn assert_untouched(&self) {
        assert_text("the file outside", &std::fs::read_to_string(self.keys()).expect("read the keys"), KEYS);
        assert_eq!(std::fs::read_dir(self.outside()).expect("list").count(), 1, "nothing else outside");
        for (path, (kind, _)) in folder(&self.dir()) {
            assert_ne!(kind, "link", "{} is a link", path.display());
        }
    }
}

/// Every entry below `dir`: its kind, and a regular file's bytes.
fn folder(dir: &Path) -> BTreeMap<PathBuf, (&'static str, Vec<u8>)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("list a folder").flatten() {
        let (path, t) = (entry.path(), entry.file_type().expect("file type"));
        if t.is_dir() {
            out.insert(path.clone(), ("folder", Vec::new()));
            out.extend(folder(&path));
        } else if t.is_symlink() {
            out.insert(path, ("link", Vec::new()));
        } else {
            out.insert(path.clone(), ("file", std::fs::read(&path).expect("read a file")));
        }
    }
    out
}

fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).expect("plant a link");
}

/// The line `gc` and `purge` print about compacting the log, from the bytes before and the
/// one segment left.
fn compacted(bytes_before: u64, store: &Path) -> String {
    let left = log_segments(store);
    assert_eq!(left.len(), 1, "one compacted segment");
    let after = std::fs::metadata(&left[0]).expect("stat").len();
    format!("compacted the log: {bytes_before} bytes before, {after} bytes after\n")
}

#[test]
fn gc_and_purge_unlink_a_link_at_the_next_segment_and_write_nothing_through_it() {
    let v = Victim::new();
    let objects = log_entries(&v.dir()).into_iter().filter(|(p, _)| p.starts_with("objects/")).collect::<Vec<_>>();
    let object_bytes: u64 = objects.iter().map(|(_, e)| e.size()).sum();

    // gc compacts the log into the next segment, written as `log/<n>.tmp` first.
    let tmp = v.next_tmp();
    link(&v.keys(), &tmp);
    let (out, before) = v.compacting(&["gc", "--grace", "0"]);
    assert_text(
        "gc",
        &out,
        &format!(
            "kept 2 commits (@1 to @2)\nreachable: {} objects ({object_bytes} bytes)\ndeleted: 0 objects (0 bytes)\n\
             {}pending: 0 objects\n",
            objects.len(),
            compacted(before, &v.dir())
        ),
    );
    v.assert_untouched();
    assert!(std::fs::symlink_metadata(&tmp).is_err(), "the link is gone");

    // purge compacts too.
    link(&v.keys(), &v.next_tmp());
    let (out, before) = v.compacting(&["purge", "--yes", "/memories/secret.md"]);
    let line = compacted(before, &v.dir());
    assert!(out.lines().any(|l| format!("{l}\n") == line), "purge printed {out:?}, not {line:?}");
    v.assert_untouched();
    let answer = v.exec(&[json!({"command": "view", "path": "/memories/a.md"})]);
    assert!(answer.contains("alpha"), "{answer}");
}

#[test]
fn a_segment_roll_over_unlinks_a_link_at_the_next_segment() {
    let v = Victim::new();
    // A segment is full at 64 MiB: the attacker fills the last one with a record the store
    // above ignores, and plants the link the victim's next write would follow.
    append_put(&v.dir(), "padding", &vec![0; 64 << 20]);
    let segments = all_segments(&v.dir()).len();
    let tmp = v.next_tmp();
    link(&v.keys(), &tmp);
    v.exec(&[json!({"command": "create", "path": "/memories/b.md", "file_text": "beta"})]);
    assert_eq!(all_segments(&v.dir()).len(), segments + 1, "a new segment");
    v.assert_untouched();
    let answer = v.exec(&[json!({"command": "view", "path": "/memories/b.md"})]);
    assert!(answer.contains("beta"), "{answer}");
}

#[test]
fn a_link_for_log_lock_is_refused() {
    let v = Victim::new();
    let lock = v.dir().join("log.lock");
    std::fs::remove_file(&lock).expect("remove the lock file");
    link(&v.keys(), &lock);
    let before = folder(&v.dir());
    for args in [&["log"][..], &["check"], &["gc"]] {
        assert_text(
            &format!("{args:?}"),
            &v.fails(args),
            &format!("memfs: store {}: {} is a symbolic link, not a regular file{NOT_PLAIN}", v.url(), lock.display()),
        );
    }
    let out = v.exec_with(&[], &[json!({"command": "create", "path": "/memories/c.md", "file_text": "c"})]);
    assert_eq!(out.status.code(), Some(1));
    assert_text(
        "exec",
        &text(&out.stderr),
        &format!("memfs: store {}: {} is a symbolic link, not a regular file{NOT_PLAIN}", v.url(), lock.display()),
    );
    assert_eq!(folder(&v.dir()), before, "nothing written");
    assert_text("the file outside", &std::fs::read_to_string(v.keys()).expect("read"), KEYS);

    // The log folder as a link: refused too.
    std::fs::remove_file(&lock).expect("remove the link");
    std::fs::File::create(&lock).expect("a lock file");
    let log = v.dir().join("log");
    let real = v.root().join("log elsewhere");
    std::fs::rename(&log, &real).expect("move the log");
    link(&real, &log);
    assert_text(
        "log as a link",
        &v.fails(&["log"]),
        &format!("memfs: store {}: {} is a symbolic link, not a folder{NOT_PLAIN}", v.url(), log.display()),
    );
}

#[test]
fn a_folder_others_may_write_is_refused() {
    let v = Victim::new();
    let before = folder(&v.dir());
    for (dir, mode, writers) in
        [(v.dir(), 0o777, "group and others"), (v.dir(), 0o770, "group"), (v.dir().join("log"), 0o757, "others")]
    {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let expected = format!(
            "memfs: store {}: {} is writable by {writers} (mode {mode:04o}): whoever can write it could plant links \
             or change the store's records; make it private with `chmod 700 {}`\n",
            v.url(),
            dir.display(),
            dir.display()
        );
        assert_text(&format!("log, {mode:o}"), &v.fails(&["log"]), &expected);
        let out = v.exec_with(&[], &[json!({"command": "create", "path": "/memories/c.md", "file_text": "c"})]);
        assert_eq!((out.status.code(), text(&out.stdout)), (Some(1), String::new()));
        assert_text(&format!("exec, {mode:o}"), &text(&out.stderr), &expected);
        assert_eq!(folder(&v.dir()), before, "nothing written");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }
    v.ok(&["check"]);

    // Another user's folder (chown needs root).
    let me = std::fs::metadata(v.root()).expect("stat").uid();
    if me != 0 {
        eprintln!("skipped the other owner's folder: chown needs root, and the tests run as user {me}");
        return;
    }
    std::os::unix::fs::chown(v.dir(), Some(65534), None).expect("chown");
    assert_text(
        "another owner",
        &v.fails(&["log"]),
        &format!(
            "memfs: store {}: {} belongs to user 65534, not to the user memfs runs as (0): its owner could change it \
             at any time; run memfs as that user, or make it yours with `sudo chown -R 0 {}`\n",
            v.url(),
            v.dir().display(),
            v.dir().display()
        ),
    );
    assert_eq!(folder(&v.dir()), before, "nothing written");
}

#[test]
fn a_damaged_record_that_is_not_the_last_is_an_error_naming_it() {
    let v = Victim::new();
    let segment = log_segments(&v.dir()).pop().expect("a segment");
    let original = std::fs::read(&segment).expect("read the segment");
    // The content of a.md: the first object of the first commit, many records before the end.
    let entries = log_entries(&v.dir());
    let (_, first) = entries
        .iter()
        .filter(|(p, e)| p.starts_with("objects/") && e.file == segment)
        .min_by_key(|(_, e)| e.record.start)
        .expect("an object");
    assert!(first.record.end < original.len());
    let mut bad = original.clone();
    bad[first.data.start + 3] ^= 0x01;
    std::fs::write(&segment, &bad).expect("write the segment");
    let expected = format!(
        "memfs: store {}: storage open of log failed: Generic LogStore error: {}: corrupt record at offset {}: a \
         damaged record followed by more data\n",
        v.url(),
        segment.display(),
        first.record.start
    );
    for args in [&["log"][..], &["check", "--read-data"], &["show", "@1:/memories/a.md"]] {
        assert_text(&format!("{args:?}"), &v.fails(args), &expected);
    }
    let out = v.exec_with(&[], &[json!({"command": "view", "path": "/memories/a.md"})]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(1), String::new()));
    assert_text("exec view", &text(&out.stderr), &expected);
    assert_eq!(std::fs::read(&segment).expect("read the segment"), bad, "nothing truncated or written");
}

/// Segment `n`'s index file (`log/<n>.index`, docs/FORMAT.md).
fn index_file(store: &Path, n: u64) -> PathBuf {
    store.join(format!("log/{n:016x}.index"))
}

/// The attacker rewrites an index file so that two object paths name each other's records,
/// following the documented layout (crates/memfs-store/src/log_store.rs, index version 3),
/// checksum included: in the first block, the first two object puts swap the id prefixes
/// they are found by (each keeps its record's offset, length and time).
fn swap_two_entries(file: &Path, segment: u64) {
    let mut b = std::fs::read(file).expect("read the index");
    assert_eq!(u32_at(&b, 8), 3, "index version 3");
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let (meta, bloom_words) = (u64_at(&b, 64) as usize, u64_at(&b, 80) as usize);
    let dir = meta + bloom_words * 8;
    let (block, len) = (u64_at(&b, dir) as usize, u32_at(&b, dir + 8) as usize);
    // A varint ends at its first byte below 0x80.
    let skip_varint = |b: &[u8], at: &mut usize| {
        while b[*at] & 0x80 != 0 {
            *at += 1;
        }
        *at += 1;
    };
    let mut prefixes = Vec::new();
    let mut at = block;
    while at < block + len {
        let tag = b[at];
        at += 1;
        let op = tag & 0x7f;
        match (tag & 0x80 != 0, op) {
            (true, 2) => at += 32,
            (true, _) => {
                prefixes.push(at);
                at += 16;
            }
            (false, _) => at += 2 + u16::from_le_bytes([b[at], b[at + 1]]) as usize,
        }
        if op != 2 {
            // Offset, length, time, and a compacted put's origin.
            for _ in 0..if op == 3 { 5 } else { 3 } {
                skip_varint(&b, &mut at);
            }
        }
    }
    let (x, y) = (prefixes[0], prefixes[1]);
    let (px, py) = (b[x..x + 16].to_vec(), b[y..y + 16].to_vec());
    b[x..x + 16].copy_from_slice(&py);
    b[y..y + 16].copy_from_slice(&px);
    // XXH3-128 seeded with the segment number (docs/FORMAT.md).
    let sum = twox_hash::XxHash3_128::oneshot_with_seed(segment, &b[block..block + len]);
    b[block + len..block + len + 16].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(file, b).expect("write the index");
}

/// An index file damaged or rewritten by whoever can write the folder: its answers are checked
/// against the records they name, so the victim reads every file and version as before (the
/// segment's own records answer). Damage an open sees (the header, the block holding the
/// keys' entry, a short file) has the next write put the index back; forged entries are
/// found when they are used, and then read around the same way.
#[test]
fn a_damaged_or_forged_index_file_is_read_around_and_written_again() {
    let v = Victim::new();
    // Fill segment 1 past its limit (4 MiB), so that the next write seals it and indexes it.
    append_put(&v.dir(), "padding", &vec![0; 8 << 20]);
    v.exec(&[json!({"command": "create", "path": "/memories/b.md", "file_text": "beta"})]);
    let index = index_file(&v.dir(), 1);
    let original = std::fs::read(&index).expect("segment 1 is indexed");
    let read_everything = |v: &Victim| {
        let views = v.exec(&[
            json!({"command": "view", "path": "/memories/a.md"}),
            json!({"command": "view", "path": "/memories/secret.md"}),
        ]);
        (views, v.ok(&["check", "--read-data"]), v.ok(&["show", "@1:/memories/a.md"]))
    };
    let first = read_everything(&v);
    assert!(first.0.contains("alpha") && first.0.contains("a secret"), "{first:?}");
    // (what, the attack, whether an open sees it)
    type Attack<'a> = (&'a str, Box<dyn Fn() + 'a>, bool);
    let attacks: Vec<Attack<'_>> = vec![
        ("a block bit flipped", Box::new(|| flip(&index, 200)), true),
        ("a header bit flipped", Box::new(|| flip(&index, 20)), true),
        ("cut short", Box::new(|| std::fs::write(&index, &original[..original.len() / 2]).expect("write")), true),
        ("replaced by junk", Box::new(|| std::fs::write(&index, vec![0x5a; original.len()]).expect("write")), true),
        ("two entries naming each other's records", Box::new(|| swap_two_entries(&index, 1)), false),
    ];
    for (i, (what, attack, seen_at_open)) in attacks.iter().enumerate() {
        let before = read_everything(&v);
        attack();
        let attacked = std::fs::read(&index).expect("read");
        assert_ne!(attacked, original, "{what}: changed");
        assert_eq!(read_everything(&v), before, "{what}");
        v.exec(&[json!({"command": "create", "path": format!("/memories/c{i}.md"), "file_text": "c"})]);
        let after = std::fs::read(&index).expect("read");
        if *seen_at_open {
            assert_eq!(after, original, "{what}: written again");
        } else {
            assert_eq!(after, attacked, "{what}: not used by the create, so not found");
            assert_eq!(read_everything(&v).0, before.0, "{what}: still read around");
        }
    }
}

fn flip(file: &Path, at: usize) {
    let mut b = std::fs::read(file).expect("read");
    b[at] ^= 0x10;
    std::fs::write(file, b).expect("write");
}

#[test]
fn links_in_the_cache_folder_are_not_followed() {
    let v = Victim::new();
    let cache = v.root().join("cache");
    let cache_arg = cache.display().to_string();
    // Larger than what the head of a local store carries inline: read from the log, and cached.
    let big = "big file ".repeat(1000);
    v.exec(&[json!({"command": "create", "path": "/memories/big.md", "file_text": big})]);
    let view = [json!({"command": "view", "path": "/memories/big.md"})];
    let clean = v.exec_with(&["--cache-dir", &cache_arg], &view);
    assert!(clean.status.success(), "{}", text(&clean.stderr));
    assert!(text(&clean.stdout).contains("big file big file"));
    // The store's folder in the cache, and its prefix folders and files.
    let stores: Vec<PathBuf> = std::fs::read_dir(&cache).expect("list").flatten().map(|e| e.path()).collect();
    assert_eq!(stores.len(), 1);
    let cached: Vec<PathBuf> =
        folder(&stores[0]).into_iter().filter(|(_, (k, _))| *k == "file").map(|(p, _)| p).collect();
    assert!(!cached.is_empty(), "objects cached");

    // Every cached file replaced by a link to the file outside: not read, not written.
    for file in &cached {
        std::fs::remove_file(file).expect("remove");
        link(&v.keys(), file);
    }
    let out = v.exec_with(&["--cache-dir", &cache_arg], &view);
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (Some(0), text(&clean.stdout), String::new())
    );
    assert_text("the file outside", &std::fs::read_to_string(v.keys()).expect("read"), KEYS);

    // Every prefix folder replaced by a link to the folder outside: nothing written there.
    std::fs::remove_dir_all(&stores[0]).expect("remove");
    std::fs::create_dir(&stores[0]).expect("create");
    for file in &cached {
        let prefix = file.parent().expect("a prefix folder");
        if std::fs::symlink_metadata(prefix).is_err() {
            link(&v.outside(), prefix);
        }
    }
    let out = v.exec_with(&["--cache-dir", &cache_arg], &view);
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (Some(0), text(&clean.stdout), String::new())
    );
    v.assert_untouched();
}
