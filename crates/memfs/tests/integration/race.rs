//! Two agents race on one line: both read the same head, both try to commit. The store's
//! compare-and-swap lets exactly one in; the other re-runs against the new content and gets
//! exactly the answer it would have got had it come second, never a silent overwrite.
//!
//! The race is made deterministic by a repository wrapper ([`Race`]) shared by two `Memfs`
//! handles: it holds each handle's first commit until both have arrived (so both were computed
//! on the same head), lets the chosen winner's through, and lets the loser's through only once
//! the winner's has landed. Runs on `memory://`, the local folder, and S3 (moto) and Azure
//! (Azurite) when their variables are set (`MEMFS_TEST_CLOUD=required` makes them mandatory).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use memfs::StateDir;
use memfs::history::Shown;
use memfs::{Credential, Dialect, KdfParams, KeyFile, Memfs, OpenOptions, Stats};
use memfs_core::{Dir, Mutation, ObjectId};
use memfs_store::{CommitInfo, Error as StoreError, Head, Repository, WithHistory};
use serde_json::json;
use tokio::sync::{Barrier, watch};

use crate::support::{check_text, persistent_backends, persistent_location};

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A repository that stages a race between the first two commits it is asked for: both wait
/// until both have arrived; then the one whose recorded command contains `winner` goes first,
/// and the other goes once that one has returned. Later commits pass straight through.
struct Race {
    inner: Arc<dyn Repository>,
    winner: String,
    arrived: Barrier,
    won: watch::Sender<bool>,
    staged: AtomicUsize,
    /// Commits that reached the inner repository, with what they returned (`Ok(generation)`
    /// or the error's text), in order.
    outcomes: std::sync::Mutex<Vec<(String, Result<u64, String>)>>,
}

impl Race {
    fn new(inner: Arc<dyn Repository>, winner: &str) -> Self {
        Race {
            inner,
            winner: winner.to_owned(),
            arrived: Barrier::new(2),
            won: watch::channel(false).0,
            staged: AtomicUsize::new(0),
            outcomes: std::sync::Mutex::default(),
        }
    }

    async fn staged_commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, StoreError> {
        let command = info.command.to_json();
        if self.staged.fetch_add(1, Ordering::SeqCst) < 2 {
            self.arrived.wait().await;
            if !command.contains(&self.winner) {
                let mut won = self.won.subscribe();
                won.wait_for(|w| *w).await.expect("the winner's commit returns");
            }
        }
        let result = self.inner.commit(base, mutation, info).await;
        self.outcomes
            .lock()
            .expect("outcomes")
            .push((command.clone(), result.as_ref().map(|g| *g).map_err(|e| e.to_string())));
        if command.contains(&self.winner) {
            self.won.send_replace(true);
        }
        result
    }
}

impl fmt::Display for Race {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

// `Repository` is an `async_trait`; these are the signatures that macro produces.
impl Repository for Race {
    fn head<'life0, 'async_trait>(&'life0 self) -> Boxed<'async_trait, Head>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        self.inner.head()
    }

    fn dir<'life0, 'life1, 'async_trait>(&'life0 self, id: &'life1 ObjectId) -> Boxed<'async_trait, Arc<Dir>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        self.inner.dir(id)
    }

    fn blob<'life0, 'life1, 'async_trait>(&'life0 self, id: &'life1 ObjectId) -> Boxed<'async_trait, Arc<[u8]>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        self.inner.blob(id)
    }

    fn address(&self, content: &[u8]) -> ObjectId {
        self.inner.address(content)
    }

    fn commit<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        base: &'life1 Head,
        mutation: &'life2 Mutation,
        info: CommitInfo,
    ) -> Boxed<'async_trait, u64>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(self.staged_commit(base, mutation, info))
    }
}

/// The gate keeps no history: only tool commands go through it.
impl WithHistory for Race {
    fn history(&self) -> Option<&memfs_store::EncryptedRepository> {
        None
    }
}

