//! Issue 17, revocation: a key slot removed with `--rotate`, end to end through the binary, on
//! a local store folder whose log keeps every version of every object ever written (as a
//! versioned bucket does). The attacker holds the removed key file and every byte the folder
//! ever held; the test tries every key it can unwrap from every version of `memfs.keys` on
//! every object, and searches what opens for the text written after the rotation.

use std::path::Path;
use std::process::Command;

use memfs_core::ObjectId;
use memfs_crypt::{Credential, KeyFile, KeySlots, Keyring, ObjectKeys, ObjectKind};
use serde_json::{Value, json};

use crate::support::{self, assert_text, log_history, run, text, unhex};
use crate::versioned::VersionedBucket;

const KINDS: [ObjectKind; 5] =
    [ObjectKind::Blob, ObjectKind::Dir, ObjectKind::Commit, ObjectKind::Head, ObjectKind::Policy];

/// A store with the owner's key file (slot 1) and Bob's (slot 2), and a file written: in a
/// folder, or in a versioned bucket.
pub(crate) struct Team {
    dir: tempfile::TempDir,
    /// `None`: the folder `store` in `dir`.
    bucket: Option<VersionedBucket>,
}

impl Team {
    pub(crate) fn new() -> Team {
        Team::set_up(None)
    }

    /// The team's store under `team/` in `bucket`.
    pub(crate) fn in_bucket(bucket: VersionedBucket) -> Team {
        Team::set_up(Some(bucket))
    }

    fn set_up(bucket: Option<VersionedBucket>) -> Team {
        let team = Team { dir: tempfile::tempdir().unwrap(), bucket };
        support::succeeds("memfs init", &run(team.memfs().arg("init"), ""));
        let bob = team.bob();
        let added = team.ok(&["key", "add", "--new-key-file", bob.to_str().unwrap()]);
        assert_text("key add", &added, &format!("added key slot 2 (key file {})\n", bob.display()));
        team.exec(&[json!({"command": "create", "path": "/memories/before.md", "file_text": "BEFORE-ROTATION-TEXT"})]);
        team
    }

    pub(crate) fn folder(&self) -> std::path::PathBuf {
        self.dir.path().join("store")
    }

    pub(crate) fn bob(&self) -> std::path::PathBuf {
        self.dir.path().join("bob.key")
    }

    fn url(&self) -> String {
        match &self.bucket {
            Some(bucket) => bucket.url("team"),
            None => format!("file://{}", self.folder().display()),
        }
    }

    /// Every version of every object the store ever held, as an attacker who keeps them has it.
    pub(crate) fn versions(&self) -> support::Versions {
        match &self.bucket {
            Some(bucket) => bucket.history("team"),
            None => support::log_versions(&self.folder()),
        }
    }

    pub(crate) fn memfs(&self) -> Command {
        let mut cmd = support::memfs(&self.dir.path().join("home"));
        cmd.envs(self.bucket.iter().flat_map(VersionedBucket::env));
        cmd.arg("--store").arg(self.url());
        cmd.arg("--key-file").arg(self.dir.path().join("team.key"));
        cmd
    }

    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        support::ok(&format!("memfs {args:?}"), &run(self.memfs().args(args), ""))
    }

    fn exec(&self, lines: &[Value]) -> String {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let out = run(self.memfs().arg("exec"), input);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let answers = text(&out.stdout);
        assert!(!answers.contains("\"is_error\":true"), "{answers}");
        answers
    }
}

/// Every key Bob can unwrap with his key file from any version of `memfs.keys` ever stored.
pub(crate) fn bobs_keys(history: &[(String, Vec<u8>)], bob: &Path) -> Vec<ObjectKeys> {
    let credential = Credential::KeyFile(KeyFile::read(bob).unwrap());
    keys_opened_by(history, &|slots, id| slots.unlock(&credential, id).ok())
}

/// Every key that `open` (a holder's way into a slot set: its credential) unwraps from any
/// version of `memfs.keys` in `history`.
pub(crate) fn keys_opened_by(
    history: &[(String, Vec<u8>)],
    open: &dyn Fn(&KeySlots, &[u8; 16]) -> Option<memfs_crypt::Opened>,
) -> Vec<ObjectKeys> {
    let mut out = Vec::new();
    for (_, bytes) in history.iter().filter(|(path, _)| path == "memfs.keys") {
        let keys: Value = serde_json::from_slice(bytes).unwrap();
        let id: [u8; 16] = unhex(keys["store_id"].as_str().unwrap()).unwrap().try_into().unwrap();
        let slots: KeySlots = serde_json::from_value(keys["slots"].clone()).unwrap();
        let Some(opened) = open(&slots, &id) else { continue };
        let keyring: Keyring = serde_json::from_value(keys["keyring"].clone()).unwrap();
        out.push(keyring.open(&opened.into_root(), &id).unwrap().objects);
    }
    out
}

