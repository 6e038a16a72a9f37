//! The encrypted, content-addressed repository over an object store.
//!
//! Layout under the store's prefix (see `docs/FORMAT.md`):
//! - `memfs.keys`: the store id and the key slots that wrap the root key (JSON);
//! - `objects/{id[0..2]}/{id}`: immutable sealed objects (file contents, directories, commits),
//!   named by keyed hashes of their plaintext, so equal contents are stored once;
//! - `head`: the one mutable object that commits change, sealed, naming the newest commit and
//!   its generation, replaced by compare-and-swap. A store with no head yet holds the empty
//!   tree at generation 0; its first commit creates the head (`PutMode::Create`);
//! - `gc.state`: written only by `gc`, sealed, also by compare-and-swap: the retention
//!   horizon and the objects waiting out their grace period before deletion.
//!
//! A mutation writes its new objects first (directories bottom-up, then the commit), then
//! swaps the head. Objects written by a command that then loses the race are unreachable and
//! harmless; `gc` removes them.
//!
//! Round trips: the head carries a snapshot of the commit, its policy and the
//! tree's top directory pages, so a reader with empty caches answers a file view with two
//! sequential requests (the head, then the content). Every object read is cached (immutable,
//! so never stale; optionally also on disk, sealed); the head is read again for every command
//! with a conditional GET (no body when it has not changed), or not at all within
//! [`OpenOptions::max_staleness`].
//!
//! The repository is two parts, each with its own fields: [`Objects`] (`objects.rs`: the keys,
//! the object store, the caches; sealing, storing, opening and verifying an object) and
//! [`Heads`] (`heads.rs`: the head's cell, the head last opened, the newest commit
//! remembered), beside the cells of `gc.state` and `memfs.keys`. Submodules: `objects`,
//! `heads`, `snapshot` (the head sealed and opened, and what it carries), `commit`
//! (compare-and-swap, lost answers, policy changes), `history` (`log`, revisions, past trees),
//! `check`, `gc`, `purge`, `key_set` (`memfs.keys` through `memfs-crypt`'s `KeyStore`:
//! unlocked, a change written and recorded), `keys` (key slots), `rotate` (rotation and
//! shred), `reseal` (objects sealed again under the newest key epoch) and `readdress` (every
//! live object named and sealed again under new keys, for a shred).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use memfs_core::{Dir, DirRef, Mutation, ObjectId, Policy, Totals, Tree};
use memfs_crypt::{Credential, FirstKey, KeySlots, Keyring, ObjectKind, RootKey, StoreKeys};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::disk_cache::DiskCache;
use crate::error::Error;
use crate::format::{InlineKind, id_eq, object_path};
use crate::head::{ConditionalHead, HeadStore};
use crate::local::LocalLog;
use crate::repository::{Anchor, CommitInfo, Head, Repository};
use crate::rollback::Watermark;
use crate::storage::{PARALLEL, PutByPut, Storage};

mod cache;
mod check;
mod commit;
mod confirm;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub(crate) mod fuzzing;
mod gc;
mod heads;
mod history;
mod key_set;
mod keys;
mod missing;
mod objects;
mod parts;
mod plan;
mod purge;
mod readdress;
mod recut;
mod reseal;
mod rotate;
mod snapshot;
mod unlock;

pub use cache::DEFAULT_MEMORY_CACHE_BYTES;
pub use check::{CheckOptions, CheckReport, Problem};
pub use confirm::Confirmed;
pub use gc::{DEFAULT_GRACE_MS, GcOptions, GcReport};
use heads::Heads;
pub use history::CommitRecord;
pub use keys::KeyChange;
pub use memfs_crypt::{FEATURES, FORMAT_VERSION};
use memfs_crypt::{KeysObject, OpenKeys as Keys};
use objects::Objects;
use parts::PartSearch;
pub use purge::{PurgeError, PurgeOptions, PurgeReport};
pub use reseal::{ResealOptions, ResealReport};
pub use rotate::{RotateKeys, Rotation, Shred, ShredKeys};

pub(crate) use crate::rollback::Mark;

/// How many bytes a writer's snapshot takes in the head: the plaintexts of the commit, the
/// policy, directory pages and file contents, each with its kind and length
/// (docs/FORMAT.md explains the choice). Readers accept any size.
pub const HEAD_SNAPSHOT_BYTES: usize = 64 << 10;

