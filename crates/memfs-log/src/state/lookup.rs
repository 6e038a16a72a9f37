//! Answers from the index of live paths: a path's entry, the paths under a prefix, and a
//! record's data read and checked again.

use std::collections::BTreeMap;

use bytes::Bytes;
use object_store::path::Path;

use super::State;
use crate::error::LogError;
use crate::record::{self, Kind, Parsed};
use crate::segment;
use crate::table::{Confirm, Entry, Key, Slot};

impl State {
    /// Where `location`'s data is, if it is live: the newest segment that has a record of it
    /// says.
    pub(crate) fn lookup(&mut self, location: &Path) -> Result<Option<Entry>, LogError> {
        self.lookup_below(location, u64::MAX, Confirm::Yes)
    }

    /// As [`State::lookup`], asking only the segments numbered below `below`.
    pub(super) fn lookup_below(
        &mut self,
        location: &Path,
        below: u64,
        confirm: Confirm,
    ) -> Result<Option<Entry>, LogError> {
        let key = Key::new(location);
        let log_dir = &self.log_dir;
        for (&n, seg) in self.segments.range_mut(..below).rev() {
            match seg.get(log_dir, n, &key, confirm)? {
                Some(Slot::Live(entry)) => return Ok(Some(entry)),
                Some(Slot::Deleted) => return Ok(None),
                None => {}
            }
        }
        Ok(None)
    }

    /// The live paths under `prefix` (as a string prefix), in order.
    pub(crate) fn list(&mut self, prefix: &Path) -> Result<Vec<(Path, Entry)>, LogError> {
        let mut found: BTreeMap<Path, Slot> = BTreeMap::new();
        let log_dir = &self.log_dir;
        // Oldest first: a newer segment's record replaces an older one's.
        for (&n, seg) in self.segments.iter_mut() {
            seg.scan_prefix(log_dir, n, prefix, &mut |path, slot| {
                found.insert(path, slot);
            })?;
        }
        Ok(found
            .into_iter()
            .filter_map(|(path, slot)| match slot {
                Slot::Live(entry) => Some((path, entry)),
                Slot::Deleted => None,
            })
            .collect())
    }

    /// `location`'s entry and data, if it is live. The whole record is read and checked again
    /// (checksum, path, length): the file may have changed since it was indexed, and a damaged
    /// record is an error, never data. An entry from an index file that its record does not
    /// bear out sets that index aside, and the segment's records answer.
    pub(crate) fn get(&mut self, location: &Path) -> Result<Option<(Entry, Bytes)>, LogError> {
        loop {
            // The record read next is checked against the path: an index hit on an id
            // prefix needs no read of its own to confirm it.
            let Some(entry) = self.lookup_below(location, u64::MAX, Confirm::ByCaller)? else { return Ok(None) };
            match self.read(location, &entry) {
                Ok(data) => return Ok(Some((entry, data))),
                Err(e) => {
                    let log_dir = &self.log_dir;
                    match self.segments.get_mut(&entry.segment) {
                        Some(seg) if seg.table.is_some() => seg.distrust(log_dir, entry.segment)?,
                        _ => return Err(e),
                    }
                }
            }
        }
    }

    /// Reads an entry's data.
    pub(super) fn read(&self, location: &Path, entry: &Entry) -> Result<Bytes, LogError> {
        let file_path = || segment::path(&self.log_dir, entry.segment);
        let corrupt = |reason| LogError::Corrupt { file: file_path(), offset: entry.offset, reason };
        let seg = self
            .segments
            .get(&entry.segment)
            .ok_or_else(|| LogError::NotOpen { dir: self.log_dir.clone(), segment: entry.segment })?;
        let mut buf = vec![0; usize::try_from(entry.record_len).unwrap_or(usize::MAX)];
        let read = segment::read_full_at(&seg.file, &mut buf, entry.offset)
            .map_err(|e| LogError::io("read", file_path())(e))?;
        if read < buf.len() {
            return Err(corrupt("the file ends inside an indexed record"));
        }
        let start = entry.data_start() as usize;
        match record::parse(&buf, true, &self.config.fixed_keys) {
            Parsed::Record(r)
                if r.data_start == start
                    && r.data_len as u64 == entry.size()
                    && r.path == location.as_ref()
                    && matches!(r.kind, Kind::Put { origin } if origin == entry.origin) => {}
            _ => return Err(corrupt("a damaged record (changed since it was read)")),
        }
        let bytes = Bytes::from(buf);
        Ok(bytes.slice(start..start + entry.size() as usize))
    }
}
