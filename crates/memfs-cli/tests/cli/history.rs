//! History, integrity and retention end to end: `log`, `show`, `diff`, `restore`, `undo`,
//! `check` and `gc` run as the binary against a local folder store, with exact outputs.
//!
//! Commit ids and times differ from run to run; the expected strings take them from
//! `memfs log --json`, so every assertion is still on the whole output.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{
    self, LogEntry, all_segments, assert_text, checksum, log_entries, log_segments, records_end, text,
};

const PASSPHRASE: &str = "history test passphrase";

/// A fresh local folder store, unlocked by `MEMFS_PASSPHRASE`.
struct Store(support::Store);

impl std::ops::Deref for Store {
    type Target = support::Store;
    fn deref(&self) -> &support::Store {
        &self.0
    }
}

impl Store {
    fn new() -> Self {
        Store(support::Store::new(PASSPHRASE))
    }

    fn object_paths(&self) -> Vec<String> {
        self.objects().into_keys().collect()
    }

    fn object_bytes(&self) -> u64 {
        self.objects().values().map(LogEntry::size).sum()
    }

    /// Runs `memfs gc ARGS`, which on a local folder compacts the log at its end; returns its
    /// output and the line it must print about that: the bytes of every segment before (with
    /// what gc itself appended: the segments are kept through hard links, as gc removes them)
    /// and of the one compacted segment it leaves.
    fn gc(&self, args: &[&str]) -> (String, String) {
        let kept = self.root().join("segments before gc");
        let _ = std::fs::remove_dir_all(&kept);
        std::fs::create_dir(&kept).expect("create a folder");
        let before = all_segments(&self.dir());
        for (n, file) in &before {
            std::fs::hard_link(file, kept.join(n.to_string())).expect("link a segment");
        }
        let out = self.ok(&[&["gc"], args].concat());
        let bytes_before: u64 =
            before.iter().map(|(n, _)| std::fs::metadata(kept.join(n.to_string())).expect("stat").len()).sum();
        let after = all_segments(&self.dir());
        assert_eq!(after.len(), 1, "one segment after gc: {after:?}");
        assert_eq!(Some(after[0].0), before.last().map(|(n, _)| n + 1), "the compacted segment comes next");
        assert_eq!(log_segments(&self.dir()), std::slice::from_ref(&after[0].1));
        assert!(log_entries(&self.dir()).values().all(|e| e.op == 3), "every record copied by compaction");
        let bytes_after = std::fs::metadata(&after[0].1).expect("stat").len();
        (out, format!("compacted the log: {bytes_before} bytes before, {bytes_after} bytes after\n"))
    }
}

/// The segment bytes `bytes` with the data of records `a` and `b` exchanged: each keeps its
/// path, with a length to fit and a checksum to match (the log's checksum is public: whoever
/// can write the folder can forge one).
fn swap_data(bytes: &[u8], a: &LogEntry, b: &LogEntry) -> Vec<u8> {
    let (first, second) = if a.record.start < b.record.start { (a, b) } else { (b, a) };
    let rebuilt = |e: &LogEntry, data: &[u8]| {
        let fields = &bytes[e.record.start + 8..e.data.start]; // op, time, path_len, path
        let len = (8 + fields.len() + data.len() + 16) as u32;
        let mut r = [&len.to_le_bytes()[..], &(!len).to_le_bytes(), fields, data].concat();
        r.extend_from_slice(&checksum(&r));
        r
    };
    [
        &bytes[..first.record.start],
        &rebuilt(first, &bytes[second.data.clone()]),
        &bytes[first.record.end..second.record.start],
        &rebuilt(second, &bytes[first.data.clone()]),
        &bytes[second.record.end..],
    ]
    .concat()
}

/// Commit `generation` of `commits` (newest first): `@GEN ID12`.
fn commit(commits: &[Value], generation: u64) -> &Value {
    commits.iter().find(|c| c["generation"] == generation).expect("the commit")
}

fn short(commits: &[Value], generation: u64) -> String {
    commit(commits, generation)["id"].as_str().expect("id")[..12].to_owned()
}