/// The default budget of objects carried unwritten in the head on object storage: half the
/// snapshot. A warm commit then costs one request (the head swap) until the carried objects
/// pass it; the commit that passes it stores them first (two round trips). Commits of a few
/// kilobytes each (a file, a few directory pages, the commit) pass it every 5 to 10 commits.
pub const UNWRITTEN_BYTES: usize = HEAD_SNAPSHOT_BYTES / 2;

/// The snapshot budget in a local folder: none. A read there costs no round trip, but every
/// head is a record in the log, so a snapshot was bytes written per commit for nothing: with
/// 4 KiB (the commit, the policy, the first pages) a create wrote about 1.2 KB more, and
/// neither a new process's first answer nor a session got faster (`cargo bench -p memfs-cli
/// --bench scale`, `scripts/bench-vs-sdk.sh`, 2026-11-26).
const LOCAL_HEAD_SNAPSHOT_BYTES: usize = 0;

/// How many commits back a head names on object storage (its `recent`), so that a
/// reader that last saw up to this many commits ago, and a writer that lost a race to commits
/// made since its head, need not fetch the commits between (one request each). Sixteen writers
/// on moto fetched about four commits per mutation walking back to the commit they knew
/// (3.6 object reads per mutation, most of all requests but the writes themselves); a
/// writer that waits out a lost race sees some 15 to 30 commits go by. 32 ids are 2.1 KB of
/// the head.
const RECENT_COMMITS: usize = 32;

/// How many written objects a process remembers the epoch of (about 4 MB).
const WRITTEN_MEMORY: usize = 65_536;

/// Where a store lives.
pub enum Backend {
    /// A local folder (`file:///path`): an append-only log ([`memfs_log::LogStore`]),
    /// one sync per commit.
    Local(PathBuf),
    /// Process memory (`memory://`).
    Memory,
    /// Any object store with conditional puts (`PutMode::Create` and `PutMode::Update`).
    ObjectStore(Arc<dyn ObjectStore>),
}

/// Where a client keeps what it remembers of each store (the newest commit seen, for
/// rollback and fork detection).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StateDir {
    /// The platform's state folder: `$XDG_STATE_HOME/memfs` (on Linux, else
    /// `~/.local/state/memfs`), the local data folder's `memfs` on macOS and Windows
    /// (`dirs::state_dir`, else `dirs::data_local_dir`). If neither is known, opening fails.
    #[default]
    Platform,
    /// This folder.
    At(PathBuf),
    /// No state: rollbacks and forks go undetected. Only for stores nobody else can serve
    /// (tests, a store in process memory).
    Off,
}

impl StateDir {
    /// The folder, or `None` when detection is off.
    pub fn resolve(&self) -> Result<Option<PathBuf>, Error> {
        match self {
            StateDir::Platform => {
                dirs::state_dir().or_else(dirs::data_local_dir).map(|d| Some(d.join("memfs"))).ok_or(Error::NoStateDir)
            }
            StateDir::At(dir) => Ok(Some(dir.clone())),
            StateDir::Off => Ok(None),
        }
    }
}

/// Options for opening a store.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Where to remember the newest commit seen of each store (rollback and fork detection);
    /// by default the platform's state folder.
    pub state_dir: StateDir,
    /// A commit id (or a prefix of at least 8 hex digits, as `memfs log` shows it) to accept
    /// as the head even if it does not descend from the commit this client remembers: the
    /// user's explicit answer to [`Error::Fork`] or [`Error::Rollback`]. Once accepted, it is
    /// the remembered commit.
    pub trust_head: Option<String>,
    /// How the store is named in messages (a redacted URL).
    pub display: String,
    /// How old the head may be before [`Repository::head`] asks the store again (`None`, the
    /// default: every call asks, with a conditional GET).
    ///
    /// Within the bound, `head` answers from the head this client last read or committed,
    /// with no request: a reader may then miss what *other* clients committed in the last
    /// `max_staleness` (a view shows the tree as it was; a file another client created may
    /// look missing, one it deleted may still show). Its own commits are always seen.
    /// Writes stay safe: a mutation based on a stale head fails its compare-and-swap, the
    /// head is read again at once, and the command runs again on the new one, so no update is
    /// ever lost; it only costs the retry. History, `check`, `gc` and `purge` always read
    /// the current head.
    pub max_staleness: Option<Duration>,
    /// A folder for an on-disk cache of immutable objects (file contents and directory pages),
    /// kept under `{cache_dir}/{store id}/` as stored: sealed, opened and verified on every
    /// read; a damaged file is deleted and fetched again. `None` (the default): memory only.
    /// Bounded to about [`crate::DISK_CACHE_BYTES`] per store (oldest files evicted first).
    pub cache_dir: Option<PathBuf>,
    /// The byte budget of the in-memory cache of immutable objects (`None`: the default,
    /// [`DEFAULT_MEMORY_CACHE_BYTES`], 64 MiB). Past it, the least useful entries are evicted.
    pub memory_cache_bytes: Option<usize>,
    /// The bytes of new objects a commit may carry unwritten in the head instead of storing
    /// them first (docs/FORMAT.md, "Objects carried unwritten"). `None` (the
    /// default): half the head's snapshot budget, [`UNWRITTEN_BYTES`] on object storage, 0 in
    /// a local folder and in memory (no snapshot there). `Some(0)` stores every object first.
    pub unwritten_bytes: Option<usize>,
    /// Who the commits the store makes by itself are by: the record of a change `memfs.keys`
    /// takes on open (see [`EncryptedRepository::open`]) and
    /// of a key-slot change, rotation or shred.
    pub actor: String,
}

