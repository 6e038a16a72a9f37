//! Safety, in both dialects: refused paths (every command, every path argument), root guards in
//! every spelling, renames into a directory's own subtree, writes under a file, and malformed
//! input. Each refusal is checked for its exact message (the same in both dialects: these are
//! memfs's own strings, `render.rs`) and for leaving the tree exactly as it was.

use memfs::Dialect;
use serde_json::{Value, json};

use crate::support::Mem;

/// A store with a few files, two levels of directories and a hidden file.
async fn seeded(dialect: Dialect) -> Mem {
    let m = Mem::new(dialect).await;
    m.create("/memories/a.txt", "alpha\n").await;
    m.create("/memories/dir/b.txt", "beta").await;
    m.create("/memories/dir/sub/c.txt", "gamma").await;
    m.create("/memories/.hidden", "h").await;
    m
}

const SEEDED: &[&str] = &[
    r#"/memories/a.txt = "alpha\n""#,
    "/memories/dir/",
    r#"/memories/dir/b.txt = "beta""#,
    "/memories/dir/sub/",
    r#"/memories/dir/sub/c.txt = "gamma""#,
];

/// Both dialects, in turn.
const DIALECTS: [Dialect; 2] = [Dialect::Spec, Dialect::PythonSdk];

/// The tree's state in every form a test compares: the listing in the store's dialect, the
/// full snapshot, and the hidden file.
async fn state(m: &Mem) -> String {
    let hidden = m.content("/memories/.hidden").await;
    format!("{}\n---\n{}\n---\n.hidden = {hidden:?}", m.listing().await, m.snapshot().await)
}

/// Runs `input`, expects exactly `expected` as an error, and checks that nothing changed.
async fn refused(m: &Mem, input: Value, expected: &str) {
    let before = state(m).await;
    m.err(input.clone(), expected).await;
    let after = state(m).await;
    assert_text!(after, before, "[{}] tree changed by refused {input}", m.dialect);
}

/// Every command with `path` in each of its path arguments.
fn every_use_of(path: &str) -> Vec<Value> {
    vec![
        json!({"command": "view", "path": path}),
        json!({"command": "view", "path": path, "view_range": [1, 2]}),
        json!({"command": "create", "path": path, "file_text": "pwned"}),
        json!({"command": "str_replace", "path": path, "old_str": "alpha", "new_str": "pwned"}),
        json!({"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"}),
        json!({"command": "delete", "path": path}),
        json!({"command": "rename", "old_path": path, "new_path": "/memories/moved.txt"}),
        json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": path}),
    ]
}

async fn refuse_everywhere(path: &str, expected: &str) {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        for input in every_use_of(path) {
            refused(&m, input, expected).await;
        }
        m.assert_snapshot(SEEDED).await;
    }
}

// --- refused paths ----------------------------------------------------------------------------

#[tokio::test]
async fn sibling_of_root() {
    // The Python SDK maps this to /memories/foo/x.txt; memfs refuses it.
    refuse_everywhere(
        "/memoriesfoo/x.txt",
        "Path /memoriesfoo/x.txt is outside the /memories directory: it must be /memories or start with /memories/",
    )
    .await;
    refuse_everywhere(
        "/memories..",
        "Path /memories.. is outside the /memories directory: it must be /memories or start with /memories/",
    )
    .await;
}

#[tokio::test]
async fn not_under_root() {
    refuse_everywhere("/etc/passwd", "Path must start with /memories, got: /etc/passwd").await;
    refuse_everywhere("memories/a.txt", "Path must start with /memories, got: memories/a.txt").await;
    refuse_everywhere("/Memories/a.txt", "Path must start with /memories, got: /Memories/a.txt").await;
}

#[tokio::test]
async fn dot_dot_traversal() {
    for path in ["/memories/../x", "/memories/..", "/memories/dir/../../x", "/memories/../../../etc/passwd"] {
        refuse_everywhere(path, &format!("Path {path} would escape /memories directory")).await;
    }
}

#[tokio::test]
async fn dot_dot_out_and_back_in() {
    // Climbing above the root is refused even when the path comes back down.
    refuse_everywhere(
        "/memories/../memories/a.txt",
        "Path /memories/../memories/a.txt would escape /memories directory",
    )
    .await;
}

#[tokio::test]
async fn percent_encoded_traversal() {
    for path in [
        "/memories/%2e%2e%2fetc",
        "/memories/%2E%2E/x",
        "/memories/a%2fb",
        "/memories/a%5cb",
        "/memories/%252e%252e",
        "/memories/%00",
    ] {
        refuse_everywhere(path, &format!("Invalid path {path}: percent-encoded traversal sequences are not allowed"))
            .await;
    }
}

