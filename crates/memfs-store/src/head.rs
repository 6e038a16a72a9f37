//! The head (and gc's state, and the key slots): the mutable objects, replaced by
//! compare-and-swap.
//!
//! Every backend is an object store with conditional writes: `PutMode::Create` for the first
//! head and `PutMode::Update` with the version read for every later one. Memory, S3, GCS and
//! Azure implement it; `object_store`'s `LocalFileSystem` does not, so a local folder is a
//! [`memfs_log::LogStore`], whose writers append under an exclusive lock and compare
//! the e_tag there, safe across processes. A commit's objects go with its head through the
//! storage's [`Storage::put_new_then`].
//!
//! A [`ConditionalHead`] remembers the bytes and version it last read or wrote. A read is a
//! conditional GET (`If-None-Match` with the remembered ETag): when the object is unchanged the
//! store answers `NotModified` without a body and the remembered bytes are returned. Within a
//! caller's staleness bound ([`HeadStore::read_within`]) the remembered bytes are returned with
//! no request at all; a lost compare-and-swap (or a failed write) makes them stale at once, so
//! the next read asks the store.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;
use object_store::{GetOptions, ObjectStore, PutMode, PutOptions, PutResult, UpdateVersion};

use crate::error::Error;
use crate::storage::Storage;

/// What a compare-and-swap compares against: opaque, from the last read.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum HeadVersion {
    /// An object store's ETag and version.
    Object { e_tag: Option<String>, version: Option<String> },
}

impl fmt::Debug for HeadVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadVersion::Object { e_tag, version } => write!(f, "Object({e_tag:?}, {version:?})"),
        }
    }
}

impl HeadVersion {
    fn e_tag(&self) -> Option<&str> {
        match self {
            HeadVersion::Object { e_tag, .. } => e_tag.as_deref(),
        }
    }

    /// The version a put reported, if it reported one a later compare-and-swap can use.
    fn from_put(r: &PutResult) -> Option<HeadVersion> {
        (r.e_tag.is_some() || r.version.is_some())
            .then(|| HeadVersion::Object { e_tag: r.e_tag.clone(), version: r.version.clone() })
    }
}

/// Why [`HeadStore::put_with`] did not put the head.
#[derive(Debug)]
pub(crate) enum NotPut {
    /// The head was not at the version expected before anything was sent: nothing of this
    /// write was stored, and no copy of it can land later.
    Moved,
    /// The write was sent and refused ([`Error::Conflict`]) or failed: it, or a copy the
    /// client sent again, may have landed.
    Sent(Error),
}

impl NotPut {
    /// As the caller reports it: [`NotPut::Moved`] is a conflict.
    pub(crate) fn into_error(self) -> Error {
        match self {
            NotPut::Moved => Error::Conflict,
            NotPut::Sent(e) => e,
        }
    }
}

/// Reads and swaps the head's bytes.
#[async_trait]
pub(crate) trait HeadStore: Send + Sync {
    /// The current bytes and their version, or `None` before the first head.
    async fn read(&self) -> Result<Option<(Bytes, HeadVersion)>, Error>;
    /// What was last read or written, if that was less than `max_age` ago and no write has
    /// failed since; otherwise [`HeadStore::read`].
    async fn read_within(&self, max_age: Duration) -> Result<Option<(Bytes, HeadVersion)>, Error>;
    /// Writes the first head; `Conflict` if one exists.
    async fn create(&self, bytes: Bytes) -> Result<(), Error>;
    /// Replaces the head if it is still at `expected`; `Conflict` otherwise.
    async fn swap(&self, expected: &HeadVersion, bytes: Bytes) -> Result<(), Error>;
    /// [`HeadStore::swap`] on `expected` (or [`HeadStore::create`] when `None`), storing
    /// `objects` with the head (sealed, at paths that hold them or nothing) only if the head
    /// is still at `expected`, as [`Storage::put_new_then`] does: a refusal stores nothing.
    async fn put_with(
        &self,
        expected: Option<&HeadVersion>,
        bytes: Bytes,
        objects: Vec<(Path, Bytes)>,
    ) -> Result<(), NotPut>;
    /// Reads the head afresh (a conditional read: no body when it is unchanged) and answers
    /// [`Error::Conflict`] unless it is still at `expected` (`None`: there is none yet): what
    /// must hold before anything a writer sealed for a compare-and-swap on `expected` is
    /// stored ahead of it.
    async fn unmoved(&self, expected: Option<&HeadVersion>) -> Result<(), Error> {
        match self.read().await?.map(|(_, version)| version).as_ref() == expected {
            true => Ok(()),
            false => Err(Error::Conflict),
        }
    }
}

