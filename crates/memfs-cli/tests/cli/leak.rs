//! Criterion 9: the storage holder learns nothing. Files whose names, directory names and
//! contents carry marker strings are written, edited, renamed and deleted through
//! `memfs exec` on a local folder store; then every byte of every file under the store folder
//! (`log.lock` and the log's segments, whose records hold the objects, `memfs.keys` and
//! `head`, and the file names themselves) and of the client's state directory is searched for
//! the markers, every path segment and every content written, raw and in hex and base64. And a
//! wrong passphrase or key file fails with a clear message after one key derivation, writing
//! nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use crate::support::{self, all_segments, log_entries, run};

const PASSPHRASE: &str = "leak-test passphrase";

/// Markers: each appears in names, directory names or contents below.
const MARKER_NAME: &str = "MARKERNAME";
const MARKER_DIR: &str = "MARKERDIR";
const MARKER_CONTENT: &str = "MARKERCONTENT";
const MARKER_UNICODE: &str = "Mærkër-ünïcødé-標記";

/// A temporary home with its platform directories and one store folder.
struct Home {
    root: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Home { root: tempfile::tempdir().expect("temp dir") }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// The binary with this home's environment, on the store folder `store`.
    fn memfs(&self, store: &str) -> Command {
        let mut cmd = support::memfs(self.root.path());
        cmd.arg("--store").arg(format!("file://{}", self.path(store).display()));
        cmd
    }
}

/// Creates a passphrase store with Argon2id costs `memory_kib` and `iterations` (one lane).
fn init_passphrase(home: &Home, store: &str, memory_kib: u32, iterations: u32) {
    let mut cmd = home.memfs(store);
    cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).arg("init");
    cmd.args(["--kdf-memory-kib", &memory_kib.to_string(), "--kdf-iterations", &iterations.to_string()]);
    cmd.args(["--kdf-parallelism", "1"]);
    let out = run(cmd, "");
    assert!(out.status.success(), "memfs init: {}", String::from_utf8_lossy(&out.stderr));
}

/// A JSON string literal (the inputs below hold only printable characters, `"`-free).
fn js(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('\n', "\\n"))
}

