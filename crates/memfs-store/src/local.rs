//! The local folder (`file://`): a [`memfs_log::LogStore`] opened for this repository's
//! layout. Object paths (`objects/{id[0..2]}/{id}`) are fixed-width keys, stored as their 32
//! id bytes (docs/FORMAT.md, "The local folder: an append-only log"); they are appended without
//! a sync, the head's put syncs the log and every object before it (one sync per commit, and
//! the head never names an object a power loss could take back).
//!
//! Objects are named by their content, so any copy of one that a reader finds opens to the
//! same plaintext (a reseal's older copy too): reading one needs no catch-up with other
//! processes first (settled). One deleted by gc or purge meanwhile is still found, as just
//! before its deletion: gc's fences keep writers from naming an object it deletes whatever a
//! read saw, and a reader only asks for what a head names.

use memfs_log::{LogOptions, LogStore};

use crate::format::OBJECTS_PREFIX;

/// Opens (or creates) the log in `dir` as a `file://` store does: the one way to open a store
/// folder's log, for the repository, tests and tools alike (the bytes on disk depend on it).
pub fn open_local_log(dir: impl Into<std::path::PathBuf>) -> object_store::Result<LogStore> {
    let objects = format!("{OBJECTS_PREFIX}/");
    LogOptions::default()
        .fixed_width_keys(&objects)
        .lazy_prefixes(vec![objects.clone()])
        .settled_prefixes(vec![objects])
        .open(dir)
}
