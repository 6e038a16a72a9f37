//! `memfs purge` end to end on a local folder store: before, the file's text is in history
//! (`show`, `log --json`) and its content objects are in the log's files; after, neither
//! history nor any byte of the store folder holds a trace of it, `check --read-data` passes,
//! and every other object is still there. The content objects are found in the log with the
//! independent reader of `support.rs`, by their sealed size (content + 32 bytes: a 16-byte
//! header and a 16-byte tag, docs/FORMAT.md), which the texts below make unique.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::{LogEntry, Store, all_segments, assert_text, log_segments, unhex};

const PASSPHRASE: &str = "purge test passphrase";

/// What sealing adds to a content (docs/FORMAT.md, "Sealed objects").
const SEAL_OVERHEAD: usize = memfs_crypt::OVERHEAD;

/// A fresh local folder store, unlocked by `MEMFS_PASSPHRASE`.
fn new_store() -> Store {
    Store::new(PASSPHRASE)
}

/// A fresh store unlocked by `MEMFS_PASSPHRASE`: a local folder, and a prefix of the
/// emulators' S3 bucket when `scripts/emulators.sh` runs the tests (skipped otherwise, unless
/// `MEMFS_TEST_CLOUD=required`).
fn each_store() -> Vec<(&'static str, Store)> {
    let mut out = vec![("local", new_store())];
    match (std::env::var("MEMFS_TEST_S3_ENDPOINT"), std::env::var("MEMFS_TEST_S3_BUCKET")) {
        (Ok(endpoint), Ok(bucket)) => {
            let mut id = [0u8; 8];
            getrandom::fill(&mut id).expect("random");
            let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let env = vec![
                ("AWS_ENDPOINT", endpoint),
                ("AWS_ALLOW_HTTP", "true".into()),
                ("AWS_REGION", "us-east-1".into()),
                ("AWS_ACCESS_KEY_ID", "test".into()),
                ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ];
            out.push(("s3", Store::on(PASSPHRASE, Some(format!("s3://{bucket}/purge/{id}")), env)));
        }
        _ if std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required") => {
            panic!("MEMFS_TEST_CLOUD=required but MEMFS_TEST_S3_ENDPOINT/BUCKET are not set")
        }
        _ => eprintln!("skipping S3: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)"),
    }
    out
}

/// Every byte of every file in the store folder of `s`.
fn raw_bytes(s: &Store) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut stack = vec![s.dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a folder").flatten() {
            let path = entry.path();
            match path.is_dir() {
                true => stack.push(path),
                false => bytes.extend(std::fs::read(&path).expect("read a file")),
            }
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    contains_bytes(haystack, needle.as_bytes())
}

fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether the object `name` (`objects/xx/<64 hex>`) is named anywhere in `raw`: by its 32 id
/// bytes, as records of log version 2 and index files store it, or spelled out, as records of
/// version 1 did.
fn names_object(raw: &[u8], name: &str) -> bool {
    let id = name.rsplit('/').next().expect("an id");
    contains(raw, id) || contains_bytes(raw, &unhex(id).expect("hex"))
}

/// The one object of the log whose sealed size is that of `content`.
#[track_caller]
fn object_of(objects: &BTreeMap<String, LogEntry>, content: &str) -> String {
    let size = (content.len() + SEAL_OVERHEAD) as u64;
    let found: Vec<&String> = objects.iter().filter(|(_, e)| e.size() == size).map(|(p, _)| p).collect();
    assert_eq!(found.len(), 1, "exactly one object of {size} bytes: {found:?}");
    found[0].clone()
}

/// The first line of a log entry.
fn header(commits: &[Value], generation: u64, actor: &str, summary: &str) -> String {
    let c = commits.iter().find(|c| c["generation"] == generation).expect("the commit");
    let id = c["id"].as_str().expect("id");
    format!("@{generation} {} {} {actor} {summary}\n", &id[..12], c["time"].as_str().expect("time"))
}

/// A text of exactly `len` bytes starting with `marker`.
fn padded(marker: &str, len: usize) -> String {
    format!("{marker} {}", "x".repeat(len - marker.len() - 1))
}

