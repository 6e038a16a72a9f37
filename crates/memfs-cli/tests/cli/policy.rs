//! The store's policy end to end: `memfs policy`, and the policy enforced on `memfs exec` in
//! both dialects, run as the binary against a local folder store, with exact outputs; and the
//! harness `expire` shares.
//!
//! Commit ids and times differ from run to run; expected logs take them from `memfs log --json`,
//! so every assertion is still on the whole output. `MEMFS_TODAY` fixes the day used for
//! last-access days and expiration.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{assert_text, text};

const PASSPHRASE: &str = "policy test passphrase";

/// `memfs policy show` on a store that never changed its policy.
pub(crate) const DEFAULTS: &str = "\
max-file-bytes       16777216
max-store-bytes      1073741824
max-files            100000
view-max-chars       16000
sensitive            warn
expire-unused-after  off
";

/// A fresh store in a temporary home, unlocked by `MEMFS_PASSPHRASE`.
pub(crate) struct Store {
    root: tempfile::TempDir,
}

impl Store {
    pub(crate) fn new() -> Self {
        let store = Store { root: tempfile::tempdir().expect("temp dir") };
        let out = store.run(&["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"]);
        assert!(out.status.success(), "init: {}", text(&out.stderr));
        store
    }

    pub(crate) fn dir(&self) -> PathBuf {
        self.root.path().join("store")
    }

    pub(crate) fn url(&self) -> String {
        format!("file://{}", self.dir().display())
    }

    /// The binary on this store; `today` sets `MEMFS_TODAY` (otherwise the clock's day).
    pub(crate) fn memfs(&self, today: Option<&str>) -> Command {
        let root = self.root.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memfs"));
        // COLUMNS would change where help text wraps.
        for var in ["MEMFS_DIALECT", "MEMFS_KEY_FILE", "MEMFS_ACTOR", "MEMFS_TODAY", "COLUMNS"] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", root.join("home"))
            .env("XDG_DATA_HOME", root.join("data"))
            .env("XDG_CONFIG_HOME", root.join("config"))
            .env("XDG_STATE_HOME", root.join("state"))
            .env("MEMFS_PASSPHRASE", PASSPHRASE)
            .env("MEMFS_STORE", self.url());
        if let Some(day) = today {
            cmd.env("MEMFS_TODAY", day);
        }
        cmd
    }

    /// Runs the binary with `args` and `stdin` as its whole input, and waits for it.
    pub(crate) fn run_on(&self, today: Option<&str>, args: &[&str], stdin: &str) -> Output {
        let mut child = self
            .memfs(today)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memfs");
        let mut input = child.stdin.take().expect("stdin");
        // The process may exit before reading (argument errors): ignore a broken pipe.
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        child.wait_with_output().expect("wait for memfs")
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.run_on(None, args, "")
    }

    /// Runs a command that must succeed without a word on stderr; returns stdout.
    #[track_caller]
    pub(crate) fn ok_on(&self, today: Option<&str>, args: &[&str]) -> String {
        let out = self.run_on(today, args, "");
        assert!(out.status.success(), "memfs {args:?}: {}; stderr: {}", out.status, text(&out.stderr));
        assert_text(&format!("stderr of {args:?}"), &text(&out.stderr), "");
        text(&out.stdout)
    }

    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        self.ok_on(None, args)
    }

    /// Runs a command that must exit with `code`, printing nothing on stdout; returns stderr.
    #[track_caller]
    pub(crate) fn fails_on(&self, today: Option<&str>, code: i32, args: &[&str]) -> String {
        let out = self.run_on(today, args, "");
        assert_eq!(out.status.code(), Some(code), "memfs {args:?}: stderr {}", text(&out.stderr));
        assert_text(&format!("stdout of {args:?}"), &text(&out.stdout), "");
        text(&out.stderr)
    }

    #[track_caller]
    pub(crate) fn fails(&self, code: i32, args: &[&str]) -> String {
        self.fails_on(None, code, args)
    }

    /// `memfs exec ARGS` on `lines`, which must succeed without a word on stderr; returns stdout.
    #[track_caller]
    pub(crate) fn exec_on(&self, today: Option<&str>, args: &[&str], lines: &[&str]) -> String {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let out = self.run_on(today, &[&["exec"], args].concat(), &input);
        assert!(out.status.success(), "memfs exec {args:?}: {}; stderr: {}", out.status, text(&out.stderr));
        assert_text("stderr of exec", &text(&out.stderr), "");
        text(&out.stdout)
    }

    #[track_caller]
    pub(crate) fn exec(&self, args: &[&str], lines: &[&str]) -> String {
        self.exec_on(None, args, lines)
    }

    /// The commits, newest first, as `log --json` gives them.
    pub(crate) fn commits(&self) -> Vec<Value> {
        self.ok(&["log", "--json"]).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
    }
}

