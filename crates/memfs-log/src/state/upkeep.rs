//! What a writer does besides appending: counting the dead bytes, writing index files,
//! compacting (when asked, or by itself once the dead records outweigh the live ones), and the
//! bytes stored.

use std::collections::BTreeMap;

use object_store::path::Path;

use super::State;
use crate::error::LogError;
use crate::record::{self, HEADER_LEN, Kind};
use crate::report::{CompactReport, StoredBytes};
use crate::segment;
use crate::table::{self, Confirm, Entry, Seal, Slot};

/// Synced puts between two looks at whether the log needs an automatic compaction (each look
/// is one `fstat` per segment in use).
const AUTO_COMPACT_EVERY: u32 = 64;

/// Paths of the last segment's records resolved at each of those looks (see
/// [`State::auto_compact`]).
const RESOLVED_PER_LOOK: usize = 256;

impl State {
    /// Counts every dead byte so far ([`State::resolve_dead`]) and notes them as the log's
    /// dead bytes through the current segment: what the header of an index of it holds
    /// (written when it is sealed, and so far at its half).
    pub(super) fn settle_dead(&mut self) -> Result<(), LogError> {
        self.resolve_dead()?;
        let dead = self.dead;
        if let Some(seg) = self.segments.get_mut(&self.current) {
            seg.dead_through = dead;
        }
        Ok(())
    }

    /// Counts in `dead` the records in older segments that the current segment's `unresolved`
    /// paths replaced.
    fn resolve_dead(&mut self) -> Result<(), LogError> {
        self.resolve_some_dead(usize::MAX)
    }

    /// As [`State::resolve_dead`], for at most `most` of the paths (the newest are left).
    fn resolve_some_dead(&mut self, most: usize) -> Result<(), LogError> {
        let take = most.min(self.unresolved.len());
        let rest = self.unresolved.split_off(take);
        for path in std::mem::replace(&mut self.unresolved, rest) {
            if let Some(old) = self.lookup_below(&path, self.current, Confirm::Yes)? {
                self.dead += old.record_len;
            }
        }
        Ok(())
    }

    /// Writes the index of every sealed segment that lacks a whole one (under the lock): after
    /// a crash between sealing and indexing, or an index damaged, removed or unusable.
    /// Best effort: a segment without an index is read instead, so a failure here only costs
    /// time.
    pub(super) fn write_missing_tables(&mut self) {
        let numbers: Vec<u64> = self
            .segments
            .iter()
            .filter(|&(&n, seg)| n != self.current && !seg.index_failed && !seg.fully_indexed())
            .map(|(&n, _)| n)
            .collect();
        for n in numbers {
            let _ = self.write_table(n);
        }
    }

    /// Writes segment `n`'s index from what it says so far (up to its `len`, with its
    /// `dead_through`), and uses it from now on.
    pub(super) fn write_table(&mut self, n: u64) -> Result<(), LogError> {
        let log_dir = self.log_dir.clone();
        let Some(seg) = self.segments.get_mut(&n) else { return Ok(()) };
        if seg.fully_indexed() {
            return Ok(());
        }
        let written = seg.everything(&log_dir, n).and_then(|all| {
            let seal = Seal::of(&seg.file, &segment::path(&log_dir, n), n, seg.len, seg.dead_through)?;
            let entries = all.iter().map(|(name, slot)| Ok((name.as_str(), slot)));
            table::write(&log_dir, seal, &self.config.fixed_keys, all.len(), entries)
        });
        match written {
            Ok(Some(t)) => {
                seg.table = Some(t);
                seg.map.clear();
            }
            Ok(None) => seg.index_failed = true,
            Err(e) => {
                seg.index_failed = true;
                return Err(e);
            }
        }
        Ok(())
    }

    /// What follows a sync (under the lock, caught up): an automatic compaction, or an index
    /// of the current segment so far.
    pub(super) fn after_sync(&mut self) {
        self.auto_compact();
        self.checkpoint();
    }

    /// Indexes the current segment up to its end once its records past what its index covers
    /// reach half a segment (under the lock, caught up, just synced: the index never covers a
    /// record that is not durable). An open reads the records its index does not cover, so
    /// this halves what an open of a large store reads (at most half a segment, 2 MiB, where
    /// it read up to 4), for about half an index more written per segment (the index of the
    /// first half; the one written at sealing covers the whole). Best effort, as sealing's: a
    /// failure only costs time.
    fn checkpoint(&mut self) {
        let n = self.current;
        let Some(seg) = self.segments.get(&n) else { return };
        let covered = seg.table.as_ref().map_or(HEADER_LEN, |t| t.seal.covered_len);
        if seg.index_failed || self.end.saturating_sub(covered) < self.config.segment_limit / 2 {
            return;
        }
        if self.settle_dead().is_err() {
            return;
        }
        let _ = self.write_table(n);
    }