/// The first line of a log entry.
fn header(commits: &[Value], generation: u64, actor: &str, summary: &str) -> String {
    let c = commit(commits, generation);
    format!("@{generation} {} {} {actor} {summary}\n", short(commits, generation), c["time"].as_str().expect("time"))
}

fn create(path: &str, text: &str) -> Value {
    serde_json::json!({"command": "create", "path": path, "file_text": text})
}

/// Four commits by alice: a.txt, d/b.txt, an edit of a.txt, d/b.txt moved to c.txt.
fn four_commits() -> Store {
    let s = Store::new();
    s.exec(
        "alice",
        &[
            create("/memories/a.txt", "one\ntwo\n"),
            create("/memories/d/b.txt", "bee"),
            serde_json::json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "two", "new_str": "2"}),
            serde_json::json!({"command": "rename", "old_path": "/memories/d/b.txt", "new_path": "/memories/c.txt"}),
        ],
    );
    s
}

#[test]
fn log_lists_commits_newest_first() {
    let s = four_commits();
    let c = s.commits();
    let e1 = header(&c, 1, "alice", "create /memories/a.txt") + "  A /memories/a.txt\n";
    let e2 = header(&c, 2, "alice", "create /memories/d/b.txt") + "  A /memories/d/b.txt\n";
    let e3 = header(&c, 3, "alice", "str_replace /memories/a.txt") + "  M /memories/a.txt\n";
    let e4 = header(&c, 4, "alice", "rename /memories/d/b.txt /memories/c.txt")
        + "  R /memories/d/b.txt -> /memories/c.txt\n";
    assert_text("log", &s.ok(&["log"]), &[e4.as_str(), &e3, &e2, &e1].concat());
    assert_text("log -n 2", &s.ok(&["log", "-n", "2"]), &[e4.as_str(), &e3].concat());
    assert_text("log a.txt", &s.ok(&["log", "/memories/a.txt"]), &[e3.as_str(), &e1].concat());
    assert_text("log d", &s.ok(&["log", "/memories/d"]), &[e4.as_str(), &e2].concat());
    assert_text("log c.txt", &s.ok(&["log", "/memories/c.txt"]), &e4);
    assert_text("log nothing", &s.ok(&["log", "/memories/zzz"]), "");
    assert_text("show @2", &s.ok(&["show", "@2"]), &e2);

    // The JSON form carries everything.
    let newest = &c[0];
    assert_eq!(newest["generation"], 4);
    assert_eq!(newest["actor"], "alice");
    assert_eq!(newest["parent"], c[1]["id"]);
    assert_eq!(c[3]["parent"], Value::Null);
    assert_eq!(newest["id"].as_str().map(str::len), Some(64));
    assert_eq!(newest["tree"].as_str().map(str::len), Some(64));
    assert!(newest["time_ms"].as_u64().is_some_and(|t| t > 1_700_000_000_000));
    assert_eq!(
        newest["command"],
        serde_json::json!({"command": "rename", "old_path": "/memories/d/b.txt", "new_path": "/memories/c.txt"})
    );
    assert_eq!(
        newest["changes"],
        serde_json::json!([{"kind": "renamed", "from": "/memories/d/b.txt", "to": "/memories/c.txt"}])
    );
    let keys: Vec<&str> = newest.as_object().expect("object").keys().map(String::as_str).collect();
    let mut expected = ["actor", "changes", "command", "generation", "id", "parent", "time", "time_ms", "tree"];
    expected.sort();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, expected);
}

