//! Rollback and fork detection: the newest commit this client has seen, per store.
//!
//! Someone who controls the storage can serve an older head, or a head on another branch
//! (hide Alice's commit, let Bob commit on the state before it): both are genuine,
//! authenticated objects, so only memory of the past can tell. The client keeps, in its state
//! directory, the newest commit it has seen for each store (its generation and id), and
//! accepts a head only if it is that commit or descends from it (the walk is in
//! `encrypted/snapshot.rs`).
//!
//! The mark is read from its file once per process and kept in memory; the file is read again
//! and rewritten only when a head raises the mark, so a read-only command costs no file I/O
//! after the first. A process that commits again and again writes the file at most once per
//! [`WRITE_EVERY`] (the first raise at once, later ones when that time has passed since the
//! last write, at the next raise or head read, and when the store is dropped): a durable
//! write costs two syncs, more than the commit itself. A crash may so lose the last second's
//! raises, which only narrows the check to the mark before them; the file is never ahead of
//! a durable head (a commit's head is synced before its mark is raised).
//!
//! The file, `{state_dir}/generations/{store id}` (the canonical 32 lowercase hex digits of
//! the store id), holds `{generation} {commit id}\n`. One written by a pre-release memfs
//! holds a generation alone; it is read as a mark with no commit (a generation check only,
//! once) and replaced by the next raise. It is raised under an exclusive `flock` on
//! `{store id}.lock` next to it: the file is read again under the lock and replaced only by
//! a higher generation, so two processes can never lower it. It is replaced atomically: a
//! temporary file created exclusively (0600, never through a link) is written and synced, then
//! renamed over the mark, and the folder is synced.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use memfs_core::ObjectId;

use crate::error::Error;

/// A commit this client has seen: its generation and id (`None` before the first commit,
/// and for a mark a pre-release memfs wrote, which held a generation only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) generation: u64,
    pub(crate) commit: Option<ObjectId>,
}

/// How often a process that keeps raising the mark writes it to its file.
pub(crate) const WRITE_EVERY: Duration = Duration::from_secs(1);

/// One store's remembered commit, in `{state_dir}/generations/{store_id}`.
pub(crate) struct Watermark {
    dir: PathBuf,
    path: PathBuf,
    lock: PathBuf,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    /// The newest mark known to this process: seen here or read from the file.
    known: Option<Mark>,
    /// A raise not written to the file yet.
    unwritten: Option<Mark>,
    /// When this process last wrote the file.
    written_at: Option<Instant>,
}

impl Watermark {
    /// The mark of the store whose canonical id is `store_id` (32 lowercase hex digits).
    pub(crate) fn new(state_dir: &Path, store_id: &str) -> Self {
        let dir = state_dir.join("generations");
        Watermark {
            path: dir.join(store_id),
            lock: dir.join(format!("{store_id}.lock")),
            dir,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// The mark before a head is read: a head read afterwards must be it or descend from it.
    ///
    /// Read before the head, not after: another process may raise the mark between the two
    /// reads, and a head that was current when it was read is no rollback.
    pub(crate) fn floor(&self) -> Result<Mark, Error> {
        let mut seen = self.seen();
        self.write_if_due(&mut seen)?;
        if let Some(k) = seen.known {
            return Ok(k);
        }
        let on_file = self.read()?;
        seen.known = Some(on_file);
        Ok(on_file)
    }

    /// Remembers `mark` (a head this process verified or committed) if it is newer than the
    /// mark on file. Never lowers the file.
    pub(crate) fn raise(&self, mark: Mark) -> Result<(), Error> {
        self.write(mark, false)
    }

    /// Remembers `mark` whatever the file holds: the user trusted this head explicitly.
    pub(crate) fn replace(&self, mark: Mark) -> Result<(), Error> {
        self.write(mark, true)
    }

    fn write(&self, mark: Mark, force: bool) -> Result<(), Error> {
        let mut seen = self.seen();
        if !force && seen.known.is_some_and(|k| mark.generation < k.generation || k == mark) {
            return Ok(());
        }
        if !force && seen.written_at.is_some_and(|t| t.elapsed() < WRITE_EVERY) {
            seen.known = Some(mark);
            seen.unwritten = Some(mark);
            return Ok(());
        }
        self.write_now(&mut seen, mark, force)
    }

    /// Writes a raise held back, once [`WRITE_EVERY`] has passed since the last write.
    fn write_if_due(&self, seen: &mut Seen) -> Result<(), Error> {
        match seen.unwritten {
            Some(mark) if seen.written_at.is_none_or(|t| t.elapsed() >= WRITE_EVERY) => {
                self.write_now(seen, mark, false)
            }
            _ => Ok(()),
        }
    }

    fn write_now(&self, seen: &mut Seen, mark: Mark, force: bool) -> Result<(), Error> {
        create_private_dir(&self.dir)?;
        let lock = open_nofollow(&self.lock, false)?;
        lock.lock().map_err(|e| Error::io(&self.lock, e))?;
        // Another process may have seen more: read again under the lock.
        let on_file = self.read()?;
        let newest = if force || mark.generation > on_file.generation { mark } else { on_file };
        if newest != on_file {
            self.store(newest)?;
        }
        seen.known = Some(newest);
        seen.unwritten = None;
        seen.written_at = Some(Instant::now());
        // The lock is released when `lock` is closed, after the rename.
        drop(lock);
        Ok(())
    }

    fn read(&self) -> Result<Mark, Error> {
        let file = match open_nofollow(&self.path, true) {
            Ok(f) => f,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Mark { generation: 0, commit: None });
            }
            Err(e) => return Err(e),
        };
        let text = std::io::read_to_string(file).map_err(|e| Error::io(&self.path, e))?;
        parse(&text).ok_or_else(|| {
            Error::io(&self.path, std::io::Error::new(std::io::ErrorKind::InvalidData, "not a remembered commit"))
        })
    }

