//! The TypeScript SDK's suite (`tests/lib/tools/BetaLocalFilesystemMemoryTool.test.ts`, see
//! `sdk-reference.md` §7.2), run in the `spec` dialect wherever the TypeScript/documentation
//! behaviour and our `spec` dialect agree. The TS suite calls the handlers directly and matches
//! substrings of the thrown message; the model sees those messages with the runner's `Error: `
//! prefix. Here the whole `spec` answer is asserted exactly (it contains the TS substring).
//!
//! Applied (numbers are the TS test order): 1–7, 9–12, 17–27, 29; 13–15 for their success
//! message only (see below); plus the TS `node_modules` behaviour (excluded at any depth, a
//! `node_modules` directory viewed directly still lists its content).
//!
//! Not applicable:
//! - 28 (symlink to a sibling directory sharing the root's prefix) and 30–32 (symlinks pointing
//!   outside): the virtual tree has no symlinks; 29, the lexical form of 28, is applied;
//! - 33–37 (file and directory permission bits): there is no host filesystem.
//!
//! In conflict (the `spec` dialect follows the documentation page; the page's strings are
//! asserted in `spec_page`):
//! - 8 too many lines: TS says `File {p} has too many lines (N). Maximum is 999,999 lines.`; the
//!   page (and Python) say `File {p} exceeds maximum line limit of 999,999 lines.`;
//! - 13–15 insert result: TS keeps the text as is (`"Line 1\nInserted Line\nLine 2"`); the page
//!   is silent and `spec` uses the Python algorithm, which ends the file with a newline. The
//!   success message agrees and is asserted below, with the content `spec` produces;
//! - 16 insert on a missing file: TS says `The path {p} does not exist. Please provide a valid
//!   path.`; the page says `Error: The path {p} does not exist`;
//! - sizes: TS prints `4K` for a directory; the page's example prints `4.0K`.

use memfs::Dialect;
use serde_json::json;

use crate::support::Mem;

async fn mem() -> Mem {
    Mem::new(Dialect::Spec).await
}

const EMPTY_ROOT: &str = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories";

// --- create -----------------------------------------------------------------------------------

/// TS 1, 'should create a file successfully'.
#[tokio::test]
async fn create_a_file() {
    let m = mem().await;
    m.ok(
        json!({"command": "create", "path": "/memories/test_file.txt", "file_text": "Hello, World!"}),
        "File created successfully at: /memories/test_file.txt",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/test_file.txt = "Hello, World!""#]).await;
}

/// TS 2, 'should create nested directories'.
#[tokio::test]
async fn create_nested_directories() {
    let m = mem().await;
    m.ok(
        json!({"command": "create", "path": "/memories/deep/nested/file.txt", "file_text": "Nested file"}),
        "File created successfully at: /memories/deep/nested/file.txt",
    )
    .await;
    m.assert_snapshot(&[
        "/memories/deep/",
        "/memories/deep/nested/",
        r#"/memories/deep/nested/file.txt = "Nested file""#,
    ])
    .await;
}

/// TS 3, 'should error if file already exists'.
#[tokio::test]
async fn create_error_if_file_already_exists() {
    let m = mem().await;
    m.create("/memories/existing.txt", "Original").await;
    m.err(
        json!({"command": "create", "path": "/memories/existing.txt", "file_text": "New"}),
        "Error: File /memories/existing.txt already exists",
    )
    .await;
    m.assert_content("/memories/existing.txt", "Original").await;
}

// --- view -------------------------------------------------------------------------------------

/// TS 4, 'should view a file with line numbers'.
#[tokio::test]
async fn view_a_file() {
    let m = mem().await;
    m.create("/memories/view_test.txt", "Line 1\nLine 2\nLine 3").await;
    m.ok(
        json!({"command": "view", "path": "/memories/view_test.txt"}),
        "Here's the content of /memories/view_test.txt with line numbers:\n     1\tLine 1\n     2\tLine 2\n     3\tLine 3",
    )
    .await;
}

/// TS 5, 'should view a directory' (TS checks substrings; sizes in the page's format).
#[tokio::test]
async fn view_a_directory() {
    let m = mem().await;
    m.create("/memories/dir/file1.txt", "File 1").await;
    m.create("/memories/dir/file2.txt", "File 2").await;
    m.ok(
        json!({"command": "view", "path": "/memories/dir"}),
        "Here're the files and directories up to 2 levels deep in /memories/dir, excluding hidden items and node_modules:\n\
         4.0K\t/memories/dir\n6B\t/memories/dir/file1.txt\n6B\t/memories/dir/file2.txt",
    )
    .await;
}

/// TS 6, 'should view file with range'.
#[tokio::test]
async fn view_file_with_range() {
    let m = mem().await;
    m.create("/memories/range_test.txt", "Line 1\nLine 2\nLine 3\nLine 4\nLine 5").await;
    m.ok(
        json!({"command": "view", "path": "/memories/range_test.txt", "view_range": [2, 4]}),
        "Here's the content of /memories/range_test.txt with line numbers:\n     2\tLine 2\n     3\tLine 3\n     4\tLine 4",
    )
    .await;
}

/// TS 7, 'should error for non-existent file' (the page gives this string without `Error: `).
#[tokio::test]
async fn view_error_for_non_existent_file() {
    mem()
        .await
        .err(
            json!({"command": "view", "path": "/memories/nonexistent.txt"}),
            "The path /memories/nonexistent.txt does not exist. Please provide a valid path.",
        )
        .await;
}

/// TS `node_modules` filter: excluded at any depth, files and directories alike; viewing a
/// `node_modules` directory directly still lists its content.
#[tokio::test]
async fn node_modules_filtered_at_any_depth() {
    let m = mem().await;
    m.create("/memories/node_modules/pkg/index.js", "x").await;
    m.create("/memories/node_modules/top.js", "x").await;
    m.create("/memories/app/node_modules", "a file named node_modules").await;
    m.create("/memories/app/main.js", "main").await;
    m.ok(
        json!({"command": "view", "path": "/memories"}),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
         4.0K\t/memories\n4.0K\t/memories/app/\n4B\t/memories/app/main.js",
    )
    .await;
    m.ok(
        json!({"command": "view", "path": "/memories/node_modules"}),
        "Here're the files and directories up to 2 levels deep in /memories/node_modules, excluding hidden items and node_modules:\n\
         4.0K\t/memories/node_modules\n4.0K\t/memories/node_modules/pkg/\n1B\t/memories/node_modules/pkg/index.js\n\
         1B\t/memories/node_modules/top.js",
    )
    .await;
}

// --- str_replace ------------------------------------------------------------------------------

/// TS 9, 'should replace string in file'.
#[tokio::test]
async fn replace_string_in_file() {
    let m = mem().await;
    m.create("/memories/replace_test.txt", "Line 1\nOld Text\nLine 3").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/replace_test.txt", "old_str": "Old Text", "new_str": "New Text"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    1\tLine 1\n     2\tNew Text\n     3\tLine 3",
    )
    .await;
    m.assert_content("/memories/replace_test.txt", "Line 1\nNew Text\nLine 3").await;
}

