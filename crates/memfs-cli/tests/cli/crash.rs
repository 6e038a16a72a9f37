//! Criterion 7, with a real process: `memfs exec` on a local folder store, killed with SIGKILL
//! mid-stream, twenty times, at different points: idle after some acknowledged commands,
//! right after sending one more line, a moment after it, and with several lines in flight.
//!
//! After each kill a new `memfs exec` opens the store; every acknowledged command's effect is
//! there; of the commands in flight, a prefix (possibly empty) took effect, each whole; a full
//! listing and a view of every file work (and `memfs check` passes, where it exists). Then the
//! next round goes on from that state.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::{lines_of, log_entries, log_segments};

const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
const PASSPHRASE: &str = "correct horse battery staple";
const ROUNDS: u64 = 20;

/// A temporary home: the store folder and every platform directory memfs may use.
struct Home {
    root: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let home = Home { root: tempfile::tempdir().expect("temp dir") };
        let init = home
            .memfs()
            .args(["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"])
            .output()
            .expect("run memfs init");
        assert!(init.status.success(), "memfs init: {}", String::from_utf8_lossy(&init.stderr));
        home
    }

    fn store(&self) -> PathBuf {
        self.root.path().join("store")
    }

    /// The binary with this home's environment and store.
    fn memfs(&self) -> Command {
        let root = self.root.path();
        let mut cmd = crate::support::memfs(root);
        cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).arg("--store").arg(format!("file://{}", self.store().display()));
        cmd
    }
}

/// A running `memfs exec`.
struct Session {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Session {
    fn start(home: &Home) -> Self {
        let mut child = home
            .memfs()
            .arg("exec")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn memfs exec");
        let answers = lines_of(child.stdout.take().expect("stdout"));
        let stdin = child.stdin.take().expect("stdin");
        Session { child, stdin, answers }
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\n").as_bytes()).expect("write a line");
        self.stdin.flush().expect("flush");
    }

    fn ask(&mut self, line: &str) -> Answer {
        self.send(line);
        match self.answers.recv_timeout(ANSWER_TIMEOUT) {
            Ok(answer) => Answer::parse(&answer),
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {ANSWER_TIMEOUT:?} to {line}"),
            Err(RecvTimeoutError::Disconnected) => panic!("memfs closed stdout before answering {line}"),
        }
    }

    /// SIGKILL (`Child::kill` on Unix), then every answer it had written.
    fn kill(mut self) -> Vec<Answer> {
        self.child.kill().expect("kill memfs");
        self.child.wait().expect("reap memfs");
        // The reader thread ends at end of file; everything written before the kill arrives.
        let mut answers = Vec::new();
        while let Ok(line) = self.answers.recv_timeout(ANSWER_TIMEOUT) {
            answers.push(Answer::parse(&line));
        }
        answers
    }
}

/// One `{"content": …, "is_error": …}` answer line.
#[derive(Debug)]
struct Answer {
    content: String,
    is_error: bool,
}

impl Answer {
    /// Parses the exact shape `memfs exec` writes for a bare input.
    fn parse(line: &str) -> Answer {
        let rest = line.strip_prefix(r#"{"content":""#).unwrap_or_else(|| panic!("unexpected answer {line}"));
        let (content, rest) = json_string(rest);
        let is_error = match rest {
            r#","is_error":false}"# => false,
            r#","is_error":true}"# => true,
            _ => panic!("unexpected answer {line}"),
        };
        Answer { content, is_error }
    }
}

/// Decodes a JSON string body up to its closing quote; returns it and what follows.
fn json_string(s: &str) -> (String, &str) {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (out, &s[i + 1..]),
            '\\' => match chars.next().expect("escape").1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                'u' => {
                    let hex: String = (0..4).map(|_| chars.next().expect("hex").1).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).expect("BMP escape"));
                }
                e => panic!("unknown escape \\{e}"),
            },
            c => out.push(c),
        }
    }
    panic!("unterminated string in {s}")
}