/// Commit `generation` of `commits` (newest first).
pub(crate) fn commit(commits: &[Value], generation: u64) -> &Value {
    commits.iter().find(|c| c["generation"] == generation).expect("the commit")
}

pub(crate) fn short(commits: &[Value], generation: u64) -> String {
    commit(commits, generation)["id"].as_str().expect("id")[..12].to_owned()
}

/// The first line of a log entry.
pub(crate) fn header(commits: &[Value], generation: u64, actor: &str, summary: &str) -> String {
    let c = commit(commits, generation);
    format!("@{generation} {} {} {actor} {summary}\n", short(commits, generation), c["time"].as_str().expect("time"))
}

/// Output lines joined, each ending in a newline.
pub(crate) fn lines(answers: &[&str]) -> String {
    answers.iter().map(|a| format!("{a}\n")).collect()
}

#[test]
fn policy_show_set_and_unset() {
    let s = Store::new();
    assert_text("defaults", &s.ok(&["policy", "show"]), DEFAULTS);

    // Every key, as given and as shown (sizes are shown in bytes).
    let settings = [
        ("max-file-bytes", "64KiB", "65536"),
        ("max-store-bytes", "2GB", "2000000000"),
        ("max-files", "none", "none"),
        ("view-max-chars", "10000", "10000"),
        ("sensitive", "redact", "redact"),
        ("expire-unused-after", "90d", "90d"),
        ("rule.employee-id", r"\bEMP-\d{6}\b", r"\bEMP-\d{6}\b"),
        ("rule.badge", "BADGE-[0-9]{4}", "BADGE-[0-9]{4}"),
    ];
    for (n, (key, value, shown)) in settings.iter().enumerate() {
        assert_text(
            &format!("set {key}"),
            &s.ok(&["--actor", "admin", "policy", "set", key, value]),
            &format!("{key} = {shown} (commit @{})\n", n + 1),
        );
    }
    // Rules come last, by name, whatever the order they were set in.
    let all_set = "\
max-file-bytes       65536
max-store-bytes      2000000000
max-files            none
view-max-chars       10000
sensitive            redact
expire-unused-after  90d
rule.badge           BADGE-[0-9]{4}
rule.employee-id     \\bEMP-\\d{6}\\b
";
    assert_text("all set", &s.ok(&["policy", "show"]), all_set);

    // The same value again, in any spelling: nothing to commit.
    for (key, value, shown) in [
        ("max-file-bytes", "65536", "65536"),
        ("max-file-bytes", "64KiB", "65536"),
        ("max-store-bytes", "2000 MB", "2000000000"),
        ("sensitive", "redact", "redact"),
        ("rule.badge", "BADGE-[0-9]{4}", "BADGE-[0-9]{4}"),
    ] {
        assert_text(
            &format!("set {key} {value} again"),
            &s.ok(&["policy", "set", key, value]),
            &format!("{key} = {shown} (unchanged, nothing committed)\n"),
        );
    }
    assert_eq!(s.commits().len(), 8, "unchanged settings commit nothing");

    // Unset: back to the default, or the rule removed; a second time changes nothing.
    assert_text(
        "unset max-file-bytes",
        &s.ok(&["policy", "unset", "max-file-bytes"]),
        "max-file-bytes = 16777216 (commit @9)\n",
    );
    assert_text("unset rule.badge", &s.ok(&["policy", "unset", "rule.badge"]), "rule.badge = (removed) (commit @10)\n");
    assert_text("unset sensitive", &s.ok(&["policy", "unset", "sensitive"]), "sensitive = warn (commit @11)\n");
    assert_text(
        "unset expire-unused-after",
        &s.ok(&["policy", "unset", "expire-unused-after"]),
        "expire-unused-after = off (commit @12)\n",
    );
    assert_text(
        "unset max-file-bytes again",
        &s.ok(&["policy", "unset", "max-file-bytes"]),
        "max-file-bytes = 16777216 (unchanged, nothing committed)\n",
    );
    // Setting a default value explicitly is the same as having it.
    assert_text(
        "set the default",
        &s.ok(&["policy", "set", "sensitive", "warn"]),
        "sensitive = warn (unchanged, nothing committed)\n",
    );
    assert_text(
        "after unset",
        &s.ok(&["policy", "show"]),
        "\
max-file-bytes       16777216
max-store-bytes      2000000000
max-files            none
view-max-chars       10000
sensitive            warn
expire-unused-after  off
rule.employee-id     \\bEMP-\\d{6}\\b
",
    );
    // Back to every default: the same text as a new store's.
    for key in ["max-store-bytes", "max-files", "view-max-chars", "rule.employee-id"] {
        s.ok(&["policy", "unset", key]);
    }
    assert_text("defaults again", &s.ok(&["policy", "show"]), DEFAULTS);

    // The log: one commit per change, no file changes, the value as it reads back.
    let c = s.commits();
    assert_eq!(c.len(), 16);
    let expected = [
        header(&c, 16, "-", "policy unset rule.employee-id"),
        header(&c, 15, "-", "policy unset view-max-chars"),
        header(&c, 14, "-", "policy unset max-files"),
        header(&c, 13, "-", "policy unset max-store-bytes"),
        header(&c, 12, "-", "policy unset expire-unused-after"),
        header(&c, 11, "-", "policy unset sensitive"),
        header(&c, 10, "-", "policy unset rule.badge"),
        header(&c, 9, "-", "policy unset max-file-bytes"),
        header(&c, 8, "admin", "policy set rule.badge BADGE-[0-9]{4}"),
        header(&c, 7, "admin", r"policy set rule.employee-id \bEMP-\d{6}\b"),
        header(&c, 6, "admin", "policy set expire-unused-after 90d"),
        header(&c, 5, "admin", "policy set sensitive redact"),
        header(&c, 4, "admin", "policy set view-max-chars 10000"),
        header(&c, 3, "admin", "policy set max-files none"),
        header(&c, 2, "admin", "policy set max-store-bytes 2000000000"),
        header(&c, 1, "admin", "policy set max-file-bytes 65536"),
    ]
    .concat();
    assert_text("log", &s.ok(&["log"]), &expected);
    assert_eq!(commit(&c, 1)["command"], json!({"command": "policy", "set": "max-file-bytes", "value": "65536"}));
    assert_eq!(commit(&c, 10)["command"], json!({"command": "policy", "unset": "rule.badge"}));
    assert_eq!(commit(&c, 10)["changes"], json!([]));
    // Each commit keeps the tree: policy changes are not file changes.
    assert!(c.iter().all(|x| x["tree"] == c[0]["tree"]), "one tree throughout");
    assert_text("no file changed", &s.ok(&["diff", "@1"]), "");
}

