//! Helpers shared by the modules: the one harness that starts the binary ([`memfs`], [`run`],
//! [`ok`], [`fails`]), and an independent reader of a local folder store's log.

use std::borrow::BorrowMut;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Asserts two texts are equal, printing both in full (escaped) on mismatch.
#[track_caller]
pub(crate) fn assert_text(what: &str, actual: &str, expected: &str) {
    assert!(
        actual == expected,
        "{what}: text mismatch\nexpected: \"{}\"\n  actual: \"{}\"\n",
        expected.escape_debug(),
        actual.escape_debug()
    );
}

/// Process output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

// The log of a local folder store, read as documented at the top of
// crates/memfs-store/src/log_store.rs, without its code: `log/<16 lowercase hex digits>`
// segments, each a 16-byte header (`memfslog`, u32 version 1 or 2, u32 flags: bit 0 =
// compacted) and then records (little-endian): u32 len, u32 !len, u8 op, u64 time, u32
// path_len, [16-byte origin if op 3], path, data, 16-byte checksum. The checksum (BLAKE3 in
// version 1, XXH3-128 in version 2) is not verified here: the tests read logs their writers
// finished (memfs refuses a damaged record that is not the last; attacks_local.rs and
// history.rs show it).

const SEGMENT_HEADER_LEN: usize = 16;
const CHECKSUM_LEN: usize = 16;
/// Op bit 7: the path is an object path stored as its 32 id bytes (log version 2).
const OBJECT_PATH: u8 = 0x80;

/// The path of a record whose op byte is `op` and whose stored path is `stored`.
fn record_path(op: u8, stored: &[u8]) -> String {
    if op & OBJECT_PATH != 0 {
        let hex: String = stored.iter().map(|b| format!("{b:02x}")).collect();
        return format!("objects/{}/{hex}", &hex[..2]);
    }
    std::str::from_utf8(stored).expect("a UTF-8 path").to_owned()
}

/// The latest put of one path in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogEntry {
    /// The segment file holding it.
    pub(crate) file: PathBuf,
    /// Where the whole record is in that file.
    pub(crate) record: Range<usize>,
    /// Where its data (the object) is in that file.
    pub(crate) data: Range<usize>,
    /// 1 = put, 3 = put copied by compaction.
    pub(crate) op: u8,
}

impl LogEntry {
    /// The object's size.
    pub(crate) fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// The object's bytes, read from the segment file.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.file).expect("read a segment")[self.data.clone()].to_vec()
    }
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// Every segment file in the store folder `store`, in number order, superseded ones included.
pub(crate) fn all_segments(store: &Path) -> Vec<(u64, PathBuf)> {
    let log = store.join("log");
    let mut out: Vec<(u64, PathBuf)> = std::fs::read_dir(&log)
        .expect("read the log folder")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let hex = name.len() == 16 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            hex.then(|| (u64::from_str_radix(&name, 16).expect("hex"), e.path()))
        })
        .collect();
    out.sort();
    out
}

/// The segments of the log: from the base (the highest-numbered compacted segment, or 1)
/// upward, which must be numbered without gaps.
pub(crate) fn log_segments(store: &Path) -> Vec<PathBuf> {
    let segments = all_segments(store);
    let compacted = |file: &Path| {
        let mut header = [0; SEGMENT_HEADER_LEN];
        std::fs::File::open(file).and_then(|mut f| f.read_exact(&mut header)).expect("read a segment header");
        assert_eq!(&header[..8], b"memfslog", "{}: magic", file.display());
        assert!([1, 2].contains(&u32_at(&header, 8)), "{}: version", file.display());
        let flags = u32_at(&header, 12);
        assert_eq!(flags & !1, 0, "{}: unknown flags", file.display());
        flags == 1
    };
    let base = segments.iter().rev().find(|(_, file)| compacted(file)).map_or(1, |&(n, _)| n);
    let used: Vec<(u64, PathBuf)> = segments.into_iter().filter(|&(n, _)| n >= base).collect();
    let numbers: Vec<u64> = used.iter().map(|&(n, _)| n).collect();
    assert_eq!(numbers, (base..base + used.len() as u64).collect::<Vec<_>>(), "segments from the base, no gaps");
    used.into_iter().map(|(_, file)| file).collect()
}

