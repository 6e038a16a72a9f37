//! Cost against store size (issue 18, criterion 3): `cargo bench -p memfs-cli --bench scale`.
//!
//! Grows one local encrypted store, through the release `memfs` binary, to 200, 2,000, 20,000
//! and 100,000 files of about 250 bytes (in 100 folders, each size reached by one `memfs exec`
//! of creates), and at each size measures, with fresh processes as a user's commands run:
//!
//! - *first answer*: a new `memfs exec` process, from its start until the answer to one file
//!   view arrives (the median of 5);
//! - *open + 100 creates*: a new `memfs exec` process running 100 creates, start to exit, on
//!   a fresh copy of the store (and of the client's state) as it was at that size: the median
//!   of 5 runs. The runs go round the sizes (one run of each size, then the next round), so
//!   that a shared machine's speed, which drifts over minutes, weighs on every size alike;
//! - *bytes per create*: how much the store folder grew since the previous size's measurement
//!   (the creates that grew the store, and one run of 100 on the store itself), divided by the
//!   creates: the log is append-only, so that is what was written, index files included,
//!   amortized over the segments sealed in between (a window of 100 creates seals one 4 MiB
//!   segment or none); the zeros the last segment is filled with ahead of its records are not
//!   counted (each is written once and later overwritten by a record, which is);
//! - *peak memory* of that run on the store itself (`VmHWM`, read from `/proc` every 2 ms
//!   while it runs);
//! - the *CPU time* (user and system) of each timed run, the median of the five: less noisy
//!   than its wall time on a shared VM, printed beside it with its own ratio.
//!
//! It then checks the targets against the same run: open + 100 creates (wall time) at
//! 20,000 files within 1.5x of 200 files; the first answer at 100,000 files within 50 ms; at
//! most 4 KB written per create at every size. `MEMFS_SCALE_SIZES=200,2000` measures fewer
//! sizes. Linux only (`/proc`).

#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FOLDERS: usize = 100;
/// Timed runs of 100 creates at each size; the median is the figure.
const RUNS: usize = 5;

struct Bench {
    bin: PathBuf,
    home: PathBuf,
    store: PathBuf,
    key: PathBuf,
    /// Files created so far.
    files: usize,
    /// The folder's bytes and files at the end of the last measurement.
    last: (u64, usize),
}

/// One size's figures.
struct Row {
    files: usize,
    first_answer: Duration,
    open_and_creates: Duration,
    /// The fastest and slowest of the runs.
    spread: (Duration, Duration),
    /// The median CPU time (user and system) of the runs.
    cpu: Duration,
    bytes_per_create: u64,
    peak_memory: u64,
    /// Every timed run's wall and CPU time.
    runs: Vec<(Duration, Duration)>,
}

impl Bench {
    fn memfs(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_STATE_HOME", self.home.join("state"))
            .arg("--store")
            .arg(format!("file://{}", self.store.display()))
            .arg("--key-file")
            .arg(&self.key);
        cmd
    }

    fn create_line(&mut self) -> String {
        let n = self.files;
        self.files += 1;
        let text = format!("{} {n}\n", "note ".repeat(49));
        serde_json::json!({"command": "create", "path": format!("/memories/d{}/f{n}.md", n % FOLDERS), "file_text": text})
            .to_string()
    }

