//! The encrypted, content-addressed repository over an object store.
//!
//! Layout under the store's prefix (see `docs/FORMAT.md`):
//! - `memfs.keys`: the store id and the key slots that wrap the master key (JSON);
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
//! Round trips: the head carries a snapshot (format 4) of the commit, its policy and the
//! tree's top directory pages, so a reader with empty caches answers a file view with two
//! sequential requests (the head, then the content). Every object read is cached (immutable,
//! so never stale; optionally also on disk, sealed); the head is read again for every command
//! with a conditional GET (no body when it has not changed), or not at all within
//! [`OpenOptions::max_staleness`].
//!
//! History (`log`, revisions, past trees), `check` and `gc` live in the submodules.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bytes::Bytes;
use futures::TryStreamExt;
use futures::future::try_join_all;
use memfs_core::{Dir, DirRef, Mutation, Node, ObjectId, Policy, Totals, Tree};
use memfs_crypt::{AddressKey, Credential, KeySlots, MasterKey, ObjectKey, ObjectKind};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode};
use serde::{Deserialize, Serialize};

use crate::disk_cache::DiskCache;
use crate::error::Error;
use crate::format::{self, CommitObject, HeadObject, InlineKind, InlineObject};
use crate::head::{ConditionalHead, HeadStore, HeadVersion};
use crate::log_store::LogStore;
use crate::pages;
use crate::repository::{Anchor, CommitInfo, Head, Repository};
use crate::rollback::Watermark;

mod check;
mod gc;
mod history;
mod keys;
mod purge;

pub use check::{CheckOptions, CheckReport, Problem};
pub use gc::{DEFAULT_GRACE_MS, GcOptions, GcReport};
pub use history::CommitRecord;
pub use purge::{PurgeError, PurgeReport};

/// The on-storage format this code writes.
pub const FORMAT_VERSION: u64 = 4;

/// How many bytes a writer's snapshot takes in the head: the plaintexts of the commit, the
/// policy and directory pages, as JSON strings (docs/FORMAT.md explains the choice). Readers
/// accept any size.
pub const HEAD_SNAPSHOT_BYTES: usize = 64 << 10;

/// The snapshot budget in a local folder, where a read costs no round trip but every head
/// is a record in the log: the commit, the policy and the first pages only.
const LOCAL_HEAD_SNAPSHOT_BYTES: usize = 4 << 10;

/// How many times a head write whose answer was lost is sent again (after 200, 400, 800 ms).
const HEAD_RESENDS: u32 = 3;

/// How many commits back [`EncryptedRepository::landed`] looks for a commit whose answer was lost.
const LANDED_WALK: u64 = 64;

/// Upper bound on cached file contents, in bytes; immutable objects never go stale.
const BLOB_CACHE_BYTES: usize = 64 << 20;

/// Where a store lives.
pub enum Backend {
    /// A local folder (`file:///path`): an append-only log ([`crate::log_store::LogStore`]),
    /// one sync per commit.
    Local(PathBuf),
    /// Process memory (`memory://`).
    Memory,
    /// Any object store with conditional puts (`PutMode::Create` and `PutMode::Update`).
    ObjectStore(Arc<dyn ObjectStore>),
}

/// The unsealed key object, `memfs.keys`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysObject {
    format: String,
    version: u64,
    /// Random, chosen at creation; names the store in the rollback state.
    store_id: String,
    slots: KeySlots,
}

/// Options for opening a store.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Where to keep the per-store rollback watermark; `None` disables rollback detection.
    pub state_dir: Option<PathBuf>,
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
}

/// Keys of an open store. Zeroized on drop (each field is).
struct Keys {
    objects: ObjectKey,
    blob_address: AddressKey,
    tree_address: AddressKey,
}

/// An open encrypted repository.
pub struct EncryptedRepository {
    store: Arc<dyn ObjectStore>,
    head: Box<dyn HeadStore>,
    gc_state: Box<dyn HeadStore>,
    keys: Keys,
    store_id: String,
    watermark: Option<Watermark>,
    display: String,
    cache: Mutex<Cache>,
    /// The head last opened: its sealed bytes and what they hold (its inline objects are in
    /// the cache), so an unchanged head is not opened twice.
    parsed_head: Mutex<Option<(Bytes, Arc<HeadObject>)>>,
    /// See [`OpenOptions::max_staleness`].
    max_staleness: Option<Duration>,
    /// Plaintext bytes a commit puts into the head's snapshot.
    snapshot_budget: usize,
    /// See [`OpenOptions::cache_dir`].
    disk: Option<DiskCache>,
    /// The log of a local store, which `gc` compacts.
    log: Option<Arc<LogStore>>,
}

#[derive(Default)]
struct Cache {
    /// Whole directories by id (their top page's), children by id.
    dirs: HashMap<ObjectId, Arc<Dir>>,
    /// The pages of each cached directory, so a commit need not write again the pages of the
    /// version it changed that are still the same.
    pages: HashMap<ObjectId, Arc<[ObjectId]>>,
    blobs: HashMap<ObjectId, Arc<[u8]>>,
    blob_bytes: usize,
    commits: HashMap<ObjectId, Arc<CommitObject>>,
    policies: HashMap<ObjectId, Arc<Policy>>,
    /// Plaintexts of directory pages and policies, as stored (verified against their ids):
    /// what a commit copies into the head's snapshot, and where a directory's pages are
    /// looked up before they are fetched.
    plains: HashMap<ObjectId, Arc<[u8]>>,
}

