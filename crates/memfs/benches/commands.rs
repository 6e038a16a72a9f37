//! Command benchmarks: every memory-tool command through the public engine
//! (`Memfs::ephemeral` + `call`) and a few pure core functions (`memfs_core::execute`).
//!
//! Two fixtures:
//! - `tree1k`: 10 directories x 100 markdown notes (about 0.5-1.5 KiB each, 1,000 files);
//! - `file10k`: one file of 10,000 lines (about 600 KiB).
//!
//! Mutating benchmarks leave the state as they found it, so iterations stay comparable:
//! `str_replace` and `rename` toggle A -> B -> A (every iteration is one timed command),
//! `create`/`delete`/`insert` time only their own command and undo it untimed (`iter_custom`),
//! and the ones whose undo would grow the in-memory commit log by a whole file
//! (`file10k/create`, `file10k/delete`) get a fresh store per iteration (`iter_batched`).
//! (The store's commit log still gains one short entry per mutation; `rename_dir` leaves an
//! empty `/memories/archive` behind after its first round trip.)
//!
//! Criterion's `async_tokio` feature is not enabled in this workspace, so each command runs
//! with `Runtime::block_on` on a current-thread runtime inside the timed closure.
//!
//! ```text
//! cargo bench -p memfs --bench commands                 # ~40 s after the build (2 cores)
//! cargo bench -p memfs --bench commands -- tree1k/view  # a subset
//! cargo bench -p memfs --bench commands -- --quick      # ~15 s, rougher
//! ```

mod fixture;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use memfs::{Dialect, Memfs};
use memfs_core::{Command, MapResolver, MemoryPath, ObjectId, Tree, execute};
use serde_json::{Value, json};

use crate::fixture::DIRS;
use tokio::runtime::Runtime;

const FILES_PER_DIR: usize = 100;
const BIG_LINES: usize = 10_000;
const BIG: &str = "/memories/big.md";
/// A note in the middle of `tree1k`, edited by the `tree1k` edit benchmarks.
const NOTE: &str = "/memories/projects/note-050.md";

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime")
}

/// Runs one tool call and checks it succeeded (a failing benchmark would measure an error path).
fn call(rt: &Runtime, memfs: &Memfs, input: &Value) -> memfs::ToolResult {
    let result = rt.block_on(memfs.call(input));
    assert!(!result.is_error, "{input}: {}", result.content);
    result
}

/// A plausible memory note: a heading, some metadata, bullet points and a short paragraph;
/// length varies with `i`. Contains `status: open` exactly once and ends with a newline.
fn note(dir: &str, i: usize) -> String {
    let mut s = format!(
        "# {dir} note {i:03}\n\nupdated: 2026-{:02}-{:02}\nstatus: open\ntags: [{dir}, memory, item-{i}]\n\n## Facts\n",
        1 + i % 12,
        1 + i % 28
    );
    for k in 0..(3 + i % 12) {
        s.push_str(&format!(
            "- Fact {k}: the user prefers concise answers about {dir}; see ticket #{} for context.\n",
            1000 + i * 7 + k
        ));
    }
    s.push_str("\n## Notes\nFollow up next week. Keep the summary short and link the decision record.\n");
    s
}

/// 10,000 numbered lines of about 60 bytes, with one unique `marker: open` line in the middle,
/// ending with a newline.
fn big_file() -> String {
    let mut s = String::with_capacity(BIG_LINES * 64);
    for i in 1..=BIG_LINES {
        if i == BIG_LINES / 2 {
            s.push_str("marker: open\n");
        } else {
            s.push_str(&format!("line {i:05}: the quick brown fox jumps over the lazy memory dog\n"));
        }
    }
    s
}

fn tree1k(rt: &Runtime) -> Memfs {
    let memfs = Memfs::ephemeral(Dialect::Spec).expect("memory store");
    for dir in DIRS {
        for i in 0..FILES_PER_DIR {
            let path = format!("/memories/{dir}/note-{i:03}.md");
            call(rt, &memfs, &json!({"command": "create", "path": path, "file_text": note(dir, i)}));
        }
    }
    memfs
}

fn file10k(rt: &Runtime, content: &str) -> Memfs {
    let memfs = Memfs::ephemeral(Dialect::Spec).expect("memory store");
    call(rt, &memfs, &json!({"command": "create", "path": BIG, "file_text": content}));
    memfs
}

