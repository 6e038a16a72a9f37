//! Round trips per command: each backend behind `object_store`'s `ThrottledStore`, 25 ms per
//! request (get, put, list, delete), and a `FaultStore` counting the requests.
//!
//! ```text
//! cargo bench -p memfs --bench round_trips                          # memory, a local folder, GCS
//! scripts/emulators.sh run cargo bench -p memfs --bench round_trips # and S3 (moto), Azure (Azurite)
//! ```
//!
//! GCS is `object_store`'s real GCS client against the store tests' loopback stub of the XML
//! API (`crates/memfs-store/tests/store/gcs_stub.rs`): its requests are the client's own, the
//! answers the stub's (no GCS emulator that installs here serves that client's writes).
//!
//! For each backend: a store of 10 directories of 10 notes (plus one file at the top) is
//! written with no throttle, then every command runs through `memfs::Memfs` on an
//! `EncryptedRepository` over the throttled store, **cold** (a new client on the same store:
//! empty caches; opening it, which reads the key slots, is not counted) and **warm** (a client
//! that has just viewed the file it then works on), and a warm file view by a client opened
//! with a staleness bound. Each row is the median (by latency) of 3 runs.
//!
//! Two measures of sequential round trips, both from the run itself:
//! - "sequential": every get and put is timed (start, end); the longest chain of requests each
//!   starting after the previous one ended. Requests that overlap (a commit's objects, written
//!   at once) count once; the backend's own speed does not matter;
//! - "latency / 25 ms": the command's latency divided by 25 ms, rounded. Exact in memory; an
//!   emulator's own time per request (measured and printed) and a local folder's sync of the
//!   head add to it.
//!
//! The targets of issue 18 (a view in at most 1 sequential round trip cold or warm, 0 within
//! a staleness bound; a warm mutation, by a writer that knows the current head, in 1; a cold
//! one in 2) are checked on "sequential" and printed at the end. Nothing here is asserted: it
//! is a measurement.

#![allow(clippy::print_stdout)]

mod fixture;
// The store tests' loopback stub of GCS's XML API, served to `object_store`'s real GCS client
// (no GCS emulator that installs here serves that client's writes: docs/CLOUD.md). Only some
// of its helpers are used here.
#[allow(dead_code, unreachable_pub)]
#[path = "../../memfs-store/tests/store/gcs_stub.rs"]
mod gcs_stub;

use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;

use memfs::StateDir;
use memfs::{Dialect, Memfs};
use memfs_crypt::{Credential, KeyFile, KeySlots};
use memfs_store::fault::{FaultStore, OpCounts};
use memfs_store::open_local_log;
use memfs_store::{Backend, EncryptedRepository, OpenOptions};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RetryConfig,
};
use serde_json::{Value, json};

use crate::fixture::DIRS;

/// What one request costs.
const LATENCY: Duration = Duration::from_millis(25);
/// Runs per row; the median is shown.
const RUNS: usize = 3;
const NOTES: usize = 10;

type Wrapped = FaultStore<Timed<ThrottledStore<Arc<dyn ObjectStore>>>>;

/// Records when each get and put starts and ends, and whether it was the head's (other
/// operations pass through untimed).
#[derive(Debug)]
struct Timed<T> {
    inner: T,
    log: Mutex<Vec<Request>>,
}

#[derive(Debug)]
struct Request {
    start: Instant,
    end: Instant,
    head_get: bool,
}

impl<T> Timed<T> {
    fn take(&self) -> Vec<Request> {
        std::mem::take(&mut *self.log.lock().expect("the request log"))
    }

    async fn timed<R>(&self, location: &Path, get: bool, op: impl Future<Output = R>) -> R {
        let start = Instant::now();
        let r = op.await;
        let head_get = get && location.as_ref() == "head";
        self.log.lock().expect("the request log").push(Request { start, end: Instant::now(), head_get });
        r
    }
}

impl<T: ObjectStore> std::fmt::Display for Timed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Timed({})", self.inner)
    }
}

