//! The `memory` tool as MCP describes it: name, description and input schema.
//!
//! The schema is flat (one object, `command` required, every other field optional) rather than
//! a `oneOf` per command: the Messages API refuses `oneOf`/`anyOf`/`allOf` at the top level of
//! a tool's `input_schema`, and MCP clients pass tool schemas on to it. Which command takes
//! which field is said in each field's description; the engine checks the fields per command
//! and names the missing or mistyped one in an error result.

use std::borrow::Cow;
use std::sync::Arc;

use memfs_core::COMMANDS;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::protocol::TOOL_NAME;

/// What the model reads about the tool.
pub(crate) const DESCRIPTION: &str = "\
Your persistent memory: a directory of text files under /memories that is kept between \
conversations. View it before starting a task, and record progress, decisions and what you \
learn as you work, so that a later conversation can pick up where this one stopped.

Commands (the `command` field), and the fields each one takes:
- view: a directory listing (two levels deep) or a file's content with line numbers. \
`path`; optional `view_range` [start_line, end_line] (1-based, inclusive; end_line -1 means \
to the end): a file's lines, or a listing's entries.
- create: create a new file (an existing file is not overwritten). `path`, `file_text`.
- str_replace: replace text that occurs exactly once in a file. `path`, `old_str`, \
`new_str` (omitted: old_str is removed).
- insert: insert text after line `insert_line` (0: at the start). `path`, `insert_line`, \
`insert_text`.
- delete: delete a file, or a directory with everything in it. `path`.
- rename: rename or move a file or directory (an existing destination is not overwritten). \
`old_path`, `new_path`.

Every path starts with /memories.";

/// Guidance sent as the server's `instructions` at initialization: the text the Messages API
/// adds to the system prompt when the `memory_20250818` tool is enabled (the memory tool
/// documentation, "Prompting guidance"), so that a client that shows instructions to the model
/// gets the same protocol.
pub(crate) const INSTRUCTIONS: &str = "\
IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE.
MEMORY PROTOCOL:
1. Use the `view` command of your `memory` tool to check for earlier progress.
2. ... (work on the task) ...
     - As you make progress, record status / progress / thoughts etc in your memory.
ASSUME INTERRUPTION: Your context window might be reset at any moment, so you risk losing any \
progress that is not recorded in your memory directory.";

/// The input schema: the six commands' fields, `command` required.
pub(crate) fn input_schema() -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "enum": COMMANDS,
                "description": "The command to run: view, create, str_replace, insert, delete or rename."
            },
            "path": {
                "type": "string",
                "description": "view, create, str_replace, insert, delete: the file or directory, under /memories (e.g. /memories/notes.md)."
            },
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "view (optional): [start_line, end_line], 1-based and inclusive; end_line -1 means to the end. Selects a file's lines, or a directory listing's entries (a cut answer names the range of the next part)."
            },
            "file_text": {
                "type": "string",
                "description": "create: the whole content of the new file."
            },
            "old_str": {
                "type": "string",
                "description": "str_replace: the text to replace; it must occur exactly once in the file."
            },
            "new_str": {
                "type": "string",
                "description": "str_replace: the replacement text (omitted: old_str is removed)."
            },
            "insert_line": {
                "type": "integer",
                "description": "insert: the line after which to insert (0: at the start of the file)."
            },
            "insert_text": {
                "type": "string",
                "description": "insert: the text to insert."
            },
            "old_path": {
                "type": "string",
                "description": "rename: the file or directory to rename or move."
            },
            "new_path": {
                "type": "string",
                "description": "rename: where it goes; it must not exist yet."
            }
        },
        "required": ["command"]
    });
    match schema {
        Value::Object(map) => map,
        // `json!` of an object literal is an object.
        _ => JsonObject::new(),
    }
}

/// The tool definition listed by `tools/list`.
pub(crate) fn definition() -> Tool {
    let mut tool = Tool::new(Cow::Borrowed(TOOL_NAME), Cow::Borrowed(DESCRIPTION), Arc::new(input_schema()));
    // Hints only (clients must not trust them): the tool deletes and overwrites, and touches
    // nothing outside the store.
    tool.annotations = Some(
        ToolAnnotations::with_title("Memory").read_only(false).destructive(true).idempotent(false).open_world(false),
    );
    tool
}
