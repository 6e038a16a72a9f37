//! The sensitive-data filter in each mode (`off`, `warn`, `redact`, `reject`), in both dialects:
//! what is written, what the answer says, and what history keeps. The filter judges the file as
//! written, so a secret an edit completes is caught, and line numbers are the file's.

use std::path::Path;

use memfs::Dialect;
use memfs::history::Shown;
use memfs_core::sensitive::{self, CustomRule};
use serde_json::{Value, json};

use crate::safeguards::{
    AWS_KEY, DIALECTS, EMPLOYEE_ID, EMPLOYEE_RULE, GITHUB_TOKEN, SECRETS, Store, already_exists, create, created,
    edited, file_too_large, insert, insert_out_of_range, inserted, redacted, rejected, replace, view, warned,
};

/// The texts each command writes in the filter tests, and what they find.
const CREATE_TEXT: &str = "deploy key: AKIA2E3MPLZQ7WX4KT5N\nbadge EMP-004211\n";
const CREATE_SUMMARY: &str = "2 findings: aws-access-key (line 1), custom:employee-id (line 2)";
const CREATE_REDACTED: &str = "deploy key: [REDACTED:aws-access-key]\nbadge [REDACTED:custom:employee-id]\n";
/// `str_replace` of `TBD` in `notes\ntoken: TBD\nend\n`.
const REPLACE_NEW: &str = "ghp_MyWuUFjsUNPjc01T5GOBUSZGi6HWGK10Zb0R\nowner EMP-123456";
/// Lines are counted in the file as written.
const REPLACE_SUMMARY: &str = "2 findings: github-token (line 2), custom:employee-id (line 3)";
const REPLACE_NEW_REDACTED: &str = "[REDACTED:github-token]\nowner [REDACTED:custom:employee-id]";
/// `insert` after line 1 of `a\nb\n`.
const INSERT_TEXT: &str = "AKIA2E3MPLZQ7WX4KT5N EMP-004211";
const INSERT_SUMMARY: &str = "2 findings: aws-access-key (line 2), custom:employee-id (line 2)";
const INSERT_REDACTED: &str = "[REDACTED:aws-access-key] [REDACTED:custom:employee-id]";
/// What history records of that insert: the new part of the file, its newline included.
const INSERT_RECORDED: &str = "[REDACTED:aws-access-key] [REDACTED:custom:employee-id]\n";

/// A store in `mode` with the employee-id rule and two plain files to edit.
async fn filtered(dialect: Dialect, mode: &str) -> Store {
    let s = Store::new(dialect);
    s.set("rule.employee-id", EMPLOYEE_RULE).await;
    if mode != "warn" {
        s.set("sensitive", mode).await;
    }
    assert_eq!(s.fs.policy().await.unwrap().get("sensitive").unwrap(), mode);
    s.ok(create("/memories/r.txt", "notes\ntoken: TBD\nend\n"), &created("/memories/r.txt")).await;
    s.ok(create("/memories/i.txt", "a\nb\n"), &created("/memories/i.txt")).await;
    s
}

/// The snippet of `r.txt` after its `TBD` became `new`.
fn replace_snippet(new: &str) -> String {
    let content = format!("notes\ntoken: {new}\nend\n");
    let lines: Vec<&str> = content.split('\n').collect();
    // The snippet: two lines before the change (there is one), the changed line, two after.
    edited(1, &lines[..lines.len().min(4)])
}

#[tokio::test]
async fn sensitive_off_writes_as_given_and_says_nothing() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "off").await;
        s.ok(create("/memories/s.txt", CREATE_TEXT), &created("/memories/s.txt")).await;
        s.ok(replace("/memories/r.txt", "TBD", REPLACE_NEW), &replace_snippet(REPLACE_NEW)).await;
        s.ok(insert("/memories/i.txt", 1, INSERT_TEXT), &inserted("/memories/i.txt")).await;
        assert_eq!(s.file("/memories/s.txt").await.as_deref(), Some(CREATE_TEXT));
        assert_eq!(s.file("/memories/r.txt").await.unwrap(), format!("notes\ntoken: {REPLACE_NEW}\nend\n"));
        assert_eq!(s.file("/memories/i.txt").await.unwrap(), format!("a\n{INSERT_TEXT}\nb\n"));
    }
}