impl Cache {
    /// Drops everything known about `id` (an object deleted from the store).
    fn forget(&mut self, id: &ObjectId) {
        self.dirs.remove(id);
        self.pages.remove(id);
        self.commits.remove(id);
        self.policies.remove(id);
        self.plains.remove(id);
        if let Some(blob) = self.blobs.remove(id) {
            self.blob_bytes = self.blob_bytes.saturating_sub(blob.len());
        }
    }

    fn insert_blob(&mut self, id: ObjectId, blob: Arc<[u8]>) {
        if self.blob_bytes + blob.len() > BLOB_CACHE_BYTES {
            self.blobs.clear();
            self.blob_bytes = 0;
        }
        self.blob_bytes += blob.len();
        self.blobs.insert(id, blob);
    }
}

const KEYS_PATH: &str = "memfs.keys";
const HEAD_PATH: &str = "head";
const GC_STATE_PATH: &str = "gc.state";
const OBJECTS_PREFIX: &str = "objects";

fn object_path(id: &ObjectId) -> Path {
    Path::from(format::object_name(id))
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The object store and the stores of its mutable objects (head, gc state, key slots).
struct Connection {
    store: Arc<dyn ObjectStore>,
    head: Box<dyn HeadStore>,
    gc_state: Box<dyn HeadStore>,
    keys: Box<dyn HeadStore>,
    log: Option<Arc<LogStore>>,
    snapshot_budget: usize,
}

/// Opens the object store and the head and gc-state stores for a backend.
fn connect(backend: Backend) -> Result<Connection, Error> {
    let conditional = |store: Arc<dyn ObjectStore>, log: Option<Arc<LogStore>>| Connection {
        head: Box::new(ConditionalHead::new(store.clone(), Path::from(HEAD_PATH))),
        gc_state: Box::new(ConditionalHead::new(store.clone(), Path::from(GC_STATE_PATH))),
        keys: Box::new(ConditionalHead::new(store.clone(), Path::from(KEYS_PATH))),
        snapshot_budget: HEAD_SNAPSHOT_BYTES,
        store,
        log,
    };
    Ok(match backend {
        Backend::Local(dir) => {
            create_private_dir(&dir)?;
            // Objects are appended without a sync; the head's put syncs the log, and with it
            // every object before it: one sync per commit, and the head never names an object
            // that a power loss could take back.
            let log = Arc::new(LogStore::open(&dir).map_err(|e| Error::backend("open", &Path::from("log"), e))?);
            Connection { snapshot_budget: LOCAL_HEAD_SNAPSHOT_BYTES, ..conditional(log.clone(), Some(log)) }
        }
        // Nobody else can ever open this store: no reader for a snapshot.
        Backend::Memory => Connection { snapshot_budget: 0, ..conditional(Arc::new(InMemory::new()), None) },
        Backend::ObjectStore(store) => conditional(store, None),
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
    /// Creates a new store: a fresh master key wrapped by `slots` (built by the caller from the
    /// master key and the new store id), an empty tree, and the first commit.
    pub async fn init(
        backend: Backend,
        make_slots: impl FnOnce(&MasterKey, &[u8; 16]) -> Result<KeySlots, memfs_crypt::Error>,
        options: OpenOptions,
    ) -> Result<Self, Error> {
        Self::init_with_master(backend, MasterKey::generate()?, make_slots, options).await
    }

    /// [`EncryptedRepository::init`] with a given master key instead of a random one: for
    /// tests that need reproducible ids (and so reproducible directory pages).
    #[doc(hidden)]
    pub async fn init_with_master(
        backend: Backend,
        master: MasterKey,
        make_slots: impl FnOnce(&MasterKey, &[u8; 16]) -> Result<KeySlots, memfs_crypt::Error>,
        options: OpenOptions,
    ) -> Result<Self, Error> {
        let conn = connect(backend)?;
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|_| memfs_crypt::Error::Random)?;
        let keys = KeysObject {
            format: "memfs".into(),
            version: FORMAT_VERSION,
            store_id: hex::encode(id),
            slots: make_slots(&master, &id)?,
        };
        let bytes = serde_json::to_vec_pretty(&keys).expect("key slots serialize");
        match conn.store.put_opts(&Path::from(KEYS_PATH), bytes.into(), PutMode::Create.into()).await {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => return Err(Error::AlreadyInitialized),
            Err(e) => return Err(Error::backend("create", &Path::from(KEYS_PATH), e)),
        }
        Ok(Self::assemble(conn, &master, keys.store_id, options))
    }

    /// An ephemeral store in process memory with a random key and no key slots.
    pub fn ephemeral() -> Result<Self, Error> {
        let conn = connect(Backend::Memory)?;
        let master = MasterKey::generate()?;
        let options = OpenOptions { display: "memory://".into(), ..Default::default() };
        Ok(Self::assemble(conn, &master, String::new(), options))
    }

    /// Opens an existing store with a passphrase or key file.
    pub async fn open(backend: Backend, credential: &Credential, options: OpenOptions) -> Result<Self, Error> {
        if !local_log_exists(&backend) {
            return Err(Error::NotInitialized);
        }
        let conn = connect(backend)?;
        let keys = Self::read_keys(conn.store.as_ref()).await?;
        let id = decode_store_id(&keys.store_id)?;
        let master = keys.slots.unlock(credential, &id)?;
        Ok(Self::assemble(conn, &master, keys.store_id, options))
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

    async fn read_keys(store: &dyn ObjectStore) -> Result<KeysObject, Error> {
        let path = Path::from(KEYS_PATH);
        let bytes = match store.get(&path).await {
            Ok(r) => r.bytes().await.map_err(|e| Error::backend("read", &path, e))?,
            Err(object_store::Error::NotFound { .. }) => return Err(Error::NotInitialized),
            Err(e) => return Err(Error::backend("read", &path, e)),
        };
        parse_keys(&bytes)
    }

    fn assemble(conn: Connection, master: &MasterKey, store_id: String, options: OpenOptions) -> Self {
        let keys = Keys {
            objects: master.object_key(),
            blob_address: master.address_key(),
            tree_address: master.tree_address_key(),
        };
        let watermark = options.state_dir.map(|d| Watermark::new(d, &store_id));
        let disk = options.cache_dir.as_deref().and_then(|d| DiskCache::new(d, &store_id));
        EncryptedRepository {
            store: conn.store,
            head: conn.head,
            gc_state: conn.gc_state,
            keys,
            store_id,
            watermark,
            display: options.display,
            cache: Mutex::new(Cache::default()),
            parsed_head: Mutex::new(None),
            max_staleness: options.max_staleness,
            snapshot_budget: conn.snapshot_budget,
            disk,
            log: conn.log,
        }
    }

    /// The random id of this store (hex), empty for an ephemeral one.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        // Cache updates are single inserts: a panic elsewhere cannot leave it inconsistent.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn seal_head(&self, head: &HeadObject) -> Result<Bytes, Error> {
        let plain = serde_json::to_vec(head).expect("head serializes");
        Ok(Bytes::from(self.keys.objects.seal(ObjectKind::Head, &head_id(), &plain)?))
    }

    /// Reads and opens the current head object, checking it against the rollback watermark;
    /// `None` before the first commit.
    async fn read_head(&self) -> Result<Option<(HeadObject, HeadVersion)>, Error> {
        Ok(self.load_head(None).await?.map(|(head, version)| (HeadObject::clone(&head), version)))
    }

    /// [`EncryptedRepository::read_head`], or within `max_age` the head last read or written
    /// without a request. Its inline objects are verified and in the cache.
    async fn load_head(&self, max_age: Option<Duration>) -> Result<Option<(Arc<HeadObject>, HeadVersion)>, Error> {
        let floor = self.watermark.as_ref().map(Watermark::floor).transpose()?;
        let read = match max_age {
            Some(age) => self.head.read_within(age).await?,
            None => self.head.read().await?,
        };
        let Some((bytes, version)) = read else {
            if let (Some(w), Some(floor)) = (&self.watermark, floor) {
                w.observe(floor, 0)?;
            }
            return Ok(None);
        };
        let head = self.open_head(&bytes)?;
        if let (Some(w), Some(floor)) = (&self.watermark, floor) {
            w.observe(floor, head.generation)?;
        }
        Ok(Some((head, version)))
    }

    fn parsed_head(&self) -> std::sync::MutexGuard<'_, Option<(Bytes, Arc<HeadObject>)>> {
        // Replaced whole: a poisoned lock is still sound.
        self.parsed_head.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens sealed head bytes (the ones opened last come from memory), verifies its inline
    /// objects and puts them into the cache.
    fn open_head(&self, bytes: &Bytes) -> Result<Arc<HeadObject>, Error> {
        if let Some((known, head)) = self.parsed_head().as_ref()
            && known == bytes
        {
            return Ok(head.clone());
        }
        let plain =
            self.keys.objects.open(ObjectKind::Head, &head_id(), bytes).map_err(|e| open_error(e, HEAD_PATH.into()))?;
        let head: HeadObject =
            serde_json::from_slice(&plain).map_err(|e| format::corrupt_named(HEAD_PATH, "head", &e))?;
        self.prime(&head)?;
        let head = Arc::new(head);
        *self.parsed_head() = Some((bytes.clone(), head.clone()));
        Ok(head)
    }

    /// Verifies every inline object of `head` as [`EncryptedRepository::get_object`] verifies
    /// a fetched one (the id must be the keyed hash of the plaintext, and the plaintext must
    /// decode), then caches them: commits and policies decoded, directory pages as
    /// plaintexts, assembled into directories from the commit's root down.
    fn prime(&self, head: &HeadObject) -> Result<(), Error> {
        let mut commits = Vec::new();
        let mut policies = Vec::new();
        let mut plains = Vec::new();
        for object in &head.inline {
            let plain = object.plain.as_bytes();
            let kind = match object.kind {
                InlineKind::Commit => "commit",
                InlineKind::Policy => "policy",
                InlineKind::Dir => "directory page",
            };
            if !id_eq(&self.keys.tree_address.address(plain), &object.id) {
                return Err(Error::Corrupt {
                    object: HEAD_PATH.into(),
                    reason: format!("its inline {kind} {} does not match its id", object.id.to_hex()),
                });
            }
            let undecodable = |e: serde_json::Error| format::corrupt_named(HEAD_PATH, &format!("inline {kind}"), &e);
            match object.kind {
                InlineKind::Commit => {
                    commits.push((object.id, serde_json::from_slice::<CommitObject>(plain).map_err(undecodable)?));
                }
                InlineKind::Policy => {
                    let policy = serde_json::from_slice::<Policy>(plain).map_err(undecodable)?;
                    policies.push((object.id, policy));
                    plains.push((object.id, plain));
                }
                InlineKind::Dir => plains.push((object.id, plain)),
            }
        }
        let root = {
            let mut cache = self.cache();
            for (id, commit) in commits {
                cache.commits.entry(id).or_insert_with(|| Arc::new(commit));
            }
            for (id, policy) in policies {
                cache.policies.entry(id).or_insert_with(|| Arc::new(policy));
            }
            for (id, plain) in plains {
                cache.plains.entry(id).or_insert_with(|| Arc::from(plain));
            }
            cache.commits.get(&head.commit).map(|c| c.tree)
        };
        match root {
            Some(root) => self.prime_dirs(head, root),
            // The commit was too large for the snapshot: `head` primes after fetching it.
            None => Ok(()),
        }
    }

    /// Assembles and caches the directories of the tree at `root` whose pages are all among
    /// `head`'s inline objects, breadth-first, as far as they reach.
    fn prime_dirs(&self, head: &HeadObject, root: ObjectId) -> Result<(), Error> {
        let inline: HashSet<ObjectId> =
            head.inline.iter().filter(|o| o.kind == InlineKind::Dir).map(|o| o.id).collect();
        let mut queue = VecDeque::from([root]);
        let mut seen = HashSet::new();
        while let Some(id) = queue.pop_front() {
            if !inline.contains(&id) || !seen.insert(id) {
                continue;
            }
            let cached = self.cache().dirs.get(&id).cloned();
            let dir = match cached {
                Some(dir) => dir,
                None => {
                    let Some((dir, pages)) = self.assemble_dir(&id)? else { continue };
                    let dir = Arc::new(dir);
                    let mut cache = self.cache();
                    cache.dirs.insert(id, dir.clone());
                    cache.pages.insert(id, pages.into());
                    dir
                }
            };
            queue.extend(dir.entries().filter_map(|(_, node)| match node {
                Node::Dir(d) => d.id(),
                Node::File(_) => None,
            }));
        }
        Ok(())
    }

    /// The objects a commit carries in its head, within the snapshot budget: the commit, its
    /// policy, then whole directories (all their pages) breadth-first from `root`, from what
    /// the cache holds. A directory that does not fit is left out with everything below it;
    /// smaller ones after it still go in.
    fn snapshot(&self, commit: (ObjectId, &[u8]), policy: Option<ObjectId>, root: ObjectId) -> Vec<InlineObject> {
        let cache = self.cache();
        let mut budget = self.snapshot_budget;
        let mut out = Vec::new();
        let mut add = |kind: InlineKind, id: ObjectId, plain: &[u8], size: usize, budget: &mut usize| {
            // Plaintexts are JSON, so UTF-8; anything else is left out.
            if let Ok(plain) = std::str::from_utf8(plain) {
                *budget -= size;
                out.push(InlineObject { kind, id, plain: plain.to_owned() });
            }
        };
        if budget == 0 {
            return out;
        }
        let size = inline_size(commit.1);
        if size <= budget {
            add(InlineKind::Commit, commit.0, commit.1, size, &mut budget);
        }
        if let Some(p) = policy
            && let Some(plain) = cache.plains.get(&p)
            && inline_size(plain) <= budget
        {
            add(InlineKind::Policy, p, plain, inline_size(plain), &mut budget);
        }
        let mut queue = VecDeque::from([root]);
        let mut seen = HashSet::new();
        while let Some(id) = queue.pop_front() {
            if !seen.insert(id) {
                continue;
            }
            let (Some(pages), Some(dir)) = (cache.pages.get(&id), cache.dirs.get(&id)) else { continue };
            let Some(plains) = pages.iter().map(|p| cache.plains.get(p)).collect::<Option<Vec<_>>>() else { continue };
            let sizes: Vec<usize> = plains.iter().map(|p| inline_size(p)).collect();
            if sizes.iter().sum::<usize>() > budget {
                continue;
            }
            for ((page, plain), size) in pages.iter().zip(plains).zip(sizes) {
                add(InlineKind::Dir, *page, plain, size, &mut budget);
            }
            queue.extend(dir.entries().filter_map(|(_, node)| match node {
                Node::Dir(d) => d.id(),
                Node::File(_) => None,
            }));
        }
        out
    }

    /// Every stored object: id and stored (sealed) size. Names that are not object names
    /// (temporary files of a backend) are skipped.
    async fn list_objects(&self) -> Result<HashMap<ObjectId, u64>, Error> {
        let prefix = Path::from(OBJECTS_PREFIX);
        let metas: Vec<_> =
            self.store.list(Some(&prefix)).try_collect().await.map_err(|e| Error::backend("list", &prefix, e))?;
        let mut out = HashMap::with_capacity(metas.len());
        for meta in metas {
            let Some(id) = meta.location.filename().and_then(format::parse_id) else { continue };
            if object_path(&id) == meta.location {
                out.insert(id, meta.size);
            }
        }
        Ok(out)
    }

    async fn put_object(&self, kind: ObjectKind, id: ObjectId, plain: &[u8]) -> Result<(), Error> {
        let path = object_path(&id);
        let sealed = Bytes::from(self.keys.objects.seal(kind, &id, plain)?);
        match self.store.put_opts(&path, sealed.clone().into(), PutMode::Create.into()).await {
            // Same id, same plaintext: already stored by an earlier command.
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => {}
            Err(e) => return Err(Error::backend("write", &path, e)),
        }
        if let Some(disk) = &self.disk
            && matches!(kind, ObjectKind::Blob | ObjectKind::Dir)
        {
            disk.put(&id, &sealed);
        }
        Ok(())
    }

    /// Fetches and opens an object of `kind` from the store (never from a cache).
    async fn get_object(&self, kind: ObjectKind, id: &ObjectId) -> Result<Vec<u8>, Error> {
        Ok(self.fetch_object(kind, id).await?.1)
    }

    /// Fetches an object of `kind` from the store: its sealed bytes and its opened plaintext.
    async fn fetch_object(&self, kind: ObjectKind, id: &ObjectId) -> Result<(Bytes, Vec<u8>), Error> {
        let path = object_path(id);
        let sealed = match self.store.get(&path).await {
            Ok(r) => r.bytes().await.map_err(|e| Error::backend("read", &path, e))?,
            Err(object_store::Error::NotFound { .. }) => return Err(Error::MissingObject { id: path.to_string() }),
            Err(e) => return Err(Error::backend("read", &path, e)),
        };
        let plain = self.open_object(kind, id, &sealed)?;
        Ok((sealed, plain))
    }

    /// Opens a sealed object of `kind` and checks that it is what its id says.
    fn open_object(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        let plain = self.keys.objects.open(kind, id, sealed).map_err(|e| open_error(e, format::object_name(id)))?;
        // The AEAD binds the id; a content id must also be the keyed hash of what it holds.
        let expected = match kind {
            ObjectKind::Blob => self.keys.blob_address.address(&plain),
            _ => self.keys.tree_address.address(&plain),
        };
        if !id_eq(&expected, id) {
            return Err(Error::Corrupt {
                object: format::object_name(id),
                reason: "content does not match its id".into(),
            });
        }
        Ok(plain)
    }

    /// [`EncryptedRepository::get_object`] through the on-disk cache, if there is one: a
    /// cached copy is opened and checked the same way, and one that fails is a miss.
    async fn read_object(&self, kind: ObjectKind, id: &ObjectId) -> Result<Vec<u8>, Error> {
        let Some(disk) = &self.disk else { return self.get_object(kind, id).await };
        if let Some(sealed) = disk.get(id) {
            match self.open_object(kind, id, &sealed) {
                Ok(plain) => return Ok(plain),
                Err(_) => disk.remove(id),
            }
        }
        let (sealed, plain) = self.fetch_object(kind, id).await?;
        disk.put(id, &sealed);
        Ok(plain)
    }

    /// Drops `id` from this client's caches, in memory and on disk (deleted from the store).
    fn forget_object(&self, id: &ObjectId) {
        self.cache().forget(id);
        if let Some(disk) = &self.disk {
            disk.remove(id);
        }
    }

    async fn commit_object(&self, id: &ObjectId) -> Result<CommitObject, Error> {
        if let Some(c) = self.cache().commits.get(id) {
            return Ok(CommitObject::clone(c));
        }
        let plain = self.get_object(ObjectKind::Commit, id).await?;
        let commit: CommitObject = serde_json::from_slice(&plain).map_err(|e| format::corrupt(id, "commit", &e))?;
        self.cache().commits.insert(*id, Arc::new(commit.clone()));
        Ok(commit)
    }

    /// Encodes every directory of `dir` that has no id yet, children first, into pages, and
    /// adds the pages to write to `out`; returns the directory's id. Only the directories a
    /// mutation copied lack ids (O(depth) of them), and of each only the pages that differ
    /// from the version it was copied from (`base`, the same path in the base tree) are new.
    fn plan_dirs(&self, dir: &DirRef, base: Option<&ObjectId>, out: &mut PlannedDirs) -> ObjectId {
        if let Some(id) = dir.id() {
            return id;
        }
        let d = dir.dir().expect("an unwritten directory is loaded");
        let base_dir = base.and_then(|id| self.cache().dirs.get(id).cloned());
        let mut decoded = Vec::with_capacity(d.len());
        for (name, node) in d.entries() {
            let node = match node {
                Node::Dir(child) => {
                    let child_base = match base_dir.as_ref().and_then(|b| b.get(name)) {
                        Some(Node::Dir(b)) => b.id(),
                        _ => None,
                    };
                    Node::Dir(DirRef::stored(self.plan_dirs(child, child_base.as_ref(), out), child.totals()))
                }
                file => file.clone(),
            };
            decoded.push((name.clone(), node));
        }
        // The directory as a reader would decode it (children by id), cached after the commit
        // so the next command does not read back what this one wrote.
        let decoded = Dir::from_entries(decoded);
        let pages = pages::encode(&decoded, &self.keys.tree_address).expect("children have ids");
        let unchanged = base.and_then(|id| self.cache().pages.get(id).cloned());
        let id = pages.id();
        let ids: Arc<[ObjectId]> = pages.pages.iter().map(|(id, _)| *id).collect();
        for (page, plain) in pages.pages {
            if !unchanged.as_ref().is_some_and(|u| u.contains(&page)) && !out.pages.iter().any(|(p, _)| *p == page) {
                out.pages.push((page, plain));
            }
        }
        out.dirs.push((id, Arc::new(decoded), ids));
        id
    }

    /// Reads a whole directory: its top page and, for a large one, every page below.
    async fn load_dir(&self, id: &ObjectId) -> Result<(Dir, Vec<ObjectId>), Error> {
        let mut page_ids = vec![*id];
        let mut level = vec![*id];
        // Index levels until the leaves, each level's pages read at once, kept in order.
        loop {
            let plains: Vec<Arc<[u8]>> = try_join_all(level.iter().map(|p| self.page(p))).await?;
            match decode_level(&level, &plains)? {
                Level::Leaves(entries) => return Ok((Dir::from_entries(entries), page_ids)),
                Level::Below(below) => {
                    page_ids.extend(&below);
                    level = below;
                }
            }
        }
    }

    /// [`EncryptedRepository::load_dir`] from the cached page plaintexts only; `None` if a
    /// page is not there.
    fn assemble_dir(&self, id: &ObjectId) -> Result<Option<(Dir, Vec<ObjectId>)>, Error> {
        let mut page_ids = vec![*id];
        let mut level = vec![*id];
        loop {
            let plains = {
                let cache = self.cache();
                level.iter().map(|p| cache.plains.get(p).cloned()).collect::<Option<Vec<_>>>()
            };
            let Some(plains) = plains else { return Ok(None) };
            match decode_level(&level, &plains)? {
                Level::Leaves(entries) => return Ok(Some((Dir::from_entries(entries), page_ids))),
                Level::Below(below) => {
                    page_ids.extend(&below);
                    level = below;
                }
            }
        }
    }

    /// A directory page's plaintext: cached, or read (through the disk cache) and cached.
    async fn page(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        if let Some(plain) = self.cache().plains.get(id) {
            return Ok(plain.clone());
        }
        let plain: Arc<[u8]> = self.read_object(ObjectKind::Dir, id).await?.into();
        self.cache().plains.insert(*id, plain.clone());
        Ok(plain)
    }
}

/// The bytes a compact JSON plaintext takes as a JSON string in the head: each quote and
/// backslash is escaped with one more byte (compact JSON has no raw control characters).
fn inline_size(plain: &[u8]) -> usize {
    plain.len() + plain.iter().filter(|b| matches!(b, b'"' | b'\\')).count()
}

/// One level of a directory's pages, decoded.
enum Level {
    /// The level was the leaves: every entry, in order.
    Leaves(Vec<(memfs_core::Name, Node)>),
    /// The level was index pages: the pages of the next level, in order.
    Below(Vec<ObjectId>),
}

/// Decodes the pages of one level (`plains[i]` is page `level[i]`), checking that they are all
/// of one kind and that entries keep increasing across leaves.
fn decode_level(level: &[ObjectId], plains: &[Arc<[u8]>]) -> Result<Level, Error> {
    let pages =
        level.iter().zip(plains).map(|(id, plain)| format::decode_page(plain, id)).collect::<Result<Vec<_>, _>>()?;
    if pages.iter().all(|p| matches!(p, format::Page::Leaf(_))) {
        let mut entries: Vec<(memfs_core::Name, Node)> = Vec::new();
        for (page, page_id) in pages.into_iter().zip(level) {
            let format::Page::Leaf(leaf) = page else { unreachable!() };
            // Strictly increasing across pages too.
            if let (Some((last, _)), Some((first, _))) = (entries.last(), leaf.first())
                && last >= first
            {
                return Err(format::out_of_order(page_id));
            }
            entries.extend(leaf);
        }
        return Ok(Level::Leaves(entries));
    }
    let mut below = Vec::new();
    for (page, page_id) in pages.into_iter().zip(level) {
        match page {
            format::Page::Index(children) => below.extend(children),
            // Leaves and index pages never share a level.
            format::Page::Leaf(_) => {
                return Err(Error::Corrupt {
                    object: format::object_name(page_id),
                    reason: "a leaf page where an index page belongs".into(),
                });
            }
        }
    }
    Ok(Level::Below(below))
}

/// The pages a commit writes, and the directories it made (id, decoded, page ids).
#[derive(Default)]
struct PlannedDirs {
    pages: Vec<(ObjectId, Vec<u8>)>,
    dirs: Vec<(ObjectId, Arc<Dir>, Arc<[ObjectId]>)>,
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

/// Parses `memfs.keys`, refusing another format or version.
fn parse_keys(bytes: &[u8]) -> Result<KeysObject, Error> {
    #[derive(Deserialize)]
    struct Version {
        format: String,
        version: u64,
    }
    let corrupt = |e: serde_json::Error| Error::Corrupt { object: KEYS_PATH.into(), reason: e.to_string() };
    let v: Version = serde_json::from_slice(bytes).map_err(corrupt)?;
    if v.format != "memfs" {
        return Err(Error::Corrupt { object: KEYS_PATH.into(), reason: "not a memfs key file".into() });
    }
    if v.version != FORMAT_VERSION {
        return Err(Error::UnsupportedFormat { version: v.version });
    }
    serde_json::from_slice(bytes).map_err(corrupt)
}

/// A sealed object that does not open: written by a newer memfs, or tampered with.
fn open_error(e: memfs_crypt::Error, object: String) -> Error {
    match e {
        memfs_crypt::Error::UnknownFormat { version } => Error::UnsupportedFormat { version: u64::from(version) },
        _ => Error::Tampered { object },
    }
}

fn decode_store_id(hex_id: &str) -> Result<[u8; 16], Error> {
    let mut id = [0u8; 16];
    hex::decode_to_slice(hex_id, &mut id)
        .map_err(|_| Error::Corrupt { object: KEYS_PATH.into(), reason: "invalid store id".into() })?;
    Ok(id)
}

/// Constant-time id comparison.
fn id_eq(a: &ObjectId, b: &ObjectId) -> bool {
    blake3::Hash::from_bytes(a.to_bytes()) == blake3::Hash::from_bytes(b.to_bytes())
}

impl fmt::Display for EncryptedRepository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

#[async_trait]
impl Repository for EncryptedRepository {
    async fn head(&self) -> Result<Head, Error> {
        let Some((head, version)) = self.load_head(self.max_staleness).await? else {
            // No head yet: the empty tree at generation 0; the first commit creates the head.
            let anchor = Anchor { version: None, commit: None, policy: None };
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
        let anchor = Anchor { version: Some(version), commit: Some(head.commit), policy: commit.policy };
        Ok(Head { tree, generation: head.generation, policy, anchor: Some(anchor) })
    }

    async fn dir(&self, id: &ObjectId) -> Result<Arc<Dir>, Error> {
        if let Some(d) = self.cache().dirs.get(id) {
            return Ok(d.clone());
        }
        let (dir, pages) = self.load_dir(id).await?;
        let dir = Arc::new(dir);
        let mut cache = self.cache();
        cache.dirs.insert(*id, dir.clone());
        cache.pages.insert(*id, pages.into());
        Ok(dir)
    }

    async fn blob(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        if let Some(b) = self.cache().blobs.get(id) {
            return Ok(b.clone());
        }
        let blob: Arc<[u8]> = Arc::from(self.read_object(ObjectKind::Blob, id).await?);
        self.cache().insert_blob(*id, blob.clone());
        Ok(blob)
    }

    fn address(&self, content: &[u8]) -> ObjectId {
        self.keys.blob_address.address(content)
    }

    async fn commit(&self, base: &Head, mutation: &Mutation, info: CommitInfo) -> Result<u64, Error> {
        let policy = base.anchor.as_ref().and_then(|a| a.policy);
        self.commit_with_policy(base, mutation, info, policy, Vec::new()).await
    }
}

impl EncryptedRepository {
    /// Makes `policy` the store's policy, in a commit of its own (the tree unchanged), if the
    /// head is still `base`. Returns the new generation, or [`Error::Conflict`].
    pub async fn set_policy(&self, base: &Head, policy: &Policy, info: CommitInfo) -> Result<u64, Error> {
        let plain = serde_json::to_vec(policy).expect("a policy serializes");
        let id = self.keys.tree_address.address(&plain);
        let mutation = Mutation { tree: base.tree.clone(), changes: Vec::new(), blobs: Vec::new(), applied: None };
        let generation = self.commit_with_policy(base, &mutation, info, Some(id), vec![(id, plain)]).await?;
        self.cache().policies.insert(id, Arc::new(policy.clone()));
        Ok(generation)
    }

    /// The policy object `id` names (the default for `None`), through the cache.
    async fn policy_object(&self, id: Option<&ObjectId>) -> Result<Arc<Policy>, Error> {
        let Some(id) = id else { return Ok(Arc::new(Policy::default())) };
        if let Some(p) = self.cache().policies.get(id) {
            return Ok(p.clone());
        }
        let plain = self.get_object(ObjectKind::Policy, id).await?;
        let policy: Policy = serde_json::from_slice(&plain).map_err(|e| format::corrupt(id, "policy", &e))?;
        let policy = Arc::new(policy);
        let mut cache = self.cache();
        cache.policies.insert(*id, policy.clone());
        cache.plains.insert(*id, plain.into());
        Ok(policy)
    }

    /// Writes the mutation's objects (and `extra` policy objects), then a commit naming
    /// `policy`, then swaps the head if it is still `base`.
    async fn commit_with_policy(
        &self,
        base: &Head,
        mutation: &Mutation,
        info: CommitInfo,
        policy: Option<ObjectId>,
        extra: Vec<(ObjectId, Vec<u8>)>,
    ) -> Result<u64, Error> {
        let Some(anchor) = &base.anchor else { return Err(Error::Conflict) };
        // Every new object (contents, directory pages, the commit) is sealed first and written
        // at once; only then is the head swapped.
        let mut planned = PlannedDirs::default();
        let base_root = base.tree.root().id();
        let root = self.plan_dirs(mutation.tree.root(), base_root.as_ref(), &mut planned);
        let generation = base.generation + 1;
        let commit = CommitObject {
            parent: anchor.commit,
            tree: root,
            generation,
            time_ms: now_ms(),
            actor: info.actor,
            command: info.command,
            changes: info.changes,
            files: mutation.tree.totals().files,
            bytes: mutation.tree.totals().bytes,
            policy,
        };
        let commit_plain = serde_json::to_vec(&commit).expect("commit");
        let commit_id = self.keys.tree_address.address(&commit_plain);
        let writes = mutation
            .blobs
            .iter()
            .map(|b| (ObjectKind::Blob, b.id, &b.content[..]))
            .chain(planned.pages.iter().map(|(id, plain)| (ObjectKind::Dir, *id, &plain[..])))
            .chain(extra.iter().map(|(id, plain)| (ObjectKind::Policy, *id, &plain[..])))
            .chain(std::iter::once((ObjectKind::Commit, commit_id, &commit_plain[..])));
        try_join_all(writes.map(|(kind, id, plain)| self.put_object(kind, id, plain))).await?;
        {
            // Immutable and just written: the next command's reads need not fetch them.
            let mut cache = self.cache();
            cache.commits.insert(commit_id, Arc::new(commit));
            for b in &mutation.blobs {
                cache.insert_blob(b.id, b.content.clone());
            }
            for (id, dir, pages) in planned.dirs {
                cache.dirs.insert(id, dir);
                cache.pages.insert(id, pages);
            }
            for (id, plain) in planned.pages.iter().chain(&extra) {
                cache.plains.insert(*id, Arc::from(&plain[..]));
            }
        }
        let head = self.head_object(generation, (commit_id, &commit_plain), policy, root);
        let sealed = self.seal_head(&head)?;
        let write = || async {
            match &anchor.version {
                Some(version) => self.head.swap(version, sealed.clone()).await,
                None => self.head.create(sealed.clone()).await,
            }
        };
        // A write whose answer is lost (a timeout, a dropped connection) may still land, even
        // later. Sending the very same conditional write again settles it: whichever copy
        // lands first wins and the other is refused, so the commit lands at most once.
        let mut swapped = write().await;
        for resend in 1..=HEAD_RESENDS {
            match &swapped {
                Ok(()) | Err(Error::Conflict) => break,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100 << resend)).await;
                    swapped = write().await;
                }
            }
        }
        match swapped {
            // The next read of the head finds these bytes (unchanged): no need to open them.
            Ok(()) => *self.parsed_head() = Some((sealed, Arc::new(head))),
            // Refused, or failed: but an earlier copy of this very write (ours, or a retry
            // inside the client) may be the one that moved the head. Answering "conflict" or
            // "failed" then would make the caller run a command again that is already in:
            // look before answering.
            Err(e) => {
                if !self.landed(&commit_id, generation).await {
                    return Err(e);
                }
            }
        }
        if let Some(w) = &self.watermark {
            w.raise(generation)?;
        }
        Ok(generation)
    }

    /// The head naming a new commit, with its snapshot (see [`EncryptedRepository::snapshot`]).
    fn head_object(
        &self,
        generation: u64,
        commit: (ObjectId, &[u8]),
        policy: Option<ObjectId>,
        root: ObjectId,
    ) -> HeadObject {
        HeadObject { generation, commit: commit.0, inline: self.snapshot(commit, policy, root) }
    }

    /// Whether `commit` (at `generation`) is in the store's history: the stored head names it,
    /// or names a later commit whose parents lead to it (another writer may have committed on
    /// top already). False if the head cannot be read, and after [`LANDED_WALK`] commits.
    async fn landed(&self, commit: &ObjectId, generation: u64) -> bool {
        let Ok(Some((bytes, _))) = self.head.read().await else { return false };
        let Ok(plain) = self.keys.objects.open(ObjectKind::Head, &head_id(), &bytes) else { return false };
        let Ok(head) = serde_json::from_slice::<HeadObject>(&plain) else { return false };
        if head.generation < generation || head.generation - generation > LANDED_WALK {
            return false;
        }
        let mut at = head.commit;
        for _ in generation..head.generation {
            match self.commit_object(&at).await {
                Ok(CommitObject { parent: Some(parent), .. }) => at = parent,
                _ => return false,
            }
        }
        id_eq(&at, commit)
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
    fn inline_size_is_the_length_of_the_json_string() {
        let command =
            serde_json::json!({"command": "create", "path": "/memories/é.md", "file_text": "a\tb\n\"q\" \\ \u{1}"});
        let commit = serde_json::to_vec(&serde_json::json!({"command": command.to_string(), "n": 1})).unwrap();
        for plain in [&b"{}"[..], br#"{"entries":[]}"#, &commit] {
            let as_string = serde_json::to_string(std::str::from_utf8(plain).unwrap()).unwrap();
            assert_eq!(inline_size(plain), as_string.len() - 2, "{as_string}");
        }
    }
}