    /// Replaces the file atomically (the lock is held).
    fn store(&self, mark: Mark) -> Result<(), Error> {
        let tmp = self.path.with_extension("tmp");
        // A crashed writer's leftover: removed through the folder, never followed.
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&tmp, e)),
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        nofollow_private(&mut options);
        let mut file = options.open(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let text = match mark.commit {
            Some(c) => format!("{} {}\n", mark.generation, c.to_hex()),
            None => format!("{}\n", mark.generation),
        };
        file.write_all(text.as_bytes()).map_err(|e| Error::io(&tmp, e))?;
        file.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(file);
        std::fs::rename(&tmp, &self.path).map_err(|e| Error::io(&self.path, e))?;
        File::open(&self.dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(&self.dir, e))
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        // A value, never left half-written: a poisoned lock is still sound.
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Watermark {
    /// Writes a raise held back. An error here has no one to report to: the mark on file stays
    /// the one before, as after a crash.
    fn drop(&mut self) {
        let mut seen = self.seen();
        if let Some(mark) = seen.unwritten {
            let _ = self.write_now(&mut seen, mark, false);
        }
    }
}

/// `{generation} {commit id}` or, written by a pre-release memfs, `{generation}`.
fn parse(text: &str) -> Option<Mark> {
    let mut words = text.split_ascii_whitespace();
    let generation = words.next()?.parse().ok()?;
    let commit = match words.next() {
        Some(hex) => Some(crate::format::parse_id(hex)?),
        None => None,
    };
    match words.next() {
        Some(_) => None,
        None => Some(Mark { generation, commit }),
    }
}

/// Opens `path` for reading (`read`) or as a lock file (created if missing), never through a
/// symbolic link, 0600 when created.
fn open_nofollow(path: &Path, read: bool) -> Result<File, Error> {
    let mut options = std::fs::OpenOptions::new();
    if read {
        options.read(true);
    } else {
        options.write(true).create(true).truncate(false);
    }
    nofollow_private(&mut options);
    options.open(path).map_err(|e| Error::io(path, e))
}

fn nofollow_private(options: &mut std::fs::OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The bits of rustix's flag are the platform's O_NOFOLLOW.
        options.mode(0o600).custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    #[cfg(not(unix))]
    let _ = options;
}

/// Creates a folder (and its parents) readable by the owner only.
fn create_private_dir(dir: &Path) -> Result<(), Error> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_parse_both_forms_and_nothing_else() {
        let id = ObjectId::from_bytes([0xab; 32]);
        assert_eq!(parse("7\n"), Some(Mark { generation: 7, commit: None }));
        assert_eq!(parse(&format!("7 {}\n", id.to_hex())), Some(Mark { generation: 7, commit: Some(id) }));
        for bad in ["", "x", "7 abc", &format!("7 {} 8", id.to_hex())] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_mark_never_goes_down_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (ObjectId::from_bytes([1; 32]), ObjectId::from_bytes([2; 32]));
        let first = Watermark::new(dir.path(), "00112233445566778899aabbccddeeff");
        let second = Watermark::new(dir.path(), "00112233445566778899aabbccddeeff");
        first.raise(Mark { generation: 5, commit: Some(a) }).unwrap();
        // Another process that last knew less does not lower it.
        second.raise(Mark { generation: 3, commit: Some(b) }).unwrap();
        assert_eq!(Watermark::new(dir.path(), "00112233445566778899aabbccddeeff").floor().unwrap().generation, 5);
        second.replace(Mark { generation: 3, commit: Some(b) }).unwrap();
        let path = dir.path().join("generations/00112233445566778899aabbccddeeff");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("3 {}\n", b.to_hex()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn raises_in_quick_succession_are_written_once_due_or_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("generations/00112233445566778899aabbccddeeff");
        let on_file = || parse(&std::fs::read_to_string(&path).unwrap()).unwrap().generation;
        let mark = Watermark::new(dir.path(), "00112233445566778899aabbccddeeff");
        let at = |generation| Mark { generation, commit: Some(ObjectId::from_bytes([generation as u8; 32])) };
        mark.raise(at(1)).unwrap();
        assert_eq!(on_file(), 1, "the first raise is written at once");
        mark.raise(at(2)).unwrap();
        mark.raise(at(3)).unwrap();
        assert_eq!((on_file(), mark.floor().unwrap().generation), (1, 3), "held back, known");
        mark.seen().written_at = Some(Instant::now() - WRITE_EVERY);
        assert_eq!(mark.floor().unwrap().generation, 3);
        assert_eq!(on_file(), 3, "written once due, at the next head read");
        mark.raise(at(4)).unwrap();
        assert_eq!(on_file(), 3);
        drop(mark);
        assert_eq!(on_file(), 4, "written when dropped");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_mark_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("generations")).unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "1 \n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("generations/ab")).unwrap();
        let mark = Watermark::new(dir.path(), "ab");
        assert!(matches!(mark.floor(), Err(Error::Io { .. })));
    }
}
