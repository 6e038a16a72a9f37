//! Large directories a leaf at a time (`encrypted/parts.rs`, `encrypted/plan.rs`): commands on
//! a directory of thousands of files, each run by a client that read only the leaves its
//! names fall in, answer as the same commands on the whole tree in memory, and the directory
//! each commit writes is the one a whole re-encoding makes (same id, so the same pages).

use std::sync::Arc;

use memfs_core::{Command, Dialect, Dir, DirRef, FileRef, MapResolver, Mutation, Name, NewBlob, Node, Tree, execute};
use memfs_crypt::FirstKey;
use memfs_store::{Backend, CommitInfo, EncryptedRepository, Repository};
use object_store::memory::InMemory;
use serde_json::{Value, json};

use crate::support::{init_with_master, open_storing, run, verify};

/// A small deterministic generator (the same commands on every run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn note(n: u64) -> String {
    format!("/memories/big/note-{n:05}.md")
}

/// The next command: mostly on names of the large directory, some of them taken.
fn command(rng: &mut Lcg, files: u64) -> Value {
    let some = |rng: &mut Lcg| note(rng.below(files * 2));
    match rng.below(7) {
        0 | 1 => json!({"command": "create", "path": some(rng), "file_text": format!("new {}\n", rng.below(1000))}),
        2 => json!({"command": "str_replace", "path": some(rng), "old_str": "remembering", "new_str": "kept"}),
        3 => json!({"command": "delete", "path": some(rng)}),
        4 => json!({"command": "rename", "old_path": some(rng), "new_path": some(rng)}),
        5 => {
            json!({"command": "rename", "old_path": some(rng), "new_path": format!("/memories/small/{}", rng.below(50))})
        }
        _ => json!({"command": "view", "path": some(rng)}),
    }
}

/// The store's first tree: `/memories/big` with `files` notes (even numbers only, so that
/// half the names a command picks are free), `/memories/small` with three.
fn first_tree(repo: &dyn Repository, files: u64) -> (Tree, Vec<NewBlob>) {
    let mut blobs = Vec::new();
    let mut file = |text: String| {
        let id = repo.address(text.as_bytes());
        let size = text.len() as u64;
        blobs.push(NewBlob { id, content: Arc::from(text.into_bytes()) });
        Node::File(FileRef { id, size, accessed: 0 })
    };
    let big = (0..files).map(|n| {
        let name = Name::parse(&format!("note-{:05}.md", n * 2)).unwrap();
        (name, file(format!("note {n}: a fact worth remembering\n")))
    });
    let big = Dir::from_entries(big.collect::<Vec<_>>());
    let small = Dir::from_entries((0..3).map(|n| (Name::parse(&format!("s{n}")).unwrap(), file(format!("{n}\n")))));
    let root = Dir::from_entries([
        (Name::parse("big").unwrap(), Node::Dir(DirRef::new(big))),
        (Name::parse("small").unwrap(), Node::Dir(DirRef::new(small))),
    ]);
    (Tree::from_root(DirRef::new(root)), blobs)
}

/// The tree of `dir` read whole, every directory loaded.
async fn whole(repo: &dyn Repository, dir: &DirRef) -> DirRef {
    let loaded = repo.dir(&dir.id().expect("stored")).await.unwrap();
    let mut entries = Vec::new();
    for (name, node) in loaded.entries() {
        let node = match node {
            Node::Dir(child) => Node::Dir(Box::pin(whole(repo, child)).await),
            file => file.clone(),
        };
        entries.push((name.clone(), node));
    }
    DirRef::new(Dir::from_entries(entries))
}

/// Runs `commands` commands on a store whose `/memories/big` has `files` notes, a new client every
/// ten commands, each answer checked against the whole tree in memory; then checks that the
/// store's tree is the one the whole tree encodes to.
async fn commands_on_a_large_directory(backend: impl Fn() -> Backend, files: u64, commands: usize) {
    let master = || FirstKey::from_bytes([0x33; 32]);
    let repo = init_with_master(backend(), master()).await.unwrap();
    let (tree, blobs) = first_tree(&repo, files);
    let mut model = MapResolver::new();
    model.keep(blobs.clone());
    let mut model_tree = tree.clone();
    let head = repo.head().await.unwrap();
    repo.commit(&head, &Mutation { tree, changes: Vec::new(), blobs, applied: None }, CommitInfo::default())
        .await
        .unwrap();

    let mut rng = Lcg(files);
    let mut client = open_storing(backend()).await.unwrap();
    for i in 0..commands {
        if i % 10 == 0 {
            client = open_storing(backend()).await.unwrap();
        }
        let input = command(&mut rng, files);
        let expected = {
            let command = Command::from_input(&input).unwrap();
            let out = execute(&command, &model_tree, Dialect::Spec, &model).unwrap();
            if let Some(m) = out.mutation {
                model_tree = m.tree;
                model.keep(m.blobs);
            }
            out.result
        };
        assert_eq!(run(&client, &input).await.unwrap(), expected, "command {i}: {input}");
    }

    // Every entry as the model has it, read whole by a new client.
    let fresh = open_storing(backend()).await.unwrap();
    let listing = json!({"command": "view", "path": "/memories/big"});
    let expected = execute(&Command::from_input(&listing).unwrap(), &model_tree, Dialect::Spec, &model).unwrap();
    assert_eq!(run(&fresh, &listing).await.unwrap(), expected.result);
    verify(&fresh).await.unwrap();

    // The same tree encoded whole, from nothing cached, gets the same id: the leaves cut
    // again in part are the leaves a whole cut makes.
    let head = fresh.head().await.unwrap();
    let before = head.tree.root().id().expect("stored");
    let whole_tree = Tree::from_root(whole(&fresh, head.tree.root()).await);
    let again: EncryptedRepository = open_storing(backend()).await.unwrap();
    let head = again.head().await.unwrap();
    let mutation = Mutation { tree: whole_tree, changes: Vec::new(), blobs: Vec::new(), applied: None };
    again.commit(&head, &mutation, CommitInfo::default()).await.unwrap();
    assert_eq!(again.head().await.unwrap().tree.root().id(), Some(before));
}

/// A local folder: a directory of 600 files (about 75 leaves) is read in part.
#[tokio::test]
async fn a_large_local_directory_is_changed_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    commands_on_a_large_directory(|| Backend::Local(path.clone()), 600, 400).await;
}

/// An object store: past 256 leaves (here 3,000 files, about 375), searched eight leaves at a
/// time.
#[tokio::test]
async fn a_large_remote_directory_is_changed_in_part() {
    let store = Arc::new(InMemory::new());
    commands_on_a_large_directory(|| Backend::ObjectStore(store.clone()), 3_000, 200).await;
}
