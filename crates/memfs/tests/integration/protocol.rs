//! The `memfs exec` line protocol (`memfs::protocol::handle_line`): one JSON line in, exactly
//! one JSON line out (none for a blank line), compared as exact strings.

use memfs::protocol::handle_line;
use memfs::{Dialect, Memfs};

fn open(dialect: Dialect) -> Memfs {
    Memfs::ephemeral(dialect).expect("memory:// opens")
}

async fn answer(memfs: &Memfs, line: &str) -> String {
    handle_line(memfs, line).await.unwrap_or_else(|| panic!("no answer for {line:?}"))
}

#[tokio::test]
async fn bare_input() {
    let memfs = open(Dialect::PythonSdk);
    assert_text!(
        answer(&memfs, r#"{"command":"view","path":"/memories"}"#).await,
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories","is_error":false}"#
    );
    assert_text!(
        answer(&memfs, r#"{"command":"create","path":"/memories/a.txt","file_text":"é \"q\"\n\ttab"}"#).await,
        r#"{"content":"File created successfully at: /memories/a.txt","is_error":false}"#
    );
    assert_text!(
        answer(&memfs, r#"{"command":"view","path":"/memories/a.txt"}"#).await,
        r#"{"content":"Here's the content of /memories/a.txt with line numbers:\n     1\té \"q\"\n     2\t\ttab","is_error":false}"#
    );
    assert_text!(
        answer(&memfs, r#"{"command":"view","path":"/memories/b.txt"}"#).await,
        r#"{"content":"The path /memories/b.txt does not exist. Please provide a valid path.","is_error":true}"#
    );
}

/// The documentation page's worked example, as whole `tool_use` / `tool_result` blocks.
#[tokio::test]
async fn tool_use_block() {
    let memfs = open(Dialect::Spec);
    let create = |id: &str, path: &str, size: usize| {
        format!(
            r#"{{"type":"tool_use","id":"{id}","name":"memory","input":{{"command":"create","path":"{path}","file_text":"{}"}}}}"#,
            "x".repeat(size)
        )
    };
    assert_text!(
        answer(&memfs, &create("toolu_a", "/memories/customer_service_guidelines.xml", 1536)).await,
        r#"{"type":"tool_result","tool_use_id":"toolu_a","content":"File created successfully at: /memories/customer_service_guidelines.xml","is_error":false}"#
    );
    assert_text!(
        answer(&memfs, &create("toolu_b", "/memories/refund_policies.xml", 2048)).await,
        r#"{"type":"tool_result","tool_use_id":"toolu_b","content":"File created successfully at: /memories/refund_policies.xml","is_error":false}"#
    );
    let view = r#"{"type":"tool_use","id":"toolu_01C4D5E6F7G8H9I0J1K2L3M4","name":"memory","input":{"command":"view","path":"/memories"}}"#;
    assert_text!(
        answer(&memfs, view).await,
        r#"{"type":"tool_result","tool_use_id":"toolu_01C4D5E6F7G8H9I0J1K2L3M4","content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n1.5K\t/memories/customer_service_guidelines.xml\n2.0K\t/memories/refund_policies.xml","is_error":false}"#
    );
    // An error inside a block.
    let delete = r#"{"type":"tool_use","id":"toolu_c","name":"memory","input":{"command":"delete","path":"/memories/notes.txt"}}"#;
    assert_text!(
        answer(&memfs, delete).await,
        r#"{"type":"tool_result","tool_use_id":"toolu_c","content":"Error: The path /memories/notes.txt does not exist","is_error":true}"#
    );
    // A block without input.
    let empty = r#"{"type":"tool_use","id":"toolu_d","name":"memory"}"#;
    assert_text!(
        answer(&memfs, empty).await,
        r#"{"type":"tool_result","tool_use_id":"toolu_d","content":"Invalid input: expected a JSON object with a `command` field, got null","is_error":true}"#
    );
}

#[tokio::test]
async fn tool_use_for_another_tool() {
    let memfs = open(Dialect::PythonSdk);
    let line = r#"{"type":"tool_use","id":"toolu_x","name":"other","input":{"command":"create","path":"/memories/a.txt","file_text":"x"}}"#;
    assert_text!(
        answer(&memfs, line).await,
        r#"{"type":"tool_result","tool_use_id":"toolu_x","content":"Error: Tool 'other' not found","is_error":true}"#
    );
    // Nothing was run.
    assert_text!(
        answer(&memfs, r#"{"command":"view","path":"/memories"}"#).await,
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories","is_error":false}"#
    );
}

#[tokio::test]
async fn invalid_json_then_the_stream_goes_on() {
    let memfs = open(Dialect::PythonSdk);
    assert_text!(
        answer(&memfs, "not json").await,
        r#"{"content":"Invalid JSON input line: expected ident at line 1 column 2","is_error":true}"#
    );
    assert_text!(
        answer(&memfs, r#"{"command":"view","#).await,
        r#"{"content":"Invalid JSON input line: EOF while parsing a value at line 1 column 18","is_error":true}"#
    );
    assert_text!(
        answer(&memfs, r#"{"command":"create","path":"/memories/a.txt","file_text":"after"}"#).await,
        r#"{"content":"File created successfully at: /memories/a.txt","is_error":false}"#
    );
    assert_text!(
        answer(&memfs, r#"{"command":"view","path":"/memories/a.txt"}"#).await,
        r#"{"content":"Here's the content of /memories/a.txt with line numbers:\n     1\tafter","is_error":false}"#
    );
}

#[tokio::test]
async fn blank_lines_get_no_answer() {
    let memfs = open(Dialect::Spec);
    for line in ["", " ", "\t", "  \t  ", "\r"] {
        assert_eq!(handle_line(&memfs, line).await, None, "{line:?}");
    }
}
