//! `memfs expire` end to end, run as the binary against a local folder store, with exact
//! outputs: last-access days recorded by sessions, manual expiry (and its dry run), expiry on its
//! own with `expire-unused-after`, restore of expired files, and refused input.
//!
//! `MEMFS_TODAY` fixes the day used for last-access days and expiration.

use serde_json::json;

use crate::policy::{Store, commit, header, lines, short};
use crate::support::{self, assert_text};

#[test]
fn expire_end_to_end() {
    let s = Store::new();
    let (jan, mar, jun) = (Some("2026-01-01"), Some("2026-03-01"), Some("2026-06-01"));
    let out = s.exec_on(
        jan,
        &[],
        &[
            r#"{"command":"create","path":"/memories/keep.md","file_text":"read me\n"}"#,
            r#"{"command":"create","path":"/memories/old/stale.md","file_text":"forgotten\n"}"#,
            r#"{"command":"create","path":"/memories/old/z.md","file_text":"zzz\n"}"#,
        ],
    );
    assert_eq!(out.lines().count(), 3, "{out}");
    // One file read on 1 March (a directory listing is no use of the files it lists).
    assert_text(
        "view in March",
        &s.exec_on(
            mar,
            &[],
            &[r#"{"command":"view","path":"/memories/keep.md"}"#, r#"{"command":"view","path":"/memories"}"#],
        ),
        &lines(&[
            r#"{"content":"Here's the content of /memories/keep.md with line numbers:\n     1\tread me\n     2\t","is_error":false}"#,
            r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n8B\t/memories/keep.md\n4.0K\t/memories/old/\n10B\t/memories/old/stale.md\n4B\t/memories/old/z.md","is_error":false}"#,
        ]),
    );
    let c = s.commits();
    let log4 = [
        header(&c, 4, "-", "record-access 1 file"),
        header(&c, 3, "-", "create /memories/old/z.md") + "  A /memories/old/z.md\n",
        header(&c, 2, "-", "create /memories/old/stale.md") + "  A /memories/old/stale.md\n",
        header(&c, 1, "-", "create /memories/keep.md") + "  A /memories/keep.md\n",
    ]
    .concat();
    assert_text("the session end records the read", &s.ok(&["log"]), &log4);
    assert_eq!(commit(&c, 4)["command"], json!({"command": "record-access", "files": 1}));
    // A second read the same day is no news.
    s.exec_on(mar, &[], &[r#"{"command":"view","path":"/memories/keep.md"}"#]);
    assert_eq!(s.commits().len(), 4, "a file read again on the same day is not recorded again");

    // On 1 June: keep.md was last used 92 days before, the others 151.
    let unread = "/memories/old/stale.md\t(last used 2026-01-01)\n/memories/old/z.md\t(last used 2026-01-01)\n";
    let all = format!("/memories/keep.md\t(last used 2026-03-01)\n{unread}");
    assert_text(
        "dry run, 90d",
        &s.ok_on(jun, &["expire", "--unused-for", "90d", "--dry-run"]),
        &format!("{all}3 files unused for 90 days or more would expire (dry run: nothing changed)\n"),
    );
    assert_text(
        "dry run, 92d: exactly 92 days unused counts",
        &s.ok_on(jun, &["expire", "--unused-for", "92d", "--dry-run"]),
        &format!("{all}3 files unused for 92 days or more would expire (dry run: nothing changed)\n"),
    );
    assert_text(
        "dry run, 93d",
        &s.ok_on(jun, &["expire", "--unused-for", "93d", "--dry-run"]),
        &format!("{unread}2 files unused for 93 days or more would expire (dry run: nothing changed)\n"),
    );
    assert_text(
        "dry run, 152d",
        &s.ok_on(jun, &["expire", "--unused-for", "152d", "--dry-run"]),
        "0 files unused for 152 days or more would expire (dry run: nothing changed)\n",
    );
    assert_text(
        "nothing that old",
        &s.ok_on(jun, &["expire", "--unused-for", "152d"]),
        "no file has been unused for 152 days or more\n",
    );
    assert_text("dry runs change nothing", &s.ok(&["log"]), &log4);

    // For real.
    assert_text(
        "expire",
        &s.ok_on(jun, &["--actor", "janitor", "expire", "--unused-for", "93d"]),
        &format!("{unread}expired 2 files unused for 93 days or more (commit @5)\n"),
    );
    let c = s.commits();
    assert_text(
        "log",
        &s.ok(&["log", "-n", "1"]),
        &(header(&c, 5, "janitor", "expire 2 files unused for 93d")
            + "  D /memories/old/stale.md\n  D /memories/old/z.md\n"),
    );
    assert_eq!(commit(&c, 5)["command"], json!({"command": "expire", "unused_for_days": 93, "files": 2}));
    assert_text(
        "again: nothing",
        &s.ok_on(jun, &["expire", "--unused-for", "93d"]),
        "no file has been unused for 93 days or more\n",
    );
    assert_eq!(s.commits().len(), 5);
    // Gone from the live tree (the directory stays), still in history.
    assert_text(
        "view after",
        &s.exec_on(
            jun,
            &["--dialect", "python-sdk"],
            &[r#"{"command":"view","path":"/memories"}"#, r#"{"command":"view","path":"/memories/old/stale.md"}"#],
        ),
        &lines(&[
            r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n8B\t/memories/keep.md\n4K\t/memories/old/","is_error":false}"#,
            r#"{"content":"The path /memories/old/stale.md does not exist. Please provide a valid path.","is_error":true}"#,
        ]),
    );
    assert_text("the empty directory", &s.ok(&["show", "HEAD:/memories/old"]), "");
    assert_text(
        "not at HEAD",
        &s.fails(1, &["show", "HEAD:/memories/old/stale.md"]),
        "memfs: /memories/old/stale.md does not exist at HEAD\n",
    );
    assert_text("at @4", &s.ok(&["show", "@4:/memories/old/stale.md"]), "forgotten\n");
    assert_text("at HEAD~1", &s.ok(&["show", "HEAD~1:/memories/old/z.md"]), "zzz\n");

    // Restored, a file counts as used on the day it came back.
    let id4 = short(&c, 4);
    assert_text(
        "restore",
        &s.ok_on(jun, &["restore", "--at", "@4", "/memories/old/stale.md"]),
        &format!("@6: restored /memories/old/stale.md to @4 ({id4})\n  A /memories/old/stale.md\n"),
    );
    assert_text("restored", &s.ok(&["show", "HEAD:/memories/old/stale.md"]), "forgotten\n");
    assert_text(
        "not expired again at once",
        &s.ok_on(jun, &["expire", "--unused-for", "93d", "--dry-run"]),
        "0 files unused for 93 days or more would expire (dry run: nothing changed)\n",
    );
    assert_text(
        "93 days later",
        &s.ok_on(Some("2026-09-02"), &["expire", "--unused-for", "93d", "--dry-run"]),
        "/memories/keep.md\t(last used 2026-03-01)\n/memories/old/stale.md\t(last used 2026-06-01)\n\
         2 files unused for 93 days or more would expire (dry run: nothing changed)\n",
    );

    // On its own: with expire-unused-after, a session expires before its first command.
    assert_text(
        "policy",
        &s.ok(&["policy", "set", "expire-unused-after", "30d"]),
        "expire-unused-after = 30d (commit @7)\n",
    );
    let june_20 = Some("2026-06-20");
    assert_text(
        "session on 20 June",
        &s.exec_on(
            june_20,
            &[],
            &[
                r#"{"command":"view","path":"/memories"}"#,
                r#"{"command":"create","path":"/memories/new.md","file_text":"n"}"#,
            ],
        ),
        &lines(&[
            r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n4.0K\t/memories/old/\n10B\t/memories/old/stale.md","is_error":false}"#,
            r#"{"content":"File created successfully at: /memories/new.md","is_error":false}"#,
        ]),
    );
    // Another session the same day: nothing more to expire, nothing committed.
    s.exec_on(june_20, &[], &[r#"{"command":"view","path":"/memories"}"#]);
    let c = s.commits();
    assert_eq!(c.len(), 9);
    assert_text(
        "log",
        &s.ok(&["log", "-n", "3"]),
        &[
            header(&c, 9, "-", "create /memories/new.md") + "  A /memories/new.md\n",
            header(&c, 8, "-", "expire 1 file unused for 30d") + "  D /memories/keep.md\n",
            header(&c, 7, "-", "policy set expire-unused-after 30d"),
        ]
        .concat(),
    );
    // A month later, the first command of the session finds the unused files gone.
    assert_text(
        "session on 20 July",
        &s.exec_on(
            Some("2026-07-20"),
            &["--dialect", "python-sdk"],
            &[r#"{"type":"tool_use","id":"toolu_9","name":"memory","input":{"command":"view","path":"/memories/new.md"}}"#],
        ),
        &lines(&[
            r#"{"type":"tool_result","tool_use_id":"toolu_9","content":"The path /memories/new.md does not exist. Please provide a valid path.","is_error":true}"#,
        ]),
    );
    let c = s.commits();
    assert_text(
        "log",
        &s.ok(&["log", "-n", "1"]),
        &(header(&c, 10, "-", "expire 2 files unused for 30d") + "  D /memories/new.md\n  D /memories/old/stale.md\n"),
    );
    assert_text("new.md in history", &s.ok(&["show", "@9:/memories/new.md"]), "n");
    assert_text(
        "check",
        &s.ok(&["check", "--read-data"]),
        "checked 10 commits (@1 to @10), 13 directories, 4 files (23 bytes, read and verified)\nno problems found\n",
    );
}

#[test]
fn expire_says_one_day() {
    let s = Store::new();
    // Nothing to expire yet.
    assert_text(
        "dry run",
        &s.ok_on(Some("2026-01-01"), &["expire", "--unused-for", "1d", "--dry-run"]),
        "0 files unused for 1 day or more would expire (dry run: nothing changed)\n",
    );
    assert_text(
        "for real",
        &s.ok_on(Some("2026-01-01"), &["expire", "--unused-for", "1d"]),
        "no file has been unused for 1 day or more\n",
    );
    // A file last used the day before.
    assert_text(
        "create",
        &s.exec_on(Some("2026-01-01"), &[], &[r#"{"command":"create","path":"/memories/a.md","file_text":"a"}"#]),
        &lines(&[r#"{"content":"File created successfully at: /memories/a.md","is_error":false}"#]),
    );
    assert_text(
        "dry run, a day later",
        &s.ok_on(Some("2026-01-02"), &["expire", "--unused-for", "1d", "--dry-run"]),
        "/memories/a.md\t(last used 2026-01-01)\n1 file unused for 1 day or more would expire (dry run: nothing \
         changed)\n",
    );
    assert_text(
        "for real, a day later",
        &s.ok_on(Some("2026-01-02"), &["expire", "--unused-for", "1d"]),
        "/memories/a.md\t(last used 2026-01-01)\nexpired 1 file unused for 1 day or more (commit @2)\n",
    );
    let c = s.commits();
    assert_text(
        "log",
        &s.ok(&["log", "-n", "1"]),
        &(header(&c, 2, "-", "expire 1 file unused for 1d") + "  D /memories/a.md\n"),
    );
}

#[test]
fn bad_expire_input_is_refused_and_commits_nothing() {
    let s = Store::new();
    // `memfs expire --unused-for`: whole days, with the `d` (0d is accepted: see below).
    // The value is not repeated: argument errors never show one.
    let bad_days = |_: &str| {
        "error: invalid value for '--unused-for <DAYS>': expected a number of days such as 90d\n\n\
         For more information, try '--help'.\n"
            .to_owned()
    };
    for value in ["abc", "90", "+5d", "-5d", "d", "1.5d", "99999999999d", "0", "0x0d"] {
        assert_text(
            &format!("expire --unused-for {value}"),
            &s.fails(2, &["expire", &format!("--unused-for={value}")]),
            &bad_days(value),
        );
    }
    for value in ["0x0d", "abc"] {
        assert_text(
            &format!("expire --unused-for {value}"),
            &s.fails(2, &["expire", "--unused-for", value]),
            &bad_days(value),
        );
    }
    // Clap names the arguments in use in the usage line (the global ones aside: they are
    // described on `memfs --help` only).
    assert_text(
        "expire without --unused-for",
        &s.fails(2, &["expire", "--dry-run"]),
        "error: the following required arguments were not provided:\n  --unused-for <DAYS>\n\n\
         Usage: memfs expire --unused-for <DAYS> --dry-run\n\nFor more information, try '--help'.\n",
    );
    // MEMFS_TODAY must be a date.
    for today in ["tomorrow", "2026-02-30", "2026-6-1"] {
        assert_text(
            &format!("MEMFS_TODAY={today}"),
            &s.fails_on(Some(today), 1, &["expire", "--unused-for", "1d"]),
            &format!("memfs: MEMFS_TODAY=\"{today}\" is not a date: expected YYYY-MM-DD, for example 2026-11-21\n"),
        );
    }
    assert_eq!(s.commits().len(), 0, "nothing committed");
}

#[test]
fn expire_help() {
    let s = Store::new();
    let help = s.ok(&["expire", "--help"]);
    for line in [
        "Remove files nobody has read or written for a while, as one commit.\n",
        "\nUsage: memfs expire [OPTIONS] --unused-for <DAYS>\n",
        "      --unused-for <DAYS>\n          How long unused, in days: `90d` expires every file last used 90 or more days \
         ago. `0d`\n          expires every file, even one used today\n",
        "      --dry-run\n          List what would expire; change nothing\n",
        "  -y, --yes\n          Do not ask before expiring (without a terminal, expire does not ask)\n",
        "      --dry-run\n          List what would expire; change nothing\n",
        "MEMFS_TODAY=YYYY-MM-DD sets the day used as today.\n",
    ] {
        assert!(help.contains(line), "expire --help lacks {line:?}:\n{help}");
    }
    let help = s.ok(&["--help"]);
    assert!(
        help.contains("\n  expire       Remove files nobody has read or written for a while, as one commit\n"),
        "{help}"
    );
}

/// `--unused-for 0d` (refused before) expires every file, even one used today; its dry run
/// lists them and changes nothing; on a terminal expire asks first; without one it runs as
/// it always did.
#[test]
fn zero_days_expires_every_file_after_a_preview() {
    let s = support::Store::on("expire test", None, vec![("MEMFS_TODAY", "2026-03-02".to_owned())]);
    s.exec("", &[json!({"command": "create", "path": "/memories/a.md", "file_text": "a"})]);
    s.exec("", &[json!({"command": "create", "path": "/memories/b.md", "file_text": "b"})]);
    let listed = "/memories/a.md\t(last used 2026-03-02)\n/memories/b.md\t(last used 2026-03-02)\n";
    assert_text(
        "dry run",
        &s.ok_unchanged(&["expire", "--unused-for", "0d", "--dry-run"]),
        &format!("{listed}2 files unused for 0 days or more would expire (dry run: nothing changed)\n"),
    );
    assert_text(
        "1d spares today's files",
        &s.ok_unchanged(&["expire", "--unused-for", "1d", "--dry-run"]),
        "0 files unused for 1 day or more would expire (dry run: nothing changed)\n",
    );
    let before = s.state();
    let (code, screen) = s.on_terminal(&["expire", "--unused-for", "0d"], "no\n");
    assert_eq!(code, Some(1), "{screen}");
    assert!(screen.contains(listed), "{screen}");
    assert!(screen.ends_with("Expire these files? [y/N] memfs: expire cancelled: nothing was changed\n"), "{screen}");
    assert!(s.state() == before, "a cancelled expire changed the store");
    assert_text(
        "no terminal: no question",
        &s.ok(&["expire", "--unused-for", "0d"]),
        &format!("{listed}expired 2 files unused for 0 days or more (commit @3)\n"),
    );
    assert_text("gone", &s.ok(&["show", "HEAD:/memories"]), "");
    s.exec("", &[json!({"command": "create", "path": "/memories/c.md", "file_text": "c"})]);
    let (code, screen) = s.on_terminal(&["expire", "--unused-for", "0d", "--yes"], "");
    assert_eq!(code, Some(0), "{screen}");
    assert!(!screen.contains("[y/N]"), "{screen}");
    assert!(
        screen.ends_with(
            "/memories/c.md\t(last used 2026-03-02)\nexpired 1 file unused for 0 days or more (commit @5)\n"
        ),
        "{screen}"
    );
}
