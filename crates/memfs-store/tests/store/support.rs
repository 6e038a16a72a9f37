//! Shared helpers: opening stores, a minimal engine, and `verify`, the full walk.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use memfs_core::{Command, Dialect, DirRef, Node, ToolResult, execute};
use memfs_crypt::{Credential, FirstKey, KeyFile, KeySlots};
use memfs_store::fault::InjectedFault;
use memfs_store::{
    Backend, CheckOptions, CheckReport, CommitInfo, EncryptedRepository, Error, Fetched, OpenOptions, Repository,
};
use serde_json::Value;

/// The key every test store is locked with (a key file: no Argon2 run per store).
fn key_file() -> KeyFile {
    KeyFile::from_bytes([7; 32])
}

pub(crate) fn credential() -> Credential {
    Credential::KeyFile(key_file())
}

pub(crate) fn options(state_dir: Option<&Path>) -> OpenOptions {
    // Never the platform's folder: a test turns detection off or names its own folder.
    let state_dir = state_dir.map_or(memfs_store::StateDir::Off, |d| memfs_store::StateDir::At(d.to_path_buf()));
    OpenOptions { state_dir, display: "test-store".into(), ..Default::default() }
}

/// Creates a store on `backend`.
pub(crate) async fn init(backend: Backend, state_dir: Option<&Path>) -> Result<EncryptedRepository, Error> {
    init_carrying(backend, state_dir, None).await
}

/// [`init`], committing as a store without a head snapshot does: every object stored before
/// its head, none carried unwritten (`unwritten_bytes: Some(0)`). For tests about stored
/// objects and the snapshot's copies of them.
pub(crate) async fn init_storing(backend: Backend) -> Result<EncryptedRepository, Error> {
    init_carrying(backend, None, Some(0)).await
}

/// [`init`] with `unwritten_bytes` as given (`None`: the default budget).
pub(crate) async fn init_carrying(
    backend: Backend,
    state_dir: Option<&Path>,
    unwritten: Option<usize>,
) -> Result<EncryptedRepository, Error> {
    // A fixed first key: every store of the tests cuts its directories into the same pages,
    // so a command costs the same operations on each (the fault tests count on it).
    init_with_options(
        backend,
        FirstKey::from_bytes([0x5a; 32]),
        OpenOptions { unwritten_bytes: unwritten, ..options(state_dir) },
    )
    .await
}

/// [`init_storing`] with a given first key: reproducible ids and directory pages.
pub(crate) async fn init_with_master(backend: Backend, master: FirstKey) -> Result<EncryptedRepository, Error> {
    init_with_options(backend, master, OpenOptions { unwritten_bytes: Some(0), ..options(None) }).await
}

async fn init_with_options(
    backend: Backend,
    master: FirstKey,
    options: OpenOptions,
) -> Result<EncryptedRepository, Error> {
    EncryptedRepository::init_with_master(
        backend,
        master,
        |master, id| KeySlots::with_key_file(master, id, &key_file()),
        options,
    )
    .await
}

/// [`open`] with `unwritten_bytes` as given (`None`: the default budget).
pub(crate) async fn open_carrying(
    backend: Backend,
    state_dir: Option<&Path>,
    unwritten: Option<usize>,
) -> Result<EncryptedRepository, Error> {
    EncryptedRepository::open(backend, &credential(), OpenOptions { unwritten_bytes: unwritten, ..options(state_dir) })
        .await
}

/// [`open`] as [`init_storing`] commits.
pub(crate) async fn open_storing(backend: Backend) -> Result<EncryptedRepository, Error> {
    open_carrying(backend, None, Some(0)).await
}

/// Opens the store on `backend` as a new client (empty caches).
pub(crate) async fn open(backend: Backend, state_dir: Option<&Path>) -> Result<EncryptedRepository, Error> {
    open_carrying(backend, state_dir, None).await
}

/// Runs one tool input the way the engine (`memfs::Memfs::execute`) does: read the head,
/// fetch what the command needs, commit a mutation by compare-and-swap, and run again on a
/// lost race. A store error ends the command.
pub(crate) async fn run(repo: &dyn Repository, input: &Value) -> Result<ToolResult, Error> {
    run_from(repo, input, false).await
}