/// The live paths of the log in the store folder `store`: the latest put of each path, unless
/// a delete (op 2) came after it. An incomplete last record (a write under way or torn) is
/// ignored; a length that does not match its `!len` is a failed assertion.
pub(crate) fn log_entries(store: &Path) -> BTreeMap<String, LogEntry> {
    let mut live = BTreeMap::new();
    for file in log_segments(store) {
        let bytes = std::fs::read(&file).expect("read a segment");
        let mut at = SEGMENT_HEADER_LEN;
        while at + 8 <= bytes.len() && !zeros_at(&bytes, at) {
            let len = u32_at(&bytes, at);
            assert_eq!(u32_at(&bytes, at + 4), !len, "{} at {at}: len_check", file.display());
            let end = at + len as usize;
            if end > bytes.len() {
                break;
            }
            let op = bytes[at + 8] & !OBJECT_PATH;
            let path_start = at + 21 + if op == 3 { 16 } else { 0 };
            let data = path_start + u32_at(&bytes, at + 17) as usize..end - CHECKSUM_LEN;
            let path = record_path(bytes[at + 8], &bytes[path_start..data.start]);
            match op {
                1 | 3 => drop(live.insert(path, LogEntry { file: file.clone(), record: at..end, data, op })),
                2 => {
                    assert!(data.is_empty(), "{} at {at}: a delete with data", file.display());
                    live.remove(&path);
                }
                _ => panic!("{} at {at}: unknown op {op}", file.display()),
            }
            at = end;
        }
    }
    live
}

/// Every put the log in the store folder `store` has ever held, in the order written, from
/// every segment file still there (superseded ones included): what an attacker who kept the
/// folder's files holds, as a versioned bucket keeps every version of every object.
/// A store's every version of every object: path and version (a bucket's version id; for a
/// folder, the record's place in its log) to the stored bytes.
pub(crate) type Versions = std::collections::BTreeMap<(String, String), Vec<u8>>;

/// [`log_history`] as [`Versions`], each record named by its place in the log.
pub(crate) fn log_versions(store: &Path) -> Versions {
    log_history(store).into_iter().enumerate().map(|(i, (path, bytes))| ((path, format!("{i:08}")), bytes)).collect()
}

pub(crate) fn log_history(store: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (_, file) in all_segments(store) {
        let bytes = std::fs::read(&file).expect("read a segment");
        let mut at = SEGMENT_HEADER_LEN;
        while at + 8 <= bytes.len() && !zeros_at(&bytes, at) {
            let end = at + u32_at(&bytes, at) as usize;
            if end > bytes.len() {
                break;
            }
            let op = bytes[at + 8] & !OBJECT_PATH;
            let path_start = at + 21 + if op == 3 { 16 } else { 0 };
            let data = path_start + u32_at(&bytes, at + 17) as usize..end - CHECKSUM_LEN;
            if op == 1 || op == 3 {
                let path = record_path(bytes[at + 8], &bytes[path_start..data.start]);
                out.push((path, bytes[data].to_vec()));
            }
            at = end;
        }
    }
    out
}

/// Whether eight zero bytes start at `at`: the end of a segment's records, the rest filled with
/// zeros ahead of them by the last writer (docs/FORMAT.md, "Filled ahead").
fn zeros_at(bytes: &[u8], at: usize) -> bool {
    bytes[at..at + 8].iter().all(|&b| b == 0)
}

/// Where the records of the segment `bytes` end: at the first zeros where a record would
/// start, or at the end of the file.
pub(crate) fn records_end(bytes: &[u8]) -> usize {
    let mut at = SEGMENT_HEADER_LEN;
    while at + 8 <= bytes.len() && !zeros_at(bytes, at) {
        at += u32_at(bytes, at) as usize;
    }
    at.min(bytes.len())
}

