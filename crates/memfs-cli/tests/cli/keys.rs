//! `memfs key`: slots are added and removed by writing `memfs.keys` only (a record appended
//! to the log of a local folder store).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{self, LogEntry, assert_text, log_entries, log_segments, records_end, run, text};

const PASSPHRASE: &str = "key slot test passphrase";

fn memfs(root: &Path) -> Command {
    let mut cmd = support::memfs(root);
    cmd.env("MEMFS_STORE", format!("file://{}", root.join("store").display()));
    cmd
}

/// The log of the store folder `dir`: its segment files' bytes, and each live path's record
/// (where it is) and data.
struct Log {
    segments: Vec<(PathBuf, Vec<u8>)>,
    live: BTreeMap<String, (LogEntry, Vec<u8>)>,
}

impl Log {
    fn read(dir: &Path) -> Log {
        // Each segment up to its last record (not the zeros the last one is filled with ahead).
        let records = |f: &PathBuf| {
            let mut bytes = std::fs::read(f).unwrap();
            bytes.truncate(records_end(&bytes));
            bytes
        };
        let segments = log_segments(dir).into_iter().map(|f| (f.clone(), records(&f))).collect();
        let live = log_entries(dir).into_iter().map(|(path, e)| (path, (e.clone(), e.bytes()))).collect();
        Log { segments, live }
    }

    /// Every live path but `memfs.keys`, with its record and data.
    fn data(&self) -> BTreeMap<&str, &(LogEntry, Vec<u8>)> {
        self.live.iter().filter(|(p, _)| *p != "memfs.keys").map(|(p, e)| (p.as_str(), e)).collect()
    }
}

#[test]
fn slots_are_added_and_removed_without_touching_data() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let with_pass = || {
        let mut c = memfs(root);
        c.env("MEMFS_PASSPHRASE", PASSPHRASE);
        c
    };
    let mut init = with_pass();
    init.args(["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"]);
    assert!(run(init, "").status.success());
    let mut exec = with_pass();
    exec.arg("exec");
    let create = r#"{"command":"create","path":"/memories/a.md","file_text":"kept\n"}"#;
    assert!(run(exec, format!("{create}\n")).status.success());
    let before = Log::read(&root.join("store"));
    let data = before.data();
    assert!(data.contains_key("head") && data.keys().any(|p| p.starts_with("objects/")), "{:?}", data.keys());

    // Add a key-file slot, unlocking with the passphrase.
    let key = root.join("second.key");
    let mut add = with_pass();
    add.args(["key", "add", "--new-key-file"]).arg(&key);
    let out = run(add, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_text("key add", &text(&out.stdout), &format!("added key slot 2 (key file {})\n", key.display()));

    let mut list = memfs(root);
    list.args(["key", "list"]);
    let listed = masked(&text(&run(list, "").stdout));
    assert_text("key list", &listed, "1 passphrase added TIME on HOST\n2 key-file added TIME on HOST\n");

    // Remove the passphrase slot with the key file; the passphrase no longer opens the store.
    let mut remove = memfs(root);
    remove.arg("--key-file").arg(&key).args(["key", "remove", "1"]);
    let out = run(remove, "");
    assert_text("key remove", &text(&out.stdout), "removed key slot 1\n");
    let mut old = with_pass();
    old.arg("exec");
    let out = run(old, "");
    assert!(!out.status.success());
    assert_text(
        "old passphrase",
        &text(&out.stderr),
        &format!("memfs: store file://{}: this store has no passphrase slot\n", root.join("store").display()),
    );

    // The last slot stays; the data opens with the key file and no data file changed.
    let mut last = memfs(root);
    last.arg("--key-file").arg(&key).args(["key", "remove", "--force", "2"]);
    let out = run(last, "");
    assert!(!out.status.success());
    assert_text(
        "last slot",
        &text(&out.stderr),
        &format!(
            "memfs: store file://{}: refusing to remove the last key slot: the store could never be unlocked again\n",
            root.join("store").display()
        ),
    );
    let mut view = memfs(root);
    view.arg("--key-file").arg(&key).args(["exec", "--dialect", "python-sdk"]);
    let out = run(view, "{\"command\":\"view\",\"path\":\"/memories/a.md\"}\n");
    assert_text(
        "view",
        &text(&out.stdout),
        "{\"content\":\"Here's the content of /memories/a.md with line numbers:\\n     1\\tkept\\n     2\\t\",\"is_error\":false}\n",
    );
    // The slot changes appended `memfs.keys` records and one commit each (the tree unchanged):
    // the log only grew; every object is the same record, byte for byte; the key slots changed.
    let after = Log::read(&root.join("store"));
    let paths = |log: &Log| log.segments.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&before), paths(&after));
    for ((file, old), (_, new)) in before.segments.iter().zip(&after.segments) {
        assert!(new.starts_with(old), "{} did not only grow", file.display());
    }
    let size = |log: &Log| log.segments.iter().map(|(_, b)| b.len()).sum::<usize>();
    assert!(size(&after) > size(&before), "the log did not grow");
    let (old, new) = (before.data(), after.data());
    let objects =
        |live: &BTreeMap<&str, &(LogEntry, Vec<u8>)>| live.keys().filter(|p| p.starts_with("objects/")).count();
    assert!(
        old.iter().filter(|(p, _)| p.starts_with("objects/")).all(|(p, e)| new.get(p) == Some(e)),
        "a data record changed"
    );
    assert_eq!(objects(&new), objects(&old) + 2, "one commit per change");
    let mut log = memfs(root);
    log.arg("--key-file").arg(&key).args(["log", "--limit", "2"]);
    let out = run(log, "");
    let listed = text(&out.stdout);
    let summaries: Vec<String> = listed.lines().map(|l| l.split(' ').skip(4).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(summaries, ["key remove slot 1", "key add slot 2"], "{listed}");
    assert_ne!(before.live["memfs.keys"].1, after.live["memfs.keys"].1, "the key slots did not change");
}