const PATH: &str = "/memories/notes.md";
const ORIGINAL: &str = "status: draft\nowner: nobody\n";

fn key() -> Credential {
    Credential::KeyFile(KeyFile::from_bytes([0x5a; 32]))
}

/// A fresh store holding `PATH` = `ORIGINAL`, opened with its history, on `backend`; plus the
/// folder of a local store, removed on drop.
async fn store(backend: &str) -> (Memfs, Option<tempfile::TempDir>) {
    let (fs, dir) = if backend == "memory" {
        (Memfs::ephemeral(Dialect::Spec).expect("memory:// opens"), None)
    } else {
        let (location, dir) = persistent_location(backend).expect("the backend's variables");
        Memfs::init(&location, &key(), KdfParams::DEFAULT).await.expect("init");
        let options = OpenOptions { credential: Some(key()), state_dir: StateDir::Off, ..Default::default() };
        (Memfs::open(&location, options).await.expect("open"), dir)
    };
    let created = fs.call(&json!({"command": "create", "path": PATH, "file_text": ORIGINAL})).await;
    check_text("create", &created.content, &format!("File created successfully at: {PATH}"));
    (fs, dir)
}

/// What the answer and the content are when the two commands run one after the other.
async fn sequential(first: &serde_json::Value, second: &serde_json::Value, dialect: Dialect) -> (String, bool, String) {
    let (fs, _) = store("memory").await;
    assert!(!fs.call_with(first, dialect).await.is_error);
    let second = fs.call_with(second, dialect).await;
    (second.content, second.is_error, content(&fs).await)
}

async fn content(fs: &Memfs) -> String {
    match fs.show(&format!("HEAD:{PATH}")).await.expect("show") {
        Shown::File(bytes) => String::from_utf8(bytes.to_vec()).expect("UTF-8"),
        _ => panic!("{PATH} is not a file"),
    }
}

/// Every backend to race on.
fn backends() -> Vec<&'static str> {
    let mut out = vec!["memory"];
    out.extend(persistent_backends());
    out
}

/// Agents A and B replace the same line at once, each in `dialect`; `winner` ("A" or "B") is
/// let through first. Returns both answers' results and both handles' stats.
struct Raced {
    a: memfs::ToolResult,
    b: memfs::ToolResult,
    a_stats: Stats,
    b_stats: Stats,
    outcomes: Vec<(String, Result<u64, String>)>,
}

async fn race(fs: &Memfs, inputs: [&serde_json::Value; 2], winner: &str, dialect: Dialect) -> Raced {
    let marker = if winner == "A" { "by A" } else { "by B" };
    let gate: Arc<Race> = Arc::new(Race::new(fs.repository().clone(), marker));
    let agent_a = Memfs::with_repository(gate.clone(), dialect);
    let agent_b = Memfs::with_repository(gate.clone(), dialect);
    let (a, b) = tokio::join!(agent_a.call(inputs[0]), agent_b.call(inputs[1]));
    let outcomes = gate.outcomes.lock().expect("outcomes").clone();
    Raced { a, b, a_stats: agent_a.stats(), b_stats: agent_b.stats(), outcomes }
}

