//! A fleet: 16 `memfs exec` processes (each its own client) making 200 mutations each on
//! overlapping files of one store, on the local folder, S3 (moto) and Azure (Azurite).
//!
//! Each writer inserts lines `w{W}-{i}` at the top or the (last seen) end of four shared
//! files, creates, renames and deletes files of its own, and moves a shared counter line
//! (`turn <…>`) forward with `str_replace` from the value it last viewed; when another writer
//! moved it first, the answer "did not appear verbatim" is a legitimate non-mutation. Every
//! answer is read: exactly the answers that report success are acknowledged mutations. A store
//! error (`memfs: …`: gave up under contention, endpoint unreachable) fails the run, but only
//! at the end: memfs promises such a mutation is not in, and that is checked too.
//!
//! Then: (a) `memfs log --json` holds every acknowledged mutation exactly once, by the writer
//! that got the acknowledgement and in that writer's order, and nothing else; (b) replaying
//! the logged commands in order through a fresh `memory://` store gives the same answers and
//! the same tree, file by file; (c) `memfs check --read-data` passes; (d) no lost update: each
//! shared file holds exactly the lines whose inserts were acknowledged, the counter's
//! successful replacements form one chain, and each failed one names a value that was replaced.
//!
//! Once half the mutations are answered, a rotator rotates the keys and reseals the current
//! tree twice (`memfs key rotate --reseal`, issue 17), half a second apart, while the writers
//! go on: they follow each rotation with their key file's slot and lose nothing; the two
//! rotations are the only commits nobody else acknowledged.
//!
//! Throughput (issue 18, criterion 5): before the fleet, one writer alone runs the same command
//! mix on a store of its own on the same backend, three times (`alone`: the median rate is the
//! baseline); the summary line prints both rates
//! (mutations answered per second; the fleet's over its first half, before the rotations, which
//! cost it about a third of its rate on the local folder), their ratio against the target (the
//! fleet at least half of one writer), and the p99 wait for a mutation's answer in each (the
//! fleet's over the whole run). Printed, not asserted: a rate on a shared two-core machine is a
//! measurement, and the local folder's margin over the target is thin (docs/BENCHMARKS.md,
//! "Fleets").
//!
//! The S3 and Azure cases need `scripts/emulators.sh`; without its variables they are
//! skipped, unless `MEMFS_TEST_CLOUD=required`. Run with `--nocapture` to see the summary
//! lines per backend.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{assert_text, text};

