//! The Python SDK's own suite (`tests/lib/tools/memory_tools/test_filesystem.py`, see
//! `sdk-reference.md` §7.1), rewritten against the `python-sdk` dialect with the full exact
//! strings `anthropic==2.10.0`'s `BetaLocalFilesystemMemoryTool` produces (where the suite only
//! matches a substring or a regex, the whole string is asserted here; every expected string
//! was checked against the installed 2.10.0 source). The suite's `get_directory_snapshot` is
//! replaced by [`Mem::assert_snapshot`], which reads the whole tree back through `view`.
//!
//! Not applicable to a virtual tree (no host directories, no symlinks):
//! - item 1 `test_mkdir_parents_not_world_writable_under_permissive_umask`: directory modes on
//!   the host filesystem; memfs creates no host directories;
//! - items 29–31 `test_symlink_validation_*`: symlinks pointing outside the root; the virtual
//!   tree has no symlinks, so nothing can point outside it (path escapes are in `safety`);
//! - item 32 (async only) `test_validate_path_returns_resolved_path_not_symlink_target`: an
//!   internal API returning canonical host paths; memfs keys the tree by validated names only.
//!
//! After the suite come further cases from §7.6 ("extra cases worth adding"), each also checked
//! against 2.10.0: CR kept on read, `insert`'s `split('\n')` line count, the listing's order,
//! sizes and filters, `view_range` edges, snippet windows, overlapping matches, precedence.

use memfs::Dialect;
use serde_json::json;

use crate::support::Mem;

async fn mem() -> Mem {
    Mem::new(Dialect::PythonSdk).await
}

const EMPTY_ROOT: &str =
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories";

// --- create -----------------------------------------------------------------------------------

/// Item 2, `test_create`.
#[tokio::test]
async fn create() {
    let m = mem().await;
    m.ok(
        json!({"command": "create", "path": "/memories/test_file.txt", "file_text": "Hello, World!"}),
        "File created successfully at: /memories/test_file.txt",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/test_file.txt = "Hello, World!""#]).await;
    assert_text!(
        m.listing().await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
         4K\t/memories\n13B\t/memories/test_file.txt"
    );
}

/// Item 3, `test_create_nested_directories`.
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
    // Two levels: `deep/nested/` is listed but not descended.
    assert_text!(
        m.listing().await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
         4K\t/memories\n4K\t/memories/deep/\n4K\t/memories/deep/nested/"
    );
}

/// Item 4, `test_create_error_if_file_already_exists`.
#[tokio::test]
async fn create_error_if_file_already_exists() {
    let m = mem().await;
    m.create("/memories/existing.txt", "Original").await;
    m.err(
        json!({"command": "create", "path": "/memories/existing.txt", "file_text": "New"}),
        "File /memories/existing.txt already exists",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/existing.txt = "Original""#]).await;
}

// --- view -------------------------------------------------------------------------------------

/// Item 5, `test_view_file`.
#[tokio::test]
async fn view_file() {
    let m = mem().await;
    m.create("/memories/view_test.txt", "Line 1\nLine 2\nLine 3").await;
    m.ok(
        json!({"command": "view", "path": "/memories/view_test.txt"}),
        "Here's the content of /memories/view_test.txt with line numbers:\n     1\tLine 1\n     2\tLine 2\n     3\tLine 3",
    )
    .await;
}

/// Item 6, `test_view_directory` (the suite checks four substrings; this is the whole answer).
#[tokio::test]
async fn view_directory() {
    let m = mem().await;
    m.create("/memories/dir/file1.txt", "File 1").await;
    m.create("/memories/dir/file2.txt", "File 2").await;
    m.ok(
        json!({"command": "view", "path": "/memories/dir"}),
        "Here're the files and directories up to 2 levels deep in /memories/dir, excluding hidden items:\n\
         4K\t/memories/dir\n6B\t/memories/dir/file1.txt\n6B\t/memories/dir/file2.txt",
    )
    .await;
}

/// Item 7, `test_view_file_with_range`.
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

/// Item 8, `test_view_error_for_non_existent_file`.
#[tokio::test]
async fn view_error_for_non_existent_file() {
    let m = mem().await;
    m.err(
        json!({"command": "view", "path": "/memories/nonexistent.txt"}),
        "The path /memories/nonexistent.txt does not exist. Please provide a valid path.",
    )
    .await;
}

/// Item 9, `test_view_error_for_files_with_too_many_lines`: `"\n".join(["line"] * 1000000)`.
#[tokio::test]
async fn view_error_for_files_with_too_many_lines() {
    let m = mem().await;
    let text = vec!["line"; 1_000_000].join("\n");
    m.create("/memories/large_file.txt", &text).await;
    m.err(
        json!({"command": "view", "path": "/memories/large_file.txt"}),
        "File /memories/large_file.txt exceeds maximum line limit of 999,999 lines.",
    )
    .await;
    // The limit applies before `view_range`.
    m.err(
        json!({"command": "view", "path": "/memories/large_file.txt", "view_range": [1, 1]}),
        "File /memories/large_file.txt exceeds maximum line limit of 999,999 lines.",
    )
    .await;
}

// --- str_replace ------------------------------------------------------------------------------

/// Item 10, `test_str_replace`.
#[tokio::test]
async fn str_replace() {
    let m = mem().await;
    m.create("/memories/replace_test.txt", "Line 1\nOld Text\nLine 3").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/replace_test.txt", "old_str": "Old Text", "new_str": "New Text"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    1\tLine 1\n     2\tNew Text\n     3\tLine 3",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/replace_test.txt = "Line 1\nNew Text\nLine 3""#]).await;
}

/// Item 11, `test_str_replace_error_when_string_not_found`.
#[tokio::test]
async fn str_replace_error_when_string_not_found() {
    let m = mem().await;
    m.create("/memories/replace_test.txt", "Hello, World!").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/replace_test.txt", "old_str": "NotFound", "new_str": "x"}),
        "No replacement was performed, old_str `NotFound` did not appear verbatim in /memories/replace_test.txt.",
    )
    .await;
    m.assert_content("/memories/replace_test.txt", "Hello, World!").await;
}

