//! Criterion 7, with the process killed: for every operation N of the crash sequence, a child
//! process (this test binary, re-executed) runs the sequence over a local folder and aborts
//! (`std::process::abort()`, SIGABRT) just before its Nth storage operation; the parent then
//! opens the folder, verifies it, and finds every command the child acknowledged and nothing
//! of the one it died in.
//!
//! The fault wrapper sits under the head too, so the head goes through the object store:
//! `LocalFileSystem` lacks `PutMode::Update`, so [`LocalCas`] adds it for this test (one
//! writer process at a time, which is all the test runs). `Backend::Local`'s own head is
//! exercised by the SIGKILL test of the CLI (`crates/memfs-cli/tests/crash.rs`).

use std::fmt;
use std::io::Write;
use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use memfs_store::Backend;
use memfs_store::fault::{Fault, FaultStore, Target};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

use crate::crash::{Baseline, sequence};
use crate::support::{check, init, open, run, verify};

/// Children run at once.
const BATCH: usize = 32;

/// Selects the child role: `{store folder}` `\n` `{N}`.
const CHILD_ENV: &str = "MEMFS_STORE_TEST_ABORT_CHILD";

/// `LocalFileSystem` plus `PutMode::Update`, compared against the ETag under a process-local
/// lock: enough for one writer process.
#[derive(Debug)]
struct LocalCas {
    fs: LocalFileSystem,
    lock: tokio::sync::Mutex<()>,
}

impl LocalCas {
    fn new(dir: &FsPath) -> Self {
        LocalCas { fs: LocalFileSystem::new_with_prefix(dir).unwrap(), lock: tokio::sync::Mutex::new(()) }
    }
}

impl fmt::Display for LocalCas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LocalCas({})", self.fs)
    }
}

#[async_trait]
impl ObjectStore for LocalCas {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        let PutMode::Update(expected) = &opts.mode else { return self.fs.put_opts(location, payload, opts).await };
        let _guard = self.lock.lock().await;
        let current = match self.fs.head(location).await {
            Ok(meta) => meta.e_tag,
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        if current.is_none() || current != expected.e_tag {
            let source = "the object changed".into();
            return Err(object_store::Error::Precondition { path: location.to_string(), source });
        }
        self.fs.put_opts(location, payload, PutOptions { mode: PutMode::Overwrite, ..opts }).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.fs.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.fs.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.fs.get_ranges(location, ranges).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.fs.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.fs.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.fs.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.fs.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.fs.rename_opts(from, to, options).await
    }
}

fn local(dir: &FsPath) -> Backend {
    Backend::ObjectStore(Arc::new(LocalCas::new(dir)))
}

fn acks_file(dir: &FsPath) -> PathBuf {
    dir.with_extension("acks")
}

/// The child role of `every_abort_point_leaves_a_consistent_folder` (the same test run again
/// with `CHILD_ENV` set): run the sequence over the folder, aborting at operation N; append
/// each acknowledged command's index to the acknowledgement file as it completes.
async fn child(role: String) {
    let (dir, nth) = role.split_once('\n').expect("folder and N");
    let dir = PathBuf::from(dir);
    let store = Arc::new(FaultStore::new(LocalCas::new(&dir)));
    let plan = store.plan().clone();
    let repo = open(Backend::ObjectStore(store), None).await.expect("open");
    // Counted from here, as the baseline counts each command's operations.
    plan.arm(Target::Any, nth.parse().expect("N"), Fault::Abort);
    let mut acks = std::fs::OpenOptions::new().create(true).append(true).open(acks_file(&dir)).unwrap();
    for (i, command) in sequence().iter().enumerate() {
        let answer = run(&repo, command).await.expect("no failure, only an abort");
        assert!(!answer.is_error, "{}", answer.content);
        writeln!(acks, "{i}").unwrap();
    }
}

/// Starts the child for fault point `nth` over `dir`, without core dumps.
fn spawn_child(dir: &FsPath, nth: u64) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut command = if cfg!(unix) {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg("ulimit -c 0; exec \"$0\" \"$@\"").arg(exe);
        sh
    } else {
        Command::new(exe)
    };
    command
        .args(["--exact", "abort::every_abort_point_leaves_a_consistent_folder", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{}\n{nth}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command.spawn().unwrap()
}

#[tokio::test]
async fn every_abort_point_leaves_a_consistent_folder() {
    if let Ok(role) = std::env::var(CHILD_ENV) {
        return child(role).await;
    }
    let raw = Arc::new(InMemory::new());
    let counting = Arc::new(FaultStore::new(raw.clone()));
    let plan = counting.plan().clone();
    let baseline = Baseline::record(sequence(), raw, counting, &plan).await;
    let points = baseline.total(Target::Any);
    assert!(points > 0);

    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=points).map(|n| root.path().join(format!("store-{n}"))).collect();
    for dir in &dirs {
        std::fs::create_dir(dir).unwrap();
        init(local(dir), None).await.expect("init");
    }

    let (mut states_checked, mut acked_total, mut unreferenced) = (0u64, 0usize, 0u64);
    // A few children at a time.
    for (batch, chunk) in dirs.chunks(BATCH).enumerate() {
        let children: Vec<Child> =
            chunk.iter().enumerate().map(|(i, dir)| spawn_child(dir, (batch * BATCH + i + 1) as u64)).collect();
        for (i, (child, dir)) in children.into_iter().zip(chunk).enumerate() {
            let nth = batch * BATCH + i + 1;
            let out = child.wait_with_output().unwrap();
            #[cfg(unix)]
            assert_eq!(
                std::os::unix::process::ExitStatusExt::signal(&out.status),
                Some(6),
                "child {nth} did not abort: {:?}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            #[cfg(not(unix))]
            assert!(!out.status.success());
            let acked = std::fs::read_to_string(acks_file(dir)).unwrap_or_default().lines().count();
            acked_total += acked;

            let client = open(local(dir), None).await.unwrap_or_else(|e| panic!("abort at {nth}: no open: {e:?}"));
            let snapshot = verify(&client).await.unwrap_or_else(|e| panic!("abort at {nth}: verify: {e:?}"));
            // Aborting before an operation never lets the command in flight commit.
            assert_eq!(snapshot, baseline.states[acked], "abort at {nth}: {acked} commands acknowledged");
            unreferenced += check(&client).await;
            states_checked += 1;
        }
    }
    eprintln!(
        "abort: {points} abort points tried (one child process each), {states_checked} states checked, \
         {acked_total} acknowledged commands found intact; check passed every time \
         ({unreferenced} unreferenced objects in all)"
    );
    assert_eq!(states_checked, points);
}