/// An open encrypted repository.
pub struct EncryptedRepository {
    /// The sealed objects: the keys, the object store and the caches (`objects.rs`).
    objects: Objects,
    /// The head: its cell, the one last opened, the newest commit remembered (`heads.rs`).
    heads: Heads,
    /// The cell gc's state is kept in (`gc.rs`).
    gc_state: Box<dyn HeadStore>,
    /// The cell `memfs.keys` is kept in, read again when the keys may have changed.
    keys_cell: Box<dyn HeadStore>,
    /// This store's id (32 hex digits), empty for an ephemeral store.
    store_id: String,
    /// How the store is named in messages (a redacted URL).
    display: String,
    /// The confirmation opening made in `memfs.keys` ([`EncryptedRepository::confirmed`]).
    confirmed: Option<Confirmed>,
}

const KEYS_PATH: &str = "memfs.keys";
const HEAD_PATH: &str = "head";
const GC_STATE_PATH: &str = "gc.state";

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The object store and the stores of its mutable objects (head, gc state, key slots).
struct Connection {
    store: Arc<dyn ObjectStore>,
    head: Box<dyn HeadStore>,
    gc_state: Box<dyn HeadStore>,
    keys: Box<dyn HeadStore>,
    storage: Arc<dyn Storage>,
    snapshot_budget: usize,
    /// See [`RECENT_COMMITS`]: none in a local folder (a walk there reads the log, and every
    /// byte of a head is written to it per commit) nor in memory (nobody else reads it).
    recent: usize,
    part_search: PartSearch,
}

impl Connection {
    /// A second connection to the same store (its own head stores over the same objects).
    fn again(&self) -> Connection {
        let head = |path: &str| -> Box<dyn HeadStore> {
            Box::new(ConditionalHead::new(self.storage.clone(), Path::from(path)))
        };
        Connection {
            store: self.store.clone(),
            head: head(HEAD_PATH),
            gc_state: head(GC_STATE_PATH),
            keys: head(KEYS_PATH),
            storage: self.storage.clone(),
            snapshot_budget: self.snapshot_budget,
            recent: self.recent,
            part_search: self.part_search,
        }
    }
}

/// Opens the object store and the head and gc-state stores for a backend.
fn connect(backend: Backend) -> Result<Connection, Error> {
    let conditional = |storage: Arc<dyn Storage>| Connection {
        head: Box::new(ConditionalHead::new(storage.clone(), Path::from(HEAD_PATH))),
        gc_state: Box::new(ConditionalHead::new(storage.clone(), Path::from(GC_STATE_PATH))),
        keys: Box::new(ConditionalHead::new(storage.clone(), Path::from(KEYS_PATH))),
        snapshot_budget: HEAD_SNAPSHOT_BYTES,
        recent: RECENT_COMMITS,
        part_search: PartSearch::FAR,
        store: storage.store().clone(),
        storage,
    };
    Ok(match backend {
        Backend::Local(dir) => {
            create_private_dir(&dir)?;
            // Objects lazy and settled, the head synced (`local.rs`).
            let log = crate::local::open_local_log(&dir).map_err(Error::log_open)?;
            Connection {
                snapshot_budget: LOCAL_HEAD_SNAPSHOT_BYTES,
                recent: 0,
                part_search: PartSearch::NEAR,
                ..conditional(LocalLog::storage(log))
            }
        }
        // Nobody else can ever open this store: no reader for a snapshot.
        Backend::Memory => Connection {
            snapshot_budget: 0,
            recent: 0,
            part_search: PartSearch::NEAR,
            ..conditional(PutByPut::storage(Arc::new(InMemory::new())))
        },
        Backend::ObjectStore(store) => conditional(PutByPut::storage(store)),
    })
}

