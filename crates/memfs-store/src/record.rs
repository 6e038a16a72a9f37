//! What a commit did, as it is recorded with the commit: a typed [`Record`].
//!
//! A record is stored as a line of JSON in the commit's `command` field, written and read
//! through serde. The bytes are those the first writers wrote (object keys of the
//! records that are not tool commands in alphabetical order, as `serde_json::json!` sorted
//! them), so records already in a store read back, and a store written by this version reads
//! in an older one. A record this version does not know is kept as it is
//! ([`Record::Unknown`]): a newer writer's history still lists, and is never rewritten.

use memfs_core::{Command, Day};
use serde::{Deserialize, Serialize, Serializer};

/// What one commit did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Record {
    /// A memory-tool command, as applied (after redaction by the sensitive-data filter).
    Tool(Command),
    /// A command of `memfs` itself (restore, undo, policy, expiration, import, purge …).
    Memfs(Operation),
    /// A record this version does not know (a newer writer's, or not JSON), kept as stored.
    Unknown(String),
}

/// A commit made by `memfs` rather than by a tool call, stored as a `command` tag and its
/// fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Operation {
    /// `memfs restore`: `path` made what it was at the commit `commit` (generation
    /// `generation`), which `at` named.
    Restore {
        /// The path restored, normalised.
        path: String,
        /// The revision or time as given.
        at: String,
        /// The commit restored from (its id).
        commit: String,
        /// That commit's generation.
        generation: u64,
    },
    /// `memfs undo`: the tree made what it was before the commit `commit`.
    Undo {
        /// The commit undone (its id).
        commit: String,
        /// Its generation.
        generation: u64,
    },
    /// `memfs policy set` or `unset`.
    Policy(PolicyChange),
    /// Last-access days of files read, committed on their own.
    RecordAccess {
        /// How many files.
        #[serde(default)]
        files: u64,
    },
    /// Files unused for a while, removed.
    Expire {
        /// How many files.
        #[serde(default)]
        files: u64,
        /// After how many days unused.
        #[serde(default)]
        unused_for_days: Day,
    },
    /// `memfs import`.
    Import {
        /// How many files.
        #[serde(default)]
        files: u64,
        /// Where they came from (a folder's name).
        from: String,
    },
    /// `memfs purge`: the commit that erased `path`.
    Purge {
        /// The path, normalised.
        path: String,
        /// How many contents it erased.
        versions: u64,
    },
    /// The record of a commit rewritten by a purge, in place of one that named the purged path.
    Purged,
    /// A change of `memfs.keys`, recorded in a commit of its own (the tree
    /// unchanged) so that the head names the new change counter: an older `memfs.keys` put
    /// back is then a rollback.
    Keys {
        /// What changed: `add`, `remove` or `passwd` (a slot), `confirm` (a slot confirmed
        /// the root of another holder's rotation), `rotate`, `shred`.
        change: String,
        /// `memfs.keys`' change counter after the change.
        counter: u64,
        /// The slot concerned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        slot: Option<u32>,
    },
}

/// A policy change: one `policy` tag for both kinds, told apart by their fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PolicyChange {
    /// `memfs policy set KEY VALUE`.
    Set {
        /// The key.
        set: String,
        /// The value as it reads back (`64KiB` is recorded as `65536`).
        value: String,
    },
    /// `memfs policy unset KEY`.
    Unset {
        /// The key.
        unset: String,
    },
}

impl Record {
    /// Reads a stored record; what does not parse as a known one is [`Record::Unknown`].
    pub fn parse(text: &str) -> Record {
        if let Ok(operation) = serde_json::from_str(text) {
            return Record::Memfs(operation);
        }
        // The tool's own parser: serde's tagged enums cannot read `insert_line` (an i128).
        let command = serde_json::from_str(text).ok().and_then(|input| Command::from_input(&input).ok());
        command.map_or_else(|| Record::Unknown(text.to_owned()), Record::Tool)
    }

    /// The record as stored: one line of JSON (an unknown record as it was read).
    pub fn to_json(&self) -> String {
        match self {
            Record::Tool(command) => serde_json::to_string(command).expect("a command serializes"),
            Record::Memfs(operation) => serde_json::to_string(operation).expect("a record serializes"),
            Record::Unknown(text) => text.clone(),
        }
    }
}

/// As JSON (`memfs log --json`): the stored object; an unknown record as the JSON it holds, or
/// as a string when it is not JSON.
impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Record::Tool(command) => command.serialize(serializer),
            Record::Memfs(operation) => operation.serialize(serializer),
            Record::Unknown(text) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(value) => value.serialize(serializer),
                Err(_) => serializer.serialize_str(text),
            },
        }
    }
}

/// No record: stored as an empty string (what a commit made without one, in tests, holds).
impl Default for Record {
    fn default() -> Record {
        Record::Unknown(String::new())
    }
}

impl From<Command> for Record {
    fn from(command: Command) -> Record {
        Record::Tool(command)
    }
}

