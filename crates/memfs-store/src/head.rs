//! The head (and gc's state, and the key slots): the mutable objects, replaced by
//! compare-and-swap.
//!
//! Every backend is an object store with conditional writes: `PutMode::Create` for the first
//! head and `PutMode::Update` with the version read for every later one. Memory, S3, GCS and
//! Azure implement it; `object_store`'s `LocalFileSystem` does not, so a local folder is a
//! [`crate::log_store::LogStore`], whose writers append under an exclusive lock and compare
//! the e_tag there, safe across processes.

use std::fmt;
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
}

impl fmt::Debug for HeadVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadVersion::Object { e_tag, version } => write!(f, "Object({e_tag:?}, {version:?})"),
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
        let HeadVersion::Object { e_tag, version } = expected.clone();
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
