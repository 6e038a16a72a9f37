//! The `memfs exec` line protocol, usable from any language.
//!
//! Each input line is a JSON object: either a tool input (`{"command": …}`) or a whole
//! `tool_use` block (`{"type":"tool_use","id":…,"name":"memory","input":{…}}`). Each line gets
//! exactly one output line: `{"content":…,"is_error":…}` for a bare input and
//! `{"type":"tool_result","tool_use_id":…,"content":…,"is_error":…}` for a block. A line that is
//! not JSON gets an error line and the stream goes on, and so does a line that is not UTF-8
//! ([`handle_bytes`]). Blank lines are skipped.
//!
//! [`answer`] is the same decision on a parsed value; the HTTP endpoint (`memfs serve`) uses it,
//! so a request body gets exactly the answer the same line gets from `memfs exec`.

use serde::Serialize;
use serde_json::Value;

use crate::engine::Memfs;

/// The tool's name; a `tool_use` block for another tool is answered with an error.
pub const TOOL_NAME: &str = "memory";

/// The answer to a bare input line.
#[derive(Debug, Serialize)]
pub struct BareResult {
    /// Text for the model.
    pub content: String,
    /// Whether it is an error.
    pub is_error: bool,
}

/// The answer to a `tool_use` line.
#[derive(Debug, Serialize)]
pub struct ToolResultBlock {
    /// Always `tool_result`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The `id` of the `tool_use` block.
    pub tool_use_id: String,
    /// Text for the model.
    pub content: String,
    /// Whether it is an error.
    pub is_error: bool,
}

/// The answer to one input: a [`BareResult`] for a bare input, a [`ToolResultBlock`] for a
/// `tool_use` block. Serializes to exactly the object `memfs exec` writes on a line.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// The answer to a bare input.
    Bare(BareResult),
    /// The answer to a `tool_use` block.
    Block(ToolResultBlock),
}

impl Answer {
    /// The answer as one line of JSON (no newline).
    pub fn to_json(&self) -> String {
        // Serializing a struct of strings and bools cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| r#"{"content":"internal error","is_error":true}"#.to_owned())
    }
}

/// Answers one input line; `None` for a blank line.
pub async fn handle_line(memfs: &Memfs, line: &str) -> Option<String> {
    if line.trim().is_empty() {
        return None;
    }
    let answer = match serde_json::from_str::<Value>(line) {
        Ok(value) => answer(memfs, &value).await,
        Err(e) => Answer::Bare(BareResult { content: format!("Invalid JSON input line: {e}"), is_error: true }),
    };
    Some(answer.to_json())
}

/// Answers one input line given as bytes: [`handle_line`] when they are UTF-8, else an error
/// answer in the words of the "not JSON" error (JSON text is UTF-8, RFC 8259 §8.1), with the
/// 1-based byte column of the first invalid byte; `None` for a blank line.
pub async fn handle_bytes(memfs: &Memfs, line: &[u8]) -> Option<String> {
    match std::str::from_utf8(line) {
        Ok(text) => handle_line(memfs, text).await,
        Err(e) => Some(
            Answer::Bare(BareResult {
                content: format!("Invalid JSON input line: invalid UTF-8 at line 1 column {}", e.valid_up_to() + 1),
                is_error: true,
            })
            .to_json(),
        ),
    }
}

/// Answers one parsed input: a `tool_use` block (`"type": "tool_use"`) gets a
/// [`ToolResultBlock`] carrying its `id`, anything else is a bare tool input and gets a
/// [`BareResult`]. Shared by `memfs exec` ([`handle_line`]) and the HTTP endpoint.
pub async fn answer(memfs: &Memfs, value: &Value) -> Answer {
    answer_reporting(memfs, value, |e| format!("memfs: {}", crate::error::error_chain(e))).await
}

/// [`answer`], with the text of the answer to a store error chosen by `store_error`.
pub(crate) async fn answer_reporting(
    memfs: &Memfs,
    value: &Value,
    store_error: impl FnOnce(&crate::Error) -> String,
) -> Answer {
    let dialect = memfs.dialect();
    if value.get("type").and_then(Value::as_str) == Some("tool_use") {
        let tool_use_id = value.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let name = value.get("name").and_then(Value::as_str).unwrap_or_default();
        let result = if name != TOOL_NAME {
            memfs_core::ToolResult::error(format!("Error: Tool '{name}' not found"))
        } else {
            memfs.call_reporting(value.get("input").unwrap_or(&Value::Null), dialect, store_error).await
        };
        return Answer::Block(ToolResultBlock {
            kind: "tool_result",
            tool_use_id,
            content: result.content,
            is_error: result.is_error,
        });
    }
    let result = memfs.call_reporting(value, dialect, store_error).await;
    Answer::Bare(BareResult { content: result.content, is_error: result.is_error })
}