#[test]
fn purge_leaves_no_trace_in_history_or_in_the_store_folder() {
    let s = new_store();
    let v1 = padded("SECRET-ONE", 1000);
    let v2 = padded("SECRET-TWO", 3000);
    let v3 = padded("SECRET-THREE", 5000);
    // Edited after the rename: found by following the rename, not by its content.
    let four = padded("SECRET-FOUR", 2000);
    let v4 = format!("{four}{}", &v2["SECRET-TWO".len()..]);
    let notes = padded("NOTES", 7000);
    let secret = "/memories/secret.md";
    s.exec(
        "alice",
        &[
            json!({"command": "create", "path": secret, "file_text": v1}),
            json!({"command": "create", "path": "/memories/notes.md", "file_text": notes}),
            // The whole of v1 becomes v2.
            json!({"command": "str_replace", "path": secret, "old_str": v1, "new_str": v2}),
            json!({"command": "rename", "old_path": secret, "new_path": "/memories/old/secret.md"}),
            json!({"command": "str_replace", "path": "/memories/old/secret.md", "old_str": "SECRET-TWO", "new_str": four}),
            json!({"command": "create", "path": "/memories/copy.md", "file_text": v1}),
            json!({"command": "create", "path": secret, "file_text": v3}),
        ],
    );

    // Before: in history, and in the log's files.
    assert_text("show @1", &s.ok(&["show", &format!("@1:{secret}")]), &v1);
    assert_text("show @4", &s.ok(&["show", "@4:/memories/old/secret.md"]), &v2);
    assert_text("show @5", &s.ok(&["show", "@5:/memories/old/secret.md"]), &v4);
    let log = s.ok(&["log", "--json"]);
    assert!(["SECRET-ONE", "SECRET-TWO", "SECRET-THREE", "SECRET-FOUR", secret].iter().all(|t| log.contains(t)));
    let before = s.objects();
    let held: Vec<String> = [&v1, &v2, &v3, &v4].iter().map(|v| object_of(&before, v)).collect();
    let notes_object = object_of(&before, &notes);
    let notes_sealed = before[&notes_object].bytes();
    let raw = raw_bytes(&s);
    for name in held.iter().chain([&notes_object]) {
        assert!(names_object(&raw, name), "{name} is in the log");
    }

    // Keep every segment through a hard link, to count the bytes compaction found.
    let kept = s.root().join("segments before purge");
    std::fs::create_dir(&kept).expect("create a folder");
    let segments = all_segments(&s.dir());
    for (n, file) in &segments {
        std::fs::hard_link(file, kept.join(n.to_string())).expect("link a segment");
    }
    // Without a terminal to ask on, only --yes purges; live copies are refused and named.
    assert_text(
        "no --yes",
        &s.fails(&["purge", secret]),
        "memfs: purge cannot be undone and asks before erasing, but stdin is not a terminal: pass --yes to purge \
         without asking (--dry-run shows what it would erase)\n",
    );
    for args in [&["purge", "--yes", secret][..], &["purge", "--dry-run", secret]] {
        assert_text(
            "live copies",
            &s.fails(args),
            "memfs: nothing was changed: /memories/secret.md has live copies (files that hold the same content, or \
             that it was renamed to): /memories/copy.md, /memories/old/secret.md; to erase them too, pass \
             --all-copies\n",
        );
    }
    let plan = s.ok(&["purge", "--dry-run", "--all-copies", secret]);
    assert_eq!(s.objects(), before, "a refusal and a dry run change nothing");
    assert_eq!(s.commits().len(), 7);

    let out = s.ok(&["--actor", "eraser", "purge", "--yes", "--all-copies", secret]);
    let after = s.objects();
    let deleted: Vec<&String> = before.keys().filter(|p| !after.contains_key(*p)).collect();
    let deleted_bytes: u64 = deleted.iter().map(|p| before[*p].size()).sum();
    let log_before: u64 =
        segments.iter().map(|(n, _)| std::fs::metadata(kept.join(n.to_string())).expect("stat").len()).sum();
    let compacted = log_segments(&s.dir());
    assert_eq!(compacted.len(), 1, "one compacted segment");
    let log_after = std::fs::metadata(&compacted[0]).expect("stat").len();
    assert_text(
        "purge",
        &out,
        &format!(
            "@8: purged /memories/secret.md\n  D /memories/copy.md\n  D /memories/old\n  D /memories/secret.md\n\
             removed 4 versions from 7 of 7 commits (7 rewritten)\n\
             deleted: {} objects ({deleted_bytes} bytes)\n\
             compacted the log: {log_before} bytes before, {log_after} bytes after\n\
             verified: none of the 4 content objects remains, nor any of the 7 replaced commits\n\
             not shredded: copies kept outside the store (bucket versions, backups, other machines' caches) still open \
             with its keys; memfs key shred destroys those keys\n",
            deleted.len()
        ),
    );
    assert_text(
        "dry run",
        &plan,
        &format!(
            "would purge /memories/secret.md as @8:\n  D /memories/copy.md\n  D /memories/old\n  D /memories/secret.md\n\
             would remove 4 versions from 7 of 7 commits (7 rewritten)\n\
             would delete: {} objects ({deleted_bytes} bytes), including 7 replaced commits\n",
            deleted.len()
        ),
    );

    // After: the objects that held the content are gone from the log and from every byte of
    // the folder; the unrelated file's object is untouched.
    for name in &held {
        assert!(deleted.contains(&name), "{name} deleted");
    }
    assert!(after.contains_key(&notes_object) && after[&notes_object].bytes() == notes_sealed);
    assert!(after.values().all(|e| e.size() != (v1.len() + SEAL_OVERHEAD) as u64));
    let raw = raw_bytes(&s);
    for name in &deleted {
        assert!(!names_object(&raw, name), "{name} is gone from the store folder");
    }
    for name in after.keys() {
        assert!(contains(&raw, name) || names_object(&raw, name), "{name} is still in the log");
    }

    // History: the same generations, no trace of the file but the purge commit's path.
    assert_text(
        "show @1",
        &s.fails(&["show", &format!("@1:{secret}")]),
        "memfs: /memories/secret.md does not exist at @1\n",
    );
    assert_text("notes at @2", &s.ok(&["show", "@2:/memories/notes.md"]), &notes);
    assert_text("notes now", &s.ok(&["show", "HEAD:/memories/notes.md"]), &notes);
    assert_text("tree now", &s.ok(&["show", "HEAD:/memories"]), "notes.md\n");
    let c = s.commits();
    let expected = [
        header(&c, 8, "eraser", "purge /memories/secret.md")
            + "  D /memories/copy.md\n  D /memories/old\n  D /memories/secret.md\n",
        header(&c, 7, "alice", "purged"),
        header(&c, 6, "alice", "purged"),
        header(&c, 5, "alice", "purged"),
        header(&c, 4, "alice", "purged"),
        header(&c, 3, "alice", "purged"),
        header(&c, 2, "alice", "create /memories/notes.md") + "  A /memories/notes.md\n",
        header(&c, 1, "alice", "purged"),
    ]
    .concat();
    assert_text("log", &s.ok(&["log"]), &expected);
    for commit in &c {
        let line = commit.to_string();
        assert!(!line.contains("SECRET-"), "{line}");
        if commit["generation"] != 8 {
            assert!(!line.contains("secret.md") && !line.contains("copy.md") && !line.contains("/old"), "{line}");
        }
    }
    assert_eq!(c[0]["command"], json!({"command": "purge", "path": secret, "versions": 4}));

    assert_text(
        "check",
        &s.ok(&["check", "--read-data"]),
        "checked 8 commits (@1 to @8), 2 directories, 1 file (7000 bytes, read and verified)\nno problems found\n",
    );
    let gc = s.ok(&["gc", "--grace", "0"]);
    assert!(gc.contains("\ndeleted: 0 objects (0 bytes)\n") && gc.ends_with("pending: 0 objects\n"), "{gc}");

    // Nothing left to purge; the root is refused.
    assert_text(
        "again",
        &s.fails(&["purge", "--yes", secret]),
        "memfs: nothing to purge: /memories/secret.md is not in the tree, in its kept history or in any other \
         stored commit\n",
    );
    assert_text(
        "root",
        &s.fails(&["purge", "-y", "/memories/"]),
        "memfs: cannot purge /memories itself: name a file or directory below it\n",
    );
    assert_text(
        "outside",
        &s.fails(&["purge", "--yes", "/etc"]),
        "memfs: path \"/etc\" does not start with /memories\n",
    );
    assert_eq!(s.commits().len(), 8, "failed purges commit nothing");
}