const WRITERS: usize = 16;
/// Mutations per writer: `MEMFS_FLEET_MUTATIONS`, default 200, the figure, which
/// `scripts/test.sh` runs (on the two-core build machine, measured: local 20 s, Azure 260 s and
/// S3 420 s of writing with S3 and Azure side by side; the checks after add about a minute on
/// each cloud). A smaller figure makes a quick run while working on the engine.
fn mutations() -> usize {
    std::env::var("MEMFS_FLEET_MUTATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
}
const SHARED_FILES: usize = 4;
/// Key rotations (each with a reseal of the current tree) while the writers run.
const ROTATIONS: usize = 2;
/// Store errors in a row after which a writer stops (see [`writer`]).
const GIVE_UP_AFTER: usize = 3;
const COUNTER: &str = "/memories/counter.md";
const START: &str = "turn <start>";
/// A fixed day, so that no read ever finds a file last used on an earlier day (which would
/// add a `record-access` commit nobody asked for).
const TODAY: &str = "2026-11-21";

fn shared(k: usize) -> String {
    format!("/memories/shared/s{k}.md")
}

/// Where the fleet runs: a store URL, its options and environment, and a home with its key.
struct Backend {
    name: &'static str,
    url: String,
    options: Vec<String>,
    env: Vec<(&'static str, String)>,
    home: tempfile::TempDir,
}

impl Backend {
    fn key(&self) -> PathBuf {
        self.home.path().join("fleet.key")
    }

    fn local() -> Self {
        let home = tempfile::tempdir().expect("temp dir");
        let url = format!("file://{}", home.path().join("store").display());
        Backend { name: "local", url, options: Vec::new(), env: Vec::new(), home }
    }

    /// S3 on moto, or Azure on Azurite, under a fresh prefix; `None` (after saying so) when
    /// the emulators' variables are absent, a failure if `MEMFS_TEST_CLOUD=required`.
    fn cloud(name: &'static str) -> Option<Self> {
        let required = std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required");
        let var = |v: &str| std::env::var(v).ok();
        let mut id = [0u8; 8];
        getrandom::fill(&mut id).expect("random bytes");
        let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let found = match name {
            "s3" => match (var("MEMFS_TEST_S3_ENDPOINT"), var("MEMFS_TEST_S3_BUCKET")) {
                (Some(endpoint), Some(bucket)) => Some((
                    format!("s3://{bucket}/fleet/{id}"),
                    vec![
                        format!("aws_endpoint={endpoint}"),
                        "aws_allow_http=true".into(),
                        "aws_region=us-east-1".into(),
                        "aws_access_key_id=test".into(),
                        "aws_secret_access_key=test".into(),
                    ],
                    vec![("AWS_EC2_METADATA_DISABLED", "true".to_owned())],
                )),
                _ => None,
            },
            _ => match (var("AZURITE_BLOB_STORAGE_URL"), var("MEMFS_TEST_AZURE_CONTAINER")) {
                (Some(blob_url), Some(container)) => Some((
                    format!("az://{container}/fleet/{id}"),
                    vec!["azure_storage_use_emulator=true".into()],
                    vec![("AZURITE_BLOB_STORAGE_URL", blob_url)],
                )),
                _ => None,
            },
        };
        match found {
            Some((url, options, env)) => {
                Some(Backend { name, url, options, env, home: tempfile::tempdir().expect("temp dir") })
            }
            None if required => panic!("MEMFS_TEST_CLOUD=required but the {name} emulator's variables are not set"),
            None => {
                eprintln!(
                    "skipping the {name} fleet: the emulator's variables are not set (scripts/emulators.sh sets them)"
                );
                None
            }
        }
    }

    /// `memfs` on this store with its key file, in a clean environment.
    fn memfs(&self, args: &[&str]) -> Command {
        let mut cmd = clean_memfs(self.home.path());
        cmd.envs(self.env.iter().map(|(k, v)| (*k, v.as_str()))).arg("--store").arg(&self.url);
        for option in &self.options {
            cmd.arg("--store-option").arg(option);
        }
        cmd.arg("--key-file").arg(self.key()).args(args);
        cmd
    }

    /// Runs a one-shot command, which must succeed; returns its stdout.
    fn run(&self, args: &[&str]) -> String {
        let out = output(self.memfs(args));
        assert!(
            out.status.success(),
            "{}: memfs {args:?}: {}{}",
            self.name,
            text(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        text(&out.stdout)
    }
}

/// `memfs` in a clean environment, on the fixed day.
fn clean_memfs(home: &std::path::Path) -> Command {
    let mut cmd = crate::support::memfs(home);
    cmd.env("MEMFS_TODAY", TODAY);
    cmd
}

fn output(mut cmd: Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("run memfs")
}

/// One answer line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    content: String,
    is_error: bool,
}

/// A `memfs exec` process driven one line at a time: send an input, read its answer.
struct Session {
    what: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    commands: usize,
}

impl Session {
    fn start(what: String, mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: spawn memfs exec: {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Session { what, child, stdin, stdout, commands: 0 }
    }

    fn call(&mut self, input: &Value) -> Answer {
        let stdin = self.stdin.as_mut().expect("open stdin");
        writeln!(stdin, "{input}").and_then(|()| stdin.flush()).unwrap_or_else(|e| panic!("{}: write: {e}", self.what));
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap_or_else(|e| panic!("{}: read: {e}", self.what));
        assert!(n > 0, "{}: memfs exec ended before answering {input}", self.what);
        self.commands += 1;
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{}: bad answer {line:?}: {e}", self.what));
        let content = v["content"].as_str().unwrap_or_else(|| panic!("{}: no content in {line}", self.what));
        let is_error = v["is_error"].as_bool().unwrap_or_else(|| panic!("{}: no is_error in {line}", self.what));
        Answer { content: content.to_owned(), is_error }
    }

    /// A view that must succeed.
    fn view(&mut self, path: &str) -> String {
        self.try_view(path).unwrap_or_else(|e| panic!("{}: view {path}: {e:?}", self.what))
    }

    /// A view that succeeds or gets a store error (`memfs: …`), returned as `Err`.
    fn try_view(&mut self, path: &str) -> Result<String, String> {
        let answer = self.call(&json!({"command": "view", "path": path}));
        match answer.is_error {
            false => Ok(answer.content),
            true if answer.content.starts_with("memfs: ") => Err(answer.content),
            true => panic!("{}: view {path}: {:?}", self.what, answer.content),
        }
    }

    /// Closes stdin and waits: the process must exit 0 with no more output; returns stderr.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let mut rest = String::new();
        self.stdout.read_line(&mut rest).expect("read the end of stdout");
        assert_eq!(rest, "", "{}: output after the last answer", self.what);
        let out = self.child.wait_with_output().expect("wait for memfs exec");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{}: memfs exec failed: {stderr}", self.what);
        stderr
    }
}

/// The lines of a file view (`Here's the content of PATH with line numbers:` and numbered
/// lines), as the file holds them, the empty tail of a final newline included.
fn view_lines(path: &str, view: &str) -> Vec<String> {
    let header = format!("Here's the content of {path} with line numbers:\n");
    let body = view.strip_prefix(&header).unwrap_or_else(|| panic!("not a view of {path}: {view:?}"));
    body.split('\n')
        .enumerate()
        .map(|(i, row)| {
            row.strip_prefix(&format!("{:>6}\t", i + 1))
                .unwrap_or_else(|| panic!("view of {path}: row {} is not numbered: {row:?}", i + 1))
                .to_owned()
        })
        .collect()
}

/// `{"command": …}` as a canonical string (keys sorted at every level).
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let entries: BTreeMap<&String, Value> = map.iter().map(|(k, v)| (k, sorted(v))).collect();
                Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// What became of a mutating command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// The answer reported success.
    Acknowledged,
    /// "did not appear verbatim": a legitimate answer that changes nothing.
    NotVerbatim,
    /// A store error (`memfs: …`, such as giving up under contention or an unreachable
    /// endpoint). memfs promises such a mutation is not in; the run still fails.
    Failed,
}

/// One mutating command a writer sent, and what became of it.
#[derive(Debug, Clone)]
struct Sent {
    actor: String,
    input: Value,
    answer: Answer,
    fate: Fate,
}

/// What one writer did.
struct Report {
    sent: Vec<Sent>,
    /// Views answered with a store error; the mutation that needed each was not sent.
    failed_views: Vec<String>,
    /// Every command, views included, as `--stats` should count them.
    commands: usize,
    /// How long each mutation waited for its answer.
    waits: Vec<Duration>,
    stderr: String,
}

/// Writer `w`: [`mutations`] mutations, reading each answer. Panics on any answer that is
/// neither an acknowledgement, a legitimate "did not appear verbatim" nor a store error. A
/// mutation whose view got a store error, and the delete or rename of an own file whose create
/// failed, are not sent; after [`GIVE_UP_AFTER`] store errors in a row (a dead endpoint, where
/// each answer takes minutes) the writer sends nothing more.
fn writer(backend: &Backend, w: usize, answered: &AtomicUsize) -> Report {
    let actor = format!("writer-{w}");
    let dialect = if w.is_multiple_of(2) { "spec" } else { "python-sdk" };
    let mut session = Session::start(
        format!("{} {actor}", backend.name),
        backend.memfs(&["--actor", &actor, "exec", "--dialect", dialect, "--stats"]),
    );
    let mut sent: Vec<Sent> = Vec::with_capacity(mutations());
    let mut waits = Vec::with_capacity(mutations());
    let mut failed_views = Vec::new();
    let mut in_a_row = 0;
    let mut view = |session: &mut Session, path: &str| {
        session.try_view(path).map_err(|e| {
            eprintln!("{} {actor}: a store error for a view of {path}: {e}", backend.name);
            failed_views.push(e);
        })
    };
    for i in 0..mutations() {
        if in_a_row >= GIVE_UP_AFTER {
            eprintln!("{} {actor}: {GIVE_UP_AFTER} store errors in a row; stopping at mutation {i}", backend.name);
            break;
        }
        if i % 10 == 7 && sent.last().is_some_and(|s| s.fate != Fate::Acknowledged) {
            continue;
        }
        let tag = format!("w{w}-{i}");
        let file = shared((w + i) % SHARED_FILES);
        let own = |n: usize| format!("/memories/w{w}/n{n}.md");
        // (input, the acknowledgement, the legitimate non-mutating answer)
        let (input, ack, not_verbatim): (Value, String, Option<String>) = match i % 10 {
            0 | 2 | 4 => (
                json!({"command": "insert", "path": file, "insert_line": 0, "insert_text": tag}),
                format!("The file {file} has been edited."),
                None,
            ),
            1 | 3 | 5 => {
                // At the end as this writer last saw it: files only grow, so still in range.
                let Ok(seen) = view(&mut session, &file) else {
                    in_a_row += 1;
                    continue;
                };
                let mut lines = view_lines(&file, &seen);
                assert_eq!(lines.pop().as_deref(), Some(""), "{actor}: {file} ends with a newline");
                (
                    json!({"command": "insert", "path": file, "insert_line": lines.len(), "insert_text": tag}),
                    format!("The file {file} has been edited."),
                    None,
                )
            }
            6 => (
                json!({"command": "create", "path": own(i), "file_text": format!("{tag}\n")}),
                format!("File created successfully at: {}", own(i)),
                None,
            ),
            7 if (i / 10) % 2 == 1 => {
                (json!({"command": "delete", "path": own(i - 1)}), format!("Successfully deleted {}", own(i - 1)), None)
            }
            7 => {
                let to = format!("/memories/w{w}/kept/n{}.md", i - 1);
                (
                    json!({"command": "rename", "old_path": own(i - 1), "new_path": to}),
                    format!("Successfully renamed {} to {to}", own(i - 1)),
                    None,
                )
            }
            _ => {
                let Ok(seen) = view(&mut session, COUNTER) else {
                    in_a_row += 1;
                    continue;
                };
                let lines = view_lines(COUNTER, &seen);
                assert_eq!(lines.len(), 2, "{actor}: the counter is one line: {lines:?}");
                let seen = lines[0].clone();
                let new = format!("turn <{tag}>");
                (
                    json!({"command": "str_replace", "path": COUNTER, "old_str": seen, "new_str": new}),
                    format!(
                        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t{new}\n     2\t"
                    ),
                    Some(format!(
                        "No replacement was performed, old_str `{seen}` did not appear verbatim in {COUNTER}."
                    )),
                )
            }
        };
        let asked = Instant::now();
        let answer = session.call(&input);
        waits.push(asked.elapsed());
        let fate = if !answer.is_error && answer.content == ack {
            Fate::Acknowledged
        } else if answer.is_error && Some(&answer.content) == not_verbatim.as_ref() {
            Fate::NotVerbatim
        } else if answer.is_error && answer.content.starts_with("memfs: ") {
            eprintln!("{} {actor}: a store error for {input}: {}", backend.name, answer.content);
            Fate::Failed
        } else {
            panic!("{} {actor}: unexpected answer to {input}: {answer:?}", backend.name)
        };
        in_a_row = if fate == Fate::Failed { in_a_row + 1 } else { 0 };
        sent.push(Sent { actor: actor.clone(), input, answer, fate });
        answered.fetch_add(1, Ordering::Relaxed);
    }
    let commands = session.commands;
    let stderr = session.finish();
    Report { sent, failed_views, commands, waits, stderr }
}

/// Creates the shared files and the counter through a set-up session; returns what was
/// acknowledged.
fn set_up(backend: &Backend) -> Vec<Sent> {
    let out = output(backend.memfs(&["init"]));
    assert!(out.status.success(), "{}: init: {}", backend.name, String::from_utf8_lossy(&out.stderr));
    let mut setup = Session::start(format!("{} setup", backend.name), backend.memfs(&["--actor", "setup", "exec"]));
    let mut acknowledged: Vec<Sent> = Vec::new();
    let mut files: Vec<(String, String)> = (0..SHARED_FILES).map(|k| (shared(k), format!("# shared {k}\n"))).collect();
    files.push((COUNTER.to_owned(), format!("{START}\n")));
    for (path, file_text) in files {
        let input = json!({"command": "create", "path": path, "file_text": file_text});
        let answer = setup.call(&input);
        assert_eq!(answer, Answer { content: format!("File created successfully at: {path}"), is_error: false });
        acknowledged.push(Sent { actor: "setup".into(), input, answer, fate: Fate::Acknowledged });
    }
    setup.finish();
    acknowledged
}

/// Counts a writer that ended, when dropped.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// What the rotator said of each rotation, and the mutations answered and the time taken when
/// it began (the fleet's first half).
type Rotated = (Vec<String>, (usize, Duration));

/// The p99 of `waits`, in milliseconds.
fn p99_ms(waits: &mut [Duration]) -> f64 {
    waits.sort_unstable();
    let at = (waits.len() * 99).div_ceil(100).saturating_sub(1);
    waits.get(at).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// How many times one writer alone runs; its rate is the median.
const ALONE_RUNS: usize = 3;

/// One writer alone, the same command mix, on a store of its own on each of `solos` (the
/// backend's kind), one after another: the median rate (mutations answered per second), every
/// rate, and the p99 wait for an answer over all runs. One run is short (a fifth of a second on
/// the local folder), and its rate varied by half from run to run on the two-core build machine
/// (process start, page cache): the median of three is the baseline the fleet is measured
/// against.
fn alone(solos: &[Backend]) -> (f64, Vec<f64>, f64) {
    let mut rates = Vec::new();
    let mut waits = Vec::new();
    for backend in solos {
        set_up(backend);
        let started = Instant::now();
        let report = writer(backend, 0, &AtomicUsize::new(0));
        rates.push(report.sent.len() as f64 / started.elapsed().as_secs_f64());
        waits.extend(report.waits);
    }
    let mut sorted = rates.clone();
    sorted.sort_by(f64::total_cmp);
    (sorted[sorted.len() / 2], rates, p99_ms(&mut waits))
}

/// `memfs: N commands, M commits, K conflicts retried` → (N, M, K).
fn parse_stats(who: &str, stderr: &str) -> (u64, u64, u64) {
    let line = stderr.lines().last().unwrap_or_default();
    let parse = || -> Option<(u64, u64, u64)> {
        let rest = line.strip_prefix("memfs: ")?.strip_suffix(" conflicts retried")?;
        let (commands, rest) = rest.split_once(" commands, ")?;
        let (commits, conflicts) = rest.split_once(" commits, ")?;
        Some((commands.parse().ok()?, commits.parse().ok()?, conflicts.parse().ok()?))
    };
    parse().unwrap_or_else(|| panic!("{who}: no --stats line in stderr: {stderr:?}"))
}

/// The whole visible tree through views, as `PATH/` for directories and `PATH = VIEW` for
/// files, sorted; walks listings (two levels deep each) from `/memories`.
fn snapshot(session: &mut Session) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec!["/memories".to_owned()];
    while let Some(dir) = dirs.pop() {
        let listing = session.view(&dir);
        let mut rows = listing.split('\n');
        let header = format!("Here're the files and directories up to 2 levels deep in {dir}, excluding hidden items:");
        assert_text("listing header", rows.next().unwrap_or_default(), &header);
        assert_text("listing root row", rows.next().unwrap_or_default(), &format!("4K\t{dir}"));
        for row in rows {
            let (_, path) = row.split_once('\t').unwrap_or_else(|| panic!("bad listing row {row:?}"));
            let rel = path.strip_prefix(&format!("{dir}/")).unwrap_or_else(|| panic!("{row:?} is not under {dir}"));
            let name = rel.trim_end_matches('/');
            if name.contains('/') {
                continue; // listed again when its parent is walked
            }
            let full = format!("{dir}/{name}");
            if rel.ends_with('/') {
                out.insert(format!("{full}/"), String::new());
                dirs.push(full);
            } else {
                let view = session.view(&full);
                out.insert(full, view);
            }
        }
    }
    out
}

fn fleet(backend: &Backend, solos: &[Backend]) {
    let (solo_rate, solo_rates, solo_p99) = alone(solos);
    let started = Instant::now();
    // Set-up: the shared files and the counter, acknowledged like any other mutation.
    let mut acknowledged = set_up(backend);

    // The fleet.
    let fleet_started = Instant::now();
    let (answered, finished) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let half = WRITERS * mutations() / 2;
    let (reports, (rotated, first_half)): (Vec<Report>, Rotated) = std::thread::scope(|scope| {
        let (answered, finished) = (&answered, &finished);
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                scope.spawn(move || {
                    // Counted when the writer ends, panicking or not, so the rotator never
                    // waits for a half that will not come.
                    let _done = Finished(finished);
                    writer(backend, w, answered)
                })
            })
            .collect();
        // The rotations come once half the mutations are answered: the first half measures
        // the fleet's rate (against one writer alone, who rotates nothing), the second
        // shows that writers follow rotations and lose nothing.
        let rotator = scope.spawn(move || {
            while answered.load(Ordering::Relaxed) < half && finished.load(Ordering::Relaxed) < WRITERS {
                std::thread::sleep(Duration::from_millis(5));
            }
            let first_half = (answered.load(Ordering::Relaxed), fleet_started.elapsed());
            let rotated = (0..ROTATIONS)
                .map(|k| {
                    if k > 0 {
                        std::thread::sleep(Duration::from_millis(500));
                    }
                    backend.run(&["--actor", "rotator", "key", "rotate", "--reseal"])
                })
                .collect::<Vec<_>>();
            (rotated, first_half)
        });
        let reports = handles.into_iter().map(|h| h.join().expect("a writer failed (see its panic above)")).collect();
        (reports, rotator.join().expect("the rotator failed"))
    });
    for (k, said) in rotated.iter().enumerate() {
        let first = said.lines().next().unwrap_or_default();
        assert_eq!(first, format!("rotated the keys: key epoch {}, wrapped to key slot 1", k + 1), "{}", backend.name);
        assert!(said.lines().nth(1).is_some_and(|l| l.starts_with("resealed ")), "{}: {said}", backend.name);
    }
    let fleet_time = fleet_started.elapsed();

    let mut conflicts = 0;
    let mut not_verbatim: Vec<Sent> = Vec::new();
    let mut failed: Vec<Sent> = Vec::new();
    let mut failed_views = 0;
    for (w, report) in reports.iter().enumerate() {
        let acks = report.sent.iter().filter(|s| s.fate == Fate::Acknowledged).count() as u64;
        let (commands, commits, k) = parse_stats(&format!("{} writer-{w}", backend.name), &report.stderr);
        assert_eq!(
            (commands, commits),
            (report.commands as u64, acks),
            "{} writer-{w}: --stats commands and commits (one commit per acknowledged mutation, nothing else): {:?}",
            backend.name,
            report.stderr
        );
        conflicts += k;
        failed_views += report.failed_views.len();
        for s in &report.sent {
            match s.fate {
                Fate::Acknowledged => acknowledged.push(s.clone()),
                Fate::NotVerbatim => not_verbatim.push(s.clone()),
                Fate::Failed => failed.push(s.clone()),
            }
        }
    }
    let total_acks = acknowledged.len() - (SHARED_FILES + 1);
    // The first half's rate, before the rotations (see above).
    let (in_first_half, first_half_time) = first_half;
    let fleet_rate = in_first_half as f64 / first_half_time.as_secs_f64();
    let mut waits: Vec<Duration> = reports.iter().flat_map(|r| r.waits.iter().copied()).collect();
    let ratio = fleet_rate / solo_rate;
    eprintln!(
        "fleet {} throughput: {WRITERS} writers together {fleet_rate:.1} mutations/s, one writer alone {solo_rate:.1}/s (the median of {}): {:.0}% of one writer (target >= 50%: {}); p99 wait for an answer {:.1} ms ({solo_p99:.1} ms alone)",
        backend.name,
        solo_rates.iter().map(|r| format!("{r:.1}")).collect::<Vec<_>>().join(", "),
        ratio * 100.0,
        if ratio >= 0.5 { "met" } else { "NOT MET" },
        p99_ms(&mut waits),
    );

    // The real store's tree, read through views before the history is read: a read that
    // committed something would show up in the log below as a commit nobody acknowledged.
    let mut reader = Session::start(
        format!("{} reader", backend.name),
        backend.memfs(&["--actor", "reader", "exec", "--dialect", "python-sdk"]),
    );
    let real = snapshot(&mut reader);
    reader.finish();

    // (a) The history, oldest first: one chain, exactly the acknowledged mutations.
    let log = backend.run(&["log", "--json"]);
    let mut all: Vec<Value> =
        log.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("log line {l:?}: {e}"))).collect();
    all.reverse();
    for (k, c) in all.iter().enumerate() {
        assert_eq!(c["generation"], json!(k + 1), "{}: generations count up from 1", backend.name);
        let parent = if k == 0 { Value::Null } else { all[k - 1]["id"].clone() };
        assert_eq!(c["parent"], parent, "{}: @{} follows @{k}", backend.name, k + 1);
    }
    // The rotations: one commit each, by the rotator, and nothing else of theirs.
    let total_commits = all.len();
    let (rotations, commits): (Vec<Value>, Vec<Value>) =
        all.into_iter().partition(|c| c["command"]["command"] == "keys");
    assert_eq!(rotations.len(), ROTATIONS, "{}: one commit per rotation", backend.name);
    for r in &rotations {
        assert_eq!((&r["actor"], &r["command"]["change"]), (&json!("rotator"), &json!("rotate")), "{}", backend.name);
    }
    let by_key: HashMap<String, usize> =
        acknowledged.iter().enumerate().map(|(n, s)| (canonical(&s.input), n)).collect();
    assert_eq!(by_key.len(), acknowledged.len(), "every mutation a writer sent is unique");
    let mut found = vec![0usize; acknowledged.len()];
    let mut unacknowledged = Vec::new();
    let mut order: HashMap<&str, Vec<usize>> = HashMap::new();
    for c in &commits {
        match by_key.get(&canonical(&c["command"])) {
            Some(&n) => {
                found[n] += 1;
                assert_eq!(c["actor"], json!(acknowledged[n].actor), "{}: who made {}", backend.name, c["command"]);
                order.entry(acknowledged[n].actor.as_str()).or_default().push(n);
            }
            None => unacknowledged.push(c["command"].clone()),
        }
    }
    let missing: Vec<&Value> =
        acknowledged.iter().zip(&found).filter(|(_, f)| **f == 0).map(|(s, _)| &s.input).collect();
    let twice: Vec<&Value> = acknowledged.iter().zip(&found).filter(|(_, f)| **f > 1).map(|(s, _)| &s.input).collect();
    let keys = |sent: &[Sent]| -> HashSet<String> { sent.iter().map(|s| canonical(&s.input)).collect() };
    let (non_keys, failed_keys) = (keys(&not_verbatim), keys(&failed));
    let logged_non_mutations = commits.iter().filter(|c| non_keys.contains(&canonical(&c["command"]))).count();
    let logged_failures: Vec<&Value> =
        commits.iter().filter(|c| failed_keys.contains(&canonical(&c["command"]))).map(|c| &c["command"]).collect();

    // (d) No lost update in the shared files: each holds its header and exactly the lines whose
    // inserts were acknowledged (read with `memfs show`, byte for byte).
    let mut lost_lines = 0;
    let mut shared_reports = Vec::new();
    for k in 0..SHARED_FILES {
        let path = shared(k);
        let content = backend.run(&["show", &format!("HEAD:{path}")]);
        let mut actual: Vec<&str> = content.lines().collect();
        actual.sort_unstable();
        let mut expected: Vec<String> = acknowledged
            .iter()
            .filter(|s| s.input["command"] == "insert" && s.input["path"] == json!(path))
            .map(|s| s.input["insert_text"].as_str().expect("text").to_owned())
            .chain([format!("# shared {k}")])
            .collect();
        expected.sort_unstable();
        lost_lines += expected.iter().filter(|e| actual.binary_search(&e.as_str()).is_err()).count();
        shared_reports.push((
            path,
            content.ends_with('\n'),
            actual.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            expected,
        ));
    }
    let lost = missing.len() + lost_lines;

    let sent = total_acks + not_verbatim.len() + failed.len();
    eprintln!(
        "fleet {}: {WRITERS} writers x {} mutations ({sent} sent): {total_acks} acknowledged, {} non-mutating (str_replace on a moved counter), {} store errors (and {failed_views} on views, their mutations not sent), {conflicts} conflicts retried, {lost} lost updates, {ROTATIONS} key rotations with reseals, fleet {:.1}s (whole test {:.1}s)",
        backend.name,
        mutations(),
        not_verbatim.len(),
        failed.len(),
        fleet_time.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        logged_failures.is_empty(),
        "{}: answered with a store error, yet in the history: {logged_failures:?}",
        backend.name
    );
    assert!(missing.is_empty(), "{}: acknowledged but not in the history: {missing:?}", backend.name);
    assert!(twice.is_empty(), "{}: in the history more than once: {twice:?}", backend.name);
    assert!(unacknowledged.is_empty(), "{}: in the history, never acknowledged: {unacknowledged:?}", backend.name);
    assert_eq!(logged_non_mutations, 0, "{}: a non-mutating answer was committed", backend.name);
    assert_eq!(commits.len(), acknowledged.len(), "{}: one commit per acknowledged mutation", backend.name);
    for (actor, ns) in &order {
        assert!(ns.windows(2).all(|p| p[0] < p[1]), "{}: {actor}'s commits are out of its order", backend.name);
    }
    for (path, newline, actual, expected) in &shared_reports {
        assert!(newline, "{}: {path} ends with a newline", backend.name);
        assert_eq!(actual, expected, "{}: {path} holds exactly its header and the acknowledged inserts", backend.name);
    }

    // (d) The counter: the acknowledged replacements form one chain from the start value
    // (none replaced a value another had already replaced), and every "did not appear
    // verbatim" named a value that an acknowledged replacement had moved on from.
    let mut current = START.to_owned();
    let mut replaced = HashSet::new();
    for c in commits.iter().filter(|c| c["command"]["command"] == "str_replace") {
        assert_eq!(c["command"]["old_str"], json!(current), "{}: a lost update on the counter", backend.name);
        replaced.insert(current.clone());
        current = c["command"]["new_str"].as_str().expect("new_str").to_owned();
    }
    for s in &not_verbatim {
        let old = s.input["old_str"].as_str().expect("old_str");
        assert!(replaced.contains(old), "{}: {} was refused but {old:?} was never replaced", backend.name, s.input);
    }
    assert_text("the counter", &backend.run(&["show", &format!("HEAD:{COUNTER}")]), &format!("{current}\n"));

    // Each writer's own files: exactly those the acknowledged creates, renames and deletes
    // leave (with no store error: every even round's file in kept/, no other).
    let mut expected_own: BTreeSet<String> = BTreeSet::new();
    for s in acknowledged.iter().filter(|s| s.actor.starts_with("writer-")) {
        let path = |key: &str| s.input[key].as_str().expect("a path").to_owned();
        match s.input["command"].as_str() {
            Some("create") => drop(expected_own.insert(path("path"))),
            Some("delete") => assert!(expected_own.remove(&path("path")), "{}: {}", backend.name, s.input),
            Some("rename") => {
                assert!(expected_own.remove(&path("old_path")), "{}: {}", backend.name, s.input);
                expected_own.insert(path("new_path"));
            }
            _ => {}
        }
    }
    if failed.is_empty() {
        let formula: BTreeSet<String> = (0..WRITERS)
            .flat_map(|w| (0..mutations()).filter(|i| i % 20 == 6).map(move |i| format!("/memories/w{w}/kept/n{i}.md")))
            .collect();
        assert_eq!(expected_own, formula, "{}: the writers' own files, all acknowledged", backend.name);
    }
    let own: BTreeSet<String> =
        real.keys().filter(|p| p.starts_with("/memories/w") && p.ends_with(".md")).cloned().collect();
    assert_eq!(own, expected_own, "{}: the writers' own files", backend.name);

    // (b) Replay: the logged commands, oldest first, through a fresh memory:// store give the
    // answers the writers got and the same tree, every file compared through its view.
    let mut replay = Session::start(format!("{} replay", backend.name), {
        let mut cmd = clean_memfs(backend.home.path());
        cmd.args(["--store", "memory://", "exec", "--dialect", "python-sdk"]);
        cmd
    });
    for c in &commits {
        let n = by_key[&canonical(&c["command"])];
        let answer = replay.call(&c["command"]);
        assert_eq!(
            answer, acknowledged[n].answer,
            "{}: replaying @{}: {}",
            backend.name, c["generation"], c["command"]
        );
    }
    let replayed = snapshot(&mut replay);
    replay.finish();
    assert_eq!(real.keys().collect::<Vec<_>>(), replayed.keys().collect::<Vec<_>>(), "{}: the paths", backend.name);
    for (path, view) in &real {
        assert_text(&format!("{} {path}, store against replay", backend.name), view, &replayed[path]);
    }

    // (c) The store checks out, every content read and verified.
    let report = backend.run(&["check", "--read-data"]);
    let n = total_commits;
    assert!(
        report.starts_with(&format!("checked {n} commits (@1 to @{n}), ")) && report.ends_with("\nno problems found\n"),
        "{}: check: {report}",
        backend.name
    );

    // Liveness: every mutation was answered, none given up under contention or lost to the
    // endpoint (checked last, so that the history is verified even when one was).
    let skipped = WRITERS * mutations() - sent;
    let errors: Vec<String> = failed.iter().map(|s| format!("{} {}: {}", s.actor, s.input, s.answer.content)).collect();
    assert!(
        errors.is_empty() && skipped == 0,
        "{}: {} mutations answered with a store error, {skipped} not sent ({failed_views} views failed): {errors:#?}",
        backend.name,
        errors.len()
    );
}

#[test]
fn fleet_local() {
    fleet(&Backend::local(), &[(); ALONE_RUNS].map(|()| Backend::local()));
}

#[test]
fn fleet_s3() {
    if let Some(backend) = Backend::cloud("s3") {
        fleet(&backend, &[(); ALONE_RUNS].map(|()| Backend::cloud("s3").expect("as the fleet's")));
    }
}

#[test]
fn fleet_azure() {
    if let Some(backend) = Backend::cloud("azure") {
        fleet(&backend, &[(); ALONE_RUNS].map(|()| Backend::cloud("azure").expect("as the fleet's")));
    }
}
