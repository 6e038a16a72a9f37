//! `LogStore` itself: opening, locking, and the `ObjectStore` operations.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyMode, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result, UploadPart,
};

use super::error::LogError;
use super::fixed_keys::FixedKeys;
use super::report::{CompactReport, StoredBytes};
use super::segment;
use super::state::{Config, Entry, Mode, State};
use crate::local_fs::{self, OpenError};

const STORE: &str = "LogStore";

/// An [`ObjectStore`] over an append-only log in a local folder; see the [module
/// docs](super) for the layout and the rules.
///
/// Open one per process (or more: instances on one folder behave like processes). All I/O is
/// done directly in the calling task, except waiting for another process's lock, which moves
/// to a blocking thread when a tokio runtime is running, and [`LogStore::compact`].
pub struct LogStore {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    /// `log.lock`, open for the instance's lifetime. `flock` locks belong to the open file,
    /// so two instances in one process exclude each other like two processes do.
    lock: File,
    /// Everything else. Never held across an `.await`: the locked sections are synchronous.
    state: Mutex<State>,
}

impl LogStore {
    /// The default segment limit: 4 MiB. An open reads the last segment's records past its
    /// index (the sealed ones only through their index files), at most half a segment, so this
    /// bounds its cost: with 8 MiB an open would read 2 MiB of records on average, some 7 ms of
    /// CPU; with 4 MiB, 1 MiB. Each segment keeps its file and its index file open, so a store
    /// of 1 GiB of log holds some 500 files open.
    pub const DEFAULT_SEGMENT_LIMIT: u64 = 4 << 20;

    /// The default threshold of automatic compaction: 64 MiB of dead records (replaced heads,
    /// deleted objects), and at least as many as live ones.
    pub const DEFAULT_AUTO_COMPACT: u64 = 64 << 20;

    /// Opens the log in `dir`, creating the folder (mode 0700) if needed, and reads it. A bad
    /// segment fails here, with an error naming the file, and so does a folder (`dir` or its
    /// `log/`) that is a link, belongs to another user or is writable by group or others, or
    /// a link where `log.lock` or a segment belongs ([`crate::UnsafePath`]).
    ///
    /// Every path is stored as UTF-8 and every put synced; [`LogOptions`](crate::LogOptions)
    /// opens a log with fixed-width keys, and lazy and settled prefixes.
    pub fn open(dir: impl Into<PathBuf>) -> Result<LogStore> {
        LogStore::open_as(dir.into(), FixedKeys::default(), Vec::new(), Vec::new())
    }

