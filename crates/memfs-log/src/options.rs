//! [`LogOptions`]: what must be known before a log is read (how its keys are stored), and the
//! prefixes a caller names, set as it opens one.

use std::path::PathBuf;

use object_store::Result;

use super::fixed_keys::FixedKeys;
use super::store::LogStore;

/// How to open a [`LogStore`]: the options, then [`LogOptions::open`].
///
/// ```
/// use memfs_log::LogOptions;
///
/// let dir = tempfile::tempdir()?;
/// let log = LogOptions::default()
///     .fixed_width_keys("objects/")
///     .lazy_prefixes(vec!["objects/".into()])
///     .open(dir.path().join("store"))?;
/// # drop(log);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    fixed_keys: FixedKeys,
    lazy_prefixes: Vec<String>,
    settled_prefixes: Vec<String>,
}

impl LogOptions {
    /// Paths `{prefix}{hex[0..2]}/{hex}` with 64 lowercase hex digits are stored as their 32
    /// bytes (op flag 0x80 in a record, the crate docs' "Record"), and only so. Part of the
    /// folder's format: a log must be opened with the prefix it was written with, and one
    /// opened without any refuses such records as damage.
    #[must_use]
    pub fn fixed_width_keys(mut self, prefix: &str) -> Self {
        self.fixed_keys = FixedKeys::under(prefix);
        self
    }

    /// As [`LogStore::with_lazy_prefixes`].
    #[must_use]
    pub fn lazy_prefixes(mut self, prefixes: Vec<String>) -> Self {
        self.lazy_prefixes = prefixes;
        self
    }

    /// As [`LogStore::with_settled_prefixes`].
    #[must_use]
    pub fn settled_prefixes(mut self, prefixes: Vec<String>) -> Self {
        self.settled_prefixes = prefixes;
        self
    }

    /// Opens the log in `dir`, as [`LogStore::open`] does.
    pub fn open(self, dir: impl Into<PathBuf>) -> Result<LogStore> {
        LogStore::open_as(dir.into(), self.fixed_keys, self.lazy_prefixes, self.settled_prefixes)
    }
}
