//! Bounded memory (issue 18, criterion 1): one process runs 100,000 commands against a local
//! store and its peak memory stays under 256 MB. Before the caches had a budget, the decoded
//! directories of every commit stayed cached: 20,000 commands of this mix peaked at 417 MB.
//!
//! The peak is the process's (`VmHWM`): nextest runs each test in a process of its own.

use std::sync::Arc;

use memfs::{Dialect, KdfParams, KeyFile, Memfs};
use memfs_crypt::{Credential, KeySlots};
use memfs_store::{Backend, EncryptedRepository, OpenOptions, StateDir};
use serde_json::{Value, json};

/// Command `i` of the mix: a quarter creates, a quarter views of a folder, a quarter views of
/// a file, a quarter edits of one. The 25,000 files go into 32 × 32 folders, so that every
/// folder stays small and the test measures what a command leaves behind, not the cost of
/// rewriting a large folder (the scale bench measures that).
fn command(i: usize) -> Value {
    let created = i / 4 * 4;
    let folder = |n: usize| format!("/memories/a{}/b{}", n % 32, n / 32 % 32);
    let file = |n: usize| format!("{}/f{n}.md", folder(n / 4));
    match i % 4 {
        0 => json!({"command": "create", "path": file(i), "file_text": format!("{} {i}\n", "x".repeat(200))}),
        1 => json!({"command": "view", "path": folder(created / 4)}),
        2 => json!({"command": "view", "path": file(created)}),
        _ => {
            json!({"command": "str_replace", "path": file(created), "old_str": format!(" {created}\n"), "new_str": format!(" {created}!\n")})
        }
    }
}

/// The process's peak resident memory, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    let kib: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("a number of kB");
    kib * 1024
}

#[tokio::test]
async fn a_hundred_thousand_commands_in_one_process_stay_under_256_mb() {
    const COMMANDS: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let credential = Credential::KeyFile(KeyFile::from_bytes([7; 32]));
    let slots = |root: &_, id: &_| KeySlots::with_slot(root, id, &credential, KdfParams::new(8, 1, 1).unwrap());
    let options = OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() };
    let repo = EncryptedRepository::init(Backend::Local(dir.path().join("store")), slots, options).await.unwrap();
    let memfs = Memfs::with_repository(Arc::new(repo), Dialect::Spec);
    let start = std::time::Instant::now();
    for i in 0..COMMANDS {
        let result = memfs.call(&command(i)).await;
        assert!(!result.is_error, "command {i}: {}", result.content);
        if i % 10_000 == 9_999 {
            eprintln!("{:>7} commands: peak {} MB, {:.0} s", i + 1, peak_rss() >> 20, start.elapsed().as_secs_f64());
        }
    }
    let peak = peak_rss();
    eprintln!(
        "{COMMANDS} commands in {:.0} s, peak memory {} MB (bound 256 MB)",
        start.elapsed().as_secs_f64(),
        peak >> 20
    );
    assert!(peak < 256 << 20, "peak memory {} MB", peak >> 20);
}
