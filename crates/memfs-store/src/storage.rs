//! Where a repository's objects live: an [`ObjectStore`], and the one capability the
//! repository asks of it beyond `ObjectStore`'s own: "these new objects, then this conditional
//! put, as one step" ([`Storage::put_new_then`]), which a commit's objects and its head need.
//!
//! Two kinds of storage give it: a local folder's log (`LocalLog`, in `local.rs`),
//! which compares and appends under one lock, and any other object store through
//! [`PutByPut`], which checks the condition, stores the objects one put each and then sends
//! the conditional put. The repository does not know which it has.
//!
//! Objects are named by their content, so a put of one is idempotent: a path that already
//! holds an object holds the same plaintext, and `AlreadyExists` is success.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{StreamExt, TryStreamExt, stream};
use object_store::path::Path;
use object_store::{ObjectStore, PutMode, PutResult};

use crate::progress::Progress;

/// How many requests for objects one client has in flight at once (a commit's objects, a
/// directory's pages, check, gc, purge, reseal): enough to hide a cloud's latency, few enough
/// that a fleet does not flood the service. Unbounded, 16 writers on moto held over 2,000
/// connections at once during their write-outs (a few hundred objects each), past the
/// server's limit and its accept queue, and connections were reset.
pub(crate) const PARALLEL: usize = 16;

/// How many times an object put that failed on the way is tried again (after 100, 200 and
/// 400 ms).
const OBJECT_PUT_RETRIES: u32 = 3;

/// The sizes of a log before and after [`Storage::compact`] rewrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compacted {
    pub(crate) bytes_before: u64,
    pub(crate) bytes_after: u64,
}

/// The writes a repository makes beyond plain `ObjectStore` calls.
#[async_trait]
pub(crate) trait Storage: Send + Sync {
    /// The store itself, for reads, listings, deletions and single puts.
    fn store(&self) -> &Arc<dyn ObjectStore>;

    /// Stores each of `objects` whose path holds nothing yet (one that holds something holds
    /// the same plaintext). A failure may leave some of them stored.
    async fn put_new(&self, objects: Vec<(Path, Bytes)>) -> object_store::Result<()>;

    /// [`Storage::put_new`] of `objects`, then the put of `payload` at `location` under `mode`
    /// (a compare-and-swap), as one step: when `mode`'s condition does not hold as it starts,
    /// nothing is stored and the answer is `Precondition` (or `AlreadyExists` for a create).
    /// `check` reads the condition afresh (through the caller, which remembers what it reads)
    /// for storage that cannot check it as it stores; storage that can leaves it unpolled.
    /// Objects sealed for a compare-and-swap on one head must never be stored once another
    /// head has replaced it (docs/SECURITY.md, "A writer that missed a rotation"). A head
    /// replaced after the check finds the objects stored (they are idempotent) and the
    /// conditional put refused.
    async fn put_new_then(
        &self,
        objects: Vec<(Path, Bytes)>,
        location: &Path,
        payload: Bytes,
        mode: PutMode,
        check: BoxFuture<'_, object_store::Result<()>>,
    ) -> object_store::Result<PutResult>;

    /// Rewrites the storage without what was deleted or replaced, reporting `phase`
    /// "compacting" to `progress`; `None` where nothing is kept that a deletion left.
    async fn compact(&self, progress: &dyn Progress) -> object_store::Result<Option<Compacted>>;
}

/// Any object store with conditional puts (memory, S3, GCS, Azure): the condition checked by a
/// fresh read (the caller's `check`), then one put per object, [`PARALLEL`] at a time, then the
/// conditional put.
pub(crate) struct PutByPut {
    store: Arc<dyn ObjectStore>,
}

impl PutByPut {
    pub(crate) fn storage(store: Arc<dyn ObjectStore>) -> Arc<dyn Storage> {
        Arc::new(PutByPut { store })
    }

    /// One object put ([`retried`]); a path that holds the object already is success.
    async fn put_one(&self, path: Path, bytes: Bytes) -> object_store::Result<()> {
        let put = || async {
            match self.store.put_opts(&path, bytes.clone().into(), PutMode::Create.into()).await {
                Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        };
        retried(put).await
    }
}

#[async_trait]
impl Storage for PutByPut {
    fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    async fn put_new(&self, objects: Vec<(Path, Bytes)>) -> object_store::Result<()> {
        stream::iter(objects)
            .map(|(path, bytes)| self.put_one(path, bytes))
            .buffer_unordered(PARALLEL)
            .try_collect()
            .await
    }

    async fn put_new_then(
        &self,
        objects: Vec<(Path, Bytes)>,
        location: &Path,
        payload: Bytes,
        mode: PutMode,
        check: BoxFuture<'_, object_store::Result<()>>,
    ) -> object_store::Result<PutResult> {
        // No objects: the conditional put alone refuses a head that moved.
        if !objects.is_empty() {
            check.await?;
            self.put_new(objects).await?;
        }
        self.store.put_opts(location, payload.into(), mode.into()).await
    }

    async fn compact(&self, _: &dyn Progress) -> object_store::Result<Option<Compacted>> {
        Ok(None)
    }
}

/// An object put (`put`), tried again when it failed on the way (a connection the server
/// closed as it was reused, a timeout): the client's own retries do not cover every such case
/// for a conditional put, and an object put is idempotent (same id, same plaintext).
pub(crate) async fn retried<T, F: Future<Output = object_store::Result<T>>>(
    put: impl Fn() -> F,
) -> object_store::Result<T> {
    let mut attempt = 0;
    loop {
        match put().await {
            Err(e) if attempt < OBJECT_PUT_RETRIES && transient(&e) => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
            }
            answer => return answer,
        }
    }
}

/// Whether a backend error may go away by itself: not a refusal the service decided on.
fn transient(e: &object_store::Error) -> bool {
    !matches!(
        e,
        object_store::Error::NotFound { .. }
            | object_store::Error::Precondition { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }
            | object_store::Error::NotSupported { .. }
            | object_store::Error::NotImplemented { .. }
            | object_store::Error::InvalidPath { .. }
    )
}
