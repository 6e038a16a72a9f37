//! Stores written by an earlier format open with this binary and are migrated
//! (docs/FORMAT.md, "Versioning"): each fixture of `tests/fixtures` (read its README) is
//! copied into a temporary folder, given the modes git does not keep, and opened.

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

/// Runs the first command on a fixture of format `from`: it succeeds, carries the store over
/// and says so on stderr, naming the commit that records it. Returns stdout.
#[track_caller]
fn first(home: &Path, root: &Path, args: &[&str], from: u64) -> String {
    let out = memfs(home, root).args(args).output().unwrap();
    let stdout = support::succeeds(&format!("memfs {args:?}"), &out);
    let said = format!(
        "memfs: carried this store over from format {from} to format 14 (a root key and key epochs; no file \
         changed), so memfs releases before format 14 cannot open it now; recorded as @7 (see `memfs log`)\n"
    );
    assert_text("the carry-over's message", &String::from_utf8_lossy(&out.stderr), &said);
    stdout
}

/// Creates `/memories/after.md` through `memfs exec`: a commit on the fixture.
#[track_caller]
fn create_after(home: &Path, root: &Path) {
    let out = memfs(home, root)
        .arg("exec")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            writeln!(
                child.stdin.take().unwrap(),
                r#"{{"command":"create","path":"/memories/after.md","file_text":"six"}}"#
            )?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `memfs.keys` as the store folder holds it, read through the log's format.
fn keys(root: &Path) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let log = memfs_store::log_store::LogStore::open(root.join("store")).unwrap();
    let bytes = runtime.block_on(async {
        log.get(&object_store::path::Path::from("memfs.keys")).await.unwrap().bytes().await.unwrap()
    });
    serde_json::from_slice(&bytes).unwrap()
}

/// The history both fixtures hold (tests/fixtures/README.md), without times.
const HISTORY: &str = "\
@6 delete /memories/tmp.md
@5 create /memories/tmp.md
@4 rename /memories/projects/plan.md /memories/projects/roadmap.md
@3 str_replace /memories/notes.md
@2 create /memories/projects/plan.md
@1 create /memories/notes.md
";

/// The line that records the carry-over of a format-5 or format-6 fixture: its one slot opened it.
const MIGRATED: &str = "@7 key migrate slot 1\n";

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
    let log = memfs_store::log_store::LogStore::open(root.join("store")).unwrap();
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

/// That a migration kept every object (`before`, the head aside) as it was, and added only
/// the commit that records it: one commit object (and no file content).
#[track_caller]
fn assert_kept(
    before: &std::collections::BTreeMap<String, Vec<u8>>,
    after: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    for (path, bytes) in before {
        assert!(after.get(path) == Some(bytes), "{path} changed");
    }
    let added: Vec<&String> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert_eq!(added.len(), 1, "{added:?}");
}

/// What carrying a format-7 to -13 store over to format 14 changes in `memfs.keys`: the
/// version and the change counter (one up), not the slots.
#[track_caller]
fn assert_version_carried(before: &Value, after: &Value) {
    assert_eq!(after["version"], 14, "{after}");
    let counter = |k: &Value| k["keyring"]["counter"].as_u64().unwrap();
    assert_eq!(counter(after), counter(before) + 1, "{after}");
    assert_eq!(after["slots"], before["slots"]);
}

/// What a migration from format 5 or 6 leaves in `memfs.keys` (straight to format 14): a slot
/// set of version 2 whose one slot (the key file's) has a public key and the root, a keyring
/// with epoch 0 at change 1, a tag, and no carry-over left to record.
fn assert_carried_over(keys: &Value) {
    assert_eq!(keys["version"], 14, "{keys}");
    assert_eq!(keys["slots"]["version"], 2, "{keys}");
    let slot = &keys["slots"]["slots"][0];
    assert!(slot["public"].is_string() && slot["root"].is_string(), "{keys}");
    assert_eq!(keys["keyring"]["counter"], 1, "{keys}");
    assert_eq!(keys["keyring"]["epochs"].as_array().map(|e| e.len()), Some(1), "{keys}");
    assert_eq!(keys["keyring"]["epochs"][0]["epoch"], 0, "{keys}");
    assert!(keys["mac"].as_str().is_some_and(|m| m.len() == 64), "{keys}");
    assert_eq!(keys.get("unrecorded"), None, "the carry-over is recorded: {keys}");
}

