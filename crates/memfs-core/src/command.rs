//! The six memory-tool commands, parsed from the tool's `input` object.
//!
//! Parsing is strict where the SDK is not: the Python SDK builds its command with
//! `construct_type_unchecked` (no validation), so a missing field or a wrong type surfaces
//! later as a leaked Python `repr`. Here every such input gets an [`InputError`] naming the
//! field, before anything touches the tree. Paths are kept as sent; they are validated by
//! [`crate::MemoryPath`] when the command runs, so path errors keep the SDK's precedence.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

/// One memory-tool command, with its fields as the model sent them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Show a directory listing or a file with line numbers.
    View {
        /// The path to show.
        path: String,
        /// `[start, end]`, 1-based and inclusive, `-1` for the end; any other length shows all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view_range: Option<Vec<i128>>,
    },
    /// Create a new file; never overwrites.
    Create {
        /// Where.
        path: String,
        /// The whole content.
        file_text: String,
    },
    /// Replace one unique occurrence of `old_str`.
    StrReplace {
        /// The file.
        path: String,
        /// Text to find; must occur exactly once.
        old_str: String,
        /// Replacement. `None` when omitted: the `spec` dialect reads that as empty.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new_str: Option<String>,
    },
    /// Insert text after line `insert_line` (0 = at the start).
    Insert {
        /// The file.
        path: String,
        /// Line after which to insert.
        insert_line: i128,
        /// The text.
        insert_text: String,
    },
    /// Delete a file or a directory, recursively.
    Delete {
        /// What.
        path: String,
    },
    /// Rename or move a file or directory; never overwrites.
    Rename {
        /// Source.
        old_path: String,
        /// Destination.
        new_path: String,
    },
}

/// The command names, in the order the documentation lists them.
pub const COMMANDS: [&str; 6] = ["view", "create", "str_replace", "insert", "delete", "rename"];

impl Command {
    /// The command's name as the tool spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::View { .. } => "view",
            Command::Create { .. } => "create",
            Command::StrReplace { .. } => "str_replace",
            Command::Insert { .. } => "insert",
            Command::Delete { .. } => "delete",
            Command::Rename { .. } => "rename",
        }
    }

    /// Whether the command can change the tree.
    pub fn is_mutation(&self) -> bool {
        !matches!(self, Command::View { .. })
    }

    /// Parses a tool `input` object.
    ///
    /// Unknown extra fields are ignored, as the SDK ignores them. `null` counts as missing for
    /// a required field and as absent for an optional one.
    ///
    /// ```
    /// use memfs_core::Command;
    /// let cmd = Command::from_input(&serde_json::json!({"command": "view", "path": "/memories"})).unwrap();
    /// assert_eq!(cmd.name(), "view");
    /// let err = Command::from_input(&serde_json::json!({"command": "insert", "path": "/memories/a",
    ///     "insert_line": 1.5, "insert_text": "x"})).unwrap_err();
    /// assert_eq!(err.to_string(), "Invalid input for command `insert`: field `insert_line` must be an integer, got 1.5");
    /// ```
    pub fn from_input(input: &Value) -> Result<Command, InputError> {
        let Value::Object(map) = input else {
            return Err(InputError::NotAnObject { got: kind_of(input) });
        };
        let name = match map.get("command") {
            None | Some(Value::Null) => return Err(InputError::MissingCommand),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => return Err(InputError::UnknownCommand { command: short_json(other) }),
        };
        let f = Fields { map, command: name };
        Ok(match name {
            "view" => Command::View { path: f.string("path")?, view_range: f.view_range()? },
            "create" => Command::Create { path: f.string("path")?, file_text: f.string("file_text")? },
            "str_replace" => Command::StrReplace {
                path: f.string("path")?,
                old_str: f.string("old_str")?,
                new_str: f.optional_string("new_str")?,
            },
            "insert" => Command::Insert {
                path: f.string("path")?,
                insert_line: f.integer("insert_line")?,
                insert_text: f.string("insert_text")?,
            },
            "delete" => Command::Delete { path: f.string("path")? },
            "rename" => Command::Rename { old_path: f.string("old_path")?, new_path: f.string("new_path")? },
            // Echoed shortened, like a wrong value: an answer does not grow with the input.
            other => return Err(InputError::UnknownCommand { command: short(other) }),
        })
    }
}

/// A tool input that is not a well-formed command. The message names the field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("Invalid input: expected a JSON object with a `command` field, got {got}")]
    NotAnObject {
        /// What it was instead.
        got: &'static str,
    },
    /// No `command` field.
    #[error(
        "Invalid input: missing required field `command` (one of: view, create, str_replace, insert, delete, rename)"
    )]
    MissingCommand,
    /// A `command` the tool does not have.
    #[error("Unknown command: {command}. Valid commands are: view, create, str_replace, insert, delete, rename")]
    UnknownCommand {
        /// The command as sent.
        command: String,
    },
    /// A required field is absent or null.
    #[error("Invalid input for command `{command}`: missing required field `{field}`")]
    Missing {
        /// The command.
        command: String,
        /// The field.
        field: &'static str,
    },
    /// A field has the wrong JSON type.
    #[error("Invalid input for command `{command}`: field `{field}` must be {expected}, got {got}")]
    WrongType {
        /// The command.
        command: String,
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What was sent (a JSON rendering, shortened).
        got: String,
    },
}

struct Fields<'a> {
    map: &'a Map<String, Value>,
    command: &'a str,
}