/// The two ways purge lost live data: a live file elsewhere holding the same content (equal
/// contents are one object), and a live file the purged path was renamed to. Both are refused,
/// named, and left as they were, on a local folder and on S3; `--all-copies` erases them.
#[test]
fn purge_refuses_live_copies_and_loses_nothing() {
    for (name, s) in each_store() {
        s.exec(
            "alice",
            &[
                json!({"command": "create", "path": "/memories/p/a.md", "file_text": "same text"}),
                json!({"command": "create", "path": "/memories/keep/b.md", "file_text": "same text"}),
                json!({"command": "create", "path": "/memories/r/old.md", "file_text": "renamed text"}),
                json!({"command": "rename", "old_path": "/memories/r/old.md", "new_path": "/memories/r/new.md"}),
                json!({"command": "create", "path": "/memories/h.md", "file_text": "history"}),
                json!({"command": "create", "path": "/memories/was.md", "file_text": "history"}),
                json!({"command": "delete", "path": "/memories/was.md"}),
            ],
        );
        let log = s.ok(&["log"]);
        let check = s.ok(&["check", "--read-data"]);
        let objects = if name == "local" { Some(s.objects()) } else { None };
        let refusal = |path: &str, copies: &str| {
            format!(
                "memfs: nothing was changed: {path} has live copies (files that hold the same content, or that it \
                 was renamed to): {copies}; to erase them too, pass --all-copies\n"
            )
        };
        for dry in [false, true] {
            let flag = if dry { "--dry-run" } else { "--yes" };
            let refused = s.fails(&["purge", flag, "/memories/p/a.md"]);
            assert_text(
                &format!("{name}: same content"),
                &refused,
                &refusal("/memories/p/a.md", "/memories/keep/b.md"),
            );
            let refused = s.fails(&["purge", flag, "/memories/r/old.md"]);
            assert_text(&format!("{name}: renamed"), &refused, &refusal("/memories/r/old.md", "/memories/r/new.md"));
        }
        assert_text(&format!("{name}: b.md"), &s.ok(&["show", "HEAD:/memories/keep/b.md"]), "same text");
        assert_text(&format!("{name}: new.md"), &s.ok(&["show", "HEAD:/memories/r/new.md"]), "renamed text");
        assert_text(&format!("{name}: log"), &s.ok(&["log"]), &log);
        assert_text(&format!("{name}: check"), &s.ok(&["check", "--read-data"]), &check);
        if let Some(objects) = &objects {
            assert_eq!(&s.objects(), objects, "{name}: no object deleted or added");
        }

        // A copy in history only goes with the content, and is named; the live files stay.
        let plan = s.ok(&["purge", "--dry-run", "/memories/h.md"]);
        let out = s.ok(&["purge", "--yes", "/memories/h.md"]);
        let deleted = out.lines().find_map(|l| l.strip_prefix("deleted: ")).expect("a deleted line");
        assert_text(
            &format!("{name}: dry run"),
            &plan,
            &format!(
                "would purge /memories/h.md as @8:\n  D /memories/h.md\n\
                 would remove from history, where these paths held the same content:\n  /memories/was.md\n\
                 would remove 1 version from 3 of 7 commits (3 rewritten)\n\
                 would delete: {deleted}, including 3 replaced commits\n"
            ),
        );
        assert!(
            out.starts_with(
                "@8: purged /memories/h.md\n  D /memories/h.md\n\
                 removed from history, where these paths held the same content:\n  /memories/was.md\n\
                 removed 1 version from 3 of 7 commits (3 rewritten)\n"
            ),
            "{name}: {out}"
        );
        assert!(
            out.ends_with(
                "verified: none of the 1 content object remains, nor any of the 3 replaced commits\n\
                 not shredded: copies kept outside the store (bucket versions, backups, other machines' caches) still \
                 open with its keys; memfs key shred destroys those keys\n"
            ),
            "{out}"
        );
        assert_text(&format!("{name}: b.md after"), &s.ok(&["show", "HEAD:/memories/keep/b.md"]), "same text");
        assert_text(&format!("{name}: new.md after"), &s.ok(&["show", "HEAD:/memories/r/new.md"]), "renamed text");

        // --all-copies erases the live copy too.
        let out = s.ok(&["purge", "--yes", "--all-copies", "/memories/p/a.md"]);
        assert!(out.starts_with("@9: purged /memories/p/a.md\n  D /memories/keep\n  D /memories/p\n"), "{name}: {out}");
        assert_text(&format!("{name}: tree"), &s.ok(&["show", "HEAD:/memories"]), "r/\n");
        assert_text(&format!("{name}: new.md last"), &s.ok(&["show", "HEAD:/memories/r/new.md"]), "renamed text");
        s.ok(&["check", "--read-data"]);
    }
}