impl From<Operation> for Record {
    fn from(operation: Operation) -> Record {
        Record::Memfs(operation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// Every variant, with the exact JSON today's writers store for it.
    fn every_variant() -> Vec<(Record, String)> {
        vec![
            (
                Record::Tool(Command::Create { path: "/memories/a.md".into(), file_text: "x\n".into() }),
                r#"{"command":"create","path":"/memories/a.md","file_text":"x\n"}"#.into(),
            ),
            (
                Record::Tool(Command::StrReplace {
                    path: "/memories/a.md".into(),
                    old_str: "x".into(),
                    new_str: Some("y".into()),
                }),
                r#"{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"y"}"#.into(),
            ),
            (
                Record::Tool(Command::Insert {
                    path: "/memories/a.md".into(),
                    insert_line: 1,
                    insert_text: "t".into(),
                }),
                r#"{"command":"insert","path":"/memories/a.md","insert_line":1,"insert_text":"t"}"#.into(),
            ),
            (
                Record::Tool(Command::Delete { path: "/memories/a.md".into() }),
                r#"{"command":"delete","path":"/memories/a.md"}"#.into(),
            ),
            (
                Record::Tool(Command::Rename { old_path: "/memories/a".into(), new_path: "/memories/b".into() }),
                r#"{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}"#.into(),
            ),
            (
                Record::Memfs(Operation::Restore {
                    path: "/memories".into(),
                    at: "HEAD~1".into(),
                    commit: ID.into(),
                    generation: 3,
                }),
                format!(r#"{{"command":"restore","path":"/memories","at":"HEAD~1","commit":"{ID}","generation":3}}"#),
            ),
            (
                Record::Memfs(Operation::Undo { commit: ID.into(), generation: 5 }),
                format!(r#"{{"command":"undo","commit":"{ID}","generation":5}}"#),
            ),
            (
                Record::Memfs(Operation::Policy(PolicyChange::Set {
                    set: "max-file-bytes".into(),
                    value: "65536".into(),
                })),
                r#"{"command":"policy","set":"max-file-bytes","value":"65536"}"#.into(),
            ),
            (
                Record::Memfs(Operation::Policy(PolicyChange::Unset { unset: "max-file-bytes".into() })),
                r#"{"command":"policy","unset":"max-file-bytes"}"#.into(),
            ),
            (Record::Memfs(Operation::RecordAccess { files: 2 }), r#"{"command":"record-access","files":2}"#.into()),
            (
                Record::Memfs(Operation::Expire { files: 1, unused_for_days: 30 }),
                r#"{"command":"expire","files":1,"unused_for_days":30}"#.into(),
            ),
            (
                Record::Memfs(Operation::Import { files: 3, from: "notes".into() }),
                r#"{"command":"import","files":3,"from":"notes"}"#.into(),
            ),
            (
                Record::Memfs(Operation::Purge { path: "/memories/secret.md".into(), versions: 2 }),
                r#"{"command":"purge","path":"/memories/secret.md","versions":2}"#.into(),
            ),
            (Record::Memfs(Operation::Purged), r#"{"command":"purged"}"#.into()),
            (
                Record::Memfs(Operation::Keys { change: "remove".into(), counter: 3, slot: Some(2) }),
                r#"{"command":"keys","change":"remove","counter":3,"slot":2}"#.into(),
            ),
            (Record::Unknown(r#"{"command":"mystery","n":1}"#.into()), r#"{"command":"mystery","n":1}"#.into()),
            (Record::Unknown("not json".into()), "not json".into()),
        ]
    }

    #[test]
    fn every_variant_round_trips_through_its_stored_bytes() {
        for (record, json) in every_variant() {
            assert_eq!(record.to_json(), json, "{record:?}");
            assert_eq!(Record::parse(&json), record, "{json}");
            // `log --json` shows the stored JSON as JSON.
            let shown = serde_json::to_value(&record).unwrap();
            let expected = serde_json::from_str(&json).unwrap_or(serde_json::Value::String(json.clone()));
            assert_eq!(shown, expected, "{json}");
        }
    }

    /// The first writers built these records with `serde_json::json!` (keys sorted)
    /// or by serializing a struct or a `Command` (fields in order): the same bytes come out.
    #[test]
    fn todays_writers_bytes_are_the_records_bytes() {
        let written = [
            serde_json::json!({"command": "record-access", "files": 2usize}).to_string(),
            serde_json::json!({"command": "expire", "unused_for_days": 30u32, "files": 1usize}).to_string(),
            serde_json::json!({"command": "import", "from": "notes", "files": 3usize}).to_string(),
            serde_json::json!({"command": "policy", "set": "max-file-bytes", "value": "65536"}).to_string(),
            serde_json::json!({"command": "policy", "unset": "max-file-bytes"}).to_string(),
            serde_json::json!({"command": "purge", "path": "/memories/secret.md", "versions": 2usize}).to_string(),
        ];
        let records = [
            Record::Memfs(Operation::RecordAccess { files: 2 }),
            Record::Memfs(Operation::Expire { files: 1, unused_for_days: 30 }),
            Record::Memfs(Operation::Import { files: 3, from: "notes".into() }),
            Record::Memfs(Operation::Policy(PolicyChange::Set { set: "max-file-bytes".into(), value: "65536".into() })),
            Record::Memfs(Operation::Policy(PolicyChange::Unset { unset: "max-file-bytes".into() })),
            Record::Memfs(Operation::Purge { path: "/memories/secret.md".into(), versions: 2 }),
        ];
        for (json, record) in written.iter().zip(records) {
            assert_eq!(&record.to_json(), json);
            assert_eq!(Record::parse(json), record);
        }
    }

    /// A record that names a known command but lacks what it needs is kept as stored.
    #[test]
    fn a_record_this_version_cannot_read_is_kept_as_stored() {
        for text in [r#"{"command":"restore","path":"/memories"}"#, r#"{"other":1}"#, "", r#"{"command":"policy"}"#] {
            assert_eq!(Record::parse(text), Record::Unknown(text.into()));
            assert_eq!(Record::parse(text).to_json(), text);
        }
    }
}