/// TS 10, 'should throw error when string not found'.
#[tokio::test]
async fn replace_string_not_found() {
    let m = mem().await;
    m.create("/memories/replace_test.txt", "Hello, World!").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/replace_test.txt", "old_str": "NotFound", "new_str": "x"}),
        "No replacement was performed, old_str `NotFound` did not appear verbatim in /memories/replace_test.txt.",
    )
    .await;
}

/// TS 11, 'should throw error when string appears multiple times'.
#[tokio::test]
async fn replace_string_appears_multiple_times() {
    let m = mem().await;
    m.create("/memories/replace_test.txt", "Hello\nMiddle\nHello").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/replace_test.txt", "old_str": "Hello", "new_str": "Hi"}),
        "No replacement was performed. Multiple occurrences of old_str `Hello` in lines: 1, 3. Please ensure it is unique",
    )
    .await;
    m.assert_content("/memories/replace_test.txt", "Hello\nMiddle\nHello").await;
}

/// TS 12, 'should throw error for non-existent file'.
#[tokio::test]
async fn replace_in_non_existent_file() {
    mem()
        .await
        .err(
            json!({"command": "str_replace", "path": "/memories/nonexistent.txt", "old_str": "a", "new_str": "b"}),
            "Error: The path /memories/nonexistent.txt does not exist. Please provide a valid path.",
        )
        .await;
}

// --- insert -----------------------------------------------------------------------------------

/// TS 13–15: the success message agrees; the content is the `spec` dialect's (Python's
/// algorithm: the file ends with a newline), which conflicts with TS (no newline added).
#[tokio::test]
async fn insert_success_message() {
    let m = mem().await;
    for (line, text, after) in [
        (1, "Inserted Line", "Line 1\nInserted Line\nLine 2\n"),
        (0, "First Line", "First Line\nLine 1\nLine 2\n"),
        (2, "Last Line", "Line 1\nLine 2\nLast Line\n"),
    ] {
        m.create("/memories/insert_test.txt", "Line 1\nLine 2").await;
        m.ok(
            json!({"command": "insert", "path": "/memories/insert_test.txt", "insert_line": line, "insert_text": text}),
            "The file /memories/insert_test.txt has been edited.",
        )
        .await;
        m.assert_content("/memories/insert_test.txt", after).await;
        m.ok(
            json!({"command": "delete", "path": "/memories/insert_test.txt"}),
            "Successfully deleted /memories/insert_test.txt",
        )
        .await;
    }
}

/// TS 17, 'should throw error for invalid insert_line' (TS's wording is the page's).
#[tokio::test]
async fn insert_invalid_insert_line() {
    let m = mem().await;
    m.create("/memories/insert_test.txt", "Line 1\nLine 2").await;
    m.err(
        json!({"command": "insert", "path": "/memories/insert_test.txt", "insert_line": 10, "insert_text": "x"}),
        "Error: Invalid `insert_line` parameter: 10. It should be within the range of lines of the file: [0, 2]",
    )
    .await;
    m.assert_content("/memories/insert_test.txt", "Line 1\nLine 2").await;
}