    /// Runs `memfs exec` on `input`; returns its wall time, peak memory and CPU time. Every
    /// answer must be a success.
    fn exec(&self, input: &str) -> (Duration, u64, Duration) {
        let cpu_before = children_cpu();
        let start = Instant::now();
        let mut child = self
            .memfs()
            .arg("exec")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("memfs exec starts");
        let status_path = format!("/proc/{}/status", child.id());
        let mut stdin = child.stdin.take().expect("stdin");
        let feeder = {
            let input = input.to_owned();
            std::thread::spawn(move || stdin.write_all(input.as_bytes()))
        };
        let stdout = child.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout).lines().map(|l| l.expect("an answer")).collect::<Vec<_>>()
        });
        let mut peak = 0;
        loop {
            if let Some(hwm) = vm_hwm(&status_path) {
                peak = peak.max(hwm);
            }
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let elapsed = start.elapsed();
        // Of the children waited for so far, only this one ended in between.
        let cpu = children_cpu() - cpu_before;
        feeder.join().expect("feeder").expect("stdin written");
        for answer in reader.join().expect("reader") {
            assert!(!answer.contains("\"is_error\":true"), "{answer}");
        }
        (elapsed, peak, cpu)
    }

    /// The time until a new process answers one file view.
    fn first_answer(&self) -> Duration {
        let view = serde_json::json!({"command": "view", "path": "/memories/d0/f0.md"}).to_string();
        let start = Instant::now();
        let mut child =
            self.memfs().arg("exec").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("memfs exec starts");
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "{view}").expect("the view is sent");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("an answer");
        let elapsed = start.elapsed();
        assert!(line.contains("note"), "{line}");
        drop(stdin);
        assert!(child.wait().expect("wait").success());
        elapsed
    }

    fn grow_to(&mut self, files: usize) {
        let lines: Vec<String> = (self.files..files).map(|_| self.create_line()).collect();
        if !lines.is_empty() {
            self.exec(&(lines.join("\n") + "\n"));
        }
    }

    /// The first figures at this size: first answer, and one run of 100 creates on the store
    /// itself (what it writes is the bytes per create; its peak memory is the figure), after a
    /// snapshot of the store and of the client's state for the timed runs.
    fn measure(&mut self, snapshot: &Snapshot) -> Row {
        snapshot.take(self);
        let files = self.files;
        let mut firsts: Vec<Duration> = (0..5).map(|_| self.first_answer()).collect();
        firsts.sort();
        let lines: Vec<String> = (0..100).map(|_| self.create_line()).collect();
        let (_, peak_memory, _) = self.exec(&(lines.join("\n") + "\n"));
        let now = (folder_bytes(&self.store), self.files);
        let bytes_per_create = (now.0 - self.last.0) / (now.1 - self.last.1) as u64;
        self.last = now;
        Row {
            files,
            first_answer: firsts[2],
            open_and_creates: Duration::ZERO,
            spread: (Duration::ZERO, Duration::ZERO),
            cpu: Duration::ZERO,
            bytes_per_create,
            peak_memory,
            runs: Vec::new(),
        }
    }

    /// One timed run of 100 creates on a fresh copy of `snapshot`: its wall and CPU time.
    fn timed_run(&self, snapshot: &Snapshot, run: usize) -> (Duration, Duration) {
        let scratch = Bench {
            bin: self.bin.clone(),
            home: self.home.with_extension("runs"),
            store: self.store.with_extension("runs"),
            key: self.key.clone(),
            files: snapshot.files,
            last: self.last,
        };
        copy(&snapshot.store, &scratch.store);
        copy(&snapshot.home, &scratch.home);
        let text = format!("{} run {run}\n", "note ".repeat(49));
        let lines: String = (0..100)
            .map(|i| {
                let path = format!("/memories/d{}/run{run}-{i}.md", i % FOLDERS);
                serde_json::json!({"command": "create", "path": path, "file_text": text}).to_string() + "\n"
            })
            .collect();
        let (wall, _, cpu) = scratch.exec(&lines);
        let _ = std::fs::remove_dir_all(&scratch.store);
        let _ = std::fs::remove_dir_all(&scratch.home);
        (wall, cpu)
    }
}

/// A store as it was at one size, and the client's state then: every timed run of that size
/// starts from a copy of it.
struct Snapshot {
    files: usize,
    store: PathBuf,
    home: PathBuf,
}

impl Snapshot {
    fn new(dir: &Path, files: usize) -> Snapshot {
        Snapshot { files, store: dir.join(format!("store-{files}")), home: dir.join(format!("home-{files}")) }
    }

    fn take(&self, bench: &Bench) {
        copy(&bench.store, &self.store);
        copy(&bench.home, &self.home);
    }
}

/// Copies the folder `from` to `to` (an empty folder if `from` does not exist).
fn copy(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    if !from.exists() {
        return std::fs::create_dir_all(to).expect("an empty folder");
    }
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status().expect("cp runs");
    assert!(status.success(), "copying {}", from.display());
}

/// The CPU time (user and system) of this process's children waited for so far.
fn children_cpu() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let micros = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    Duration::from_micros(micros(usage.user_time()) + micros(usage.system_time()))
}

/// `VmHWM` of a process, in bytes, while it runs.
fn vm_hwm(status: &str) -> Option<u64> {
    let text = std::fs::read_to_string(status).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// The bytes of every file under `dir`, without the zeros a writer fills the last log segment
/// with ahead of its records (docs/FORMAT.md, "Filled ahead"): they are written once and then
/// overwritten by the records that follow, which are counted.
fn folder_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("the store folder") {
        let entry = entry.expect("an entry");
        let meta = entry.metadata().expect("metadata");
        total += if meta.is_dir() { folder_bytes(&entry.path()) } else { meta.len() - zeros_at_end(&entry.path()) };
    }
    total
}