/// Creates a folder (and its parents) readable by the owner only.
fn create_private_dir(dir: &std::path::Path) -> Result<(), Error> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| Error::io(dir, e))
}

impl EncryptedRepository {
    /// Creates a new store: a fresh root wrapped by `slots` (built by the caller from the root
    /// and the new store id), a keyring with a fresh epoch-0 key, and no commit yet.
    pub async fn init(
        backend: Backend,
        make_slots: impl FnOnce(&RootKey, &[u8; 16]) -> Result<KeySlots, memfs_crypt::Error>,
        options: OpenOptions,
    ) -> Result<Self, Error> {
        Self::init_with_master(backend, FirstKey::generate()?, make_slots, options).await
    }

    /// A new random store id, for [`EncryptedRepository::init_with_id`].
    pub fn new_store_id() -> Result<[u8; 16], Error> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|_| memfs_crypt::Error::Random)?;
        Ok(id)
    }

    /// [`EncryptedRepository::init`] with the store id `id` (from
    /// [`EncryptedRepository::new_store_id`]), known before: a custodian binds a new slot's
    /// key to it ([`EncryptedRepository::seal_new`]).
    pub async fn init_with_id(
        backend: Backend,
        id: [u8; 16],
        make_slots: impl FnOnce(&RootKey, &[u8; 16]) -> Result<KeySlots, memfs_crypt::Error>,
        options: OpenOptions,
    ) -> Result<Self, Error> {
        Self::init_parts(backend, FirstKey::generate()?, id, make_slots, options).await
    }

    /// [`EncryptedRepository::init`] with a given epoch-0 key (and so given address keys)
    /// instead of a random one: for tests that need reproducible ids (and so reproducible
    /// directory pages).
    #[doc(hidden)]
    pub async fn init_with_master(
        backend: Backend,
        master: FirstKey,
        make_slots: impl FnOnce(&RootKey, &[u8; 16]) -> Result<KeySlots, memfs_crypt::Error>,
        options: OpenOptions,
    ) -> Result<Self, Error> {
        Self::init_parts(backend, master, Self::new_store_id()?, make_slots, options).await
    }

    async fn init_parts(
        backend: Backend,
        master: FirstKey,
        id: [u8; 16],
        make_slots: impl FnOnce(&RootKey, &[u8; 16]) -> Result<KeySlots, memfs_crypt::Error>,
        options: OpenOptions,
    ) -> Result<Self, Error> {
        let conn = connect(backend)?;
        let root = RootKey::generate()?;
        let keyring = Keyring::new(&root, &id, &master)?;
        let keys = KeysObject::new(&id, make_slots(&root, &id)?, keyring, &root);
        key_set::KeysHead::plain(&*conn.keys).create(&keys).await?;
        let counter = keys.keyring().counter();
        let store_keys = keys.keyring().open(&root, &id)?;
        let store_id = keys.store_id().to_owned();
        Self::assemble(conn, Keys::new(store_keys, Some((root, counter)), None), store_id, options)
    }

    /// An ephemeral store in process memory with a random key and no key slots.
    pub fn ephemeral() -> Result<Self, Error> {
        let conn = connect(Backend::Memory)?;
        let keys = Keys::new(StoreKeys::from_master(&FirstKey::generate()?), None, None);
        let options = OpenOptions { display: "memory://".into(), state_dir: StateDir::Off, ..Default::default() };
        Self::assemble(conn, keys, String::new(), options)
    }

    /// Opens an existing store with a passphrase or key file.
    ///
    /// A slot that opens the store for the first time since another holder's `memfs key
    /// rotate` confirms the new root here, once: `memfs.keys` is rewritten by compare-and-swap
    /// (if another client changed it meanwhile, it is read and unlocked again), and the
    /// confirmation is recorded in a commit of its own, by [`OpenOptions::actor`];
    /// [`EncryptedRepository::confirmed`] reports it.
    pub async fn open(backend: Backend, credential: &Credential, options: OpenOptions) -> Result<Self, Error> {
        if !local_log_exists(&backend) {
            return Err(Error::NotInitialized);
        }
        let conn = connect(backend)?;
        let mut attempts = 0;
        let set = loop {
            let mut set = key_set::unlock(&conn, credential).await?;
            if !set.changed() {
                break set;
            }
            match key_set::KeysHead::plain(&*conn.keys).write(&mut set).await {
                Ok(()) => break set,
                Err(Error::Conflict) if attempts < 8 => attempts += 1,
                Err(e) => return Err(e),
            }
        };
        let mark = set.object().unrecorded();
        let (keys, store_id) = key_set::into_keys(set)?;
        let actor = options.actor.clone();
        let mut repo = Self::assemble(conn, keys, store_id, options)?;
        if let Some(mark) = mark {
            repo.confirmed = repo.record_confirmation(mark, &actor).await;
        }
        Ok(repo)
    }

    /// The confirmation opening this store made in `memfs.keys`, and the commit that records
    /// it (`None` if none, or if another client recorded it).
    pub fn confirmed(&self) -> Option<&Confirmed> {
        self.confirmed.as_ref()
    }

    /// Whether a store exists at this backend.
    pub async fn exists(backend: Backend) -> Result<bool, Error> {
        if !local_log_exists(&backend) {
            return Ok(false);
        }
        let store = connect(backend)?.store;
        match store.head(&Path::from(KEYS_PATH)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(Error::backend("read", &Path::from(KEYS_PATH), e)),
        }
    }

    fn assemble(conn: Connection, keys: Keys, store_id: String, options: OpenOptions) -> Result<Self, Error> {
        // `store_id` is canonical (decoded and checked, or just made): the names derived from
        // it are the same for every spelling an attacker could write in `memfs.keys`.
        let watermark = match store_id.is_empty() {
            true => None,
            false => options.state_dir.resolve()?.map(|d| Watermark::new(&d, &store_id)),
        };
        let disk = options.cache_dir.as_deref().and_then(|d| DiskCache::new(d, &store_id));
        let cache_bytes = options.memory_cache_bytes.unwrap_or(DEFAULT_MEMORY_CACHE_BYTES);
        Ok(EncryptedRepository {
            objects: Objects::new(keys, conn.store, conn.storage, (cache_bytes, disk), conn.part_search),
            heads: Heads::new(conn.head, watermark, (conn.snapshot_budget, conn.recent), &options),
            gc_state: conn.gc_state,
            keys_cell: conn.keys,
            store_id,
            display: options.display,
            confirmed: None,
        })
    }

    /// The random id of this store (hex), empty for an ephemeral one.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }
}

