//! Criterion 3: one `create` writes about the same objects and bytes (within 2x) in a
//! 10,000-file store as in a 100-file store.
//!
//! Each store is built in one commit (a tree assembled directly, every content stored), then a
//! new client runs one `create` through a counting [`FaultStore`] and we count what it writes.

use std::sync::Arc;

use memfs_core::{Dir, DirRef, FileRef, Mutation, Name, NewBlob, Node, Tree};
use memfs_store::fault::{FaultStore, OpCounts};
use memfs_store::{Backend, CommitInfo, Repository};
use object_store::ObjectStoreExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use serde_json::json;

use memfs_crypt::FirstKey;

use crate::support::{init_with_master, open_storing, run};

/// A store's shape: `dirs` directories of `per_dir` files under `/memories`, or, with
/// `dirs == 0`, `per_dir` files directly in `/memories`.
#[derive(Clone, Copy)]
struct Layout {
    dirs: usize,
    per_dir: usize,
}

impl Layout {
    fn files(&self) -> usize {
        self.dirs.max(1) * self.per_dir
    }

    /// Where the measured `create` writes: in an existing directory, beside its files.
    fn new_file(&self) -> String {
        if self.dirs == 0 {
            "/memories/new-note.md".into()
        } else {
            format!("/memories/d{:03}/new-note.md", self.dirs / 2)
        }
    }
}

/// What one `create` cost.
#[derive(Debug)]
struct Cost {
    /// Operations and bytes of the `create`, on a client that has read nothing yet; bytes
    /// without the head's (see `head`).
    cold: OpCounts,
    /// The same for a second `create` by the same client (directories cached).
    warm: OpCounts,
    /// The sealed head the cold `create` wrote: its snapshot is bounded by
    /// `HEAD_SNAPSHOT_BYTES`, whatever the store's size (docs/FORMAT.md).
    head: u64,
}

fn files(repo: &dyn Repository, prefix: &str, n: usize, blobs: &mut Vec<NewBlob>) -> Vec<(Name, Node)> {
    (0..n)
        .map(|f| {
            let content = format!("{prefix} note {f:04}: a fact worth remembering, in about sixty bytes\n");
            let id = repo.address(content.as_bytes());
            let size = content.len() as u64;
            blobs.push(NewBlob { id, content: Arc::from(content.into_bytes()) });
            (Name::parse(&format!("note-{f:04}.md")).unwrap(), Node::File(FileRef { id, size, accessed: 0 }))
        })
        .collect()
}

async fn measure(layout: Layout, key: u8) -> Cost {
    let store = Arc::new(FaultStore::new(InMemory::new()));
    let plan = store.plan().clone();
    let repo = init_with_master(Backend::ObjectStore(store.clone()), FirstKey::from_bytes([key; 32])).await.unwrap();
    let mut blobs = Vec::new();
    let root = if layout.dirs == 0 {
        Dir::from_entries(files(&repo, "root", layout.per_dir, &mut blobs))
    } else {
        Dir::from_entries((0..layout.dirs).map(|d| {
            let dir = Dir::from_entries(files(&repo, &format!("d{d}"), layout.per_dir, &mut blobs));
            (Name::parse(&format!("d{d:03}")).unwrap(), Node::Dir(DirRef::new(dir)))
        }))
    };
    let mutation = Mutation { tree: Tree::from_root(DirRef::new(root)), changes: Vec::new(), blobs, applied: None };
    let head = repo.head().await.unwrap();
    repo.commit(&head, &mutation, CommitInfo::default()).await.unwrap();

    // What a create stores: every object before its head, none carried unwritten.
    let client = open_storing(Backend::ObjectStore(store.clone())).await.unwrap();
    let mut cost = Vec::new();
    let mut heads = Vec::new();
    for (i, path) in [layout.new_file(), layout.new_file().replace("new-note", "second-note")].iter().enumerate() {
        let before = plan.counts();
        let text = format!("created in a store of {} files ({i})\n", layout.files());
        let answer = run(&client, &json!({"command": "create", "path": path, "file_text": text})).await.unwrap();
        assert!(!answer.is_error, "{}", answer.content);
        let head = store.inner().head(&Path::from("head")).await.unwrap().size;
        let mut counts = plan.counts().since(&before);
        counts.bytes_put -= head;
        cost.push(counts);
        heads.push(head);
    }
    Cost { cold: cost[0], warm: cost[1], head: heads[0] }
}

/// The 10,000-file store: 100 directories of 100 files.
const NESTED_10000: Layout = Layout { dirs: 100, per_dir: 100 };