#[tokio::test]
async fn a_percent_sign_alone_is_fine() {
    for dialect in DIALECTS {
        let m = Mem::new(dialect).await;
        m.create("/memories/100%.md", "ok").await;
        m.create("/memories/%41.md", "A").await;
        m.assert_snapshot(&[r#"/memories/%41.md = "A""#, r#"/memories/100%.md = "ok""#]).await;
    }
}

#[tokio::test]
async fn backslashes() {
    for path in ["/memories/..\\x.txt", "/memories\\..\\x", "/memories/a\\b.txt", "/memories/dir\\"] {
        refuse_everywhere(path, &format!("Invalid path {path}: backslashes are not allowed in memory paths")).await;
    }
}

#[tokio::test]
async fn control_characters() {
    for (path, shown) in [
        ("/memories/a\0b", "/memories/a\\0b"),
        ("/memories/a.txt\0", "/memories/a.txt\\0"),
        ("/memories/a\nb", "/memories/a\\nb"),
        ("/memories/a\rb", "/memories/a\\rb"),
        ("/memories/a\tb", "/memories/a\\tb"),
        ("/memories/a\u{1b}b", "/memories/a\\u{1b}b"),
        ("/memories/a\u{7f}b", "/memories/a\\u{7f}b"),
        ("/memories/a\u{85}b", "/memories/a\\u{85}b"),
    ] {
        refuse_everywhere(path, &format!("Invalid path {shown}: control characters are not allowed in memory paths"))
            .await;
    }
}

#[tokio::test]
async fn name_longer_than_255_bytes() {
    let long = format!("/memories/{}", "n".repeat(256));
    refuse_everywhere(&long, &format!("Invalid path {long}: a file or directory name is longer than 255 bytes")).await;
    // Multi-byte: 128 × "é" is 256 bytes.
    let long = format!("/memories/dir/{}.txt", "é".repeat(128));
    refuse_everywhere(&long, &format!("Invalid path {long}: a file or directory name is longer than 255 bytes")).await;
    // 255 bytes is accepted.
    for dialect in DIALECTS {
        let m = Mem::new(dialect).await;
        let name = "n".repeat(255);
        m.create(&format!("/memories/{name}"), "ok").await;
        m.assert_snapshot(&[&format!("/memories/{name} = \"ok\"")]).await;
    }
}

#[tokio::test]
async fn path_longer_than_4096_bytes() {
    // 9 + 16 × 255 + 7 = 4096 bytes, every name within 255 bytes.
    let mut path = String::from("/memories");
    for i in 0..16 {
        path.push('/');
        path.push_str(&format!("{i:x}").repeat(254).chars().take(254).collect::<String>());
    }
    path.push_str("/abcdef");
    assert_eq!(path.len(), 4096);
    let too_long = format!("{path}g");
    refuse_everywhere(&too_long, "Invalid path: it is 4097 bytes long, the limit is 4096 bytes").await;
    let far_too_long = format!("/memories/{}", "a/".repeat(5000));
    refuse_everywhere(&far_too_long, "Invalid path: it is 10010 bytes long, the limit is 4096 bytes").await;
    for dialect in DIALECTS {
        let m = Mem::new(dialect).await;
        m.create(&path, "deep").await;
        m.assert_content(&path, "deep").await;
    }
}

// --- the root ---------------------------------------------------------------------------------

const ROOT_SPELLINGS: [&str; 7] = [
    "/memories",
    "/memories/",
    "/memories/.",
    "/memories//",
    "/memories/a/..",
    "/memories/dir/sub/../..",
    "/memories/./",
];

#[tokio::test]
async fn delete_root_in_every_spelling() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        for path in ROOT_SPELLINGS {
            refused(&m, json!({"command": "delete", "path": path}), "Cannot delete the /memories directory itself")
                .await;
        }
        m.assert_snapshot(SEEDED).await;
    }
}

#[tokio::test]
async fn rename_root_in_every_spelling() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        for path in ROOT_SPELLINGS {
            for new_path in ["/memories/x", "/memories/x/y", "/memories/dir/moved"] {
                refused(
                    &m,
                    json!({"command": "rename", "old_path": path, "new_path": new_path}),
                    "Cannot rename the /memories directory itself",
                )
                .await;
            }
        }
        m.assert_snapshot(SEEDED).await;
    }
}

#[tokio::test]
async fn root_as_destination_or_create_target() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        let prefix = if dialect == Dialect::Spec { "Error: " } else { "" };
        for path in ["/memories", "/memories/", "/memories/a/.."] {
            refused(
                &m,
                json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": path}),
                &format!("{prefix}The destination {path} already exists"),
            )
            .await;
            refused(
                &m,
                json!({"command": "create", "path": path, "file_text": "x"}),
                &format!("{prefix}File {path} already exists"),
            )
            .await;
        }
    }
}