#[test]
fn a_format_5_store_opens_and_is_migrated_to_format_14() {
    let (dir, root) = fixture("format-5");
    let home = dir.path().join("client");
    assert_eq!(keys(&root)["version"], 5);
    let before = objects(&root);
    assert_text("log", &history(&first(&home, &root, &["log"], 5)), &format!("{MIGRATED}{HISTORY}"));
    assert_carried_over(&keys(&root));
    assert_kept(&before, &objects(&root));
    assert_text("notes", &ok(&home, &root, &["show", "HEAD:/memories/notes.md"]), "alpha\ngamma\n");
    assert_text("roadmap", &ok(&home, &root, &["show", "HEAD:/memories/projects/roadmap.md"]), "step one\n");
    assert_text(
        "the tree",
        &ok(&home, &root, &["show", "HEAD:/memories"]),
        &ok(&home, &root, &["show", "@6:/memories"]),
    );
    // A commit after the migration, and a sound store.
    create_after(&home, &root);
    assert!(ok(&home, &root, &["log", "--limit", "1"]).starts_with("@8 "));
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

#[test]
fn a_format_6_store_opens_and_is_migrated_to_format_14() {
    let (dir, root) = fixture("format-6");
    let home = dir.path().join("client");
    assert_eq!(keys(&root)["version"], 6);
    let before = objects(&root);
    assert_text("log", &history(&first(&home, &root, &["log"], 6)), &format!("{MIGRATED}{HISTORY}"));
    assert_carried_over(&keys(&root));
    assert_kept(&before, &objects(&root));
    assert_text("notes", &ok(&home, &root, &["show", "HEAD:/memories/notes.md"]), "alpha\ngamma\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

/// Format 7 to 14 changes `memfs.keys`' version and counter only (heads of format 8 may carry
/// objects unwritten, slots of format 9 be kept outside memfs, pages of format 10 be binary,
/// commits of format 11 too, index pages of format 12 name their leaves' counts and low
/// names, heads of format 13 the commits before them and heads of format 14 are binary, which
/// a format-7 client cannot read: the counter makes one
/// still running read `memfs.keys` again, and stop); no object and no history change, and
/// nothing is said.
#[test]
fn the_format_7_fixture_opens_and_is_carried_to_format_14() {
    let (_dir, _root, keys_before, keys_after) = carried_silently("format-7", 7);
    assert_eq!(keys_after["keyring"]["epochs"], keys_before["keyring"]["epochs"]);
    assert_eq!(keys_after.get("unrecorded"), None, "{keys_after}");
}

/// Opens fixture `name` (format `version`, 7 or later) with `memfs log`: it says nothing, shows
/// the fixture's history, carries the store to the current format (version and counter) once,
/// reads its files and checks sound, and changes no object. Returns the fixture's folder and
/// root, and `memfs.keys` before and after.
fn carried_silently(name: &str, version: u64) -> (tempfile::TempDir, PathBuf, Value, Value) {
    let (dir, root) = fixture(name);
    let home = dir.path().join("client");
    let keys_before = keys(&root);
    assert_eq!(keys_before["version"], version);
    let before = objects(&root);
    let out = memfs(&home, &root).arg("log").output().unwrap();
    let log = support::succeeds("memfs log", &out);
    assert_text("stderr", &String::from_utf8_lossy(&out.stderr), "");
    assert_text("log", &history(&log), HISTORY);
    let keys_after = keys(&root);
    assert_version_carried(&keys_before, &keys_after);
    assert_text("notes", &ok(&home, &root, &["show", "HEAD:/memories/notes.md"]), "alpha\ngamma\n");
    assert_eq!(keys(&root), keys_after, "carried over once");
    assert!(objects(&root) == before, "no object changed, none added");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
    (dir, root, keys_before, keys_after)
}

/// The format-8 fixture was written as a bucket holds a store (tests/fixtures/README.md): its
/// head carries every object unwritten, none under `objects/`. A `file://` client reads them
/// from the head, and its first commit (which carries nothing in a local folder) stores them.
/// Opening it carries it to the current format as format 7 is (version and counter, nothing
/// said).
#[test]
fn the_format_8_fixture_reads_objects_carried_in_its_head() {
    let (dir, root) = fixture("format-8");
    let home = dir.path().join("client");
    let keys_before = keys(&root);
    assert_eq!(keys_before["version"], 8);
    assert!(objects(&root).is_empty(), "every object is carried in the head");
    let out = memfs(&home, &root).arg("log").output().unwrap();
    assert_text("stderr", &String::from_utf8_lossy(&out.stderr), "");
    assert_text("log", &history(&support::succeeds("memfs log", &out)), HISTORY);
    let keys_after = keys(&root);
    assert_version_carried(&keys_before, &keys_after);
    assert_text("notes", &ok(&home, &root, &["show", "HEAD:/memories/notes.md"]), "alpha\ngamma\n");
    assert_text("roadmap", &ok(&home, &root, &["show", "@2:/memories/projects/plan.md"]), "step one\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
    assert_eq!(keys(&root), keys_after, "carried over once");
    assert!(objects(&root).is_empty(), "reading wrote no object");

    create_after(&home, &root);
    assert!(objects(&root).len() > 10, "the commit stored what the head carried: {:?}", objects(&root).keys());
    assert_text("notes", &ok(&home, &root, &["show", "@1:/memories/notes.md"]), "alpha\nbeta\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

/// The format-9 fixture: a key file (slot 1) and an SSH key as an age recipient (slot 2). It
/// opens with either; the first open carries it to format 14 (version and counter, nothing
/// said), and its directory pages, JSON, read as they are; a commit writes binary ones.
#[test]
fn the_format_9_fixture_opens_with_its_key_file_and_its_age_identity() {
    let (dir, root) = fixture("format-9");
    let home = dir.path().join("client");
    let keys_before = keys(&root);
    assert_eq!(keys_before["version"], 9);
    assert_eq!(keys_before["slots"]["slots"][1]["kind"], "age");
    let before = objects(&root);
    let log = ok(&home, &root, &["log"]);
    assert_text("log", &history(&log), &format!("@7 key add slot 2\n{HISTORY}"));
    let keys_after = keys(&root);
    assert_version_carried(&keys_before, &keys_after);
    let keys_before = keys_after;
    let mut agent = support::memfs(&home);
    agent
        .arg("--store")
        .arg(format!("file://{}", root.join("store").display()))
        .arg("--age-identity")
        .arg(root.join("agent"))
        .args(["cat", "/memories/notes.md"]);
    assert_text("the agent reads", &support::ok("cat", &support::run(agent, "")), "alpha\ngamma\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
    assert_eq!(keys(&root), keys_before, "carried over once");
    assert!(objects(&root) == before, "reading wrote no object");

    create_after(&home, &root);
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

/// The format-10 fixture (binary directory pages, JSON commits): the first open carries it to
/// format 14 as format 7 is (version and counter, nothing said), and it reads as it is; a
/// commit after it is binary (format 11) on a tree of format-10 pages.
#[test]
fn the_format_10_fixture_opens_and_is_carried_to_format_14() {
    carried_read_and_written("format-10", 10);
}

/// The format-11 fixture (binary commits, directory pages with varints, leaves cut one entry
/// in four): the first open carries it to format 14 as format 7 is (version and counter,
/// nothing said), and it reads as it is.
#[test]
fn the_format_11_fixture_opens_and_is_carried_to_format_14() {
    carried_read_and_written("format-11", 11);
}

/// [`carried_silently`], then an old version's file read and a commit made on the store.
fn carried_read_and_written(name: &str, version: u64) {
    let (dir, root, _, _) = carried_silently(name, version);
    let home = dir.path().join("client");
    assert_text("roadmap", &ok(&home, &root, &["show", "@2:/memories/projects/plan.md"]), "step one\n");
    create_after(&home, &root);
    assert_text("log", &history(&ok(&home, &root, &["log"])), &format!("@7 create /memories/after.md\n{HISTORY}"));
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

/// The format-11 fixture of a large directory (`/memories/big`, 120 files in 30 leaves, under
/// index pages of format 11 that name no leaf counts nor names): a file in it is read through
/// a search of its leaves, and the first change to it writes the directory whole in format 12,
/// which reads as the same files.
#[test]
fn a_large_directory_of_format_11_is_read_in_part_and_written_whole_in_format_12() {
    let (dir, root) = fixture("format-11-large");
    let home = dir.path().join("client");
    assert_eq!(keys(&root)["version"], 11);
    assert_text("a note", &ok(&home, &root, &["cat", "/memories/big/note-100.md"]), "note 100\n");
    let listing = ok(&home, &root, &["show", "HEAD:/memories/big"]);
    let mut exec = memfs(&home, &root);
    exec.arg("exec");
    let input = concat!(
        r#"{"command":"create","path":"/memories/big/note-101.md","file_text":"note 101\n"}"#,
        "\n",
        r#"{"command":"delete","path":"/memories/big/note-238.md"}"#,
        "\n",
    );
    let out = support::ok("exec", &support::run(exec, input));
    assert_eq!(out.matches(r#""is_error":false"#).count(), 2, "{out}");
    assert_text("the new note", &ok(&home, &root, &["cat", "/memories/big/note-101.md"]), "note 101\n");
    assert_text("a note left", &ok(&home, &root, &["cat", "/memories/big/note-236.md"]), "note 236\n");
    let now = ok(&home, &root, &["show", "HEAD:/memories/big"]);
    let expected: String = listing
        .lines()
        .filter(|l| !l.contains("note-238.md"))
        .flat_map(|l| match l.contains("note-100.md") {
            true => vec![l.to_string(), l.replace("note-100.md", "note-101.md")],
            false => vec![l.to_string()],
        })
        .map(|l| l + "\n")
        .collect();
    assert_text("the directory", &now, &expected);
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

/// The format-12 fixture (index pages with leaf counts and lows): the first open carries it to
/// format 14 as format 7 is (version and counter, nothing said), and it reads as it is.
#[test]
fn the_format_12_fixture_opens_and_is_carried_to_format_14() {
    carried_read_and_written("format-12", 12);
}

/// The format-13 fixture, written as a bucket holds a store (tests/fixtures/README.md): its
/// JSON head names the five commits before it (`recent`) and carries every object unwritten.
/// The first open carries it to format 14 as format 7 is (version and counter, nothing said);
/// it reads as it is, and `check` finds the commits the head names where their parents lead; a
/// commit after it writes a binary head.
#[test]
fn the_format_13_fixture_opens_and_is_carried_to_format_14() {
    carried_read_and_written("format-13", 13);
}

/// The format-14 fixture, written as a bucket holds a store: its binary head names the five
/// commits before it and carries every object unwritten, without their ids. It opens as it
/// is, nothing is rewritten, and `check` finds nothing wrong.
#[test]
fn the_format_14_fixture_opens_as_it_is() {
    let (dir, root) = fixture("format-14");
    let home = dir.path().join("client");
    let keys_before = keys(&root);
    assert_eq!(keys_before["version"], 14);
    let before = objects(&root);
    assert_text("log", &history(&ok(&home, &root, &["log"])), HISTORY);
    assert_text("notes", &ok(&home, &root, &["show", "HEAD:/memories/notes.md"]), "alpha\ngamma\n");
    assert_text("roadmap", &ok(&home, &root, &["show", "@2:/memories/projects/plan.md"]), "step one\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
    assert_eq!(keys(&root), keys_before, "a format-14 store is not rewritten");
    assert!(objects(&root) == before, "reading wrote nothing");
}

/// The format-10 fixture's log is of log version 1 (records checksummed with BLAKE3): its
/// segment is read as it is, sealed untouched at the first write (with an index of version 3),
/// and new records go to a segment of version 2 (XXH3-128); a compaction leaves version 2 only.
#[test]
fn a_version_1_log_is_read_and_then_left_for_version_2() {
    let (dir, root) = fixture("format-10");
    let home = dir.path().join("client");
    let log = root.join("store").join("log");
    let version = |file: &str| -> u32 {
        let bytes = std::fs::read(log.join(file)).unwrap();
        u32::from_le_bytes(bytes[8..12].try_into().unwrap())
    };
    let first = std::fs::read(log.join("0000000000000001")).unwrap();
    assert_eq!(version("0000000000000001"), 1);
    assert_text("notes", &ok(&home, &root, &["cat", "/memories/notes.md"]), "alpha\ngamma\n");

    create_after(&home, &root);
    assert!(std::fs::read(log.join("0000000000000001")).unwrap() == first, "the version-1 segment is untouched");
    assert_eq!(version("0000000000000001.index"), 3, "sealed, with an index of version 3");
    assert_eq!(version("0000000000000002"), 2);
    assert_text("after", &ok(&home, &root, &["cat", "/memories/after.md"]), "six");
    assert_text("notes", &ok(&home, &root, &["cat", "/memories/notes.md"]), "alpha\ngamma\n");
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");

    let gc = ok(&home, &root, &["gc"]);
    assert!(gc.contains("compacted the log"), "{gc}");
    let mut files: Vec<String> =
        std::fs::read_dir(&log).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(files, ["0000000000000003", "0000000000000003.index"]);
    assert_eq!((version("0000000000000003"), version("0000000000000003.index")), (2, 3));
    assert_text("log", &history(&ok(&home, &root, &["log"])), &format!("@7 create /memories/after.md\n{HISTORY}"));
    assert_text("check", ok(&home, &root, &["check", "--read-data"]).lines().last().unwrap(), "no problems found");
}

/// A key command as the first command on a format-6 store: the carry-over is recorded before
/// the command's own change, once; the next open only clears its mark and says nothing, and a
/// later key command records nothing twice.
#[test]
fn a_key_command_first_records_the_carry_over_once() {
    let (dir, root) = fixture("format-6");
    let home = dir.path().join("client");
    let second = dir.path().join("second.key");
    let added = ok(&home, &root, &["key", "add", "--new-key-file", second.to_str().unwrap()]);
    assert!(added.starts_with("added key slot 2"), "{added}");
    assert_eq!(keys(&root)["unrecorded"]["change"], "migrate", "the mark waits for an open");
    assert_text("the next open", &ok(&home, &root, &["cat", "/memories/notes.md"]), "alpha\ngamma\n");
    assert_eq!(keys(&root).get("unrecorded"), None, "the open cleared the mark");
    ok(&home, &root, &["key", "rotate"]);
    let top: Vec<String> = history(&ok(&home, &root, &["log", "--limit", "3"])).lines().map(str::to_owned).collect();
    assert_eq!(top, ["@9 key rotate", "@8 key add slot 2", "@7 key migrate slot 1"]);
}
