//! The `spec` dialect against the documentation page (`memory_20250818`, "Tool commands" and
//! the worked example): its listing and file-view examples, each command's example input, and
//! every error string the page gives, asserted exactly. Where the page is silent (the exact
//! `str_replace` success sentence, byte sizes below 1 KiB), memfs answers as the Python SDK and
//! that is asserted too.

use memfs::Dialect;
use serde_json::json;

use crate::support::{Mem, listing_header};

async fn mem() -> Mem {
    Mem::new(Dialect::Spec).await
}

const HEADER: &str =
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:";

// --- view -------------------------------------------------------------------------------------

/// The worked example's listing: `1.5K` and `2.0K` files, `4.0K` for the directory.
#[tokio::test]
async fn listing_example() {
    let m = mem().await;
    m.create("/memories/customer_service_guidelines.xml", &"g".repeat(1536)).await;
    m.create("/memories/refund_policies.xml", &"r".repeat(2048)).await;
    m.ok(
        json!({"command": "view", "path": "/memories"}),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
         4.0K\t/memories\n1.5K\t/memories/customer_service_guidelines.xml\n2.0K\t/memories/refund_policies.xml",
    )
    .await;
}

/// "The first view of /memories on an empty store is not an error": header plus one line.
#[tokio::test]
async fn empty_store_listing() {
    mem().await.ok(json!({"command": "view", "path": "/memories"}), &format!("{HEADER}\n4.0K\t/memories")).await;
}

/// The worked example's file view (the page cuts it with `...` after four lines).
#[tokio::test]
async fn file_view_example() {
    let m = mem().await;
    let text = "<guidelines>\n<addressing_customers>\n- Always address customers by their first name\n\
                - Use empathetic language\n</addressing_customers>\n</guidelines>\n";
    m.create("/memories/customer_service_guidelines.xml", text).await;
    let page = "Here's the content of /memories/customer_service_guidelines.xml with line numbers:\n     1\t<guidelines>\n     2\t<addressing_customers>\n     3\t- Always address customers by their first name\n     4\t- Use empathetic language\n...";
    let shown = page.strip_suffix("\n...").expect("the page's example ends with ...");
    m.ok(json!({"command": "view", "path": "/memories/customer_service_guidelines.xml", "view_range": [1, 4]}), shown)
        .await;
    m.ok(
        json!({"command": "view", "path": "/memories/customer_service_guidelines.xml"}),
        &format!("{shown}\n     5\t</addressing_customers>\n     6\t</guidelines>\n     7\t"),
    )
    .await;
}

/// The "Example output" of the file view: width 6, right-aligned, tab, 1-indexed.
#[tokio::test]
async fn line_number_format_example() {
    let m = mem().await;
    let lines: Vec<String> = (1..=100)
        .map(|i| match i {
            1 => "Hello World".to_owned(),
            2 => "This is line two".to_owned(),
            10 => "Line ten".to_owned(),
            100 => "Line one hundred".to_owned(),
            _ => format!("filler {i}"),
        })
        .collect();
    m.create("/memories/notes.txt", &lines.join("\n")).await;
    let header = "Here's the content of /memories/notes.txt with line numbers:\n";
    for (range, shown) in [
        ([1, 2], "     1\tHello World\n     2\tThis is line two"),
        ([10, 10], "    10\tLine ten"),
        ([100, -1], "   100\tLine one hundred"),
    ] {
        m.ok(
            json!({"command": "view", "path": "/memories/notes.txt", "view_range": range}),
            &format!("{header}{shown}"),
        )
        .await;
    }
}

/// More than 999,999 lines (after splitting on `\n`) is an error, with the page's string;
/// exactly 999,999 is shown, the last number using all six columns.
#[tokio::test]
async fn line_limit_boundary() {
    let m = mem().await;
    // 999,999 elements after split('\n'): accepted.
    m.create("/memories/ok.txt", &format!("{}line", "line\n".repeat(999_998))).await;
    m.ok(
        json!({"command": "view", "path": "/memories/ok.txt", "view_range": [999_998, -1]}),
        "Here's the content of /memories/ok.txt with line numbers:\n999998\tline\n999999\tline",
    )
    .await;
    // 1,000,000 elements: refused.
    m.create("/memories/big.txt", &format!("{}line", "line\n".repeat(999_999))).await;
    m.err(
        json!({"command": "view", "path": "/memories/big.txt"}),
        "File /memories/big.txt exceeds maximum line limit of 999,999 lines.",
    )
    .await;
    // 999,999 lines and a final newline are 1,000,000 elements too.
    m.create("/memories/nl.txt", &"line\n".repeat(999_999)).await;
    m.err(
        json!({"command": "view", "path": "/memories/nl.txt", "view_range": [1, 2]}),
        "File /memories/nl.txt exceeds maximum line limit of 999,999 lines.",
    )
    .await;
}

/// View error: "The path {path} does not exist. Please provide a valid path." (no `Error: `).
#[tokio::test]
async fn view_missing() {
    mem()
        .await
        .err(
            json!({"command": "view", "path": "/memories/notes.txt"}),
            "The path /memories/notes.txt does not exist. Please provide a valid path.",
        )
        .await;
}

