//! Tenants: `--namespace` (`Location::namespace`) gives each tenant its own prefix and its own
//! random first key, on the local folder, S3 (moto) and Azure (Azurite). The tests look at the
//! raw stored bytes: nothing in one namespace names the other, equal contents get unrelated
//! ids, and one tenant's keys open none of the other's objects.

use std::sync::Arc;

use futures::TryStreamExt;
use memfs::StateDir;
use memfs::{Credential, Dialect, KdfParams, KeyFile, Location, Memfs, OpenOptions};
use memfs_store::cloud::{self, CloudUrl};
use memfs_store::open_local_log;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use serde_json::json;

use crate::support::{persistent_backends, persistent_location};

fn key(byte: u8) -> Credential {
    Credential::KeyFile(KeyFile::from_bytes([byte; 32]))
}

/// The raw object store under a namespace of `base`, as memfs lays it out.
fn raw(backend: &str, base: &Location, dir: Option<&std::path::Path>, ns: &str) -> Arc<dyn ObjectStore> {
    if backend == "local" {
        let folder = dir.expect("a local folder").join("store").join("ns").join(ns);
        return Arc::new(open_local_log(folder).expect("the namespace's log opens"));
    }
    let mut url = CloudUrl::parse(base.url()).expect("a cloud URL");
    url.prefix = format!("{}/ns/{ns}", url.prefix);
    // The same options the test location carries (see `support::persistent_location`).
    let options: Vec<(String, String)> = match backend {
        "s3" => [
            ("aws_endpoint", std::env::var("MEMFS_TEST_S3_ENDPOINT").expect("endpoint")),
            ("aws_allow_http", "true".into()),
            ("aws_region", "us-east-1".into()),
            ("aws_access_key_id", "test".into()),
            ("aws_secret_access_key", "test".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
        _ => vec![("azure_storage_use_emulator".to_owned(), "true".to_owned())],
    };
    cloud::build(&url, &options, std::iter::empty()).expect("the raw store builds")
}

/// Every stored name and its bytes.
async fn dump(store: &dyn ObjectStore) -> Vec<(String, Vec<u8>)> {
    let metas: Vec<_> = store.list(None).try_collect().await.expect("list");
    let mut out = Vec::new();
    for meta in metas {
        let bytes = store.get(&meta.location).await.expect("get").bytes().await.expect("bytes");
        out.push((meta.location.to_string(), bytes.to_vec()));
    }
    out.sort();
    out
}

fn store_id(objects: &[(String, Vec<u8>)]) -> String {
    let (_, keys) = objects.iter().find(|(name, _)| name == "memfs.keys").expect("memfs.keys");
    let keys: serde_json::Value = serde_json::from_slice(keys).expect("memfs.keys is JSON");
    keys["store_id"].as_str().expect("a store id").to_owned()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn open(location: &Location, credential: Credential) -> Result<Memfs, memfs::Error> {
    Memfs::open(
        location,
        OpenOptions {
            dialect: Dialect::Spec,
            credential: Some(credential),
            state_dir: StateDir::Off,
            // Every object stored before its head: the test compares the stored objects.
            unwritten_bytes: Some(0),
            ..Default::default()
        },
    )
    .await
}

#[tokio::test]
async fn namespaces_are_separate_stores_with_separate_keys() {
    for backend in persistent_backends() {
        let (base, dir) = persistent_location(backend).expect("the backend's variables");
        let alpha = base.clone().namespace("alpha");
        let beta = base.clone().namespace("beta");
        // The same credential for both: the first keys still differ (each is random).
        Memfs::init(&alpha, &key(1), KdfParams::DEFAULT).await.expect("init alpha");
        Memfs::init(&beta, &key(1), KdfParams::DEFAULT).await.expect("init beta");
        let a = open(&alpha, key(1)).await.expect("open alpha");
        let b = open(&beta, key(1)).await.expect("open beta");
        let same = json!({"command": "create", "path": "/memories/shared.md", "file_text": "the same words\n"});
        assert!(!a.call(&same).await.is_error);
        assert!(!b.call(&same).await.is_error);
        let own = json!({"command": "create", "path": "/memories/alpha-only.md", "file_text": "alpha's\n"});
        assert!(!a.call(&own).await.is_error);

        // Each tenant sees its own tree only.
        let listing = |extra: &str| {
            format!(
                "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n{extra}15B\t/memories/shared.md"
            )
        };
        let view = json!({"command": "view", "path": "/memories"});
        assert_eq!(a.call(&view).await.content, listing("8B\t/memories/alpha-only.md\n"), "{backend}");
        assert_eq!(b.call(&view).await.content, listing(""), "{backend}");

        // Nothing in one namespace names the other: not its store id, not one object name,
        // even for the content both hold.
        let raw_a = dump(raw(backend, &base, dir.as_ref().map(|d| d.path()), "alpha").as_ref()).await;
        let raw_b = dump(raw(backend, &base, dir.as_ref().map(|d| d.path()), "beta").as_ref()).await;
        let (id_a, id_b) = (store_id(&raw_a), store_id(&raw_b));
        assert_ne!(id_a, id_b);
        let objects = |dump: &[(String, Vec<u8>)]| -> Vec<String> {
            dump.iter().filter(|(n, _)| n.starts_with("objects/")).map(|(n, _)| n.clone()).collect()
        };
        let (objects_a, objects_b) = (objects(&raw_a), objects(&raw_b));
        assert!(objects_a.len() >= 4 && objects_b.len() >= 3, "{backend}: {objects_a:?} {objects_b:?}");
        for name in &objects_a {
            assert!(!objects_b.contains(name), "{backend}: {name} is in both namespaces");
        }
        for (mine, theirs_id, theirs) in [(&raw_a, &id_b, &objects_b), (&raw_b, &id_a, &objects_a)] {
            for (name, bytes) in mine {
                assert!(!contains(bytes, theirs_id.as_bytes()), "{backend}: {name} names the other store");
                for other in theirs {
                    let other_id = other.rsplit('/').next().expect("an id");
                    assert!(!contains(bytes, other_id.as_bytes()), "{backend}: {name} names {other}");
                }
            }
        }

        // A key that opens one namespace does not open the other.
        Memfs::init(base.clone().namespace("gamma"), &key(2), KdfParams::DEFAULT).await.expect("init gamma");
        let err = open(&base.clone().namespace("gamma"), key(1)).await.err().expect("key 1 does not open gamma");
        assert_eq!(
            memfs::error_chain(&err),
            format!("store {} (namespace gamma): wrong passphrase or key file", memfs::redact(base.url())),
            "{backend}"
        );

        if backend != "local" {
            // One tenant's first key opens none of the other's objects: alpha's head,
            // replaced by beta's (authentic, under beta's key), is refused as tampered.
            let raw_alpha = raw(backend, &base, None, "alpha");
            let (_, beta_head) = raw_b.iter().find(|(n, _)| n == "head").expect("beta's head");
            raw_alpha.put(&Path::from("head"), beta_head.clone().into()).await.expect("overwrite alpha's head");
            let fresh = open(&alpha, key(1)).await.expect("open alpha again");
            let answer = fresh.call(&view).await;
            assert!(answer.is_error, "{backend}");
            assert_eq!(
                answer.content,
                format!(
                    "memfs: store {} (namespace alpha): object head failed authentication: it was modified, swapped or written under another key",
                    memfs::redact(base.url())
                ),
                "{backend}"
            );
        }
    }
}