fn head_id() -> ObjectId {
    // The head has no content address; a fixed id still binds its kind in the AEAD.
    ObjectId::from_bytes([0; 32])
}

/// Whether a local folder holds a log (always `true` for other backends). Opening a log creates
/// its folder, so a folder without one is no store, and looking must not leave one behind.
fn local_log_exists(backend: &Backend) -> bool {
    match backend {
        Backend::Local(dir) => dir.join("log").is_dir(),
        _ => true,
    }
}

/// A sealed object that does not open: written by a newer memfs, or tampered with.
fn open_error(e: memfs_crypt::Error, object: String) -> Error {
    match e {
        memfs_crypt::Error::UnknownFormat { version } => Error::UnsupportedEnvelope { object, version },
        _ => Error::Tampered { object },
    }
}

impl fmt::Display for EncryptedRepository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

impl EncryptedRepository {
    /// The head as [`Repository::head`] gives it, read again unless the one last read or
    /// written is younger than `max_age`.
    async fn head_within(&self, max_age: Option<Duration>) -> Result<Head, Error> {
        let Some((head, version)) = self.load_head(max_age).await? else {
            // No head yet: the empty tree at generation 0; the first commit creates the head.
            let anchor = Anchor { version: None, commit: None, policy: None, keys: None, head: None };
            let policy = Arc::new(Policy::default());
            return Ok(Head { tree: Tree::empty(), generation: 0, policy, anchor: Some(anchor) });
        };
        let commit = self.commit_object(&head.commit).await?;
        if commit.generation != head.generation {
            return Err(Error::Corrupt {
                object: "head".into(),
                reason: "generation does not match its commit".into(),
            });
        }
        if !head.inline.iter().any(|o| o.kind == InlineKind::Commit) {
            // Not in the snapshot (too large): its tree's inline pages are primed only now.
            self.prime_dirs(&head, commit.tree)?;
        }
        let tree = Tree::from_root(DirRef::stored(commit.tree, Totals { files: commit.files, bytes: commit.bytes }));
        let policy = self.policy_object(commit.policy.as_ref()).await?;
        let anchor = Anchor {
            version: Some(version),
            commit: Some(head.commit),
            policy: commit.policy,
            keys: head.keys,
            head: Some(head.clone()),
        };
        Ok(Head { tree, generation: head.generation, policy, anchor: Some(anchor) })
    }
}

