//! Test-only: an in-memory object store that runs an action once, at a chosen operation,
//! against the repository built on it. It puts a writer's commit (or a purge) at an exact
//! point of a gc, purge or check, where a race test would hit it once in hundreds of runs.

use std::fmt;
use std::sync::{Arc, OnceLock, Weak};

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

use crate::StateDir;
use crate::encrypted::{Backend, EncryptedRepository, OpenOptions};

/// Where the action runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    /// Before the first deletion; every deletion waits until the action is done.
    Delete,
    /// At the first listing, before the store is listed: the caller sees what the action did.
    ListBefore,
    /// At the first listing, after the store was listed: the caller gets the listing from
    /// before the action.
    ListAfter,
}

/// What runs, given the repository.
pub(crate) type Action = Box<dyn FnOnce(Arc<EncryptedRepository>) -> BoxFuture<'static, ()> + Send>;

/// Shared by the store and its streams: the action waiting to run, and the repository.
#[derive(Default)]
struct Hook {
    armed: tokio::sync::Mutex<Option<(At, Action)>>,
    repo: OnceLock<Weak<EncryptedRepository>>,
}

impl Hook {
    /// Runs the action if it is armed at `at` (once). Deletions wait until it is done (a
    /// writer's commit lands before any of them), so a deletion's action must not delete; a
    /// listing's action may list.
    async fn fire(&self, at: At) {
        let mut armed = self.armed.lock().await;
        if !armed.as_ref().is_some_and(|(when, _)| *when == at) {
            return;
        }
        let (_, action) = armed.take().expect("armed");
        let _held = match at {
            At::Delete => Some(armed),
            At::ListBefore | At::ListAfter => {
                drop(armed);
                None
            }
        };
        let repo = self.repo.get().and_then(Weak::upgrade).expect("the repository is alive");
        action(repo).await;
    }
}

/// The store; see the module documentation.
pub(crate) struct Hooked {
    inner: InMemory,
    hook: Arc<Hook>,
}

impl Hooked {
    /// A new store and the encrypted repository on it (a key-file slot, no state folder).
    pub(crate) async fn repository() -> (Arc<Hooked>, Arc<EncryptedRepository>) {
        let store = Arc::new(Hooked { inner: InMemory::new(), hook: Arc::default() });
        let key = memfs_crypt::KeyFile::from_bytes([3; 32]);
        let repo = EncryptedRepository::init(
            Backend::ObjectStore(store.clone()),
            |master, id| memfs_crypt::KeySlots::with_key_file(master, id, &key),
            OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() },
        )
        .await
        .expect("a new store");
        let repo = Arc::new(repo);
        assert!(store.hook.repo.set(Arc::downgrade(&repo)).is_ok(), "set once");
        (store, repo)
    }

    /// Runs `action` once, at the next operation `at`.
    pub(crate) async fn arm(&self, at: At, action: Action) {
        *self.hook.armed.lock().await = Some((at, action));
    }

    /// Whether the armed action has run.
    pub(crate) async fn fired(&self) -> bool {
        self.hook.armed.lock().await.is_none()
    }
}

impl fmt::Debug for Hooked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hooked(InMemory)")
    }
}

impl fmt::Display for Hooked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Hooked {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        let (hook, inner) = (self.hook.clone(), self.inner.clone());
        locations
            .then(move |location| {
                let (hook, inner) = (hook.clone(), inner.clone());
                async move {
                    hook.fire(At::Delete).await;
                    let location = location?;
                    inner.delete(&location).await.map(|()| location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let (hook, inner, prefix) = (self.hook.clone(), self.inner.clone(), prefix.cloned());
        stream::once(async move {
            hook.fire(At::ListBefore).await;
            let listed: Vec<Result<ObjectMeta>> = inner.list(prefix.as_ref()).collect().await;
            hook.fire(At::ListAfter).await;
            stream::iter(listed)
        })
        .flatten()
        .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