/// What a [`ConditionalHead`] last read or wrote.
#[derive(Clone)]
struct Known {
    /// `None`: there was no object.
    current: Option<(Bytes, HeadVersion)>,
    /// When it was read or written; `None` once it may be stale (a write failed or lost).
    at: Option<Instant>,
}

/// A head object in an object store with conditional writes.
pub(crate) struct ConditionalHead {
    /// Where the head is stored, with the objects of [`HeadStore::put_with`].
    storage: Arc<dyn Storage>,
    path: Path,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    known: Option<Known>,
    /// Counts this client's writes (landed, lost or failed). A read that started before one
    /// may have seen the object before it: it must not replace what the write left.
    writes: u64,
}

impl ConditionalHead {
    pub(crate) fn new(storage: Arc<dyn Storage>, path: Path) -> Self {
        ConditionalHead { storage, path, state: Mutex::new(State::default()) }
    }

    /// Where the head is read and written.
    fn store(&self) -> &dyn ObjectStore {
        self.storage.store().as_ref()
    }

    /// The head as the store holds it now: a conditional read (no body when it is unchanged
    /// since what this head remembers), remembered in turn.
    async fn fetch(&self) -> object_store::Result<Option<(Bytes, HeadVersion)>> {
        let (known, writes) = {
            let state = self.state();
            (state.known.as_ref().and_then(|k| k.current.clone()), state.writes)
        };
        let mut options = GetOptions::default();
        if let Some(e_tag) = known.as_ref().and_then(|(_, v)| v.e_tag()) {
            options.if_none_match = Some(e_tag.to_owned());
        }
        let current = match crate::whole_read::get_whole(self.store(), &self.path, options).await {
            Ok((meta, bytes)) => Some((bytes, HeadVersion::Object { e_tag: meta.e_tag, version: meta.version })),
            // Unchanged since the remembered read or write: no body was sent.
            Err(object_store::Error::NotModified { .. }) if known.is_some() => known,
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        self.read_back(writes, current.clone());
        Ok(current)
    }

    /// `Precondition` unless a fresh read ([`ConditionalHead::fetch`]) finds the head at
    /// `expected` (`None`: there is none yet).
    async fn still_at(&self, expected: Option<&HeadVersion>) -> object_store::Result<()> {
        match self.fetch().await?.map(|(_, version)| version).as_ref() == expected {
            true => Ok(()),
            false => Err(object_store::Error::Precondition {
                path: self.path.to_string(),
                source: "the head was replaced".into(),
            }),
        }
    }

    /// What a conditional put of the head answered.
    fn after_put(&self, bytes: Bytes, put: object_store::Result<PutResult>, op: &'static str) -> Result<(), Error> {
        match put {
            Ok(r) => {
                self.wrote(bytes, &r);
                Ok(())
            }
            Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => {
                self.doubt();
                Err(Error::Conflict)
            }
            Err(e) => {
                self.doubt();
                Err(Error::backend(op, &self.path, e))
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Fields replaced whole, never left half-written: a poisoned lock is still sound.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// After a read that started when `writes` writes had been made.
    fn read_back(&self, writes: u64, current: Option<(Bytes, HeadVersion)>) {
        let mut state = self.state();
        if state.writes == writes {
            state.known = Some(Known { current, at: Some(Instant::now()) });
        }
    }

    /// After a write that failed or lost: the remembered object may be stale. Its ETag still
    /// serves the next conditional read.
    fn doubt(&self) {
        let mut state = self.state();
        state.writes += 1;
        if let Some(k) = state.known.as_mut() {
            k.at = None;
        }
    }

    /// After a write that landed: the new bytes, if the store said which version they are.
    fn wrote(&self, bytes: Bytes, result: &PutResult) {
        let mut state = self.state();
        state.writes += 1;
        state.known = HeadVersion::from_put(result)
            .map(|version| Known { current: Some((bytes, version)), at: Some(Instant::now()) });
    }
}

#[async_trait]
impl HeadStore for ConditionalHead {
    async fn read(&self) -> Result<Option<(Bytes, HeadVersion)>, Error> {
        self.fetch().await.map_err(|e| Error::backend("read", &self.path, e))
    }

    async fn read_within(&self, max_age: Duration) -> Result<Option<(Bytes, HeadVersion)>, Error> {
        if let Some(Known { current, at: Some(at) }) = self.state().known.clone()
            && at.elapsed() < max_age
        {
            return Ok(current);
        }
        self.read().await
    }

    async fn create(&self, bytes: Bytes) -> Result<(), Error> {
        let put = self.store().put_opts(&self.path, bytes.clone().into(), PutMode::Create.into()).await;
        self.after_put(bytes, put, "create")
    }

    async fn swap(&self, expected: &HeadVersion, bytes: Bytes) -> Result<(), Error> {
        let HeadVersion::Object { e_tag, version } = expected.clone();
        let opts = PutOptions::from(PutMode::Update(UpdateVersion { e_tag, version }));
        let put = self.store().put_opts(&self.path, bytes.clone().into(), opts).await;
        self.after_put(bytes, put, "swap")
    }

    async fn put_with(
        &self,
        expected: Option<&HeadVersion>,
        bytes: Bytes,
        objects: Vec<(Path, Bytes)>,
    ) -> Result<(), NotPut> {
        let (mode, op) = match expected.cloned() {
            Some(HeadVersion::Object { e_tag, version }) => (PutMode::Update(UpdateVersion { e_tag, version }), "swap"),
            None => (PutMode::Create, "create"),
        };
        // Read through this head, which remembers what it finds: a writer refused there
        // plans its next attempt on the head it read, with no other request.
        let moved = AtomicBool::new(false);
        let check = Box::pin(async {
            let answer = self.still_at(expected).await;
            moved.store(matches!(answer, Err(object_store::Error::Precondition { .. })), Ordering::Relaxed);
            answer
        });
        let put = self.storage.put_new_then(objects, &self.path, bytes.clone(), mode, check).await;
        if moved.load(Ordering::Relaxed) {
            // Refused before anything was sent: nothing to doubt in what the read found.
            return Err(NotPut::Moved);
        }
        self.after_put(bytes, put, op).map_err(NotPut::Sent)
    }
}

#[cfg(test)]
mod tests {
    use object_store::ObjectStoreExt;
    use object_store::memory::InMemory;

    use super::*;
    use crate::fault::{FaultStore, OpClass};
    use crate::local::LocalLog;
    use crate::storage::PutByPut;

    fn head() -> (ConditionalHead, Arc<crate::fault::FaultPlan>) {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        (ConditionalHead::new(PutByPut::storage(Arc::new(store)), Path::from("head")), plan)
    }

    #[tokio::test]
    async fn an_unchanged_head_is_read_conditionally_and_a_fresh_one_not_at_all() {
        let (head, plan) = head();
        assert!(head.read().await.unwrap().is_none());
        head.create(Bytes::from_static(b"one")).await.unwrap();
        let (bytes, version) = head.read().await.unwrap().unwrap();
        assert_eq!(bytes, "one");
        assert_eq!(plan.count(OpClass::Get), 2);
        // Within the bound: no request.
        assert_eq!(head.read_within(Duration::from_secs(60)).await.unwrap().unwrap().0, "one");
        assert_eq!(plan.count(OpClass::Get), 2);
        // A lost swap makes it stale at once.
        let other = HeadVersion::Object { e_tag: Some("\"elsewhere\"".into()), version: None };
        assert!(matches!(head.swap(&other, Bytes::from_static(b"lost")).await, Err(Error::Conflict)));
        assert_eq!(head.read_within(Duration::from_secs(60)).await.unwrap().unwrap().0, "one");
        assert_eq!(plan.count(OpClass::Get), 3);
        // A landed swap is remembered with the version the store gave it.
        head.swap(&version, Bytes::from_static(b"two")).await.unwrap();
        assert_eq!(head.read_within(Duration::from_secs(60)).await.unwrap().unwrap().0, "two");
        assert_eq!(plan.count(OpClass::Get), 3);
        let (bytes, _) = head.read().await.unwrap().unwrap();
        assert_eq!((bytes, plan.count(OpClass::Get)), (Bytes::from_static(b"two"), 4));
    }

    /// `put_with` stores the objects with the head: in a local folder's log in one locked
    /// append, on another store first; refused, it stores nothing (no object, the head as it
    /// was) and remembers the head as it is.
    #[tokio::test]
    async fn a_put_with_objects_stores_them_and_the_head_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = LocalLog::storage(memfs_log::LogStore::open(dir.path().join("store")).unwrap());
        let (plain, _) = head();
        for head in [ConditionalHead::new(log, Path::from("head")), plain] {
            head.create(Bytes::from_static(b"one")).await.unwrap();
            let (_, version) = head.read().await.unwrap().unwrap();
            let object = |name: &str| (Path::from(format!("objects/{name}")), Bytes::from(name.to_owned()));
            let other = HeadVersion::Object { e_tag: Some("\"elsewhere\"".into()), version: None };
            let refused = head.put_with(Some(&other), Bytes::from_static(b"lost"), vec![object("a")]).await;
            assert!(matches!(refused, Err(NotPut::Moved | NotPut::Sent(Error::Conflict))), "{refused:?}");
            let created = head.put_with(None, Bytes::from_static(b"lost"), vec![object("a")]).await;
            assert!(matches!(created, Err(NotPut::Moved | NotPut::Sent(Error::Conflict))), "{created:?}");
            let kept = head.store().get(&Path::from("objects/a")).await;
            assert!(matches!(kept, Err(object_store::Error::NotFound { .. })), "a refused put stored an object");
            assert_eq!(head.read_within(Duration::from_secs(60)).await.unwrap().unwrap().0, "one");
            head.put_with(Some(&version), Bytes::from_static(b"two"), vec![object("a"), object("b")]).await.unwrap();
            assert_eq!(head.read_within(Duration::from_secs(60)).await.unwrap().unwrap().0, "two");
            for name in ["a", "b"] {
                let stored = head.store().get(&Path::from(format!("objects/{name}"))).await.unwrap();
                assert_eq!(stored.bytes().await.unwrap(), name);
            }
            assert_eq!(head.read().await.unwrap().unwrap().0, "two");
        }
    }

    #[tokio::test]
    async fn a_read_that_overlapped_a_write_does_not_replace_it() {
        let (head, _) = head();
        head.create(Bytes::from_static(b"one")).await.unwrap();
        let (old, version) = head.read().await.unwrap().unwrap();
        // A read starts, a write lands, the read ends with what it saw before the write.
        let writes = head.state().writes;
        head.swap(&version, Bytes::from_static(b"two")).await.unwrap();
        head.read_back(writes, Some((old, version)));
        assert_eq!(head.read_within(Duration::from_secs(60)).await.unwrap().unwrap().0, "two");
    }
}