#[test]
fn a_failed_add_leaves_no_key_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut init = memfs(root);
    init.env("MEMFS_PASSPHRASE", PASSPHRASE);
    init.args(["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"]);
    assert!(run(init, "").status.success());
    let key = root.join("orphan.key");
    let mut add = memfs(root);
    add.env("MEMFS_PASSPHRASE", "wrong").args(["key", "add", "--new-key-file"]).arg(&key);
    let out = run(add, "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("wrong passphrase or key file"), "{}", text(&out.stderr));
    assert!(!key.exists());
}

/// `key remove --dry-run` unlocks and checks as a removal does and says what it would
/// remove, writing nothing; on a terminal, key remove asks first.
#[test]
fn key_remove_previews_and_asks() {
    let s = support::Store::new(PASSPHRASE);
    let key = s.root().join("second.key");
    let key_arg = key.to_str().expect("UTF-8");
    s.ok(&["key", "add", "--new-key-file", key_arg]);
    assert_text(
        "dry run",
        &s.ok_unchanged(&["key", "remove", "2", "--dry-run"]),
        "would remove key slot 2 (key file)\n",
    );
    assert_text(
        "key list",
        &masked(&s.ok(&["key", "list"])),
        "1 passphrase added TIME on HOST (in use)\n2 key-file added TIME on HOST\n",
    );
    // Slot 1 is the one the passphrase given opens: refused without --force, dry run or not.
    let own = "key slot 1 is the one your credential opens: without it that credential no longer unlocks the \
               store; unlock with another slot's credential, or pass --force";
    assert_text(
        "own slot",
        &s.fails(&["key", "remove", "--dry-run", "1"]),
        &format!("memfs: store {}: {own}\n", s.url()),
    );
    assert_text(
        "own slot, forced",
        &s.ok_unchanged(&["key", "remove", "--dry-run", "--force", "1"]),
        "would remove key slot 1 (passphrase)\n",
    );
    let before = s.state();
    assert_text(
        "unknown slot",
        &s.fails(&["key", "remove", "--dry-run", "7"]),
        &format!("memfs: store {}: no key slot 7\n", s.url()),
    );
    let (code, screen) = s.on_terminal(&["key", "remove", "2"], "n\n");
    assert_eq!(code, Some(1), "{screen}");
    assert!(
        screen.ends_with(
            "would remove key slot 2 (key file)\nRemove it? Its passphrase or key file will no longer unlock the \
             store. [y/N] memfs: key remove cancelled: nothing was changed\n"
        ),
        "{screen}"
    );
    assert!(s.state() == before, "a cancelled or dry key remove changed the store");
    let (code, screen) = s.on_terminal(&["key", "remove", "--yes", "2"], "");
    assert_eq!(code, Some(0), "{screen}");
    assert_text("--yes", &screen, "removed key slot 2\n");
    assert_text("key list", &masked(&s.ok(&["key", "list"])), "1 passphrase added TIME on HOST (in use)\n");
    // The last slot is refused by the dry run as by the removal.
    assert_text(
        "last slot",
        &s.fails(&["key", "remove", "--dry-run", "1"]),
        &format!(
            "memfs: store {}: refusing to remove the last key slot: the store could never be unlocked again\n",
            s.url()
        ),
    );
}