    /// [`LogStore::open`] with `fixed_keys`, lazy and settled prefixes.
    pub(crate) fn open_as(
        dir: PathBuf,
        fixed_keys: FixedKeys,
        lazy_prefixes: Vec<String>,
        settled_prefixes: Vec<String>,
    ) -> Result<LogStore> {
        let log_dir = dir.join("log");
        let created_dir = match std::fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                private_dir(&dir)?;
                true
            }
            _ => false,
        };
        // Before anything is written in them: the folders must be this user's alone, or
        // whoever else can write them could plant links or change records (`local_fs`).
        local_fs::open_private_dir(&dir).map_err(LogError::open("open", &dir))?;
        let created_log = match local_fs::open_private_dir(&log_dir) {
            Ok(_) => false,
            Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                private_dir(&log_dir)?;
                local_fs::open_private_dir(&log_dir).map_err(LogError::open("open", &log_dir))?;
                true
            }
            Err(e) => return Err(LogError::open("open", &log_dir)(e).into()),
        };
        if created_log {
            // The new entries must be durable before a synced record inside them can be.
            segment::sync_dir(&dir)?;
            if created_dir && let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                // The parent is the user's to choose, a link or not: opened the usual way.
                File::open(parent).and_then(|d| d.sync_all()).map_err(LogError::io("sync", parent))?;
            }
        }
        let lock_path = dir.join("log.lock");
        let lock = local_fs::open_file(&lock_path, OpenOptions::new().read(true).write(true).create(true).mode(0o600))
            .map_err(LogError::open("open", &lock_path))?;
        let config = Config {
            segment_limit: Self::DEFAULT_SEGMENT_LIMIT,
            fixed_keys,
            lazy_prefixes,
            settled_prefixes,
            auto_compact: Some(Self::DEFAULT_AUTO_COMPACT),
        };
        let inner = Inner { dir, lock, state: Mutex::new(State::new(log_dir, config)) };
        inner.refresh(&mut inner.state())?;
        Ok(LogStore { inner: Arc::new(inner) })
    }

    /// Sets the size past which a new segment is started (default 4 MiB). A record larger
    /// than the limit gets a segment of its own.
    #[must_use]
    pub fn with_segment_limit(self, bytes: u64) -> Self {
        self.inner.state().config.segment_limit = bytes;
        self
    }

    /// Sets the path prefixes whose puts and deletes are appended without a sync (default
    /// none): plain string prefixes of the path.
    #[must_use]
    pub fn with_lazy_prefixes(self, prefixes: Vec<String>) -> Self {
        self.inner.state().config.lazy_prefixes = prefixes;
        self
    }

    /// Sets the path prefixes whose content never changes to another once written (default
    /// none): a read that finds such a path in what this instance already knows answers without
    /// first catching up with other processes' writes, saving a `statx`, a read and an `openat`
    /// per read (they add up when a directory of many pages is loaded). A path not found, or a
    /// read with preconditions, catches up as any other.
    ///
    /// This weakens what a read promises for those paths: a delete (or a rewrite) by another
    /// instance since this one last caught up is not seen, as if the read had come a moment
    /// earlier. Only for paths whose every version opens to the same content (content-addressed
    /// objects) and whose deletion the caller's protocol makes safe to miss.
    #[must_use]
    pub fn with_settled_prefixes(self, prefixes: Vec<String>) -> Self {
        self.inner.state().config.settled_prefixes = prefixes;
        self
    }

    /// Sets when a write compacts the log by itself (see [`LogStore::compact`]): once the dead
    /// records (replaced or deleted) reach `dead_bytes` and at least the live ones, looked at
    /// every 64 synced puts. Default [`LogStore::DEFAULT_AUTO_COMPACT`]; `None`: never.
    ///
    /// The compaction runs in the writing call, holding the lock: it blocks other writers for
    /// as long as it takes to copy the live records (about a second per 100 MB here).
    #[must_use]
    pub fn with_auto_compact(self, dead_bytes: Option<u64>) -> Self {
        self.inner.state().config.auto_compact = dead_bytes;
        self
    }

    /// The folder.
    pub fn dir(&self) -> &std::path::Path {
        &self.inner.dir
    }

    /// Rewrites the log as one compacted segment holding only the live paths (each with its
    /// data, time and e_tag), then removes the older segments. Takes the lock for as long as
    /// that takes; other instances keep working (they switch to the new segment when they
    /// next catch up).
    pub async fn compact(&self) -> Result<CompactReport> {
        write_blocking(Arc::clone(&self.inner), |state| Ok(state.compact()?)).await
    }

    /// Puts each of `items` whose path holds nothing yet, as [`PutMode::Create`] puts that
    /// ignore `AlreadyExists`, under one lock and in one write (when they fit the current
    /// segment). Lazy paths stay unsynced (the next synced put makes them durable); a batch
    /// with any other path is synced once at its end. A commit's objects cost one append this
    /// way instead of one locked append (lock, catch-up, write, unlock) each.
    pub async fn put_new(&self, items: Vec<(Path, Bytes)>) -> Result<()> {
        write(&self.inner, move |state| {
            state.put_new(&items)?;
            if items.iter().any(|(p, _)| !state.config.is_lazy(p)) {
                state.sync_puts()?;
            }
            Ok(())
        })
        .await
    }

    /// A put of `payload` at `location` under `mode`, preceded by [`LogStore::put_new`] of
    /// `items`, synced, all under one lock: a commit's objects and its head in one turn of the
    /// lock and one catch-up. `mode` is checked first: when it refuses the put, nothing is
    /// appended. A writer that planned on a head another has replaced (one that recorded a
    /// key rotation, say) has sealed its objects under keys it had not checked against the
    /// newest head; they must never reach the log, where every copy of the folder keeps them.
    pub async fn put_new_then(
        &self,
        items: Vec<(Path, Bytes)>,
        location: Path,
        payload: Bytes,
        mode: PutMode,
    ) -> Result<PutResult> {
        write(&self.inner, move |state| {
            let replaced = check_mode(state, &location, &mode)?;
            state.put_new(&items)?;
            put(state, &location, &[&payload[..]], replaced)
        })
        .await
    }

    /// The bytes of live records and of the segments in use, after catching up.
    pub async fn stored_bytes(&self) -> Result<StoredBytes> {
        self.inner.read(|state| Ok(state.stored_bytes()?))
    }
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the state may have left the index half-updated: read afresh.
        self.state.lock().unwrap_or_else(|poisoned| {
            let mut state = poisoned.into_inner();
            state.reset();
            self.state.clear_poison();
            state
        })
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join("log.lock")
    }

    /// Catches up without the lock, the common case. Damage seen that way may be a writer
    /// truncating a torn tail while we read, and segments may vanish under compactions: look
    /// again holding the lock (shared) before reporting either.
    fn refresh(&self, state: &mut State) -> Result<(), LogError> {
        match state.catch_up(Mode::Read) {
            Err(e) if e.needs_lock() => {
                self.lock.lock_shared().map_err(LogError::io("lock", self.lock_path()))?;
                let _guard = LockGuard(&self.lock);
                state.catch_up(Mode::Read)
            }
            r => r,
        }
    }

    /// Runs `f` on the caught-up state.
    fn read<T>(&self, f: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
        let mut state = self.state();
        self.refresh(&mut state)?;
        f(&mut state)
    }

    /// Runs `f` on the state as this instance knows it if `location` is settled and `f`
    /// succeeds there; otherwise on the caught-up state.
    fn read_settled<T>(&self, location: &Path, f: impl Fn(&mut State) -> Result<T>) -> Result<T> {
        let mut state = self.state();
        if state.config.is_settled(location)
            && let Ok(found) = f(&mut state)
        {
            return Ok(found);
        }
        self.refresh(&mut state)?;
        f(&mut state)
    }

    /// Runs `op` holding the exclusive lock, which the caller has just taken, after catching up.
    fn locked<T>(&self, state: &mut State, op: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
        let _guard = LockGuard(&self.lock);
        state.catch_up(Mode::Write)?;
        op(state)
    }
}