#[tokio::test]
async fn str_replace_on_the_same_line_one_wins_the_other_answers_as_second() {
    let a_input =
        json!({"command": "str_replace", "path": PATH, "old_str": "status: draft", "new_str": "status: reviewed by A"});
    let b_input =
        json!({"command": "str_replace", "path": PATH, "old_str": "status: draft", "new_str": "status: reviewed by B"});
    let not_verbatim =
        format!("No replacement was performed, old_str `status: draft` did not appear verbatim in {PATH}.");
    for backend in backends() {
        for dialect in [Dialect::Spec, Dialect::PythonSdk] {
            for winner in ["A", "B"] {
                let what = format!("{backend} [{dialect}] {winner} wins");
                let (fs, _dir) = store(backend).await;
                let r = race(&fs, [&a_input, &b_input], winner, dialect).await;
                let (won, lost, won_stats, lost_stats, won_input, lost_input) = if winner == "A" {
                    (&r.a, &r.b, r.a_stats, r.b_stats, &a_input, &b_input)
                } else {
                    (&r.b, &r.a, r.b_stats, r.a_stats, &b_input, &a_input)
                };
                let new_line = format!("status: reviewed by {winner}");
                check_text(
                    &format!("{what}: the winner's answer"),
                    &won.content,
                    &format!(
                        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t{new_line}\n     2\towner: nobody\n     3\t"
                    ),
                );
                assert!(!won.is_error, "{what}");
                check_text(&format!("{what}: the loser's answer"), &lost.content, &not_verbatim);
                assert!(lost.is_error, "{what}: the loser's answer is an error");
                // Exactly what it gets when it comes second.
                let (second, second_error, second_content) = sequential(won_input, lost_input, dialect).await;
                check_text(&format!("{what}: the loser against coming second"), &lost.content, &second);
                assert_eq!(lost.is_error, second_error, "{what}");

                // The winner's edit stands; nothing was overwritten.
                let expected = format!("{new_line}\nowner: nobody\n");
                check_text(&format!("{what}: the content"), &content(&fs).await, &expected);
                check_text(&format!("{what}: the content against coming second"), &second_content, &expected);
                assert_eq!(won_stats, Stats { commands: 1, commits: 1, conflicts: 0 }, "{what}: the winner");
                assert_eq!(lost_stats, Stats { commands: 1, commits: 0, conflicts: 1 }, "{what}: the loser");
                // The store saw two commits on the same head: the winner's, then the loser's
                // refused; the loser's re-run made none.
                let winner_command = format!("reviewed by {winner}");
                assert_eq!(r.outcomes.len(), 2, "{what}: {:?}", r.outcomes);
                assert!(r.outcomes[0].0.contains(&winner_command), "{what}: {:?}", r.outcomes);
                assert_eq!(r.outcomes[0].1, Ok(2), "{what}");
                assert!(!r.outcomes[1].0.contains(&winner_command), "{what}: {:?}", r.outcomes);
                assert_eq!(
                    r.outcomes[1].1,
                    Err("the store changed since it was read (another writer committed first)".to_owned()),
                    "{what}"
                );
                // History: the create and the winner's replacement, nothing else.
                let log = fs.log(None, None).await.expect("log");
                let commands: Vec<&str> = log.iter().map(|c| c.command.as_str()).collect();
                assert_eq!(commands.len(), 2, "{what}: {commands:?}");
                let recorded: serde_json::Value = serde_json::from_str(commands[0]).expect("JSON");
                assert_eq!(&recorded, won_input, "{what}");
            }
        }
    }
}

#[tokio::test]
async fn str_replace_on_different_lines_both_land() {
    // The loser's edit is still valid on the winner's content: re-run, it applies on top.
    let a_input =
        json!({"command": "str_replace", "path": PATH, "old_str": "status: draft", "new_str": "status: reviewed by A"});
    let b_input =
        json!({"command": "str_replace", "path": PATH, "old_str": "owner: nobody", "new_str": "owner: agent by B"});
    for backend in backends() {
        for dialect in [Dialect::Spec, Dialect::PythonSdk] {
            let what = format!("{backend} [{dialect}]");
            let (fs, _dir) = store(backend).await;
            let r = race(&fs, [&a_input, &b_input], "A", dialect).await;
            let snippet = |body: &str| {
                format!(
                    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{body}"
                )
            };
            check_text(
                &format!("{what}: A"),
                &r.a.content,
                &snippet("     1\tstatus: reviewed by A\n     2\towner: nobody\n     3\t"),
            );
            // B's snippet shows A's line: it was computed on A's content.
            check_text(
                &format!("{what}: B"),
                &r.b.content,
                &snippet("     1\tstatus: reviewed by A\n     2\towner: agent by B\n     3\t"),
            );
            assert!(!r.a.is_error && !r.b.is_error, "{what}");
            check_text(&format!("{what}: content"), &content(&fs).await, "status: reviewed by A\nowner: agent by B\n");
            assert_eq!(r.a_stats, Stats { commands: 1, commits: 1, conflicts: 0 }, "{what}: A");
            assert_eq!(r.b_stats, Stats { commands: 1, commits: 1, conflicts: 1 }, "{what}: B");
            let results: Vec<&Result<u64, String>> = r.outcomes.iter().map(|(_, r)| r).collect();
            assert_eq!(
                results,
                [
                    &Ok(2),
                    &Err("the store changed since it was read (another writer committed first)".to_owned()),
                    &Ok(3)
                ],
                "{what}"
            );
            assert_eq!(fs.log(None, None).await.expect("log").len(), 3, "{what}");
        }
    }
}

