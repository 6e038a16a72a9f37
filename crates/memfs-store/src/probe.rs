//! Checks that an object store honours conditional writes before a store is created on it.
//!
//! Every commit swaps the head by compare-and-swap (`PutMode::Update` with the version read),
//! and objects and the first head are written with `PutMode::Create`. A service that accepts
//! those requests but ignores their preconditions (some S3 look-alikes do) would lose updates
//! silently whenever two writers race. So `memfs init` first writes a probe object under the
//! store's prefix and checks that a second create is refused, that an update with the current
//! version succeeds and that an update with a stale version is refused; then it deletes the
//! probe. A store that fails is refused with a message that says which check failed.

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, UpdateVersion};

use crate::error::Error;

/// Where the probe object is written (under the store's prefix), and removed again.
const PROBE_PREFIX: &str = "memfs.probe";

/// Probes `store` for honest conditional writes. `Ok` if it honours them; otherwise
/// [`Error::Unsafe`] naming the failed check, or the backend's error (missing bucket, bad
/// credentials, unreachable endpoint) as [`Error::Backend`].
pub async fn conditional_writes(store: &dyn ObjectStore) -> Result<(), Error> {
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).map_err(|_| memfs_crypt::Error::Random)?;
    let path = Path::from(format!("{PROBE_PREFIX}/{}", hex::encode(id)));
    let result = run(store, &path).await;
    // Best effort: a probe left behind is harmless (it is not an object name), but tidy.
    let _ = store.delete(&path).await;
    result
}

/// Lists the store's top level: `Ok` if the bucket exists and the credentials may list it;
/// otherwise the error says which of the two (or that the endpoint is unreachable). Used to
/// explain a store that looks empty: a missing bucket reads like a missing store.
pub async fn list_top(store: &dyn ObjectStore) -> Result<(), Error> {
    match store.list_with_delimiter(None).await {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::backend("list", &Path::from(""), e)),
    }
}

async fn run(store: &dyn ObjectStore, path: &Path) -> Result<(), Error> {
    // Distinct random contents: on S3 an ETag is the content's MD5, and equal bytes would make
    // a stale version look current.
    let payload = |n: u8| {
        let mut b = [0u8; 16];
        let _ = getrandom::fill(&mut b);
        b[0] = n;
        Bytes::copy_from_slice(&b)
    };
    let unsafe_store = |check: &'static str| Error::Unsafe { check };
    let first = store
        .put_opts(path, payload(1).into(), PutMode::Create.into())
        .await
        .map_err(|e| Error::backend("probe write", path, e))?;
    match store.put_opts(path, payload(2).into(), PutMode::Create.into()).await {
        Err(object_store::Error::AlreadyExists { .. }) => {}
        Ok(_) => return Err(unsafe_store("a create of an existing object was accepted (If-None-Match ignored)")),
        Err(e) => return Err(Error::backend("probe write", path, e)),
    }
    let stale = UpdateVersion::from(first);
    let second = match store.put_opts(path, payload(3).into(), PutOptions::from(PutMode::Update(stale.clone()))).await {
        Ok(r) => r,
        Err(object_store::Error::NotImplemented { .. } | object_store::Error::NotSupported { .. }) => {
            return Err(unsafe_store("conditional updates (If-Match) are not supported"));
        }
        Err(object_store::Error::Precondition { .. }) => {
            return Err(unsafe_store("an update with the current version was refused"));
        }
        Err(e) => return Err(Error::backend("probe update", path, e)),
    };
    match store.put_opts(path, payload(4).into(), PutOptions::from(PutMode::Update(stale))).await {
        Err(object_store::Error::Precondition { .. }) => {}
        Ok(_) => return Err(unsafe_store("an update with a stale version was accepted (If-Match ignored)")),
        Err(e) => return Err(Error::backend("probe update", path, e)),
    }
    drop(second);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use object_store::memory::InMemory;

    use super::*;

    #[tokio::test]
    async fn memory_is_honest_and_the_probe_is_removed() {
        let store = Arc::new(InMemory::new());
        conditional_writes(store.as_ref()).await.unwrap();
        use futures::TryStreamExt;
        let left: Vec<_> = store.list(None).try_collect().await.unwrap();
        assert!(left.is_empty());
    }

    /// A store that accepts conditional writes and ignores their preconditions, as some S3
    /// look-alikes do.
    #[derive(Debug)]
    struct Dishonest(InMemory);

    impl std::fmt::Display for Dishonest {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Dishonest")
        }
    }

    #[async_trait::async_trait]
    impl ObjectStore for Dishonest {
        async fn put_opts(
            &self,
            location: &Path,
            payload: object_store::PutPayload,
            _: PutOptions,
        ) -> object_store::Result<object_store::PutResult> {
            self.0.put_opts(location, payload, PutOptions::default()).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: object_store::PutMultipartOptions,
        ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
            self.0.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: object_store::GetOptions,
        ) -> object_store::Result<object_store::GetResult> {
            self.0.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
            self.0.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
            self.0.list(prefix)
        }
        async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<object_store::ListResult> {
            self.0.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: object_store::CopyOptions,
        ) -> object_store::Result<()> {
            self.0.copy_opts(from, to, options).await
        }
    }

    #[tokio::test]
    async fn a_store_that_ignores_preconditions_is_refused() {
        let err = conditional_writes(&Dishonest(InMemory::new())).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "this object store cannot hold a memfs store safely: a create of an existing object was accepted (If-None-Match ignored); concurrent writers could lose updates"
        );
    }

    #[tokio::test]
    async fn local_file_system_has_no_conditional_update() {
        let dir = tempfile::tempdir().unwrap();
        let store = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
        let err = conditional_writes(&store).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "this object store cannot hold a memfs store safely: conditional updates (If-Match) are not supported; concurrent writers could lose updates"
        );
    }
}