#[test]
fn bad_policy_input_is_refused_and_commits_nothing() {
    let s = Store::new();
    s.ok(&["policy", "set", "max-files", "500"]);
    let before = "\
max-file-bytes       16777216
max-store-bytes      1073741824
max-files            500
view-max-chars       16000
sensitive            warn
expire-unused-after  off
";
    assert_text("before", &s.ok(&["policy", "show"]), before);

    let unknown = |key: &str| {
        format!(
            "memfs: unknown policy key `{key}`: expected max-file-bytes, max-store-bytes, max-files, view-max-chars, \
             sensitive, expire-unused-after or rule.NAME\n"
        )
    };
    let size = |key: &str, value: &str| {
        format!(
            "memfs: invalid value `{value}` for {key}: a number of bytes (suffixes KiB, MiB, GiB, KB, MB, GB) or \
             `none` for no limit\n"
        )
    };
    let count =
        |value: &str| format!("memfs: invalid value `{value}` for max-files: a whole number or `none` for no limit\n");
    let days = |value: &str| {
        format!("memfs: invalid value `{value}` for expire-unused-after: a number of days such as `90d`, or `off`\n")
    };
    let view_max = |value: &str| {
        format!(
            "memfs: invalid value `{value}` for view-max-chars: a whole number of characters, at least 10000, or \
             `none` for no limit\n"
        )
    };
    let empty = |name: &str| format!("memfs: custom rule \"{name}\": the pattern can match the empty string\n");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["set", "colour", "red"], unknown("colour")),
        (vec!["set", "Sensitive", "warn"], unknown("Sensitive")),
        (vec!["set", "rule", "abc"], unknown("rule")),
        (vec!["unset", "colour"], unknown("colour")),
        (vec!["set", "max-file-bytes", "1.5MiB"], size("max-file-bytes", "1.5MiB")),
        (vec!["set", "max-file-bytes", "5 "], size("max-file-bytes", "5 ")),
        (vec!["set", "max-file-bytes", "99999999999GiB"], size("max-file-bytes", "99999999999GiB")),
        (vec!["set", "max-store-bytes", "lots"], size("max-store-bytes", "lots")),
        (vec!["set", "max-store-bytes", "1TB"], size("max-store-bytes", "1TB")),
        (vec!["set", "max-files", "1e3"], count("1e3")),
        (vec!["set", "max-files", ""], count("")),
        (vec!["set", "max-files", "100KiB"], count("100KiB")),
        (vec!["set", "view-max-chars", "999"], view_max("999")),
        (vec!["set", "view-max-chars", "9999"], view_max("9999")),
        (
            vec!["set", "sensitive", "loud"],
            "memfs: invalid value `loud` for sensitive: off, warn, redact or reject\n".to_owned(),
        ),
        (
            vec!["set", "sensitive", "Reject"],
            "memfs: invalid value `Reject` for sensitive: off, warn, redact or reject\n".to_owned(),
        ),
        (vec!["set", "expire-unused-after", "0d"], days("0d")),
        (vec!["set", "expire-unused-after", "90"], days("90")),
        (vec!["set", "expire-unused-after", "none"], days("none")),
        (
            vec!["set", "rule.x", "EMP-("],
            "memfs: custom rule \"x\": invalid pattern: regex parse error:\n    EMP-(\n        ^\nerror: unclosed group\n"
                .to_owned(),
        ),
        (
            vec!["set", "rule.x", "a(?=b)"],
            "memfs: custom rule \"x\": invalid pattern: regex parse error:\n    a(?=b)\n     ^^^\nerror: look-around, \
             including look-ahead and look-behind, is not supported\n"
                .to_owned(),
        ),
        (vec!["set", "rule.x", "a*"], empty("x")),
        (vec!["set", "rule.x", r"\b"], empty("x")),
        (vec!["set", "rule.x", ""], empty("x")),
        (vec!["set", "rule.ids", r"x|\s*"], empty("ids")),
        (
            vec!["set", "rule.a b", "abc"],
            "memfs: custom rule name \"a b\" is invalid: use 1 to 64 ASCII letters, digits, '-', '_' or '.'\n"
                .to_owned(),
        ),
        (
            vec!["set", "rule.", "abc"],
            "memfs: custom rule name \"\" is invalid: use 1 to 64 ASCII letters, digits, '-', '_' or '.'\n".to_owned(),
        ),
        (vec!["unset", "rule.nope"], "memfs: no custom rule named `nope`\n".to_owned()),
    ];
    for (args, expected) in &cases {
        let args = [&["policy"], &args[..]].concat();
        assert_text(&format!("{args:?}"), &s.fails(1, &args), expected);
    }
    let long = "a".repeat(4097);
    assert_text(
        "a pattern too long",
        &s.fails(1, &["policy", "set", "rule.x", &long]),
        "memfs: custom rule \"x\": the pattern is longer than 4096 bytes\n",
    );

    // A value that looks like a flag is clap's to refuse (status 2).
    assert_text(
        "negative size",
        &s.fails(2, &["policy", "set", "max-file-bytes", "-1"]),
        "error: unexpected argument '-1' found\n\n  tip: to pass '-1' as a value, use '-- -1'\n\n\
         Usage: memfs policy set [OPTIONS] <KEY> <VALUE>\n\nFor more information, try '--help'.\n",
    );
    assert_text(
        "negative size after --",
        &s.fails(1, &["policy", "set", "--", "max-file-bytes", "-1"]),
        &size("max-file-bytes", "-1"),
    );

    assert_text("after", &s.ok(&["policy", "show"]), before);
    assert_eq!(s.commits().len(), 1, "nothing committed");
}

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