/// Two writers of one store, each a handle of its own (as two processes).
async fn two_writers(backend: &str) -> (Memfs, Memfs, Option<tempfile::TempDir>) {
    let (location, dir) = persistent_location(backend).expect("the backend's variables");
    Memfs::init(&location, &key(), KdfParams::DEFAULT).await.expect("init");
    let options = || OpenOptions { credential: Some(key()), state_dir: StateDir::Off, ..Default::default() };
    let a = Memfs::open(&location, options()).await.expect("open");
    let b = Memfs::open(&location, options()).await.expect("open");
    (a, b, dir)
}

/// A writer starts a mutation from the head it last knew, without reading it (issue 18). When
/// another writer moved the head meanwhile, an answer that commits nothing is never given from
/// the old head (it is read again), and a commit on it loses its compare-and-swap and runs
/// again at once on the newest: every answer is the one the commands' order gives.
#[tokio::test]
async fn a_warm_writer_never_answers_from_a_head_that_moved_on() {
    for backend in persistent_backends() {
        let (a, b, _dir) = two_writers(backend).await;
        let created = a.call(&json!({"command": "create", "path": PATH, "file_text": ORIGINAL})).await;
        check_text("create", &created.content, &format!("File created successfully at: {PATH}"));
        // B adds a file A's known head lacks; A edits it.
        let other = "/memories/other.md";
        let made = b.call(&json!({"command": "create", "path": other, "file_text": "x\n"})).await;
        check_text("b's create", &made.content, &format!("File created successfully at: {other}"));
        let edited = a.call(&json!({"command": "str_replace", "path": other, "old_str": "x", "new_str": "y"})).await;
        assert!(!edited.is_error, "{backend}: answered from the old head: {}", edited.content);
        check_text(
            "a's edit",
            &edited.content,
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\ty\n     2\t",
        );
        // Both insert at the top, each from a head the other has moved on.
        let b_insert = b.call(&json!({"command": "insert", "path": PATH, "insert_line": 0, "insert_text": "b"})).await;
        let a_insert = a.call(&json!({"command": "insert", "path": PATH, "insert_line": 0, "insert_text": "a"})).await;
        for (who, r) in [("b", &b_insert), ("a", &a_insert)] {
            check_text(who, &r.content, &format!("The file {PATH} has been edited."));
        }
        assert_eq!(content(&a).await, format!("a\nb\n{ORIGINAL}"), "{backend}");
        let (a_stats, b_stats) = (a.stats(), b.stats());
        assert_eq!((a_stats.commits, a_stats.conflicts), (3, 1), "{backend}: a's insert lost once");
        assert_eq!((b_stats.commits, b_stats.conflicts), (2, 1), "{backend}: b's insert lost once");
    }
}

