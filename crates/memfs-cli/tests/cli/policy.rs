//! The store's policy end to end: `memfs policy` run as the binary against a local folder
//! store, with exact outputs; and the harness `policy_exec` and `expire` share.
//!
//! Commit ids and times differ from run to run; expected logs take them from `memfs log --json`,
//! so every assertion is still on the whole output. `MEMFS_TODAY` fixes the day used for
//! last-access days and expiration.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::{self, assert_text, text};

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
        let mut cmd = support::memfs(root);
        cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).env("MEMFS_STORE", self.url());
        if let Some(day) = today {
            cmd.env("MEMFS_TODAY", day);
        }
        cmd
    }

    /// Runs the binary with `args` and `stdin` as its whole input, and waits for it.
    pub(crate) fn run_on(&self, today: Option<&str>, args: &[&str], stdin: &str) -> Output {
        support::run(self.memfs(today).args(args), stdin)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.run_on(None, args, "")
    }

    /// Runs a command that must succeed without a word on stderr; returns stdout.
    #[track_caller]
    pub(crate) fn ok_on(&self, today: Option<&str>, args: &[&str]) -> String {
        support::ok(&format!("memfs {args:?}"), &self.run_on(today, args, ""))
    }

    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        self.ok_on(None, args)
    }

    /// Runs a command that must exit with `code`, printing nothing on stdout; returns stderr.
    #[track_caller]
    pub(crate) fn fails_on(&self, today: Option<&str>, code: i32, args: &[&str]) -> String {
        support::fails(&format!("memfs {args:?}"), code, &self.run_on(today, args, ""))
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
        "error: unexpected argument found (not shown: it may be a secret)\n\n  tip: to pass a value that starts with \
         '-', put '--' before it\n\n\
         Usage: memfs policy set <KEY> <VALUE>\n\nFor more information, try '--help'.\n",
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
        "\nUsage: memfs policy <COMMAND>\n",
        "  show   Print every setting, one `KEY VALUE` line each\n",
        "  set    Set KEY to VALUE, as a commit\n",
        "  unset  Put KEY back to its default, or remove the custom rule rule.NAME, as a commit\n",
    ] {
        assert!(help.contains(line), "policy --help lacks {line:?}:\n{help}");
    }
    assert!(s.ok(&["policy", "set", "--help"]).contains("\nUsage: memfs policy set <KEY> <VALUE>\n"));
    assert!(s.ok(&["policy", "unset", "--help"]).contains("\nUsage: memfs policy unset <KEY>\n"));
}

#[test]
fn top_level_help_summarises_policy_on_one_line() {
    let s = Store::new();
    let help = s.ok(&["--help"]);
    let line = help.lines().find(|l| l.starts_with("  policy ")).unwrap_or("");
    assert_text(
        "policy line",
        line,
        "  policy       Show or change the store's policy: size limits, view pagination, filter, expiration",
    );
    // Nothing continues it: the next line is the next command's.
    let next = help.lines().skip_while(|l| !l.starts_with("  policy ")).nth(1).unwrap_or("");
    assert_text(
        "after the policy line",
        next,
        "  expire       Remove files nobody has read or written for a while, as one commit",
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

/// Reading from a folder that holds no store says so and leaves no folder behind (opening a
/// local log creates its folder, so the check comes first).
#[test]
fn a_missing_store_is_reported_and_not_created() {
    let s = Store::new();
    let missing = s.dir().with_file_name("missing");
    for args in [&["policy", "show"][..], &["log"], &["expire", "--unused-for", "1d"]] {
        let out = s
            .memfs(None)
            .arg("--store")
            .arg(format!("file://{}", missing.display()))
            .args(args)
            .output()
            .expect("run memfs");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_text(
            "stderr",
            &text(&out.stderr),
            &format!("memfs: no memfs store at file://{} yet: create one with `memfs init`\n", missing.display()),
        );
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
}