#[async_trait]
impl<T: ObjectStore> ObjectStore for Timed<T> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.timed(location, false, self.inner.put_opts(location, payload, opts)).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        // Until the whole body is in: what a caller waits for.
        self.timed(location, true, async {
            let r = self.inner.get_opts(location, options).await?;
            let (meta, range, attributes) = (r.meta.clone(), r.range.clone(), r.attributes.clone());
            let body = r.bytes().await?;
            Ok(GetResult {
                payload: object_store::GetResultPayload::Stream(Box::pin(futures::stream::once(async { Ok(body) }))),
                meta,
                range,
                attributes,
                extensions: Default::default(),
            })
        })
        .await
    }
    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> object_store::Result<Vec<Bytes>> {
        self.timed(location, true, self.inner.get_ranges(location, ranges)).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// The longest chain of requests each starting after the previous one ended: the sequential
/// round trips (the most pairwise disjoint intervals, by earliest end).
fn sequential(requests: &[Request]) -> u64 {
    let mut by_end: Vec<&Request> = requests.iter().collect();
    by_end.sort_by_key(|r| r.end);
    let mut chain = 0;
    let mut last_end: Option<Instant> = None;
    for r in by_end {
        if last_end.is_none_or(|e| r.start >= e) {
            chain += 1;
            last_end = Some(r.end);
        }
    }
    chain
}

fn key() -> KeyFile {
    KeyFile::from_bytes([0x42; 32])
}

fn note(dir: &str, i: usize) -> String {
    let mut s = format!("# {dir} note {i}\n\nstatus: open\ntags: [{dir}, memory]\n\n## Facts\n");
    for k in 0..(3 + i % 5) {
        s.push_str(&format!("- Fact {k}: the user prefers concise answers about {dir}.\n"));
    }
    s
}

/// The backends to measure: memory and a local folder always, S3 and Azure when the emulator
/// variables are set (`scripts/emulators.sh run`). Each as (name, raw store).
fn backends(tmp: &std::path::Path) -> Vec<(&'static str, Arc<dyn ObjectStore>)> {
    let mut out: Vec<(&'static str, Arc<dyn ObjectStore>)> = vec![
        ("memory", Arc::new(InMemory::new())),
        ("local", Arc::new(open_local_log(tmp.join("store")).expect("a local log"))),
    ];
    let prefix = format!("bench-round-trips-{}-{}", std::process::id(), now_ms());
    let retry = RetryConfig { max_retries: 1, retry_timeout: Duration::from_secs(5), ..Default::default() };
    if let Ok(endpoint) = std::env::var("MEMFS_TEST_S3_ENDPOINT") {
        let bucket = std::env::var("MEMFS_TEST_S3_BUCKET").unwrap_or_else(|_| "memfs-test".into());
        let s3 = AmazonS3Builder::new()
            .with_endpoint(endpoint)
            .with_allow_http(true)
            .with_bucket_name(bucket)
            .with_region("us-east-1")
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_virtual_hosted_style_request(false)
            .with_retry(retry.clone())
            .build()
            .expect("an S3 client");
        out.push(("s3", Arc::new(PrefixStore::new(s3, prefix.as_str()))));
    } else {
        println!("(S3 skipped: MEMFS_TEST_S3_ENDPOINT is not set; scripts/emulators.sh run … sets it)");
    }
    if std::env::var_os("MEMFS_TEST_AZURE_ENDPOINT").is_some() {
        let container = std::env::var("MEMFS_TEST_AZURE_CONTAINER").unwrap_or_else(|_| "memfs-test".into());
        let azure = MicrosoftAzureBuilder::new()
            .with_use_emulator(true)
            .with_container_name(container)
            .with_retry(retry)
            .build()
            .expect("an Azure client");
        out.push(("azure", Arc::new(PrefixStore::new(azure, prefix.as_str()))));
    } else {
        println!("(Azure skipped: MEMFS_TEST_AZURE_ENDPOINT is not set)");
    }
    out
}

fn now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

fn throttle(store: &Wrapped, wait: Duration) {
    store.inner().inner.config_mut(|c| {
        *c = ThrottleConfig {
            wait_get_per_call: wait,
            wait_put_per_call: wait,
            wait_list_per_call: wait,
            wait_list_with_delimiter_per_call: wait,
            wait_delete_per_call: wait,
            ..ThrottleConfig::default()
        }
    });
}

/// A new client on the store: empty caches.
async fn client(store: &Arc<Wrapped>, options: OpenOptions) -> Memfs {
    let repo = EncryptedRepository::open(Backend::ObjectStore(store.clone()), &Credential::KeyFile(key()), options)
        .await
        .expect("the store opens");
    Memfs::with_repository(Arc::new(repo), Dialect::Spec)
}

async fn call(memfs: &Memfs, input: &Value) {
    let result = memfs.call(input).await;
    assert!(!result.is_error, "{input}: {}", result.content);
}

/// One measured command.
#[derive(Clone, Copy)]
struct Sample {
    counts: OpCounts,
    elapsed: Duration,
    /// Sequential round trips, from the requests' times.
    sequential: u64,
    /// Reads of the head.
    head_gets: u64,
}

async fn measure(store: &Wrapped, memfs: &Memfs, input: &Value) -> Sample {
    let before = store.plan().counts();
    store.inner().take();
    let start = Instant::now();
    call(memfs, input).await;
    let elapsed = start.elapsed();
    let requests = store.inner().take();
    Sample {
        counts: store.plan().counts().since(&before),
        elapsed,
        sequential: sequential(&requests),
        head_gets: requests.iter().filter(|r| r.head_get).count() as u64,
    }
}

/// A row of the table.
struct Row {
    backend: &'static str,
    command: &'static str,
    cache: &'static str,
    sample: Sample,
    mutation: bool,
}

impl Row {
    /// Latency divided by one request's.
    fn by_latency(&self) -> u64 {
        (self.sample.elapsed.as_secs_f64() / LATENCY.as_secs_f64()).round() as u64
    }
}

/// The commands, each given the run number (so each run works on its own file).
fn input(command: &str, run: usize) -> (String, Value) {
    let file = |dir: &str| format!("/memories/{dir}/note-{run:02}.md");
    match command {
        "view file" => (file("projects"), json!({"command": "view", "path": file("projects")})),
        "view dir" => ("/memories".into(), json!({"command": "view", "path": "/memories"})),
        "create" => {
            let path = format!("/memories/projects/new-{run:02}-{}.md", now_ms());
            (path.clone(), json!({"command": "create", "path": path, "file_text": "a new note\n"}))
        }
        "str_replace" => (
            file("people"),
            json!({"command": "str_replace", "path": file("people"), "old_str": "status: open", "new_str": "status: done"}),
        ),
        "insert" => (
            file("meetings"),
            json!({"command": "insert", "path": file("meetings"), "insert_line": 1, "insert_text": "inserted\n"}),
        ),
        "delete" => (file("todo"), json!({"command": "delete", "path": file("todo")})),
        "rename" => (
            file("research"),
            json!({"command": "rename", "old_path": file("research"), "new_path": format!("/memories/research/moved-{run:02}.md")}),
        ),
        other => unreachable!("{other}"),
    }
}

const COMMANDS: [(&str, bool); 7] = [
    ("view file", false),
    ("view dir", false),
    ("create", true),
    ("str_replace", true),
    ("insert", true),
    ("delete", true),
    ("rename", true),
];

fn median(mut samples: Vec<Sample>) -> Sample {
    samples.sort_by_key(|s| s.elapsed);
    samples[samples.len() / 2]
}

async fn bench_backend(name: &'static str, raw: Arc<dyn ObjectStore>, rows: &mut Vec<Row>) -> (f64, u64) {
    let throttled = ThrottledStore::new(raw.clone(), ThrottleConfig::default());
    let store = Arc::new(FaultStore::new(Timed { inner: throttled, log: Mutex::new(Vec::new()) }));
    throttle(&store, Duration::ZERO);
    let repo = EncryptedRepository::init(
        Backend::ObjectStore(store.clone()),
        |master, id| KeySlots::with_key_file(master, id, &key()),
        OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() },
    )
    .await
    .expect("a new store");
    let seeder = Memfs::with_repository(Arc::new(repo), Dialect::Spec);
    call(&seeder, &json!({"command": "create", "path": "/memories/a.md", "file_text": "top\n"})).await;
    // Runs 0..RUNS cold and RUNS..2*RUNS warm each use their own note.
    for dir in DIRS {
        for i in 0..NOTES.max(2 * RUNS) {
            let path = format!("/memories/{dir}/note-{i:02}.md");
            call(&seeder, &json!({"command": "create", "path": path, "file_text": note(dir, i)})).await;
        }
    }
    // The backend's own time per request, unthrottled: what an emulator adds to the 25 ms.
    let mut own = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        raw.get(&Path::from("head")).await.expect("the head").bytes().await.expect("its bytes");
        own.push(start.elapsed());
    }
    own.sort();
    let own = own[own.len() / 2];
    let head_bytes = raw.head(&Path::from("head")).await.expect("the head").size;
    throttle(&store, LATENCY);

    for (command, mutation) in COMMANDS {
        for cache in ["cold", "warm"] {
            let mut samples = Vec::new();
            for run in 0..RUNS {
                let run = if cache == "cold" { run } else { RUNS + run };
                let (path, input) = input(command, run);
                let memfs = client(&store, OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() }).await;
                if cache == "warm" {
                    // A client that has just looked at the file (or the folder) it works on.
                    let look = if command == "create" { "/memories/projects".to_owned() } else { path };
                    call(&memfs, &json!({"command": "view", "path": look})).await;
                }
                samples.push(measure(&store, &memfs, &input).await);
            }
            let sample = median(samples);
            rows.push(Row { backend: name, command, cache, sample, mutation });
        }
    }
    // A warm view within a staleness bound: no request at all.
    let mut samples = Vec::new();
    for run in 0..RUNS {
        let options = OpenOptions {
            max_staleness: Some(Duration::from_secs(60)),
            state_dir: StateDir::Off,
            ..Default::default()
        };
        let memfs = client(&store, options).await;
        let (_, input) = input("view file", run);
        call(&memfs, &input).await;
        samples.push(measure(&store, &memfs, &input).await);
    }
    let sample = median(samples);
    rows.push(Row { backend: name, command: "view file", cache: "warm, max_staleness 60 s", sample, mutation: false });
    (own.as_secs_f64() * 1000.0, head_bytes)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let gcs = runtime.block_on(gcs_stub::GcsStub::start("memfs-bench"));
    let mut all = backends(tmp.path());
    all.push(("gcs-stub", gcs.prefixed("bench")));
    for (name, raw) in all {
        let (own_ms, head_bytes) = runtime.block_on(bench_backend(name, raw, &mut rows));
        notes.push(format!(
            "{name}: {own_ms:.2} ms per unthrottled request; the sealed head is {head_bytes} bytes \
             ({} files, {} directories)",
            DIRS.len() * NOTES.max(2 * RUNS) + 1,
            DIRS.len()
        ));
    }

    println!("\nRound trips per command, {} ms per request (median of {RUNS} runs)\n", LATENCY.as_millis());
    println!(
        "{:<8} {:<12} {:<25} {:>8} {:>5} {:>10} {:>5} {:>10} {:>10} {:>15}",
        "backend",
        "command",
        "cache",
        "requests",
        "gets",
        "head gets",
        "puts",
        "sequential",
        "latency ms",
        "latency / 25 ms"
    );
    for r in &rows {
        let c = r.sample.counts;
        println!(
            "{:<8} {:<12} {:<25} {:>8} {:>5} {:>10} {:>5} {:>10} {:>10.1} {:>15}",
            r.backend,
            r.command,
            r.cache,
            c.total(),
            c.get,
            r.sample.head_gets,
            c.put,
            r.sample.sequential,
            r.sample.elapsed.as_secs_f64() * 1000.0,
            r.by_latency()
        );
    }
    println!();
    for n in &notes {
        println!("{n}");
    }

    // The issue's targets, from the rows above.
    println!("\nTargets (sequential round trips):");
    let check = |label: &str, limit: u64, select: &dyn Fn(&Row) -> bool| {
        let picked: Vec<&Row> = rows.iter().filter(|r| select(r)).collect();
        let worst = picked.iter().map(|r| r.sample.sequential).max().unwrap_or(0);
        let over: Vec<String> = picked
            .iter()
            .filter(|r| r.sample.sequential > limit)
            .map(|r| format!("{} {} {} = {}", r.backend, r.command, r.cache, r.sample.sequential))
            .collect();
        let verdict = if over.is_empty() { "met".to_owned() } else { format!("NOT met: {}", over.join("; ")) };
        println!("  {label:<46} at most {limit}: worst {worst}, {verdict}");
    };
    check("file view, cold", 1, &|r| r.command == "view file" && r.cache == "cold");
    check("file view, warm", 1, &|r| r.command == "view file" && r.cache == "warm");
    check("file view, warm within a staleness bound", 0, &|r| r.cache.starts_with("warm, max_staleness"));
    check("directory view, cold", 1, &|r| r.command == "view dir" && r.cache == "cold");
    check("directory view, warm", 1, &|r| r.command == "view dir" && r.cache == "warm");
    check("mutation, warm", 1, &|r| r.mutation && r.cache == "warm");
    check("mutation, cold", 2, &|r| r.mutation && r.cache == "cold");
    let twice = rows.iter().filter(|r| r.sample.head_gets > 1).count();
    if twice > 0 {
        println!(
            "\n{twice} rows read the head twice: on the first command of each day in a process, the engine's \
             automatic expiration check (memfs::Memfs::expire_automatically) reads the head, then the command \
             reads it again (conditionally: unchanged, no body). Every cold row is such a first command."
        );
    }
    println!("\n({:.1} s)", started.elapsed().as_secs_f64());
}