#[test]
fn help_names_every_key_and_flag() {
    let s = Store::new();
    let help = s.ok(&["policy", "--help"]);
    assert_text(
        "first line",
        help.lines().next().unwrap_or(""),
        "Show or change the store's policy: size limits, view pagination, filter, expiration",
    );
    // The rows of max-file-bytes and view-max-chars: see `policy_help_states_the_current_defaults`.
    for line in [
        "  max-store-bytes N|none            largest total of file contents (default 1 GiB)\n",
        "  max-files N|none                  most files (default 100000)\n",
        "  sensitive off|warn|redact|reject  what a write containing a secret gets (default warn)\n",
        "  expire-unused-after Nd|off        expire files unused for N days on their own (default off)\n",
        "  rule.NAME REGEX                   a custom sensitive-data detector, marked [REDACTED:custom:NAME]\n",
        "\nUsage: memfs policy [OPTIONS] <COMMAND>\n",
        "  show   Print every setting, one `KEY VALUE` line each\n",
        "  set    Set KEY to VALUE, as a commit\n",
        "  unset  Put KEY back to its default, or remove the custom rule rule.NAME, as a commit\n",
    ] {
        assert!(help.contains(line), "policy --help lacks {line:?}:\n{help}");
    }
    assert!(s.ok(&["policy", "set", "--help"]).contains("\nUsage: memfs policy set [OPTIONS] <KEY> <VALUE>\n"));
    assert!(s.ok(&["policy", "unset", "--help"]).contains("\nUsage: memfs policy unset [OPTIONS] <KEY>\n"));
}