/// Creates a folder (and its missing parents) readable by the owner only.
fn private_dir(dir: &std::path::Path) -> Result<(), LogError> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(LogError::io("create", dir))
}

/// Releases the `flock` when dropped.
struct LockGuard<'a>(&'a File);

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // Closing the file would release it too; an error here leaves nothing to undo.
        let _ = self.0.unlock();
    }
}

/// Runs a write under the exclusive lock. Uncontended (the common case, and always for a
/// single process), it runs right here: a lazy append costs a few system calls, far less than
/// a trip to a blocking thread. If another process holds the lock, the wait moves to a
/// blocking thread so the runtime stays free.
async fn write<T: Send + 'static>(
    inner: &Arc<Inner>,
    op: impl FnOnce(&mut State) -> Result<T> + Send + 'static,
) -> Result<T> {
    {
        let mut state = inner.state();
        match inner.lock.try_lock() {
            Ok(()) => return inner.locked(&mut state, op),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(LogError::io("lock", inner.lock_path())(e).into()),
        }
    }
    write_blocking(Arc::clone(inner), op).await
}

/// Runs a write under the exclusive lock, waiting for it on a blocking thread (or right here
/// outside a tokio runtime).
async fn write_blocking<T: Send + 'static>(
    inner: Arc<Inner>,
    op: impl FnOnce(&mut State) -> Result<T> + Send + 'static,
) -> Result<T> {
    let run = move || {
        let mut state = inner.state();
        inner.lock.lock().map_err(LogError::io("lock", inner.lock_path()))?;
        inner.locked(&mut state, op)
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime
            .spawn_blocking(run)
            .await
            .map_err(|e| object_store::Error::Generic { store: STORE, source: Box::new(e) })?,
        Err(_) => run(),
    }
}

