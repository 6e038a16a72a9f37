//! One segment as an instance has read it: its file kept open, its index file, and the
//! records after what that covers, by path.

use std::collections::BTreeMap;
use std::fs::File;

use object_store::path::Path;

use crate::error::LogError;
use crate::fixed_keys::FixedKeys;
use crate::record::{HEADER_LEN, Kind};
use crate::segment::{self, ScanEnd};
use crate::table::{self, Confirm, Entry, Key, Slot, Table};

/// One segment read so far, kept open: reads never reopen, and a removed segment stays
/// readable.
pub(super) struct Segment {
    pub(super) file: File,
    /// Its index file: what its records say up to `table.seal.covered_len` (a sealed segment's
    /// whole length, or a compacted segment's records before anything appended to it).
    pub(super) table: Option<Table>,
    /// What its records after the table's cover say (all of them without a table), by path.
    pub(super) map: BTreeMap<Path, Slot>,
    /// How far it has been read: the end of its last good record.
    pub(super) len: u64,
    /// For a sealed segment: the log's dead bytes from the base through its end; for the
    /// current one, through what its index covers, when this instance wrote it.
    pub(super) dead_through: u64,
    /// Writing its index failed once in this instance: not tried again.
    pub(super) index_failed: bool,
    /// The log's fixed-width keys, to read its records.
    pub(super) keys: FixedKeys,
}

impl Segment {
    pub(super) fn new(file: File, keys: FixedKeys) -> Segment {
        Segment { file, table: None, map: BTreeMap::new(), len: HEADER_LEN, dead_through: 0, index_failed: false, keys }
    }

    /// Whether its index covers all of it that was read.
    pub(super) fn fully_indexed(&self) -> bool {
        self.map.is_empty() && self.table.as_ref().is_some_and(|t| t.seal.covered_len == self.len)
    }

    /// What this segment says of `location`. A table that fails is dropped for the segment's
    /// own records, and asked no more.
    pub(super) fn get(
        &mut self,
        log_dir: &std::path::Path,
        n: u64,
        location: &Key<'_>,
        confirm: Confirm,
    ) -> Result<Option<Slot>, LogError> {
        if let Some(slot) = self.map.get(location.path()) {
            return Ok(Some(slot.clone()));
        }
        let Some(t) = &mut self.table else { return Ok(None) };
        match t.get(location, &self.file, confirm) {
            Ok(found) => Ok(found),
            Err(_) => {
                self.distrust(log_dir, n)?;
                Ok(self.map.get(location.path()).cloned())
            }
        }
    }

    /// Calls `visit` with every path of this segment from `prefix` on that starts with it, in
    /// order: what the table says, then what the records after it say (which replaces it).
    pub(super) fn scan_prefix(
        &mut self,
        log_dir: &std::path::Path,
        n: u64,
        prefix: &Path,
        visit: &mut dyn FnMut(Path, Slot),
    ) -> Result<(), LogError> {
        let start = prefix.as_ref();
        if let Some(t) = &mut self.table {
            let mut found = Vec::new();
            let scanned = t.scan_from(start, &self.file, |name, slot| {
                if !name.starts_with(start) {
                    return Ok(false);
                }
                let path = Path::parse(name).map_err(|_| LogError::BadIndex {
                    file: table::path(log_dir, n),
                    reason: "not an object_store path",
                })?;
                found.push((path, slot));
                Ok(true)
            });
            match scanned {
                Ok(()) => found.into_iter().for_each(|(p, s)| visit(p, s)),
                Err(_) => self.distrust(log_dir, n)?,
            }
        }
        for (path, slot) in self.map.range(prefix.clone()..) {
            if !path.as_ref().starts_with(start) {
                break;
            }
            visit(path.clone(), slot.clone());
        }
        Ok(())
    }

    /// Replaces the segment's table by the records it covers, read afresh; what the map holds
    /// (the records after them) stays on top. Not the records up to `len`: a catch-up that
    /// distrusts the table halfway through the records after it has put some of them in the
    /// map already, and not yet moved `len` past them.
    pub(super) fn distrust(&mut self, log_dir: &std::path::Path, n: u64) -> Result<(), LogError> {
        let Some(table) = &self.table else { return Ok(()) };
        let covered = table.seal.covered_len;
        let file_path = segment::path(log_dir, n);
        let mut map = BTreeMap::new();
        let stop = segment::scan(&self.file, &file_path, HEADER_LEN, covered, &self.keys, |offset, r, _| {
            let location = location_of(&file_path, offset, &r.path)?;
            map.insert(location, slot_of(n, offset, r.kind, r.time_ms, r.path_len, r.len));
            Ok(())
        })?;
        if let ScanEnd::Tail(offset) = stop {
            return Err(LogError::TornNotLast { file: file_path, offset });
        }
        map.append(&mut self.map);
        self.table = None;
        self.map = map;
        Ok(())
    }

    /// Everything the segment says, in path order: the table's entries with the later
    /// records' on top. Bounded by what one segment holds. Paths as strings: what an index
    /// is written from (an `object_store` path costs a parse each, and a segment has some
    /// 20,000 records).
    pub(super) fn everything(&mut self, log_dir: &std::path::Path, n: u64) -> Result<Vec<(String, Slot)>, LogError> {
        let mut indexed = Vec::new();
        if let Some(t) = &mut self.table {
            let scanned = t.scan_from("", &self.file, |name, slot| {
                indexed.push((name.to_owned(), slot));
                Ok(true)
            });
            if scanned.is_err() {
                indexed.clear();
                self.distrust(log_dir, n)?;
            }
        }
        // Two runs in path order (a path's order is its string's), the map's on top.
        let mut all = Vec::with_capacity(indexed.len() + self.map.len());
        let mut later = self.map.iter().peekable();
        for (name, slot) in indexed {
            while let Some((path, newer)) = later.next_if(|(path, _)| path.as_ref() < name.as_str()) {
                all.push((path.to_string(), newer.clone()));
            }
            match later.next_if(|(path, _)| path.as_ref() == name) {
                Some((_, newer)) => all.push((name, newer.clone())),
                None => all.push((name, slot)),
            }
        }
        all.extend(later.map(|(path, slot)| (path.to_string(), slot.clone())));
        Ok(all)
    }
}

/// A record's path, as an `object_store` path; a record whose path is not one is corrupt.
pub(super) fn location_of(file: &std::path::Path, offset: u64, path: &str) -> Result<Path, LogError> {
    Path::parse(path).map_err(|_| LogError::Corrupt {
        file: file.to_path_buf(),
        offset,
        reason: "not an object_store path",
    })
}

/// What one record says of its path (`path_len`: the bytes the path takes in the record).
pub(super) fn slot_of(segment: u64, offset: u64, kind: Kind, time_ms: u64, path_len: usize, len: usize) -> Slot {
    match kind {
        Kind::Put { origin } => {
            Slot::Live(Entry { segment, offset, record_len: len as u64, time_ms, origin, path_len: path_len as u64 })
        }
        Kind::Delete => Slot::Deleted,
    }
}