/// What `memfs.keys`' tag covers, as docs/FORMAT.md states it: the file's JSON without
/// `mac`, compact, the members of every object in byte order of their names.
pub(crate) fn keys_tag_body(keys: &[u8]) -> Vec<u8> {
    fn sorted(value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::Object(members) => {
                let mut members: Vec<(String, Value)> = members.into_iter().collect();
                members.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(members.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
            other => other,
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(keys).expect("memfs.keys is JSON");
    value.as_object_mut().expect("memfs.keys is an object").remove("mac");
    serde_json::to_vec(&sorted(value)).unwrap()
}

/// The bytes of an even number of hex digits, or `None` for anything else.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()).collect()
}

/// The checksum that ends a log record in a segment of log version 2 (what this memfs writes):
/// XXH3-128 over everything before it, little-endian. It is not a MAC: whoever can write the
/// folder can forge one, which the attacks do.
pub(crate) fn checksum(record: &[u8]) -> [u8; CHECKSUM_LEN] {
    twox_hash::XxHash3_128::oneshot(record).to_le_bytes()
}

/// Appends to the last segment of the log in the store folder `store` a put (op 1) of `path`
/// with `data`, valid by the format, as any writer of the folder can.
pub(crate) fn append_put(store: &Path, path: &str, data: &[u8]) {
    let len = (21 + path.len() + data.len() + CHECKSUM_LEN) as u32;
    let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("time").as_millis() as u64;
    let mut record = [
        &len.to_le_bytes()[..],
        &(!len).to_le_bytes(),
        &[1],
        &time.to_le_bytes(),
        &(path.len() as u32).to_le_bytes(),
        path.as_bytes(),
        data,
    ]
    .concat();
    record.extend_from_slice(&checksum(&record));
    let (_, last) = all_segments(store).pop().expect("a segment");
    let end = records_end(&std::fs::read(&last).expect("read the last segment"));
    let segment = std::fs::OpenOptions::new().write(true).open(last).expect("open the last segment");
    std::os::unix::fs::FileExt::write_all_at(&segment, &record, end as u64).expect("append a record");
}

// The one way the tests start the binary.

/// Prefixes of variables no test passes on from its own environment: the binary's own
/// (`MEMFS_`), the cloud clients' credentials and endpoints, the agent's API key and URL.
const CLEARED_PREFIXES: [&str; 6] = ["MEMFS_", "AWS_", "AZURE_", "AZURITE_", "GOOGLE_", "ANTHROPIC_"];

/// Terminal settings: help text wraps at COLUMNS, and colours follow the others.
const TERMINAL: [&str; 6] = ["TERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES"];

/// The binary with none of those variables, its platform folders (`HOME`, `XDG_DATA_HOME`,
/// `XDG_CONFIG_HOME`, `XDG_STATE_HOME`) under `home`: a test sets what it needs itself.
pub(crate) fn memfs(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memfs"));
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_none_or(|k| CLEARED_PREFIXES.iter().any(|p| k.starts_with(p))) {
            cmd.env_remove(key);
        }
    }
    for key in TERMINAL {
        cmd.env_remove(key);
    }
    // No OS keychain: the default store keeps its key in a key file (and the user's own
    // keychain, if this machine has one, is never touched). The keychain tests set theirs.
    cmd.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/memfs-tests-have-no-keychain");
    cmd.env("HOME", home.join("home"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"));
    cmd
}

/// [`memfs`] for the tests that have no folder of their own (on `memory://` stores): one home
/// under cargo's `target/tmp` for all of them, so nothing reaches the user's folders.
pub(crate) fn memfs_no_home() -> Command {
    memfs(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-home"))
}

/// Runs `cmd` with `stdin` as its whole input (stdout and stderr captured) and waits for it.
/// The process may exit before reading (argument errors, a wrong key): a broken pipe is ignored.
pub(crate) fn run(mut cmd: impl BorrowMut<Command>, stdin: impl AsRef<[u8]>) -> Output {
    let mut child = cmd
        .borrow_mut()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memfs");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.as_ref().to_vec();
    let writer = std::thread::spawn(move || drop(input.write_all(&data)));
    let out = child.wait_with_output().expect("wait for memfs");
    writer.join().expect("the stdin writer");
    out
}

/// The lines `stdout` gives (a running process's), read on a thread, as they come.
pub(crate) fn lines_of(stdout: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// A store made by `memfs init` with a key file, in `dir`: its global arguments.
pub(crate) fn key_file_store(dir: &Path) -> Vec<String> {
    let args = vec![
        "--store".to_owned(),
        format!("file://{}", dir.join("store").display()),
        "--key-file".to_owned(),
        dir.join("key").display().to_string(),
    ];
    succeeds("init", &run(memfs(dir).args(&args).arg("init"), ""));
    args
}

/// How long one answer of a [`Session`] may take before the test gives up (instead of hanging).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `memfs exec` answering one line at a time: a long-running process, as an agent's
/// session keeps one open.
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<String>,
}

impl Session {
    /// Starts `cmd` (a `memfs … exec`) with its standard streams piped.
    pub(crate) fn start(cmd: &mut Command) -> Self {
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn memfs");
        let answers = lines_of(child.stdout.take().expect("stdout"));
        let stdin = child.stdin.take();
        Session { child, stdin, answers }
    }

    /// Writes `bytes` to its input, answer or not (part of a line).
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().expect("stdin open").write_all(bytes).expect("write to memfs");
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line and waits for its answer: proves each answer is flushed on its own.
    pub(crate) fn ask(&mut self, line: &str) -> String {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(format!("{line}\n").as_bytes()).expect("write a line");
        stdin.flush().expect("flush");
        match self.answers.recv_timeout(ANSWER_TIMEOUT) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {ANSWER_TIMEOUT:?} to {line}"),
            Err(RecvTimeoutError::Disconnected) => panic!("memfs closed stdout before answering {line}"),
        }
    }

    /// Closes stdin; the process must exit 0 without printing anything more.
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for memfs");
        assert!(status.success(), "memfs exec exited with {status}");
        let rest: Vec<String> = self.answers.try_iter().collect();
        assert!(rest.is_empty(), "unexpected extra output: {rest:?}");
    }
}

/// The stdout of `out`, a run (`what`) that must succeed; stderr may hold notes.
#[track_caller]
pub(crate) fn succeeds(what: &str, out: &Output) -> String {
    assert!(out.status.success(), "{what}: {}; stderr: {}", out.status, text(&out.stderr));
    text(&out.stdout)
}

/// The stdout of `out`, a run (`what`) that must succeed without a word on stderr.
#[track_caller]
pub(crate) fn ok(what: &str, out: &Output) -> String {
    let stdout = succeeds(what, out);
    assert_text(&format!("stderr of {what}"), &text(&out.stderr), "");
    stdout
}

/// The stderr of `out`, a run (`what`) that must exit with `code`, printing nothing on stdout.
#[track_caller]
pub(crate) fn fails(what: &str, code: i32, out: &Output) -> String {
    assert_eq!(out.status.code(), Some(code), "{what}: stderr {}", text(&out.stderr));
    assert_text(&format!("stdout of {what}"), &text(&out.stdout), "");
    text(&out.stderr)
}

/// A store made by `memfs init` (with a cheap key slot) in a temporary home, unlocked by
/// `MEMFS_PASSPHRASE`: the local folder [`Store::dir`], or `url` with the environment `env`.
pub(crate) struct Store {
    root: tempfile::TempDir,
    passphrase: &'static str,
    url: Option<String>,
    env: Vec<(&'static str, String)>,
}

impl Store {
    /// A local folder store.
    pub(crate) fn new(passphrase: &'static str) -> Self {
        Store::on(passphrase, None, Vec::new())
    }

    /// A store at `url` (`None`: the local folder), the binary run with `env`.
    pub(crate) fn on(passphrase: &'static str, url: Option<String>, env: Vec<(&'static str, String)>) -> Self {
        let store = Store { root: tempfile::tempdir().expect("temp dir"), passphrase, url, env };
        let out = store.run(&["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"]);
        assert!(out.status.success(), "init: {}", text(&out.stderr));
        store
    }

    /// The temporary home.
    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    /// The local store folder.
    pub(crate) fn dir(&self) -> PathBuf {
        self.root().join("store")
    }

    pub(crate) fn url(&self) -> String {
        self.url.clone().unwrap_or_else(|| format!("file://{}", self.dir().display()))
    }

    /// The binary on this store, with no input.
    pub(crate) fn memfs(&self) -> Command {
        let mut cmd = memfs(self.root());
        cmd.env("MEMFS_PASSPHRASE", self.passphrase)
            .env("MEMFS_STORE", self.url())
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null());
        cmd
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.memfs().args(args).output().expect("run memfs")
    }

    /// Runs a command that must succeed without a word on stderr; returns stdout.
    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        ok(&format!("memfs {args:?}"), &self.run(args))
    }

    /// Runs a command that must fail with status 1, printing nothing on stdout; returns stderr.
    #[track_caller]
    pub(crate) fn fails(&self, args: &[&str]) -> String {
        fails(&format!("memfs {args:?}"), 1, &self.run(args))
    }

    /// Runs tool inputs through `memfs exec` (with `args` before `exec`); returns the output.
    pub(crate) fn exec_with(&self, args: &[&str], lines: &[serde_json::Value]) -> Output {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        run(self.memfs().args(args).arg("exec"), input)
    }

    /// [`Store::exec_with`], where every answer must be a success; returns stdout.
    #[track_caller]
    pub(crate) fn exec_ok(&self, args: &[&str], lines: &[serde_json::Value]) -> String {
        let out = self.exec_with(args, lines);
        assert!(out.status.success(), "exec: {}", text(&out.stderr));
        for answer in text(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(answer).expect("JSON answer");
            assert_eq!(v["is_error"], false, "{answer}");
        }
        text(&out.stdout)
    }

    /// Runs tool inputs through `memfs exec` as `actor`; every answer must be a success.
    pub(crate) fn exec(&self, actor: &str, lines: &[serde_json::Value]) {
        self.exec_ok(&["--actor", actor], lines);
    }

    /// The commits, newest first, as `log --json` gives them.
    pub(crate) fn commits(&self) -> Vec<serde_json::Value> {
        self.ok(&["log", "--json"]).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
    }

    /// Runs `memfs ARGS` on this store on a real pseudo-terminal, typing `answer`: see
    /// [`on_terminal`].
    pub(crate) fn on_terminal(&self, args: &[&str], answer: &str) -> (Option<i32>, String) {
        on_terminal(&self.memfs(), args, answer)
    }

    /// What a command must leave unchanged: `memfs log --json`, and every file of the store
    /// folder with its bytes.
    pub(crate) fn state(&self) -> (String, BTreeMap<PathBuf, Vec<u8>>) {
        let log = self.ok(&["log", "--json"]);
        let mut files = BTreeMap::new();
        let mut dirs = vec![self.dir()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("read the store folder") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    let bytes = std::fs::read(&path).expect("read a store file");
                    files.insert(path.strip_prefix(self.dir()).expect("in the store").to_owned(), bytes);
                }
            }
        }
        (log, files)
    }

    /// Runs `memfs ARGS` (which must succeed, silent on stderr) and asserts it left
    /// [`Store::state`] as it was; returns stdout.
    #[track_caller]
    pub(crate) fn ok_unchanged(&self, args: &[&str]) -> String {
        let before = self.state();
        let out = self.ok(args);
        assert!(self.state() == before, "memfs {args:?} changed the store");
        out
    }

    /// Every live object of the log, by record path (`objects/ab/ab…`, as messages name it),
    /// read independently.
    pub(crate) fn objects(&self) -> BTreeMap<String, LogEntry> {
        log_entries(&self.dir()).into_iter().filter(|(path, _)| path.starts_with("objects/")).collect()
    }
}

/// Runs `cmd`'s environment with `memfs ARGS` on a real pseudo-terminal (util-linux's
/// `script`), typing `answer`; returns the exit code and what the terminal showed (stdout and
/// stderr, `\r\n` as `\n`; the answer is echoed where it was typed unless the program turned
/// echo off, and progress bars may show too).
pub(crate) fn on_terminal(cmd: &Command, args: &[&str], answer: &str) -> (Option<i32>, String) {
    let line = std::iter::once(env!("CARGO_BIN_EXE_memfs")).chain(args.iter().copied()).collect::<Vec<_>>();
    let mut script = Command::new("script");
    script.args(["-qec", &line.join(" "), "/dev/null"]);
    // The command's environment, on `script`, which passes it on.
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    let mut child = script.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("script");
    child.stdin.take().expect("stdin").write_all(answer.as_bytes()).expect("answer");
    let out = child.wait_with_output().expect("wait");
    (out.status.code(), text(&out.stdout).replace("\r\n", "\n"))
}
