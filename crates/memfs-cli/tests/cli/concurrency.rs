//! Several `memfs exec` processes writing one local folder store at the same time: the local
//! compare-and-swap (lock file + atomic rename) must lose no update, and every command that
//! lost a race must re-run against the new head.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support;

const PASSPHRASE: &str = "concurrency test passphrase";
const WRITERS: usize = 4;
const PER_WRITER: usize = 25;

fn memfs(root: &Path) -> Command {
    let mut cmd = support::memfs(root);
    cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).env("MEMFS_STORE", format!("file://{}", root.join("store").display()));
    cmd
}

fn run(root: &Path, args: &[&str], stdin: &str) -> Output {
    support::run(memfs(root).args(args), stdin)
}

fn lines(inputs: &[Value]) -> String {
    inputs.iter().map(|v| format!("{v}\n")).collect()
}

#[test]
fn concurrent_writers_lose_no_update() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let init = ["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"];
    assert!(run(root, &init, "").status.success());
    let shared = json!({"command": "create", "path": "/memories/shared.md", "file_text": ""});
    assert!(run(root, &["exec"], &lines(&[shared])).status.success());

    // Every writer creates its own files and inserts into the one shared file: the inserts
    // collide on the head every time, so most of them lose a race at least once.
    let children: Vec<_> = (0..WRITERS)
        .map(|w| {
            let mut inputs = Vec::new();
            for i in 0..PER_WRITER {
                let path = format!("/memories/w{w}/note{i}.md");
                inputs.push(json!({"command": "create", "path": path, "file_text": format!("writer {w} note {i}\n")}));
                inputs.push(json!({"command": "insert", "path": "/memories/shared.md", "insert_line": 0,
                    "insert_text": format!("w{w}-{i}")}));
            }
            let mut child = memfs(root)
                .args(["--actor", &format!("writer-{w}"), "exec", "--dialect", "python-sdk"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn writer");
            child.stdin.take().expect("stdin").write_all(lines(&inputs).as_bytes()).expect("write");
            child
        })
        .collect();
    for (w, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("writer exits");
        assert!(out.status.success(), "writer {w}: {}", String::from_utf8_lossy(&out.stderr));
        let answers: Vec<Value> =
            String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(answers.len(), 2 * PER_WRITER, "writer {w}");
        for a in &answers {
            assert_eq!(a["is_error"], false, "writer {w}: {a}");
        }
    }

    // The shared file holds every insert exactly once; every own file exists.
    let view = json!({"command": "view", "path": "/memories/shared.md"});
    let out = run(root, &["exec", "--dialect", "python-sdk"], &lines(&[view]));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one answer");
    let content = answer["content"].as_str().unwrap();
    let mut seen: Vec<&str> =
        content.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).filter(|l| !l.is_empty()).collect();
    seen.sort_unstable();
    let mut expected: Vec<String> =
        (0..WRITERS).flat_map(|w| (0..PER_WRITER).map(move |i| format!("w{w}-{i}"))).collect();
    expected.sort_unstable();
    assert_eq!(seen, expected);
    // Each writer's inserts are in its own order (each went to line 0 after the previous one).
    for w in 0..WRITERS {
        let order: Vec<&str> =
            content.lines().filter_map(|l| l.split('\t').nth(1)).filter(|l| l.starts_with(&format!("w{w}-"))).collect();
        let want: Vec<String> = (0..PER_WRITER).rev().map(|i| format!("w{w}-{i}")).collect();
        assert_eq!(order, want, "writer {w}'s inserts out of order");
    }

    // History: every acknowledged mutation is one commit, in one linear chain.
    let out = run(root, &["log", "--json"], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let commits: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(commits.len(), 1 + WRITERS * 2 * PER_WRITER);
    for pair in commits.windows(2) {
        assert_eq!(pair[0]["parent"], pair[1]["id"], "the history is one chain");
    }
    let out = run(root, &["check", "--read-data"], "");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!(
        "concurrency: {WRITERS} processes x {} mutations, {} commits, check passed",
        2 * PER_WRITER,
        commits.len()
    );
}