/// A writer's kept head is older than a commit another process of the same client has since
/// remembered (the shared rollback mark, read when this process writes its own): that is a
/// stale copy, not a rollback, and the store is read again instead of refusing.
#[tokio::test]
async fn a_kept_head_older_than_the_clients_mark_is_read_again_not_called_a_rollback() {
    for backend in persistent_backends() {
        let (location, _dir) = persistent_location(backend).expect("the backend's variables");
        Memfs::init(&location, &key(), KdfParams::DEFAULT).await.expect("init");
        let state = tempfile::tempdir().expect("a state folder");
        let options = || OpenOptions {
            credential: Some(key()),
            state_dir: StateDir::At(state.path().into()),
            ..Default::default()
        };
        let create = |n: usize| json!({"command": "create", "path": format!("/memories/f{n}.md"), "file_text": "x"});
        let a = Memfs::open(&location, options()).await.expect("open");
        for n in 0..2 {
            assert!(!a.call(&create(n)).await.is_error, "{backend}");
        }
        {
            // Another process of this client commits twice and, closing, writes its mark.
            let b = Memfs::open(&location, options()).await.expect("open");
            for n in 2..4 {
                assert!(!b.call(&create(n)).await.is_error, "{backend}");
            }
        }
        // A's held-back mark is due: writing it reads B's, newer than the head A keeps.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let answer = a.call(&create(4)).await;
        check_text(backend, &answer.content, "File created successfully at: /memories/f4.md");
    }
}

/// A warm writer whose known head moved on pays for its lost race with the lost swap, the read
/// of the newest head that looks whether the swap landed after all, and its swap on that head:
/// the attempt after a lost race starts from the head that read brought, with no request more
/// (its own compare-and-swap vouches for it). Counted on an object store, where each request is
/// a round trip.
#[tokio::test]
async fn a_lost_race_costs_the_swap_one_read_and_the_swap_again() {
    use memfs_crypt::{KeyFile as CryptKeyFile, KeySlots};
    use memfs_store::fault::FaultStore;
    use memfs_store::{Backend, EncryptedRepository, OpenOptions as StoreOptions, StateDir as StoreStateDir};

    let store = Arc::new(FaultStore::new(object_store::memory::InMemory::new()));
    let key = || CryptKeyFile::from_bytes([9; 32]);
    let options = || StoreOptions { state_dir: StoreStateDir::Off, ..StoreOptions::default() };
    let backend = || Backend::ObjectStore(store.clone());
    let repo_a = EncryptedRepository::init(backend(), |root, id| KeySlots::with_key_file(root, id, &key()), options())
        .await
        .expect("init");
    let repo_b =
        EncryptedRepository::open(backend(), &memfs_crypt::Credential::KeyFile(key()), options()).await.expect("open");
    let a = Memfs::with_repository(Arc::new(repo_a), Dialect::Spec);
    let b = Memfs::with_repository(Arc::new(repo_b), Dialect::Spec);
    let first = b.call(&json!({"command": "create", "path": "/memories/b1.md", "file_text": "b\n"})).await;
    check_text("b's first create", &first.content, "File created successfully at: /memories/b1.md");
    // A reads the head B left and moves it on; B still knows the one it wrote.
    let made = a.call(&json!({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})).await;
    check_text("a's create", &made.content, "File created successfully at: /memories/a.md");

    let before = store.plan().counts();
    let second = b.call(&json!({"command": "create", "path": "/memories/b2.md", "file_text": "b\n"})).await;
    check_text("b's second create", &second.content, "File created successfully at: /memories/b2.md");
    let cost = store.plan().counts().since(&before);
    assert_eq!((cost.get, cost.put), (1, 2), "{cost:?}");
    assert_eq!(b.stats(), Stats { commands: 2, commits: 2, conflicts: 1 });
    let listing = b.call(&json!({"command": "view", "path": "/memories"})).await;
    assert!(["a.md", "b1.md", "b2.md"].iter().all(|f| listing.content.contains(f)), "{}", listing.content);
}