/// The session: creates, edits, renames and deletes; returns the input lines, every path
/// segment and every content written.
fn session() -> (Vec<String>, Vec<String>, Vec<String>) {
    let d1 = format!("{MARKER_DIR}-projects");
    let d2 = format!("{MARKER_DIR}-{MARKER_UNICODE}");
    let f1 = format!("{MARKER_NAME}-plan.md");
    let f2 = format!("{MARKER_NAME}-{MARKER_UNICODE}.txt");
    let f3 = format!("{MARKER_NAME}-doomed.md");
    let c1 = format!("{MARKER_CONTENT} first line\nthe launch code is 0451\n");
    let c2 = format!("{MARKER_UNICODE} {MARKER_CONTENT} 秘密のメモ\n");
    let c3 = format!("{MARKER_CONTENT} to be deleted\n");
    let edit_old = "the launch code is 0451";
    let edit_new = format!("the launch code is 0452 {MARKER_CONTENT}-edited");
    let inserted = format!("{MARKER_CONTENT}-inserted line");
    let moved = format!("{MARKER_DIR}-archive");
    let p = |dir: &str, file: &str| format!("/memories/{dir}/{file}");
    let lines = vec![
        format!(r#"{{"command":"create","path":{},"file_text":{}}}"#, js(&p(&d1, &f1)), js(&c1)),
        format!(r#"{{"command":"create","path":{},"file_text":{}}}"#, js(&p(&d2, &f2)), js(&c2)),
        format!(r#"{{"command":"create","path":{},"file_text":{}}}"#, js(&p(&d1, &f3)), js(&c3)),
        format!(
            r#"{{"command":"str_replace","path":{},"old_str":{},"new_str":{}}}"#,
            js(&p(&d1, &f1)),
            js(edit_old),
            js(&edit_new)
        ),
        format!(
            r#"{{"command":"insert","path":{},"insert_line":1,"insert_text":{}}}"#,
            js(&p(&d2, &f2)),
            js(&inserted)
        ),
        format!(
            r#"{{"command":"rename","old_path":{},"new_path":{}}}"#,
            js(&format!("/memories/{d1}")),
            js(&format!("/memories/{moved}"))
        ),
        format!(r#"{{"command":"delete","path":{}}}"#, js(&p(&moved, &f3))),
        format!(r#"{{"command":"view","path":{}}}"#, js(&p(&moved, &f1))),
        r#"{"command":"view","path":"/memories"}"#.to_owned(),
    ];
    let segments = vec![d1, d2, f1, f2, f3, moved];
    let contents = vec![c1, c2, c3, edit_old.to_owned(), edit_new, inserted];
    (lines, segments, contents)
}

fn hex(bytes: &[u8], upper: bool) -> String {
    bytes.iter().map(|b| if upper { format!("{b:02X}") } else { format!("{b:02x}") }).collect()
}

fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// What must not appear: `secret` raw, as JSON `\u` escapes, in hex, and in base64 at each of
/// the three alignments it could have inside a longer encoded stream.
fn encodings(secret: &str) -> Vec<(String, Vec<u8>)> {
    let raw = secret.as_bytes();
    let mut out = vec![("raw".to_owned(), raw.to_vec())];
    if !secret.is_ascii() {
        let escaped: String = secret
            .encode_utf16()
            .map(|u| if u < 0x80 { (u as u8 as char).to_string() } else { format!("\\u{u:04x}") })
            .collect();
        out.push(("json-escaped".into(), escaped.into_bytes()));
    }
    out.push(("hex".into(), hex(raw, false).into_bytes()));
    out.push(("HEX".into(), hex(raw, true).into_bytes()));
    for (name, alphabet) in [("base64", STANDARD), ("base64url", URL_SAFE)] {
        for shift in 0..3usize {
            // Prefix `shift` bytes, encode, and keep only the characters that depend on the
            // secret alone: drop the first block (it mixes in the prefix) unless unshifted,
            // and the last block (it may mix in padding or what follows).
            let mut shifted = vec![0u8; shift];
            shifted.extend_from_slice(raw);
            let encoded = base64(&shifted, alphabet);
            let start = if shift == 0 { 0 } else { 4 };
            let end = encoded.len().saturating_sub(4).max(start);
            if end - start >= 8 {
                out.push((format!("{name}+{shift}"), encoded.as_bytes()[start..end].to_vec()));
            }
        }
    }
    out
}

/// Every file under `dir`: relative path → bytes.
fn read_all(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).expect("read a stored file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn the_store_folder_holds_no_plaintext_name_or_content() {
    let home = Home::new();
    init_passphrase(&home, "store", 8, 1);
    let (lines, segments, contents) = session();
    let mut cmd = home.memfs("store");
    cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).arg("exec");
    let out = run(cmd, &(lines.join("\n") + "\n"));
    assert!(out.status.success(), "memfs exec: {}", String::from_utf8_lossy(&out.stderr));
    let answers = String::from_utf8(out.stdout).unwrap();
    assert_eq!(answers.lines().count(), lines.len());
    for (line, answer) in lines.iter().zip(answers.lines()) {
        assert!(answer.ends_with(r#""is_error":false}"#), "{line}\n  -> {answer}");
    }
    // The session really wrote the markers (the last view lists the renamed directory).
    assert!(answers.contains(&format!("{MARKER_DIR}-archive")) && answers.contains("0452"), "{answers}");

    let mut secrets: Vec<String> =
        [MARKER_NAME, MARKER_DIR, MARKER_CONTENT, MARKER_UNICODE, PASSPHRASE].map(str::to_owned).to_vec();
    secrets.extend(segments);
    secrets.extend(contents.iter().flat_map(|c| c.lines().map(str::to_owned)));
    secrets.extend(["memories", "launch code", "秘密"].map(str::to_owned));

    let mut files = read_all(&home.path("store"));
    let stored = files.len();
    // The folder holds the log and nothing else: its lock and its segments, whose live records
    // include the key slots and the head.
    let mut expected: Vec<String> =
        all_segments(&home.path("store")).iter().map(|(n, _)| format!("log/{n:016x}")).collect();
    expected.push("log.lock".into());
    expected.sort();
    assert_eq!(files.keys().cloned().collect::<Vec<_>>(), expected);
    let live = log_entries(&home.path("store"));
    assert!(live.contains_key("memfs.keys") && live.contains_key("head"), "{:?}", live.keys());
    files.extend(read_all(&home.path("state")).into_iter().map(|(k, v)| (format!("state/{k}"), v)));
    let total_bytes: usize = files.values().map(Vec::len).sum();

    let mut checked = 0;
    for secret in &secrets {
        for (encoding, needle) in encodings(secret) {
            for (name, bytes) in &files {
                assert!(!contains(bytes, &needle), "{secret:?} ({encoding}) appears in the bytes of {name}");
                assert!(!contains(name.as_bytes(), &needle), "{secret:?} ({encoding}) appears in the file name {name}");
                checked += 1;
            }
        }
    }
    eprintln!(
        "leak: {} secrets x their encodings searched in {stored} store files + {} state files ({total_bytes} bytes): \
         {checked} searches, nothing found",
        secrets.len(),
        files.len() - stored
    );
}

/// Every file under `dir` with its length, modification time and bytes.
fn fingerprint(dir: &Path) -> BTreeMap<String, (Option<SystemTime>, Vec<u8>)> {
    read_all(dir)
        .into_iter()
        .map(|(rel, bytes)| {
            let mtime = std::fs::metadata(dir.join(&rel)).and_then(|m| m.modified()).ok();
            (rel, (mtime, bytes))
        })
        .collect()
}

/// Tries `cmd` (an `exec` that would create a file); it must fail fast with `message` and
/// leave `watched` exactly as it was.
fn refused(cmd: Command, message: &str, watched: &[PathBuf]) -> Duration {
    let before: Vec<_> = watched.iter().map(|d| fingerprint(d)).collect();
    let started = Instant::now();
    let out = run(cmd, "{\"command\":\"create\",\"path\":\"/memories/x.md\",\"file_text\":\"x\"}\n");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a wrong credential was accepted");
    assert!(out.stdout.is_empty(), "answered: {}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains(message), "stderr: {stderr}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let after: Vec<_> = watched.iter().map(|d| fingerprint(d)).collect();
    assert!(before == after, "a refused credential changed the store or the state directory");
    elapsed
}

/// Opens `store` with `passphrase` and answers one view; returns how long it took.
fn open_time(home: &Home, store: &str, passphrase: &str) -> (bool, Duration) {
    let mut cmd = home.memfs(store);
    cmd.env("MEMFS_PASSPHRASE", passphrase).arg("exec");
    let started = Instant::now();
    let out = run(cmd, "{\"command\":\"view\",\"path\":\"/memories\"}\n");
    (out.status.success(), started.elapsed())
}

#[test]
fn a_wrong_passphrase_or_key_file_is_refused_and_writes_nothing() {
    let home = Home::new();
    init_passphrase(&home, "store", 8, 1);
    // Some content, and the state directory's rollback mark, before the attempts.
    let mut cmd = home.memfs("store");
    cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).arg("exec");
    assert!(run(cmd, "{\"command\":\"create\",\"path\":\"/memories/a.md\",\"file_text\":\"a\"}\n").status.success());
    let watched = [home.path("store"), home.path("state")];

    let mut cmd = home.memfs("store");
    cmd.env("MEMFS_PASSPHRASE", "not the passphrase").arg("exec");
    let wrong_passphrase = refused(cmd, "wrong passphrase or key file", &watched);

    // A key-file store opened with another key file.
    let key = home.path("store.key");
    let mut cmd = home.memfs("keyed");
    cmd.arg("--key-file").arg(&key).arg("init");
    let out = run(cmd, "");
    assert!(out.status.success(), "init --key-file: {}", String::from_utf8_lossy(&out.stderr));
    let other = home.path("other.key");
    memfs::KeyFile::generate().unwrap().write_new(&other).unwrap();
    let watched_keyed = [home.path("keyed"), home.path("state")];
    let mut cmd = home.memfs("keyed");
    cmd.arg("--key-file").arg(&other).arg("exec");
    let wrong_key = refused(cmd, "wrong passphrase or key file", &watched_keyed);
    eprintln!("leak: wrong passphrase refused in {wrong_passphrase:?}, wrong key file in {wrong_key:?}");
}

/// One key derivation, not more: with costs that make the derivation dominate (4 MiB, two
/// passes), refusing a wrong passphrase takes about as long as opening with the right one.
#[test]
fn a_wrong_passphrase_costs_one_key_derivation() {
    let home = Home::new();
    init_passphrase(&home, "store", 4096, 2);
    let (mut right, mut wrong) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        let (ok, t) = open_time(&home, "store", PASSPHRASE);
        assert!(ok);
        right = right.min(t);
        let (ok, t) = open_time(&home, "store", "not the passphrase");
        assert!(!ok);
        wrong = wrong.min(t);
    }
    eprintln!(
        "leak: with a 4 MiB, 2-pass Argon2id slot: right passphrase {right:?}, wrong passphrase {wrong:?} (best of 3)"
    );
    assert!(wrong < right.mul_f64(1.5) + Duration::from_millis(20), "wrong {wrong:?} vs right {right:?}");
}

/// The searches find what they look for: a secret embedded at any offset in an encoded stream.
#[test]
fn the_encodings_find_embedded_secrets() {
    for secret in [MARKER_CONTENT, MARKER_UNICODE] {
        for prefix in 0..3 {
            let mut plain = vec![b'x'; prefix];
            plain.extend_from_slice(secret.as_bytes());
            plain.extend_from_slice(b"tail");
            for stream in [base64(&plain, STANDARD), base64(&plain, URL_SAFE), hex(&plain, false), hex(&plain, true)] {
                let found = encodings(secret).iter().any(|(_, needle)| contains(stream.as_bytes(), needle));
                assert!(found, "{secret:?} after {prefix} bytes not found in {stream}");
            }
        }
    }
    let escaped = "M\\u00e6rk\\u00ebr-\\u00fcn\\u00efc\\u00f8d\\u00e9-\\u6a19\\u8a18";
    assert!(encodings(MARKER_UNICODE).iter().any(|(_, n)| n == escaped.as_bytes()));
}

/// No argument error shows a value: a secret planted in each kind of parse error (a value a
/// parser refuses, from a flag or from the environment; an unknown flag with a value; a
/// value given to a flag that takes none; a stray positional; a subcommand that does not
/// exist) is in no encoding on stdout or stderr, and the message names the flag.
#[test]
fn argument_errors_never_show_a_value() {
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY";
    let home = Home::new();
    let tail = "\nFor more information, try '--help'.\n";
    let invalid = |flag: &str, why: &str| format!("error: invalid value for '{flag}': {why}\n{tail}");
    // Arguments, a variable of the environment, the exact stderr.
    type Case<'a> = (Vec<String>, Option<(&'a str, &'a str)>, String);
    let cases: Vec<Case> = vec![
        (
            // A colon for `=`: the secret access key, refused as a whole.
            vec!["--store-option".into(), format!("aws_secret_access_key:{SECRET}"), "log".into()],
            None,
            invalid("--store-option <KEY=VALUE>", "expected KEY=VALUE, as in aws_region=eu-west-1"),
        ),
        (
            vec!["exec".into(), "--dialect".into(), SECRET.into()],
            None,
            invalid("--dialect <DIALECT>", "expected `spec`, `python-sdk` or `typescript-sdk`"),
        ),
        (
            vec!["exec".into()],
            Some(("MEMFS_DIALECT", SECRET)),
            invalid("--dialect <DIALECT>", "expected `spec`, `python-sdk` or `typescript-sdk`"),
        ),
        (
            vec!["log".into()],
            Some(("MEMFS_MAX_STALENESS", SECRET)),
            invalid("--max-staleness <DURATION>", "expected a duration such as 30s, 500ms or 2m"),
        ),
        (
            vec!["expire".into(), "--unused-for".into(), SECRET.into()],
            None,
            invalid("--unused-for <DAYS>", "expected a number of days such as 90d"),
        ),
        (
            vec!["serve".into(), "--max-body".into(), SECRET.into()],
            None,
            invalid("--max-body <BYTES>", "expected a number of bytes greater than 0, such as 1048576"),
        ),
        // A parser memfs does not own: its reason might quote the value, and is not shown.
        (
            vec!["agent".into(), "--max-turns".into(), SECRET.into()],
            None,
            format!("error: invalid value for '--max-turns <N>'\n{tail}"),
        ),
        (
            vec![format!("--store-secret={SECRET}"), "log".into()],
            None,
            format!(
                "error: unexpected argument '--store-secret' found\n\n  tip: a similar argument exists: '--store'\n\n\
                 Usage: memfs --store <URL|PATH|NAME> <COMMAND>\n{tail}"
            ),
        ),
        (
            vec!["undo".into(), SECRET.into()],
            None,
            format!(
                "error: unexpected argument found (not shown: it may be a secret)\n\nUsage: memfs undo [OPTIONS]\n{tail}"
            ),
        ),
        (
            vec!["undo".into(), format!("-{SECRET}")],
            None,
            format!(
                "error: unexpected argument found (not shown: it may be a secret)\n\n  tip: to pass a value that starts \
                 with '-', put '--' before it\n\nUsage: memfs undo [OPTIONS]\n{tail}"
            ),
        ),
        (
            vec![SECRET.into()],
            None,
            format!(
                "error: unrecognized subcommand (not shown: it may be a secret)\n\nUsage: memfs [OPTIONS] <COMMAND>\n{tail}"
            ),
        ),
        (
            vec!["purge".into(), format!("--yes={SECRET}"), "/memories/a.md".into()],
            None,
            format!(
                "error: unexpected value for '--yes' (not shown); no more were expected\n\n\
                 Usage: memfs purge --yes <PATH>\n{tail}"
            ),
        ),
    ];
    for (args, env, expected) in cases {
        let mut cmd = home.memfs("store");
        cmd.args(&args);
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = run(cmd, "");
        let what = format!("{args:?} {env:?}");
        assert_eq!(out.status.code(), Some(2), "{what}");
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            for (encoding, needle) in encodings(SECRET) {
                assert!(!contains(bytes, &needle), "{what}: {stream} shows the secret ({encoding})");
            }
        }
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{what}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{what}");
    }
    assert!(!home.path("store").exists(), "nothing was created");
}