/// `b.iter` over two inputs taken in turn, `inputs[1]` first: `inputs[1]` takes the fixture
/// from its start state to a second one, `inputs[0]` takes it back.
/// `input`, run again and again: a command that changes nothing (a view).
fn timed(c: &mut Criterion, name: &str, rt: &Runtime, memfs: &Memfs, input: &Value) {
    c.bench_function(name, |b| b.iter(|| black_box(call(rt, memfs, input))));
}

fn toggle(c: &mut Criterion, name: &str, rt: &Runtime, memfs: &Memfs, inputs: [Value; 2]) {
    let mut n = 0usize;
    c.bench_function(name, |b| {
        b.iter(|| {
            n += 1;
            black_box(call(rt, memfs, &inputs[n % 2]))
        })
    });
    // Leave the fixture in its start state for the benchmarks that follow.
    if n % 2 == 1 {
        call(rt, memfs, &inputs[0]);
    }
}

/// [`toggle`] of a `str_replace` in `path` between `texts[0]` (where the fixture starts) and
/// `texts[1]`.
fn toggle_text(c: &mut Criterion, name: &str, rt: &Runtime, memfs: &Memfs, path: &str, texts: [&str; 2]) {
    let replace =
        |from: &str, to: &str| json!({"command": "str_replace", "path": path, "old_str": from, "new_str": to});
    toggle(c, name, rt, memfs, [replace(texts[1], texts[0]), replace(texts[0], texts[1])]);
}

/// [`toggle`] of a `rename` between `paths[0]` (where the fixture starts) and `paths[1]`.
fn toggle_rename(c: &mut Criterion, name: &str, rt: &Runtime, memfs: &Memfs, paths: [&str; 2]) {
    let rename = |from: &str, to: &str| json!({"command": "rename", "old_path": from, "new_path": to});
    toggle(c, name, rt, memfs, [rename(paths[1], paths[0]), rename(paths[0], paths[1])]);
}

/// [`timed_with_undo`] of inserting the line `text` at `(path, line)`, taken out again.
fn insert_with_undo(c: &mut Criterion, name: &str, rt: &Runtime, memfs: &Memfs, (path, line): (&str, u64), text: &str) {
    let insert = json!({"command": "insert", "path": path, "insert_line": line, "insert_text": text});
    let undo = json!({"command": "str_replace", "path": path, "old_str": format!("{text}\n"), "new_str": ""});
    timed_with_undo(c, name, rt, memfs, &insert, &undo);
}

/// Times `timed` only; runs `undo` untimed after each iteration.
fn timed_with_undo(c: &mut Criterion, name: &str, rt: &Runtime, memfs: &Memfs, timed: &Value, undo: &Value) {
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(call(rt, memfs, timed));
                total += start.elapsed();
                call(rt, memfs, undo);
            }
            total
        })
    });
}

fn bench_tree1k(c: &mut Criterion) {
    let rt = runtime();
    let memfs = tree1k(&rt);
    let new_note = note("projects", 42);

    timed(c, "tree1k/view_dir_root", &rt, &memfs, &json!({"command": "view", "path": "/memories"}));
    timed(c, "tree1k/view_dir_sub", &rt, &memfs, &json!({"command": "view", "path": "/memories/projects"}));
    timed(c, "tree1k/view_file", &rt, &memfs, &json!({"command": "view", "path": NOTE}));
    timed(c, "tree1k/view_range", &rt, &memfs, &json!({"command": "view", "path": NOTE, "view_range": [3, 8]}));
    let created = "/memories/projects/new-note.md";
    timed_with_undo(
        c,
        "tree1k/create",
        &rt,
        &memfs,
        &json!({"command": "create", "path": created, "file_text": new_note}),
        &json!({"command": "delete", "path": created}),
    );
    toggle_text(c, "tree1k/str_replace", &rt, &memfs, NOTE, ["status: open", "status: closed"]);
    insert_with_undo(c, "tree1k/insert", &rt, &memfs, (NOTE, 4), "owner: inserted-by-bench");
    timed_with_undo(
        c,
        "tree1k/delete",
        &rt,
        &memfs,
        &json!({"command": "delete", "path": NOTE}),
        &json!({"command": "create", "path": NOTE, "file_text": note("projects", 50)}),
    );
    toggle_rename(c, "tree1k/rename_file", &rt, &memfs, [NOTE, "/memories/archive-note.md"]);
    toggle_rename(c, "tree1k/rename_dir", &rt, &memfs, ["/memories/research", "/memories/archive/research"]);
}