#[test]
fn top_level_help_summarises_policy_on_one_line() {
    let s = Store::new();
    let help = s.ok(&["--help"]);
    let line = help.lines().find(|l| l.starts_with("  policy ")).unwrap_or("");
    assert_text(
        "policy line",
        line,
        "  policy   Show or change the store's policy: size limits, view pagination, filter, expiration",
    );
    // Nothing continues it: the next line is the next command's.
    let next = help.lines().skip_while(|l| !l.starts_with("  policy ")).nth(1).unwrap_or("");
    assert_text(
        "after the policy line",
        next,
        "  expire   Remove files nobody has read or written for a while, as one commit",
    );
}

#[test]
fn reject_catches_a_secret_completed_by_an_edit() {
    let s = Store::new();
    s.ok(&["policy", "set", "sensitive", "reject"]);
    // `AKIA` and 12 characters is no key; the edit adds the last 4 of a 16-character key id.
    let out = s.exec(
        &[],
        &[
            r#"{"command":"create","path":"/memories/k.md","file_text":"key AKIA2E3MPLZQ7WX4\n"}"#,
            r#"{"command":"str_replace","path":"/memories/k.md","old_str":"7WX4","new_str":"7WX4KT5N"}"#,
        ],
    );
    assert_text(
        "exec",
        &out,
        &lines(&[
            r#"{"content":"File created successfully at: /memories/k.md","is_error":false}"#,
            r#"{"content":"Cannot write /memories/k.md: the text looks like it contains sensitive data (1 finding: aws-access-key (line 1)). This store's policy rejects it (sensitive = reject), so nothing was written. Remove it and try again.","is_error":true}"#,
        ]),
    );
    assert_text("stored", &s.ok(&["show", "HEAD:/memories/k.md"]), "key AKIA2E3MPLZQ7WX4\n");
    assert_eq!(s.commits().len(), 2, "the refused edit commits nothing");
}