// --- delete -----------------------------------------------------------------------------------

/// TS 18, 'should delete a file'.
#[tokio::test]
async fn delete_a_file() {
    let m = mem().await;
    m.create("/memories/delete_me.txt", "x").await;
    m.ok(
        json!({"command": "delete", "path": "/memories/delete_me.txt"}),
        "Successfully deleted /memories/delete_me.txt",
    )
    .await;
    m.assert_snapshot(&[]).await;
}

/// TS 19, 'should delete a directory'.
#[tokio::test]
async fn delete_a_directory() {
    let m = mem().await;
    m.create("/memories/subdir/file.txt", "x").await;
    m.ok(json!({"command": "delete", "path": "/memories/subdir"}), "Successfully deleted /memories/subdir").await;
    m.assert_snapshot(&[]).await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// TS 20, 'should throw error when file not found'.
#[tokio::test]
async fn delete_not_found() {
    mem()
        .await
        .err(
            json!({"command": "delete", "path": "/memories/nonexistent.txt"}),
            "Error: The path /memories/nonexistent.txt does not exist",
        )
        .await;
}

/// TS 21, 'should not allow deleting /memories directory' (the page gives no string; memfs
/// answers the SDK's, without a prefix, in both dialects).
#[tokio::test]
async fn delete_root_refused() {
    let m = mem().await;
    m.create("/memories/keep.txt", "keep").await;
    m.err(json!({"command": "delete", "path": "/memories"}), "Cannot delete the /memories directory itself").await;
    m.assert_snapshot(&[r#"/memories/keep.txt = "keep""#]).await;
}

// --- rename -----------------------------------------------------------------------------------

/// TS 22, 'should rename a file'.
#[tokio::test]
async fn rename_a_file() {
    let m = mem().await;
    m.create("/memories/old_name.txt", "Original content").await;
    m.ok(
        json!({"command": "rename", "old_path": "/memories/old_name.txt", "new_path": "/memories/new_name.txt"}),
        "Successfully renamed /memories/old_name.txt to /memories/new_name.txt",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/new_name.txt = "Original content""#]).await;
}

/// TS 23, 'should rename to a nested path'.
#[tokio::test]
async fn rename_to_nested_path() {
    let m = mem().await;
    m.create("/memories/file.txt", "Content").await;
    m.ok(
        json!({"command": "rename", "old_path": "/memories/file.txt", "new_path": "/memories/nested/dir/file.txt"}),
        "Successfully renamed /memories/file.txt to /memories/nested/dir/file.txt",
    )
    .await;
    m.assert_snapshot(&["/memories/nested/", "/memories/nested/dir/", r#"/memories/nested/dir/file.txt = "Content""#])
        .await;
}

/// TS 24, 'should throw error when source not found'.
#[tokio::test]
async fn rename_source_not_found() {
    let m = mem().await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/nonexistent.txt", "new_path": "/memories/new.txt"}),
        "Error: The path /memories/nonexistent.txt does not exist",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// TS 25, 'should throw error when destination exists'.
#[tokio::test]
async fn rename_destination_exists() {
    let m = mem().await;
    m.create("/memories/file1.txt", "one").await;
    m.create("/memories/file2.txt", "two").await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/file1.txt", "new_path": "/memories/file2.txt"}),
        "Error: The destination /memories/file2.txt already exists",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/file1.txt = "one""#, r#"/memories/file2.txt = "two""#]).await;
}

// --- path validation --------------------------------------------------------------------------

/// TS 26, 'should reject paths not starting with /memories'.
#[tokio::test]
async fn reject_paths_not_starting_with_memories() {
    let m = mem().await;
    m.err(
        json!({"command": "create", "path": "/invalid/path.txt", "file_text": "x"}),
        "Path must start with /memories, got: /invalid/path.txt",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// TS 27, 'should reject paths trying to escape /memories'.
#[tokio::test]
async fn reject_paths_trying_to_escape() {
    let m = mem().await;
    m.err(
        json!({"command": "create", "path": "/memories/../../../etc/passwd", "file_text": "x"}),
        "Path /memories/../../../etc/passwd would escape /memories directory",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// TS 29, 'should reject path traversal to a sibling prefix-matching directory'.
#[tokio::test]
async fn reject_traversal_to_sibling_prefix_directory() {
    let m = mem().await;
    m.create("/memories/a.txt", "a").await;
    m.err(
        json!({"command": "view", "path": "/memories/../memories_backup/secret.txt"}),
        "Path /memories/../memories_backup/secret.txt would escape /memories directory",
    )
    .await;
    // The sibling itself, named without `..`, is refused too.
    m.err(
        json!({"command": "view", "path": "/memories_backup/secret.txt"}),
        "Path /memories_backup/secret.txt is outside the /memories directory: it must be /memories or start with /memories/",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/a.txt = "a""#]).await;
}