/// Every object of `history` tried with `keys` (a removed holder's, from every version of
/// `memfs.keys`): none written after the last rotation (the last `memfs.keys`) opens, none
/// that opens holds the text written after it (`AFTER-ROTATION-TEXT`, `EDITED-AFTER`), and some
/// written before do open (else the test proves nothing). Returns how many opened.
pub(crate) fn opened_before_only(who: &str, history: &[(String, Vec<u8>)], keys: &[ObjectKeys]) -> usize {
    let rotation = history.iter().rposition(|(path, _)| path == "memfs.keys").unwrap();
    let mut opened_before = 0;
    for (i, (path, sealed)) in history.iter().enumerate().filter(|(_, (p, _))| p != "memfs.keys") {
        let plain = open_any(keys, path, sealed);
        if i > rotation {
            assert!(plain.is_none(), "{who} opened {path}, written after the rotation");
        } else if let Some(plain) = plain {
            opened_before += 1;
            assert!(!contains(&plain, "AFTER-ROTATION-TEXT") && !contains(&plain, "EDITED-AFTER"));
        }
    }
    assert!(opened_before > 0, "{who} opened nothing from before the rotation: the test proves nothing");
    opened_before
}

/// The plaintext of a stored object (at `path`) under any of `keys`, as any kind.
pub(crate) fn open_any(keys: &[ObjectKeys], path: &str, sealed: &[u8]) -> Option<Vec<u8>> {
    let id = match path {
        "head" => ObjectId::from_bytes([0; 32]),
        "gc.state" => ObjectId::from_bytes([0xff; 32]),
        _ => ObjectId::from_bytes(unhex(path.rsplit('/').next()?)?.try_into().ok()?),
    };
    keys.iter().find_map(|k| KINDS.iter().find_map(|kind| k.open(*kind, &id, sealed).ok()))
}

pub(crate) fn contains(plain: &[u8], text: &str) -> bool {
    plain.windows(text.len()).any(|w| w == text.as_bytes())
}

/// After `key remove 2 --rotate`, Bob's key file and every recorded byte open nothing written
/// after the rotation, the text written since included; before it, they opened everything
/// (the attack is real: without the rotation, see the next test).
#[test]
fn a_removed_key_file_opens_nothing_written_after_the_rotation() {
    let team = Team::new();
    let removed = team.ok(&["key", "remove", "2", "--rotate", "--yes"]);
    assert_text(
        "remove --rotate",
        &removed,
        "removed key slot 2\nrotated the keys: key epoch 1, wrapped to key slot 1\n",
    );
    team.exec(&[
        json!({"command": "create", "path": "/memories/after.md", "file_text": "AFTER-ROTATION-TEXT"}),
        json!({"command": "str_replace", "path": "/memories/before.md", "old_str": "BEFORE", "new_str": "EDITED-AFTER"}),
    ]);

    let history = log_history(&team.folder());
    let keys = bobs_keys(&history, &team.bob());
    assert!(!keys.is_empty(), "Bob's key file opened no version of memfs.keys");
    let rotation = history.iter().rposition(|(path, _)| path == "memfs.keys").unwrap();
    opened_before_only("Bob", &history, &keys);
    assert!(
        history
            .iter()
            .take(rotation)
            .any(|(p, s)| open_any(&keys, p, s).is_some_and(|plain| contains(&plain, "BEFORE-ROTATION-TEXT"))),
        "Bob should read what was written before the rotation"
    );
    // The owner reads everything, and the store checks clean.
    assert_text("cat", &team.ok(&["cat", "/memories/after.md"]), "AFTER-ROTATION-TEXT");
    assert_text("cat", &team.ok(&["cat", "/memories/before.md"]), "EDITED-AFTER-ROTATION-TEXT");
    let log = team.ok(&["log"]);
    let rotate = log.lines().find(|l| l.starts_with("@3 ")).unwrap_or_default();
    assert!(rotate.ends_with(" - key rotate slot 2"), "{log}");
    assert!(team.ok(&["check", "--read-data"]).ends_with("no problems found\n"));
}