// --- rename into itself -----------------------------------------------------------------------

#[tokio::test]
async fn rename_directory_into_its_subtree() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        for (old, new) in [
            ("/memories/dir", "/memories/dir/inside"),
            ("/memories/dir", "/memories/dir/new/deeper/x"),
            ("/memories/dir/", "/memories//dir/inside"),
            ("/memories/dir", "/memories/dir/sub/inside"),
            ("/memories/dir/sub", "/memories/dir/sub/x/y"),
        ] {
            refused(
                &m,
                json!({"command": "rename", "old_path": old, "new_path": new}),
                &format!("Cannot rename {old} to {new}: a directory cannot be moved into itself"),
            )
            .await;
        }
        // Onto itself: the destination exists.
        let prefix = if dialect == Dialect::Spec { "Error: " } else { "" };
        refused(
            &m,
            json!({"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/dir"}),
            &format!("{prefix}The destination /memories/dir already exists"),
        )
        .await;
        m.assert_snapshot(SEEDED).await;
    }
}

/// A rename that fails leaves no directory behind (the Python SDK creates the destination's
/// parents before it finds the source missing).
#[tokio::test]
async fn failed_rename_creates_no_directories() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        let prefix = if dialect == Dialect::Spec { "Error: " } else { "" };
        refused(
            &m,
            json!({"command": "rename", "old_path": "/memories/zz.txt", "new_path": "/memories/q1/q2.txt"}),
            &format!("{prefix}The path /memories/zz.txt does not exist"),
        )
        .await;
        refused(
            &m,
            json!({"command": "rename", "old_path": "/memories/zz", "new_path": "/memories/dir/new1/new2/x"}),
            &format!("{prefix}The path /memories/zz does not exist"),
        )
        .await;
        m.assert_snapshot(SEEDED).await;
    }
}

// --- a file in the way ------------------------------------------------------------------------

#[tokio::test]
async fn create_under_a_file() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        for (path, file) in [
            ("/memories/a.txt/b.txt", "/memories/a.txt"),
            ("/memories//a.txt/x/y.txt", "/memories/a.txt"),
            ("/memories/dir/b.txt/c/d.txt", "/memories/dir/b.txt"),
        ] {
            refused(
                &m,
                json!({"command": "create", "path": path, "file_text": "x"}),
                &format!("The path {path} is not valid: {file} is a file, not a directory"),
            )
            .await;
        }
        refused(
            &m,
            json!({"command": "rename", "old_path": "/memories/dir/sub", "new_path": "/memories/a.txt/sub"}),
            "The path /memories/a.txt/sub is not valid: /memories/a.txt is a file, not a directory",
        )
        .await;
        m.assert_snapshot(SEEDED).await;
    }
}

#[tokio::test]
async fn reads_and_edits_under_a_file_do_not_exist() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        let spec = dialect == Dialect::Spec;
        let path = "/memories/a.txt/b.txt";
        refused(
            &m,
            json!({"command": "view", "path": path}),
            &format!("The path {path} does not exist. Please provide a valid path."),
        )
        .await;
        refused(
            &m,
            json!({"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"}),
            &if spec {
                format!("Error: The path {path} does not exist. Please provide a valid path.")
            } else {
                format!("The path {path} does not exist. Please provide a valid path.")
            },
        )
        .await;
        refused(
            &m,
            json!({"command": "insert", "path": path, "insert_line": 0, "insert_text": "b"}),
            &if spec {
                format!("Error: The path {path} does not exist")
            } else {
                format!("The path {path} does not exist. Please provide a valid path.")
            },
        )
        .await;
        refused(
            &m,
            json!({"command": "delete", "path": path}),
            &format!("{}The path {path} does not exist", if spec { "Error: " } else { "" }),
        )
        .await;
    }
}

// --- malformed input --------------------------------------------------------------------------

