//! The policy enforced on `memfs exec` in both dialects: size limits, pagination and the
//! sensitive-data filter, run as the binary against a local folder store, with exact outputs.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::policy::{Store, commit, header, lines};
use crate::support::{assert_text, text};

#[test]
fn exec_refuses_writes_over_the_limits_in_both_dialects() {
    let s = Store::new();
    assert_text("file", &s.ok(&["policy", "set", "max-file-bytes", "16"]), "max-file-bytes = 16 (commit @1)\n");
    assert_text("files", &s.ok(&["policy", "set", "max-files", "2"]), "max-files = 2 (commit @2)\n");
    assert_text("store", &s.ok(&["policy", "set", "max-store-bytes", "30"]), "max-store-bytes = 30 (commit @3)\n");

    // The spec dialect, bare tool inputs.
    let out = s.exec(
        &[],
        &[
            r#"{"command":"create","path":"/memories/a.txt","file_text":"0123456789abcdefX"}"#,
            r#"{"command":"create","path":"/memories/a.txt","file_text":"0123456789abcdef"}"#,
            r#"{"command":"create","path":"/memories/b.txt","file_text":"0123456789abcd"}"#,
            r#"{"command":"create","path":"/memories/c.txt","file_text":"x"}"#,
        ],
    );
    assert_text(
        "spec",
        &out,
        &lines(&[
            r#"{"content":"Cannot write /memories/a.txt: the file would be 17 bytes, over this store's limit of 16 bytes per file (max-file-bytes). Nothing was written.","is_error":true}"#,
            r#"{"content":"File created successfully at: /memories/a.txt","is_error":false}"#,
            r#"{"content":"File created successfully at: /memories/b.txt","is_error":false}"#,
            r#"{"content":"Cannot create /memories/c.txt: the store holds 2 files and its limit is 2 files (max-files). Nothing was written.","is_error":true}"#,
        ]),
    );

    // The python-sdk dialect, tool_use blocks.
    let out = s.exec(
        &["--dialect", "python-sdk"],
        &[
            r#"{"type":"tool_use","id":"toolu_1","name":"memory","input":{"command":"str_replace","path":"/memories/b.txt","old_str":"abcd","new_str":"abcdef"}}"#,
            r#"{"type":"tool_use","id":"toolu_2","name":"memory","input":{"command":"insert","path":"/memories/a.txt","insert_line":0,"insert_text":"y"}}"#,
            r#"{"type":"tool_use","id":"toolu_3","name":"memory","input":{"command":"create","path":"/memories/d/c.txt","file_text":"x"}}"#,
            r#"{"type":"tool_use","id":"toolu_4","name":"memory","input":{"command":"rename","old_path":"/memories/b.txt","new_path":"/memories/d/b.txt"}}"#,
        ],
    );
    assert_text(
        "python-sdk",
        &out,
        &lines(&[
            r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"Cannot write /memories/b.txt: the store would hold 32 bytes of files (it holds 30), over its limit of 30 bytes (max-store-bytes). Nothing was written.","is_error":true}"#,
            r#"{"type":"tool_result","tool_use_id":"toolu_2","content":"Cannot write /memories/a.txt: the file would be 19 bytes, over this store's limit of 16 bytes per file (max-file-bytes). Nothing was written.","is_error":true}"#,
            r#"{"type":"tool_result","tool_use_id":"toolu_3","content":"Cannot create /memories/d/c.txt: the store holds 2 files and its limit is 2 files (max-files). Nothing was written.","is_error":true}"#,
            // A rename adds neither a file nor a byte.
            r#"{"type":"tool_result","tool_use_id":"toolu_4","content":"Successfully renamed /memories/b.txt to /memories/d/b.txt","is_error":false}"#,
        ]),
    );

    // Below a lowered limit, a file may still shrink, not grow.
    assert_text("lower", &s.ok(&["policy", "set", "max-file-bytes", "8"]), "max-file-bytes = 8 (commit @7)\n");
    let out = s.exec(
        &["--dialect", "python-sdk"],
        &[
            r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"abcdef","new_str":""}"#,
            r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"0","new_str":"00"}"#,
        ],
    );
    assert_text(
        "lowered",
        &out,
        &lines(&[
            r#"{"content":"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t0123456789","is_error":false}"#,
            r#"{"content":"Cannot write /memories/a.txt: the file would be 11 bytes, over this store's limit of 8 bytes per file (max-file-bytes). Nothing was written.","is_error":true}"#,
        ]),
    );
    // No limit on the count: the third file fits in the bytes left.
    s.ok(&["policy", "set", "max-files", "none"]);
    let out = s.exec(&[], &[r#"{"command":"create","path":"/memories/c.txt","file_text":"x"}"#]);
    assert_text(
        "third file",
        &out,
        &lines(&[r#"{"content":"File created successfully at: /memories/c.txt","is_error":false}"#]),
    );

    let c = s.commits();
    let expected = [
        header(&c, 10, "-", "create /memories/c.txt") + "  A /memories/c.txt\n",
        header(&c, 9, "-", "policy set max-files none"),
        header(&c, 8, "-", "str_replace /memories/a.txt") + "  M /memories/a.txt\n",
        header(&c, 7, "-", "policy set max-file-bytes 8"),
        header(&c, 6, "-", "rename /memories/b.txt /memories/d/b.txt") + "  R /memories/b.txt -> /memories/d/b.txt\n",
        header(&c, 5, "-", "create /memories/b.txt") + "  A /memories/b.txt\n",
        header(&c, 4, "-", "create /memories/a.txt") + "  A /memories/a.txt\n",
        header(&c, 3, "-", "policy set max-store-bytes 30"),
        header(&c, 2, "-", "policy set max-files 2"),
        header(&c, 1, "-", "policy set max-file-bytes 16"),
    ]
    .concat();
    assert_text("log: refused writes commit nothing", &s.ok(&["log"]), &expected);
    assert_text("a.txt", &s.ok(&["show", "HEAD:/memories/a.txt"]), "0123456789");
    assert_text("b.txt", &s.ok(&["show", "HEAD:/memories/d/b.txt"]), "0123456789abcd");
    assert_text("tree", &s.ok(&["show", "HEAD:/memories"]), "a.txt\nc.txt\nd/\n");
}

/// Lines `first` to `last` of the 100-line test file (`line NNN: ` and 190 `x`, 200
/// characters; line 101 is the empty one after the last newline), numbered as a view shows them.
fn numbered_lines(first: usize, last: usize) -> String {
    (first..=last)
        .map(|i| if i <= 100 { format!("{i:>6}\tline {i:03}: {}", "x".repeat(190)) } else { format!("{i:>6}\t") })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn exec_pages_views_at_view_max_chars() {
    let s = Store::new();
    // The smallest maximum allowed.
    assert_text("set", &s.ok(&["policy", "set", "view-max-chars", "10000"]), "view-max-chars = 10000 (commit @1)\n");
    let file_text: String = (1..=100).map(|i| format!("line {i:03}: {}\n", "x".repeat(190))).collect();
    let create = json!({"command": "create", "path": "/memories/long.md", "file_text": file_text}).to_string();
    let header = "Here's the content of /memories/long.md with line numbers:\n";
    for dialect in ["spec", "python-sdk"] {
        let _ = s.exec(&["--dialect", dialect], &[&create]);
        let out = s.exec(
            &["--dialect", dialect],
            &[
                r#"{"command":"view","path":"/memories/long.md"}"#,
                r#"{"command":"view","path":"/memories/long.md","view_range":[48,101]}"#,
                r#"{"command":"view","path":"/memories/long.md","view_range":[95,101]}"#,
            ],
        );
        let answers: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
        // 47 lines of 208 characters fit with the header (59) and the note; 48 would not.
        let expected = [
            format!(
                "{header}{}\n(Cut at 10000 characters: lines 1-47 of 1-101 shown. To see the next part, view this \
                 file with view_range [48, 101].)",
                numbered_lines(1, 47)
            ),
            format!(
                "{header}{}\n(Cut at 10000 characters: lines 48-94 of 48-101 shown. To see the next part, view this \
                 file with view_range [95, 101].)",
                numbered_lines(48, 94)
            ),
            format!("{header}{}", numbered_lines(95, 101)),
        ];
        assert_eq!(answers.len(), 3, "{dialect}: {out}");
        for (answer, expected) in answers.iter().zip(&expected) {
            assert_eq!(answer["is_error"], false, "{dialect}: {answer}");
            let content = answer["content"].as_str().expect("content");
            assert_text(dialect, content, expected);
            assert!(content.chars().count() <= 10_000, "{dialect}: {} characters", content.chars().count());
        }
    }
}

/// Secrets written in the redaction test; none may remain anywhere in the store's history.
const AWS_KEY: &str = "AKIA2E3MPLZQ7WX4KT5N";
const EMPLOYEE: &str = "EMP-004211";
const CARD: &str = "4111 1111 1111 1111";
const EMPLOYEE_2: &str = "EMP-999999";

#[test]
fn exec_rejects_and_redacts_sensitive_data_in_both_dialects() {
    let s = Store::new();
    let clean = json!({"command": "create", "path": "/memories/notes.md", "file_text": "badge: TBD\n"}).to_string();
    assert_text(
        "clean create",
        &s.exec(&[], &[&clean]),
        &lines(&[r#"{"content":"File created successfully at: /memories/notes.md","is_error":false}"#]),
    );
    assert_text("reject", &s.ok(&["policy", "set", "sensitive", "reject"]), "sensitive = reject (commit @2)\n");
    assert_text(
        "rule",
        &s.ok(&["policy", "set", "rule.emp", r"\bEMP-\d{6}\b"]),
        "rule.emp = \\bEMP-\\d{6}\\b (commit @3)\n",
    );

    let both = format!("deploy key: {AWS_KEY}\nbadge {EMPLOYEE}\n");
    let create_both = json!({"command": "create", "path": "/memories/r.md", "file_text": both}).to_string();
    let reject_tail =
        "This store's policy rejects it (sensitive = reject), so nothing was written. Remove it and try again.";
    assert_text(
        "reject, spec",
        &s.exec(&[], &[&create_both]),
        &lines(&[&format!(
            r#"{{"content":"Cannot write /memories/r.md: the text looks like it contains sensitive data (2 findings: aws-access-key (line 1), custom:emp (line 2)). {reject_tail}","is_error":true}}"#
        )]),
    );
    let block =
        |id: &str, input: &Value| json!({"type": "tool_use", "id": id, "name": "memory", "input": input}).to_string();
    let replace_tbd =
        json!({"command": "str_replace", "path": "/memories/notes.md", "old_str": "TBD", "new_str": EMPLOYEE_2});
    assert_text(
        "reject, python-sdk",
        &s.exec(&["--dialect", "python-sdk"], &[&block("toolu_1", &replace_tbd)]),
        &lines(&[&format!(
            r#"{{"type":"tool_result","tool_use_id":"toolu_1","content":"Cannot write /memories/notes.md: the text looks like it contains sensitive data (1 finding: custom:emp (line 1)). {reject_tail}","is_error":true}}"#
        )]),
    );
    assert_eq!(s.commits().len(), 3, "rejected writes commit nothing");
    assert_text("untouched", &s.ok(&["show", "HEAD:/memories/notes.md"]), "badge: TBD\n");

    // Redact: the markers are written, the answer says so.
    assert_text("redact", &s.ok(&["policy", "set", "sensitive", "redact"]), "sensitive = redact (commit @4)\n");
    let note = |summary: &str| {
        format!(
            "\\n\\nNote: the text looked like it contained sensitive data ({summary}). Each finding was replaced with \
             a [REDACTED:<detector>] marker before it was written."
        )
    };
    assert_text(
        "redact, spec",
        &s.exec(&[], &[&create_both]),
        &lines(&[&format!(
            r#"{{"content":"File created successfully at: /memories/r.md{}","is_error":false}}"#,
            note("2 findings: aws-access-key (line 1), custom:emp (line 2)")
        )]),
    );
    let insert_card = json!({"command": "insert", "path": "/memories/r.md", "insert_line": 2, "insert_text": format!("card {CARD}\n")});
    assert_text(
        "redact, python-sdk",
        &s.exec(&["--dialect", "python-sdk"], &[&block("toolu_2", &insert_card), &block("toolu_3", &replace_tbd)]),
        &lines(&[
            &format!(
                r#"{{"type":"tool_result","tool_use_id":"toolu_2","content":"The file /memories/r.md has been edited.{}","is_error":false}}"#,
                // Line numbers are the file's: the card is on line 3 of r.md.
                note("1 finding: payment-card (line 3)")
            ),
            &format!(
                r#"{{"type":"tool_result","tool_use_id":"toolu_3","content":"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tbadge: [REDACTED:custom:emp]\n     2\t{}","is_error":false}}"#,
                note("1 finding: custom:emp (line 1)")
            ),
        ]),
    );
    let redacted = "deploy key: [REDACTED:aws-access-key]\nbadge [REDACTED:custom:emp]\ncard [REDACTED:payment-card]\n";
    assert_text("r.md", &s.ok(&["show", "HEAD:/memories/r.md"]), redacted);
    assert_text("notes.md", &s.ok(&["show", "HEAD:/memories/notes.md"]), "badge: [REDACTED:custom:emp]\n");

    let c = s.commits();
    let expected = [
        header(&c, 7, "-", "str_replace /memories/notes.md") + "  M /memories/notes.md\n",
        header(&c, 6, "-", "insert /memories/r.md") + "  M /memories/r.md\n",
        header(&c, 5, "-", "create /memories/r.md") + "  A /memories/r.md\n",
        header(&c, 4, "-", "policy set sensitive redact"),
        header(&c, 3, "-", r"policy set rule.emp \bEMP-\d{6}\b"),
        header(&c, 2, "-", "policy set sensitive reject"),
        header(&c, 1, "-", "create /memories/notes.md") + "  A /memories/notes.md\n",
    ]
    .concat();
    assert_text("log", &s.ok(&["log"]), &expected);
    // History records the commands as applied.
    assert_eq!(
        commit(&c, 5)["command"],
        json!({"command": "create", "path": "/memories/r.md",
            "file_text": "deploy key: [REDACTED:aws-access-key]\nbadge [REDACTED:custom:emp]\n"})
    );
    assert_eq!(
        commit(&c, 6)["command"],
        json!({"command": "insert", "path": "/memories/r.md", "insert_line": 2,
            "insert_text": "card [REDACTED:payment-card]\n"})
    );
    assert_eq!(
        commit(&c, 7)["command"],
        json!({"command": "str_replace", "path": "/memories/notes.md", "old_str": "TBD",
            "new_str": "[REDACTED:custom:emp]"})
    );
    // No trace of a secret, in any spelling the history is read in.
    let mut seen = vec![s.ok(&["log", "--json"]), s.ok(&["log"]), s.ok(&["diff", "--patch", "@1"])];
    for g in 1..=7 {
        seen.push(s.ok(&["show", &format!("@{g}")]));
        for path in ["/memories/r.md", "/memories/notes.md"] {
            let out = s.run(&["show", &format!("@{g}:{path}")]);
            seen.push(text(&out.stdout) + &text(&out.stderr));
        }
    }
    for out in &seen {
        for secret in [AWS_KEY, EMPLOYEE, EMPLOYEE_2, CARD, "4111"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
    }
    assert_text("check", s.ok(&["check", "--read-data"]).lines().last().unwrap_or(""), "no problems found");
}

#[test]
fn exec_warns_about_sensitive_data_by_default() {
    let s = Store::new();
    for (dialect, name) in [("spec", "w1.md"), ("python-sdk", "w2.md")] {
        let path = format!("/memories/{name}");
        let create = json!({"command": "create", "path": path, "file_text": format!("key {AWS_KEY}\n")});
        let view = json!({"command": "view", "path": path});
        let out = s.exec(&["--dialect", dialect], &[&create.to_string(), &view.to_string()]);
        assert_text(
            dialect,
            &out,
            &lines(&[
                &format!(
                    r#"{{"content":"File created successfully at: {path}\n\nWarning: the text written looks like it contains sensitive data (1 finding: aws-access-key (line 1)). It was stored as given; memory files should not hold secrets.","is_error":false}}"#
                ),
                &format!(
                    r#"{{"content":"Here's the content of {path} with line numbers:\n     1\tkey {AWS_KEY}\n     2\t","is_error":false}}"#
                ),
            ]),
        );
        assert_text("stored as given", &s.ok(&["show", &format!("HEAD:{path}")]), &format!("key {AWS_KEY}\n"));
    }
    // Off: no scanning, no note.
    assert_text("off", &s.ok(&["policy", "set", "sensitive", "off"]), "sensitive = off (commit @3)\n");
    let create = json!({"command": "create", "path": "/memories/w3.md", "file_text": format!("key {AWS_KEY}\n")});
    assert_text(
        "off",
        &s.exec(&[], &[&create.to_string()]),
        &lines(&[r#"{"content":"File created successfully at: /memories/w3.md","is_error":false}"#]),
    );
    assert_text("stored as given", &s.ok(&["show", "HEAD:/memories/w3.md"]), &format!("key {AWS_KEY}\n"));
}

#[test]
fn a_running_session_follows_policy_changes() {
    let s = Store::new();
    let mut child = s
        .memfs(None)
        .args(["exec", "--dialect", "python-sdk"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memfs exec");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ask = |line: &str| {
        stdin.write_all(format!("{line}\n").as_bytes()).expect("write a line");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read an answer");
        answer
    };
    assert_text(
        "before",
        &ask(r#"{"command":"create","path":"/memories/a.txt","file_text":"0123456789"}"#),
        &lines(&[r#"{"content":"File created successfully at: /memories/a.txt","is_error":false}"#]),
    );
    // Another process changes the policy; the session's next command obeys it.
    assert_text("set", &s.ok(&["policy", "set", "max-file-bytes", "4"]), "max-file-bytes = 4 (commit @2)\n");
    assert_text(
        "after",
        &ask(r#"{"command":"create","path":"/memories/b.txt","file_text":"0123456789"}"#),
        &lines(&[
            r#"{"content":"Cannot write /memories/b.txt: the file would be 10 bytes, over this store's limit of 4 bytes per file (max-file-bytes). Nothing was written.","is_error":true}"#,
        ]),
    );
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read to the end");
    assert_text("no more output", &rest, "");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "exec: {}", text(&out.stderr));
    assert_text("stderr", &text(&out.stderr), "");
    assert_eq!(s.commits().len(), 2);
}