impl Fields<'_> {
    fn get(&self, field: &'static str) -> Option<&Value> {
        self.map.get(field).filter(|v| !v.is_null())
    }

    fn missing(&self, field: &'static str) -> InputError {
        InputError::Missing { command: self.command.to_owned(), field }
    }

    fn wrong(&self, field: &'static str, expected: &'static str, got: &Value) -> InputError {
        InputError::WrongType { command: self.command.to_owned(), field, expected, got: short_json(got) }
    }

    fn string(&self, field: &'static str) -> Result<String, InputError> {
        self.optional_string(field)?.ok_or_else(|| self.missing(field))
    }

    fn optional_string(&self, field: &'static str) -> Result<Option<String>, InputError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(field, "a string", other)),
        }
    }

    fn integer(&self, field: &'static str) -> Result<i128, InputError> {
        let v = self.get(field).ok_or_else(|| self.missing(field))?;
        as_integer(v).ok_or_else(|| self.wrong(field, "an integer", v))
    }

    fn view_range(&self) -> Result<Option<Vec<i128>>, InputError> {
        const EXPECTED: &str = "an array of two integers [start_line, end_line]";
        let Some(v) = self.get("view_range") else { return Ok(None) };
        let Value::Array(items) = v else { return Err(self.wrong("view_range", EXPECTED, v)) };
        items
            .iter()
            .map(|i| as_integer(i).ok_or_else(|| self.wrong("view_range", EXPECTED, v)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// A JSON integer anywhere in the `i64` or `u64` range (Python's ints are unbounded, and the SDK
/// echoes what it got, so the whole exactly-parsed range is accepted), or a float with no
/// fractional part that is exactly representable (`1.0` counts, as the SDK coerces it). `1.5`,
/// `"1"`, `true` and integers that `serde_json` could only parse approximately do not.
fn as_integer(v: &Value) -> Option<i128> {
    /// Largest magnitude below which every integral `f64` is exact: 2^53.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    let Value::Number(n) = v else { return None };
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() <= EXACT).then_some(f as i128)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON rendering of a value, cut to a readable length on a character boundary.
fn short_json(v: &Value) -> String {
    short(&v.to_string())
}

/// `s` cut to a readable length on a character boundary, with `…` when cut.
fn short(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        Command::from_input(&v).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_command() {
        let cases = [
            json!({"command": "view", "path": "/memories", "view_range": [1, -1]}),
            json!({"command": "create", "path": "/memories/a", "file_text": ""}),
            json!({"command": "str_replace", "path": "/memories/a", "old_str": "x", "new_str": "y"}),
            json!({"command": "insert", "path": "/memories/a", "insert_line": 0, "insert_text": "t"}),
            json!({"command": "delete", "path": "/memories/a"}),
            json!({"command": "rename", "old_path": "/memories/a", "new_path": "/memories/b"}),
        ];
        for (case, name) in cases.iter().zip(COMMANDS) {
            let cmd = Command::from_input(case).unwrap();
            assert_eq!(cmd.name(), name);
            // The serde form round-trips to the same input.
            assert_eq!(&serde_json::to_value(&cmd).unwrap(), case);
        }
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(err(json!({"command": "view"})), "Invalid input for command `view`: missing required field `path`");
        assert_eq!(
            err(json!({"command": "create", "path": "/memories/a", "file_text": null})),
            "Invalid input for command `create`: missing required field `file_text`"
        );
        assert_eq!(
            err(json!({"command": "insert", "path": "/memories/a", "insert_line": "1", "insert_text": "x"})),
            "Invalid input for command `insert`: field `insert_line` must be an integer, got \"1\""
        );
        assert_eq!(
            err(json!({"command": "insert", "path": "/memories/a", "insert_line": true, "insert_text": "x"})),
            "Invalid input for command `insert`: field `insert_line` must be an integer, got true"
        );
        assert_eq!(
            err(json!({"command": "view", "path": "/memories/a", "view_range": [1.5, 2]})),
            "Invalid input for command `view`: field `view_range` must be an array of two integers [start_line, end_line], got [1.5,2]"
        );
        assert_eq!(
            err(json!({"command": "str_replace", "path": "/memories/a", "old_str": 5, "new_str": "q"})),
            "Invalid input for command `str_replace`: field `old_str` must be a string, got 5"
        );
        assert_eq!(
            err(json!({"path": "/memories"})),
            "Invalid input: missing required field `command` (one of: view, create, str_replace, insert, delete, rename)"
        );
        assert_eq!(
            err(json!({"command": "undo"})),
            "Unknown command: undo. Valid commands are: view, create, str_replace, insert, delete, rename"
        );
        assert_eq!(err(json!([1])), "Invalid input: expected a JSON object with a `command` field, got an array");
        // A long unknown command is echoed shortened: no answer grows with its input.
        assert_eq!(
            err(json!({"command": "é".repeat(100_000)})),
            format!(
                "Unknown command: {}…. Valid commands are: view, create, str_replace, insert, delete, rename",
                "é".repeat(80)
            )
        );
    }

    #[test]
    fn integral_floats_are_integers() {
        let cmd = Command::from_input(
            &json!({"command": "insert", "path": "/memories/a", "insert_line": 2.0, "insert_text": ""}),
        );
        assert!(matches!(cmd, Ok(Command::Insert { insert_line: 2, .. })));
        let cmd = Command::from_input(&json!({"command": "view", "path": "/memories/a", "view_range": null}));
        assert!(matches!(cmd, Ok(Command::View { view_range: None, .. })));
    }
}
