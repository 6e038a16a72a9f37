//! The head (and gc's state): the mutable objects, replaced by compare-and-swap.
//!
//! Object stores with conditional writes (memory, S3, GCS, Azure) use `PutMode::Create` for the
//! first head and `PutMode::Update` with the version they read for every later one.
//! `object_store`'s `LocalFileSystem` does not implement `PutMode::Update`, so the local folder
//! has its own compare-and-swap, safe across processes: an exclusive lock on `head.lock`, a
//! comparison with the bytes that were read, and a write to a temporary file renamed over
//! `head` (atomic on POSIX), with fsyncs so an acknowledged commit survives a crash.

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, UpdateVersion};

use crate::error::Error;

/// What a compare-and-swap compares against: opaque, from the last read.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum HeadVersion {
    /// An object store's ETag and version.
    Object { e_tag: Option<String>, version: Option<String> },
    /// The BLAKE3 hash of the local head file's bytes.
    Local(blake3::Hash),
}

impl fmt::Debug for HeadVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadVersion::Object { e_tag, version } => write!(f, "Object({e_tag:?}, {version:?})"),
            HeadVersion::Local(h) => write!(f, "Local({})", &h.to_hex()[..16]),
        }
    }
}

/// Reads and swaps the head's bytes.
#[async_trait]
pub(crate) trait HeadStore: Send + Sync {
    /// The current bytes and their version, or `None` before the first head.
    async fn read(&self) -> Result<Option<(Bytes, HeadVersion)>, Error>;
    /// Writes the first head; `Conflict` if one exists.
    async fn create(&self, bytes: Bytes) -> Result<(), Error>;
    /// Replaces the head if it is still at `expected`; `Conflict` otherwise.
    async fn swap(&self, expected: &HeadVersion, bytes: Bytes) -> Result<(), Error>;
}

/// A head object in an object store with conditional writes.
pub(crate) struct ConditionalHead {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) path: Path,
}

#[async_trait]
impl HeadStore for ConditionalHead {
    async fn read(&self) -> Result<Option<(Bytes, HeadVersion)>, Error> {
        match self.store.get(&self.path).await {
            Ok(r) => {
                let version = HeadVersion::Object { e_tag: r.meta.e_tag.clone(), version: r.meta.version.clone() };
                let bytes = r.bytes().await.map_err(|e| Error::backend("read", &self.path, e))?;
                Ok(Some((bytes, version)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(Error::backend("read", &self.path, e)),
        }
    }

    async fn create(&self, bytes: Bytes) -> Result<(), Error> {
        match self.store.put_opts(&self.path, bytes.into(), PutMode::Create.into()).await {
            Ok(_) => Ok(()),
            Err(object_store::Error::AlreadyExists { .. }) => Err(Error::Conflict),
            Err(e) => Err(Error::backend("create", &self.path, e)),
        }
    }

    async fn swap(&self, expected: &HeadVersion, bytes: Bytes) -> Result<(), Error> {
        let HeadVersion::Object { e_tag, version } = expected.clone() else {
            return Err(Error::Conflict);
        };
        let opts = PutOptions::from(PutMode::Update(UpdateVersion { e_tag, version }));
        match self.store.put_opts(&self.path, bytes.into(), opts).await {
            Ok(_) => Ok(()),
            Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => {
                Err(Error::Conflict)
            }
            Err(e) => Err(Error::backend("swap", &self.path, e)),
        }
    }
}

/// A mutable object of a local folder: `head` (or `gc.state`), guarded by `head.lock` (or
/// `gc.state.lock`).
pub(crate) struct LocalHead {
    pub(crate) dir: PathBuf,
    /// The file's name in the folder.
    pub(crate) name: &'static str,
}

impl LocalHead {
    fn head(&self) -> PathBuf {
        self.dir.join(self.name)
    }

    /// Runs `f` holding the exclusive lock, on a blocking thread.
    async fn locked<T: Send + 'static>(
        &self,
        f: impl FnOnce(PathBuf, &'static str) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let dir = self.dir.clone();
        let name = self.name;
        tokio::task::spawn_blocking(move || {
            let lock_path = dir.join(format!("{name}.lock"));
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| Error::io(&lock_path, e))?;
            // Released when `lock` is dropped (or the process dies).
            lock.lock().map_err(|e| Error::io(&lock_path, e))?;
            f(dir, name)
        })
        .await
        .map_err(|e| Error::io(&self.dir, std::io::Error::other(e)))?
    }
}

fn read_local(path: &std::path::Path) -> Result<Option<Bytes>, Error> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(Bytes::from(b))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Writes `bytes` to `dir/name` atomically and durably.
fn replace_local(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|_| Error::Crypt(memfs_crypt::Error::Random))?;
    let tmp = dir.join(format!(".{name}.{}.tmp", hex::encode(suffix)));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join(name))?;
        std::fs::File::open(dir)?.sync_all()
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(&dir.join(name), e)
    })
}

#[async_trait]
impl HeadStore for LocalHead {
    async fn read(&self) -> Result<Option<(Bytes, HeadVersion)>, Error> {
        // Readers need no lock: the head is only ever replaced by rename.
        let head = self.head();
        let bytes = tokio::task::spawn_blocking(move || read_local(&head))
            .await
            .map_err(|e| Error::io(&self.dir, std::io::Error::other(e)))??;
        Ok(bytes.map(|b| {
            let v = HeadVersion::Local(blake3::hash(&b));
            (b, v)
        }))
    }

    async fn create(&self, bytes: Bytes) -> Result<(), Error> {
        self.locked(move |dir, name| {
            if read_local(&dir.join(name))?.is_some() {
                return Err(Error::Conflict);
            }
            replace_local(&dir, name, &bytes)
        })
        .await
    }

    async fn swap(&self, expected: &HeadVersion, bytes: Bytes) -> Result<(), Error> {
        let expected = expected.clone();
        self.locked(move |dir, name| {
            let current = read_local(&dir.join(name))?.map(|b| HeadVersion::Local(blake3::hash(&b)));
            if current.as_ref() != Some(&expected) {
                return Err(Error::Conflict);
            }
            replace_local(&dir, name, &bytes)
        })
        .await
    }
}
