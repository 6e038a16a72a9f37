//! Rollback detection: the highest head generation this client has seen, per store.
//!
//! Someone who controls the storage can serve an older head: it is a genuine, authenticated
//! object, so only memory of the past can tell. The client keeps, in its state directory, the
//! highest generation it has seen for each store id, and refuses a head below it.
//!
//! The mark is read from its file once per process and kept in memory; the file is read again
//! and rewritten only when a head raises the mark, so a read-only command costs no file I/O
//! after the first.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::error::Error;

/// One store's high-water mark, in `{state_dir}/generations/{store_id}`.
pub(crate) struct Watermark {
    path: PathBuf,
    /// The highest generation known to this process: seen here or read from the file.
    seen: Mutex<Option<u64>>,
}

impl Watermark {
    pub(crate) fn new(state_dir: PathBuf, store_id: &str) -> Self {
        Watermark { path: state_dir.join("generations").join(store_id), seen: Mutex::new(None) }
    }

    fn read(&self) -> Result<u64, Error> {
        match std::fs::read_to_string(&self.path) {
            Ok(s) => s.trim().parse().map_err(|_| {
                Error::io(&self.path, std::io::Error::new(std::io::ErrorKind::InvalidData, "not a generation number"))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }

    /// The mark before a head is read: a head read afterwards must be at least this high.
    ///
    /// Read before the head, not after: another process may raise the mark between the two
    /// reads, and a head that was current when it was read is no rollback.
    pub(crate) fn floor(&self) -> Result<u64, Error> {
        let mut known = self.known();
        if let Some(k) = *known {
            return Ok(k);
        }
        let seen = self.read()?;
        *known = Some(seen);
        Ok(seen)
    }

    /// Checks a head read after [`Watermark::floor`] returned `floor`, and raises the mark.
    pub(crate) fn observe(&self, floor: u64, generation: u64) -> Result<(), Error> {
        if generation < floor {
            return Err(Error::Rollback { seen: floor, served: generation });
        }
        self.raise(generation)
    }

    /// Raises the mark to `generation` (a head this process read or committed).
    pub(crate) fn raise(&self, generation: u64) -> Result<(), Error> {
        let mut known = self.known();
        if known.is_some_and(|k| generation <= k) {
            return Ok(());
        }
        // Another process may have seen more: never lower the file.
        let seen = self.read()?;
        if generation > seen {
            if let Some(parent) = self.path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            let tmp = self.path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, generation.to_string()).map_err(|e| Error::io(&tmp, e))?;
            std::fs::rename(&tmp, &self.path).map_err(|e| Error::io(&self.path, e))?;
        }
        *known = Some(generation.max(seen));
        Ok(())
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Option<u64>> {
        // A value, never left half-written: a poisoned lock is still sound.
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}