#[test]
fn show_and_diff_read_the_past() {
    let s = four_commits();
    assert_text("file", &s.ok(&["show", "HEAD~1:/memories/a.txt"]), "one\n2\n");
    assert_text("file at @1", &s.ok(&["show", "@1:/memories/a.txt"]), "one\ntwo\n");
    let id2 = s.commits()[2]["id"].as_str().expect("id").to_owned();
    assert_text("by id prefix", &s.ok(&["show", &format!("{}:/memories/d/b.txt", &id2[..8])]), "bee");
    assert_text("directory", &s.ok(&["show", "@2:/memories"]), "a.txt\nd/\n");
    assert_text("root spelled loosely", &s.ok(&["show", "HEAD:/memories/"]), "a.txt\nc.txt\nd/\n");

    assert_text("diff @1", &s.ok(&["diff", "@1"]), "M /memories/a.txt\nA /memories/c.txt\nA /memories/d/\n");
    assert_text("diff @1 @2", &s.ok(&["diff", "@1", "@2"]), "A /memories/d/b.txt\n");
    assert_text(
        "diff backwards",
        &s.ok(&["diff", "HEAD", "@2"]),
        "M /memories/a.txt\nD /memories/c.txt\nA /memories/d/b.txt\n",
    );
    assert_text("no difference", &s.ok(&["diff", "HEAD", "@4"]), "");
    assert_text(
        "diff --patch",
        &s.ok(&["diff", "--patch", "@2", "@4"]),
        "M /memories/a.txt\n\
         --- @2:/memories/a.txt\n\
         +++ @4:/memories/a.txt\n\
         @@ -1,2 +1,2 @@\n \
         one\n\
         -two\n\
         +2\n\
         A /memories/c.txt\n\
         --- /dev/null\n\
         +++ @4:/memories/c.txt\n\
         @@ -0,0 +1 @@\n\
         +bee\n\
         \\ No newline at end of file\n\
         D /memories/d/b.txt\n\
         --- @2:/memories/d/b.txt\n\
         +++ /dev/null\n\
         @@ -1 +0,0 @@\n\
         -bee\n\
         \\ No newline at end of file\n",
    );

    let store = s.url();
    assert_text(
        "past the head",
        &s.fails(&["show", "@9"]),
        &format!("memfs: store {store}: revision @9 does not exist: the newest commit is @4\n"),
    );
    assert_text(
        "before the first",
        &s.fails(&["diff", "HEAD~4"]),
        &format!("memfs: store {store}: revision HEAD~4 does not exist: the history has 4 commits\n"),
    );
    assert_text(
        "missing path",
        &s.fails(&["show", "HEAD:/memories/nope"]),
        "memfs: /memories/nope does not exist at HEAD\n",
    );
    assert_text(
        "bad revision",
        &s.fails(&["show", "HEAD~x"]),
        "memfs: invalid revision `HEAD~x`: HEAD~ must be followed by a number\n",
    );
    assert_text(
        "short prefix",
        &s.fails(&["diff", "0123"]),
        "memfs: invalid revision `0123`: a commit id prefix needs at least 8 hex digits\n",
    );
    assert_text("bad path", &s.fails(&["log", "/etc"]), "memfs: path \"/etc\" does not start with /memories\n");
}

