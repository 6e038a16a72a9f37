//! Criterion 7, with the process killed: for every operation N of the crash sequence, a child
//! process (this test binary, re-executed) runs the sequence over a local folder and aborts
//! (`std::process::abort()`, SIGABRT) just before its Nth storage operation; the parent then
//! opens the folder, verifies it, and finds every command the child acknowledged and nothing
//! of the one it died in.
//!
//! The folder is a [`LogStore`], as `Backend::Local` opens it, with the fault wrapper over it,
//! so the aborts fall between the appends of a commit's objects and its head. The SIGKILL test
//! of the CLI (`crates/memfs-cli/tests/cli/crash.rs`) kills real `memfs exec` processes too.

use std::io::Write;
use std::path::{Path as FsPath, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use memfs_store::Backend;
use memfs_store::fault::{Fault, FaultStore, Target};
use memfs_store::open_local_log;
use object_store::memory::InMemory;

use crate::crash::{Baseline, sequence};
use crate::support::{check, init, open, run, verify};

/// Children run at once.
const BATCH: usize = 32;

/// Selects the child role: `{store folder}` `\n` `{N}`.
const CHILD_ENV: &str = "MEMFS_STORE_TEST_ABORT_CHILD";

fn local(dir: &FsPath) -> Backend {
    Backend::ObjectStore(Arc::new(open_local_log(dir).unwrap()))
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
    let store = Arc::new(FaultStore::new(open_local_log(&dir).unwrap()));
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
    let baseline = Baseline::record(sequence(), raw, counting, &plan, None).await;
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