/// The same without `--rotate`: the removed key file still opens what is written next. This
/// is the attack the rotation meets, shown to work, so the test above can fail.
#[test]
fn without_a_rotation_a_removed_key_file_still_reads_new_text() {
    let team = Team::new();
    assert_text("remove", &team.ok(&["key", "remove", "2", "--yes"]), "removed key slot 2\n");
    team.exec(&[json!({"command": "create", "path": "/memories/after.md", "file_text": "AFTER-REMOVAL-TEXT"})]);
    let history = log_history(&team.folder());
    let keys = bobs_keys(&history, &team.bob());
    let removal = history.iter().rposition(|(path, _)| path == "memfs.keys").unwrap();
    assert!(
        history
            .iter()
            .skip(removal)
            .any(|(p, s)| open_any(&keys, p, s).is_some_and(|plain| contains(&plain, "AFTER-REMOVAL-TEXT"))),
        "without a rotation, the removed key file reads what is written after"
    );
}

/// `--dry-run` says what a rotation would do and writes nothing; the rotation then does it,
/// and a key file still in a slot opens the store under the new root.
#[test]
fn a_dry_run_says_what_a_rotation_would_do() {
    let team = Team::new();
    let before = log_history(&team.folder()).len();
    assert_text(
        "dry run",
        &team.ok(&["key", "rotate", "--dry-run"]),
        "would rotate the keys: key epoch 1, wrapped to key slots 1 and 2\n",
    );
    assert_eq!(log_history(&team.folder()).len(), before, "a dry run wrote");
    assert_text(
        "rotate",
        &team.ok(&["key", "rotate"]),
        "rotated the keys: key epoch 1, wrapped to key slots 1 and 2\n",
    );
    // Bob's key file, still a slot, opens the store under the new root; its first open
    // confirms that root, in a commit of its own.
    let bob = || {
        let mut bob = support::memfs(&team.dir.path().join("bob-home"));
        bob.arg("--store").arg(format!("file://{}", team.folder().display())).arg("--key-file").arg(team.bob());
        bob
    };
    let out = run(bob().args(["cat", "/memories/before.md"]), "");
    assert_text("bob", &support::succeeds("bob cat", &out), "BEFORE-ROTATION-TEXT");
    assert_text(
        "bob's first open",
        &String::from_utf8_lossy(&out.stderr),
        "memfs: key slot 2 confirmed the root key of the last `memfs key rotate`; recorded as @4 (see `memfs log`)\n",
    );
    let log = support::ok("bob log", &run(bob().args(["log", "--limit", "2"]), ""));
    let lines: Vec<&str> = log.lines().map(|l| l.split_once(" - ").map_or(l, |(_, what)| what)).collect();
    assert_eq!(lines, ["key confirm slot 2", "key rotate"]);
    // The second open has nothing to confirm.
    assert_text(
        "bob again",
        &support::ok("bob cat", &run(bob().args(["cat", "/memories/before.md"]), "")),
        "BEFORE-ROTATION-TEXT",
    );
}

/// `key reseal --history` after `key remove --rotate`: every live object is sealed under the
/// new epoch, so the removed key file, with every key it ever unwrapped, opens nothing the
/// store holds; before the reseal it still opened what was written before the rotation. A
/// second reseal finds nothing left to do (an interrupted one finishes the same way).
#[test]
fn after_a_reseal_nothing_live_opens_with_the_removed_key_file() {
    let team = Team::new();
    let keys = bobs_keys(&log_history(&team.folder()), &team.bob());
    team.ok(&["key", "remove", "2", "--rotate", "--yes"]);
    let live = |team: &Team| -> Vec<(String, Vec<u8>)> {
        support::log_entries(&team.folder())
            .into_iter()
            .filter(|(path, _)| path != "memfs.keys")
            .map(|(path, entry)| (path, entry.bytes()))
            .collect()
    };
    let opened = |team: &Team| live(team).iter().filter(|(p, s)| open_any(&keys, p, s).is_some()).count();
    assert!(opened(&team) > 0, "before the reseal, the old objects open with Bob's keys: the test proves nothing");

    let stored = live(&team).iter().filter(|(path, _)| path.starts_with("objects/")).count();
    let said = team.ok(&["key", "reseal", "--history"]);
    let words: Vec<&str> = said.split(' ').collect();
    assert_eq!(
        (words[0], words[2], words[3], words[4]),
        ("resealed", "of", stored.to_string().as_str(), "stored"),
        "{said}"
    );
    assert!(said.ends_with(" bytes) under key epoch 1\n"), "{said}");
    assert!(words[1].parse::<usize>().unwrap() > 0, "{said}");
    assert_eq!(opened(&team), 0, "a live object still opens with the removed key file");

    let again = team.ok(&["key", "reseal", "--history"]);
    assert_text("again", &again, &format!("resealed 0 of {stored} stored objects (0 bytes) under key epoch 1\n"));
    assert_text("cat", &team.ok(&["cat", "/memories/before.md"]), "BEFORE-ROTATION-TEXT");
    assert!(team.ok(&["check", "--read-data"]).ends_with("no problems found\n"));
}