/// Item 12, `test_str_replace_error_when_string_appears_multiple_times`.
#[tokio::test]
async fn str_replace_error_when_string_appears_multiple_times() {
    let m = mem().await;
    m.create("/memories/replace_test.txt", "Hello\nMiddle\nHello").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/replace_test.txt", "old_str": "Hello", "new_str": "Hi"}),
        "No replacement was performed. Multiple occurrences of old_str `Hello` in lines: 1, 3. Please ensure it is unique",
    )
    .await;
    m.assert_content("/memories/replace_test.txt", "Hello\nMiddle\nHello").await;
}

/// Item 13, `test_str_replace_error_for_non_existent_file`.
#[tokio::test]
async fn str_replace_error_for_non_existent_file() {
    let m = mem().await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/nonexistent.txt", "old_str": "a", "new_str": "b"}),
        "The path /memories/nonexistent.txt does not exist. Please provide a valid path.",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

// --- insert -----------------------------------------------------------------------------------

/// Item 14, `test_insert`: the result always ends with a newline.
#[tokio::test]
async fn insert() {
    let m = mem().await;
    m.create("/memories/insert_test.txt", "Line 1\nLine 2").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/insert_test.txt", "insert_line": 1, "insert_text": "Inserted Line"}),
        "The file /memories/insert_test.txt has been edited.",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/insert_test.txt = "Line 1\nInserted Line\nLine 2\n""#]).await;
}

/// Item 15, `test_insert_at_beginning_of_file`.
#[tokio::test]
async fn insert_at_beginning_of_file() {
    let m = mem().await;
    m.create("/memories/insert_test.txt", "Line 1\nLine 2").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/insert_test.txt", "insert_line": 0, "insert_text": "First Line"}),
        "The file /memories/insert_test.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/insert_test.txt", "First Line\nLine 1\nLine 2\n").await;
}

/// Item 16, `test_insert_at_end_of_file`.
#[tokio::test]
async fn insert_at_end_of_file() {
    let m = mem().await;
    m.create("/memories/insert_test.txt", "Line 1\nLine 2").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/insert_test.txt", "insert_line": 2, "insert_text": "Last Line"}),
        "The file /memories/insert_test.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/insert_test.txt", "Line 1\nLine 2\nLast Line\n").await;
}