/// On a terminal, purge shows what it will erase and asks: anything but y/yes changes
/// nothing. The terminal is a real pseudo-terminal, made by util-linux's `script`.
#[test]
fn purge_asks_on_a_terminal() {
    let s = new_store();
    s.exec("alice", &[json!({"command": "create", "path": "/memories/a.md", "file_text": "erase me"})]);
    let on_terminal = |answer: &str| s.on_terminal(&["purge", "/memories/a.md"], answer);
    let question = "would purge /memories/a.md as @2:\n  D /memories/a.md\n\
                    would remove 1 version from 1 of 1 commit (1 rewritten)\n";
    // The terminal also shows the progress bars (stderr is the terminal too) and echoes the
    // answer where it was typed, before the question: look for the lines, not the whole screen.
    let (code, out) = on_terminal("n\n");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(question), "{out}");
    assert!(
        out.ends_with("Erase all of this? It cannot be undone. [y/N] memfs: purge cancelled: nothing was changed\n"),
        "{out}"
    );
    assert_text("kept", &s.ok(&["show", "HEAD:/memories/a.md"]), "erase me");
    let (code, out) = on_terminal("yes\n");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(question) && out.contains("[y/N] "), "{out}");
    assert!(out.contains("@2: purged /memories/a.md\n  D /memories/a.md\n"), "{out}");
    assert_text("gone", &s.ok(&["show", "HEAD:/memories"]), "");
}