/// How many stores each figure is averaged over. Each has its own first key, so its own page
/// boundaries: page sizes vary with the key, their mean does not. The keys are fixed (1, 2,
/// …), so the figures, and the test, are the same on every run.
const STORES: u8 = 20;

/// The mean cost of a `create` over [`STORES`] stores of one layout.
async fn mean(layout: Layout) -> Mean {
    let mut m = Mean::default();
    let n = f64::from(STORES);
    for key in 1..=STORES {
        let c = measure(layout, key).await;
        m.objects += c.cold.put as f64 / n;
        m.warm_objects += c.warm.put as f64 / n;
        m.bytes += c.cold.bytes_put as f64 / n;
        m.head_bytes += c.head as f64 / n;
        m.cold_reads += c.cold.get as f64 / n;
        m.max_warm_reads = m.max_warm_reads.max(c.warm.get);
    }
    eprintln!(
        "scale: {:>3} x {:<5} {:>6} files: a create writes {:.1} objects, {:.0} bytes and a head of {:.0} bytes \
         (mean of {STORES} stores); reads {:.1} objects cold, at most {} warm",
        layout.dirs,
        layout.per_dir,
        layout.files(),
        m.objects,
        m.bytes,
        m.head_bytes,
        m.cold_reads,
        m.max_warm_reads
    );
    m
}

#[derive(Default)]
struct Mean {
    objects: f64,
    warm_objects: f64,
    bytes: f64,
    head_bytes: f64,
    cold_reads: f64,
    max_warm_reads: u64,
}

/// Criterion 3: the same layout scaled from 100 to 10,000 files (10 x 10 to 100 x 100), and
/// one flat directory of 100 and of 10,000 files. A `create` writes its content, the changed
/// pages of each directory on its path (one leaf and one page per index level), the commit
/// and the head: O(depth x log(directory size)) objects, never O(files), and bytes within 2x
/// (the head's snapshot, bounded by its budget at any size, is counted apart).
#[tokio::test]
async fn a_create_costs_about_the_same_at_100_and_10000_files() {
    for (label, small, large) in [
        ("nested", Layout { dirs: 10, per_dir: 10 }, NESTED_10000),
        ("flat", Layout { dirs: 0, per_dir: 100 }, Layout { dirs: 0, per_dir: 10_000 }),
    ] {
        let (s, l) = (mean(small).await, mean(large).await);
        let ratio = l.bytes / s.bytes;
        eprintln!(
            "scale:   {label}: bytes per create, 10,000 vs 100 files: x{ratio:.2}, objects {:.1} vs {:.1}",
            l.objects, s.objects
        );
        assert!(ratio <= 2.0, "{label}: x{ratio:.2}");
        assert!(l.head_bytes <= (memfs_store::HEAD_SNAPSHOT_BYTES + 4096) as f64, "{label}: {:.0}", l.head_bytes);
        // A few pages more per directory on the path, never a number that grows with files.
        assert!(l.objects <= 2.0 * s.objects, "{label}: {:.1} objects vs {:.1}", l.objects, s.objects);
        assert!(l.warm_objects <= 2.0 * s.warm_objects, "{label}");
        // A second create by the same client reads nothing but the head (twice: for the
        // command, and afresh before its objects are stored), except in the flat 10,000
        // (about 2,500 leaves): a directory past 256 leaves is read a leaf at a time, and the
        // way down to a name far from the first one's leaf reads the pages of its path not
        // read yet (four index levels and a leaf at most).
        assert_eq!(s.max_warm_reads, 2, "{label}");
        match label {
            "flat" => assert!(l.max_warm_reads <= 2 + 5, "{label}: {}", l.max_warm_reads),
            _ => assert_eq!(l.max_warm_reads, 2, "{label}"),
        }
        // A cold client reads one page a level down to the leaf its name falls in, not all
        // the directory's pages (about 2,850 here: 2,500 leaves, one in eight of them an index
        // page). Index pages that named no names (a pre-release format) made: every index page and a search of the
        // leaves, about 320 reads.
        if label == "flat" {
            assert!(l.cold_reads <= 8.0, "{label}: {:.1} reads", l.cold_reads);
        }
    }
}

/// The other way to reach 100 files: one directory of 100, or 100 directories of one; the
/// pages of the directories on the path, not the number of files, set the cost.
#[tokio::test]
async fn a_create_beside_many_directories() {
    let (s, l) = (mean(Layout { dirs: 1, per_dir: 100 }).await, mean(Layout { dirs: 100, per_dir: 1 }).await);
    let ratio = l.bytes / s.bytes;
    eprintln!("scale:   1 x 100 vs 100 x 1: bytes per create x{ratio:.2}");
    assert!((0.5..=2.0).contains(&ratio), "x{ratio:.2}");
}