#[tokio::test]
async fn sensitive_warn_writes_as_given_and_warns() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "warn").await;
        s.ok(create("/memories/s.txt", CREATE_TEXT), &warned(&created("/memories/s.txt"), CREATE_SUMMARY)).await;
        s.ok(replace("/memories/r.txt", "TBD", REPLACE_NEW), &warned(&replace_snippet(REPLACE_NEW), REPLACE_SUMMARY))
            .await;
        s.ok(insert("/memories/i.txt", 1, INSERT_TEXT), &warned(&inserted("/memories/i.txt"), INSERT_SUMMARY)).await;
        assert_eq!(s.file("/memories/s.txt").await.as_deref(), Some(CREATE_TEXT));
        assert_eq!(s.file("/memories/r.txt").await.unwrap(), format!("notes\ntoken: {REPLACE_NEW}\nend\n"));
        assert_eq!(s.file("/memories/i.txt").await.unwrap(), format!("a\n{INSERT_TEXT}\nb\n"));
        // The recorded commands are the ones given.
        let log = s.fs.log(Some(3), None).await.unwrap();
        let commands: Vec<Value> = log.iter().map(|c| serde_json::from_str(&c.command).unwrap()).collect();
        assert_eq!(
            commands,
            [
                json!({"command": "insert", "path": "/memories/i.txt", "insert_line": 1, "insert_text": INSERT_TEXT}),
                json!({"command": "str_replace", "path": "/memories/r.txt", "old_str": "TBD", "new_str": REPLACE_NEW}),
                json!({"command": "create", "path": "/memories/s.txt", "file_text": CREATE_TEXT}),
            ]
        );
    }
}

#[tokio::test]
async fn sensitive_redact_writes_markers_and_says_so() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "redact").await;
        s.ok(create("/memories/s.txt", CREATE_TEXT), &redacted(&created("/memories/s.txt"), CREATE_SUMMARY)).await;
        s.ok(
            replace("/memories/r.txt", "TBD", REPLACE_NEW),
            &redacted(&replace_snippet(REPLACE_NEW_REDACTED), REPLACE_SUMMARY),
        )
        .await;
        s.ok(insert("/memories/i.txt", 1, INSERT_TEXT), &redacted(&inserted("/memories/i.txt"), INSERT_SUMMARY)).await;
        // What a view shows is what was stored.
        s.ok(
            view("/memories/s.txt"),
            "Here's the content of /memories/s.txt with line numbers:\n     1\tdeploy key: [REDACTED:aws-access-key]\n     \
             2\tbadge [REDACTED:custom:employee-id]\n     3\t",
        )
        .await;
        assert_eq!(s.file("/memories/s.txt").await.as_deref(), Some(CREATE_REDACTED));
        assert_eq!(s.file("/memories/r.txt").await.unwrap(), format!("notes\ntoken: {REPLACE_NEW_REDACTED}\nend\n"));
        assert_eq!(s.file("/memories/i.txt").await.unwrap(), format!("a\n{INSERT_REDACTED}\nb\n"));
        // A text without findings is written without a note.
        s.ok(create("/memories/plain.txt", "EMP-12345 is too short"), &created("/memories/plain.txt")).await;
    }
}

