//! Issue 41, A1: a writer that missed a rotation. A `memfs exec` session opened before
//! `memfs key remove 2 --rotate` (as agents keep one open, and `mcp`, `serve`, `ui` and the
//! packages keep a store open) writes after it. Its first attempt plans on the head it knew,
//! from before the rotation, with the keys it held then; that attempt loses the race to the
//! rotation's commit and runs again under the new keys. Nothing it sealed under the retired
//! epoch may reach storage on the way: the attacker holds the removed key file and keeps every
//! version of every object (the folder's log, a versioned bucket on S3), and tries every key
//! the removed file unwraps from every copy of `memfs.keys` on everything stored after the
//! rotation.

use serde_json::json;

use crate::rotation::{Team, bobs_keys, contains, open_any};
use crate::support::{Session, Versions, assert_text};
use crate::versioned::VersionedBucket;

/// Written by the session after the rotation: in a small file, and in one large enough that
/// its commit stores its objects ahead of the head swap on object storage (past four times the
/// head's budget of objects carried unwritten).
const AFTER: &str = "AFTER-ROTATION-TEXT";

#[test]
fn a_session_open_across_a_rotation_stores_nothing_the_removed_key_opens_in_a_folder() {
    a_session_open_across_a_rotation(&Team::new());
}

#[test]
fn a_session_open_across_a_rotation_stores_nothing_the_removed_key_opens_in_a_versioned_bucket() {
    let Some(bucket) = VersionedBucket::new() else { return };
    a_session_open_across_a_rotation(&Team::in_bucket(bucket));
}

/// The attack on `team`: a session opened and used before the rotation writes after it; then
/// every key Bob's removed key file unwraps from any copy of `memfs.keys` is tried on every
/// version of every object stored since the rotation.
fn a_session_open_across_a_rotation(team: &Team) {
    let mut session = Session::start(team.memfs().arg("exec"));
    let view = session.ask(&json!({"command": "view", "path": "/memories/before.md"}).to_string());
    assert!(view.contains("BEFORE-ROTATION-TEXT"), "{view}");

    let removed = team.ok(&["key", "remove", "2", "--rotate", "--yes"]);
    assert_text(
        "remove --rotate",
        &removed,
        "removed key slot 2\nrotated the keys: key epoch 1, wrapped to key slot 1\n",
    );
    let at_rotation = team.versions();

    // The large file first: its first attempt plans on the head from before the rotation.
    let large = format!("{AFTER} large\n{}", "a line of the large file, to pass the budget\n".repeat(4_000));
    let writes = [
        json!({"command": "create", "path": "/memories/large.md", "file_text": large}),
        json!({"command": "create", "path": "/memories/after.md", "file_text": AFTER}),
        json!({"command": "str_replace", "path": "/memories/before.md", "old_str": "BEFORE", "new_str": "EDITED-AFTER"}),
    ];
    for write in &writes {
        let answer = session.ask(&write.to_string());
        assert!(answer.ends_with(r#""is_error":false}"#), "{write}: {answer}");
    }
    session.finish();

    let history = team.versions();
    let copies: Vec<(String, Vec<u8>)> =
        history.iter().map(|((path, _), bytes)| (path.clone(), bytes.clone())).collect();
    let keys = bobs_keys(&copies, &team.bob());
    assert!(!keys.is_empty(), "Bob's key file opened no copy of memfs.keys");
    let since: Versions = history.into_iter().filter(|(k, _)| !at_rotation.contains_key(k)).collect();
    assert!(since.len() > 3, "only {} versions stored after the rotation: the session wrote nothing?", since.len());
    for ((path, version), sealed) in since.iter().filter(|((p, _), _)| p != "memfs.keys") {
        let opened = open_any(&keys, path, sealed);
        assert!(opened.is_none(), "Bob's removed key file opened {path} ({version}), stored after the rotation");
    }
    // The attack is real: the same keys open what was stored before the rotation.
    let before_text = at_rotation
        .iter()
        .filter_map(|((path, _), sealed)| open_any(&keys, path, sealed))
        .any(|plain| contains(&plain, "BEFORE-ROTATION-TEXT"));
    assert!(before_text, "Bob should read what was written before the rotation: the test proves nothing");

    // The owner reads everything the session wrote, and the store checks clean.
    assert_text("cat", &team.ok(&["cat", "/memories/after.md"]), AFTER);
    assert_text("cat", &team.ok(&["cat", "/memories/before.md"]), "EDITED-AFTER-ROTATION-TEXT");
    assert!(team.ok(&["cat", "/memories/large.md"]).starts_with("AFTER-ROTATION-TEXT large\n"));
    assert!(team.ok(&["check", "--read-data"]).ends_with("no problems found\n"));
}