/// "Excludes hidden items (files starting with .) and node_modules", at any depth; the
/// `python-sdk` dialect lists `node_modules` (and also hides dot names).
#[tokio::test]
async fn hidden_and_node_modules_excluded() {
    let m = mem().await;
    m.create("/memories/node_modules/lib.js", "x").await;
    m.create("/memories/proj/node_modules/dep/index.js", "x").await;
    m.create("/memories/proj/src.rs", "fn").await;
    m.create("/memories/.hidden.txt", "h").await;
    m.create("/memories/.git/config", "h").await;
    m.create("/memories/proj/.env", "h").await;
    m.ok(
        json!({"command": "view", "path": "/memories"}),
        &format!("{HEADER}\n4.0K\t/memories\n4.0K\t/memories/proj/\n2B\t/memories/proj/src.rs"),
    )
    .await;
    let python = m.fs.call_with(&json!({"command": "view", "path": "/memories"}), Dialect::PythonSdk).await;
    assert!(!python.is_error);
    assert_text!(
        python.content,
        format!(
            "{}\n4K\t/memories\n4K\t/memories/node_modules/\n1B\t/memories/node_modules/lib.js\n4K\t/memories/proj/\n\
             4K\t/memories/proj/node_modules/\n2B\t/memories/proj/src.rs",
            listing_header("/memories", Dialect::PythonSdk)
        )
    );
}

/// "Shows human-readable sizes (for example, 5.5K, 1.2M)"; directories `4.0K`.
#[tokio::test]
async fn human_readable_sizes() {
    let m = mem().await;
    m.create("/memories/five.txt", &"5".repeat(5632)).await;
    m.create("/memories/mega.bin", &"m".repeat(1_234_567)).await;
    m.create("/memories/small.txt", "hello").await;
    m.create("/memories/sub/x.txt", "").await;
    m.ok(
        json!({"command": "view", "path": "/memories"}),
        &format!(
            "{HEADER}\n4.0K\t/memories\n5.5K\t/memories/five.txt\n1.2M\t/memories/mega.bin\n5B\t/memories/small.txt\n\
             4.0K\t/memories/sub/\n0B\t/memories/sub/x.txt"
        ),
    )
    .await;
}

// --- create -----------------------------------------------------------------------------------

/// The page's create example, then "Error: File {path} already exists".
#[tokio::test]
async fn create_example() {
    let m = mem().await;
    let text = "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n";
    m.ok(
        json!({"command": "create", "path": "/memories/notes.txt", "file_text": text}),
        "File created successfully at: /memories/notes.txt",
    )
    .await;
    m.err(
        json!({"command": "create", "path": "/memories/notes.txt", "file_text": "other"}),
        "Error: File /memories/notes.txt already exists",
    )
    .await;
    m.assert_snapshot(&[
        r#"/memories/notes.txt = "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n""#,
    ])
    .await;
}

// --- str_replace ------------------------------------------------------------------------------

/// The page's str_replace example: "The memory file has been edited." and a snippet.
#[tokio::test]
async fn str_replace_example() {
    let m = mem().await;
    m.create("/memories/preferences.txt", "Name: Ada\nFavorite color: blue\nFood: pasta\n").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/preferences.txt", "old_str": "Favorite color: blue", "new_str": "Favorite color: green"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    1\tName: Ada\n     2\tFavorite color: green\n     3\tFood: pasta\n     4\t",
    )
    .await;
    m.assert_content("/memories/preferences.txt", "Name: Ada\nFavorite color: green\nFood: pasta\n").await;
}

/// str_replace errors: missing file and directory ("file does not exist"), not found,
/// duplicate; nothing changes.
#[tokio::test]
async fn str_replace_errors() {
    let m = mem().await;
    m.create("/memories/dir/preferences.txt", "blue\nred\nblue\n").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/preferences.txt", "old_str": "blue", "new_str": "green"}),
        "Error: The path /memories/preferences.txt does not exist. Please provide a valid path.",
    )
    .await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/dir", "old_str": "blue", "new_str": "green"}),
        "Error: The path /memories/dir does not exist. Please provide a valid path.",
    )
    .await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/dir/preferences.txt", "old_str": "green", "new_str": "x"}),
        "No replacement was performed, old_str `green` did not appear verbatim in /memories/dir/preferences.txt.",
    )
    .await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/dir/preferences.txt", "old_str": "blue", "new_str": "x"}),
        "No replacement was performed. Multiple occurrences of old_str `blue` in lines: 1, 3. Please ensure it is unique",
    )
    .await;
    m.assert_snapshot(&["/memories/dir/", r#"/memories/dir/preferences.txt = "blue\nred\nblue\n""#]).await;
}

/// `new_str` is optional on the page: omitted (or null), `old_str` is deleted.
#[tokio::test]
async fn str_replace_without_new_str_deletes() {
    let m = mem().await;
    m.create("/memories/preferences.txt", "Favorite color: blue\nFood: pasta").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/preferences.txt", "old_str": " blue"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    1\tFavorite color:\n     2\tFood: pasta",
    )
    .await;
    m.assert_content("/memories/preferences.txt", "Favorite color:\nFood: pasta").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/preferences.txt", "old_str": "Food: pasta", "new_str": null}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    1\tFavorite color:\n     2\t",
    )
    .await;
    m.assert_content("/memories/preferences.txt", "Favorite color:\n").await;
}

