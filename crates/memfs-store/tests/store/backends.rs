//! The backends the tests run on: memory, a local folder (`LogStore`), S3 on moto and Azure on
//! Azurite, each fresh and empty (the cloud ones under a random prefix of a shared bucket).
//!
//! S3 and Azure need `scripts/emulators.sh` (which `scripts/test.sh` runs everything under).
//! Without its variables they are skipped with a note, unless `MEMFS_TEST_CLOUD=required`, in
//! which case a missing variable fails the test: CI never skips them silently.

use std::sync::Arc;

use memfs_store::cloud::{self, CloudUrl};
use memfs_store::open_local_log;
use object_store::ObjectStore;
use object_store::memory::InMemory;

/// Which backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Memory,
    Local,
    S3,
    Azure,
}

/// A fresh, empty store; a local one's folder lives as long as this does.
pub(crate) struct TestStore {
    pub(crate) kind: Kind,
    pub(crate) store: Arc<dyn ObjectStore>,
    _dir: Option<tempfile::TempDir>,
}

fn random_name() -> String {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("random bytes");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn required() -> bool {
    std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required")
}

/// The options memfs's own S3 configuration gets for moto (through [`cloud::build`], so the
/// tests exercise the same configuration path as `s3://` URLs).
pub(crate) fn s3_options(endpoint: &str) -> Vec<(String, String)> {
    [
        ("aws_endpoint", endpoint),
        ("aws_allow_http", "true"),
        ("aws_region", "us-east-1"),
        ("aws_access_key_id", "test"),
        ("aws_secret_access_key", "test"),
        ("max_retries", "2"),
        ("retry_backoff", "10ms"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// A fresh store of `kind`; `None` when a cloud backend's variables are not set (and not
/// required).
pub(crate) fn fresh(kind: Kind) -> Option<TestStore> {
    let var = |name: &str| match std::env::var(name) {
        Ok(v) => Some(v),
        Err(_) if required() => panic!("MEMFS_TEST_CLOUD=required but {name} is not set"),
        Err(_) => {
            eprintln!("skipping {kind:?}: {name} is not set (scripts/emulators.sh sets it)");
            None
        }
    };
    let (store, dir): (Arc<dyn ObjectStore>, _) = match kind {
        Kind::Memory => (Arc::new(InMemory::new()), None),
        Kind::Local => {
            let dir = tempfile::tempdir().expect("a temporary folder");
            (Arc::new(open_local_log(dir.path().join("store")).expect("a log store")), Some(dir))
        }
        Kind::S3 => {
            let endpoint = var("MEMFS_TEST_S3_ENDPOINT")?;
            let url = CloudUrl::parse(&format!("s3://{}/store-tests/{}", var("MEMFS_TEST_S3_BUCKET")?, random_name()))
                .expect("an s3 URL");
            (cloud::build(&url, &s3_options(&endpoint), std::iter::empty()).expect("an S3 client"), None)
        }
        Kind::Azure => {
            var("AZURITE_BLOB_STORAGE_URL")?;
            let container = var("MEMFS_TEST_AZURE_CONTAINER")?;
            let url = CloudUrl::parse(&format!("az://{container}/store-tests/{}", random_name())).expect("an az URL");
            let options = [("azure_storage_use_emulator", "true"), ("max_retries", "2"), ("retry_backoff", "10ms")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()));
            (cloud::build(&url, &options, std::iter::empty()).expect("an Azure client"), None)
        }
    };
    Some(TestStore { kind, store, _dir: dir })
}
