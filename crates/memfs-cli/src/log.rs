//! `memfs log`: the history, newest first; and how one commit reads (`memfs show REV` too).

use clap::Args;
use memfs::Command;
use memfs::history::{CommitRecord, Operation, PolicyChange, Record};
use serde_json::Value;

use crate::store::StoreArgs;
use crate::words::{change_lines, format_time, one_line, plural};

#[derive(Debug, Args)]
pub(crate) struct LogArgs {
    /// Only commits that changed this path (or something below it).
    #[arg(value_name = "PATH")]
    path: Option<String>,

    /// At most this many commits.
    #[arg(short = 'n', long, value_name = "N")]
    limit: Option<usize>,

    /// One JSON object per line, with the full ids, the time in milliseconds and RFC 3339, the
    /// command as JSON and the changes.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: LogArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let commits = memfs.log(args.limit, args.path.as_deref()).await?;
    let mut out = String::new();
    for c in &commits {
        if args.json {
            out.push_str(&log_json(c));
            out.push('\n');
        } else {
            out.push_str(&log_entry(c));
        }
    }
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}

/// A commit as `memfs log` prints it: `@GEN ID12 TIME ACTOR SUMMARY`, then one indented line
/// per change. An empty actor shows as `-`.
pub(crate) fn log_entry(c: &CommitRecord) -> String {
    let actor = if c.actor.is_empty() { "-".to_owned() } else { one_line(&c.actor) };
    let mut out = format!(
        "@{} {} {} {actor} {}\n",
        c.generation,
        c.short_id(),
        format_time(c.time_ms),
        one_line(&summary(&c.record()))
    );
    change_lines(&mut out, &c.changes);
    out
}

/// A commit as one JSON line (`memfs log --json`), without the newline: the record's fields,
/// `time` in RFC 3339, and `command` as the JSON it was recorded as.
fn log_json(c: &CommitRecord) -> String {
    let mut v = serde_json::to_value(c).expect("a record serializes");
    if let Value::Object(map) = &mut v {
        map.insert("time".into(), Value::String(format_time(c.time_ms)));
        map.insert("command".into(), serde_json::to_value(c.record()).expect("a record serializes"));
    }
    v.to_string()
}

/// A one-line summary of what a commit did: `create /memories/a.md`, `rename /memories/a
/// /memories/b`, `restore /memories to @3 (0a1b2c3d4e5f)`, `undo @5 (0a1b2c3d4e5f)`,
/// `import memories (3 files)`; a record this version does not know by its command's name
/// and path, or verbatim.
pub(crate) fn summary(record: &Record) -> String {
    let short = |id: &str| id.chars().take(12).collect::<String>();
    match record {
        Record::Tool(Command::Rename { old_path, new_path }) => format!("rename {old_path} {new_path}"),
        Record::Tool(
            command @ (Command::View { path, .. }
            | Command::Create { path, .. }
            | Command::StrReplace { path, .. }
            | Command::Insert { path, .. }
            | Command::Delete { path }),
        ) => format!("{} {path}", command.name()),
        Record::Memfs(operation) => match operation {
            Operation::Restore { path, commit, generation, .. } => {
                format!("restore {path} to @{generation} ({})", short(commit))
            }
            Operation::Undo { commit, generation } => format!("undo @{generation} ({})", short(commit)),
            Operation::Policy(PolicyChange::Set { set, value }) => format!("policy set {set} {value}"),
            Operation::Policy(PolicyChange::Unset { unset }) => format!("policy unset {unset}"),
            Operation::RecordAccess { files: n } => format!("record-access {}", files(*n)),
            Operation::Expire { files: n, unused_for_days } => {
                format!("expire {} unused for {unused_for_days}d", files(*n))
            }
            Operation::Import { files: n, from } => format!("import {from} ({})", files(*n)),
            Operation::Purge { path, .. } => format!("purge {path}"),
            Operation::Purged => "purged".to_owned(),
            Operation::Keys { change, slot: Some(slot), .. } => format!("key {change} slot {slot}"),
            Operation::Keys { change, slot: None, .. } => format!("key {change}"),
            _ => unknown(&record.to_json()),
        },
        Record::Unknown(text) => unknown(text),
        _ => unknown(&record.to_json()),
    }
}

/// A record this version does not read: its command's name (and path), or its text.
fn unknown(text: &str) -> String {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else { return text.to_owned() };
    match (map.get("command").and_then(Value::as_str), map.get("path").and_then(Value::as_str)) {
        (Some(name), Some(path)) => format!("{name} {path}"),
        (Some(name), None) => name.to_owned(),
        (None, _) => text.to_owned(),
    }
}

fn files(n: u64) -> String {
    plural(n, "file", "files")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command_summary(text: &str) -> String {
        summary(&Record::parse(text))
    }

    #[test]
    fn summarises_every_recorded_command() {
        assert_eq!(
            command_summary(r#"{"command":"create","path":"/memories/a","file_text":"x"}"#),
            "create /memories/a"
        );
        assert_eq!(
            command_summary(r#"{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}"#),
            "rename /memories/a /memories/b"
        );
        let id = "0123456789abcdef".repeat(4);
        assert_eq!(
            command_summary(&format!(
                r#"{{"command":"restore","path":"/memories","at":"HEAD~1","commit":"{id}","generation":3}}"#
            )),
            "restore /memories to @3 (0123456789ab)"
        );
        assert_eq!(
            command_summary(&format!(r#"{{"command":"undo","commit":"{id}","generation":5}}"#)),
            "undo @5 (0123456789ab)"
        );
        assert_eq!(command_summary(r#"{"command":"mystery"}"#), "mystery");
        assert_eq!(command_summary("not json"), "not json");
        assert_eq!(command_summary(r#"{"other":1}"#), r#"{"other":1}"#);
    }

    /// The summaries of the records only `memfs` writes (not tool commands).
    #[test]
    fn summarises_the_records_of_memfs_commands() {
        for (text, summary) in [
            (r#"{"command":"policy","set":"max-file-bytes","value":"65536"}"#, "policy set max-file-bytes 65536"),
            (r#"{"command":"policy","unset":"max-file-bytes"}"#, "policy unset max-file-bytes"),
            (r#"{"command":"record-access","files":1}"#, "record-access 1 file"),
            (r#"{"command":"expire","files":2,"unused_for_days":30}"#, "expire 2 files unused for 30d"),
            (r#"{"command":"import","files":3,"from":"notes"}"#, "import notes (3 files)"),
            (r#"{"command":"purge","path":"/memories/secret.md","versions":2}"#, "purge /memories/secret.md"),
            (r#"{"command":"purged"}"#, "purged"),
        ] {
            assert_eq!(command_summary(text), summary, "{text}");
        }
    }
}