// --- insert -----------------------------------------------------------------------------------

/// The page's insert example: after line 2.
#[tokio::test]
async fn insert_example() {
    let m = mem().await;
    m.create("/memories/todo.txt", "- Task one\n- Task two\n- Task three\n").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/todo.txt", "insert_line": 2, "insert_text": "- Review memory tool documentation\n"}),
        "The file /memories/todo.txt has been edited.",
    )
    .await;
    m.assert_content(
        "/memories/todo.txt",
        "- Task one\n- Task two\n- Review memory tool documentation\n- Task three\n",
    )
    .await;
    // 0 = at the beginning.
    m.ok(
        json!({"command": "insert", "path": "/memories/todo.txt", "insert_line": 0, "insert_text": "TODO"}),
        "The file /memories/todo.txt has been edited.",
    )
    .await;
    m.assert_content(
        "/memories/todo.txt",
        "TODO\n- Task one\n- Task two\n- Review memory tool documentation\n- Task three\n",
    )
    .await;
}

/// insert errors: "Error: The path {path} does not exist" for a missing file and a directory;
/// the range error with the page's wording.
#[tokio::test]
async fn insert_errors() {
    let m = mem().await;
    m.create("/memories/dir/todo.txt", "Line 1\nLine 2").await;
    m.err(
        json!({"command": "insert", "path": "/memories/todo.txt", "insert_line": 0, "insert_text": "x"}),
        "Error: The path /memories/todo.txt does not exist",
    )
    .await;
    m.err(
        json!({"command": "insert", "path": "/memories/dir", "insert_line": 0, "insert_text": "x"}),
        "Error: The path /memories/dir does not exist",
    )
    .await;
    for line in [10, 3, -1] {
        m.err(
            json!({"command": "insert", "path": "/memories/dir/todo.txt", "insert_line": line, "insert_text": "x"}),
            &format!(
                "Error: Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, 2]"
            ),
        )
        .await;
    }
    m.assert_snapshot(&["/memories/dir/", r#"/memories/dir/todo.txt = "Line 1\nLine 2""#]).await;
}

// --- delete -----------------------------------------------------------------------------------

/// The page's delete example; directories are deleted recursively; missing is an error.
#[tokio::test]
async fn delete_example() {
    let m = mem().await;
    m.create("/memories/old_file.txt", "old").await;
    m.create("/memories/archive/2024/notes.txt", "n").await;
    m.create("/memories/keep.txt", "k").await;
    m.ok(json!({"command": "delete", "path": "/memories/old_file.txt"}), "Successfully deleted /memories/old_file.txt")
        .await;
    m.err(
        json!({"command": "delete", "path": "/memories/old_file.txt"}),
        "Error: The path /memories/old_file.txt does not exist",
    )
    .await;
    m.ok(json!({"command": "delete", "path": "/memories/archive"}), "Successfully deleted /memories/archive").await;
    m.assert_snapshot(&[r#"/memories/keep.txt = "k""#]).await;
}

// --- rename -----------------------------------------------------------------------------------

/// The page's rename example, then its two errors; directories rename too.
#[tokio::test]
async fn rename_example() {
    let m = mem().await;
    m.create("/memories/draft.txt", "draft").await;
    m.ok(
        json!({"command": "rename", "old_path": "/memories/draft.txt", "new_path": "/memories/final.txt"}),
        "Successfully renamed /memories/draft.txt to /memories/final.txt",
    )
    .await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/draft.txt", "new_path": "/memories/other.txt"}),
        "Error: The path /memories/draft.txt does not exist",
    )
    .await;
    m.create("/memories/draft.txt", "second draft").await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/draft.txt", "new_path": "/memories/final.txt"}),
        "Error: The destination /memories/final.txt already exists",
    )
    .await;
    m.create("/memories/projects/a/readme.md", "a").await;
    m.ok(
        json!({"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/archive"}),
        "Successfully renamed /memories/projects to /memories/archive",
    )
    .await;
    m.assert_snapshot(&[
        "/memories/archive/",
        "/memories/archive/a/",
        r#"/memories/archive/a/readme.md = "a""#,
        r#"/memories/draft.txt = "second draft""#,
        r#"/memories/final.txt = "draft""#,
    ])
    .await;
}

/// Errors carry `is_error: true` with the page's example content.
#[tokio::test]
async fn error_example() {
    let m = mem().await;
    let result = m.call(json!({"command": "delete", "path": "/memories/notes.txt"})).await;
    assert_text!(result.content, "Error: The path /memories/notes.txt does not exist");
    assert!(result.is_error);
}
