//! A whole segment file (`log/0000000000000001`) opened by `LogStore`: every object listed
//! reads back at its listed size, and once a put has gone through (a writer first cuts a torn
//! tail), a fresh open of the folder reads the put back.
#![no_main]

use std::sync::LazyLock;

use futures::TryStreamExt;
use libfuzzer_sys::fuzz_target;
use memfs_store::open_local_log;
use object_store::{ObjectStore, ObjectStoreExt, path::Path};

/// In memory where there is a tmpfs (a writer's syncs cost nothing there).
static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("a temporary folder");
    std::fs::create_dir(dir.path().join("log")).expect("the log folder");
    dir
});

fuzz_target!(|data: &[u8]| {
    std::fs::write(DIR.path().join("log/0000000000000001"), data).expect("the segment is written");
    let Ok(store) = open_local_log(DIR.path()) else { return };
    memfs_fuzz::runtime().block_on(async {
        let Ok(listed) = store.list(None).try_collect::<Vec<_>>().await else { return };
        for meta in listed {
            let bytes = store.get(&meta.location).await.expect("a listed object reads").bytes().await.unwrap();
            assert_eq!(bytes.len() as u64, meta.size, "{}", meta.location);
        }
        let path = Path::from("objects/fuzz");
        if store.put(&path, "after".into()).await.is_ok() {
            let again = open_local_log(DIR.path()).expect("a log just written to opens");
            assert_eq!(again.get(&path).await.unwrap().bytes().await.unwrap(), "after");
        }
    });
});