#[tokio::test]
async fn sensitive_reject_refuses_and_changes_nothing() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "reject").await;
        s.refused(create("/memories/s.txt", CREATE_TEXT), &rejected("/memories/s.txt", CREATE_SUMMARY)).await;
        s.refused(create("/memories/new/s.txt", CREATE_TEXT), &rejected("/memories/new/s.txt", CREATE_SUMMARY)).await;
        s.refused(replace("/memories/r.txt", "TBD", REPLACE_NEW), &rejected("/memories/r.txt", REPLACE_SUMMARY)).await;
        s.refused(insert("/memories/i.txt", 1, INSERT_TEXT), &rejected("/memories/i.txt", INSERT_SUMMARY)).await;
        // Only the custom rule.
        s.refused(
            insert("/memories/i.txt", 0, "x\ny\nbadge EMP-999999"),
            &rejected("/memories/i.txt", "1 finding: custom:employee-id (line 3)"),
        )
        .await;
        // Text without findings passes.
        s.ok(replace("/memories/r.txt", "TBD", "done"), &replace_snippet("done")).await;
        // Nothing of the refused texts reached history.
        for c in s.fs.log(None, None).await.unwrap() {
            for secret in SECRETS {
                assert!(!c.command.contains(secret), "{secret} in {}", c.command);
            }
        }
    }
}

/// The command's own errors come before the filter, in each dialect's wording.
#[tokio::test]
async fn sensitive_filter_runs_after_the_commands_own_checks() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "reject").await;
        s.refused(create("/memories/r.txt", CREATE_TEXT), &already_exists("/memories/r.txt", dialect)).await;
        s.refused(
            replace("/memories/r.txt", "absent", REPLACE_NEW),
            "No replacement was performed, old_str `absent` did not appear verbatim in /memories/r.txt.",
        )
        .await;
        s.refused(insert("/memories/i.txt", 7, INSERT_TEXT), &insert_out_of_range(7, 2, dialect)).await;
    }
}

/// Redaction happens before the size check: the marker is longer than the key it replaces.
#[tokio::test]
async fn sensitive_redact_limits_see_the_redacted_text() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "redact").await;
        s.set("max-file-bytes", "100").await;
        let text = format!("{AWS_KEY} {}", "k".repeat(79)); // 100 bytes; 105 once redacted
        s.refused(create("/memories/k.txt", &text), &file_too_large("/memories/k.txt", 105, 100)).await;
        let text = format!("{AWS_KEY} {}", "k".repeat(74)); // 95 bytes; 100 once redacted
        s.ok(
            create("/memories/k.txt", &text),
            &redacted(&created("/memories/k.txt"), "1 finding: aws-access-key (line 1)"),
        )
        .await;
        assert_eq!(s.file("/memories/k.txt").await.unwrap(), format!("[REDACTED:aws-access-key] {}", "k".repeat(74)));
    }
}

/// In `redact` mode no history entry keeps a secret: the commands are recorded as applied (the
/// changed part of the old content, and what the redacted file has in its place), and every past
/// version of every file, the diffs and the log hold only markers.
#[tokio::test]
async fn sensitive_redact_leaves_no_trace_in_history() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "redact").await;
        let start = s.generation().await;
        s.call(&create("/memories/s.txt", CREATE_TEXT)).await;
        s.call(&replace("/memories/r.txt", "TBD", REPLACE_NEW)).await;
        s.call(&insert("/memories/i.txt", 1, INSERT_TEXT)).await;
        s.call(&json!({"command": "rename", "old_path": "/memories/s.txt", "new_path": "/memories/t.txt"})).await;
        assert_eq!(s.generation().await, start + 4);

        let log = s.fs.log(None, None).await.unwrap();
        let recorded: Vec<Value> = log.iter().take(4).map(|c| serde_json::from_str(&c.command).unwrap()).collect();
        assert_eq!(
            recorded,
            [
                json!({"command": "rename", "old_path": "/memories/s.txt", "new_path": "/memories/t.txt"}),
                json!({
                    "command": "insert", "path": "/memories/i.txt", "insert_line": 1, "insert_text": INSERT_RECORDED
                }),
                json!({
                    "command": "str_replace", "path": "/memories/r.txt", "old_str": "TBD",
                    "new_str": REPLACE_NEW_REDACTED
                }),
                json!({"command": "create", "path": "/memories/s.txt", "file_text": CREATE_REDACTED}),
            ]
        );
        let mut everything = String::new();
        for c in &log {
            // All that `memfs log` and `log --json` show of it (they render the binary's words
            // from these fields).
            everything.push_str(&serde_json::to_string(c).unwrap());
            for path in ["/memories", "/memories/s.txt", "/memories/t.txt", "/memories/r.txt", "/memories/i.txt"] {
                match s.fs.show(&format!("@{}:{path}", c.generation)).await {
                    Ok(Shown::File(bytes)) => everything.push_str(&String::from_utf8_lossy(&bytes)),
                    Ok(Shown::Dir(entries)) => everything.push_str(&entries.join("\n")),
                    Ok(Shown::Commit(_)) => unreachable!("a path was given"),
                    Err(_) => {} // not there at that generation
                }
            }
        }
        everything.push_str(&s.fs.diff("@1", None, true).await.unwrap());
        for g in 1..s.generation().await {
            everything.push_str(&s.fs.diff(&format!("@{g}"), Some(&format!("@{}", g + 1)), true).await.unwrap());
        }
        for secret in SECRETS.iter().chain(&["EMP-123456"]) {
            assert!(!everything.contains(secret), "[{dialect}] {secret} is in the history:\n{everything}");
        }
        assert!(everything.contains("[REDACTED:github-token]"), "{everything}");
    }
}