/// Every record of the store folder's log, as now, added to `recorded`: called after each
/// command, it keeps what a versioned bucket keeps (the log's compaction unlinks segments).
fn record(team: &Team, recorded: &mut Vec<(String, Vec<u8>)>) {
    for entry in log_history(&team.folder()) {
        if !recorded.contains(&entry) {
            recorded.push(entry);
        }
    }
}

/// Issue 17, crypto-erasure: `purge` then `key shred` (with a new key file, the other slot
/// removed). Every byte the folder ever held, with the store's credential after the shred (the
/// new key file), opens nothing that holds the purged text: every version of `memfs.keys`,
/// every key it unwraps, every object as every kind. The old key file, which the shred retired,
/// still opens the old copies: the test can fail, and that is the limit SECURITY.md states.
#[test]
fn after_purge_and_shred_the_current_credential_recovers_nothing_purged() {
    let team = Team::new();
    let mut recorded = Vec::new();
    team.exec(&[
        json!({"command": "create", "path": "/memories/secret.md", "file_text": "PURGED-SECRET-TEXT one"}),
        json!({"command": "create", "path": "/memories/kept.md", "file_text": "KEPT-TEXT"}),
        json!({"command": "str_replace", "path": "/memories/secret.md", "old_str": "one", "new_str": "two"}),
    ]);
    record(&team, &mut recorded);
    team.ok(&["purge", "/memories/secret.md", "--yes"]);
    record(&team, &mut recorded);

    let new_key = team.dir.path().join("new.key");
    let new_key_arg = new_key.to_str().unwrap();
    let refused = support::fails(
        "shred with bob's slot",
        1,
        &run(team.memfs().args(["key", "shred", "--new-key-file", new_key_arg, "--yes"]), ""),
    );
    assert!(refused.contains("key slots 2 would still open the keys the shred destroys"), "{refused}");
    assert!(!new_key.exists(), "a refused shred wrote a key file");
    let plan = team.ok(&["key", "shred", "--new-key-file", new_key_arg, "--remove-other-slots", "--dry-run"]);
    assert_text(
        "dry run",
        &plan,
        "would name and seal every live object again under new address keys and a new key epoch (1), and destroy key epoch 0 and the old address keys\nwould remove key slot 2\nthe store would then open with the new credential only\n",
    );
    assert!(!new_key.exists(), "a dry run wrote a key file");
    let said = team.ok(&["key", "shred", "--new-key-file", new_key_arg, "--remove-other-slots", "--yes"]);
    let lines: Vec<&str> = said.lines().collect();
    assert!(
        lines[0].starts_with("shredded: destroyed key epoch 0 and the old address keys; ")
            && lines[0].ends_with(" live objects named and sealed again under key epoch 1"),
        "{said}"
    );
    assert_eq!(
        lines[1..],
        [
            "removed key slot 2".to_owned(),
            format!("the store now opens with the key file {new_key_arg} only (key slot 1)")
        ]
    );
    record(&team, &mut recorded);

    let purged = |keys: &[ObjectKeys]| {
        recorded
            .iter()
            .filter(|(p, _)| p != "memfs.keys")
            .any(|(p, s)| open_any(keys, p, s).is_some_and(|plain| contains(&plain, "PURGED-SECRET")))
    };
    let now = bobs_keys(&recorded, &new_key);
    assert!(!now.is_empty(), "the new key file opens no version of memfs.keys");
    assert!(!purged(&now), "the current key file recovered purged text from the recorded bytes");
    let old = bobs_keys(&recorded, &team.dir.path().join("team.key"));
    assert!(purged(&old), "the retired key file should still open the old copies: the test proves nothing");

    // The store goes on with the new key file only.
    let mut with_new = support::memfs(&team.dir.path().join("home"));
    with_new.arg("--store").arg(format!("file://{}", team.folder().display())).arg("--key-file").arg(&new_key);
    assert_text("kept", &support::ok("cat", &run(with_new.args(["cat", "/memories/kept.md"]), "")), "KEPT-TEXT");
    let old_refused = support::fails("the old key", 1, &run(team.memfs().args(["cat", "/memories/kept.md"]), ""));
    assert!(old_refused.ends_with("wrong passphrase or key file\n"), "{old_refused}");
    let mut check = support::memfs(&team.dir.path().join("home"));
    check.arg("--store").arg(format!("file://{}", team.folder().display())).arg("--key-file").arg(&new_key);
    assert!(support::ok("check", &run(check.args(["check", "--read-data"]), "")).ends_with("no problems found\n"));
}
