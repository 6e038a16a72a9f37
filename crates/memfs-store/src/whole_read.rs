//! Reads of a whole object, fetched again from the start when its body breaks.
//!
//! object_store retries a request that fails, and resumes a body that breaks with a `Range`
//! request. When the object changed in between (a head another writer replaced), the resumed
//! part carries another ETag and object_store rightly refuses to stitch the two: the read fails
//! although the object is readable. A new GET of the whole object reads the new one.

use std::time::Duration;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{GetOptions, ObjectMeta, ObjectStore};

/// How many times a read whose body broke is sent again, whole (after 100, 200, 400 ms).
const BODY_RETRIES: u32 = 3;

/// The object at `path` and its metadata, read with `options`; a body that breaks is read
/// again from the start, up to [`BODY_RETRIES`] times. Errors of the request itself are
/// object_store's own (its client retries them).
pub(crate) async fn get_whole(
    store: &dyn ObjectStore,
    path: &Path,
    options: GetOptions,
) -> object_store::Result<(ObjectMeta, Bytes)> {
    let mut attempt = 0;
    loop {
        let got = store.get_opts(path, options.clone()).await?;
        let meta = got.meta.clone();
        match got.bytes().await {
            Ok(bytes) => return Ok((meta, bytes)),
            Err(_) if attempt < BODY_RETRIES => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// [`get_whole`] of the object at `path`, its bytes only.
pub(crate) async fn get_bytes(store: &dyn ObjectStore, path: &Path) -> object_store::Result<Bytes> {
    get_whole(store, path, GetOptions::default()).await.map(|(_, bytes)| bytes)
}