/// A small deterministic generator (xorshift64*), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// The files of the store as the test believes them to be: path → content.
type Files = BTreeMap<String, String>;

/// A mutation and its effect on the model.
struct Op {
    line: String,
    apply: Box<dyn Fn(&mut Files)>,
}

/// The next mutation: mostly creates, some edits, deletes and renames of existing files.
fn next_op(rng: &mut Rng, files: &Files, round: u64, n: u64) -> Op {
    let pick = |rng: &mut Rng| files.keys().nth(rng.below(files.len() as u64) as usize).cloned().unwrap();
    let choice = if files.is_empty() { 0 } else { rng.below(10) };
    match choice {
        7 => {
            let path = pick(rng);
            let old = files[&path].clone();
            let new = format!("{old}+");
            let line = format!(r#"{{"command":"str_replace","path":"{path}","old_str":"{old}","new_str":"{new}"}}"#);
            Op { line, apply: Box::new(move |f| drop(f.insert(path.clone(), new.clone()))) }
        }
        8 => {
            let path = pick(rng);
            let line = format!(r#"{{"command":"delete","path":"{path}"}}"#);
            Op { line, apply: Box::new(move |f| drop(f.remove(&path))) }
        }
        9 => {
            let from = pick(rng);
            let to = format!("/memories/r{round}/moved-{n}.md");
            let line = format!(r#"{{"command":"rename","old_path":"{from}","new_path":"{to}"}}"#);
            Op {
                line,
                apply: Box::new(move |f| {
                    let content = f.remove(&from).unwrap();
                    f.insert(to.clone(), content);
                }),
            }
        }
        _ => {
            let path = format!("/memories/r{round}/f{n}.md");
            let content = format!("round {round} note {n}");
            let line = format!(r#"{{"command":"create","path":"{path}","file_text":"{content}"}}"#);
            Op { line, apply: Box::new(move |f| drop(f.insert(path.clone(), content.clone()))) }
        }
    }
}

/// Reads the whole store through a new `memfs exec`: the listing (every file is two levels
/// deep) and a view of every file.
fn read_store(home: &Home) -> Files {
    let mut s = Session::start(home);
    let listing = s.ask(r#"{"command":"view","path":"/memories"}"#);
    assert!(!listing.is_error, "listing: {}", listing.content);
    let paths: Vec<String> = listing
        .content
        .lines()
        .skip(2) // the header and /memories itself
        .map(|row| row.split_once('\t').expect("size<TAB>path").1.to_owned())
        .filter(|p| !p.ends_with('/'))
        .collect();
    let mut files = Files::new();
    for path in paths {
        let view = s.ask(&format!(r#"{{"command":"view","path":"{path}"}}"#));
        assert!(!view.is_error, "view {path}: {}", view.content);
        let body = view
            .content
            .strip_prefix(&format!("Here's the content of {path} with line numbers:\n"))
            .unwrap_or_else(|| panic!("view {path}: {}", view.content));
        let content = body.strip_prefix("     1\t").unwrap_or_else(|| panic!("view {path}: {body}"));
        files.insert(path, content.to_owned());
    }
    drop(s.stdin);
    assert!(s.child.wait().expect("wait").success());
    files
}

/// `memfs check --read-data`, if this build has it: `None` if the subcommand does not exist.
fn check(home: &Home) -> Option<Output> {
    let out = home.memfs().args(["check", "--read-data"]).output().expect("run memfs check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("unrecognized subcommand") {
        return None;
    }
    Some(out)
}

/// The log a local folder store is: `(segments, bytes, live records, .tmp files)`. A killed
/// writer leaves at most a torn record at the end of the last segment (which the next writer
/// truncates); a `log/<n>.tmp` is a segment whose creation was interrupted.
fn log_figures(dir: &Path) -> (usize, u64, usize, usize) {
    let segments = log_segments(dir);
    let bytes = segments.iter().map(|f| std::fs::metadata(f).expect("stat a segment").len()).sum();
    let tmp = std::fs::read_dir(dir.join("log"))
        .expect("read the log folder")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    (segments.len(), bytes, log_entries(dir).len(), tmp)
}

#[test]
fn sigkill_mid_stream_loses_no_acknowledged_command() {
    let home = Home::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut files = Files::new();
    let (mut acked_total, mut in_flight_total, mut applied_total, mut checks) = (0, 0, 0, 0);
    // In-flight commands that took effect although their answer never came out.
    let mut unanswered_applied = 0;
    let mut in_flight_kills = 0;
    // A running estimate of one command's round trip.
    let mut latency = Duration::from_millis(2);

    for round in 0..ROUNDS {
        let mut s = Session::start(&home);
        let mut n = 0;
        for _ in 0..rng.below(7) {
            let op = next_op(&mut rng, &files, round, n);
            n += 1;
            let started = Instant::now();
            let answer = s.ask(&op.line);
            latency = (latency * 3 + started.elapsed()) / 4;
            assert!(!answer.is_error, "round {round}: {} failed: {}", op.line, answer.content);
            (op.apply)(&mut files);
            acked_total += 1;
        }

        // The kill: idle, or with one or three lines in flight, at once or a moment later.
        let in_flight = match round % 4 {
            0 => 0,
            3 => 3,
            _ => 1,
        };
        let mut pending = Vec::new();
        let mut model = files.clone();
        for _ in 0..in_flight {
            let op = next_op(&mut rng, &model, round, n);
            n += 1;
            (op.apply)(&mut model);
            s.send(&op.line);
            pending.push(op);
        }
        // A pause of up to twice a command's latency lets some finish, and others not.
        if round % 4 >= 2 {
            let micros = latency.as_micros() as u64;
            thread::sleep(Duration::from_micros(rng.below(2 * micros + 1)));
        }
        let late_answers = s.kill();
        in_flight_kills += u64::from(in_flight > 0);
        in_flight_total += pending.len();

        // Answers that made it out before the kill acknowledge their commands.
        assert!(late_answers.len() <= pending.len());
        for (answer, op) in late_answers.iter().zip(&pending) {
            assert!(!answer.is_error, "round {round}: {} failed: {}", op.line, answer.content);
        }
        let found = read_store(&home);
        let mut candidate = files.clone();
        let mut matched = None;
        for (j, op) in std::iter::once(None).chain(pending.iter().map(Some)).enumerate() {
            if let Some(op) = op {
                (op.apply)(&mut candidate);
            }
            if j >= late_answers.len() && candidate == found {
                matched = Some(j);
            }
        }
        let Some(applied) = matched else {
            panic!(
                "round {round}: the store holds neither the acknowledged state nor it plus a prefix of the \
                 commands in flight\nacknowledged: {files:#?}\nin flight: {:#?}\nfound: {found:#?}",
                pending.iter().map(|o| &o.line).collect::<Vec<_>>()
            );
        };
        applied_total += applied;
        unanswered_applied += applied - late_answers.len();
        acked_total += late_answers.len();
        files = found;

        if let Some(out) = check(&home) {
            assert!(out.status.success(), "round {round}: memfs check: {}", String::from_utf8_lossy(&out.stderr));
            checks += 1;
        }
    }
    let (segments, log_bytes, records, tmp) = log_figures(&home.store());
    eprintln!(
        "crash: {ROUNDS} SIGKILL runs ({in_flight_kills} with commands in flight), {acked_total} acknowledged commands \
         all present, {in_flight_total} in flight of which {applied_total} took effect ({unanswered_applied} \
         unanswered), the rest absent; {} files at the end; memfs check run {checks} times; the log: {segments} \
         segment(s), {log_bytes} bytes, {records} live records, {tmp} .tmp files",
        files.len(),
    );
    assert_eq!(tmp, 0, "no segment creation was interrupted: the kills hit appends only");
    assert!(acked_total > 0 && in_flight_kills > 0);
}
