//! The `memfs` binary: `memfs exec` over real pipes, argument errors, help.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::{self, Session, assert_text, memfs_no_home, text};

/// The binary with a clean environment, on the ephemeral `memory://` store.
fn memfs() -> Command {
    let mut cmd = memfs_no_home();
    cmd.env("MEMFS_STORE", "memory://");
    cmd
}

/// Runs the binary with `args`, `stdin` as its whole input, and waits for it.
fn run(args: &[&str], stdin: &str) -> Output {
    run_bytes(args, stdin.as_bytes())
}

/// [`run`] with input that need not be UTF-8.
fn run_bytes(args: &[&str], stdin: &[u8]) -> Output {
    support::run(memfs().args(args), stdin)
}

#[test]
fn exec_python_sdk_lines() {
    let input = [
        r#"{"command":"view","path":"/memories"}"#,
        r#"{"command":"create","path":"/memories/notes.md","file_text":"Hello, World!\n"}"#,
        "",
        r#"{"type":"tool_use","id":"toolu_1","name":"memory","input":{"command":"view","path":"/memories/notes.md"}}"#,
        "this is not json",
        r#"{"command":"insert","path":"/memories/notes.md","insert_line":9,"insert_text":"x"}"#,
        r#"{"type":"tool_use","id":"toolu_2","name":"web_search","input":{}}"#,
        r#"{"command":"view","path":"/memories"}"#,
    ]
    .join("\n")
        + "\n";
    let out = run(&["exec", "--dialect", "python-sdk"], &input);
    assert!(out.status.success(), "exit status {}; stderr: {}", out.status, text(&out.stderr));
    assert_text("stderr", &text(&out.stderr), "");
    let expected = [
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories","is_error":false}"#,
        r#"{"content":"File created successfully at: /memories/notes.md","is_error":false}"#,
        r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"Here's the content of /memories/notes.md with line numbers:\n     1\tHello, World!\n     2\t","is_error":false}"#,
        r#"{"content":"Invalid JSON input line: expected ident at line 1 column 2","is_error":true}"#,
        r#"{"content":"Invalid `insert_line` parameter: 9. It should be within the range [0, 1].","is_error":true}"#,
        r#"{"type":"tool_result","tool_use_id":"toolu_2","content":"Error: Tool 'web_search' not found","is_error":true}"#,
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n14B\t/memories/notes.md","is_error":false}"#,
    ]
    .join("\n")
        + "\n";
    assert_text("stdout", &text(&out.stdout), &expected);
}

#[test]
fn exec_answers_a_line_that_is_not_utf8_and_goes_on() {
    // A byte-order mark before the first line, a Latin-1 byte inside a string, a lone
    // continuation byte, a truncated sequence at the end of a line, then valid lines: each gets
    // one answer and the file written after the bad lines is there.
    let mut input = b"\xEF\xBB\xBF{\"command\":\"view\",\"path\":\"/memories\"}\n".to_vec();
    input.extend_from_slice(b"{\"command\":\"create\",\"path\":\"/memories/caf\xE9.md\",\"file_text\":\"x\"}\n");
    input.extend_from_slice(b"\x80\r\n");
    input.extend_from_slice(b"{\"command\":\"view\",\"path\":\"/memories\"}\xE2\x82\n");
    input.extend_from_slice(b"\xEF\xBB\xBF{\"command\":\"view\",\"path\":\"/memories\"}\n");
    input.extend_from_slice(b"{\"command\":\"create\",\"path\":\"/memories/after.md\",\"file_text\":\"ok\"}\n");
    input.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"memory\",\"input\":{\"command\":\"view\",\"path\":\"/memories\"}}\n");
    let out = run_bytes(&["exec", "--dialect", "python-sdk"], &input);
    assert!(out.status.success(), "exit status {}; stderr: {}", out.status, text(&out.stderr));
    assert_text("stderr", &text(&out.stderr), "");
    let expected = [
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories","is_error":false}"#,
        r#"{"content":"Invalid JSON input line: invalid UTF-8 at line 1 column 42","is_error":true}"#,
        r#"{"content":"Invalid JSON input line: invalid UTF-8 at line 1 column 1","is_error":true}"#,
        r#"{"content":"Invalid JSON input line: invalid UTF-8 at line 1 column 38","is_error":true}"#,
        // Only the first line may start with a byte-order mark: anywhere else it is not JSON.
        r#"{"content":"Invalid JSON input line: expected value at line 1 column 1","is_error":true}"#,
        r#"{"content":"File created successfully at: /memories/after.md","is_error":false}"#,
        r#"{"type":"tool_result","tool_use_id":"t1","content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n2B\t/memories/after.md","is_error":false}"#,
    ]
    .join("\n")
        + "\n";
    assert_text("stdout", &text(&out.stdout), &expected);
}