/// Checks a put's mode against the index (under the lock, caught up); returns the version the
/// put would replace.
fn check_mode(state: &mut State, location: &Path, mode: &PutMode) -> Result<Option<Entry>> {
    let current = state.lookup(location)?;
    match (mode, &current) {
        (PutMode::Overwrite, _) | (PutMode::Create, None) => Ok(current),
        (PutMode::Create, Some(_)) => Err(object_store::Error::AlreadyExists {
            path: location.to_string(),
            source: format!("{location} exists").into(),
        }),
        // As object_store's InMemory: updating a missing object fails the precondition.
        (PutMode::Update(_), None) => Err(object_store::Error::Precondition {
            path: location.to_string(),
            source: format!("{location} does not exist").into(),
        }),
        (PutMode::Update(v), Some(entry)) => {
            let Some(expected) = &v.e_tag else {
                return Err(object_store::Error::Generic {
                    store: STORE,
                    source: format!("PutMode::Update of {location} without an e_tag").into(),
                });
            };
            let actual = entry.e_tag();
            if *expected == actual {
                Ok(current)
            } else {
                Err(object_store::Error::Precondition {
                    path: location.to_string(),
                    source: format!("e_tag {actual} does not match {expected}").into(),
                })
            }
        }
    }
}

fn not_found(location: &Path) -> object_store::Error {
    object_store::Error::NotFound { path: location.to_string(), source: format!("{location} does not exist").into() }
}

fn no_attributes(operation: &str) -> object_store::Error {
    object_store::Error::NotImplemented {
        operation: format!("`{operation}` with attributes"),
        implementer: STORE.into(),
    }
}

/// Puts `data` at `location` (under the lock, caught up) in place of `replaced`, synced unless
/// lazy; returns the e_tag.
fn put(state: &mut State, location: &Path, data: &[&[u8]], replaced: Option<Entry>) -> Result<PutResult> {
    let sync = !state.config.is_lazy(location);
    let e_tag = state.put(location, data, replaced, sync)?;
    Ok(PutResult { e_tag: Some(e_tag), version: None, extensions: Default::default() })
}

async fn delete(inner: &Arc<Inner>, location: Path) -> Result<()> {
    write(inner, move |state| {
        if let Some(old) = state.lookup(&location)? {
            let sync = !state.config.is_lazy(&location);
            state.delete(&location, old, sync)?;
        }
        Ok(())
    })
    .await
}

impl fmt::Display for LogStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LogStore({})", self.inner.dir.display())
    }
}

impl fmt::Debug for LogStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogStore").field("dir", &self.inner.dir).finish_non_exhaustive()
    }
}