#[tokio::test]
async fn missing_and_mistyped_fields() {
    let cases = [
        (json!({"command": "view"}), "Invalid input for command `view`: missing required field `path`"),
        (json!({"command": "view", "path": null}), "Invalid input for command `view`: missing required field `path`"),
        (
            json!({"command": "view", "path": 42}),
            "Invalid input for command `view`: field `path` must be a string, got 42",
        ),
        (
            json!({"command": "create", "path": "/memories/n.txt"}),
            "Invalid input for command `create`: missing required field `file_text`",
        ),
        (
            json!({"command": "create", "path": "/memories/n.txt", "file_text": null}),
            "Invalid input for command `create`: missing required field `file_text`",
        ),
        (
            json!({"command": "create", "path": "/memories/n.txt", "file_text": ["a"]}),
            "Invalid input for command `create`: field `file_text` must be a string, got [\"a\"]",
        ),
        (
            json!({"command": "str_replace", "path": "/memories/a.txt", "new_str": "x"}),
            "Invalid input for command `str_replace`: missing required field `old_str`",
        ),
        (
            json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": 5, "new_str": "q"}),
            "Invalid input for command `str_replace`: field `old_str` must be a string, got 5",
        ),
        (
            json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "alpha", "new_str": false}),
            "Invalid input for command `str_replace`: field `new_str` must be a string, got false",
        ),
        (
            json!({"command": "insert", "path": "/memories/a.txt", "insert_text": "x"}),
            "Invalid input for command `insert`: missing required field `insert_line`",
        ),
        (
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": 0}),
            "Invalid input for command `insert`: missing required field `insert_text`",
        ),
        (
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": 1.5, "insert_text": "x"}),
            "Invalid input for command `insert`: field `insert_line` must be an integer, got 1.5",
        ),
        (
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": "1", "insert_text": "x"}),
            "Invalid input for command `insert`: field `insert_line` must be an integer, got \"1\"",
        ),
        (
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": true, "insert_text": "x"}),
            "Invalid input for command `insert`: field `insert_line` must be an integer, got true",
        ),
        (
            json!({"command": "view", "path": "/memories/a.txt", "view_range": [1.5, 2]}),
            "Invalid input for command `view`: field `view_range` must be an array of two integers [start_line, end_line], got [1.5,2]",
        ),
        (
            json!({"command": "view", "path": "/memories/a.txt", "view_range": "1-2"}),
            "Invalid input for command `view`: field `view_range` must be an array of two integers [start_line, end_line], got \"1-2\"",
        ),
        (json!({"command": "delete"}), "Invalid input for command `delete`: missing required field `path`"),
        (
            json!({"command": "rename", "old_path": "/memories/a.txt"}),
            "Invalid input for command `rename`: missing required field `new_path`",
        ),
        (
            json!({"command": "rename", "new_path": "/memories/b.txt"}),
            "Invalid input for command `rename`: missing required field `old_path`",
        ),
        (
            json!({"path": "/memories"}),
            "Invalid input: missing required field `command` (one of: view, create, str_replace, insert, delete, rename)",
        ),
        (
            json!({"command": null, "path": "/memories"}),
            "Invalid input: missing required field `command` (one of: view, create, str_replace, insert, delete, rename)",
        ),
        (
            json!({"command": "undo"}),
            "Unknown command: undo. Valid commands are: view, create, str_replace, insert, delete, rename",
        ),
        (
            json!({"command": "View", "path": "/memories"}),
            "Unknown command: View. Valid commands are: view, create, str_replace, insert, delete, rename",
        ),
        (
            json!({"command": 5}),
            "Unknown command: 5. Valid commands are: view, create, str_replace, insert, delete, rename",
        ),
        (json!([1]), "Invalid input: expected a JSON object with a `command` field, got an array"),
        (json!("view"), "Invalid input: expected a JSON object with a `command` field, got a string"),
        (json!(null), "Invalid input: expected a JSON object with a `command` field, got null"),
    ];
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        for (input, expected) in &cases {
            refused(&m, input.clone(), expected).await;
        }
        m.assert_snapshot(SEEDED).await;
    }
}

/// `python-sdk`: an omitted `new_str` is named (the SDK leaks a `TypeError`); `spec` deletes.
#[tokio::test]
async fn omitted_new_str() {
    let m = seeded(Dialect::PythonSdk).await;
    refused(
        &m,
        json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "alpha"}),
        "Invalid input for command `str_replace`: missing required field `new_str`",
    )
    .await;
    let m = seeded(Dialect::Spec).await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "alpha"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t\n     2\t",
    )
    .await;
    m.assert_content("/memories/a.txt", "\n").await;
}

/// An integral float is an integer; unknown extra fields are ignored.
#[tokio::test]
async fn integral_float_and_extra_fields_accepted() {
    for dialect in DIALECTS {
        let m = seeded(dialect).await;
        m.ok(
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": 1.0, "insert_text": "one", "extra": [1]}),
            "The file /memories/a.txt has been edited.",
        )
        .await;
        m.assert_content("/memories/a.txt", "alpha\none\n").await;
        m.ok(
            json!({"command": "view", "path": "/memories/a.txt", "view_range": [2.0, -1.0], "unknown": true}),
            "Here's the content of /memories/a.txt with line numbers:\n     2\tone\n     3\t",
        )
        .await;
    }
}