/// Item 17, `test_insert_error_for_non_existent_file`.
#[tokio::test]
async fn insert_error_for_non_existent_file() {
    let m = mem().await;
    m.err(
        json!({"command": "insert", "path": "/memories/nonexistent.txt", "insert_line": 0, "insert_text": "x"}),
        "The path /memories/nonexistent.txt does not exist. Please provide a valid path.",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// Item 18, `test_insert_error_for_invalid_insert_line`.
#[tokio::test]
async fn insert_error_for_invalid_insert_line() {
    let m = mem().await;
    m.create("/memories/insert_test.txt", "Line 1\nLine 2").await;
    m.err(
        json!({"command": "insert", "path": "/memories/insert_test.txt", "insert_line": 10, "insert_text": "x"}),
        "Invalid `insert_line` parameter: 10. It should be within the range [0, 2].",
    )
    .await;
    m.assert_content("/memories/insert_test.txt", "Line 1\nLine 2").await;
}

// --- delete -----------------------------------------------------------------------------------

/// Item 19, `test_delete`.
#[tokio::test]
async fn delete() {
    let m = mem().await;
    m.create("/memories/delete_me.txt", "x").await;
    m.ok(
        json!({"command": "delete", "path": "/memories/delete_me.txt"}),
        "Successfully deleted /memories/delete_me.txt",
    )
    .await;
    m.assert_snapshot(&[]).await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// Item 20, `test_delete_directory`.
#[tokio::test]
async fn delete_directory() {
    let m = mem().await;
    m.create("/memories/subdir/file.txt", "x").await;
    m.ok(json!({"command": "delete", "path": "/memories/subdir"}), "Successfully deleted /memories/subdir").await;
    m.assert_snapshot(&[]).await;
}

/// Item 21, `test_delete_error_when_file_not_found`.
#[tokio::test]
async fn delete_error_when_file_not_found() {
    let m = mem().await;
    m.err(
        json!({"command": "delete", "path": "/memories/nonexistent.txt"}),
        "The path /memories/nonexistent.txt does not exist",
    )
    .await;
}

/// Item 22, `test_delete_not_allow_deleting_memories_directory` (other spellings: `safety`).
#[tokio::test]
async fn delete_not_allow_deleting_memories_directory() {
    let m = mem().await;
    m.create("/memories/keep.txt", "keep").await;
    m.err(json!({"command": "delete", "path": "/memories"}), "Cannot delete the /memories directory itself").await;
    m.assert_snapshot(&[r#"/memories/keep.txt = "keep""#]).await;
}

// --- rename -----------------------------------------------------------------------------------

/// Item 23, `test_rename`.
#[tokio::test]
async fn rename() {
    let m = mem().await;
    m.create("/memories/old_name.txt", "Original content").await;
    m.ok(
        json!({"command": "rename", "old_path": "/memories/old_name.txt", "new_path": "/memories/new_name.txt"}),
        "Successfully renamed /memories/old_name.txt to /memories/new_name.txt",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/new_name.txt = "Original content""#]).await;
}

/// Item 24, `test_rename_to_nested_path`.
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

/// Item 25, `test_rename_error_when_source_not_found`.
#[tokio::test]
async fn rename_error_when_source_not_found() {
    let m = mem().await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/nonexistent.txt", "new_path": "/memories/new.txt"}),
        "The path /memories/nonexistent.txt does not exist",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// Item 26, `test_rename_error_when_destination_exists`.
#[tokio::test]
async fn rename_error_when_destination_exists() {
    let m = mem().await;
    m.create("/memories/file1.txt", "one").await;
    m.create("/memories/file2.txt", "two").await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/file1.txt", "new_path": "/memories/file2.txt"}),
        "The destination /memories/file2.txt already exists",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/file1.txt = "one""#, r#"/memories/file2.txt = "two""#]).await;
}

// --- path validation --------------------------------------------------------------------------

/// Item 27, `test_path_validation_reject_paths_not_starting_with_memories`.
#[tokio::test]
async fn path_validation_reject_paths_not_starting_with_memories() {
    let m = mem().await;
    m.err(
        json!({"command": "create", "path": "/invalid/path.txt", "file_text": "x"}),
        "Path must start with /memories, got: /invalid/path.txt",
    )
    .await;
    // The empty path too: note the trailing space.
    m.err(json!({"command": "view", "path": ""}), "Path must start with /memories, got: ").await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

/// Item 28, `test_path_validation_reject_paths_trying_to_escape_memories`.
#[tokio::test]
async fn path_validation_reject_paths_trying_to_escape_memories() {
    let m = mem().await;
    m.err(
        json!({"command": "create", "path": "/memories/../../../etc/passwd", "file_text": "x"}),
        "Path /memories/../../../etc/passwd would escape /memories directory",
    )
    .await;
    assert_text!(m.listing().await, EMPTY_ROOT);
}

// --- further 2.10.0 behaviour (§7.6) ----------------------------------------------------------

/// The first view of an empty store is a listing, not an error.
#[tokio::test]
async fn view_empty_root() {
    mem().await.ok(json!({"command": "view", "path": "/memories"}), EMPTY_ROOT).await;
}

/// 2.10.0 reads raw UTF-8: a `\r` stays at the end of its line.
#[tokio::test]
async fn view_keeps_carriage_returns() {
    let m = mem().await;
    m.create("/memories/crlf.txt", "x\r\ny\r\n").await;
    m.ok(
        json!({"command": "view", "path": "/memories/crlf.txt"}),
        "Here's the content of /memories/crlf.txt with line numbers:\n     1\tx\r\n     2\ty\r\n     3\t",
    )
    .await;
}

/// `insert` splits on `\n` only (CR kept) and counts lines without the empty tail.
#[tokio::test]
async fn insert_keeps_carriage_returns_and_counts_split_lines() {
    let m = mem().await;
    m.create("/memories/crlf.txt", "x\r\ny\r\n").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/crlf.txt", "insert_line": 1, "insert_text": "mid\n\n"}),
        "The file /memories/crlf.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/crlf.txt", "x\r\nmid\ny\r\n").await;
    m.err(
        json!({"command": "insert", "path": "/memories/crlf.txt", "insert_line": 4, "insert_text": "z"}),
        "Invalid `insert_line` parameter: 4. It should be within the range [0, 3].",
    )
    .await;
    // Other separators `str.splitlines` would honour stay inside their line.
    m.create("/memories/ff.txt", "a\u{c}b\u{2028}c\u{85}d").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/ff.txt", "insert_line": 1, "insert_text": "z"}),
        "The file /memories/ff.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/ff.txt", "a\u{c}b\u{2028}c\u{85}d\nz\n").await;
}

/// Line counts and results of `insert` on the reference's examples.
#[tokio::test]
async fn insert_line_counting() {
    let m = mem().await;
    m.create("/memories/nl.txt", "a\nb\n").await;
    for line in [3, -1] {
        m.err(
            json!({"command": "insert", "path": "/memories/nl.txt", "insert_line": line, "insert_text": "c"}),
            &format!("Invalid `insert_line` parameter: {line}. It should be within the range [0, 2]."),
        )
        .await;
    }
    m.ok(
        json!({"command": "insert", "path": "/memories/nl.txt", "insert_line": 2, "insert_text": "c"}),
        "The file /memories/nl.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/nl.txt", "a\nb\nc\n").await;

    m.create("/memories/ab.txt", "a\nb").await;
    for (line, text, after) in [
        (0, "first\n\n", "first\na\nb\n"),
        (3, "last", "first\na\nb\nlast\n"),
        (1, "m1\nm2\n", "first\nm1\nm2\na\nb\nlast\n"),
    ] {
        m.ok(
            json!({"command": "insert", "path": "/memories/ab.txt", "insert_line": line, "insert_text": text}),
            "The file /memories/ab.txt has been edited.",
        )
        .await;
        m.assert_content("/memories/ab.txt", after).await;
    }

    m.create("/memories/empty.txt", "").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/empty.txt", "insert_line": 0, "insert_text": "X"}),
        "The file /memories/empty.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/empty.txt", "X\n").await;
}

/// Order (code points, pre-order), sizes (`1.2K` for 1280: half-even), hidden entries skipped,
/// `node_modules` listed, grandchild directories listed but not descended.
#[tokio::test]
async fn listing_order_sizes_and_filters() {
    let m = mem().await;
    m.create("/memories/a.txt", "x\r\nmid\ny\r\n").await;
    m.create("/memories/dir/node_modules/m.js", "m").await;
    m.create("/memories/node_modules/x/y.js", "yy").await;
    m.create("/memories/.hidden/h.txt", "h").await;
    m.create("/memories/dir/.h", "h").await;
    m.create("/memories/dir/sub/deep/d.txt", "d").await;
    m.create("/memories/B.txt", &"B".repeat(1280)).await;
    m.create("/memories/é.txt", "").await;
    m.create("/memories/big.bin", &"x".repeat(1_234_567)).await;
    m.ok(
        json!({"command": "view", "path": "/memories"}),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
         4K\t/memories\n1.2K\t/memories/B.txt\n10B\t/memories/a.txt\n1.2M\t/memories/big.bin\n4K\t/memories/dir/\n\
         4K\t/memories/dir/node_modules/\n4K\t/memories/dir/sub/\n4K\t/memories/node_modules/\n\
         4K\t/memories/node_modules/x/\n0B\t/memories/é.txt",
    )
    .await;
    // `/memories/` is echoed verbatim, so children get a double slash.
    m.ok(
        json!({"command": "view", "path": "/memories/"}),
        "Here're the files and directories up to 2 levels deep in /memories/, excluding hidden items:\n\
         4K\t/memories/\n1.2K\t/memories//B.txt\n10B\t/memories//a.txt\n1.2M\t/memories//big.bin\n4K\t/memories//dir/\n\
         4K\t/memories//dir/node_modules/\n4K\t/memories//dir/sub/\n4K\t/memories//node_modules/\n\
         4K\t/memories//node_modules/x/\n0B\t/memories//é.txt",
    )
    .await;
    // A hidden directory can still be viewed directly.
    m.ok(
        json!({"command": "view", "path": "/memories/.hidden"}),
        "Here're the files and directories up to 2 levels deep in /memories/.hidden, excluding hidden items:\n\
         4K\t/memories/.hidden\n1B\t/memories/.hidden/h.txt",
    )
    .await;
}

/// The reference's listing-order example.
#[tokio::test]
async fn listing_order_code_points() {
    let m = mem().await;
    for name in [
        "é.txt",
        "~t.txt",
        "dir.txt",
        "dir/z.txt",
        "dir/inner/q.txt",
        "b.txt",
        "a.txt",
        "a b.txt",
        "_x.txt",
        "Z.txt",
        "B.txt",
        "9.txt",
        "10.txt",
        "-dash.txt",
    ] {
        m.create(&format!("/memories/{name}"), "").await;
    }
    let rows = [
        "-dash.txt",
        "10.txt",
        "9.txt",
        "B.txt",
        "Z.txt",
        "_x.txt",
        "a b.txt",
        "a.txt",
        "b.txt",
        "dir/",
        "dir/inner/",
        "dir/z.txt",
        "dir.txt",
        "~t.txt",
        "é.txt",
    ];
    let mut expected = String::from(EMPTY_ROOT);
    for row in rows {
        let size = if row.ends_with('/') { "4K" } else { "0B" };
        expected.push_str(&format!("\n{size}\t/memories/{row}"));
    }
    m.ok(json!({"command": "view", "path": "/memories"}), &expected).await;
}

/// Files: empty file, trailing slash echoed, a space-only name that does not exist.
#[tokio::test]
async fn view_file_edges() {
    let m = mem().await;
    m.create("/memories/empty.txt", "").await;
    m.ok(
        json!({"command": "view", "path": "/memories/empty.txt"}),
        "Here's the content of /memories/empty.txt with line numbers:\n     1\t",
    )
    .await;
    m.create("/memories/a.txt", "one\ntwo\n").await;
    m.ok(
        json!({"command": "view", "path": "/memories/a.txt/"}),
        "Here's the content of /memories/a.txt/ with line numbers:\n     1\tone\n     2\ttwo\n     3\t",
    )
    .await;
    m.err(
        json!({"command": "view", "path": "/memories/ "}),
        "The path /memories/  does not exist. Please provide a valid path.",
    )
    .await;
    m.err(
        json!({"command": "view", "path": "/memories/a.txt/b"}),
        "The path /memories/a.txt/b does not exist. Please provide a valid path.",
    )
    .await;
}

/// Every `view_range` edge of §3.2 on `"line1\nline2\nline3\n"` (4 lines); none is an error.
#[tokio::test]
async fn view_range_edges() {
    let m = mem().await;
    m.create("/memories/r.txt", "line1\nline2\nline3\n").await;
    let header = "Here's the content of /memories/r.txt with line numbers:\n";
    let all = "     1\tline1\n     2\tline2\n     3\tline3\n     4\t";
    let cases = [
        (json!([1, 2]), "     1\tline1\n     2\tline2"),
        (json!([2, -1]), "     2\tline2\n     3\tline3\n     4\t"),
        (json!([0, 1]), "     1\tline1"),
        (json!([-5, 2]), "     1\tline1\n     2\tline2"),
        (json!([3, 1]), ""),
        (json!([2, 100]), "     2\tline2\n     3\tline3\n     4\t"),
        (json!([10, 20]), ""),
        (json!([2, -2]), "     2\tline2"),
        (json!([1, -10]), ""),
        (json!([2]), all),
        (json!([1, 2, 3]), all),
        (json!([]), all),
        (json!(null), all),
    ];
    for (range, lines) in cases {
        m.ok(json!({"command": "view", "path": "/memories/r.txt", "view_range": range}), &format!("{header}{lines}"))
            .await;
    }
}

/// Snippet windows: two lines either side of the first changed line, from the new content.
#[tokio::test]
async fn str_replace_snippet_windows() {
    let m = mem().await;
    let ten: Vec<String> = (1..=10).map(|i| format!("L{i}")).collect();
    m.create("/memories/ten.txt", &ten.join("\n")).await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/ten.txt", "old_str": "L5", "new_str": "FIVE\nFIVE-B\nFIVE-C"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    3\tL3\n     4\tL4\n     5\tFIVE\n     6\tFIVE-B\n     7\tFIVE-C",
    )
    .await;
    let eleven: Vec<String> = (1..=11).map(|i| format!("L{i}")).collect();
    m.create("/memories/eleven.txt", &eleven.join("\n")).await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/eleven.txt", "old_str": "L11", "new_str": "LAST"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    9\tL9\n    10\tL10\n    11\tLAST",
    )
    .await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/eleven.txt", "old_str": "L1\n", "new_str": "FIRST\n"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n\
         \x20    1\tFIRST\n     2\tL2\n     3\tL3",
    )
    .await;
}

/// Counting is non-overlapping, line listing overlapping with duplicates; empty `old_str`;
/// multi-line `old_str`; `$` and `\1` are literal.
#[tokio::test]
async fn str_replace_matching_edges() {
    let m = mem().await;
    m.create("/memories/ab.txt", "ab ab\ncd").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/ab.txt", "old_str": "ab", "new_str": "X"}),
        "No replacement was performed. Multiple occurrences of old_str `ab` in lines: 1, 1. Please ensure it is unique",
    )
    .await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/ab.txt", "old_str": "", "new_str": "new"}),
        "No replacement was performed. Multiple occurrences of old_str `` in lines: 1, 1, 1, 1, 1, 1, 2, 2, 2. Please ensure it is unique",
    )
    .await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/ab.txt", "old_str": "ab\ncd", "new_str": "$1 $& \\1"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tab $1 $& \\1",
    )
    .await;
    m.assert_content("/memories/ab.txt", "ab $1 $& \\1").await;

    m.create("/memories/aaa.txt", "aaa").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/aaa.txt", "old_str": "aa", "new_str": "b"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tba",
    )
    .await;
    m.assert_content("/memories/aaa.txt", "ba").await;
    m.create("/memories/aaaa.txt", "aaaa").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/aaaa.txt", "old_str": "aa", "new_str": "b"}),
        "No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1, 1. Please ensure it is unique",
    )
    .await;

    m.create("/memories/empty.txt", "").await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/empty.txt", "old_str": "", "new_str": "new"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tnew",
    )
    .await;
    m.assert_content("/memories/empty.txt", "new").await;
}