/// How many zero bytes end the file at `path` (within its last 2 MiB: more than is filled
/// ahead).
fn zeros_at_end(path: &Path) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).expect("a store file");
    let len = file.metadata().expect("metadata").len();
    let from = len.saturating_sub(2 << 20);
    file.seek(SeekFrom::Start(from)).expect("seek");
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).expect("read");
    tail.iter().rev().take_while(|&&b| b == 0).count() as u64
}

fn main() {
    let sizes: Vec<usize> = match std::env::var("MEMFS_SCALE_SIZES") {
        Ok(s) => s.split(',').map(|n| n.trim().parse().expect("MEMFS_SCALE_SIZES: numbers")).collect(),
        Err(_) => vec![200, 2_000, 20_000, 100_000],
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut bench = Bench {
        bin: PathBuf::from(env!("CARGO_BIN_EXE_memfs")),
        home: dir.path().join("home"),
        store: dir.path().join("store"),
        key: dir.path().join("store.key"),
        files: 0,
        last: (0, 0),
    };
    let init = bench.memfs().arg("init").output().expect("memfs init runs");
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    // The default policy stops at 100,000 files; the last size needs 100 more.
    let policy = bench.memfs().args(["policy", "set", "max-files", "none"]).output().expect("memfs policy runs");
    assert!(policy.status.success(), "{}", String::from_utf8_lossy(&policy.stderr));
    bench.last = (folder_bytes(&bench.store), 0);
    let mut rows = Vec::new();
    let mut snapshots = Vec::new();
    for size in sizes {
        let grow = Instant::now();
        // The 100 creates of the last measurement count toward this size.
        bench.grow_to(size);
        eprintln!("grown to {size} files in {:.0} s", grow.elapsed().as_secs_f64());
        let snapshot = Snapshot::new(dir.path(), bench.files);
        rows.push(bench.measure(&snapshot));
        snapshots.push(snapshot);
    }
    // The timed runs, a round over every size at a time: a shared machine's speed drifts
    // over minutes, and runs of one size back to back would measure the drift as a ratio.
    for run in 0..RUNS {
        for (row, snapshot) in rows.iter_mut().zip(&snapshots) {
            row.runs.push(bench.timed_run(snapshot, run));
        }
    }
    println!(
        "files in store | first answer | open + 100 creates | bytes written per create | peak memory | CPU of open + 100 creates"
    );
    for row in &mut rows {
        let mut walls: Vec<Duration> = row.runs.iter().map(|r| r.0).collect();
        let mut cpus: Vec<Duration> = row.runs.iter().map(|r| r.1).collect();
        walls.sort();
        cpus.sort();
        row.open_and_creates = walls[RUNS / 2];
        row.spread = (walls[0], walls[RUNS - 1]);
        row.cpu = cpus[RUNS / 2];
        println!(
            "{:>14} | {:>9.1} ms | {:>15.1} ms | {:>21} B | {:>8.1} MB | {:>8.1} ms   (runs {:.0}-{:.0} ms)",
            row.files,
            row.first_answer.as_secs_f64() * 1e3,
            row.open_and_creates.as_secs_f64() * 1e3,
            row.bytes_per_create,
            row.peak_memory as f64 / 1e6,
            row.cpu.as_secs_f64() * 1e3,
            row.spread.0.as_secs_f64() * 1e3,
            row.spread.1.as_secs_f64() * 1e3,
        );
    }
    let at = |files: usize| rows.iter().find(|r| r.files == files);
    let mut met = true;
    let mut check = |what: String, ok: bool| {
        println!("{} {what}", if ok { "met:    " } else { "NOT MET:" });
        met &= ok;
    };
    if let (Some(small), Some(large)) = (at(200), at(20_000)) {
        let ratio = large.open_and_creates.as_secs_f64() / small.open_and_creates.as_secs_f64();
        let cpu = large.cpu.as_secs_f64() / small.cpu.as_secs_f64();
        check(
            format!(
                "open + 100 creates at 20,000 files is {ratio:.2}x that at 200 (target <= 1.5x; CPU time {cpu:.2}x)"
            ),
            ratio <= 1.5,
        );
    }
    if let Some(large) = at(100_000) {
        let ms = large.first_answer.as_secs_f64() * 1e3;
        check(format!("first answer at 100,000 files: {ms:.1} ms (target <= 50 ms)"), ms <= 50.0);
    }
    let worst = rows.iter().map(|r| r.bytes_per_create).max().unwrap_or(0);
    check(format!("bytes written per create, worst size: {worst} B (target <= 4096 B)"), worst <= 4096);
    println!("{}", if met { "every target met" } else { "some targets not met" });
}
