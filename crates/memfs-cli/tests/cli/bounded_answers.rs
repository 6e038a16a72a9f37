//! Every answer of `memfs exec` is bounded by the policy's `view-max-chars` (16,000 by
//! default), errors included, and every entry of a directory can be reached by following the
//! notes of its cut listings: run as the binary against a local folder store, exact outputs.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::policy::Store;
use crate::support::assert_text;

/// The answers of one `memfs exec` run, as (content, is_error).
fn answers(s: &Store, args: &[&str], inputs: &[Value]) -> Vec<(String, bool)> {
    let inputs: Vec<String> = inputs.iter().map(Value::to_string).collect();
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    s.exec(args, &inputs)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            (v["content"].as_str().expect("content").to_owned(), v["is_error"].as_bool().expect("is_error"))
        })
        .collect()
}

/// One answer.
fn answer(s: &Store, args: &[&str], input: Value) -> (String, bool) {
    answers(s, args, &[input]).remove(0)
}

/// Bug 1: 20,000 matches used to be listed one by one (a 16 MB file gave 50 MB of answer). The
/// list keeps the lines that fit in 16,000 characters and counts the rest; a short list is the
/// SDK's.
#[test]
fn a_str_replace_match_list_is_capped_with_a_count_of_the_rest() {
    let s = Store::new();
    let create = json!({"command": "create", "path": "/memories/a.txt", "file_text": "x\n".repeat(20_000)});
    let replace = json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "x", "new_str": "y"});
    for dialect in ["spec", "python-sdk"] {
        let out = answers(&s, &["--dialect", dialect], &[create.clone(), replace.clone()]);
        let listed: Vec<String> = (1..=2831).map(|n| n.to_string()).collect();
        let want = format!(
            "No replacement was performed. Multiple occurrences of old_str `x` in lines: {}, … and 17169 more. \
             Please ensure it is unique",
            listed.join(", ")
        );
        assert_eq!(want.chars().count(), 15_999);
        assert_text(dialect, &out[1].0, &want);
        assert!(out[1].1);
        s.exec(&[], &[r#"{"command":"delete","path":"/memories/a.txt"}"#]);
    }
    // Under the limit: the SDK's answer, every line.
    let out = answers(
        &s,
        &["--dialect", "python-sdk"],
        &[
            json!({"command": "create", "path": "/memories/b.txt", "file_text": "ab\nab ab\n"}),
            json!({"command": "str_replace", "path": "/memories/b.txt", "old_str": "ab", "new_str": "c"}),
        ],
    );
    assert_eq!(
        out[1],
        (
            "No replacement was performed. Multiple occurrences of old_str `ab` in lines: 1, 2, 2. Please ensure it \
             is unique"
                .to_owned(),
            true
        )
    );
    // With no maximum, the whole list, as the SDK gives it.
    s.ok(&["policy", "set", "view-max-chars", "none"]);
    let out = answers(&s, &[], &[create, replace]);
    let all: Vec<String> = (1..=20_000).map(|n| n.to_string()).collect();
    assert_text(
        "none",
        &out[1].0,
        &format!(
            "No replacement was performed. Multiple occurrences of old_str `x` in lines: {}. Please ensure it is \
             unique",
            all.join(", ")
        ),
    );
}

/// An error that echoes a long `old_str` is cut at the maximum with a note.
#[test]
fn a_long_error_is_cut_with_a_note() {
    let s = Store::new();
    s.exec(&[], &[r#"{"command":"create","path":"/memories/a.txt","file_text":"x"}"#]);
    let old = "y".repeat(20_000);
    let (content, is_error) =
        answer(&s, &[], json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": old, "new_str": "z"}));
    let message = format!("No replacement was performed, old_str `{old}` did not appear verbatim in /memories/a.txt.");
    assert_eq!(message.chars().count(), 20_084);
    let want = format!(
        "{}\n(Cut at 16000 characters: this message has 20084 characters and only its first 15903 are shown.)",
        &message[..15_903]
    );
    assert_eq!(want.chars().count(), 16_000);
    assert_text("cut error", &content, &want);
    assert!(is_error);
}

fn write(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
    std::fs::write(path, b"m").expect("a file");
}

/// Lists `dir` by following the notes: views it, then the `view_range` each cut listing's note
/// names. Returns every path listed below `dir` and the number of pages.
fn list_all(s: &Store, dir: &str) -> (BTreeSet<String>, usize) {
    let (mut seen, mut pages) = (BTreeSet::new(), 0);
    let mut input = json!({"command": "view", "path": dir});
    loop {
        let (content, is_error) = answer(s, &[], input.clone());
        assert!(!is_error, "{content}");
        assert!(content.chars().count() <= 16_000, "page {pages}: {} characters", content.chars().count());
        pages += 1;
        let mut rows: Vec<&str> = content.split('\n').collect();
        assert!(rows[0].starts_with("Here're the files and directories up to 2 levels deep in "), "{}", rows[0]);
        assert_eq!(rows[1], format!("4.0K\t{dir}"));
        let last = *rows.last().expect("rows");
        let next = last.strip_prefix("(Cut at 16000 characters: entries ").map(|note| {
            rows.pop();
            let range = note.split("view_range [").nth(1).expect("a view_range in the note");
            let range = range.strip_suffix("].)").expect("the note's end");
            let (a, b) = range.split_once(", ").expect("two numbers");
            (a.parse::<i64>().expect("start"), b.parse::<i64>().expect("end"))
        });
        for row in &rows[2..] {
            let (_, path) = row.split_once('\t').expect("size and path");
            assert!(seen.insert(path.to_owned()), "{path} listed twice");
        }
        let Some((a, b)) = next else { break };
        input = json!({"command": "view", "path": dir, "view_range": [a, b]});
    }
    (seen, pages)
}

/// Bug 2: a flat folder of 5,000 files showed 606 and pointed to a subdirectory that does not
/// exist; in 50 folders of 100 files, d07-d49 were never named. Following the notes now lists
/// every entry once.
#[test]
fn every_entry_of_a_large_directory_is_reached_by_following_the_notes() {
    let s = Store::new();
    let work = tempfile::tempdir().expect("temp dir");
    let folder = work.path().join("memories");
    let mut flat = BTreeSet::new();
    for i in 0..5000 {
        write(&folder.join(format!("flat/f{i:04}.md")));
        flat.insert(format!("/memories/flat/f{i:04}.md"));
    }
    let mut tree = BTreeSet::new();
    for d in 0..50 {
        tree.insert(format!("/memories/tree/d{d:02}/"));
        for f in 0..100 {
            write(&folder.join(format!("tree/d{d:02}/f{f:02}.md")));
            tree.insert(format!("/memories/tree/d{d:02}/f{f:02}.md"));
        }
    }
    s.ok(&["import", folder.to_str().expect("a UTF-8 path")]);

    let (seen, pages) = list_all(&s, "/memories/flat");
    assert_eq!(seen, flat);
    assert_eq!(pages, 9);
    let (seen, pages) = list_all(&s, "/memories/tree");
    assert_eq!(seen, tree);
    assert_eq!(pages, 10);
    // The first page's note, exactly.
    let (content, _) = answer(&s, &[], json!({"command": "view", "path": "/memories/flat"}));
    let note = content.rsplit('\n').next().expect("a note");
    assert_text(
        "note",
        note,
        "(Cut at 16000 characters: entries 1-582 of 1-5000 shown. To see the next part, view this directory with \
         view_range [583, 5000].)",
    );
}
