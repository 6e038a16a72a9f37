//! Names, in both dialects: invisible format characters (Unicode Cf: bidi controls, zero-width
//! characters) are refused in every path argument, with the tree unchanged; names equal after
//! NFC are one name, whatever spelling a command uses (COMPAT.md D20, D21).

use memfs::Dialect;
use serde_json::json;

use crate::support::Mem;

const DIALECTS: [Dialect; 2] = [Dialect::Spec, Dialect::PythonSdk];

#[tokio::test]
async fn format_characters_are_refused_everywhere() {
    for dialect in DIALECTS {
        let m = Mem::new(dialect).await;
        m.create("/memories/a.txt", "alpha").await;
        for (path, shown) in [
            ("/memories/txt\u{202e}.exe", "/memories/txt\\u{202e}.exe"),
            ("/memories/a\u{200b}.txt", "/memories/a\\u{200b}.txt"),
            ("/memories/\u{feff}a.txt", "/memories/\\u{feff}a.txt"),
            ("/memories/d\u{2067}/a.txt", "/memories/d\\u{2067}/a.txt"),
        ] {
            let expected = format!(
                "Invalid path {shown}: invisible format characters (such as bidi controls and zero-width spaces) are not allowed in memory paths"
            );
            for input in [
                json!({"command": "view", "path": path}),
                json!({"command": "create", "path": path, "file_text": "x"}),
                json!({"command": "str_replace", "path": path, "old_str": "alpha", "new_str": "x"}),
                json!({"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"}),
                json!({"command": "delete", "path": path}),
                json!({"command": "rename", "old_path": path, "new_path": "/memories/b.txt"}),
                json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": path}),
            ] {
                m.err(input, &expected).await;
            }
        }
        m.assert_snapshot(&[r#"/memories/a.txt = "alpha""#]).await;
    }
}

#[tokio::test]
async fn names_equal_after_nfc_are_one_name() {
    let (nfc, nfd) = ("/memories/caf\u{e9}.md", "/memories/cafe\u{301}.md");
    for dialect in DIALECTS {
        let m = Mem::new(dialect).await;
        m.create(nfd, "first").await;
        // Stored under its NFC spelling, reachable by both; the answers echo the path as sent.
        m.assert_snapshot(&[r#"/memories/café.md = "first""#]).await;
        m.assert_content(nfc, "first").await;
        m.assert_content(nfd, "first").await;
        // The second spelling names the same file, so it already exists.
        let exists = match dialect {
            Dialect::Spec => format!("Error: File {nfc} already exists"),
            _ => format!("File {nfc} already exists"),
        };
        m.err(json!({"command": "create", "path": nfc, "file_text": "second"}), &exists).await;
        m.ok(
            json!({"command": "str_replace", "path": nfd, "old_str": "first", "new_str": "third"}),
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tthird",
        )
        .await;
        m.assert_snapshot(&[r#"/memories/café.md = "third""#]).await;
        m.ok(json!({"command": "delete", "path": nfc}), &format!("Successfully deleted {nfc}")).await;
        m.assert_snapshot(&[]).await;
    }
}