#[test]
fn restore_and_undo_are_commits() {
    let s = four_commits();
    let c = s.commits();
    let (id1, id2) = (short(&c, 1), short(&c, 2));

    // One file, from a revision.
    assert_text(
        "restore a.txt",
        &s.ok(&["--actor", "bob", "restore", "--at", "@2", "/memories/a.txt"]),
        &format!("@5: restored /memories/a.txt to @2 ({id2})\n  M /memories/a.txt\n"),
    );
    assert_text("restored content", &s.ok(&["show", "HEAD:/memories/a.txt"]), "one\ntwo\n");
    assert_text(
        "again: nothing to do",
        &s.ok(&["restore", "--at", "@2", "/memories/a.txt"]),
        &format!("nothing to restore: /memories/a.txt is already as at @2 ({id2})\n"),
    );
    // A path that did not exist then is deleted.
    assert_text(
        "restore c.txt",
        &s.ok(&["restore", "--at", "HEAD~4", "/memories/c.txt"]),
        &format!("@6: restored /memories/c.txt to @1 ({id1})\n  D /memories/c.txt\n"),
    );
    // The whole tree.
    assert_text(
        "restore all",
        &s.ok(&["restore", "--at", "@2"]),
        &format!("@7: restored /memories to @2 ({id2})\n  A /memories/d/b.txt\n"),
    );
    assert_text("tree after", &s.ok(&["diff", "@2", "HEAD"]), "");

    // Undo, then undo the undo.
    let c = s.commits();
    assert_text("undo", &s.ok(&["undo"]), &format!("@8: undid @7 ({})\n  D /memories/d/b.txt\n", short(&c, 7)));
    let c = s.commits();
    assert_text("redo", &s.ok(&["undo"]), &format!("@9: undid @8 ({})\n  A /memories/d/b.txt\n", short(&c, 8)));

    let c = s.commits();
    let expected = [
        header(&c, 9, "-", &format!("undo @8 ({})", short(&c, 8))) + "  A /memories/d/b.txt\n",
        header(&c, 8, "-", &format!("undo @7 ({})", short(&c, 7))) + "  D /memories/d/b.txt\n",
        header(&c, 7, "-", &format!("restore /memories to @2 ({id2})")) + "  A /memories/d/b.txt\n",
        header(&c, 6, "-", &format!("restore /memories/c.txt to @1 ({id1})")) + "  D /memories/c.txt\n",
        header(&c, 5, "bob", &format!("restore /memories/a.txt to @2 ({id2})")) + "  M /memories/a.txt\n",
    ]
    .concat();
    assert_text("log", &s.ok(&["log", "-n", "5"]), &expected);
    assert_eq!(
        c[4]["command"],
        serde_json::json!({"command": "restore", "path": "/memories/a.txt", "at": "@2",
            "commit": commit(&c, 2)["id"], "generation": 2})
    );
    assert_eq!(c[0]["command"], serde_json::json!({"command": "undo", "commit": commit(&c, 8)["id"], "generation": 8}));

    // Times: the newest commit at or before; RFC 3339 or unix seconds.
    assert_text(
        "far future",
        &s.ok(&["restore", "--at", "2999-01-01T00:00:00Z", "/memories/a.txt"]),
        &format!("nothing to restore: /memories/a.txt is already as at @9 ({})\n", short(&c, 9)),
    );
    let time = commit(&c, 9)["time"].as_str().expect("time").to_owned();
    assert_text(
        "the head's own time",
        &s.ok(&["restore", "--at", &time]),
        &format!("nothing to restore: /memories is already as at @9 ({})\n", short(&c, 9)),
    );
    assert_text(
        "before everything",
        &s.fails(&["restore", "--at", "2000-01-01T00:00:00Z"]),
        "memfs: no commit was made at or before 2000-01-01T00:00:00Z\n",
    );
    assert_text(
        "unix seconds",
        &s.fails(&["restore", "--at", "946684800"]),
        "memfs: no commit was made at or before 946684800\n",
    );
    assert_text(
        "neither",
        &s.fails(&["restore", "--at", "yesterday"]),
        "memfs: invalid --at `yesterday`: expected a revision (HEAD, HEAD~N, @GENERATION, a commit id of at least 8 hex \
         digits) or a time (RFC 3339 such as 2025-06-01T12:00:00Z, a date such as 2025-06-01, or unix seconds)\n",
    );
    assert_eq!(s.commits().len(), 9, "failed and empty restores commit nothing");
    assert_text("still clean", s.ok(&["check", "--read-data"]).lines().last().unwrap_or(""), "no problems found");
}

#[test]
fn an_empty_store_and_the_first_commit() {
    let s = Store::new();
    assert_text("log", &s.ok(&["log"]), "");
    assert_text("undo", &s.fails(&["undo"]), "memfs: nothing to undo: the store has no commits yet\n");
    assert_text(
        "show",
        &s.fails(&["show", "HEAD"]),
        &format!("memfs: store {}: revision HEAD does not exist: the store has no commits yet\n", s.url()),
    );
    assert_text(
        "check",
        &s.ok(&["check"]),
        "checked 0 commits, 0 directories, 0 files (0 bytes, present with the right sizes)\nno problems found\n",
    );
    assert_text(
        "gc",
        &s.ok(&["gc", "--grace", "0"]),
        "kept 0 commits\nreachable: 0 objects (0 bytes)\ndeleted: 0 objects (0 bytes)\npending: 0 objects\n",
    );

    s.exec("", &[create("/memories/a.txt", "x")]);
    let c = s.commits();
    assert_text("undo the first", &s.ok(&["undo"]), &format!("@2: undid @1 ({})\n  D /memories/a.txt\n", short(&c, 1)));
    assert_text("empty again", &s.ok(&["show", "HEAD:/memories"]), "");
    assert_text(
        "check",
        &s.ok(&["check", "--read-data"]),
        "checked 2 commits (@1 to @2), 2 directories, 1 file (1 byte, read and verified)\nno problems found\n",
    );
}