#[test]
fn exec_answers_each_line_as_it_comes() {
    let mut s = Session::start(memfs().args(["exec", "--dialect", "python-sdk"]));
    assert_text(
        "create",
        &s.ask(r#"{"command":"create","path":"/memories/a.txt","file_text":"one\ntwo"}"#),
        r#"{"content":"File created successfully at: /memories/a.txt","is_error":false}"#,
    );
    assert_text(
        "str_replace",
        &s.ask(r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"two","new_str":"2"}"#),
        r#"{"content":"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tone\n     2\t2","is_error":false}"#,
    );
    assert_text(
        "rename",
        &s.ask(r#"{"command":"rename","old_path":"/memories/a.txt","new_path":"/memories/d/b.txt"}"#),
        r#"{"content":"Successfully renamed /memories/a.txt to /memories/d/b.txt","is_error":false}"#,
    );
    assert_text(
        "delete root",
        &s.ask(r#"{"command":"delete","path":"/memories/"}"#),
        r#"{"content":"Cannot delete the /memories directory itself","is_error":true}"#,
    );
    assert_text(
        "view",
        &s.ask(r#"{"command":"view","path":"/memories"}"#),
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n4K\t/memories/d/\n5B\t/memories/d/b.txt","is_error":false}"#,
    );
    s.finish();
}

#[test]
fn exec_defaults_to_the_spec_dialect() {
    let out = run(
        &["exec"],
        "{\"command\":\"view\",\"path\":\"/memories\"}\n{\"command\":\"delete\",\"path\":\"/memories/x\"}\n",
    );
    assert!(out.status.success(), "exit status {}; stderr: {}", out.status, text(&out.stderr));
    assert_text(
        "stdout",
        &text(&out.stdout),
        "{\"content\":\"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\\n4.0K\\t/memories\",\"is_error\":false}\n\
         {\"content\":\"Error: The path /memories/x does not exist\",\"is_error\":true}\n",
    );
}

#[test]
fn exec_dialect_from_the_environment() {
    let mut cmd = memfs();
    cmd.env("MEMFS_DIALECT", "python-sdk")
        .arg("exec")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn memfs");
    child.stdin.take().expect("stdin").write_all(b"{\"command\":\"view\",\"path\":\"/memories\"}\n").expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    assert_text(
        "stdout",
        &text(&out.stdout),
        "{\"content\":\"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\\n4K\\t/memories\",\"is_error\":false}\n",
    );
}

#[test]
fn exec_empty_input_prints_nothing() {
    let out = run(&["exec", "--dialect", "python-sdk"], "");
    assert!(out.status.success());
    assert_text("stdout", &text(&out.stdout), "");
    assert_text("stderr", &text(&out.stderr), "");
}

#[test]
fn bogus_dialect_is_refused() {
    let out = run(&["exec", "--dialect", "bogus"], "{\"command\":\"view\",\"path\":\"/memories\"}\n");
    assert_eq!(out.status.code(), Some(2), "exit status {}", out.status);
    assert_text("stdout", &text(&out.stdout), "");
    assert_text(
        "stderr",
        &text(&out.stderr),
        "error: invalid value for '--dialect <DIALECT>': expected `spec`, `python-sdk` or `typescript-sdk`\n\n\
         For more information, try '--help'.\n",
    );
}

#[test]
fn bogus_store_is_refused() {
    let out = run(&["exec", "--store", "bogus://x"], "{\"command\":\"view\",\"path\":\"/memories\"}\n");
    assert_eq!(out.status.code(), Some(1), "exit status {}", out.status);
    assert_text("stdout", &text(&out.stdout), "");
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: unsupported store URL bogus://x: the `bogus` scheme is not supported; use file://, memory://, s3://, gs:// or az://\n",
    );
}

#[test]
fn help_exits_zero() {
    let out = run(&["--help"], "");
    assert!(out.status.success(), "memfs --help: {}", out.status);
    let help = text(&out.stdout);
    assert!(help.starts_with("memfs: an encrypted, content-addressed store for Claude's memory tool.\n"), "{help}");
    assert!(help.contains("\nUsage: memfs [OPTIONS] <COMMAND>\n"), "{help}");
    assert!(
        help.contains(
            "\n  exec         Run memory-tool calls read as JSON lines from stdin, one JSON answer line each\n"
        ),
        "{help}"
    );

    let out = run(&["exec", "--help"], "");
    assert!(out.status.success(), "memfs exec --help: {}", out.status);
    let help = text(&out.stdout);
    assert!(help.contains("\nUsage: memfs exec [OPTIONS]\n"), "{help}");
    assert!(help.contains("--dialect <DIALECT>"), "{help}");
    assert!(help.contains("[default: spec]"), "{help}");
    // The global options are named, and described on `memfs --help` only.
    assert!(help.contains("\nGlobal options (described in `memfs --help`):\n  --store, "), "{help}");
    assert!(help.contains(" --key-file, "), "{help}");
    assert!(help.contains(" --passphrase-file,"), "{help}");
}

#[test]
fn missing_subcommand_fails() {
    let out = run(&[], "");
    assert_eq!(out.status.code(), Some(2), "exit status {}", out.status);
    assert!(text(&out.stderr).contains("Usage: memfs [OPTIONS] <COMMAND>"), "{}", text(&out.stderr));
}

/// `view /memories` padded with spaces (JSON whitespace) to `len` bytes, without a newline.
fn view_of_length(len: usize) -> Vec<u8> {
    let view = br#"{"command":"view","path":"/memories"}"#;
    let mut line = view[..view.len() - 1].to_vec();
    line.resize(len - 1, b' ');
    line.push(b'}');
    line
}

/// The answer to a line past a bound of `max` bytes.
fn too_long(max: usize) -> String {
    format!(
        r#"{{"content":"Invalid JSON input line: longer than {max} bytes; raise the bound with --max-line-bytes SIZE or MEMFS_MAX_LINE_BYTES","is_error":true}}"#
    )
}

const EMPTY_VIEW: &str = r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories","is_error":false}"#;

/// The bound counts a line's bytes without its newline: a line of exactly the bound runs, one
/// byte more is answered with the bound and how to raise it, and the next line runs; the same
/// bound from MEMFS_MAX_LINE_BYTES.
#[test]
fn a_line_one_byte_past_the_bound_is_answered_and_the_stream_goes_on() {
    let mut input = view_of_length(64);
    input.push(b'\n');
    input.extend(view_of_length(65));
    input.push(b'\n');
    input.extend(view_of_length(1000));
    input.extend(b"\n{\"command\":\"view\",\"path\":\"/memories\"}\n");
    // The last line, past the bound and without a newline, is answered too.
    input.extend(view_of_length(65));
    let expected = [EMPTY_VIEW, &too_long(64), &too_long(64), EMPTY_VIEW, &too_long(64)].join("\n") + "\n";
    let out = run_bytes(&["exec", "--dialect", "python-sdk", "--max-line-bytes", "64"], &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_text("stdout", &text(&out.stdout), &expected);
    let mut cmd = memfs();
    cmd.env("MEMFS_MAX_LINE_BYTES", "64").args(["exec", "--dialect", "python-sdk"]);
    let out = support::run(cmd, &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_text("stdout, bound from the environment", &text(&out.stdout), &expected);
}

/// Without the flag the bound is 64 MiB: a line of exactly 64 MiB runs, one byte more is
/// answered with the bound.
#[test]
fn the_line_bound_is_64_mib_by_default() {
    let mut input = view_of_length(64 << 20);
    input.push(b'\n');
    input.extend(view_of_length((64 << 20) + 1));
    input.push(b'\n');
    let out = run_bytes(&["exec", "--dialect", "python-sdk"], &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_text("stdout", &text(&out.stdout), &format!("{EMPTY_VIEW}\n{}\n", too_long(64 << 20)));
}

/// A 200 MiB line under a 1 MiB bound, streamed: answered with the bound, the next line runs,
/// and the process's peak resident memory (VmHWM, read while it still runs) stays under 64 MiB,
/// so the line was never held.
#[test]
fn a_line_past_the_bound_is_answered_and_not_held() {
    let mut s = Session::start(memfs().args(["exec", "--dialect", "python-sdk", "--max-line-bytes", "1MiB"]));
    assert_text("first", &s.ask(r#"{"command":"view","path":"/memories"}"#), EMPTY_VIEW);
    let chunk = vec![b'x'; 1 << 20];
    s.write(br#"{"command":"create","path":"/memories/big.md","file_text":""#);
    for _ in 0..200 {
        s.write(&chunk);
    }
    s.write(b"\"}");
    assert_text("the long line", &s.ask(""), &too_long(1 << 20));
    assert_text("after", &s.ask(r#"{"command":"view","path":"/memories"}"#), EMPTY_VIEW);
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).expect("/proc/PID/status");
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    assert!(peak_kib < 64 << 10, "peak resident memory {peak_kib} KiB: the 200 MiB line was held");
    s.finish();
}