    /// After a synced put (under the lock, caught up): compacts the log if the dead bytes have
    /// reached the threshold and at least the live bytes, so the log stays within about twice
    /// what it holds. The put is durable already, and its e_tag survives a compaction, so a
    /// compaction that fails changes nothing for the caller: the state is read afresh, and the
    /// next look tries again.
    pub(super) fn auto_compact(&mut self) {
        let Some(threshold) = self.config.auto_compact else { return };
        self.since_look += 1;
        if self.since_look < AUTO_COMPACT_EVERY {
            return;
        }
        self.since_look = 0;
        // The paths an open read in the last segment, whose older versions (if any) are dead
        // now, a few at a time: each costs a lookup in every older segment, and a process that
        // makes a handful of commits would otherwise pay for all of them (up to half a segment
        // of records, some 10,000 lookups). Indexing the segment (at its half, when sealed)
        // counts them all, so the count lags by at most half a segment.
        if self.resolve_some_dead(RESOLVED_PER_LOOK).is_err() {
            return;
        }
        let Ok(StoredBytes { live, total }) = self.counted_bytes() else { return };
        let dead = total.saturating_sub(live);
        if dead >= threshold && dead >= live && self.compact().is_err() {
            self.reset();
        }
    }

    /// Writes every live path into a new compacted segment, with its index, then removes the
    /// segments it supersedes (under the lock, caught up).
    pub(crate) fn compact(&mut self) -> Result<CompactReport, LogError> {
        let numbers = segment::list(&self.log_dir)?;
        let Some(&last) = numbers.last() else { return Ok(CompactReport::default()) };
        let mut bytes_before = 0;
        for &n in &numbers {
            let file_path = segment::path(&self.log_dir, n);
            // Of the entry itself: a link planted in the folder is not followed.
            match std::fs::symlink_metadata(&file_path) {
                Ok(md) => bytes_before += md.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io("stat", file_path)(e)),
            }
        }
        let live = self.list(&Path::default())?;
        let new = last + 1;
        let mut moved: Vec<Slot> = Vec::with_capacity(live.len());
        let mut rec = Vec::new();
        let file = segment::create(&self.log_dir, new, true, |w, tmp| {
            let mut offset = HEADER_LEN;
            for (location, e) in &live {
                let data = self.read(location, e)?;
                let origin = Some(e.origin.unwrap_or((e.segment, e.offset)));
                let kind = Kind::Put { origin };
                record::encode(&mut rec, kind, e.time_ms, location.as_ref(), &[&data], &self.config.fixed_keys)
                    .ok_or_else(|| LogError::TooLarge { path: location.to_string(), size: data.len() as u64 })?;
                std::io::Write::write_all(w, &rec).map_err(LogError::io("write", tmp))?;
                moved.push(Slot::Live(Entry {
                    segment: new,
                    offset,
                    record_len: rec.len() as u64,
                    origin,
                    path_len: self.config.fixed_keys.stored_len(location.as_ref()) as u64,
                    ..e.clone()
                }));
                offset += rec.len() as u64;
            }
            Ok(())
        })?;
        let new_path = segment::path(&self.log_dir, new);
        let bytes_after = file.metadata().map_err(LogError::io("stat", &new_path))?.len();
        // The new segment is durable and supersedes the rest: switch to it, then remove them.
        // Other instances holding them open keep reading them until they see the new one.
        self.reset();
        let map: BTreeMap<Path, Slot> = live.into_iter().map(|(p, _)| p).zip(moved).collect();
        self.open_next(new, file);
        self.end = bytes_after;
        if let Some(seg) = self.segments.get_mut(&new) {
            (seg.map, seg.len) = (map, bytes_after);
        }
        // Its index, so that an open does not read it whole; later puts are appended after it
        // (until the segment is full), and read as the last segment's records.
        let _ = self.write_table(new);
        let mut segments_removed = 0;
        for n in numbers {
            let file_path = segment::path(&self.log_dir, n);
            match std::fs::remove_file(&file_path) {
                Ok(()) => segments_removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io("remove", file_path)(e)),
            }
        }
        segment::remove_leftovers(&self.log_dir, new)?;
        segment::sync_dir(&self.log_dir)?;
        Ok(CompactReport { segments_removed, bytes_before, bytes_after })
    }

    /// Bytes of the live records, and of every segment read.
    pub(crate) fn stored_bytes(&mut self) -> Result<StoredBytes, LogError> {
        self.resolve_dead()?;
        self.counted_bytes()
    }

    /// As [`State::stored_bytes`], with the dead bytes counted so far.
    fn counted_bytes(&self) -> Result<StoredBytes, LogError> {
        let mut total = 0;
        let mut records = 0;
        for (&n, seg) in &self.segments {
            let len = seg.file.metadata().map_err(LogError::io("stat", segment::path(&self.log_dir, n)))?.len();
            total += len;
            // Up to its last record: not the zeros written ahead of them.
            records += seg.len.min(len).saturating_sub(HEADER_LEN);
        }
        Ok(StoredBytes { live: records.saturating_sub(self.dead), total })
    }
}