const PEM_BEGIN: &str = "-----BEGIN RSA PRIVATE KEY-----";
const PEM_BODY: &str = "MIIEowIBAAKCAQEA4UBJVLii0DAIun0vpygIp+jule9DIlmG4BEOv8urtXdNLyoI\n\
                        WOfTT0UTGKrjU7K5oDPtYPsG0dYl1rZfg9Yn/GEg6lQdbkNxd69UK9ul5BvLIrwA";
const PEM_END: &str = "-----END RSA PRIVATE KEY-----";

/// The filter judges the file as written: a secret completed by an edit (half there before,
/// half written now, or joined by a deletion) is caught; one already there and left alone is
/// not reported again.
#[tokio::test]
async fn sensitive_filter_sees_a_secret_completed_by_an_edit() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "reject").await;
        let aws = "1 finding: aws-access-key (line 1)";
        s.ok(create("/memories/k.txt", "key: AKIA2E3MPLZQ7WX4\n"), &created("/memories/k.txt")).await;
        s.refused(replace("/memories/k.txt", "WX4", "WX4KT5N"), &rejected("/memories/k.txt", aws)).await;
        s.ok(create("/memories/j.txt", "key: AKIA2E3MPLZQ7WX4 KT5N\n"), &created("/memories/j.txt")).await;
        s.refused(replace("/memories/j.txt", "4 K", "4K"), &rejected("/memories/j.txt", aws)).await;
        s.ok(create("/memories/pem.txt", &format!("old key:\n{PEM_BEGIN}\n")), &created("/memories/pem.txt")).await;
        s.refused(
            insert("/memories/pem.txt", 2, &format!("{PEM_BODY}\n{PEM_END}")),
            &rejected("/memories/pem.txt", "1 finding: private-key (line 2)"),
        )
        .await;

        // warn: a secret already in the file is not reported again by an edit elsewhere.
        let s = filtered(dialect, "warn").await;
        let text = format!("key: {AWS_KEY}\nline2\n");
        s.ok(create("/memories/w.txt", &text), &warned(&created("/memories/w.txt"), aws)).await;
        s.ok(
            replace("/memories/w.txt", "line2", "line two"),
            &edited(1, &[&format!("key: {AWS_KEY}"), "line two", ""]),
        )
        .await;
        s.ok(insert("/memories/w.txt", 0, "top"), &inserted("/memories/w.txt")).await;
        assert_eq!(s.file("/memories/w.txt").await.unwrap(), format!("top\nkey: {AWS_KEY}\nline two\n"));

        // redact: the completed secret is replaced whole, the part written before included.
        let s = filtered(dialect, "redact").await;
        s.ok(create("/memories/k.txt", "key: AKIA2E3MPLZQ7WX4\n"), &created("/memories/k.txt")).await;
        s.ok(
            replace("/memories/k.txt", "WX4", "WX4KT5N"),
            &redacted(&edited(1, &["key: [REDACTED:aws-access-key]", ""]), aws),
        )
        .await;
        assert_eq!(s.file("/memories/k.txt").await.unwrap(), "key: [REDACTED:aws-access-key]\n");
        // A key block collapsed into one marker: the snippet is taken around it.
        let before = format!("a\nb\nc\n{PEM_BEGIN}\nPLACEHOLDER\n{PEM_END}\nz\n");
        s.ok(create("/memories/pem.txt", &before), &created("/memories/pem.txt")).await;
        s.ok(
            replace("/memories/pem.txt", "PLACEHOLDER", PEM_BODY),
            &redacted(&edited(2, &["b", "c", "[REDACTED:private-key]", "z", ""]), "1 finding: private-key (line 4)"),
        )
        .await;
        assert_eq!(s.file("/memories/pem.txt").await.unwrap(), "a\nb\nc\n[REDACTED:private-key]\nz\n");
    }
}