/// `str_replace` and `insert` on a directory: "is not a file".
#[tokio::test]
async fn edits_on_a_directory() {
    let m = mem().await;
    m.create("/memories/dir/f.txt", "a").await;
    m.err(
        json!({"command": "str_replace", "path": "/memories/dir", "old_str": "a", "new_str": "b"}),
        "The path /memories/dir is not a file.",
    )
    .await;
    m.err(
        json!({"command": "insert", "path": "/memories/dir", "insert_line": 0, "insert_text": "b"}),
        "The path /memories/dir is not a file.",
    )
    .await;
    m.assert_snapshot(&["/memories/dir/", r#"/memories/dir/f.txt = "a""#]).await;
}

/// `create` never overwrites: not a directory, not the root.
#[tokio::test]
async fn create_over_directory_and_root() {
    let m = mem().await;
    m.create("/memories/dir/f.txt", "a").await;
    m.err(json!({"command": "create", "path": "/memories/dir", "file_text": "x"}), "File /memories/dir already exists")
        .await;
    m.err(json!({"command": "create", "path": "/memories", "file_text": "x"}), "File /memories already exists").await;
    m.assert_snapshot(&["/memories/dir/", r#"/memories/dir/f.txt = "a""#]).await;
}

/// `rename` checks the destination first: an existing destination wins over a missing
/// source, the same path, and the root as destination.
#[tokio::test]
async fn rename_precedence() {
    let m = mem().await;
    m.create("/memories/B.txt", "b").await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/zz", "new_path": "/memories/B.txt"}),
        "The destination /memories/B.txt already exists",
    )
    .await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/B.txt", "new_path": "/memories/B.txt"}),
        "The destination /memories/B.txt already exists",
    )
    .await;
    m.err(
        json!({"command": "rename", "old_path": "/memories/B.txt", "new_path": "/memories"}),
        "The destination /memories already exists",
    )
    .await;
    m.assert_snapshot(&[r#"/memories/B.txt = "b""#]).await;
}

/// Directories rename with their whole subtree and delete recursively.
#[tokio::test]
async fn rename_and_delete_directories() {
    let m = mem().await;
    m.create("/memories/d1/a.txt", "a").await;
    m.create("/memories/d1/sub/b.txt", "b").await;
    m.ok(
        json!({"command": "rename", "old_path": "/memories/d1", "new_path": "/memories/x/d2"}),
        "Successfully renamed /memories/d1 to /memories/x/d2",
    )
    .await;
    m.assert_snapshot(&[
        "/memories/x/",
        "/memories/x/d2/",
        r#"/memories/x/d2/a.txt = "a""#,
        "/memories/x/d2/sub/",
        r#"/memories/x/d2/sub/b.txt = "b""#,
    ])
    .await;
    m.ok(json!({"command": "delete", "path": "/memories/x/d2"}), "Successfully deleted /memories/x/d2").await;
    m.assert_snapshot(&["/memories/x/"]).await;
}

/// Paths are echoed as sent but act on the normalised location.
#[tokio::test]
async fn paths_are_echoed_verbatim() {
    let m = mem().await;
    m.ok(
        json!({"command": "create", "path": "/memories//sub/./a.txt", "file_text": "A"}),
        "File created successfully at: /memories//sub/./a.txt",
    )
    .await;
    m.ok(
        json!({"command": "str_replace", "path": "/memories/x/../sub/a.txt", "old_str": "A", "new_str": "B"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tB",
    )
    .await;
    m.ok(json!({"command": "delete", "path": "/memories/sub//a.txt"}), "Successfully deleted /memories/sub//a.txt")
        .await;
    m.assert_snapshot(&["/memories/sub/"]).await;
}

/// An integral float is a valid line number, as in the SDK.
#[tokio::test]
async fn insert_line_integral_float() {
    let m = mem().await;
    m.create("/memories/a.txt", "a\nb").await;
    m.ok(
        json!({"command": "insert", "path": "/memories/a.txt", "insert_line": 1.0, "insert_text": "one"}),
        "The file /memories/a.txt has been edited.",
    )
    .await;
    m.assert_content("/memories/a.txt", "a\none\nb\n").await;
}

/// Integers outside `i64` are still integers: 2.10.0 (Python ints) answers the range error
/// with the number as sent. Values that fit in a `u64` reach memfs exactly (`serde_json` keeps
/// them), so the SDK's answer is reproducible for them.
#[tokio::test]
async fn insert_line_beyond_i64() {
    let m = mem().await;
    m.create("/memories/a.txt", "Line 1\nLine 2").await;
    for line in [u64::MAX, 1 << 63] {
        m.err(
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": line, "insert_text": "x"}),
            &format!("Invalid `insert_line` parameter: {line}. It should be within the range [0, 2]."),
        )
        .await;
    }
    m.assert_content("/memories/a.txt", "Line 1\nLine 2").await;
}

/// A `view_range` bound outside `i64` is applied as 2.10.0 applies any bound: a clamped slice.
#[tokio::test]
async fn view_range_beyond_i64() {
    let m = mem().await;
    m.create("/memories/a.txt", "Line 1\nLine 2").await;
    m.ok(
        json!({"command": "view", "path": "/memories/a.txt", "view_range": [1, u64::MAX]}),
        "Here's the content of /memories/a.txt with line numbers:\n     1\tLine 1\n     2\tLine 2",
    )
    .await;
    m.ok(
        json!({"command": "view", "path": "/memories/a.txt", "view_range": [1u64 << 63, -1]}),
        "Here's the content of /memories/a.txt with line numbers:\n",
    )
    .await;
}