/// `key passwd` re-wraps the slot the passphrase opens under a new one, keeping its id and the
/// data; the old passphrase no longer opens the store. A key-file slot has no passphrase.
#[test]
fn key_passwd_changes_the_passphrase_of_a_slot() {
    let s = support::Store::new(PASSPHRASE);
    s.exec("tester", &[serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "kept"})]);
    let key = s.root().join("second.key");
    s.ok(&["key", "add", "--new-key-file", key.to_str().expect("UTF-8")]);
    let new = s.root().join("new-passphrase");
    std::fs::write(&new, "a new passphrase\n").unwrap();
    let cheap = ["--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"];
    let mut args = vec!["key", "passwd", "--new-passphrase-file", new.to_str().expect("UTF-8")];
    args.extend(cheap);
    assert_text("passwd", &s.ok(&args), "changed the passphrase of key slot 1\n");

    let with = |passphrase: &str, args: &[&str]| {
        let mut cmd = s.memfs();
        cmd.env("MEMFS_PASSPHRASE", passphrase).args(args);
        cmd.output().expect("run memfs")
    };
    assert_text(
        "old passphrase",
        &support::fails("old", 1, &with(PASSPHRASE, &["cat", "/memories/a.md"])),
        &format!("memfs: store {}: wrong passphrase or key file\n", s.url()),
    );
    assert_eq!(support::ok("new", &with("a new passphrase", &["cat", "/memories/a.md"])), "kept");
    assert_eq!(
        masked(&support::ok("list", &with("a new passphrase", &["key", "list"]))),
        "1 passphrase added TIME on HOST (in use)\n2 key-file added TIME on HOST\n"
    );
    // A key-file slot has no passphrase to change; with a key file, the slot must be named.
    let mut cmd = s.memfs();
    cmd.env_remove("MEMFS_PASSPHRASE").arg("--key-file").arg(&key).args(["key", "passwd"]);
    assert_text(
        "key file, no --slot",
        &support::fails("passwd", 1, &cmd.output().unwrap()),
        "memfs: you unlocked with a key file: name the passphrase slot to change with --slot ID (see memfs key list)\n",
    );
    let mut args = vec!["key", "passwd", "--slot", "2", "--new-passphrase-file", new.to_str().unwrap()];
    args.extend(cheap);
    assert_text(
        "key-file slot",
        &support::fails("passwd --slot 2", 1, &with("a new passphrase", &args)),
        &format!("memfs: store {}: key slot 2 is a key file slot\n", s.url()),
    );
}

/// `memfs key list` with each slot's creation time and host replaced by `TIME` and `HOST`
/// (the label, the id, the kind and the marker kept).
fn masked(list: &str) -> String {
    let mut out = String::new();
    for line in list.lines() {
        let mut line = line.to_owned();
        if let Some(at) = line.find(" added ") {
            let start = at + " added ".len();
            assert_eq!(line.as_bytes()[start + 19], b'Z', "a UTC time: {line}");
            line.replace_range(start..start + 20, "TIME");
        }
        if let Some(at) = line.find(" on ") {
            let start = at + " on ".len();
            let end = line[start..].find(" (").map_or(line.len(), |e| start + e);
            line.replace_range(start..end, "HOST");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A slot's label, creation time and host are shown by `key list`, the label quoted; a label
/// a terminal would act on (or too long) is refused before anything is written, a new key
/// file included. The host is this machine's name.
#[test]
fn key_slots_carry_a_label_a_time_and_a_host() {
    let s = support::Store::new(PASSPHRASE);
    let key = s.root().join("laptop.key");
    let key_arg = key.to_str().expect("UTF-8");
    s.ok(&["key", "add", "--new-key-file", key_arg, "--label", "work \"laptop\""]);
    let listed = s.ok(&["key", "list"]);
    assert_text(
        "key list",
        &masked(&listed),
        "1 passphrase added TIME on HOST (in use)\n2 key-file \"work \\\"laptop\\\"\" added TIME on HOST\n",
    );
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("the host name");
    assert!(
        listed.lines().all(|l| l.contains(&format!(" on {} ", host.trim())) || l.ends_with(host.trim())),
        "{listed}"
    );
    let before = s.state();
    for (label, why) in [("a\u{1b}[2Jb", "it holds a control character"), (&"x".repeat(65), "it is over 64 bytes")] {
        let other = s.root().join("other.key");
        let err = s.fails(&["key", "add", "--new-key-file", other.to_str().expect("UTF-8"), "--label", label]);
        assert_text("bad label", &err, &format!("memfs: a key slot's label is refused: {why}\n"));
        assert!(!other.exists(), "no key file is left for a slot that was refused");
    }
    assert!(s.state() == before, "a refused label changed the store");
}