/// In `redact` mode, a secret completed by an edit does not reach history through the recorded
/// command either: the edit is recorded as applied (the changed part of the old content, and what
/// the redacted file has in its place), so history holds no part of the secret the file does not.
#[tokio::test]
async fn sensitive_redact_a_completed_secret_leaves_no_trace_in_history() {
    for dialect in DIALECTS {
        let s = filtered(dialect, "redact").await;
        let start = s.generation().await;
        s.ok(create("/memories/pem.txt", &format!("old key:\n{PEM_BEGIN}\n")), &created("/memories/pem.txt")).await;
        s.ok(
            insert("/memories/pem.txt", 2, &format!("{PEM_BODY}\n{PEM_END}")),
            &redacted(&inserted("/memories/pem.txt"), "1 finding: private-key (line 2)"),
        )
        .await;
        assert_eq!(s.file("/memories/pem.txt").await.unwrap(), "old key:\n[REDACTED:private-key]\n");
        s.ok(create("/memories/k.txt", "key: AKIA2E3MPLZQ7WX4\n"), &created("/memories/k.txt")).await;
        s.ok(
            replace("/memories/k.txt", "WX4", "WX4KT5N"),
            &redacted(&edited(1, &["key: [REDACTED:aws-access-key]", ""]), "1 finding: aws-access-key (line 1)"),
        )
        .await;
        assert_eq!(s.file("/memories/k.txt").await.unwrap(), "key: [REDACTED:aws-access-key]\n");
        assert_eq!(s.generation().await, start + 4);

        let log = s.fs.log(Some(4), None).await.unwrap();
        let recorded: Vec<Value> = log.iter().map(|c| serde_json::from_str(&c.command).unwrap()).collect();
        assert_eq!(
            recorded,
            [
                // The key's first 16 characters were in the file (and its history) already.
                json!({
                    "command": "str_replace", "path": "/memories/k.txt", "old_str": "AKIA2E3MPLZQ7WX4",
                    "new_str": "[REDACTED:aws-access-key]"
                }),
                json!({"command": "create", "path": "/memories/k.txt", "file_text": "key: AKIA2E3MPLZQ7WX4\n"}),
                json!({
                    "command": "insert", "path": "/memories/pem.txt", "insert_line": 2,
                    "insert_text": "[REDACTED:private-key]"
                }),
                json!({"command": "create", "path": "/memories/pem.txt", "file_text": format!("old key:\n{PEM_BEGIN}\n")}),
            ],
            "[{dialect}]"
        );
        // Nothing the edits added: not the access key's end, nor any line of the key block's
        // body, nor its end line; in the log, every version of both files, or the diffs.
        let mut everything = String::new();
        for c in &s.fs.log(None, None).await.unwrap() {
            // All that `memfs log` and `log --json` show of it (they render the binary's words
            // from these fields).
            everything.push_str(&serde_json::to_string(c).unwrap());
            for path in ["/memories/pem.txt", "/memories/k.txt"] {
                if let Ok(Shown::File(bytes)) = s.fs.show(&format!("@{}:{path}", c.generation)).await {
                    everything.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
        }
        for g in 1..s.generation().await {
            everything.push_str(&s.fs.diff(&format!("@{g}"), Some(&format!("@{}", g + 1)), true).await.unwrap());
        }
        for fragment in PEM_BODY.split('\n').chain(["KT5N", PEM_END]) {
            assert!(!everything.contains(fragment), "[{dialect}] {fragment} is in the history:\n{everything}");
        }
    }
}

/// Redaction is stable: a redacted text has no findings left, so writing it again (in any
/// mode) is not flagged and not changed. Checked on the planted-secret corpus
/// (`tests/corpus/secrets`, 104 realistic notes) and on the texts above.
#[tokio::test]
async fn sensitive_redaction_is_stable() {
    let rules = [CustomRule::new("employee-id", EMPLOYEE_RULE).unwrap()];
    let mut texts: Vec<(String, String)> = corpus_secrets();
    assert!(texts.len() >= 100, "{} corpus files", texts.len());
    let flagged = texts.iter().filter(|(_, t)| !sensitive::scan(t, &rules).is_empty()).count();
    assert!(flagged >= 100, "{flagged} corpus files with findings");
    for (i, t) in [CREATE_TEXT, REPLACE_NEW, INSERT_TEXT].iter().enumerate() {
        texts.push((format!("brief-{i}.md"), (*t).to_owned()));
    }
    // The library alone.
    for (name, text) in &texts {
        let findings = sensitive::scan(text, &rules);
        let once = sensitive::redact(text, &findings);
        assert_eq!(sensitive::scan(&once, &rules), [], "{name}: findings left after redaction:\n{once}");
    }
    // Through the engine: redact, read back, write again.
    for dialect in DIALECTS {
        let s = filtered(dialect, "redact").await;
        for (name, text) in &texts {
            let path = format!("/memories/corpus/{name}");
            s.ok(create(&path, text), &screened(text, &created(&path), &rules, redacted)).await;
            let stored = s.file(&path).await.unwrap();
            assert_eq!(stored, sensitive::redact(text, &sensitive::scan(text, &rules)), "{name}");
            let again = format!("/memories/again/{name}");
            s.ok(create(&again, &stored), &created(&again)).await;
            assert_eq!(s.file(&again).await.unwrap(), stored, "{name}");
        }
    }
}

/// `warn` never alters what is written, whatever the text holds.
#[tokio::test]
async fn sensitive_warn_never_alters_content() {
    let rules = [CustomRule::new("employee-id", EMPLOYEE_RULE).unwrap()];
    for dialect in DIALECTS {
        let s = filtered(dialect, "warn").await;
        for (name, text) in corpus_secrets() {
            let path = format!("/memories/corpus/{name}");
            s.ok(create(&path, &text), &screened(&text, &created(&path), &rules, warned)).await;
            assert_eq!(s.file(&path).await.unwrap(), text, "{name}");
        }
        // Edits too: the file keeps the exact bytes given, secrets and all.
        s.ok(create("/memories/w.txt", "x\r\n"), &created("/memories/w.txt")).await;
        s.call(&replace("/memories/w.txt", "x", &format!("{AWS_KEY}\t{GITHUB_TOKEN} "))).await;
        s.call(&insert("/memories/w.txt", 0, &format!("  {EMPLOYEE_ID}\u{a0}é\n\n"))).await;
        assert_eq!(
            s.file("/memories/w.txt").await.unwrap(),
            format!("  {EMPLOYEE_ID}\u{a0}é\n{AWS_KEY}\t{GITHUB_TOKEN} \r\n")
        );
    }
}

/// `message` with the note `with` gives for the findings in `text`, if there are any.
fn screened(text: &str, message: &str, rules: &[CustomRule], with: fn(&str, &str) -> String) -> String {
    match sensitive::scan(text, rules) {
        findings if findings.is_empty() => message.to_owned(),
        findings => with(message, &sensitive::summary(text, &findings)),
    }
}

/// The corpus of realistic notes with planted (fake) secrets, by file name.
fn corpus_secrets() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/secrets");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    out
}
