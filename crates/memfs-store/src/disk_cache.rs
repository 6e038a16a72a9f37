//! The optional on-disk cache of immutable objects (`OpenOptions::cache_dir`).
//!
//! It holds objects exactly as stored: sealed, so they are encrypted and authenticated, and
//! opened and checked against their id like a fetched object on every read. A file that does
//! not open (damaged, truncated, tampered with, another store's) is a miss: it is deleted and
//! the object fetched again. Nothing in it is ever trusted, so losing or deleting any of it at
//! any time is safe.
//!
//! Layout: `{cache_dir}/{store id}/{id[0..2]}/{id}`, folders mode 0700, files mode 0600, each
//! written to a temporary name and renamed (no sync: a torn file is a miss). Links are never
//! followed below `{cache_dir}`: a file read through one is a miss, a folder that is one is not
//! written into, and eviction skips them (see `local_fs`). File contents and
//! directory pages only (commits and policies come inline in the head, or from the store).
//!
//! Size: at most [`DISK_CACHE_BYTES`] per store, approximately. The first write of a process
//! adds up what is there; when a write passes the bound, the oldest files (by modification
//! time) are removed until a quarter of the bound is free. Processes sharing a folder each
//! count on their own, so the bound can be passed by what the others wrote since.
//! `memfs gc` and `memfs purge` delete from it the objects they delete from the store (on this
//! machine only: other machines' caches keep their sealed copies until evicted).

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use memfs_core::ObjectId;

use memfs_log::local_fs::{self, OpenError};

/// The bound on a store's cache folder, in bytes of sealed objects.
pub const DISK_CACHE_BYTES: u64 = 256 << 20;

/// One store's folder in the cache.
pub(crate) struct DiskCache {
    dir: PathBuf,
    limit: u64,
    /// Bytes in the folder as this process counts them; `None` until the first write.
    used: Mutex<Option<u64>>,
    /// Makes temporary names unique within the process.
    counter: AtomicU64,
}

impl DiskCache {
    /// The cache of store `store_id` under `root`; `None` for a store without an id (an
    /// ephemeral one, which has nothing to keep).
    pub(crate) fn new(root: &Path, store_id: &str) -> Option<Self> {
        if store_id.is_empty() || !store_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(DiskCache {
            dir: root.join(store_id),
            limit: DISK_CACHE_BYTES,
            used: Mutex::new(None),
            counter: AtomicU64::new(0),
        })
    }

    /// Sets the bound (tests).
    #[cfg(test)]
    fn with_limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    fn path(&self, id: &ObjectId) -> PathBuf {
        let hex = id.to_hex();
        self.dir.join(&hex[..2]).join(hex)
    }

    /// The sealed bytes of `id`, if cached. Not yet checked: the caller opens them.
    pub(crate) fn get(&self, id: &ObjectId) -> Option<Vec<u8>> {
        // Never through a link: whoever can write the cache would have memfs read (and then,
        // the bytes failing to open, delete) a file of their choice.
        let mut file = local_fs::open_file(&self.path(id), fs::OpenOptions::new().read(true)).ok()?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }

    /// Removes `id` (a file that did not open, or an object deleted from the store).
    pub(crate) fn remove(&self, id: &ObjectId) {
        let path = self.path(id);
        // The entry itself (`unlink` removes a link, not its target).
        if let Ok(meta) = fs::symlink_metadata(&path)
            && fs::remove_file(&path).is_ok()
        {
            self.account(-(meta.len() as i64));
        }
    }

    /// Stores the sealed bytes of `id`. Best effort: a cache that cannot be written is a cache
    /// that misses.
    pub(crate) fn put(&self, id: &ObjectId, sealed: &[u8]) {
        let path = self.path(id);
        if fs::symlink_metadata(&path).is_ok() {
            return;
        }
        if self.write(&path, sealed).is_ok() {
            self.account(sealed.len() as i64);
        }
    }

    fn write(&self, path: &Path, sealed: &[u8]) -> std::io::Result<()> {
        let parent = path.parent().expect("an object path has a folder");
        private_dirs(parent)?;
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("object");
        let tmp = parent.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        // Created exclusively (never through a link), and renamed over whatever has the name
        // (a rename replaces a link, it does not write through it).
        let created = local_fs::create_new(&tmp, 0o600).map_err(|e| match e {
            OpenError::Io(e) => e,
            OpenError::Unsafe(u) => std::io::Error::other(u),
        });
        let written = created.and_then(|mut f| f.write_all(sealed)).and_then(|()| fs::rename(&tmp, path));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }

    /// Adds `delta` bytes to the count (counting the folder first, once), and evicts when
    /// the count passes the bound.
    fn account(&self, delta: i64) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let now = match *used {
            Some(u) => u.saturating_add_signed(delta),
            // The first count sees the folder after this change.
            None => self.files().iter().map(|f| f.1).sum(),
        };
        *used = Some(if now > self.limit { self.evict(self.limit - self.limit / 4) } else { now });
    }

    /// Removes the oldest files until at most `target` bytes remain; returns what remains.
    fn evict(&self, target: u64) -> u64 {
        let mut files = self.files();
        files.sort_by_key(|f| f.2);
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        for (path, size, _) in files {
            if total <= target {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= size;
            }
        }
        total
    }

    /// Every cached file: path, size, modification time.
    fn files(&self) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        let mut out = Vec::new();
        let Ok(prefixes) = fs::read_dir(&self.dir) else { return out };
        for prefix in prefixes.flatten() {
            // A link among the folders would have eviction delete files elsewhere.
            if !prefix.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(entries) = fs::read_dir(prefix.path()) else { continue };
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_file() {
                    let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                    out.push((entry.path(), meta.len(), modified));
                }
            }
        }
        out
    }
}

/// Creates a folder and its missing parents, each readable by the owner only. The folder and
/// its parent (the store's folder in the cache) must be folders, not links: writing through a
/// link would put files where whoever planted it chose.
fn private_dirs(dir: &Path) -> std::io::Result<()> {
    let check = |d: &Path| {
        local_fs::open_dir(d).map(drop).map_err(|e| match e {
            OpenError::Io(e) => e,
            OpenError::Unsafe(u) => std::io::Error::other(u),
        })
    };
    // The parent first: creating below a link would create in the link's target.
    if let Some(parent) = dir.parent()
        && fs::symlink_metadata(parent).is_ok()
    {
        check(parent)?;
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    check(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes([n; 32])
    }

    #[test]
    fn stores_reads_and_removes_privately() {
        let root = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(root.path(), "00ff").unwrap();
        assert!(cache.get(&id(1)).is_none());
        cache.put(&id(1), b"sealed");
        assert_eq!(cache.get(&id(1)).unwrap(), b"sealed");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&cache.path(&id(1))), 0o600);
            assert_eq!(mode(cache.path(&id(1)).parent().unwrap()), 0o700);
            assert_eq!(mode(&root.path().join("00ff")), 0o700);
        }
        cache.remove(&id(1));
        assert!(cache.get(&id(1)).is_none());
        assert!(DiskCache::new(root.path(), "").is_none());
        assert!(DiskCache::new(root.path(), "../x").is_none());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(root.path(), "00ff").unwrap();
        cache.put(&id(1), b"sealed");
        // A file planted as a link: a miss, and removing it removes the link only.
        let target = outside.path().join("authorized_keys");
        fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, cache.path(&id(1))).unwrap_err();
        fs::remove_file(cache.path(&id(1))).unwrap();
        std::os::unix::fs::symlink(&target, cache.path(&id(1))).unwrap();
        assert!(cache.get(&id(1)).is_none());
        cache.remove(&id(1));
        assert!(fs::symlink_metadata(cache.path(&id(1))).is_err());
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        // A folder planted as a link: nothing is written into it, nor evicted from it.
        let prefix = cache.path(&id(2)).parent().unwrap().to_owned();
        std::os::unix::fs::symlink(outside.path(), &prefix).unwrap();
        cache.put(&id(2), b"sealed");
        assert!(cache.get(&id(2)).is_none());
        let mut names: Vec<_> = fs::read_dir(outside.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["authorized_keys"]);
        assert!(cache.files().is_empty());
    }

    #[test]
    fn evicts_the_oldest_past_the_bound() {
        let root = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(root.path(), "ab").unwrap().with_limit(1000);
        for n in 0..9 {
            cache.put(&id(n), &[n; 100]);
            // Distinct modification times, oldest first.
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + u64::from(n));
            fs::File::options().write(true).open(cache.path(&id(n))).unwrap().set_modified(t).unwrap();
        }
        assert_eq!(cache.files().len(), 9);
        cache.put(&id(9), &[9; 300]);
        // 1,200 bytes > 1,000: the oldest go until at most 750 remain.
        let left: u64 = cache.files().iter().map(|f| f.1).sum();
        assert!(left <= 750, "{left}");
        assert!(cache.get(&id(9)).is_some());
        assert!(cache.get(&id(0)).is_none());
        assert_eq!(*cache.used.lock().unwrap(), Some(left));
    }
}