/// [`run`] as the engine runs a mutation: its first attempt starts from the head this handle
/// last knew ([`Repository::head_to_write`], no request).
pub(crate) async fn run_warm(repo: &dyn Repository, input: &Value) -> Result<ToolResult, Error> {
    run_from(repo, input, true).await
}

async fn run_from(repo: &dyn Repository, input: &Value, warm: bool) -> Result<ToolResult, Error> {
    let command = Command::from_input(input).expect("a valid tool input");
    let mut fetched = Fetched::new(repo);
    let mut known = warm;
    for _ in 0..16 {
        let from_known = std::mem::take(&mut known);
        let head = if from_known { repo.head_to_write().await? } else { repo.head().await? };
        let outcome = fetched.resolve(|f| execute(&command, &head.tree, Dialect::Spec, f)).await?;
        let Some(mutation) = outcome.mutation else {
            // Never an answer from a kept head: only a commit's compare-and-swap vouches for it.
            if from_known {
                continue;
            }
            return Ok(outcome.result);
        };
        let info = CommitInfo {
            actor: "test".into(),
            command: memfs_store::Record::parse(&input.to_string()),
            changes: mutation.changes.clone(),
        };
        match repo.commit(&head, &mutation, info).await {
            Ok(_) => return Ok(outcome.result),
            Err(Error::Conflict) => continue,
            Err(e) => return Err(e),
        }
    }
    panic!("no commit after 16 attempts with a single writer");
}

/// A whole store as read: its generation and every path under `/memories` (directories end
/// in `/` and map to ""), with file contents.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) generation: u64,
    pub(crate) paths: BTreeMap<String, String>,
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "generation {}", self.generation)?;
        for (path, content) in &self.paths {
            writeln!(f, "  {path} = {:?}", content)?;
        }
        Ok(())
    }
}

/// The full verification: reads the head, walks every directory from the root and opens
/// every file's content, checking each size against the directory entry. Run it on a newly
/// opened client, so that nothing comes from a cache.
pub(crate) async fn verify(repo: &dyn Repository) -> Result<Snapshot, Error> {
    let head = repo.head().await?;
    let mut paths = BTreeMap::new();
    walk(repo, head.tree.root(), memfs_core::ROOT.to_owned(), &mut paths).await?;
    Ok(Snapshot { generation: head.generation, paths })
}

async fn walk(
    repo: &dyn Repository,
    dir: &DirRef,
    path: String,
    paths: &mut BTreeMap<String, String>,
) -> Result<(), Error> {
    let dir = match (dir.dir(), dir.id()) {
        (Some(d), _) => d.clone(),
        (None, Some(id)) => repo.dir(&id).await?,
        (None, None) => panic!("a directory reference with neither content nor id at {path}"),
    };
    for (name, node) in dir.entries() {
        let child = format!("{path}/{name}");
        match node {
            Node::File(file) => {
                let content = repo.blob(&file.id).await?;
                assert_eq!(content.len() as u64, file.size, "size of {child} disagrees with its directory entry");
                let text = String::from_utf8(content.to_vec()).expect("test contents are UTF-8");
                paths.insert(child, text);
            }
            Node::Dir(sub) => {
                paths.insert(format!("{child}/"), String::new());
                Box::pin(walk(repo, sub, child, paths)).await?;
            }
        }
    }
    Ok(())
}

/// The store's own integrity check, reading every content: the head, every commit back to
/// the first, every directory of every commit's tree and every file content must open.
/// Returns how many stored objects nothing refers to (left by interrupted commands; `gc`
/// removes them).
pub(crate) async fn check(repo: &EncryptedRepository) -> u64 {
    let report: CheckReport = repo.check(CheckOptions { read_data: true }, &()).await.expect("check runs");
    assert!(report.problems.is_empty(), "check found problems: {:#?}", report.problems);
    report.unreferenced
}

/// The injected fault somewhere in `e`'s source chain.
pub(crate) fn injected(e: &Error) -> Option<&InjectedFault> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(fault) = s.downcast_ref::<InjectedFault>() {
            return Some(fault);
        }
        source = s.source();
    }
    None
}