fn bench_file10k(c: &mut Criterion) {
    let rt = runtime();
    let content = big_file();
    let memfs = file10k(&rt, &content);

    timed(c, "file10k/view_file", &rt, &memfs, &json!({"command": "view", "path": BIG}));
    timed(c, "file10k/view_range", &rt, &memfs, &json!({"command": "view", "path": BIG, "view_range": [4950, 5050]}));
    c.bench_function("file10k/create", |b| {
        let input = json!({"command": "create", "path": BIG, "file_text": content});
        b.iter_batched(
            || Memfs::ephemeral(Dialect::Spec).expect("memory store"),
            |fresh| {
                black_box(call(&rt, &fresh, &input));
                fresh // dropped untimed
            },
            BatchSize::PerIteration,
        )
    });
    toggle_text(c, "file10k/str_replace", &rt, &memfs, BIG, ["marker: open", "marker: done"]);
    insert_with_undo(c, "file10k/insert", &rt, &memfs, (BIG, 5000), "inserted-by-bench");
    c.bench_function("file10k/delete", |b| {
        let input = json!({"command": "delete", "path": BIG});
        b.iter_batched(
            || file10k(&rt, &content),
            |fresh| {
                black_box(call(&rt, &fresh, &input));
                fresh
            },
            BatchSize::PerIteration,
        )
    });
    toggle_rename(c, "file10k/rename", &rt, &memfs, [BIG, "/memories/big-renamed.md"]);
}

/// Names a content by its length and first 24 bytes (distinct for every content these
/// fixtures create): the core benchmarks measure `execute` alone, without hashing the content
/// (the store's keyed BLAKE3) or committing.
fn by_length_and_head(content: &[u8]) -> ObjectId {
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&(content.len() as u64).to_le_bytes());
    let head = &content[..content.len().min(24)];
    id[8..8 + head.len()].copy_from_slice(head);
    ObjectId::from_bytes(id)
}

fn apply(tree: &mut Tree, blobs: &mut MapResolver, command: &Command) {
    let out = execute(command, tree, Dialect::Spec, blobs).expect("everything is loaded");
    assert!(!out.result.is_error, "{}", out.result.content);
    let m = out.mutation.expect("a mutation");
    for b in m.blobs {
        let previous = blobs.blobs.insert(b.id, b.content.clone());
        assert!(previous.is_none_or(|p| p == b.content), "two contents share an id");
    }
    *tree = m.tree;
}

fn bench_core(c: &mut Criterion) {
    let mut tree = Tree::empty();
    let mut blobs: MapResolver = MapResolver::with_address(by_length_and_head);
    for dir in DIRS {
        for i in 0..FILES_PER_DIR {
            let path = format!("/memories/{dir}/note-{i:03}.md");
            apply(&mut tree, &mut blobs, &Command::Create { path, file_text: note(dir, i) });
        }
    }
    apply(&mut tree, &mut blobs, &Command::Create { path: BIG.into(), file_text: big_file() });

    let run = |cmd: &Command| {
        let out = execute(cmd, &tree, Dialect::Spec, &blobs).expect("everything is loaded");
        assert!(!out.result.is_error, "{}", out.result.content);
        out
    };
    c.bench_function("core/view_dir_root", |b| {
        let cmd = Command::View { path: "/memories".into(), view_range: None };
        b.iter(|| black_box(run(&cmd)))
    });
    c.bench_function("core/view_file10k", |b| {
        let cmd = Command::View { path: BIG.into(), view_range: None };
        b.iter(|| black_box(run(&cmd)))
    });
    // Pure: the mutation is returned, never applied, so the state never changes.
    c.bench_function("core/str_replace_file10k", |b| {
        let cmd =
            Command::StrReplace { path: BIG.into(), old_str: "marker: open".into(), new_str: Some("marker: x".into()) };
        b.iter(|| black_box(run(&cmd)))
    });
    c.bench_function("core/create_in_tree1k", |b| {
        let cmd = Command::Create { path: "/memories/projects/new-note.md".into(), file_text: note("projects", 42) };
        b.iter(|| black_box(run(&cmd)))
    });
    c.bench_function("core/path_parse", |b| {
        let path = "/memories/projects/./sub/../note-050.md";
        b.iter(|| black_box(MemoryPath::parse(black_box(path))))
    });
    c.bench_function("core/command_from_input", |b| {
        let input = json!({"command": "str_replace", "path": NOTE, "old_str": "status: open", "new_str": "status: x"});
        b.iter(|| black_box(Command::from_input(black_box(&input))))
    });
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_tree1k, bench_file10k, bench_core
}
criterion_main!(benches);