const AUTH: &str = "failed authentication: it was modified, swapped or written under another key";

#[test]
fn check_names_every_tampered_object() {
    let s = Store::new();
    s.exec("", &[create("/memories/a.txt", "alpha"), create("/memories/d/b.txt", "beta")]);
    let clean =
        "checked 2 commits (@1 to @2), 3 directories, 2 files (9 bytes, read and verified)\nno problems found\n";
    assert_text("clean", &s.ok(&["check", "--read-data"]), clean);
    assert_text(
        "clean, sizes only",
        &s.ok(&["check"]),
        "checked 2 commits (@1 to @2), 3 directories, 2 files (9 bytes, present with the right sizes)\nno problems found\n",
    );

    // Two contents, three directories (root at @1, root at @2, d), two commits: one segment,
    // the head last (a commit appends its objects, then the head).
    let objects = s.objects();
    assert_eq!(objects.len(), 7);
    let segment = s.dir().join("log/0000000000000001");
    assert_eq!(log_segments(&s.dir()), std::slice::from_ref(&segment));
    let original = std::fs::read(&segment).expect("read the segment");
    let head = log_entries(&s.dir()).remove("head").expect("a head");
    assert_eq!((head.file.as_path(), head.record.end), (segment.as_path(), records_end(&original)));
    for (name, entry) in &objects {
        // Followed by more records, a damaged record is an error of the log, naming it.
        assert_eq!(entry.file, segment);
        assert!(entry.record.end < records_end(&original), "{name} is not the last record");
        let mut bad = original.clone();
        bad[entry.data.start + entry.data.len() / 2] ^= 0x01;
        std::fs::write(&segment, &bad).expect("write the segment");
        assert_text(
            &format!("{name}, damaged"),
            &s.fails(&["check", "--read-data"]),
            &format!(
                "memfs: store {}: storage open of log failed: Generic LogStore error: {}: corrupt record at offset {}: \
                 a damaged record followed by more data\n",
                s.url(),
                segment.display(),
                entry.record.start
            ),
        );
        // With the checksum forged to match, the log serves it, and the object fails its
        // authentication, by name.
        let sum = checksum(&bad[entry.record.start..entry.record.end - 16]);
        bad[entry.record.end - 16..entry.record.end].copy_from_slice(&sum);
        std::fs::write(&segment, &bad).expect("write the segment");
        let out = s.run(&["check", "--read-data"]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}{stderr}");
        assert!(stderr.starts_with(&format!("error: object {name} {AUTH} (")), "{name}: {stderr}");
        assert!(stderr.ends_with(")\nmemfs: check found 1 problem\n"), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 2, "{name}: {stderr}");
        assert!(stdout.ends_with("\n1 problem found\n"), "{name}: {stdout}");
        std::fs::write(&segment, &original).expect("restore the segment");
    }
    assert_text("clean again", &s.ok(&["check", "--read-data"]), clean);

    // The head, the last record: damaged, it is a torn write and the head before it (of the
    // first commit) is served, which this client, having seen the second, refuses.
    let c = s.commits();
    let mut bad = original.clone();
    bad[head.data.start + head.data.len() / 2] ^= 0x80;
    std::fs::write(&segment, &bad).expect("write the segment");
    let out = s.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&out.stderr),
        &format!(
            "error: rollback detected: the store serves commit {} (@1), older than commit {} (@2) that this client \
             has seen (the head)\nmemfs: check found 1 problem\n",
            short(&c, 1),
            short(&c, 2)
        ),
    );
    // The head served is checked all the same, for the user to see what it holds.
    assert_text(
        "stdout",
        &text(&out.stdout),
        "checked 1 commit (@1), 1 directory, 1 file (5 bytes, present with the right sizes)\n1 problem found\n",
    );
    assert_eq!(std::fs::read(&segment).expect("read the segment"), bad, "a reader truncates nothing");
    std::fs::write(&segment, &original).expect("restore the segment");
    assert_text("clean after the head", &s.ok(&["check", "--read-data"]), clean);

    // Two contents swapped (told apart by size: content plus 40 bytes of seal): each fails
    // under the other's name.
    let sized = |n: u64| objects.iter().find(|(_, e)| e.size() == n).expect("object");
    let ((nx, x), (ny, y)) = (sized(5 + 40), sized(4 + 40));
    std::fs::write(&segment, swap_data(&original, x, y)).expect("write the segment");
    let swapped = s.objects();
    assert_eq!(
        (&swapped[nx].bytes()[..], &swapped[ny].bytes()[..]),
        (&original[y.data.clone()], &original[x.data.clone()])
    );
    let out = s.run(&["check", "--read-data"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    let mut named: Vec<&str> = lines[..2].iter().map(|l| l.split(' ').nth(2).unwrap_or("")).collect();
    named.sort();
    let mut expected = [nx.as_str(), ny.as_str()];
    expected.sort();
    assert_eq!(named, expected, "{stderr}");
    assert!(lines[..2].iter().all(|l| l.contains(AUTH)), "{stderr}");
    assert_eq!(lines[2], "memfs: check found 2 problems");
    std::fs::write(&segment, &original).expect("restore the segment");
    assert_text("clean at last", &s.ok(&["check", "--read-data"]), clean);
}

#[test]
fn gc_keeps_what_is_reachable_and_deletes_the_rest_in_two_runs() {
    let s = Store::new();
    s.exec(
        "",
        &[
            create("/memories/a.txt", "one"),
            create("/memories/b.txt", "two"),
            serde_json::json!({"command": "delete", "path": "/memories/a.txt"}),
            create("/memories/c.txt", "three"),
        ],
    );
    // 3 contents, 4 roots, 4 commits: all reachable while history is kept.
    let all = s.objects();
    assert_eq!(all.len(), 11);
    assert!(all.values().all(|e| e.op == 1), "puts, not yet compacted");
    let data: BTreeMap<String, Vec<u8>> = all.iter().map(|(path, e)| (path.clone(), e.bytes())).collect();
    let all_bytes = s.object_bytes();
    // Each gc compacts the log of a local folder: the line about it comes after `deleted:`.
    let keep_all = |compacted: &str| {
        format!(
            "kept 4 commits (@1 to @4)\nreachable: 11 objects ({all_bytes} bytes)\ndeleted: 0 objects (0 bytes)\n\
             {compacted}pending: 0 objects\n"
        )
    };
    let (out, compacted) = s.gc(&["--grace", "0"]);
    assert_text("gc", &out, &keep_all(&compacted));
    let (out, compacted) = s.gc(&["--grace", "0"]);
    assert_text("gc again", &out, &keep_all(&compacted));
    assert_eq!(s.object_paths(), all.into_keys().collect::<Vec<_>>());
    for (path, e) in s.objects() {
        assert!(e.bytes() == data[&path], "{path}: compaction changed its bytes");
    }
    for (spec, content) in
        [("@1:/memories/a.txt", "one"), ("@2:/memories/b.txt", "two"), ("@4:/memories/c.txt", "three")]
    {
        assert_text(spec, &s.ok(&["show", spec]), content);
    }

    // Keep two commits: @1 and @2, their roots and the content of a.txt become unreachable;
    // with the default grace period, they stay pending.
    let (first, first_compacted) = s.gc(&["--keep-commits", "2"]);
    let (second, second_compacted) = s.gc(&[]);
    assert_eq!(s.objects().len(), 11);
    // With no grace, the next run deletes them.
    let (third, third_compacted) = s.gc(&["--grace", "0"]);
    let kept = s.object_bytes();
    let freed = all_bytes - kept;
    let cut = "kept 2 commits (@3 to @4)\nhistory before @3 is no longer kept\n";
    let reachable = format!("reachable: 6 objects ({kept} bytes)\n");
    assert_text(
        "first",
        &first,
        &format!(
            "{cut}{reachable}deleted: 0 objects (0 bytes)\n{first_compacted}\
             pending: 5 objects ({freed} bytes, 5 new); a later gc deletes them after the grace period\n"
        ),
    );
    assert_text(
        "second",
        &second,
        &format!(
            "{cut}{reachable}deleted: 0 objects (0 bytes)\n{second_compacted}\
             pending: 5 objects ({freed} bytes, 0 new); a later gc deletes them after the grace period\n"
        ),
    );
    assert_text(
        "third",
        &third,
        &format!("{cut}{reachable}deleted: 5 objects ({freed} bytes)\n{third_compacted}pending: 0 objects\n"),
    );
    assert_eq!(s.objects().len(), 6);
    for (path, e) in s.objects() {
        assert!(e.bytes() == data[&path], "{path}: compaction changed its bytes");
    }

    assert_text(
        "check",
        &s.ok(&["check", "--read-data"]),
        "checked 2 commits (@3 to @4), 2 directories, 2 files (8 bytes, read and verified)\nno problems found\n",
    );
    let c = s.commits();
    assert_eq!(c.iter().map(|c| c["generation"].as_u64().unwrap_or(0)).collect::<Vec<_>>(), [4, 3]);
    assert_text(
        "cut revision",
        &s.fails(&["show", "@2"]),
        &format!("memfs: store {}: revision @2 does not exist: history before @3 was removed by gc\n", s.url()),
    );
    assert_text("kept content", &s.ok(&["show", "HEAD:/memories/b.txt"]), "two");
    // History goes on from the horizon.
    assert_text("undo", &s.ok(&["undo"]), &format!("@5: undid @4 ({})\n  D /memories/c.txt\n", short(&c, 4)));
    s.ok(&["undo"]);
    assert_text(
        "at the horizon",
        s.ok(&["gc", "--keep-commits", "1", "--grace", "0"]).lines().next().unwrap_or(""),
        "kept 1 commit (@6)",
    );
    assert_text(
        "nothing before",
        &s.fails(&["undo"]),
        "memfs: nothing to undo: the commit before @6 was removed by gc\n",
    );
    assert_text("still clean", s.ok(&["check", "--read-data"]).lines().last().unwrap_or(""), "no problems found");
}

#[test]
fn help_documents_the_revision_grammar() {
    let s = Store::new();
    for command in ["log", "show", "diff", "restore"] {
        let help = s.ok(&[command, "--help"]);
        assert!(help.contains("\nRevisions:\n  HEAD          the newest commit\n"), "{command}: {help}");
        assert!(help.contains("  HEAD~N        N commits before the newest (HEAD~ is HEAD~1)\n"), "{command}: {help}");
        assert!(help.contains("  @N            the commit of generation N"), "{command}: {help}");
    }
    let help = s.ok(&["restore", "--help"]);
    assert!(
        help.contains("  1748779200             unix seconds (refused if the digits also start a commit id)\n"),
        "{help}"
    );
    let help = s.ok(&["gc", "--help"]);
    assert!(help.contains("--grace <SECONDS>"), "{help}");
    assert!(help.contains("[default: 3600]"), "{help}");
}

/// `gc --grace 0` deletes what it finds unreachable in the same run (before, it only recorded
/// it as pending, and a second run deleted it). Its dry run shows the plan and changes
/// nothing; on a terminal it asks, and anything but yes changes nothing.
#[test]
fn gc_grace_zero_deletes_in_one_run_after_a_preview() {
    let s = Store::new();
    s.exec(
        "",
        &[
            create("/memories/a.txt", "one"),
            create("/memories/b.txt", "two"),
            serde_json::json!({"command": "delete", "path": "/memories/a.txt"}),
            create("/memories/c.txt", "three"),
        ],
    );
    let all_bytes = s.object_bytes();
    let args = ["--keep-commits", "2", "--grace", "0"];
    let dry = s.ok_unchanged(&[&["gc", "--dry-run"][..], &args].concat());
    let before = s.state();
    let (code, screen) = s.on_terminal(&[&["gc"][..], &args].concat(), "n\n");
    assert_eq!(code, Some(1), "{screen}");
    assert!(screen.contains(&dry), "{screen}");
    assert!(screen.ends_with("Run this gc? [y/N] memfs: gc cancelled: nothing was changed\n"), "{screen}");
    assert!(s.state() == before, "a cancelled gc changed the store");

    // Without a terminal, gc runs without asking, as it always did: one run deletes.
    let (out, compacted) = s.gc(&args);
    assert_eq!(s.objects().len(), 6);
    let kept = s.object_bytes();
    let freed = all_bytes - kept;
    assert_text(
        "dry run",
        &dry,
        &format!(
            "would keep 2 commits (@3 to @4)\nhistory before @3 would no longer be kept\n\
             reachable: 6 objects ({kept} bytes)\nwould delete: 5 objects ({freed} bytes)\nwould leave pending: 0 objects\n"
        ),
    );
    assert_text(
        "one run",
        &out,
        &format!(
            "kept 2 commits (@3 to @4)\nhistory before @3 is no longer kept\nreachable: 6 objects ({kept} bytes)\n\
             deleted: 5 objects ({freed} bytes)\n{compacted}pending: 0 objects\n"
        ),
    );
    assert_text(
        "nothing left",
        &s.ok_unchanged(&["gc", "--dry-run", "--grace", "0"]),
        &format!(
            "would keep 2 commits (@3 to @4)\nhistory before @3 is no longer kept\nreachable: 6 objects ({kept} bytes)\n\
             would delete: 0 objects (0 bytes)\nwould leave pending: 0 objects\n"
        ),
    );
    assert_text("still clean", s.ok(&["check", "--read-data"]).lines().last().unwrap_or(""), "no problems found");
}

/// `restore` and `undo` show what they would change with --dry-run (nothing is committed or
/// written), ask on a terminal (no: nothing changes; yes, or --yes: they commit), and run
/// without asking when there is no terminal, as before.
#[test]
fn restore_and_undo_preview_and_ask() {
    let s = Store::new();
    s.exec("", &[create("/memories/a.txt", "one"), create("/memories/b.txt", "two")]);
    let c = s.commits();
    let (id1, id2) = (short(&c, 1), short(&c, 2));
    let undo = format!("would undo @2 ({id2})\n  D /memories/b.txt\n");
    assert_text("undo --dry-run", &s.ok_unchanged(&["undo", "--dry-run"]), &undo);
    let restore = format!("would restore /memories to @1 ({id1})\n  D /memories/b.txt\n");
    assert_text("restore --dry-run", &s.ok_unchanged(&["restore", "--at", "@1", "--dry-run"]), &restore);
    assert_text(
        "restore a path --dry-run",
        &s.ok_unchanged(&["restore", "--at", "@1", "--dry-run", "/memories/b.txt"]),
        &format!("would restore /memories/b.txt to @1 ({id1})\n  D /memories/b.txt\n"),
    );
    assert_text(
        "nothing to restore --dry-run",
        &s.ok_unchanged(&["restore", "--at", "@2", "--dry-run"]),
        &format!("nothing to restore: /memories is already as at @2 ({id2})\n"),
    );

    let before = s.state();
    for (args, question) in [(&["undo"][..], "Undo?"), (&["restore", "--at", "@1"], "Restore?")] {
        let (code, screen) = s.on_terminal(args, "n\n");
        assert_eq!(code, Some(1), "{screen}");
        let name = args[0];
        let plan = if name == "undo" { &undo } else { &restore };
        assert!(screen.contains(plan.as_str()), "{screen}");
        assert!(
            screen.ends_with(&format!("{question} [y/N] memfs: {name} cancelled: nothing was changed\n")),
            "{screen}"
        );
        assert!(s.state() == before, "a cancelled {name} changed the store");
    }
    let (code, screen) = s.on_terminal(&["undo"], "y\n");
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains(&format!("{undo}Undo? [y/N] ")), "{screen}");
    assert!(screen.ends_with(&format!("@3: undid @2 ({id2})\n  D /memories/b.txt\n")), "{screen}");
    let (code, screen) = s.on_terminal(&["restore", "--yes", "--at", "@2"], "");
    assert_eq!(code, Some(0), "{screen}");
    assert!(!screen.contains("[y/N]"), "{screen}");
    assert!(screen.ends_with(&format!("@4: restored /memories to @2 ({id2})\n  A /memories/b.txt\n")), "{screen}");
    // No terminal: as before, no question.
    let id4 = short(&s.commits(), 4);
    assert_text("undo", &s.ok(&["undo"]), &format!("@5: undid @4 ({id4})\n  D /memories/b.txt\n"));
    assert_text(
        "restore",
        &s.ok(&["restore", "--at", "@4"]),
        &format!("@6: restored /memories to @4 ({id4})\n  A /memories/b.txt\n"),
    );
}