#[async_trait]
impl Repository for EncryptedRepository {
    async fn head(&self) -> Result<Head, Error> {
        self.head_within(self.heads.max_staleness).await
    }

    async fn head_to_write(&self) -> Result<Head, Error> {
        self.head_within(Some(Duration::MAX)).await
    }

    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error> {
        if let Some(d) = self.objects.cache().dir(id) {
            return Ok(d);
        }
        let (dir, pages) = self.load_dir(id).await?;
        let dir = Arc::new(dir);
        self.objects.cache().insert_dir(*id, dir.clone(), pages.into());
        Ok(dir)
    }

    async fn dir_entry(&self, id: &ObjectId, totals: Totals, name: &memfs_core::Name) -> Result<Arc<Dir>, Error> {
        self.dir_part(id, totals, name).await
    }

    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        if let Some(b) = self.objects.cache().blob(id) {
            return Ok(b);
        }
        let blob: Arc<[u8]> = Arc::from(self.read_object(ObjectKind::Blob, id).await?);
        self.objects.cache().insert_blob(*id, blob.clone());
        Ok(blob)
    }

    fn address(&self, content: &[u8]) -> ObjectId {
        self.objects.keys.blob_address.address(content)
    }

    async fn commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error> {
        let policy = base.anchor.as_ref().and_then(|a| a.policy);
        self.commit_with_policy(base, mutation, info, policy, Vec::new()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn conformance_memory() {
        crate::conformance::check_repository(&EncryptedRepository::ephemeral().unwrap()).await;
    }

    #[test]
    fn only_the_canonical_store_id_is_accepted() {
        let decode_store_id = |id: &str| memfs_crypt::decode_store_id(id).map_err(Error::from);
        let id = "00112233445566778899aabbccddeeff";
        assert_eq!(decode_store_id(id).unwrap()[1], 0x11);
        for bad in [&id.to_uppercase(), "00112233445566778899AAbbccddeeff", &id[1..], &format!("{id}00"), ""] {
            let err = decode_store_id(bad).unwrap_err();
            assert_eq!(err.to_string(), "object memfs.keys is corrupt: its store id is not 32 lowercase hex digits");
        }
    }

    /// A head copied from another store under the same first key (the only way it opens at
    /// all) is refused: the store id sealed in it is not this store's.
    #[tokio::test]
    async fn a_head_from_another_store_is_refused() {
        let off = || OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() };
        let key = || memfs_crypt::KeyFile::from_bytes([9; 32]);
        let slots = |r: &RootKey, id: &[u8; 16]| KeySlots::with_key_file(r, id, &key());
        let (a, b): (Arc<dyn ObjectStore>, Arc<dyn ObjectStore>) =
            (Arc::new(InMemory::new()), Arc::new(InMemory::new()));
        let master = || FirstKey::from_bytes([7; 32]);
        let repo_a = EncryptedRepository::init_with_master(Backend::ObjectStore(a.clone()), master(), slots, off())
            .await
            .unwrap();
        let repo_b = EncryptedRepository::init_with_master(Backend::ObjectStore(b.clone()), master(), slots, off())
            .await
            .unwrap();
        for repo in [&repo_a, &repo_b] {
            let head = repo.head().await.unwrap();
            let mutation = Mutation { tree: head.tree.clone(), changes: Vec::new(), blobs: Vec::new(), applied: None };
            repo.commit(&head, &mutation, CommitInfo::default()).await.unwrap();
        }
        let head_a = a.get(&Path::from(HEAD_PATH)).await.unwrap().bytes().await.unwrap();
        b.put(&Path::from(HEAD_PATH), head_a.into()).await.unwrap();
        let fresh =
            EncryptedRepository::open(Backend::ObjectStore(b), &Credential::KeyFile(key()), off()).await.unwrap();
        let err = fresh.head().await.err().unwrap();
        assert_eq!(err.to_string(), "the head belongs to another store (its sealed store id is not this store's)");
    }
}
