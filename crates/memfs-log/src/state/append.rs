//! Appending: puts and deletes written at the end of the log (under the lock, caught up),
//! segments started and sealed, the zeros filled ahead, syncs.

use std::fs::File;
use std::os::unix::fs::FileExt;

use object_store::path::Path;

use super::{State, now_ms};
use crate::error::LogError;
use crate::record::{self, HEADER_LEN, Kind};
use crate::segment;
use crate::table::{Entry, Slot};

/// How far ahead of its records a writer fills the current segment with zeros (see
/// [`State::fill_ahead`]): one sync in this many bytes of records writes the inode too.
const FILL_AHEAD: u64 = 1 << 20;

/// Writes zeros into `file` from `from` to `to`.
fn write_zeros(file: &File, from: u64, to: u64) -> std::io::Result<()> {
    let zeros = vec![0u8; 64 << 10];
    let mut at = from;
    while at < to {
        let n = usize::try_from(to - at).unwrap_or(usize::MAX).min(zeros.len());
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

impl State {
    /// Appends a put of `location` and indexes it; returns its e_tag. `replaced`: the version
    /// it replaces, as the caller looked it up (under the lock, caught up). `sync`: make it
    /// (and everything before it in the segment) durable before returning.
    pub(crate) fn put(
        &mut self,
        location: &Path,
        data: &[&[u8]],
        replaced: Option<Entry>,
        sync: bool,
    ) -> Result<String, LogError> {
        let time_ms = now_ms();
        let size = data.iter().map(|d| d.len() as u64).sum();
        let mut buf = std::mem::take(&mut self.buf);
        let keys = &self.config.fixed_keys;
        let encoded = record::encode(&mut buf, Kind::Put { origin: None }, time_ms, location.as_ref(), data, keys);
        let path_len = keys.stored_len(location.as_ref()) as u64;
        let result = match encoded {
            None => Err(LogError::TooLarge { path: location.to_string(), size }),
            Some(_) => self.append(&buf).and_then(|(segment, offset)| {
                let entry = Entry { segment, offset, record_len: buf.len() as u64, time_ms, origin: None, path_len };
                let e_tag = entry.e_tag();
                self.dead += replaced.map_or(0, |e| e.record_len);
                self.current_map()?.insert(location.clone(), Slot::Live(entry));
                Ok(e_tag)
            }),
        };
        self.buf = buf;
        let e_tag = result?;
        if sync {
            self.sync()?;
            self.after_sync();
        }
        Ok(e_tag)
    }

    /// Puts each of `items` whose path holds nothing yet (under the lock, caught up), without a
    /// sync: the records go out in one write when they fit the current segment, else one by
    /// one. A path given twice is put once. What already exists is left as it is (a create
    /// that finds its object stored: same path, same content, for content-addressed objects).
    pub(crate) fn put_new(&mut self, items: &[(Path, impl AsRef<[u8]>)]) -> Result<(), LogError> {
        let mut fresh: Vec<(&Path, &[u8])> = Vec::with_capacity(items.len());
        for (location, data) in items {
            if !fresh.iter().any(|(l, _)| *l == location) && self.lookup(location)?.is_none() {
                fresh.push((location, data.as_ref()));
            }
        }
        let time_ms = now_ms();
        let mut batch = Vec::new();
        let mut record = std::mem::take(&mut self.buf);
        let mut lens = Vec::with_capacity(fresh.len());
        for (location, data) in &fresh {
            let keys = &self.config.fixed_keys;
            if record::encode(&mut record, Kind::Put { origin: None }, time_ms, location.as_ref(), &[data], keys)
                .is_none()
            {
                self.buf = record;
                return Err(LogError::TooLarge { path: location.to_string(), size: data.len() as u64 });
            }
            lens.push(record.len() as u64);
            batch.extend_from_slice(&record);
        }
        self.buf = record;
        if fresh.is_empty() {
            return Ok(());
        }
        let fits = self.current != 0 && self.end.saturating_add(batch.len() as u64) <= self.config.segment_limit;
        if !fits {
            // At a segment's end: one by one, so that each may start the next segment.
            for (location, data) in fresh {
                self.put(location, &[data], None, false)?;
            }
            return Ok(());
        }
        let (segment, mut offset) = self.append(&batch)?;
        for ((location, _), record_len) in fresh.into_iter().zip(lens) {
            let path_len = self.config.fixed_keys.stored_len(location.as_ref()) as u64;
            let entry = Entry { segment, offset, record_len, time_ms, origin: None, path_len };
            self.current_map()?.insert(location.clone(), Slot::Live(entry));
            offset += record_len;
        }
        Ok(())
    }

    /// Makes every record so far durable, as a synced put does (under the lock, caught up).
    pub(crate) fn sync_puts(&mut self) -> Result<(), LogError> {
        self.sync()?;
        self.after_sync();
        Ok(())
    }

    /// Appends a tombstone of live `location`, whose current version is `old` (as the caller
    /// looked it up, under the lock), and drops it from the index.
    pub(crate) fn delete(&mut self, location: &Path, old: Entry, sync: bool) -> Result<(), LogError> {
        let mut buf = std::mem::take(&mut self.buf);
        let encoded = record::encode(&mut buf, Kind::Delete, now_ms(), location.as_ref(), &[], &self.config.fixed_keys);
        let result = match encoded {
            None => Err(LogError::TooLarge { path: location.to_string(), size: 0 }),
            Some(_) => self.append(&buf),
        };
        let len = buf.len() as u64;
        self.buf = buf;
        result?;
        self.dead += old.record_len + len;
        self.current_map()?.insert(location.clone(), Slot::Deleted);
        if sync {
            self.sync()?;
        }
        Ok(())
    }

    /// Writes one encoded record at the end of the log (under the lock, caught up); returns its
    /// segment and offset. Starts segment 1, or the next segment when this one is full.
    pub(super) fn append(&mut self, bytes: &[u8]) -> Result<(u64, u64), LogError> {
        let len = bytes.len() as u64;
        if self.current == 0 {
            let file = segment::create(&self.log_dir, 1, false, |_, _| Ok(()))?;
            self.open_next(1, file);
        } else if self.end > HEADER_LEN && self.end.saturating_add(len) > self.config.segment_limit {
            // Seal the full segment first: a synced record in the next segment must not
            // depend on unsynced ones in this one. Its index goes before the next segment, so
            // that whoever sees the next one finds it. The zeros written ahead go first: a
            // sealed segment ends with its last record.
            let end = self.end;
            self.current_file()?.set_len(end).map_err(LogError::io("truncate", self.current_path()))?;
            self.sync()?;
            self.seal_current()?;
            let _ = self.write_table(self.current);
            let next = self.current + 1;
            let file = segment::create(&self.log_dir, next, false, |_, _| Ok(()))?;
            self.open_next(next, file);
        }
        let (n, at) = (self.current, self.end);
        let filled = self.fill_ahead(at + len)?;
        let file = self.current_file()?;
        if let Err(e) = file.write_all_at(bytes, at) {
            // Take back a partial record; should that fail too, the next writer truncates it
            // as a torn tail.
            let _ = file.set_len(at);
            self.zeroed = None;
            return Err(LogError::io("write", self.current_path())(e));
        }
        self.zeroed = filled.map(|len| (n, len));
        self.end = at + len;
        if let Some(seg) = self.segments.get_mut(&n) {
            seg.len = self.end;
        }
        Ok((n, at))
    }

    /// Makes sure the current segment holds zeros from `end` to at least `need` (under the
    /// lock, caught up, before a record up to `need` is written at `end`); returns the
    /// segment's length then, if past `need`.
    ///
    /// Why: `fdatasync` of a file that grew must also write its inode (its size), a second
    /// synchronous write on every commit; a record written over zeros already there does not
    /// change the size, and its sync writes the data alone (measured on ext4: 158 µs per
    /// append and sync against 110 µs over zeros; a file preallocated with `fallocate` saves
    /// less, as writing its unwritten extents changes them). So the segment is filled with
    /// zeros [`FILL_AHEAD`] bytes ahead of its records, up to the segment limit, and the next
    /// record's sync makes them durable. A reader stops at zeros where a record would start
    /// (`ScanEnd::Zeros`), and reads the rest once to check it is zeros ([`State::check_zeros`]).
    fn fill_ahead(&mut self, need: u64) -> Result<Option<u64>, LogError> {
        let (end, limit) = (self.end, self.config.segment_limit);
        let path = self.current_path();
        let len = self.current_file()?.metadata().map_err(LogError::io("stat", &path))?.len();
        // The catch-up before this write read what follows `end`, unless the file changed
        // length since (by hand: writers hold the lock).
        self.check_zeros(end, end, len)?;
        let file = self.current_file()?;
        if len >= need {
            return Ok(Some(len));
        }
        let target = need.max((need + FILL_AHEAD).min(limit));
        if target == need {
            return Ok(None);
        }
        // Zeros from the current length; a failure (a full disk) only costs the saving.
        let from = len.max(end);
        match write_zeros(file, from, target) {
            Ok(()) => Ok(Some(target)),
            Err(_) => {
                let _ = file.set_len(from);
                Ok(None)
            }
        }
    }

    /// `fdatasync` of the current segment: the segment is append-only, so this makes every
    /// record in it durable, whoever wrote it.
    pub(super) fn sync(&self) -> Result<(), LogError> {
        self.current_file()?.sync_data().map_err(LogError::io("sync", self.current_path()))
    }
}