#[async_trait]
impl ObjectStore for LogStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        if !opts.attributes.is_empty() {
            return Err(no_attributes("put_opts"));
        }
        let location = location.clone();
        write(&self.inner, move |state| {
            let replaced = check_mode(state, &location, &opts.mode)?;
            let chunks: Vec<&[u8]> = payload.iter().map(|b| b.as_ref()).collect();
            put(state, &location, &chunks, replaced)
        })
        .await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        if !opts.attributes.is_empty() {
            return Err(no_attributes("put_multipart_opts"));
        }
        Ok(Box::new(Upload { inner: Arc::clone(&self.inner), location: location.clone(), parts: Vec::new() }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let conditional = options.if_match.is_some()
            || options.if_none_match.is_some()
            || options.if_modified_since.is_some()
            || options.if_unmodified_since.is_some()
            || options.version.is_some();
        let read = |state: &mut State| {
            if options.head {
                let entry = state.lookup(location)?.ok_or_else(|| not_found(location))?;
                let meta = entry.meta(location);
                options.check_preconditions(&meta)?;
                return Ok((meta, 0..0, Bytes::new()));
            }
            let (entry, data) = state.get(location)?.ok_or_else(|| not_found(location))?;
            let meta = entry.meta(location);
            options.check_preconditions(&meta)?;
            let range = match &options.range {
                Some(r) => r
                    .as_range(entry.size())
                    .map_err(|e| object_store::Error::Generic { store: STORE, source: Box::new(e) })?,
                None => 0..entry.size(),
            };
            let data = data.slice(range.start as usize..range.end as usize);
            Ok((meta, range, data))
        };
        let (meta, range, data) =
            if conditional { self.inner.read(read)? } else { self.inner.read_settled(location, read)? };
        Ok(GetResult {
            payload: GetResultPayload::Stream(stream::once(async move { Ok(data) }).boxed()),
            meta,
            range,
            attributes: Default::default(),
            extensions: Default::default(),
        })
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        let inner = Arc::clone(&self.inner);
        locations
            .then(move |location| {
                let inner = Arc::clone(&inner);
                async move {
                    let location = location?;
                    delete(&inner, location.clone()).await?;
                    Ok(location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let root = Path::default();
        let prefix = prefix.unwrap_or(&root);
        let listed = self.inner.read(|state| {
            Ok(state
                .list(prefix)?
                .into_iter()
                // Whole path segments only, and not the prefix itself (as InMemory).
                .filter(|(key, _)| key.prefix_match(prefix).is_some_and(|mut rest| rest.next().is_some()))
                .map(|(key, entry)| Ok(entry.meta(&key)))
                .collect::<Vec<_>>())
        });
        match listed {
            Ok(metas) => stream::iter(metas).boxed(),
            Err(e) => stream::once(async move { Err(e) }).boxed(),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let root = Path::default();
        let prefix = prefix.unwrap_or(&root);
        self.inner.read(|state| {
            let mut common_prefixes = BTreeSet::new();
            let mut objects = Vec::new();
            for (key, entry) in state.list(prefix)? {
                let Some(mut parts) = key.prefix_match(prefix) else { continue };
                let Some(first) = parts.next() else { continue };
                if parts.next().is_some() {
                    common_prefixes.insert(prefix.clone().join(first));
                } else {
                    objects.push(entry.meta(&key));
                }
            }
            Ok(ListResult {
                common_prefixes: common_prefixes.into_iter().collect(),
                objects,
                extensions: Default::default(),
            })
        })
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let CopyOptions { mode, extensions: _ } = options;
        let (from, to) = (from.clone(), to.clone());
        write(&self.inner, move |state| {
            let (_, data) = state.get(&from)?.ok_or_else(|| not_found(&from))?;
            let mode = if matches!(mode, CopyMode::Create) { PutMode::Create } else { PutMode::Overwrite };
            let replaced = check_mode(state, &to, &mode)?;
            put(state, &to, &[&data], replaced).map(|_| ())
        })
        .await
    }
}

/// A multipart upload: the parts are kept in memory and appended as one put on `complete`.
struct Upload {
    inner: Arc<Inner>,
    location: Path,
    parts: Vec<PutPayload>,
}

impl fmt::Debug for Upload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upload").field("location", &self.location).field("parts", &self.parts.len()).finish()
    }
}

#[async_trait]
impl MultipartUpload for Upload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        self.parts.push(data);
        Box::pin(futures::future::ready(Ok(())))
    }

    async fn complete(&mut self) -> Result<PutResult> {
        let parts = std::mem::take(&mut self.parts);
        let location = self.location.clone();
        write(&self.inner, move |state| {
            let chunks: Vec<&[u8]> = parts.iter().flat_map(|p| p.iter()).map(|b| b.as_ref()).collect();
            let replaced = check_mode(state, &location, &PutMode::Overwrite)?;
            put(state, &location, &chunks, replaced)
        })
        .await
    }

    async fn abort(&mut self) -> Result<()> {
        self.parts.clear();
        Ok(())
    }
}