/// A newline in a policy value (a custom rule in `(?x)` mode may hold one) or in an actor name
/// cannot forge a line of `memfs log` or `memfs policy show`: control characters are escaped
/// wherever a value or an actor is printed on one line, and kept as they are in `--json`.
#[test]
fn control_characters_in_a_policy_value_or_an_actor_are_escaped() {
    let s = Store::new();
    let pattern = "(?x)abc # comment\n  D /memories/forged.md";
    let escaped = r"(?x)abc # comment\n  D /memories/forged.md";
    assert_text(
        "confirmation",
        &s.ok(&["policy", "set", "rule.x", pattern]),
        &format!("rule.x = {escaped} (commit @1)\n"),
    );
    assert_text(
        "unchanged",
        &s.ok(&["policy", "set", "rule.x", pattern]),
        &format!("rule.x = {escaped} (unchanged, nothing committed)\n"),
    );
    assert_text("show", &s.ok(&["policy", "show"]), &format!("{DEFAULTS}rule.x               {escaped}\n"));
    let actor = "ops\n  D /memories/forged.md\t\u{1b}[31m";
    assert_text("unset", &s.ok(&["--actor", actor, "policy", "unset", "rule.x"]), "rule.x = (removed) (commit @2)\n");
    let c = s.commits();
    assert_text(
        "log",
        &s.ok(&["log"]),
        &[
            header(&c, 2, r"ops\n  D /memories/forged.md\t\u{1b}[31m", "policy unset rule.x"),
            header(&c, 1, "-", &format!("policy set rule.x {escaped}")),
        ]
        .concat(),
    );
    assert_eq!(commit(&c, 2)["actor"], actor);
    assert_eq!(commit(&c, 1)["command"], json!({"command": "policy", "set": "rule.x", "value": pattern}));
}

/// `memfs policy --help` states the defaults the code has, one row per key, each on one line.
#[test]
fn policy_help_states_the_current_defaults() {
    let s = Store::new();
    let help = s.ok(&["policy", "--help"]);
    let table = help.split_once("Keys:\n\n").and_then(|(_, rest)| rest.split_once("\n\nUsage:")).map_or("", |t| t.0);
    assert_text(
        "policy --help keys",
        table,
        "  max-file-bytes N|none             largest file (default 16 MiB)
  max-store-bytes N|none            largest total of file contents (default 1 GiB)
  max-files N|none                  most files (default 100000)
  view-max-chars N|none             most characters one view returns (default 16000, at least 10000)
  sensitive off|warn|redact|reject  what a write containing a secret gets (default warn)
  expire-unused-after Nd|off        expire files unused for N days on their own (default off)
  rule.NAME REGEX                   a custom sensitive-data detector, marked [REDACTED:custom:NAME]

Sizes take the suffixes KiB, MiB, GiB, KB, MB and GB (`64KiB`).",
    );
    let d = memfs::Policy::default();
    assert_eq!((d.max_file_bytes, d.view_max_chars), (Some(16 << 20), Some(16_000)));
    // The table's "at least 10000" is the policy's own minimum.
    let mut p = memfs::Policy::default();
    assert!(p.set("view-max-chars", "9999").is_err() && p.set("view-max-chars", "10000").is_ok());
}
